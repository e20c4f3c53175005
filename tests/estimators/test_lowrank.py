"""Low-rank tasks (lipschitz_icl.estimators.lowrank): the reflection symmetry and the antithetic estimator it
licenses, the tilted subspace, the signal-matched problems and their d -> infinity limit."""

import itertools
import math

import numpy as np
import pytest

from lipschitz_icl.estimators import lowrank
from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.loss.fixed_draw import FixedDraw, best_scales
from lipschitz_icl.model import geometry
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import matched_problem


def _problem(task="lowrank-linear", d=4, k=2, n=10):
    problem = matched_problem(task, d, k, n=n, L0=1.0, sigma=0.3)
    B = problem.task_class.B
    return problem, B, B @ B.T


def test_reflection_symmetry_loss_is_even_along_outside_directions():
    # L(cP + D) = L(cP - D) for each outside direction: the means of the two one-sided changes agree
    # within their paired standard error (4 sigma), and a large step raises the loss
    problem, B, P = _problem("lowrank-cosine")
    M0 = 4.0 * P
    draw = FixedDraw(problem, 4000, np.random.SeedSequence(1))
    for name, D in lowrank.outside_directions(B, np.random.default_rng(3)):
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
    outside = lowrank.outside_directions(B, np.random.default_rng(0))
    for _name, e in lowrank.outside_changes(draw, 5.0 * P, outside, 0.02, 0.04):
        assert e.value == pytest.approx(0.0, abs=1e-15) and e.standard_error == pytest.approx(0.0, abs=1e-15)
    # from t = 0 the change is second order: positive and far above its (second-order) noise
    for name, e in lowrank.outside_changes(draw, 5.0 * P, outside, 0.0, 0.2):
        assert e.value > 4 * e.standard_error, name


def test_rotated_basis_tilts_col_b():
    _, B, P = _problem("lowrank-linear", 5, 2)
    v = np.random.default_rng(0).normal(size=5)
    v -= P @ v
    u = v / np.linalg.norm(v)
    rhos = []
    for theta in (0.0, 0.05, 0.1, 0.3):
        Bt = lowrank.rotated_basis(B, theta, u)
        assert np.allclose(Bt.T @ Bt, np.eye(2), atol=1e-12)
        assert math.acos(min(1.0, float(Bt[:, 0] @ B[:, 0]))) == pytest.approx(theta, abs=1e-7)
        rhos.append(geometry.rho(3.0 * P, Bt))
    assert rhos[0] == 0.0 and all(a < b for a, b in itertools.pairwise(rhos))


def test_matched_problem_keeps_the_signal_fixed_across_d():
    for d in (3, 6, 12):
        lin = matched_problem("lowrank-linear", d, 2, n=5, L0=1.5, sigma=0.1)
        # E f(x)^2 = L^2 E||B^T x||^2 / k = L^2 (k/d) / k
        assert lin.task_class.L**2 * (2 / d) / 2 == pytest.approx(1.5**2 / 2, rel=1e-12)
        quad = matched_problem("lowrank-quadratic", d, 2, n=5, L0=1.5, sigma=0.1)
        assert pytest.approx(1.5 * d / 2, rel=1e-12) == quad.task_class.L
        cos = matched_problem("lowrank-cosine", d, 2, n=5, L0=1.5, sigma=0.1)
        assert cos.task_class.frequency == pytest.approx(math.sqrt(d / 2), rel=1e-12)
        assert cos.task_class.L / cos.task_class.frequency == pytest.approx(1.5, rel=1e-12)


def test_limit_terms_match_a_large_d_problem():
    # at d = 200 the projection sqrt(d/k) B^T x is Gaussian up to O(1/d): the loss of c B B^T with
    # c = s' d / k equals the limit's loss at s' within the Monte Carlo error (4 sigma; the O(1/d)
    # difference, about 0.005 relative, is far below it at these sample sizes)
    k, d, s_lim = 2, 200, 2.0
    problem = matched_problem("lowrank-affine", d, k, n=8, L0=1.0, sigma=0.3)
    P = problem.task_class.B @ problem.task_class.B.T
    ((b, nz),) = general_terms(problem, [Attention(s_lim * d / k * P)], 3000, np.random.default_rng(5))
    ((bl, nl),) = lowrank.limit_terms("lowrank-affine", k, [s_lim], n=8, L0=1.0, sigma=0.3, contexts=3000, seed=6)
    se = math.hypot(np.std(b + nz, ddof=1), np.std(bl + nl, ddof=1)) / math.sqrt(3000)
    assert abs(np.mean(b + nz) - np.mean(bl + nl)) <= 4 * se
    # and the rank-1 limit runs (embedded in R^2)
    ((b1, n1),) = lowrank.limit_terms("lowrank-linear", 1, [1.0], n=4, L0=1.0, sigma=0.3, contexts=200, seed=0)
    assert b1.shape == (200,) and np.all(n1 > 0)


