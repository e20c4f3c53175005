"""The Theorem 4.4 claims (registry: lipschitz_icl/claims/thm44.toml): the reflection symmetry and the
antithetic estimator it licenses, the rules of the group on constructed inputs (minimiser moves, the
disjunction of outside directions, the trained range, the dimension tests, the saddle's change rule),
the tilted subspace, the signal-matched problems and their d -> infinity limit."""

import math

import numpy as np
import pytest

from lipschitz_icl import decision, geometry
from lipschitz_icl.attention import Attention
from lipschitz_icl.claims import thm44
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.fixed_draw import FixedDraw
from lipschitz_icl.loss import general_terms
from lipschitz_icl.pretraining import noise_floor


def _problem(task="lowrank-linear", d=4, k=2, n=10):
    problem = thm44.matched_problem(task, d, k, n=n, L0=1.0, sigma=0.3)
    B = problem.task_class.B
    return problem, B, B @ B.T


def test_reflection_symmetry_loss_is_even_along_outside_directions():
    # L(cP + D) = L(cP - D) for each outside direction: the means of the two one-sided changes agree
    # within their paired standard error (4 sigma), and a large step raises the loss
    problem, B, P = _problem("lowrank-cosine")
    M0 = 4.0 * P
    draw = FixedDraw(problem, 4000, np.random.SeedSequence(1))
    for name, D in thm44.outside_directions(B, np.random.default_rng(3)):
        assert np.allclose(B.T @ D @ B, 0.0)
        base, plus, minus = draw.losses([M0, M0 + 2.0 * D, M0 - 2.0 * D])
        diff = plus - minus
        assert abs(diff.mean()) <= 4 * diff.std(ddof=1) / math.sqrt(diff.size), name
        assert np.mean(plus - base) > 0


def test_outside_changes_are_antithetic_and_even():
    # lbar is even prompt by prompt: from the base t = step/2 the move -step lands on lbar(-step/2),
    # equal to lbar(step/2) in every prompt, so the change is exactly zero with zero spread
    problem, B, P = _problem()
    draw = FixedDraw(problem, 500, np.random.SeedSequence(2))
    outside = thm44.outside_directions(B, np.random.default_rng(0))
    for name, e in thm44.outside_changes(draw, 5.0 * P, outside, 0.02, 0.04):
        assert e.value == pytest.approx(0.0, abs=1e-15) and e.standard_error == pytest.approx(0.0, abs=1e-15)
    # from t = 0 the change is second order: positive and far above its (second-order) noise
    for name, e in thm44.outside_changes(draw, 5.0 * P, outside, 0.0, 0.2):
        assert e.value > 4 * e.standard_error, name


def _e(value, se):
    return Estimate(value, se, 1000)


def test_sign_moves_on_constructed_changes():
    changes = [("up", _e(1e-3, 1e-5)), ("down", _e(-1e-3, 1e-5)), ("flat", _e(1e-6, 1e-5))]
    assert [d.verdict for d in thm44._signs(changes, 1 - 1e-3 / 3)] == ["holds", "fails", "inconclusive"]
    # a noisier measurement never passes more easily: the same mean with a wider interval
    assert thm44._signs([("up", _e(1e-3, 1e-3))], 1 - 1e-3)[0].verdict == "inconclusive"


def test_any_of_is_a_disjunction():
    h, f, i = (decision.Decision("sign", v) for v in ("holds", "fails", "inconclusive"))
    assert thm44.any_of("sign", [f, h, i]).verdict == "holds"
    assert thm44.any_of("sign", [f, f]).verdict == "fails"
    assert thm44.any_of("sign", [f, i]).verdict == "inconclusive"
    assert thm44.any_of("sign", []).verdict == "inconclusive"


def test_scale_rule_refutes_an_offset_base_on_a_parabola():
    # toy loss per prompt l_c(c) = (c - 1)^2 + g_c (c - 1) with E g = 0: a base off by eps is refuted
    # once eps exceeds s/2 plus the noise; the exact base holds
    g = np.random.default_rng(0).normal(0, 0.02, 40000)

    class Toy:
        def losses(self, Ms):
            return [(M[0, 0] - 1.0) ** 2 + g * (M[0, 0] - 1.0) for M in Ms]

    def rule(eps):
        return [d.verdict for d in thm44._signs(thm44.scale_changes(Toy(), 1 + eps, np.eye(1), 0.04), 1 - 1e-3 / 2)]

    assert rule(0.0) == ["holds", "holds"]
    assert "fails" in rule(0.05) and "fails" in rule(-0.05)
    assert "fails" not in rule(0.01)


