"""Theory numbers of Theorem 3.5 (lipschitz_icl.derivations.generalisation): the mismatch ratio, the noise
series, and a window's error on a class it was not pretrained for."""

import math

import pytest
import sympy as sp

from lipschitz_icl.derivations import generalisation as G
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem


def test_mismatch_ratio_matches_a_direct_computation():
    """E(w) = b w^-p + c w^beta / n minimised at w*: the derived ratio is E(lambda w*)/E(w*); a wrong power
    in it (p and beta swapped) is not."""
    assert sp.simplify(G.mismatch_ratio_expr().subs(sp.Symbol("lambda", positive=True), 1)) == 1
    p, beta, b, c, n = 2.0, 1.0, 0.11, 1.0, 1000.0
    w_star = (p * b * n / (beta * c)) ** (1 / (p + beta))

    def E(w):
        return b * w**-p + c * w**beta / n

    for lam in (0.2, 4.6):
        assert G.mismatch_ratio(lam, p, beta) == pytest.approx(E(lam * w_star) / E(w_star), rel=1e-12)
        assert G.mismatch_ratio(lam, beta, p) != pytest.approx(E(lam * w_star) / E(w_star), rel=1e-3)


def test_noise_series():
    """d = 3: R_3(w) = w coth w, so the first-order series is sigma^2 w coth(w)/n; the derived series adds
    the 1/n^2 term c_q w^2/n^2, a few percent at n = 100."""
    w, n, sigma = 4.0, 100, 0.5
    assert G.noise_series(3, w, n, sigma, "first-order") == pytest.approx(sigma**2 * w / math.tanh(w) / n, rel=1e-9)
    extra = G.noise_series(3, w, n, sigma) - G.noise_series(3, w, n, sigma, "first-order")
    assert extra != 0 and abs(extra) < 0.05 * G.noise_series(3, w, n, sigma)
    with pytest.raises(ValueError, match="series"):
        G.noise_series(3, w, n, sigma, "exact")


def test_each_class_prefers_its_own_window(cache_root):
    """On affine tasks the affine window is optimal (ratio >= 1), on relu tasks the relu window is (ratio
    <= 1); the cosine-1 class (leading-order bias, twice the affine constant at d = 3) prefers the narrower
    relu window.  Every predicted ratio is within 10% (the registry's same-l-classes margin)."""
    d, n, L, sigma = 3, 1000, 1.0, 0.5
    ws = {k: wstar(make_problem(k, d, n, L, sigma), "exact").w_star.value for k in ("affine", "relu")}
    ratio = {
        k: G.class_error(k, d, n=n, L=L, sigma=sigma, w=ws["relu"])
        / G.class_error(k, d, n=n, L=L, sigma=sigma, w=ws["affine"])
        for k in ("affine", "relu", "cosine")
    }
    assert ratio["affine"] > 1 > ratio["relu"] and ratio["cosine"] < 1
    assert all(abs(math.log(r)) < math.log(1.1) for r in ratio.values())
