"""The protocol that holds trained attention against theory: independent runs, the scale rule, t-limits of
a mean over runs, and held-out error curves of pretraining in segments (:func:`pretraining_curve`).

Training protocol for the M-form (fixed before looking at any result; seeds are the children of one
``SeedSequence`` per setting, so every number is reproducible): plain SGD, batch 256 fresh prompts,
2000 steps, learning rate 25 for the first 500 steps (burn-in from the random start) and 6.25 after;
the reported ``M`` of a run is its iterate averaged over the last 1500 steps (Polyak averaging).  SGD
rather than Adam because its averaged iterate's bias is the textbook ``O(lr / batch)`` one; at
``lr / batch = 0.024`` it measured about +0.1-0.2% of ``w*`` (+0.8% at ``lr / batch = 0.39``), below the
resolution of the comparison.

Shape threshold: 0.05 on the scale-free ratios of :mod:`lipschitz_icl.model.geometry` keeps 99.75% of
``||M||_F^2`` in the predicted structure; a random start scores about ``sqrt(1 - 1/d^2) >= 0.87`` on
anisotropy, and the run-to-run noise floor (:func:`noise_floor`) must sit well under it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.model.train import effective_M, init_params, train_runs
from lipschitz_icl.problem import Problem

__all__ = [
    "M_PROTOCOL",
    "SHAPE_THRESHOLD",
    "TrainingRun",
    "run_streams",
    "setting_runs",
    "train_all",
    "independent_runs",
    "scale_interval",
    "noise_floor",
    "mean_interval",
    "mean_limits",
    "pretraining_curve",
    "pretraining_curves",
]

M_PROTOCOL = {
    "optimizer": "sgd",
    "lr": 25.0,
    "schedule": "step",
    "final_lr_fraction": 0.25,
    "average_fraction": 0.75,
    "steps": 2000,
    "batch": 256,
}
SHAPE_THRESHOLD = 0.05


@dataclass(frozen=True)
class TrainingRun:
    """One training run of a setting: the problem its prompts come from, the stream of its random start
    and the stream of its prompts (both spawned from the setting's seed, :func:`run_streams`)."""

    problem: Problem
    start_seed: np.random.SeedSequence
    prompt_seed: np.random.SeedSequence


def run_streams(seed, runs: int) -> list[tuple[np.random.SeedSequence, np.random.SeedSequence]]:
    """``(start, prompts)`` streams of ``runs`` independent runs: run ``k``'s are the two children of the
    ``k``-th child spawned from ``seed`` (a ``SeedSequence``, or an integer entropy for ``SeedSequence(seed)``)."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [tuple(child.spawn(2)) for child in root.spawn(runs)]  # type: ignore[misc]


def train_all(runs, *, attention: str = "softmax", init_scale: float = 1.0, **protocol) -> list:
    """Train every :class:`TrainingRun` of ``runs`` with ``protocol`` (keyword arguments of
    :func:`lipschitz_icl.model.train.train`; its ``param``, default the M-form, also shapes the start): run ``k``
    starts from :func:`lipschitz_icl.model.train.init_params` at ``init_scale`` drawn from its start stream and
    trains on prompts from its prompt stream.  Runs of one ``(d, n)`` train side by side
    (:func:`lipschitz_icl.model.train.train_runs`: each run's numbers are those of a lone run).  Returns
    ``[(start, TrainResult), ...]`` in the order of ``runs``, ``start`` the starting ``M`` of the M-form and the
    starting parameters of a full layer."""
    runs = list(runs)
    param = protocol.get("param", "M")
    starts = [
        init_params(param, run.problem.d, attention, np.random.default_rng(run.start_seed), init_scale) for run in runs
    ]
    out: list = [None] * len(runs)
    shapes: dict = {}
    for k, run in enumerate(runs):
        shapes.setdefault((run.problem.d, run.problem.n), []).append(k)
    for members in shapes.values():
        results = train_runs(
            [runs[k].problem for k in members],
            [runs[k].prompt_seed for k in members],
            inits=[{name: value.copy() for name, value in starts[k].items()} for k in members],
            attention=attention,
            **protocol,
        )
        for k, result in zip(members, results):
            out[k] = (starts[k]["M"] if param == "M" else starts[k], result)
    return out


def setting_runs(problem, seed, runs: int) -> list[TrainingRun]:
    """The :class:`TrainingRun` of ``runs`` independent runs on ``problem`` from ``seed`` (:func:`run_streams`)."""
    return [TrainingRun(problem, start, prompts) for start, prompts in run_streams(seed, runs)]


def independent_runs(problem, seed, runs: int, *, attention: str = "softmax", init_scale: float = 1.0, **protocol):
    """``runs`` independent trainings (``protocol``: keyword arguments of :func:`lipschitz_icl.model.train.train`;
    its ``param``, default the M-form, also shapes the start): run ``k`` draws its random start
    (:func:`lipschitz_icl.model.train.init_params` at ``init_scale``) and its data from the ``k``-th child spawned from
    ``seed`` (a ``SeedSequence``, or an integer entropy for ``SeedSequence(seed)``; start from one grandchild,
    prompts from the other; :func:`run_streams`).  The runs train side by side (:func:`train_all`).  Returns
    ``[(start, TrainResult), ...]``, ``start`` the starting ``M`` of the M-form and the starting parameters of a
    full layer."""
    return train_all(setting_runs(problem, seed, runs), attention=attention, init_scale=init_scale, **protocol)


def scale_interval(w_runs, w_star, target: float | None = None, level: float = 0.99) -> tuple[float, float]:
    """Interval of ``mean(w_runs) - target`` (``target`` defaults to ``w_star``'s value).

    ``w_runs``: ``tr(M_k)/d`` of ``K`` independent runs; their mean has standard error
    ``s_tr = sd / sqrt(K)`` (the spread over independent runs, so SGD noise and the random start are
    both in it).  ``w_star`` (a :class:`~lipschitz_icl.optimum.WStar`) comes with its standard error
    ``s_*``.  Half-width ``t_{(1+level)/2, nu} sqrt(s_tr^2 + s_*^2)`` with Welch-Satterthwaite degrees
    of freedom ``nu = (s_tr^2 + s_*^2)^2 / (s_tr^4 / (K - 1))``.  The decision (equivalence with a
    stated margin) is the caller's: a wide interval is never evidence of agreement.
    """
    w_runs = np.asarray(w_runs, dtype=float)
    K = w_runs.size
    s_tr = w_runs.std(ddof=1) / np.sqrt(K)
    s_star = w_star.w_star.standard_error
    combined = np.hypot(s_tr, s_star)
    nu = combined**4 / (s_tr**4 / (K - 1))
    half = float(stats.t.ppf(0.5 + 0.5 * level, nu) * combined)
    diff = float(w_runs.mean() - (w_star.w_star.value if target is None else target))
    return diff - half, diff + half


def noise_floor(Ms, B=None) -> float:
    """Run-to-run noise floor of the anisotropy: the root-mean-square off-identity part of the
    deviations ``M_k - mean(M)`` relative to ``||mean(M)||_F`` (what a single run's anisotropy would be
    if the truth were exactly isotropic and only SGD noise remained).  With ``B`` (``d x k``, orthonormal
    columns) the floor of ``rho(M, B)`` instead: the part of the deviations off ``col(B)``,
    ``dev - P dev P`` with ``P = B B^T``."""
    Ms = np.asarray(Ms)
    d = Ms.shape[1]
    dev = Ms - Ms.mean(axis=0)
    if B is None:
        dev = dev - np.trace(dev, axis1=1, axis2=2)[:, None, None] / d * np.eye(d)
    else:
        P = np.asarray(B) @ np.asarray(B).T
        dev = dev - P @ dev @ P
    return float(np.sqrt(np.mean(np.sum(dev**2, axis=(1, 2)))) / np.linalg.norm(Ms.mean(axis=0)))


def mean_interval(values, quantile: float) -> tuple[float, float]:
    """``(mean, half-width)`` of the t-interval of the mean of ``K`` independent runs' ``values``: half-width
    ``t_{quantile, K-1} sd / sqrt(K)`` (``quantile = (1 + level)/2`` two-sided, ``level`` one-sided)."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(stats.t.ppf(quantile, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))


def mean_limits(values, level: float) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (independent runs) and its one-sided ``level``
    t-limits ``mean -+ t_{level, K-1} sd / sqrt(K)`` (:func:`mean_interval`)."""
    mean, half = mean_interval(values, level)
    return mean, mean - half, mean + half


def pretraining_curve(
    problem,
    stream: np.random.SeedSequence,
    *,
    kind: str,
    protocol: dict,
    init_scale: float,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    test_problem=None,
    init=None,
):
    """Train the M-form (``kind`` softmax or linear) from a random start of scale ``init_scale`` in
    ``segments`` segments of ``segment_steps`` steps of ``protocol`` (a constant rate: training in
    segments is then one run, except that Adam's moments restart at each segment), continuing each from
    the previous parameters, and after each (and at the start) evaluate the held-out ICL error on
    ``test_problem`` (default ``problem``) by the task-averaged estimator on ``test_contexts`` contexts
    that are the same at every checkpoint (common random numbers).  Streams: one for the start, one for
    the test draws, one per segment, all spawned from ``stream``.
    Returns ``(steps, errors, standard errors, effective M per checkpoint, final params)``."""
    (curve,) = pretraining_curves(
        [problem],
        [stream],
        kind=kind,
        protocol=protocol,
        init_scale=init_scale,
        segments=segments,
        segment_steps=segment_steps,
        test_contexts=test_contexts,
        test_problems=[test_problem],
        inits=[init],
    )
    return curve


def pretraining_curves(
    problems,
    streams,
    *,
    kind: str,
    protocol: dict,
    init_scale: float,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    test_problems=None,
    inits=None,
) -> list:
    """:func:`pretraining_curve` of each ``(problems[c], streams[c])`` (optionally ``test_problems[c]`` and
    ``inits[c]``), the curves' segments trained side by side (:func:`lipschitz_icl.model.train.train_runs`:
    each curve's numbers are those of a lone :func:`pretraining_curve`).  The problems share ``d`` and ``n``."""
    count = len(problems)
    test_problems = [None] * count if test_problems is None else list(test_problems)
    inits = [None] * count if inits is None else list(inits)
    plans = [stream.spawn(2 + segments) for stream in streams]  # start, test draws, one per segment
    params = [
        init or init_params("M", problem.d, kind, np.random.default_rng(plan[0]), init_scale)
        for problem, plan, init in zip(problems, plans, inits)
    ]
    curves: list = [([], [], [], []) for _ in range(count)]
    for k in range(segments + 1):
        if k:
            seeds = [plan[1 + k] for plan in plans]
            results = train_runs(problems, seeds, inits=params, attention=kind, steps=segment_steps, **protocol)
            params = [result.last_params for result in results]
        for c in range(count):
            M = effective_M("M", params[c], kind)
            test = test_problems[c] or problems[c]
            rng = np.random.default_rng(plans[c][1])
            ((bias, noise),) = general_terms(test, [Attention(M, kind)], test_contexts, rng)
            loss = bias + noise
            steps, errors, ses, Ms = curves[c]
            steps.append(k * segment_steps)
            errors.append(float(loss.mean()))
            ses.append(float(loss.std(ddof=1) / math.sqrt(loss.size)))
            Ms.append(M)
    return [(*curve, final) for curve, final in zip(curves, params)]
