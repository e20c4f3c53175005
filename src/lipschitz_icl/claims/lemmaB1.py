"""Lemma B.1 and Eq. (4) on trained full layers.  Registry: ``claims/lemmaB1.toml`` (statements, rules,
the training protocol and every other design number, resolutions, alternatives).

A full attention layer ``(W_K, W_Q, W_V)`` on tokens ``z_i = [x_i; y_i]`` with query token ``[q; 0]``
(:mod:`lipschitz_icl.train`, ``param="full"``) trained on the ICL loss ends in the form of Eq. (4):

(a) the value row that writes the prediction reads the labels only: ``W_V[d, :d] = 0``
    (:func:`lipschitz_icl.geometry.value_leak`; :func:`structure` with ``quantity = "value leak"``);
(b) ``A = W_K^T W_Q`` takes the block form ``[[M, 0], [0, 0]]`` on the part that reaches the prediction:
    ``A[d, :d] = 0`` (:func:`lipschitz_icl.geometry.kq_label_coupling`; the column ``A[:, d]`` multiplies the
    query's zero label slot and is not decided by the loss; ``quantity = "label coupling"``);
(c) the top-left block ``M = A[:d, :d]`` is ``w* I``: anisotropy below the shape threshold
    (``quantity = "anisotropy of M"``) and ``tr(M)/d`` equal to the exact ``w*`` within the stated margin
    (:func:`block_scale`, which also checks the anisotropy).

Each case trains ``runs`` independent layers (:func:`lipschitz_icl.pretraining.independent_runs`: run ``k``
from child ``k`` of the case's ``SeedSequence``); intervals are ``level`` t-intervals of the mean over the runs.
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl.derivations import window_law as wlaw

from .. import decision, geometry
from ..evidence import Outcome, Quantity
from ..optimum import wstar
from ..pretraining import independent_runs, mean_limits, scale_interval
from ..problem import make_problem

__all__ = ["structure_decision", "structure", "block_scale"]


def structure_decision(values, threshold: float, level: float, floor: float | None = None) -> decision.Decision:
    """``one-sided`` on the ``level`` limits of the mean of the scale-free ``values`` (one per run): the claim
    "mean <= ``threshold``" (holds iff the upper limit is at or below it), or, given ``floor``, the rival
    "the layers carry at least ``floor``" (holds iff the lower limit is at or above it)."""
    _, low, high = mean_limits(values, level)
    if floor is None:
        return decision.one_sided(low, high, threshold, "<=")
    return decision.one_sided(low, high, floor, ">=")


def _setting(task, d, n, L, sigma) -> str:
    return f"{task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g})"


def _measures(d: int) -> dict:
    """The scale-free size of each structure's violation, per trained layer's parameters: (a) the value leak
    ``||W_V[d, :d]|| / ||W_V[d, :]||`` (:func:`lipschitz_icl.geometry.value_leak`), (b) the label coupling
    ``|A[d, :d]| / ||A[:, :d]||_F`` (:func:`lipschitz_icl.geometry.kq_label_coupling`), (c) the anisotropy of
    the top-left block ``M = A[:d, :d]`` (:func:`lipschitz_icl.geometry.anisotropy`)."""
    return {
        "value leak": lambda p: geometry.value_leak(p["W_V"]),
        "label coupling": lambda p: geometry.kq_label_coupling(p["W_K"], p["W_Q"]),
        "anisotropy of M": lambda p: geometry.anisotropy(geometry.kq_matrix(p)[:d, :d]),
    }


def _structure_quantities(quantity, values, starts, level, threshold, verdict) -> tuple:
    """The mean ``quantity`` of the trained layers (``level`` upper limit) and, for context, of the random starts."""
    mean, low, high = mean_limits(values, level)
    return (
        Quantity(
            name=f"mean {quantity} of the trained layers ({level:g} upper limit)",
            theory=0.0,
            measured=mean,
            ci_low=low,
            ci_high=high,
            verdict=verdict,
            note=f"threshold {threshold:g}; runs {', '.join(f'{v:.4f}' for v in values)}",
        ),
        Quantity(
            name=f"{quantity} of the random starts (context, not decided)",
            measured=float(np.mean(starts)),
            ci_low=float(np.min(starts)),
            ci_high=float(np.max(starts)),
        ),
    )


def structure(
    *,
    quantity: str,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    init_scale: float,
    threshold: float,
    level: float,
) -> Outcome:
    """(a), (b) and the shape of (c): the ``quantity`` of :func:`_measures` is 0 in trained layers.

    ``one-sided`` (:func:`structure_decision`): the ``level`` upper t-limit of its mean over ``runs`` trained
    layers is at or below ``threshold``.  ``decide(floor)``: the rival "the layers carry at least ``floor``"."""
    runs_out = independent_runs(make_problem(task, d, n, L, sigma), seed, runs, init_scale=init_scale, **protocol)
    measure = _measures(d)[quantity]
    values = [measure(r.params) for _, r in runs_out]
    starts = [measure(s) for s, _ in runs_out]

    def decide(floor: float | None = None) -> decision.Decision:
        return structure_decision(values, threshold, level, floor)

    return Outcome(
        decide=decide,
        quantities=_structure_quantities(quantity, values, starts, level, threshold, decide().verdict),
        margin=f"<= {threshold:g} on the mean {quantity} ({level:g} upper limit)",
        rule=f"one-sided: {level:g} upper t-limit of the mean {quantity} over {runs} independent runs <= {threshold:g} "
        f"({_setting(task, d, n, L, sigma)}; protocol {protocol}, random start scale {init_scale:g}).",
        extra={"values": values, "starts": starts},
    )


def _block_shape_scale(runs_out, d: int) -> tuple[list, list]:
    """Anisotropy and isotropic scale ``tr(M)/d`` of each trained top-left block ``M = (W_K^T W_Q)[:d, :d]``."""
    blocks = [geometry.kq_matrix(r.params)[:d, :d] for _, r in runs_out]
    return [geometry.anisotropy(M) for M in blocks], [geometry.isotropic_scale(M) for M in blocks]


def _block_quantities(runs_out, w_runs, ws, aniso, targets, shape, level, margin, threshold, setting) -> tuple:
    """``tr(M)/d`` against the exact ``w*`` (``level`` interval of the difference), the mean anisotropy of ``M``, and
    the value weight ``W_V[d, d]`` (context only)."""
    task, d, n, L, sigma = setting
    w0 = ws.w_star.value
    low, high = scale_interval(w_runs, ws, level=level)
    a_mean, _, a_high = mean_limits(aniso, level)
    return (
        Quantity(
            name="tr(M)/d vs exact w*",
            theory=w0,
            measured=float(np.mean(w_runs)),
            ci_low=w0 + low,
            ci_high=w0 + high,
            symbol="w^*",
            setting={"task": task, "d": d, "n": n, "L": L, "sigma": sigma},
            constant=True,
            note=f"difference [{low:+.4f}, {high:+.4f}], margin +-{margin * w0:.4f}; runs "
            + ", ".join(f"{w:.4f}" for w in w_runs)
            + f"; leading-order law {targets['leading-order']:.4f}",
        ),
        Quantity(
            name=f"mean anisotropy of M ({level:g} upper limit)",
            theory=0.0,
            measured=a_mean,
            ci_high=a_high,
            verdict=shape.verdict,
            note=f"threshold {threshold:g}",
        ),
        Quantity(
            name="value weight W_V[d, d] (context, not decided)",
            measured=float(np.mean([r.params["W_V"][-1, -1] for _, r in runs_out])),
        ),
    )


def block_scale(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    init_scale: float,
    threshold: float,
    level: float,
    margin: float,
) -> Outcome:
    """(c) Eq. (4) with Lemma B.5: the top-left block ``M = A[:d, :d]`` of the trained ``W_K^T W_Q`` is
    ``w* I`` (``w*`` exact).

    ``equivalence``: the ``level`` interval of ``mean tr(M)/d - w*`` (:func:`lipschitz_icl.pretraining.scale_interval`;
    the exact ``w*`` has no sampling error) within ``+-margin w*``; ``one-sided``: the mean anisotropy of
    ``M`` at or below ``threshold`` (:func:`structure_decision`).  ``decide(change, law)``: the target
    ``(1 + change) w*``, or (``law = "leading-order"``) the leading-order window law ``C_d rho^alpha`` of
    :func:`lipschitz_icl.derivations.window_law.window_law`.
    """
    runs_out = independent_runs(make_problem(task, d, n, L, sigma), seed, runs, init_scale=init_scale, **protocol)
    aniso, w_runs = _block_shape_scale(runs_out, d)
    ws = wstar(make_problem(task, d, n, L, sigma), "exact")
    w0 = ws.w_star.value
    alpha, C = wlaw.window_law(task, d)
    targets = {"derived": w0, "leading-order": C * (n * L**2 / sigma**2) ** alpha}
    shape = structure_decision(aniso, threshold, level)

    def decide(change: float = 0.0, law: str = "derived") -> decision.Decision:
        low, high = scale_interval(w_runs, ws, target=targets[law] * (1 + change), level=level)
        scale = decision.equivalence(low, high, margin * w0)
        detail = f"scale: {scale.detail}; shape: {shape.detail}"
        return decision.Decision("equivalence", decision.combine([scale, shape]), detail)

    return Outcome(
        decide=decide,
        quantities=_block_quantities(
            runs_out, w_runs, ws, aniso, targets, shape, level, margin, threshold, (task, d, n, L, sigma)
        ),
        margin=f"+-{margin:g} w* on tr(M)/d",
        rule=f"equivalence: {level:g} t-interval of mean tr(M)/d - w* within +-{margin:g} w*; one-sided: {level:g} "
        f"upper limit of the mean anisotropy of M <= {threshold:g}; {runs} independent runs "
        f"({_setting(task, d, n, L, sigma)}; protocol {protocol}, random start scale {init_scale:g}).",
        extra={"w_runs": w_runs, "anisotropy": aniso, "w_star": w0, "leading_order": targets["leading-order"]},
    )
