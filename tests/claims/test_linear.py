"""lipschitz_icl/derivations/linear_attention.py: the quadratic, its optimum and limits, the per-class moments
(against quadrature of the library's covariance kernels); the decision rules of the linear-attention
claims (registry: lipschitz_icl/claims/linear.toml) on constructed inputs, their rival laws, and the registry
entries run through their measure functions (every resolution and alternative a keyword its decide function
takes)."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from lipschitz_icl import decision, make_task_class, sphere
from lipschitz_icl.claims import linear as lin_claims
from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.estimators.linear_scale import base_differences
from lipschitz_icl.loss.estimators import general_terms, icl_loss
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import make_problem


def test_optimum_solves_the_first_order_condition_and_has_the_stated_limits():
    m_star, e_star = lin.optimum_expr()
    loss = lin.loss_expr()
    assert sp.simplify(sp.diff(loss, lin.m).subs(lin.m, m_star)) == 0
    assert sp.simplify(loss.subs(lin.m, m_star) - e_star) == 0
    m_lim, e_lim = lin.limit_exprs()
    assert sp.simplify(m_lim - lin.d) == 0
    assert sp.simplify(e_lim - (lin.k1 - lin.d * lin.B)) == 0


def _kernel_moments(task, d, L, frequency=1.0):
    """``k(1)`` and ``E_t[t k(t)]`` by quadrature of the library's exact covariance."""
    tc = make_task_class(task, d, L, **({"frequency": frequency} if task == "cosine" else {}))
    e1 = np.eye(d)[0]

    def k(t):
        return float(tc.covariance(e1, np.array([t, math.sqrt(max(1 - t * t, 0.0))] + [0.0] * (d - 2))))

    B, _ = integrate.quad(lambda t: t * k(t) * float(sphere.t_density(t, d)), -1, 1, limit=200)
    return k(1.0), B


@pytest.mark.parametrize("task, frequency", [("affine", 1.0), ("relu", 1.0), ("cosine", 1.0), ("cosine", 2.5)])
@pytest.mark.parametrize("d", [2, 3, 5])
def test_class_moments_equal_quadrature_of_the_covariance(task, frequency, d):
    L = 1.3
    k1_ref, B_ref = _kernel_moments(task, d, L, frequency)
    k1v, Bv = lin.class_moments(task)
    subs = {lin.d: d, lin.L: L, lin.k: frequency}
    assert float(sp.N(k1v.subs(subs))) == pytest.approx(k1_ref, rel=1e-10)
    assert float(sp.N(Bv.subs(subs))) == pytest.approx(B_ref, rel=1e-6)


def test_closed_form_limits():
    for d in (2, 3, 7):
        assert lin.linear_limit("affine", d, 2.0) == pytest.approx((d, 4.0 / 3))
        assert lin.linear_limit("relu", d, 2.0) == pytest.approx((d, 4.0 / 3 + 4.0 / (6 * d)))
    # cosine at d = 3: g_3(k) = (sin k - k cos k)/k^2
    k = 1.7
    g = (math.sin(k) - k * math.cos(k)) / k**2
    assert lin.linear_limit("cosine", 3, 1.0, k)[1] == pytest.approx((1 - 3 * g * g) / (2 * k * k))
    # a false closed form (the intercept alone, L^2/3, for relu) is told apart
    assert lin.linear_limit("relu", 3, 1.0)[1] != pytest.approx(1.0 / 3, rel=1e-3)


@pytest.mark.parametrize("task", ["affine", "relu", "cosine"])
def test_derived_loss_matches_monte_carlo_at_small_n(task):
    d, n, L, sigma = 3, 4, 1.0, 0.5
    m_star, e_star = lin.linear_optimum(task, d, n, L, sigma)
    k1v, Bv = (float(sp.N(x.subs({lin.d: d, lin.L: L, lin.k: 1.0}))) for x in lin.class_moments(task))
    a0, a1, a2 = (
        float(sp.N(c.subs({lin.k1: k1v, lin.B: Bv, lin.d: d, lin.n: n, lin.sigma: sigma})))
        for c in lin.quadratic_coefficients()
    )
    assert m_star == pytest.approx(a1 / a2) and e_star == pytest.approx(a0 - a1 * a1 / a2)
    problem = make_problem(task, d, n, L, sigma)
    for m in (m_star, 0.5 * m_star):
        est = icl_loss(problem, M=m * np.eye(d), attention="linear", contexts=60000, rng=31).loss
        assert abs(est.value - (m * m * a2 - 2 * m * a1 + a0)) < 4.5 * est.standard_error


