"""lipschitz_icl/loss/fixed_draw.py: one draw of prompts in memory (it replays general_terms) and the scale
search on it."""

import numpy as np
import pytest

from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.loss.fixed_draw import FixedDraw, best_scales, scale_search
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import make_problem

GRID = np.logspace(-2.0, 2.5, 37)


def _problem(task="lowrank-linear", d=4, k=2, n=10):
    problem = make_problem(task, d, n, 1.0, 0.3, rank=k)
    B = problem.task_class.B
    return problem, B @ B.T


def test_fixed_draw_replays_general_terms():
    problem, P = _problem("lowrank-affine", 5, 2)
    seed = np.random.SeedSequence(11)
    Ms = [3.0 * P, 2.0 * np.eye(5)]
    draw = FixedDraw(problem, 700, seed)
    terms = general_terms(problem, [Attention(M) for M in Ms], 700, np.random.default_rng(seed))
    for got, (b, nz) in zip(draw.losses(Ms), terms):
        assert np.array_equal(got, b + nz)
    assert np.array_equal(draw.losses(Ms[:1])[0], draw.losses(Ms[:1])[0])  # the same draw at every call
    # with a logit basis: matrices in its span from the stored logits, others contracted directly
    spanned = FixedDraw(problem, 700, seed, basis=[P, np.eye(5)])
    assert spanned._coefficients(3.0 * P - 0.5 * np.eye(5)) == pytest.approx([3.0, -0.5])
    assert spanned._coefficients(np.diag([1.0, 2, 3, 4, 5])) is None
    for M in (3.0 * P - 0.5 * np.eye(5), np.diag([1.0, 2, 3, 4, 5])):
        (direct,), (from_basis,) = draw.losses([M]), spanned.losses([M])
        assert np.allclose(from_basis, direct, rtol=1e-12, atol=1e-15)


def test_scale_search_returns_the_minimiser_on_its_own_draw():
    problem, P = _problem()
    draw = FixedDraw(problem, 1500, np.random.SeedSequence(7))
    c, loss, edge = scale_search(draw, P, grid=GRID, refine=(0.1, 0.02))
    assert edge is None and c > 0
    losses = [x.mean() for x in draw.losses([s * P for s in (c, 1.05 * c, c / 1.05, 0.0)])]
    assert losses[0] == pytest.approx(loss, rel=1e-12)
    assert losses[0] <= min(losses[1:])


def test_scale_search_reports_an_unbracketed_optimum():
    problem, P = _problem()
    draw = FixedDraw(problem, 300, np.random.SeedSequence(3))
    assert scale_search(draw, P, grid=[1e-3, 2e-3], refine=())[2] == "top"  # the optimum lies above the grid


def test_best_scales_searches_every_base_on_one_draw():
    # one draw with the bases as its logit basis: each result is scale_search's on that draw, and each
    # scale minimises its own base's loss there
    problem, P = _problem("lowrank-affine", 5, 2)
    seed = np.random.SeedSequence(4)
    found = best_scales(problem, [P, np.eye(5)], 1200, seed, grid=GRID, refine=(0.1,))
    draw = FixedDraw(problem, 1200, seed, basis=[P, np.eye(5)])
    assert found == [scale_search(draw, base, grid=GRID, refine=(0.1,)) for base in (P, np.eye(5))]
    for (s, loss, edge), base in zip(found, (P, np.eye(5))):
        assert edge is None
        assert loss <= min(x.mean() for x in draw.losses([1.1 * s * base, s / 1.1 * base]))
