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

import numpy as np
from scipy import stats

from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.model.train import effective_M, init_params, train

__all__ = [
    "M_PROTOCOL",
    "SHAPE_THRESHOLD",
    "independent_runs",
    "scale_interval",
    "noise_floor",
    "mean_interval",
    "mean_limits",
    "pretraining_curve",
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


def independent_runs(problem, seed, runs: int, *, attention: str = "softmax", init_scale: float = 1.0, **protocol):
    """``runs`` independent trainings (``protocol``: keyword arguments of :func:`lipschitz_icl.model.train.train`;
    its ``param``, default the M-form, also shapes the start): run ``k`` draws its random start
    (:func:`lipschitz_icl.model.train.init_params` at ``init_scale``) and its data from the ``k``-th child spawned from
    ``seed`` (a ``SeedSequence``, or an integer entropy for ``SeedSequence(seed)``; start from one grandchild,
    prompts from the other).  Returns ``[(start, TrainResult), ...]``, ``start`` the starting ``M`` of the
    M-form and the starting parameters of a full layer."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    param = protocol.get("param", "M")
    out = []
    for child in root.spawn(runs):
        init_seq, data_seq = child.spawn(2)
        init = init_params(param, problem.d, attention, np.random.default_rng(init_seq), init_scale)
        result = train(
            problem, attention=attention, init={k: v.copy() for k, v in init.items()}, seed=data_seq, **protocol
        )
        out.append((init["M"] if param == "M" else init, result))
    return out


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
    s_init, s_test, *s_seg = stream.spawn(2 + segments)
    params = init or init_params("M", problem.d, kind, np.random.default_rng(s_init), init_scale)
    test = test_problem or problem
    steps, errors, ses, Ms = [], [], [], []
    for k in range(segments + 1):
        if k:
            params = train(
                problem, attention=kind, init=params, seed=s_seg[k - 1], steps=segment_steps, **protocol
            ).last_params
        M = effective_M("M", params, kind)
        ((bias, noise),) = general_terms(test, [Attention(M, kind)], test_contexts, np.random.default_rng(s_test))
        loss = bias + noise
        steps.append(k * segment_steps)
        errors.append(float(loss.mean()))
        ses.append(float(loss.std(ddof=1) / math.sqrt(loss.size)))
        Ms.append(M)
    return steps, errors, ses, Ms, params
