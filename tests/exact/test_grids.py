"""The Laplace grids both exact routes share (lipschitz_icl.exact.grids): the law of V, the grids' rules and the
kernel window loop, each against a closed form."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from lipschitz_icl.exact import grids


@pytest.mark.parametrize("d", [2, 3, 7])
def test_the_theta_rule_integrates_the_law_of_t(d):
    """The ``theta`` weights include the law ``mu``: they sum to one and give ``E[t] = 0``, ``E[t^2] = 1/d``."""
    grid = grids.laplace_grid(d, 10.0, 100, grids.level(0))
    t = np.cos(grid.theta)
    assert grid.wt.sum() == pytest.approx(1.0, abs=1e-12)
    assert grid.wt @ t == pytest.approx(0.0, abs=1e-12)
    assert grid.wt @ (t * t) == pytest.approx(1.0 / d, abs=1e-12)


def test_v_and_theta_are_inverse_and_the_upper_tail_is_the_beta_law():
    w = 7.5
    theta = np.linspace(0.0, math.pi, 9)
    assert grids.theta_of_v(w, grids.v_of_theta(w, theta)) == pytest.approx(theta, abs=1e-12)
    a = (3 - 1) / 2  # d = 3: (1 + t)/2 ~ Beta(1, 1), so P(V > v) = P(t < 1 - v/w) = 1 - v/(2w)
    for v in (0.5, 3.0, 14.0):
        assert grids.upper_tail(3, w, v) == pytest.approx(stats.beta(a, a).cdf(1 - v / (2 * w)), rel=1e-12)
        assert grids.upper_tail(3, w, v) == pytest.approx(1 - v / (2 * w), rel=1e-12)
    assert grids.upper_tail(3, w, 2 * w) == 0.0


@pytest.mark.parametrize(("d", "w", "n"), [(3, 10.0, 50), (5, 200.0, 10**6)])
def test_the_v_quantile_leaves_the_stated_tail(d, w, n):
    """``n^2 (2w + 10) P(V > V_q)^(n-2) = 1e-20`` at the quantile."""
    v_q = grids.v_quantile(d, w, n)
    tail = grids.upper_tail(d, w, v_q)
    assert (n - 2) * math.log(tail) + 2 * math.log(n) + math.log(2 * w + 10) == pytest.approx(math.log(grids.TAIL))


def test_the_levels_refine():
    coarse, fine = grids.level(0), grids.level(2)
    assert fine.h_v < coarse.h_v and fine.h_s < coarse.h_s and fine.q_v == coarse.q_v + 2


def test_subdivide_and_graded_breaks_respect_their_widths():
    breaks = grids.subdivide(np.array([0.0, 1.0, 3.5]), 0.6)
    assert breaks[0] == 0.0 and breaks[-1] == 3.5 and np.all(np.diff(breaks) <= 0.6 + 1e-12)
    assert {1.0} <= set(np.round(breaks, 12))
    graded = grids.graded_breaks(0.0, 10.0, lambda x: 0.5 + 0.1 * x)
    assert graded[0] == 0.0 and graded[-1] == 10.0 and np.all(np.diff(graded) > 0)


def test_the_window_loop_at_one_point_and_at_w_zero():
    """``n = 1``: ``E[p_1^2] = 1`` and ``E[p_1^2 g(t_1)] = E[g(t)]``, with no off-diagonal weight; ``w = 0``
    (uniform weights): ``E[sum p_i^2] = 1/n``."""
    d, lev = 4, grids.level(1)
    for w, n, expected in ((12.0, 1, 1.0), (0.0, 25, 1.0 / 25)):
        grid = grids.laplace_grid(d, w, n, lev)
        omt = grids.one_minus_t(grid.theta)
        chunks = []
        sums = grids.window_sums(
            grid.s,
            grid.ws,
            grid.theta,
            grid.wt,
            grid.wt * omt,
            d=d,
            w=w,
            n=n,
            v_top=grid.v_top,
            q_s=lev.q_s,
            each_chunk=lambda sl, win, sb, k1: chunks.append(sl),
        )
        assert sums.noise_factor == pytest.approx(expected, rel=1e-9)
        assert chunks and chunks[0].start == 0 and chunks[-1].stop == grid.s.size
        if n == 1:
            assert sums.diagonal == pytest.approx(1.0, rel=1e-9)  # E[1 - t] = 1
            assert not np.any(sums.off_w)


def test_a_grid_past_its_budget_is_refused(monkeypatch):
    from lipschitz_icl.validation import ParameterError

    monkeypatch.setattr(grids, "MAX_THETA", 50)
    with pytest.raises(ParameterError, match="'w'"):
        grids.laplace_grid(3, 500.0, 2, grids.level(1))


def test_the_window_extent_is_the_stated_formula():
    assert grids.window_extent(9) == 45.0 + 4.0 + 36.0


@pytest.mark.parametrize("a, F", [(3.0, 6.020733215601141e-118), (3.5, 7.402284271397569e-148), (0.5, 1e-140)])
def test_the_beta_quantile_at_tiny_probabilities(a, F):
    """SciPy's betaincinv gives NaN at these (the law of V at d = 7, n = 1e120 and d = 8, n = 1e150, which
    stopped the exact and certified loss with "parameter 'edges' must be ..."): the bisection finds x."""
    x = grids.symmetric_beta_quantile(a, F)
    assert 0.0 < x < 1e-20
    assert float(stats.beta(a, a).cdf(x)) == pytest.approx(F, rel=1e-12)


def test_the_v_quantile_is_finite_wherever_the_method_runs():
    for d in range(2, 513, 7):
        for n in (10**100, 10**120, 10**135, 10**150):
            for w in (1e-3, 10.0, 1e8):
                v = grids.v_quantile(d, w, n)
                assert math.isfinite(v) and 0.0 <= v <= 2 * w, (d, n, w, v)


@pytest.mark.parametrize("d", [7, 8])
def test_the_exact_loss_at_d_7_and_8_beyond_n_1e120(d):
    """The bias does not move from n = 1e100 on (its 1/n part is below a double's resolution); the noise
    falls as 1/n."""
    from lipschitz_icl import make_problem
    from lipschitz_icl.exact.route import exact_loss

    ref = exact_loss(make_problem("affine", d, 10**100, 1.0, 0.5), 10.0)
    for n in (10**120, 10**150):
        got = exact_loss(make_problem("affine", d, n, 1.0, 0.5), 10.0)
        assert got.info["converged"]
        assert got.bias.value == pytest.approx(ref.bias.value, rel=1e-9)
        assert got.noise.value * n == pytest.approx(ref.noise.value * 10**100, rel=1e-9)


def test_subdivide_gives_linspace_bit_for_bit():
    rng = np.random.default_rng(5)
    for _ in range(50):
        breaks = np.unique(np.cumsum(rng.exponential(rng.uniform(0.01, 3.0), rng.integers(2, 40))))
        width = rng.uniform(0.01, 2.0)
        old = [breaks[:1]]
        for a, b in itertools.pairwise(breaks):
            k = max(1, math.ceil((b - a) / width - 1e-12))
            old.append(np.linspace(a, b, k + 1)[1:])
        assert np.array_equal(grids.subdivide(breaks, width), np.concatenate(old))