def test_zero_predictor_error_is_k1_and_the_rival_laws_differ_from_the_derived_one():
    for task in ("affine", "relu", "cosine"):
        k1 = float(sp.N(lin.class_moments(task)[0].subs({lin.d: 3, lin.L: 2.0, lin.k: 1.0})))
        assert lin.zero_predictor_error(task, 3, 2.0) == pytest.approx(k1)
        assert lin.zero_predictor_error(task, 3, 2.0) > lin.linear_limit(task, 3, 2.0)[1]
    derived = lin_claims.law_values("affine", 3, 10, 1.0, 0.5)
    assert lin_claims.law_values("affine", 3, 10, 1.0, 0.5, "limit") == pytest.approx((3.0, 1 / 3))
    noiseless = lin_claims.law_values("affine", 3, 10, 1.0, 0.5, "noiseless")
    assert noiseless[0] > 1.2 * derived[0]  # a2 without sigma^2/(n d): a larger optimum at small n
    assert noiseless == pytest.approx(lin.linear_optimum("affine", 3, 10, 1.0, 0.0))


def test_optimum_rule_is_an_equivalence_with_margins():
    m_star, e_star = [2.0], [0.4]

    def rule(m_hat, loss, m_claim=m_star, e_claim=e_star):
        return lin_claims.optimum_decision(
            [m_hat], m_claim, [loss], e_claim, z=3.0, m_margin=0.05, e_margin=0.05
        ).verdict

    assert rule((2.01, 0.01), (0.401, 0.001)) == "holds"
    # m_hat 20% off with a tight interval: wholly outside the 5% margin
    assert rule((2.4, 0.01), (0.401, 0.001)) == "fails"
    # a noisier run of the same centre cannot pass: the wide interval straddles the margin
    assert rule((2.01, 0.05), (0.401, 0.001)) == "inconclusive"
    # a rival claim (another m or E) is decided on the same numbers
    assert rule((2.01, 0.01), (0.401, 0.001), m_claim=[2.4]) == "fails"
    assert rule((2.01, 0.01), (0.401, 0.001), e_claim=[0.5]) == "fails"


def test_perturbation_rule_is_a_sign_rule():
    labels = ["a", "b"]
    assert lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(2.0, 0.1)], 3.0, labels).verdict == "holds"
    assert lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(-2.0, 0.1)], 3.0, labels).verdict == "fails"
    assert (
        lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(0.1, 0.1)], 3.0, labels).verdict
        == "inconclusive"
    )


def test_differences_at_moved_bases_are_exact_on_the_same_draws():
    """``D0 + delta (D1 - D0) + a (D2 - D0)`` equals the re-measured differences at
    ``m ((1 + delta) I + a (B2/m - I))`` on the same draws (the per-context loss is a quadratic in M)."""
    problem = make_problem("relu", 3, 50, 1.0, 0.5)
    m = lin.linear_optimum("relu", 3, 50, 1.0, 0.5)[0]
    P = [-0.3 * m * np.eye(3) / 3, 0.4 * np.diag([1.0, -1.0, 0.0])]
    D = np.diag([1.0, 0.0, -1.0]) / math.sqrt(2)
    bases = [m * np.eye(3), 2 * m * np.eye(3), m * (np.eye(3) + math.sqrt(3) * D)]
    D0, D1, D2 = base_differences(problem, bases, P, 500, np.random.default_rng(5))
    delta, a = 0.37, -0.2
    base = m * ((1 + delta) * np.eye(3) + a * math.sqrt(3) * D)
    models = [Attention(base, "linear")] + [Attention(base + Q, "linear") for Q in P]
    losses = [b + nz for b, nz in general_terms(problem, models, 500, np.random.default_rng(5))]
    for j in range(len(P)):
        np.testing.assert_allclose(
            losses[j + 1] - losses[0], D0[j] + delta * (D1[j] - D0[j]) + a * (D2[j] - D0[j]), atol=1e-12
        )


def _error_rule(errors, values, limits, scale=1.0):
    return decision.asymptotic(lin_claims.error_points([100, 300], errors, values, limits, 3.0, scale), 0.05).verdict


