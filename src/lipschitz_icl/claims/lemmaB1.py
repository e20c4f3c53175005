"""Lemma B.1 and Eq. (4) on trained full layers.  Registry: ``claims/lemmaB1.toml`` (statements, rules, designs).

A full attention layer ``(W_K, W_Q, W_V)`` on tokens ``z_i = [x_i; y_i]`` with query token ``[q; 0]``
(:mod:`lipschitz_icl.model.train`, ``param="full"``) trained on the ICL loss ends in the form of Eq. (4): (a) the
value row that writes the prediction reads the labels only, ``W_V[d, :d] = 0``; (b) ``A = W_K^T W_Q`` is
``[[M, 0], [0, 0]]`` on the part that reaches the prediction, ``A[d, :d] = 0`` (the column ``A[:, d]`` meets
the query's zero label slot and is not decided by the loss); (c) ``M = A[:d, :d]`` is ``w* I``.
:func:`structure` decides (a), (b) and the shape of (c), :func:`block_scale` the scale and shape of (c), each
on ``runs`` layers trained independently (:func:`lipschitz_icl.estimators.trained_scale.trained_runs`: run ``k`` from
child ``k`` of the case's ``SeedSequence``), with ``level`` t-intervals of the mean over the runs.
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.derivations import window_law as wlaw
from lipschitz_icl.estimators.pretraining import mean_limits, scale_interval
from lipschitz_icl.estimators.trained_scale import TrainedRuns, scale_and_shape, scale_equivalence
from lipschitz_icl.gates.evidence import Outcome, Quantity
from lipschitz_icl.model import geometry
from lipschitz_icl.optimum import WStar, wstar
from lipschitz_icl.problem import Problem, make_problem
from lipschitz_icl.runtime.trained import trained_runs

__all__ = ["structure_decision", "structure", "block_scale"]


def structure_decision(values, threshold: float, level: float, floor: float | None = None) -> decision.Decision:
    """``one-sided`` on the ``level`` t-limits of the mean of ``values`` (one per run): the claim "mean <=
    ``threshold``" (upper limit at or below it), or, given ``floor``, the rival "at least ``floor``" (lower limit)."""
    _, low, high = mean_limits(values, level)
    bound, relation = (threshold, "<=") if floor is None else (floor, ">=")
    return decision.one_sided(low, high, bound, relation)


def _layers(
    *,
    task: str,
    d: int,
    n: int,
    L: float,
    sigma: float,
    seed: np.random.SeedSequence,
    runs: int,
    protocol: dict,
    init_scale: float,
) -> tuple[TrainedRuns, Problem, str]:
    """``runs`` independently trained full layers (the trainer's ``protocol`` from random starts of scale
    ``init_scale``, streams spawned from ``seed``), their problem, and the setting as the rules state it."""
    problem = make_problem(task, d, n, L, sigma)
    trained = trained_runs(problem, seed, runs, init_scale=init_scale, **protocol)
    setting = f"{task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g})"
    return trained, problem, f"{setting}; protocol {protocol}, random start scale {init_scale:g}"


def _measures(d: int) -> dict:
    """The scale-free size of each structure's violation, per trained layer's parameters: (a) the value leak
    ``||W_V[d, :d]|| / ||W_V[d, :]||`` (:func:`lipschitz_icl.model.geometry.value_leak`), (b) the label coupling
    ``|A[d, :d]| / ||A[:, :d]||_F`` (:func:`lipschitz_icl.model.geometry.kq_label_coupling`), (c) the anisotropy of
    the top-left block ``M = A[:d, :d]`` (:func:`lipschitz_icl.model.geometry.anisotropy`)."""
    return {
        "value leak": lambda p: geometry.value_leak(p["W_V"]),
        "label coupling": lambda p: geometry.kq_label_coupling(p["W_K"], p["W_Q"]),
        "anisotropy of M": lambda p: geometry.anisotropy(geometry.kq_matrix(p)[:d, :d]),
    }


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
    """(a), (b) and the shape of (c): the ``quantity`` of :func:`_measures` is 0 in trained layers, ``one-sided``
    (:func:`structure_decision`): the ``level`` upper t-limit of its mean over ``runs`` trained layers is at or
    below ``threshold``.  ``decide(floor)``: the rival "the layers carry at least ``floor``"."""
    trained, _, setting = _layers(
        task=task, d=d, n=n, L=L, sigma=sigma, seed=seed, runs=runs, protocol=protocol, init_scale=init_scale
    )
    measure = _measures(d)[quantity]
    values = [measure(r.params) for r in trained.results]
    starts = [measure(s) for s in trained.starts]
    mean, low, high = mean_limits(values, level)
    start_mean = float(np.mean(starts))
    start_range = (float(np.min(starts)), float(np.max(starts)))

    def decide(floor: float | None = None) -> decision.Decision:
        return structure_decision(values, threshold, level, floor)

    return Outcome(
        decide=decide,
        quantities=(
            Quantity.within(
                f"mean {quantity} of the trained layers ({level:g} upper limit)",
                mean,
                (low, high),
                theory=0.0,
                verdict=decide().verdict,
                note=f"threshold {threshold:g}; runs {', '.join(f'{v:.4f}' for v in values)}",
            ),
            Quantity.within(f"{quantity} of the random starts (context, not decided)", start_mean, start_range),
        ),
        margin=f"<= {threshold:g} on the mean {quantity} ({level:g} upper limit)",
        rule=f"one-sided: {level:g} upper t-limit of the mean {quantity} over {runs} independent runs <= {threshold:g} "
        f"({setting}).",
        extra={"values": values, "starts": starts},
    )


