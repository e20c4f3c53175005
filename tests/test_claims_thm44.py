"""The Theorem 4.4 machinery: the scale search, the symmetry it relies on, the second-order rules,
the signal-matched problems and their d -> infinity limit."""

import math

import numpy as np
import pytest

from lipschitz_icl.attention import Attention
from lipschitz_icl.claims import thm44
from lipschitz_icl.loss import general_terms


def test_scale_search_returns_the_minimiser_on_its_own_draw():
    problem = thm44.matched_problem("lowrank-linear", 4, 2, n=10, L0=1.0, sigma=0.3)
    P = problem.task_class.B @ problem.task_class.B.T
    c, loss, edge = thm44.scale_search(problem, P, contexts=1500, seed=7)
    assert edge is None and c > 0
    terms = general_terms(problem, [Attention(s * P) for s in (c, 1.3 * c, c / 1.3, 0.0)], 1500,
                          np.random.default_rng(7))
    losses = [float(np.mean(b + n)) for b, n in terms]
    assert losses[0] == pytest.approx(loss, rel=1e-12)  # the same draw (common random numbers)
    assert losses[0] <= min(losses[1:])


def test_reflection_symmetry_loss_is_even_along_outside_directions():
    # L(cP + D) = L(cP - D) for P D P = 0: the means of the two one-sided changes agree within their
    # paired standard error (a 4-sigma test of equality)
    problem = thm44.matched_problem("lowrank-cosine", 4, 2, n=10, L0=1.0, sigma=0.3)
    B = problem.task_class.B
    M0 = 4.0 * B @ B.T
    name, D = thm44.outside_directions(B, np.random.default_rng(3))[3]  # one-sided cross block PAQ
    assert np.allclose(B.T @ D @ B, 0.0)
    (b0, n0), (bp, np_), (bm, nm) = general_terms(problem, [Attention(M0), Attention(M0 + 2.0 * D),
                                                            Attention(M0 - 2.0 * D)], 4000, np.random.default_rng(1))
    diff = (bp + np_) - (bm + nm)
    assert abs(diff.mean()) <= 4 * diff.std(ddof=1) / math.sqrt(diff.size)
    assert np.mean((bp + np_) - (b0 + n0)) > 0  # and a large enough step raises the loss


def _res(a, se_a, p, se_p, quartic=0.0):
    return {"a": a, "se_a": se_a, "p": p, "se_p": se_p, "quartic_shift": quartic}


def test_exponent_rule_decides_on_synthetic_fits():
    z = 3.0
    assert thm44.exponent_rule(_res(1e-3, 1e-5, 2.001, 0.001), z) == "holds"
    assert thm44.exponent_rule(_res(1e-3, 1e-5, 2.001, 0.001), z, exponent=4.0) == "fails"
    assert thm44.exponent_rule(_res(-1e-3, 1e-5, 2.0, 0.001), z) == "fails"
    assert thm44.exponent_rule(_res(-1e-3, 1e-5, 2.0, 0.001), z, sign=-1) == "holds"
    assert thm44.exponent_rule(_res(1e-6, 1e-5, 2.0, 0.001), z) == "inconclusive"
    assert thm44.exponent_rule(_res(1e-3, 1e-5, 2.05, 0.001, quartic=0.03), z) == "holds"  # within 2x quartic
    assert thm44._curvature_signs([_res(1.0, 0.1, 2, 0), _res(-1.0, 0.1, 2, 0)], z) == "saddle"
    assert thm44._curvature_signs([_res(1.0, 0.1, 2, 0), _res(0.1, 0.1, 2, 0)], z) == "unresolved"
    assert thm44._curvature_signs([_res(1.0, 0.1, 2, 0)], z) == "minimum"


def test_second_order_recovers_a_quadratic_law_and_its_parts():
    problem = thm44.matched_problem("lowrank-linear", 5, 2, n=10, L0=1.0, sigma=0.3)
    B = problem.task_class.B
    M0 = 5.0 * B @ B.T
    dirs = thm44.outside_directions(B, np.random.default_rng(0))[:2]
    for r in thm44.second_order(problem, M0, dirs, contexts=3000, seed=2):
        assert r["a"] > 4 * r["se_a"]
        assert r["a_bias"] + r["a_noise"] == pytest.approx(r["a"], rel=1e-9)
        assert abs(r["p"] - 2.0) <= 4 * r["se_p"] + 2 * r["quartic_shift"]
        S = np.array(r["S"])
        eps = np.array(r["eps"])
        assert np.allclose(S, r["a"] * eps**2 + r["b"] * eps**4, rtol=1e-3)


def test_matched_problem_keeps_the_signal_fixed_across_d():
    for d in (3, 6, 12):
        lin = thm44.matched_problem("lowrank-linear", d, 2, n=5, L0=1.5, sigma=0.1)
        # E f(x)^2 = L^2 E||B^T x||^2 / k = L^2 (k/d) / k
        assert lin.task_class.L**2 * (2 / d) / 2 == pytest.approx(1.5**2 / 2, rel=1e-12)
        quad = thm44.matched_problem("lowrank-quadratic", d, 2, n=5, L0=1.5, sigma=0.1)
        assert quad.task_class.L == pytest.approx(1.5 * d / 2, rel=1e-12)
        cos = thm44.matched_problem("lowrank-cosine", d, 2, n=5, L0=1.5, sigma=0.1)
        assert cos.task_class.frequency == pytest.approx(math.sqrt(d / 2), rel=1e-12)
        assert cos.task_class.L / cos.task_class.frequency == pytest.approx(1.5, rel=1e-12)


def test_limit_terms_match_a_large_d_problem():
    # at d = 200 the projection sqrt(d/k) B^T x is Gaussian up to O(1/d): the loss of c B B^T with
    # c = s' d / k equals the limit's loss at s' within the Monte Carlo error (4 sigma; the O(1/d)
    # difference, about 0.005 relative, is far below it at these sample sizes)
    k, d, s_lim = 2, 200, 2.0
    problem = thm44.matched_problem("lowrank-affine", d, k, n=8, L0=1.0, sigma=0.3)
    P = problem.task_class.B @ problem.task_class.B.T
    (b, nz), = general_terms(problem, [Attention(s_lim * d / k * P)], 3000, np.random.default_rng(5))
    (bl, nl), = thm44.limit_terms("lowrank-affine", k, [s_lim], n=8, L0=1.0, sigma=0.3, contexts=3000, seed=6)
    se = math.hypot(np.std(b + nz, ddof=1), np.std(bl + nl, ddof=1)) / math.sqrt(3000)
    assert abs(np.mean(b + nz) - np.mean(bl + nl)) <= 4 * se
    # and the rank-1 limit runs (embedded in R^2)
    (b1, n1), = thm44.limit_terms("lowrank-linear", 1, [1.0], n=4, L0=1.0, sigma=0.3, contexts=200, seed=0)
    assert b1.shape == (200,) and np.all(n1 > 0)


def test_log_ratio_delta_method():
    rng = np.random.default_rng(0)
    num, den = rng.exponential(2.0, 20000), rng.exponential(1.0, 20000)
    value, se = thm44._log_ratio(num, den)
    assert abs(value - math.log(2.0)) <= 4 * se
    assert se == pytest.approx(math.hypot(1, 1) / math.sqrt(20000), rel=0.05)  # cv of an exponential is 1
