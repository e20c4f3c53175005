"""Scale equivalence over independent trained runs: do ``K`` independently trained layers end at ``w I``?

Each run's trained ``M`` (:attr:`lipschitz_icl.model.train.TrainResult.M`: the M-form's ``M``, or ``v M`` for linear
attention; a full layer's ``(W_K^T W_Q)[:d, :d]``) has a shape, its anisotropy ``||M - (tr M/d) I||_F / ||M||_F``,
and a scale ``tr(M)/d`` (:mod:`lipschitz_icl.model.geometry`).  Over the runs:

* :func:`trained_runs`: the runs of one setting (:func:`lipschitz_icl.estimators.pretraining.independent_runs`), with
  each
  run's start, anisotropy and scale (:class:`TrainedRuns`);
* :func:`scale_equivalence`: ``equivalence`` of the ``level`` Welch interval of ``mean tr(M)/d - target``
  (:func:`lipschitz_icl.estimators.pretraining.scale_interval`: the exact ``w*``'s own error is in it) with
  ``+-margin``;
* :func:`relative_scale_equivalence`: ``equivalence`` of the ``level`` t-interval of the mean scale relative to
  a target without sampling error, ``[mean -+ half] / target - 1``, with ``+-margin``;
* :func:`scale_and_shape`: a scale decision and a shape decision as one ``equivalence`` decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from lipschitz_icl import decision
from lipschitz_icl.estimate import relative_interval
from lipschitz_icl.estimators.pretraining import independent_runs, mean_interval, scale_interval
from lipschitz_icl.model.train import TrainResult

__all__ = ["TrainedRuns", "trained_runs", "scale_equivalence", "relative_scale_equivalence", "scale_and_shape"]


@dataclass(frozen=True)
class TrainedRuns:
    """Independent trainings of one setting: each run's start (the M-form's starting ``M``, a full layer's
    starting parameters) and its :class:`~lipschitz_icl.model.train.TrainResult`."""

    starts: list
    results: list[TrainResult]

    @property
    def anisotropy(self) -> list[float]:
        """``||M - (tr M/d) I||_F / ||M||_F`` of each run's trained ``M``."""
        return [r.anisotropy for r in self.results]

    @property
    def scales(self) -> list[float]:
        """``tr(M)/d`` of each run's trained ``M``."""
        return [r.w_trained for r in self.results]


def trained_runs(problem, seed, runs: int, **protocol) -> TrainedRuns:
    """``runs`` independent trainings on ``problem`` (:func:`lipschitz_icl.estimators.pretraining.independent_runs`: run
    ``k`` from child ``k`` of ``seed``; ``protocol`` its keyword arguments)."""
    out = independent_runs(problem, seed, runs, **protocol)
    return TrainedRuns(starts=[start for start, _ in out], results=[result for _, result in out])


def scale_equivalence(w_runs, w_star, target: float, margin: float, level: float) -> decision.Decision:
    """``equivalence``: the ``level`` interval of ``mean(w_runs) - target``
    (:func:`~lipschitz_icl.estimators.pretraining.
    scale_interval`, with the standard error of ``w_star``, a :class:`~lipschitz_icl.optimum.WStar`) within
    ``+-margin`` (absolute)."""
    return decision.equivalence(*scale_interval(w_runs, w_star, target=target, level=level), margin)


def relative_scale_equivalence(scales, target: float, margin: float, level: float):
    """``equivalence``: the two-sided ``level`` t-interval of the mean of ``scales`` (independent runs)
    relative to ``target`` (no sampling error), ``[mean -+ half] / target - 1``, within ``+-margin``.  Returns
    ``(Decision, interval)``."""
    interval = relative_interval(*mean_interval(scales, 0.5 + 0.5 * level), target)
    return decision.equivalence(*interval, margin), interval


def scale_and_shape(scale: decision.Decision, shape: decision.Decision) -> decision.Decision:
    """One ``equivalence`` decision of both: the verdict :func:`lipschitz_icl.decision.combine` of the two, the
    detail ``scale: ...; shape: ...``."""
    detail = f"scale: {scale.detail}; shape: {shape.detail}"
    return decision.Decision("equivalence", decision.combine([scale, shape]), detail)
