"""lipschitz_icl/derivations/ratio_expansion.py: the 1/n term of the asymptotic loss."""

import numpy as np
import sympy as sp

from lipschitz_icl.derivations import ratio_expansion as rx


def test_taylor_expansion_equals_the_code_form():
    assert rx.check_identities()


def test_expansion_matches_monte_carlo_ratio_of_means():
    """E[(A/S)^2] from simulation vs the two-term expansion, for a concrete law of (e, h); the
    residual shrinks faster than 1/n (it is O(1/n^2))."""
    rng = np.random.default_rng(0)
    N = 200000

    def moments():
        e = rng.exponential(size=2_000_000)
        h = 0.5 * e + rng.normal(size=e.size)
        return {
            rx.a: np.mean(e * h),
            rx.s: np.mean(e),
            rx.m_hh: np.mean(e * e * h * h),
            rx.m_h: np.mean(e * e * h),
            rx.m_e: np.mean(e * e),
        }

    mom = moments()
    expr = sp.lambdify(rx.n, rx.ratio_square_expansion().subs(mom))
    limit = float(mom[rx.a] / mom[rx.s]) ** 2
    residual = {}
    for n in (20, 80):
        e = rng.exponential(size=(N, n))
        h = 0.5 * e + rng.normal(size=(N, n))
        ratio2 = (np.sum(e * h, axis=1) / np.sum(e, axis=1)) ** 2
        se = ratio2.std() / np.sqrt(N)
        first = float(expr(n)) - limit
        assert abs(ratio2.mean() - float(expr(n))) < abs(first) * 0.5 + 4 * se
        residual[n] = abs(ratio2.mean() - float(expr(n)))
    # the leading limit alone is wrong by the 1/n term, far beyond the noise
    assert abs(ratio2.mean() - limit) > 10 * se
