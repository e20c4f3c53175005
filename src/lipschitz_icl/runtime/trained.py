"""Trained layers through the on-disk cache: a content-addressed store keyed by the training design.

Every claim that trains attention asks this module for its runs (:func:`train_all`, :func:`independent_runs`,
:func:`trained_runs`: the functions of :mod:`lipschitz_icl.estimators.pretraining` and
:mod:`lipschitz_icl.estimators.trained_scale` of the same names, through the store).  A run is stored under
its training design (:func:`run_key`):

    the problem (:func:`lipschitz_icl.runtime.memo.problem_key`), the attention kind, the scale of the random
    start, the protocol as the trainer validates it (:class:`lipschitz_icl.model.train.Protocol`: every
    keyword, defaults filled in), and the two streams of the run (entropy and spawn key of the
    ``SeedSequence`` of its start and of its prompts),

plus the code version (:func:`lipschitz_icl.runtime.cache.code_version`), so a run is trained once per design
and per version of the code, and every claim whose design names the same run -- the same problem,
protocol and streams -- reads the same layer: claims that share a data stream
(:meth:`lipschitz_icl.gates.registry.ClaimCase.seed_sequence`) share their trained layers.  A stored run is the
:class:`~lipschitz_icl.model.train.TrainResult` itself (every array in JSON, which keeps float64 exactly), so
a hit returns the numbers a fresh training would, bit for bit.  The runs missing from the store are trained
side by side (:func:`lipschitz_icl.estimators.pretraining.train_all`) under an exclusive lock per run
(:func:`lipschitz_icl.runtime.cache.cached_together`), so two pytest-xdist or Dask workers asking for the same
run at once train it once.  With the cache disabled (``--no-cache``) every run is trained.

The store is part of the on-disk cache and is written by the cache's own writer (atomic, under the entry's
lock, through directory descriptors at every level, private ``0600`` signed entries), not by
:func:`lipschitz_icl.writefile.write_file`, which is for the files a command writes for its user.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from lipschitz_icl.estimators import pretraining
from lipschitz_icl.estimators.trained_scale import TrainedRuns
from lipschitz_icl.model.train import Protocol, TrainResult
from lipschitz_icl.runtime.cache import cached_together
from lipschitz_icl.runtime.memo import problem_key

__all__ = ["NAMESPACE", "run_key", "train_all", "independent_runs", "trained_runs"]

NAMESPACE = "trained"
_ARRAYS = ("params", "last_params")


def _stream(seed: np.random.SeedSequence) -> dict:
    """The identity of a ``SeedSequence``: its entropy, spawn key and pool size (what its numbers depend on)."""
    return {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key), "pool_size": seed.pool_size}


def run_key(run: pretraining.TrainingRun, *, attention: str, init_scale: float, protocol: dict) -> dict:
    """The key of a run in the store: problem, attention, start scale, validated protocol, both streams."""
    plan = Protocol.checked(run.problem, attention=attention, init_scale=init_scale, **protocol)
    return {
        "problem": problem_key(run.problem),
        "protocol": dataclasses.asdict(plan),
        "start": _stream(run.start_seed),
        "prompts": _stream(run.prompt_seed),
    }


def _to_json(start, result: TrainResult) -> dict:
    return {
        "start": {k: v.tolist() for k, v in start.items()} if isinstance(start, dict) else np.asarray(start).tolist(),
        "params": {k: np.asarray(v).tolist() for k, v in result.params.items()},
        "last_params": {k: np.asarray(v).tolist() for k, v in result.last_params.items()},
        "loss_curve": result.loss_curve.tolist(),
        "seconds": result.seconds,
        "steps": result.steps,
        "param": result.param,
        "kind": result.kind,
        "d": result.d,
    }


def _from_json(raw: dict):
    start = raw["start"]
    start = {k: np.array(v, dtype=float) for k, v in start.items()} if isinstance(start, dict) else np.array(start)
    arrays = {name: {k: np.array(v, dtype=float) for k, v in raw[name].items()} for name in _ARRAYS}
    curve = np.array(raw["loss_curve"], dtype=float)
    result = TrainResult(
        arrays["params"],
        arrays["last_params"],
        curve,
        float(raw["seconds"]),
        raw["steps"],
        raw["param"],
        raw["kind"],
        raw["d"],
    )
    return start, result


def _valid(raw, key: dict) -> bool:
    """A stored run of this design: finite parameters of the expected shapes, a loss curve of ``steps``
    finite values."""
    plan, d = key["protocol"], key["problem"]["d"]
    shapes = {"M": (d, d), "v": (), "W_K": (d + 1, d + 1), "W_Q": (d + 1, d + 1), "W_V": (d + 1, d + 1)}
    names = (("M", "v") if plan["kind"] == "linear" else ("M",)) if plan["param"] == "M" else ("W_K", "W_Q", "W_V")
    if raw["param"] != plan["param"] or raw["kind"] != plan["kind"] or raw["steps"] != plan["steps"] or raw["d"] != d:
        return False
    for name in _ARRAYS:
        if set(raw[name]) != set(names):
            return False
        for k in names:
            value = np.array(raw[name][k], dtype=float)
            if value.shape != shapes[k] or not np.all(np.isfinite(value)):
                return False
    curve = np.array(raw["loss_curve"], dtype=float)
    seconds = raw["seconds"]
    timed = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds)
    return curve.shape == (plan["steps"],) and bool(np.all(np.isfinite(curve))) and timed and seconds >= 0


def train_all(runs, *, attention: str = "softmax", init_scale: float = 1.0, **protocol) -> list:
    """:func:`lipschitz_icl.estimators.pretraining.train_all` through the store: each run read if stored, the
    others trained side by side and stored.  Returns ``[(start, TrainResult), ...]`` in the order of ``runs``."""
    runs = list(runs)
    keys = [run_key(run, attention=attention, init_scale=init_scale, protocol=protocol) for run in runs]

    def compute(indices: list) -> list:
        trained = pretraining.train_all(
            [runs[i] for i in indices], attention=attention, init_scale=init_scale, **protocol
        )
        return [_to_json(start, result) for start, result in trained]

    values = cached_together(keys, compute, namespace=NAMESPACE, validate=_valid)
    return [_from_json(raw) for raw in values]


def independent_runs(problem, seed, runs: int, *, attention: str = "softmax", init_scale: float = 1.0, **protocol):
    """:func:`lipschitz_icl.estimators.pretraining.independent_runs` through the store (the same runs: run ``k``
    from child ``k`` of ``seed``)."""
    return train_all(
        pretraining.setting_runs(problem, seed, runs), attention=attention, init_scale=init_scale, **protocol
    )


def trained_runs(problem, seed, runs: int, **protocol) -> TrainedRuns:
    """:func:`lipschitz_icl.estimators.trained_scale.trained_runs` through the store."""
    out = independent_runs(problem, seed, runs, **protocol)
    return TrainedRuns(starts=[start for start, _ in out], results=[result for _, result in out])