def test_rotated_basis_tilts_col_b():
    problem, B, P = _problem("lowrank-linear", 5, 2)
    v = np.random.default_rng(0).normal(size=5)
    v -= P @ v
    u = v / np.linalg.norm(v)
    rhos = []
    for theta in (0.0, 0.05, 0.1, 0.3):
        Bt = thm44.rotated_basis(B, theta, u)
        assert np.allclose(Bt.T @ Bt, np.eye(2), atol=1e-12)
        assert math.acos(min(1.0, float(Bt[:, 0] @ B[:, 0]))) == pytest.approx(theta, abs=1e-7)
        rhos.append(geometry.rho(3.0 * P, Bt))
    assert rhos[0] == 0.0 and all(a < b for a, b in zip(rhos, rhos[1:]))


def test_range_decision_and_noise_floor_on_constructed_runs():
    B = np.eye(4)[:, :2]
    P = B @ B.T
    D = np.zeros((4, 4))
    D[2, 3] = D[3, 2] = 1.0
    rhos = lambda sizes: [geometry.rho(P + s * D, B) for s in sizes]  # noqa: E731  rho grows with s
    assert thm44._range_decision(rhos([0.0, 0.01]), 0.05).verdict == "holds"
    assert thm44._range_decision(rhos([0.2, 0.3]), 0.05).verdict == "fails"
    assert thm44._range_decision(rhos([0.01, 0.3]), 0.05).verdict == "inconclusive"
    # the floor of rho counts only the run-to-run spread off col(B): spread inside it is no floor
    inside = np.zeros((4, 4))
    inside[0, 1] = inside[1, 0] = 1.0
    assert noise_floor([P + 0.1 * inside, P - 0.1 * inside], B) == pytest.approx(0.0, abs=1e-15)
    spread = noise_floor([P + 0.1 * D, P - 0.1 * D], B)
    assert spread == pytest.approx(0.1 * math.sqrt(2) / math.sqrt(2), rel=1e-12)


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
    e = thm44._log_ratio(num, den)
    assert abs(e.value - math.log(2.0)) <= 4 * e.standard_error
    assert e.standard_error == pytest.approx(math.hypot(1, 1) / math.sqrt(20000), rel=0.05)  # cv of an exponential is 1


def _rows(values_P, values_I, n=4000, seed=0):
    """Constructed dimension rows: per-context parts with the given means and a 10% spread."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, (p, i) in zip((4, 8, 16), zip(values_P, values_I)):
        bP, bI = p * (1 + 0.1 * rng.standard_normal(n)), i * (1 + 0.1 * rng.standard_normal(n))
        nI = np.full(n, 1e-3 / d)
        rows.append({"d": d, "P": bP + 1e-3, "bP": bP, "I": bI + nI, "bI": bI, "nI": nI})
    return rows


def _verdicts(tests, level=1 - 1e-3 / 12):
    return {name: decision.one_sided(*e.confidence_interval(level), b, rel).verdict
            for name, (e, b, rel) in tests.items()}


def test_dimension_tests_on_constructed_rows():
    rng = np.random.default_rng(1)
    bL = 0.1 * (1 + 0.1 * rng.standard_normal(4000))
    limit = (bL, np.full(4000, 1e-3))
    good = _verdicts(thm44._dimension_tests(_rows((0.09, 0.095, 0.098), (0.1, 0.2, 0.4)), limit, 0.05))
    assert set(good.values()) == {"holds"}
    worse = _verdicts(thm44._dimension_tests(_rows((0.09, 0.15, 0.2), (0.1, 0.2, 0.4)), limit, 0.05))
    assert worse["B: L_P(d=16)/L_P(inf) - 1 <= bound"] == "fails"
    # the shifted bound gamma only tightens the test
    shifted = _verdicts(thm44._dimension_tests(_rows((0.09, 0.095, 0.098), (0.1, 0.2, 0.4)), limit, 0.05, 0.5))
    assert shifted["B: L_P(d=16)/L_P(inf) - 1 <= bound"] == "fails"


def test_change_decision_is_an_equivalence_with_the_derived_value():
    # measured change -1.00e-4 +- 1e-6 (interval), derived -1.02e-4 known to 1e-8, tolerance 10%
    near = (-1.01e-4, -0.99e-4)
    assert thm44.change_decision(near, -1.02e-4, 1e-8, 1.02e-5).verdict == "holds"
    assert thm44.change_decision(near, -1.5e-4, 1e-8, 1.02e-5).verdict == "fails"  # a 50% error of the derivation
    assert thm44.change_decision(near, +1.02e-4, 1e-8, 1.02e-5).verdict == "fails"  # the opposite sign
    # a wide interval, or a derived value known only roughly, decides nothing
    assert thm44.change_decision((-1.3e-4, -0.7e-4), -1.02e-4, 1e-8, 1.02e-5).verdict == "inconclusive"
    assert thm44.change_decision(near, -1.02e-4, 2e-5, 1.02e-5).verdict == "inconclusive"
