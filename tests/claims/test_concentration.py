"""The concentration bounds and the rules that hold them against true tails."""

import numpy as np
import pytest
from scipy import special, stats

from lipschitz_icl import decision
from lipschitz_icl.claims.concentration import CHERNOFF_BOUNDS, _tail_outcome, levy_monte_carlo
from lipschitz_icl.estimators.projection_lemma import DG_BOUNDS
from lipschitz_icl.gates import registry
from lipschitz_icl.sphere import inequalities as ineq
from lipschitz_icl.sphere.concentration import cap_tail, projection_tail
from lipschitz_icl.sphere.inequalities import bernstein_t, levy_t
from lipschitz_icl.sphere.tails import TailComparison, clopper_pearson, decide, exact_tails
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


def _comparison(bound, low, high):
    bound, low, high = (np.asarray(x, dtype=float) for x in (bound, low, high))
    return TailComparison(
        tuple(f"p{i}" for i in range(len(bound))), np.log(bound), np.log(low), np.log(np.sqrt(low * high)), np.log(high)
    )


def test_one_sided_rule_on_constructed_tails():
    bound = [0.1, 0.01, 0.001]
    assert decide(_comparison(bound, [0.05, 0.005, 0.0001], [0.08, 0.009, 0.0009])).verdict == "holds"
    # one interval straddles its bound: undecided, never "holds"
    assert decide(_comparison(bound, [0.05, 0.005, 0.0001], [0.08, 0.011, 0.0009])).verdict == "inconclusive"
    # one interval wholly above its bound: refuted, and the detail names that point
    failed = decide(_comparison(bound, [0.05, 0.012, 0.0001], [0.08, 0.015, 0.0009]))
    assert failed.verdict == "fails" and "p1" in failed.detail
    # a wider interval around the same values never turns "fails" into "holds"
    assert decide(_comparison(bound, [0.05, 0.002, 0.0001], [0.08, 0.015, 0.0009])).verdict == "inconclusive"


def test_exact_tails_carry_the_stated_accuracy():
    # an attained bound (tail = bound) cannot be decided within the tails' accuracy
    assert decide(exact_tails(["a"], [0.25], [0.25])).verdict == "inconclusive"
    assert decide(exact_tails(["a"], [0.25], [0.25 * (1 - 1e-6)])).verdict == "holds"
    assert decide(exact_tails(["a"], [0.25], [0.25 * (1 + 1e-6)])).verdict == "fails"


RATE = decision.ResolutionSpec(parameter="delta", meaning="bound^(1 + delta)", start=1e-3, limit=1e3, rel_tol=0.02)


def _resolution(comparison):
    return RATE.search(_tail_outcome(comparison, rule="r", rivals={}).decide)


def test_rate_resolution_recovers_a_known_rate_gap():
    # tails exactly bound^(1 + delta0) at every point: bound^(1 + delta) is refuted iff delta > delta0
    bound = np.array([0.5, 0.1, 1e-3])
    for delta0 in (0.05, 0.7, 4.0):
        res = _resolution(exact_tails(["a", "b", "c"], bound, bound ** (1 + delta0)))
        assert res.resolved and delta0 < res.value <= delta0 * 1.03


def test_rate_resolution_is_larger_for_a_noisier_measurement():
    bound = np.array([0.1, 0.01])
    truth = np.array([0.02, 0.001])
    tight = _resolution(_comparison(bound, truth * 0.9, truth * 1.1))
    loose = _resolution(_comparison(bound, truth * 0.5, truth * 2.0))
    assert tight.value < loose.value


def test_the_proved_claims_state_the_bounds_of_inequalities():
    """The bound strings the concentration claims prove (at the stated constants) are the functions of
    lipschitz_icl.sphere.inequalities on the side each is stated for."""
    from lipschitz_icl.expression import parse_expression

    def value(text, **env):
        return float(parse_expression(text, set(env)).evaluate(env))

    d, k = 10, 2
    for s in (0.25, 0.5, 0.9):  # upper side, beta >= 1
        assert value(DG_BOUNDS["exponential"], s=s, d=d, k=k, C=0.5) == pytest.approx(
            float(ineq.projection_bound(d, k, s)), rel=1e-12
        )
        assert value(DG_BOUNDS["sharp"], s=s, d=d, k=k, C=0.5) == pytest.approx(
            float(ineq.projection_bound_dg(d, k, s)), rel=1e-12
        )
    for s in (0.01, 0.1):  # lower side, beta <= 1
        assert value(DG_BOUNDS["exponential"], s=s, d=d, k=k, C=0.5) == pytest.approx(
            float(ineq.projection_bound(d, k, s, side="lower")), rel=1e-12
        )
    n, p = 100, 0.3
    for side, a in (("upper", 40), ("upper", 99), ("lower", 20), ("lower", 1)):
        assert value(CHERNOFF_BOUNDS[("relative-entropy", side)], n=n, a=a, p=p, C=1.0) == pytest.approx(
            float(ineq.binomial_chernoff(n, p, a, side=side)), rel=1e-12
        )
        assert value(CHERNOFF_BOUNDS[("multiplicative", side)], n=n, a=a, p=p, C=1.0) == pytest.approx(
            float(ineq.binomial_multiplicative(n, p, abs(a / (n * p) - 1), side=side)), rel=1e-12
        )


def test_ball_cap_claim_is_proved_with_its_sharpest_rate_and_its_rival():
    """Ball's bound at d = 5 is proved; the resolution brackets the sharpest rate (1.115082..., computed at 30
    digits in tests/prover/test_search.py); the rival rate 1 holds at d = 5 (it fails from d = 10)."""
    spec = registry.find("concentration.cap-probability")
    (case,) = [c for c in spec.cases("default") if dict(c.params) == {"d": 5}]
    evidence = case.run()
    assert evidence.verdict == "proved" and evidence.resolved
    stated = spec.design["stated"]
    low, high = (stated * (1 + evidence.resolution[k]) for k in ("low", "high"))
    assert low <= 1.115082259552 <= high and high - low < 2e-3
    (rival,) = evidence.alternatives
    assert rival["verdict"] == "proved" and not rival["ruled_out"]
    (d10,) = [c for c in spec.cases("default") if dict(c.params) == {"d": 10}]
    assert d10.run().alternatives[0]["verdict"] == "refuted"


def test_monte_carlo_grids_sit_where_the_bound_equals_the_levels():
    levels = np.array([0.5, 0.01, 2e-3])
    assert np.allclose(ineq.levy_bound(10, levy_t(10, levels)), levels, rtol=1e-12)
    m = ineq.normaliser_moments(5, 2.0)
    for side, b in (("upper", m["range_upper"]), ("lower", m["range_lower"])):
        t = [bernstein_t(50, m["variance"], b, lv, 2.0) for lv in levels]
        assert np.allclose([ineq.bernstein_normaliser(5, 2.0, 50, x, side=side) for x in t], levels, rtol=1e-12)


def test_monte_carlo_claims_depend_only_on_their_seed_sequence():
    kwargs = {"d": 5, "levels": [0.5, 0.05], "samples": 2000, "mean_samples": 4000, "anchors": 4, "family_level": 1e-3}
    a = levy_monte_carlo(seed=np.random.SeedSequence(7, spawn_key=(0,)), **kwargs)
    b = levy_monte_carlo(seed=np.random.SeedSequence(7, spawn_key=(0,)), **kwargs)
    c = levy_monte_carlo(seed=np.random.SeedSequence(7, spawn_key=(1,)), **kwargs)
    assert a.quantities == b.quantities
    assert a.quantities != c.quantities
