"""lipschitz_icl/derivations/linear_attention.py: the quadratic, its optimum and limits, the per-class moments
(against quadrature of the library's covariance kernels), and the decision rules of the linear-attention
claims (registry: lipschitz_icl/claims/linear.toml) on constructed inputs."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl import make_task_class, sphere
from lipschitz_icl.attention import Attention
from lipschitz_icl.claims import linear as lin_claims
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.loss import general_terms, icl_loss
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
    a0, a1, a2 = (float(sp.N(c.subs({lin.k1: k1v, lin.B: Bv, lin.d: d, lin.n: n, lin.sigma: sigma})))
                  for c in lin.quadratic_coefficients())
    assert m_star == pytest.approx(a1 / a2) and e_star == pytest.approx(a0 - a1 * a1 / a2)
    problem = make_problem(task, d, n, L, sigma)
    for m in (m_star, 0.5 * m_star):
        est = icl_loss(problem, M=m * np.eye(d), attention="linear", contexts=60000, rng=31).loss
        assert abs(est.value - (m * m * a2 - 2 * m * a1 + a0)) < 4.5 * est.standard_error


def test_optimum_rule_is_an_equivalence_with_margins():
    m_star, e_star = [2.0], [0.4]
    holds = lin_claims.optimum_decision([(2.01, 0.01)], m_star, [(0.401, 0.001)], e_star, 3.0)
    assert holds.verdict == "holds" and holds.rule == "equivalence"
    # m_hat 20% off with a tight interval: wholly outside the 5% margin
    assert lin_claims.optimum_decision([(2.4, 0.01)], m_star, [(0.401, 0.001)], e_star, 3.0).verdict == "fails"
    # a noisier run of the same centre cannot pass: the wide interval straddles the margin
    assert lin_claims.optimum_decision([(2.01, 0.05)], m_star, [(0.401, 0.001)], e_star, 3.0).verdict == "inconclusive"
    # the shifted claim (resolution, near misses) is decided on the same numbers
    assert lin_claims.optimum_decision([(2.01, 0.01)], m_star, [(0.401, 0.001)], e_star, 3.0,
                                       m_shift=0.2).verdict == "fails"
    assert lin_claims.optimum_decision([(2.01, 0.01)], m_star, [(0.401, 0.001)], e_star, 3.0,
                                       e_shift=-0.2).verdict == "fails"


def test_perturbation_rule_is_a_sign_rule():
    labels = ["a", "b"]
    assert lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(2.0, 0.1)], 3.0, labels).verdict == "holds"
    assert lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(-2.0, 0.1)], 3.0, labels).verdict == "fails"
    assert lin_claims.perturbation_decision([Estimate(1.0, 0.1), Estimate(0.1, 0.1)], 3.0,
                                            labels).verdict == "inconclusive"


def test_shifted_base_differences_are_exact_on_the_same_draws():
    """``D0 + delta (D1 - D0)`` equals the re-measured differences at ``(1 + delta) m* I`` on the same draws."""
    problem = make_problem("relu", 3, 50, 1.0, 0.5)
    m = lin.linear_optimum("relu", 3, 50, 1.0, 0.5)[0]
    P = [-0.3 * m * np.eye(3) / 3, 0.4 * np.diag([1.0, -1.0, 0.0])]
    D0, D1 = lin_claims._shifted_differences(problem, m, P, 500, np.random.default_rng(5))
    delta = 0.37
    base = (1 + delta) * m * np.eye(3)
    models = [Attention(base, "linear")] + [Attention(base + Q, "linear") for Q in P]
    losses = [b + nz for b, nz in general_terms(problem, models, 500, np.random.default_rng(5))]
    for j in range(len(P)):
        np.testing.assert_allclose(losses[j + 1] - losses[0], D0[j] + delta * (D1[j] - D0[j]), atol=1e-12)


def test_error_rule_is_asymptotic():
    grid, limit, z = [100, 300], 1.0, 3.0
    next_orders = [0.06, 0.02]
    good = [(1.06, 0.001), (1.02, 0.001)]
    assert lin_claims.error_decision(grid, good, next_orders, limit, z).verdict == "holds"
    # converging to a limit 10% higher: in range, residual outside the 5% margin
    assert lin_claims.error_decision(grid, [(1.16, 0.001), (1.12, 0.001)], next_orders, limit, z).verdict == "fails"
    # the claimed law scaled by 1.1 is refuted on the good data (the near-miss machinery)
    assert lin_claims.error_decision(grid, good, next_orders, limit, z, scale=1.1).verdict == "fails"
    # not yet in range: the derived next-order term is above the margin
    assert lin_claims.error_decision(grid, [(1.3, 0.001), (1.1, 0.001)], [0.3, 0.1], limit, z).verdict == "inconclusive"
    # noisy: the interval at the last point straddles the margin
    noisy = [(1.06, 0.001), (1.02, 0.02)]
    assert lin_claims.error_decision(grid, noisy, next_orders, limit, z).verdict == "inconclusive"


def test_window_rule_and_elasticity():
    lo = np.array([1.0, 2.0, 3.0])
    e = lin_claims.elasticity(lo, lo.copy(), 0.1, 10.0, 3.0)
    assert e == (0.0, 0.0, 0.0)
    hi = lo / 10.0  # width falls 10x over a 100x range of L: elasticity -1/2
    soft = lin_claims.elasticity(lo, hi, 0.1, 10.0, 3.0)
    assert soft[0] == pytest.approx(-0.5)
    alpha = 0.25  # softmax's derived width elasticity -2 alpha = -0.5
    assert lin_claims.window_decision(e, soft, alpha).verdict == "holds"
    assert lin_claims.window_decision(e, soft, alpha, shift=0.3).verdict == "fails"
    # a linear window narrowing like softmax's, or a softmax window that does not narrow: fails
    assert lin_claims.window_decision(soft, soft, alpha).verdict == "fails"
    assert lin_claims.window_decision(e, e, alpha).verdict == "fails"
    # paired widths that scatter: elasticity 0.21 with interval [-0.14, 0.55], straddling the margin
    noisy = lin_claims.elasticity(np.ones(4), np.array([0.2, 5.0, 0.2, 5.0]), 0.1, 10.0, 3.0)
    assert noisy[1] < 0.3 < noisy[2]
    assert lin_claims.window_decision(noisy, soft, 0.3).verdict == "inconclusive"


def test_trained_rule():
    assert lin_claims.trained_decision([1.0, 1.001, 0.999, 1.0005], 1.0)[0].verdict == "holds"
    assert lin_claims.trained_decision([1.2, 1.201, 1.199, 1.2005], 1.0)[0].verdict == "fails"
    assert lin_claims.trained_decision([0.9, 1.1, 0.95, 1.05], 1.0)[0].verdict == "inconclusive"


def test_linear_window_width_is_scale_free_and_softmax_width_shrinks_as_1_over_w():
    rng = np.random.default_rng(32)
    d = 3
    x = sphere.uniform_sphere(rng, (500, 50), d)
    q = sphere.uniform_sphere(rng, 500, d)
    t = np.einsum("cnd,cd->cn", x, q)
    widths = [lin_claims.window_width(m * t / 50, t) for m in (0.3, 3.0, 30.0)]
    assert np.allclose(widths[0], widths[1]) and np.allclose(widths[0], widths[2])
    soft = [lin_claims.window_width(np.exp(w * t) / np.exp(w * t).sum(-1, keepdims=True), t).mean()
            for w in (1, 10, 50)]
    assert soft[0] > soft[1] > soft[2]


def test_softmax_width_at_large_w_is_its_derived_value():
    """Under weights ~ exp(w t) on S^{d-1}, 1 - t is Gamma((d-1)/2, 1/w) as w -> inf: width (d-1)/(2w)."""
    d, w = 3, 400.0
    grid = np.linspace(-1, 1, 200001)[1:-1]
    dens = np.asarray(sphere.t_density(grid, d)) * np.exp(w * (grid - 1))
    width = integrate.trapezoid(dens * (1 - grid), grid) / integrate.trapezoid(dens, grid)
    assert width == pytest.approx((d - 1) / (2 * w), rel=1e-2)
