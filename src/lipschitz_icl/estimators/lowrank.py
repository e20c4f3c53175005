"""Low-rank tasks: the signal-matched problem with its best windows and its ``d -> infinity`` limit, and the loss
changes of moves around ``c B B^T`` (:class:`Moves`), measured by reflection-antithetic pairs.

Setting: tasks depend on ``x`` only through ``B^T x`` (``B`` ``d x k``, ``k < d``, orthonormal columns;
``P = B B^T``, ``Q = I - P``, ``R = P - Q``).

Reflection symmetry (used as an estimator, never as a verdict): ``R`` is orthogonal and ``B^T R = B^T``,
so reflecting the context points (``x_i -> R x_i``), the query (``q -> R q``) or both preserves the law
of the prompt and every label, and maps the per-prompt loss of ``M`` to that of ``R M``, ``M R`` or
``R M R``.  Each perturbation ``D`` of :func:`outside_directions` is flipped by one of these maps
(``R D = -D`` for ``Q A Q``, ``Q`` and ``Q A P``; ``D R = -D`` for ``P A Q``; ``R D R = -D`` for the
symmetric cross blocks) while ``c P`` is fixed by all of them, so for every ``u``

    ``lbar_c(u) = (l_c(c P + u D) + l_c(c P - u D)) / 2``

is an unbiased per-prompt estimate of ``L(c P + u D)`` (antithetic pair), even in ``u`` prompt by
prompt: its differences carry no first-order noise (:func:`outside_changes`).  It also makes ``c P``
stationary along each such ``D``; whether it is a minimum is what :mod:`lipschitz_icl.claims.thm44`
measures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lipschitz_icl.estimate import Estimate
from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.loss.fixed_draw import FixedDraw, best_scales
from lipschitz_icl.model.attention import Attention, softmax_weights_from_logits
from lipschitz_icl.tasks.registry import make_task_class

__all__ = [
    "projectors",
    "limit_terms",
    "best_limit",
    "matched_optima",
    "outside_directions",
    "inside_direction",
    "scale_changes",
    "inside_changes",
    "outside_changes",
    "complement_changes",
    "rotated_basis",
    "outside_vector",
    "Moves",
]


def projectors(problem):
    """``(B, P, Q)`` of a low-rank problem: its basis, ``P = B B^T`` and ``Q = I - P``."""
    B = problem.task_class.B
    P = B @ B.T
    return B, P, np.eye(B.shape[0]) - P


def limit_terms(
    task: str, k: int, scales, *, n: int, L0: float, sigma: float, contexts: int, seed, frequency: float = 1.0
):
    """Per-context ``(bias_c, noise_c)`` of ``M = s B B^T`` in the ``d -> infinity`` limit of
    :func:`matched_problem`: ``z = sqrt(d/k) B^T x`` tends to ``N(0, I_k/k)``, so contexts and query are
    Gaussian in ``R^k`` and the kernel is ``exp(s' z_i . z_q)`` (``s' = s k/d`` is the scale that survives
    the limit: ``scales`` here are values of ``s'``).  Task features from the ``k``-dimensional class
    (``B = I_k``), so the task is the same function of ``z`` as in :func:`matched_problem`.  ``seed``:
    anything :func:`numpy.random.default_rng` takes."""
    rng = np.random.default_rng(seed)
    kw = {"frequency": frequency} if task.endswith("cosine") else {}
    d_class = max(k, 2)  # a class needs d >= 2: for k = 1, z sits in R^2 with a zero second coordinate
    tc = make_task_class(task, d_class, L0, rank=k, **kw)
    out: list[tuple[list, list]] = [([], []) for _ in scales]
    per = max(1, (1 << 20) // (n * d_class))
    for s0 in range(0, contexts, per):
        size = min(per, contexts - s0)
        z = rng.standard_normal((size, n, k)) / math.sqrt(k)
        zq = rng.standard_normal((size, k)) / math.sqrt(k)
        if d_class > k:
            z = np.concatenate([z, np.zeros((size, n, 1))], axis=-1)
            zq = np.concatenate([zq, np.zeros((size, 1))], axis=-1)
        features = tc.features(rng, z, zq)
        dots = np.einsum("cnk,ck->cn", z, zq)
        for (bias_parts, noise_parts), s in zip(out, scales):
            p = softmax_weights_from_logits(s * dots)
            bias_parts.append(features.bias(p))
            noise_parts.append(sigma**2 * np.sum(p * p, axis=-1))
    return [(np.concatenate(b), np.concatenate(nz)) for b, nz in out]


def best_limit(task: str, k: int, grid, search_seed, eval_seed, *, n: int, L0: float, sigma: float, contexts: int):
    """The ``d -> infinity`` limit (:func:`limit_terms`) at the scale of ``grid`` with the least mean loss on the
    draw of ``search_seed``, its per-context parts on the draw of ``eval_seed``: ``(index, (bias_c, noise_c))``."""
    search = limit_terms(task, k, grid, n=n, L0=L0, sigma=sigma, contexts=contexts, seed=search_seed)
    i = int(np.argmin([np.mean(b + nz) for b, nz in search]))
    return i, limit_terms(task, k, [grid[i]], n=n, L0=L0, sigma=sigma, contexts=contexts, seed=eval_seed)[0]


def matched_optima(problem, contexts: int, search_seed, eval_seed, *, grid, refine) -> dict:
    """The best ``c P`` and ``w I`` of a low-rank problem: ``c*`` and ``w*`` by
    :func:`~lipschitz_icl.loss.fixed_draw.best_scales` on the draw of ``search_seed`` (``edge_c``, ``edge_w``: their
    search
    edges), then the per-context bias and noise parts of both on the draw of ``eval_seed`` (paired between the two):
    ``P = bP + nP``, ``bP``, ``I = bI + nI``, ``bI``, ``nI``; with ``d`` the problem's dimension."""
    _, P, _ = projectors(problem)
    identity = np.eye(problem.d)
    (c, _, edge_c), (w, _, edge_w) = best_scales(
        problem, [P, identity], contexts, search_seed, grid=grid, refine=refine
    )
    models = [Attention(c * P), Attention(w * identity)]
    (bP, nP), (bI, nI) = general_terms(problem, models, contexts, np.random.default_rng(eval_seed))
    return {
        "d": problem.d,
        "c": c,
        "w": w,
        "edge_c": edge_c,
        "edge_w": edge_w,
        "P": bP + nP,
        "bP": bP,
        "I": bI + nI,
        "bI": bI,
        "nI": nI,
    }


def outside_directions(B: np.ndarray, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """Unit-Frobenius perturbations with ``P D P = 0``, each flipped by one reflection (module docstring):
    the outside block ``Q A Q`` (symmetric), the complement identity ``Q``, the symmetric cross blocks
    ``P A Q + Q A^T P`` and the one-sided cross blocks ``P A Q`` and ``Q A P``; ``A`` standard Gaussian."""
    d = B.shape[0]
    P = B @ B.T
    Q = np.eye(d) - P
    A = rng.normal(size=(d, d))
    dirs = [
        ("outside block QAQ", Q @ (A + A.T) @ Q),
        ("complement identity Q", Q),
        ("cross blocks PAQ + QA'P", P @ A @ Q + Q @ A.T @ P),
        ("cross block PAQ", P @ A @ Q),
        ("cross block QAP", Q @ A @ P),
    ]
    return [(name, D / np.linalg.norm(D)) for name, D in dirs]


def inside_direction(B: np.ndarray, rng: np.random.Generator):
    """A unit traceless symmetric perturbation inside ``col(B)`` (``k >= 2``): ``P M* P`` is isotropic."""
    k = B.shape[1]
    A = rng.normal(size=(k, k))
    S = A + A.T
    S -= np.trace(S) / k * np.eye(k)
    D = B @ S @ B.T
    return "inside col(B), traceless", D / np.linalg.norm(D)


def scale_changes(draw: FixedDraw, c: float, P: np.ndarray, scale_step: float) -> list[tuple[str, Estimate]]:
    """From the base ``c P`` (any ``c``): ``L(c (1 +- scale_step) P) - L(c P)``, per-context differences."""
    base, up, down = draw.losses([c * P, (1 + scale_step) * c * P, (1 - scale_step) * c * P])
    return [
        (f"scale x{1 + scale_step:g}", Estimate.from_samples(up - base)),
        (f"scale x{1 - scale_step:g}", Estimate.from_samples(down - base)),
    ]


def inside_changes(draw: FixedDraw, M0: np.ndarray, inside, step: float) -> list[tuple[str, Estimate]]:
    """For each ``D`` of ``inside``: ``L(M0 +- u D) - L(M0)``, ``u = step ||M0||_F``, per-context differences."""
    u = step * np.linalg.norm(M0)
    out = []
    for name, D in inside:
        base, plus, minus = draw.losses([M0, M0 + u * D, M0 - u * D])
        out += [(f"+{name}", Estimate.from_samples(plus - base)), (f"-{name}", Estimate.from_samples(minus - base))]
    return out


def outside_changes(draw: FixedDraw, M0: np.ndarray, outside, t: float, step: float) -> list[tuple[str, Estimate]]:
    """For each outside ``D``: from the base ``M0 + t ||M0|| D`` the move ``-step ||M0|| D`` (back toward
    ``col(B)`` when ``t > 0``): ``lbar(t - step) - lbar(t)`` in units ``||M0||_F`` (antithetic pairs of
    the module docstring, so no first-order noise).  At ``t = 0`` this is the move of size ``step``
    either way (``lbar`` is even)."""
    norm = np.linalg.norm(M0)
    out = []
    for name, D in outside:
        lp, lm, bp, bm = draw.losses([M0 + sign * x * norm * D for x in (t, t - step) for sign in (1, -1)])
        out.append((name, Estimate.from_samples(0.5 * (bp + bm) - 0.5 * (lp + lm))))
    return out


def complement_changes(
    problem, c: float, s: float, scale_step: float, contexts: int, seed
) -> tuple[Estimate, list[tuple[str, Estimate]]]:
    """On one draw of ``contexts`` prompts (:func:`~lipschitz_icl.loss.estimators.general_terms` on
    ``default_rng(seed)``,
    common random numbers): ``L(c P +- s Q) - L(c P)`` by the antithetic pair ``(l(c P + s Q) + l(c P - s Q))/2 -
    l(c P)``, and the scale moves ``L(c (1 +- scale_step) P) - L(c P)``, per-context estimates."""
    _, P, Q = projectors(problem)
    Ms = (c * P, c * P + s * Q, c * P - s * Q, (1 + scale_step) * c * P, (1 - scale_step) * c * P)
    terms = general_terms(problem, [Attention(M) for M in Ms], contexts, np.random.default_rng(seed))
    base, plus, minus, up, down = (b + nz for b, nz in terms)
    scale = [("scale x(1 + step)", up - base), ("scale x(1 - step)", down - base)]
    return Estimate.from_samples(0.5 * (plus + minus) - base), [(name, Estimate.from_samples(x)) for name, x in scale]


def rotated_basis(B: np.ndarray, theta: float, u: np.ndarray) -> np.ndarray:
    """``B`` with its first column turned by ``theta`` toward the unit vector ``u`` of ``col(B)^perp``:
    ``b_1 -> cos(theta) b_1 + sin(theta) u`` (orthonormal columns; ``col`` tilted by ``theta``)."""
    out = B.copy()
    out[:, 0] = math.cos(theta) * B[:, 0] + math.sin(theta) * u
    return out


def outside_vector(P: np.ndarray, seed) -> np.ndarray:
    """A random unit vector of ``col(B)^perp``: ``(I - P) v / ||(I - P) v||``, ``v`` standard Gaussian drawn from
    ``default_rng(seed)``."""
    v = np.random.default_rng(seed).normal(size=len(P))
    return (v - P @ v) / np.linalg.norm(v - P @ v)


@dataclass(frozen=True)
class Moves:
    """The moves of the minimiser test around the base ``c P`` on one draw, as loss changes: the scale
    ``c (1 +- scale_step)`` (:func:`scale_changes`), ``+- step ||c P||_F`` along each ``inside`` direction
    (:func:`inside_changes`) and ``step ||c P||_F`` along each ``outside`` one (:func:`outside_changes`)."""

    draw: FixedDraw
    c: float
    P: np.ndarray
    inside: list
    outside: list
    step: float
    scale_step: float

    @classmethod
    def around(cls, problem, c: float, contexts: int, seed, direction_seed, *, step: float, scale_step: float) -> Moves:
        """The outside directions, then (``k >= 2``) the inside one, drawn from ``default_rng(direction_seed)``; a
        draw of ``contexts`` prompts on ``seed`` with ``P`` and these directions as its logit basis."""
        B, P, _ = projectors(problem)
        rng = np.random.default_rng(direction_seed)
        outside = outside_directions(B, rng)
        inside = [inside_direction(B, rng)] if B.shape[1] >= 2 else []
        draw = FixedDraw(problem, contexts, seed, basis=[P] + [D for _, D in inside + outside])
        return cls(draw, c, P, inside, outside, step, scale_step)

    def at_base(self) -> list[tuple[str, Estimate]]:
        """Every move from ``c P``: the scale both ways, each inside direction both ways, each outside one."""
        M0 = self.c * self.P
        return (
            scale_changes(self.draw, self.c, self.P, self.scale_step)
            + inside_changes(self.draw, M0, self.inside, self.step)
            + outside_changes(self.draw, M0, self.outside, 0.0, self.step)
        )

    def moved(self, *, shift: float = 0.0, outside: float = 0.0, complement: float = 0.0) -> list[tuple[str, Estimate]]:
        """The moves back from a moved base (the first non-zero argument names it): the scale moves from
        ``(1 + shift) c P``; for each outside ``D`` the move from ``c P + outside ||c P||_F D`` toward ``col(B)``;
        or the move from ``c (P + complement Q)`` back along ``Q``."""
        M0 = self.c * self.P
        if shift:
            return scale_changes(self.draw, (1 + shift) * self.c, self.P, self.scale_step)
        if outside:
            return outside_changes(self.draw, M0, self.outside, outside, self.step)
        Q = np.eye(len(self.P)) - self.P
        t = float(complement * np.linalg.norm(Q) / np.linalg.norm(self.P))
        return outside_changes(self.draw, M0, [("complement identity Q", Q / np.linalg.norm(Q))], t, self.step)