def _block_quantities(
    trained: TrainedRuns,
    *,
    exact: WStar,
    leading: float,
    shape: decision.Decision,
    level: float,
    margin: float,
    threshold: float,
    setting: dict,
) -> tuple[Quantity, ...]:
    """``tr(M)/d`` against the ``exact`` ``w*`` (``level`` interval, margin ``+-margin w*``, the ``leading``-order
    law in the note; a constant at ``setting``), the mean anisotropy of ``M`` against ``threshold`` (the ``shape``
    decision's verdict), and the value weight ``W_V[d, d]``."""
    w0 = exact.w_star.value
    w_runs = trained.scales
    value_weight = float(np.mean([r.params["W_V"][-1, -1] for r in trained.results]))
    low, high = scale_interval(w_runs, exact, level=level)
    a_mean, _, a_high = mean_limits(trained.anisotropy, level)
    return (
        Quantity.within(
            "tr(M)/d vs exact w*",
            float(np.mean(w_runs)),
            (w0 + low, w0 + high),
            theory=w0,
            symbol="w^*",
            setting=setting,
            constant=True,
            note=f"difference [{low:+.4f}, {high:+.4f}], margin +-{margin * w0:.4f}; runs "
            f"{', '.join(f'{w:.4f}' for w in w_runs)}; leading-order law {leading:.4f}",
        ),
        Quantity(
            name=f"mean anisotropy of M ({level:g} upper limit)",
            theory=0.0,
            measured=a_mean,
            ci_high=a_high,
            verdict=shape.verdict,
            note=f"threshold {threshold:g}",
        ),
        Quantity(name="value weight W_V[d, d] (context, not decided)", measured=value_weight),
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
    """(c) Eq. (4) with Lemma B.5: the top-left block ``M`` of the trained ``W_K^T W_Q`` is ``w* I`` (``w*`` exact).

    ``equivalence``: the ``level`` interval of ``mean tr(M)/d - w*`` within ``+-margin w*``
    (:func:`lipschitz_icl.estimators.trained_scale.scale_equivalence`), and ``one-sided``: the mean anisotropy of
    ``M`` at or
    below ``threshold`` (:func:`structure_decision`).  ``decide(change, law)``: the target ``(1 + change) w*``, or
    the leading-order window law ``C_d rho^alpha`` (:func:`lipschitz_icl.derivations.window_law.window_law`).
    """
    trained, problem, setting = _layers(
        task=task, d=d, n=n, L=L, sigma=sigma, seed=seed, runs=runs, protocol=protocol, init_scale=init_scale
    )
    exact = wstar(problem, "exact")
    w0 = exact.w_star.value
    alpha, C = wlaw.window_law(task, d)
    targets = {"derived": w0, "leading-order": C * (n * L**2 / sigma**2) ** alpha}
    aniso = trained.anisotropy
    w_runs = trained.scales
    shape = structure_decision(aniso, threshold, level)

    def decide(change: float = 0.0, law: str = "derived") -> decision.Decision:
        scale = scale_equivalence(w_runs, exact, targets[law] * (1 + change), margin * w0, level)
        return scale_and_shape(scale, shape)

    cell = {"task": task, "d": d, "n": n, "L": L, "sigma": sigma}
    return Outcome(
        decide=decide,
        quantities=_block_quantities(
            trained,
            exact=exact,
            leading=targets["leading-order"],
            shape=shape,
            level=level,
            margin=margin,
            threshold=threshold,
            setting=cell,
        ),
        margin=f"+-{margin:g} w* on tr(M)/d",
        rule=f"equivalence: {level:g} t-interval of mean tr(M)/d - w* within +-{margin:g} w*; one-sided: {level:g} "
        f"upper limit of the mean anisotropy of M <= {threshold:g}; {runs} independent runs ({setting}).",
        extra={"w_runs": w_runs, "anisotropy": aniso, "w_star": w0, "leading_order": targets["leading-order"]},
    )
