"""One draw of prompts kept in memory, on which any number of attention matrices is evaluated, and the
best scale of ``M = s base`` found on it (sample-average approximation).

A claim that re-decides its rule at many bases (a resolution bisected on the same measurements) needs the
same prompts every time: :class:`FixedDraw` draws them once, exactly as
:func:`lipschitz_icl.loss.estimators.general_terms` would on the same seed, and :func:`scale_search` minimises the
sample-average loss of ``s base`` over a grid of scales refined by parabolas.

The draw is held in memory whole: it is refused before drawing beyond the memory budget and, drawn with
its basis, beyond the work budget (:mod:`lipschitz_icl.budget`).
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl import budget as budgets
from lipschitz_icl.loss.estimators import DEFAULT_CHUNK_ELEMENTS, SECONDS_PER_COORDINATE, check_work
from lipschitz_icl.model.attention import softmax_weights_from_logits
from lipschitz_icl.sphere import laws

__all__ = ["FixedDraw", "scale_search", "best_scales"]


class FixedDraw:
    """One draw of ``contexts`` prompts of ``problem`` in memory.

    The draw is that of :func:`lipschitz_icl.loss.estimators.general_terms` with ``np.random.default_rng(seed)`` (the
    same chunks, covariates, queries and task features, in the same order), so ``losses(Ms)`` equals the
    per-context ``bias + noise`` that ``general_terms`` returns for ``Ms`` on that seed.

    ``basis`` (optional): matrices whose logits ``x_i^T B_j q`` are computed once.  The logits are linear
    in ``M``, so an ``M`` in their span (least-squares coefficients reproducing ``M`` to rounding) gets
    ``sum_j a_j (x_i^T B_j q)`` instead of a new contraction; any other ``M`` is contracted directly.
    """

    def __init__(self, problem, contexts: int, seed, basis=(), budget: float = budgets.ENGINE_SECONDS):
        per_point = problem.d + 4 + len(basis)  # x, q, the features (at most two) and one logit per basis matrix
        budgets.check_memory(
            8.0 * contexts * problem.n * per_point,
            name="contexts",
            value=contexts,
            what=f"a fixed draw of {contexts} contexts at n = {problem.n}, d = {problem.d}",
            cheaper=f"contexts <= {budgets.largest_count(budgets.MEMORY_BUDGET, 8.0 * problem.n * per_point)}",
        )
        per_context = problem.n * (problem.d + 2) * SECONDS_PER_COORDINATE * (1 + len(basis))
        check_work(problem, contexts, per_context, budget)
        rng = np.random.default_rng(seed)
        self.problem = problem
        per_chunk = max(1, DEFAULT_CHUNK_ELEMENTS // (problem.n * problem.d))
        self.chunks = []
        for start in range(0, contexts, per_chunk):
            size = min(per_chunk, contexts - start)
            x = laws.uniform_sphere(rng, (size, problem.n), problem.d)
            q = laws.uniform_sphere(rng, size, problem.d)
            self.chunks.append((x, q, problem.task_class.features(rng, x, q)))
        self.basis = np.array([np.asarray(B, dtype=float).ravel() for B in basis]).reshape(len(basis), problem.d**2)
        self.basis_logits = [[self._contract(x, q, B) for B in basis] for x, q, _ in self.chunks]

    @staticmethod
    def _contract(x, q, M) -> np.ndarray:
        return np.einsum("...nd,...d->...n", x, q @ np.asarray(M).T)

    def _coefficients(self, M) -> np.ndarray | None:
        """Coefficients of ``M`` in the basis if they reproduce it to rounding, else ``None``."""
        if not len(self.basis):
            return None
        flat = np.asarray(M, dtype=float).ravel()
        coef = np.linalg.lstsq(self.basis.T, flat, rcond=None)[0]
        exact = np.linalg.norm(self.basis.T @ coef - flat) <= 1e-12 * max(float(np.linalg.norm(flat)), 1.0)
        return coef if exact else None

    def losses(self, Ms) -> list[np.ndarray]:
        """Per-context ``bias_c + noise_c`` of softmax attention ``M`` for each ``M`` in ``Ms``."""
        sigma2 = self.problem.sigma**2
        out = []
        for M in Ms:
            coef = self._coefficients(M)
            parts = []
            for (x, q, features), logits in zip(self.chunks, self.basis_logits):
                if coef is None:
                    s = self._contract(x, q, M)
                else:
                    s = sum((a * g for a, g in zip(coef, logits) if a != 0.0), np.zeros_like(logits[0]))
                p = softmax_weights_from_logits(s)
                parts.append(features.bias(p) + sigma2 * np.sum(p * p, axis=-1))
            out.append(np.concatenate(parts))
        return out


def _vertex(x: np.ndarray, y: np.ndarray) -> float | None:
    """Abscissa of the vertex of the parabola through three points (``None`` if it opens downwards)."""
    a, b, _ = np.polyfit(x, y, 2)
    return float(-b / (2 * a)) if a > 0 else None


def scale_search(draw: FixedDraw, base: np.ndarray, *, grid, refine):
    """Best ``s >= 0`` for ``M = s base`` by sample-average approximation on one draw (:class:`FixedDraw`).

    The losses of ``s = 0`` (uniform averaging) and of every scale in ``grid``: ``s_grid`` minimises
    them.  Interior minima are refined on the same draw by parabolas through ``s (1 - h), s, s (1 + h)``
    for ``h`` in ``refine`` (vertex kept if its loss is lower).  Returns ``(s, loss_at_s, edge)`` with
    ``edge`` ``"zero"`` (the minimiser is ``s = 0``: no window), ``"top"`` (the largest grid scale: not
    bracketed) or ``None``.
    """
    grid = np.concatenate([[0.0], np.asarray(grid, dtype=float)])
    losses = np.array([x.mean() for x in draw.losses([s * base for s in grid])])
    i = int(np.argmin(losses))
    if i in (0, grid.size - 1):
        return float(grid[i]), float(losses[i]), "zero" if i == 0 else "top"
    s, best = float(grid[i]), float(losses[i])
    for h in refine:
        points = s * np.array([1 - h, 1.0, 1 + h])
        values = np.array([x.mean() for x in draw.losses([p * base for p in points])])
        top = _vertex(points, values)
        if top is not None and points[0] <= top <= points[2]:
            (value,) = [x.mean() for x in draw.losses([top * base])]
            if value < values[1]:
                s, best = top, float(value)
                continue
        j = int(np.argmin(values))
        s, best = float(points[j]), float(values[j])
    return s, best, None


def best_scales(problem, bases, contexts: int, seed, *, grid, refine) -> list[tuple[float, float, str | None]]:
    """:func:`scale_search` of ``s base`` for each ``base`` of ``bases`` on one :class:`FixedDraw` of ``contexts``
    prompts of ``problem`` on ``seed`` (``bases`` its logit basis): one ``(s, loss_at_s, edge)`` per base."""
    draw = FixedDraw(problem, contexts, seed, basis=bases)
    return [scale_search(draw, base, grid=grid, refine=refine) for base in bases]
