"""The concentration bounds and the rules that hold them against true tails."""

import numpy as np
import pytest
from scipy import special, stats

from lipschitz_icl import inequalities as ineq
from lipschitz_icl.claims.concentration import clopper_pearson, exact_rule, mc_rule
from lipschitz_icl.concentration import cap_tail, projection_tail
from lipschitz_icl.validation import ParameterError


def test_projection_bound_formula_and_trivial_side():
    d, k, beta = 10, 2, 2.0
    s = beta * k / d
    assert ineq.projection_bound(d, k, s) == pytest.approx(np.exp(0.5 * k * (1 - beta + np.log(beta))), rel=1e-14)
    assert ineq.projection_bound(d, k, 0.5 * k / d) == 1.0  # below the mean the upper bound is trivial
    assert ineq.projection_bound(d, k, 1.5 * k / d, side="lower") == 1.0
    # the sharp form is below the exp form (1 + x <= e^x) and above the exact tail
    sharp = ineq.projection_bound_dg(d, k, s)
    assert projection_tail(d, k, s) < sharp < ineq.projection_bound(d, k, s)


def test_projection_bound_dominates_beta_tails_and_rate_one_does_not():
    d, k = 10, 2
    s_up = np.linspace(0.25, 0.9, 14)
    s_lo = np.linspace(0.005, 0.19, 14)
    assert np.all(ineq.projection_bound(d, k, s_up) >= projection_tail(d, k, s_up))
    lower = special.betainc(k / 2, (d - k) / 2, s_lo)
    assert np.all(ineq.projection_bound(d, k, s_lo, side="lower") >= lower)
    assert np.any(ineq.projection_bound(d, k, s_lo, side="lower", rate=1.0) < lower)


def test_cap_bound_and_binomial_bounds_against_exact_laws():
    for d in (3, 10, 40):
        h = np.linspace(0.05, 0.95, 19)
        assert np.all(ineq.cap_bound(d, h) >= cap_tail(d, h))
    n, p = 500, 0.1
    a = np.arange(51, 120)
    assert np.all(ineq.binomial_chernoff(n, p, a) >= stats.binom.sf(a - 1, n, p))
    a_lo = np.arange(0, 50)
    assert np.all(ineq.binomial_chernoff(n, p, a_lo, side="lower") >= stats.binom.cdf(a_lo, n, p) * (1 - 1e-12))
    # P(N <= 0) = (1 - p)^n = exp(-n D(0 || p)): the Chernoff bound is attained there
    assert ineq.binomial_chernoff(n, p, 0, side="lower") == pytest.approx((1 - p) ** n, rel=1e-10)
    delta = np.linspace(0.05, 2.0, 20)
    mu = n * p
    exact_up = stats.binom.sf(np.ceil((1 + delta) * mu) - 1, n, p)
    assert np.all(ineq.binomial_multiplicative(n, p, delta) >= exact_up)
    assert ineq.bernoulli_kl(0.3, 0.3) == pytest.approx(0.0, abs=1e-15)


def test_levy_and_bernstein_formulas():
    assert ineq.levy_bound(12, 0.3) == pytest.approx(np.exp(-0.5 * 10 * 0.09), rel=1e-14)
    assert ineq.levy_bound(12, -0.1) == 1.0
    m = ineq.normaliser_moments(3, 2.0)
    assert m["phi"] == pytest.approx(np.sinh(2.0) / 2.0, rel=1e-12)  # Phi_3(w) = sinh(w)/w
    assert m["variance"] == pytest.approx(np.sinh(4.0) / 4.0 - (np.sinh(2.0) / 2.0) ** 2, rel=1e-12)
    t = 0.3
    expected = np.exp(-50 * t**2 / (2 * (m["variance"] + m["range_upper"] * t / 3)))
    assert ineq.bernstein_normaliser(3, 2.0, 50, t) == pytest.approx(expected, rel=1e-12)


def test_bad_arguments_are_refused():
    with pytest.raises(ParameterError):
        ineq.projection_bound(5, 5, 0.5)
    with pytest.raises(ParameterError):
        ineq.levy_bound(2, 0.1)
    with pytest.raises(ParameterError):
        ineq.binomial_chernoff(10, 1.5, 3)
    with pytest.raises(ParameterError):
        ineq.projection_bound(5, 2, 0.5, side="both")


def test_clopper_pearson_matches_scipy_binomtest():
    for count, total in ((0, 1000), (7, 1000), (500, 1000), (1000, 1000)):
        low, high = clopper_pearson(count, total, 0.99)
        ci = stats.binomtest(count, total).proportion_ci(0.99, method="exact")
        assert float(low) == pytest.approx(ci.low, abs=1e-12)
        assert float(high) == pytest.approx(ci.high, abs=1e-12)


def test_rules_decide_on_synthetic_inputs():
    truth = np.array([0.1, 0.01, 0.001])
    assert exact_rule(truth * 2, truth)[0] == "holds"
    verdict, where = exact_rule(np.array([0.2, 0.005, 0.0005]), truth)
    assert verdict == "fails" and where == 1  # violated point with the largest true tail
    low, high = np.array([0.08, 0.008]), np.array([0.12, 0.012])
    assert mc_rule(np.array([0.2, 0.02]), low, high)[0] == "holds"
    assert mc_rule(np.array([0.2, 0.01]), low, high)[0] == "inconclusive"
    assert mc_rule(np.array([0.2, 0.005]), low, high) == ("fails", 1)
