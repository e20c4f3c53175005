"""Is ``M = w I`` a minimiser of the ICL loss?  Paired loss differences along probe directions, each decided
by the ``sign`` rule (Lemma B.5's test of ``M* = w* I``).

* :func:`anisotropic_probes`: unit-Frobenius perturbations orthogonal to ``I`` (symmetric traceless,
  antisymmetric, rank-one traceless in turn).
* :func:`minimiser_decisions`: ``L(M0 + step ||M0||_F D) - L(M0)`` along each ``D``, paired task-averaged
  Monte Carlo on common random numbers (:func:`lipschitz_icl.loss.estimators.loss_differences`).
* :func:`scale_decisions`: ``loss_c(w e^(+-step)) - loss_c(w)`` per context on the fixed draws of the reduced
  form for ``M = w I`` (:class:`~lipschitz_icl.loss.isotropic.IsotropicBatch`).
* :class:`MinimiserProbes`: both kinds of probe of one ``w I``, drawn from one seed, with their names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.loss.estimators import loss_differences
from lipschitz_icl.loss.isotropic import IsotropicBatch, draw_isotropic_batch
from lipschitz_icl.model import geometry
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import Problem

__all__ = ["anisotropic_probes", "minimiser_decisions", "scale_decisions", "MinimiserProbes"]


def anisotropic_probes(d: int, count: int, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """``count`` pairs ``(kind, D)`` of unit-Frobenius perturbations orthogonal to ``I``
    (:func:`lipschitz_icl.model.geometry.anisotropic_directions`): symmetric traceless, antisymmetric and rank-one
    traceless ones in turn, each from a fresh Gaussian ``A``."""
    kinds = [("symmetric", "antisymmetric", "rank-one")[k % 3] for k in range(count)]
    return [(kind, geometry.anisotropic_directions(rng.normal(size=(d, d)))[kind]) for kind in kinds]


def minimiser_decisions(
    problem: Problem,
    M0: np.ndarray,
    directions,
    *,
    step: float,
    contexts: int,
    stream: np.random.SeedSequence,
    level: float,
) -> tuple[list[decision.Decision], list[Estimate]]:
    """Is ``M0`` a minimiser along each unit direction ``D``?  Paired differences
    ``L(M0 + step ||M0||_F D) - L(M0)`` on common random numbers drawn from ``stream`` (the same draws on
    every call), each decided by the ``sign`` rule (+1) on its interval at ``level``.
    Returns ``(decisions, estimates)``."""
    size = step * np.linalg.norm(M0)
    others = [Attention(M0 + size * D) for D in directions]
    diffs = loss_differences(problem, Attention(M0), others, contexts=contexts, rng=np.random.default_rng(stream))
    return [decision.sign(*e.confidence_interval(level), +1) for e in diffs], diffs


def scale_decisions(
    problem: Problem, batch: IsotropicBatch, w_base: float, step: float, level: float
) -> tuple[list[decision.Decision], list[Estimate]]:
    """Is ``w_base I`` a minimiser along the scale?  Paired per-context differences
    ``loss_c(w_base e^(+-step)) - loss_c(w_base)``, ``loss_c = bias_c + sigma^2 collision_c`` on the fixed
    draws of ``batch``, each a ``sign`` rule at ``level``.  Returns ``(decisions, estimates)``, up then down."""

    def loss_c(w):
        bias_c, collision_c = batch.terms(w)
        return bias_c + problem.sigma**2 * collision_c

    base = loss_c(w_base)
    estimates = [Estimate.from_samples(loss_c(w_base * f) - base) for f in (math.exp(step), math.exp(-step))]
    return [decision.sign(*e.confidence_interval(level), +1) for e in estimates], estimates


@dataclass(frozen=True)
class MinimiserProbes:
    """The probes of ``M = w I`` on ``problem``: ``+-D`` for each ``(kind, D)`` of ``directions`` (size
    ``step ||w I||_F``, ``contexts`` contexts drawn from ``stream``, :func:`minimiser_decisions`) and the
    scale ``w e^(+-scale_step)`` on ``batch`` (:func:`scale_decisions`), every interval at ``level``."""

    problem: Problem
    directions: list[tuple[str, np.ndarray]]
    batch: IsotropicBatch
    step: float
    contexts: int
    stream: np.random.SeedSequence
    scale_step: float
    level: float

    @classmethod
    def draw(
        cls,
        problem: Problem,
        w: float,
        seed: np.random.SeedSequence,
        *,
        count: int,
        step: float,
        contexts: int,
        scale_step: float,
        scale_contexts: int,
        family_level: float,
    ) -> MinimiserProbes:
        """The ``2 count + 2`` probes of ``w I`` drawn from the three children of ``seed``: ``count`` anisotropic
        directions (:func:`anisotropic_probes`), the Monte Carlo stream, and ``scale_contexts`` contexts of the
        reduced form (importance sampling centred at ``w``, :func:`lipschitz_icl.loss.isotropic.draw_isotropic_batch`);
        each interval at the Bonferroni level ``1 - family_level / (2 count + 2)``.  The anisotropic probes have size
        ``step ||w I||_F`` on ``contexts`` contexts, the scale probes ``w e^(+-scale_step)``."""
        s_dirs, s_mc, s_scale = seed.spawn(3)
        directions = anisotropic_probes(problem.d, count, np.random.default_rng(s_dirs))
        rng = np.random.default_rng(s_scale)
        batch = draw_isotropic_batch(problem.task_class, problem.n, scale_contexts, rng, w_hint=w)
        level = 1 - family_level / (2 * count + 2)
        return cls(
            problem=problem,
            directions=directions,
            batch=batch,
            step=step,
            contexts=contexts,
            stream=s_mc,
            scale_step=scale_step,
            level=level,
        )

    @property
    def names(self) -> list[str]:
        """``+kind #i`` and ``-kind #i`` for each direction, then ``scale up``, ``scale down``."""
        signed = [f"{sgn}{kind} #{i}" for sgn in "+-" for i, (kind, _) in enumerate(self.directions)]
        return signed + ["scale up", "scale down"]

    def along(self, M0: np.ndarray, directions) -> tuple[list[decision.Decision], list[Estimate]]:
        """:func:`minimiser_decisions` of ``M0`` along ``directions`` on this probe set's draws."""
        return minimiser_decisions(
            self.problem, M0, directions, step=self.step, contexts=self.contexts, stream=self.stream, level=self.level
        )

    def scale(self, w: float) -> tuple[list[decision.Decision], list[Estimate]]:
        """:func:`scale_decisions` of ``w I`` on this probe set's draws."""
        return scale_decisions(self.problem, self.batch, w, self.scale_step, self.level)

    def at(self, w: float) -> tuple[list[decision.Decision], list[Estimate]]:
        """Every probe of ``w I`` in the order of :attr:`names`."""
        signed = [D for _, D in self.directions] + [-D for _, D in self.directions]
        (along, diffs), (scale, scale_diffs) = self.along(w * np.eye(self.problem.d), signed), self.scale(w)
        return along + scale, diffs + scale_diffs