def test_error_rule_is_asymptotic():
    law, limits = [1.06, 1.02], [1.0, 1.0]
    good = [(1.06, 0.001), (1.02, 0.001)]
    assert _error_rule(good, law, limits) == "holds"
    # converging to a limit 10% higher: in range, residual outside the 5% margin
    assert _error_rule([(1.16, 0.001), (1.12, 0.001)], law, limits) == "fails"
    # the claimed law scaled by 1.1 is refuted on the good data (the resolution's search)
    assert _error_rule(good, law, limits, scale=1.1) == "fails"
    # not yet in range: the derived next-order term is above the margin
    assert _error_rule([(1.3, 0.001), (1.1, 0.001)], [1.3, 1.1], limits) == "inconclusive"
    # noisy: the interval at the last point straddles the margin
    assert _error_rule([(1.06, 0.001), (1.02, 0.02)], law, limits) == "inconclusive"
    # a vanishing rival law (no next-order term: its limit is the law itself) is refuted by a flat error
    assert _error_rule(good, [1.06, 0.5], [1.06, 0.5]) == "fails"
    # and holds on data that do vanish as it says, measured to the precision the follow condition asks of a law
    # without a next-order term (half of 0.1 margins)
    assert _error_rule([(1.06, 0.0002), (0.5, 0.0002)], [1.06, 0.5], [1.06, 0.5]) == "holds"


def test_rival_error_laws():
    grid = [10, 20, 40]
    laws = lin_claims._error_laws("affine", 3, grid, 1.0, 0.5)
    values, limits = laws["softmax-rate"]
    assert values == limits and values[0] == pytest.approx(lin.linear_optimum("affine", 3, 10, 1.0, 0.5)[1])
    assert values[-1] / values[0] == pytest.approx(4 ** (-2 / 4))  # the envelope rate n^(-2/(d+1)) at d = 3
    assert laws["other-class"][1][0] == pytest.approx(lin.linear_limit("relu", 3, 1.0)[1])
    assert laws["no-learning"][0] == [lin.zero_predictor_error("affine", 3, 1.0)] * 3


def test_elasticity_rule_tells_a_fixed_scale_from_softmax_adaptation():
    alpha = 1 / 3
    fixed, adapting = (-0.01, 0.01), (2 * alpha - 0.01, 2 * alpha + 0.01)

    def rule(linear, softmax, linear_claim=0.0, softmax_claim=2 * alpha):
        return lin_claims.elasticity_decision(linear, softmax, linear_claim, softmax_claim, alpha).verdict

    assert rule(fixed, adapting) == "holds"
    # linear weights that follow L as softmax's do, or a softmax window that does not: fails
    assert rule(adapting, adapting) == "fails"
    assert rule(fixed, fixed) == "fails"
    # the rivals on data where they are true: each wins
    assert rule(adapting, adapting, linear_claim=2 * alpha) == "holds"
    assert rule(fixed, fixed, softmax_claim=0.0) == "holds"
    # an elasticity interval straddling the margin decides nothing
    assert rule((0.2, 0.5), adapting) == "inconclusive"


def test_trained_shape_rule_needs_a_noise_floor_below_the_threshold():
    assert lin_claims._trained_shape([0.01, 0.02], 0.001, 0.05, 4.0).verdict == "holds"
    # the shape is shown below the threshold or not at all: the interval [0, max] of a larger anisotropy straddles it
    assert lin_claims._trained_shape([0.01, 0.2], 0.001, 0.05, 4.0).verdict == "inconclusive"
    # a noise floor within a factor 4 of the threshold: the shape cannot be decided, whatever the anisotropies
    assert lin_claims._trained_shape([0.01, 0.02], 0.02, 0.05, 4.0).verdict == "inconclusive"
    assert "noise floor 0.0200" in lin_claims._trained_shape([0.01, 0.2], 0.02, 0.05, 4.0).detail


# Small designs: the registry's keys with sample sizes cut so that each measure runs in about a second.
SMALL = {
    "optimum": {"n_grid": [10, 100], "pilot": 300, "contexts": [300, 600]},
    "isotropic": {"contexts": 400},
    "cannot-adapt": {"n_grid": [10, 20], "n_max": 80, "pilot": 200, "contexts": [200, 400]},
    "weights": {"contexts": 100},
    "trained": {"runs": 2, "protocol": {"optimizer": "adam", "lr": 0.05, "steps": 20, "batch": 32}},
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_registry_entry_matches_its_measure_and_decide(name, group_registry, check_registry_entry):
    check_registry_entry(lin_claims, group_registry("linear")[name], **SMALL[name])


def test_the_isotropic_claim_says_it_is_evaluated_at_its_probe_directions_only():
    """'No anisotropic M does better' is checked along finitely many directions: ``points`` says how many."""
    import numpy as np

    from lipschitz_icl.claims.linear import isotropic

    outcome = isotropic(
        task="affine", d=2, n=20, seed=np.random.SeedSequence(1), L=1.0, sigma=0.5, contexts=500,
        relative_size=0.3, family_level=1e-3,
    )  # fmt: skip
    assert outcome.points == len(outcome.quantities) >= 3
