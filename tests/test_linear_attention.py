"""derivations/linear_attention.py: the quadratic, its optimum and limits, the per-class moments
(against quadrature of the library's covariance kernels), and the linear-attention claim rules."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from derivations import linear_attention as lin
from lipschitz_icl import make_task_class, sphere
from lipschitz_icl.claims.linear import _cap_share, drop_verdict, equivalence_verdict, minimiser_verdict
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.loss import icl_loss
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


def test_linear_claim_rules():
    assert drop_verdict((1.0, 0.01), (0.1, 0.01), 3.0) == "holds"
    assert drop_verdict((1.0, 0.01), (0.9, 0.01), 3.0) == "fails"
    assert drop_verdict((1.0, 0.3), (0.5, 0.3), 3.0) == "inconclusive"
    assert equivalence_verdict([1.0, 1.001, 0.999, 1.0005], 1.0)[0] == "holds"
    assert equivalence_verdict([1.2, 1.201, 1.199, 1.2005], 1.0)[0] == "fails"
    assert equivalence_verdict([0.9, 1.1, 0.95, 1.05], 1.0)[0] == "inconclusive"
    assert minimiser_verdict([Estimate(1.0, 0.1), Estimate(2.0, 0.1)], 3.0) == "holds"
    assert minimiser_verdict([Estimate(1.0, 0.1), Estimate(-2.0, 0.1)], 3.0) == "fails"


def test_linear_weight_share_is_scale_free_and_softmax_share_is_not():
    rng = np.random.default_rng(32)
    x = sphere.uniform_sphere(rng, (500, 50), 3)
    q = sphere.uniform_sphere(rng, 500, 3)
    t = np.einsum("cnd,cd->cn", x, q)
    lin_share = [_cap_share(m * t / 50, t, 0.8) for m in (0.3, 3.0, 30.0)]
    assert np.allclose(lin_share[0], lin_share[1]) and np.allclose(lin_share[0], lin_share[2])
    soft = [_cap_share(np.exp(w * t) / np.exp(w * t).sum(-1, keepdims=True), t, 0.8).mean() for w in (1, 10, 50)]
    assert soft[0] < soft[1] < soft[2]