def test_outside_vector_is_a_unit_vector_of_the_complement():
    _, B, P = _problem("lowrank-linear", 6, 2)
    u = lowrank.outside_vector(P, 3)
    assert np.linalg.norm(u) == pytest.approx(1.0, rel=1e-12) and np.allclose(B.T @ u, 0.0, atol=1e-12)
    assert np.array_equal(u, lowrank.outside_vector(P, 3)) and not np.allclose(u, lowrank.outside_vector(P, 4))


def _searched(problem, P, seed=1):
    grid = np.logspace(-2.0, 2.5, 19)
    ((c, _, edge),) = best_scales(problem, [P], 3000, np.random.SeedSequence(seed), grid=grid, refine=(0.3, 0.1))
    assert edge is None
    return c


def test_moves_at_the_minimiser_and_back_from_moved_bases():
    # at c* P (linear link: Theorem 4.4's minimiser) every move is listed: 2 on the scale, 2 inside col(B) (k = 2)
    # and the 5 outside directions; from a moved base every move back toward c* P lowers the loss (4 standard
    # errors), while at c* P itself the outside moves raise it
    problem, _, P = _problem("lowrank-linear", 5, 2, n=20)
    c = _searched(problem, P)
    moves = lowrank.Moves.around(problem, c, 4000, np.random.SeedSequence(2), 3, step=0.04, scale_step=0.04)
    at_base = moves.at_base()
    assert len(at_base) == 9 and [name for name, _ in at_base[4:]] == [n for n, _ in moves.outside]
    assert all(e.value > 0 for _, e in at_base[4:])
    rank_one = lowrank.Moves.around(_problem("lowrank-linear", 3, 1)[0], c, 10, 0, 0, step=0.1, scale_step=0.1)
    assert rank_one.inside == [] and len(rank_one.outside) == 5
    back = [*moves.moved(outside=0.3), *moves.moved(complement=0.3), moves.moved(shift=0.5)[1]]
    for name, e in back:
        assert e.value < -4 * e.standard_error, name


def test_complement_changes_pair_the_reflections_on_one_draw():
    # the change along Q is the antithetic pair on the draw general_terms makes from the seed (replayed by a
    # FixedDraw); for the linear link c* P is a minimiser along Q, so a large move raises the loss
    problem, _, P = _problem("lowrank-linear", 4, 2, n=20)
    c, Q = _searched(problem, P), np.eye(4) - P
    change, scale = lowrank.complement_changes(problem, c, 0.3 * c, 0.04, 2000, 5)
    base, plus, minus = FixedDraw(problem, 2000, 5).losses([c * P, c * P + 0.3 * c * Q, c * P - 0.3 * c * Q])
    assert change.value == pytest.approx(np.mean(0.5 * (plus + minus) - base), rel=1e-10)
    assert change.value > 4 * change.standard_error
    assert [name for name, _ in scale] == ["scale x(1 + step)", "scale x(1 - step)"]


def test_best_limit_and_matched_optima():
    # the limit at the grid scale of least mean loss on the search draw, its parts on the evaluation draw
    grid = np.logspace(-1.0, 2.0, 7)
    kw = {"n": 10, "L0": 1.0, "sigma": 0.3, "contexts": 1500}
    i, (b, nz) = lowrank.best_limit("lowrank-linear", 2, grid, 1, 2, **kw)
    searched = lowrank.limit_terms("lowrank-linear", 2, grid, seed=1, **kw)
    assert i == int(np.argmin([np.mean(x + y) for x, y in searched])) and 0 < i < grid.size - 1
    ((b2, n2),) = lowrank.limit_terms("lowrank-linear", 2, [grid[i]], seed=2, **kw)
    assert np.array_equal(b, b2) and np.array_equal(nz, n2)
    # at d = 8, k = 2 the window on col(B) beats the best isotropic one by far (the claim's effect)
    problem = matched_problem("lowrank-linear", 8, 2, n=10, L0=1.0, sigma=0.3)
    row = lowrank.matched_optima(problem, 1500, 3, 4, grid=np.logspace(-2.0, 2.5, 19), refine=(0.3,))
    assert row["edge_c"] is None and np.all(row["P"] > row["bP"]) and np.allclose(row["I"], row["bI"] + row["nI"])
    assert np.mean(row["P"]) < 0.8 * np.mean(row["I"])
