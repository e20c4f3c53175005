"""The paper's figures, computed by the project and decided as claims.  Registry: ``claims/figures.toml``
(statements, rules, every design number, resolutions, alternatives).

Each measure function computes the data of one figure from the project's own estimators and trainer and
returns an :class:`~lipschitz_icl.evidence.Outcome` whose ``decide`` is the claim the figure illustrates
(a rule of :mod:`lipschitz_icl.decision`), and whose ``figure`` is the figure's data: a JSON-serialisable
dict with ``name`` (the renderer's key in :data:`lipschitz_icl.report.figures.paper.RENDERERS`), ``title``,
``settings`` (every setting used, to print under the figure), the figure's series and ``verdict``.
Settings the paper does not state are chosen in the registry and recorded in ``settings``.  Every random
stream is spawned once from the case's ``SeedSequence``; Figure 1 is exact (no random stream enters its
decision).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from lipschitz_icl.derivations import linear_attention as lin

from .. import circle, decision, geometry
from ..attention import Attention
from ..circle import slice_task, weight_profiles
from ..estimate import mean_difference, mean_se
from ..evidence import Outcome, Quantity
from ..exact import exact_loss
from ..loss import general_terms, paired_ratio
from ..optimum import wstar, wstar_elasticities
from ..pretraining import independent_runs, mean_interval, mean_limits, pretraining_curve, scale_interval
from ..problem import make_problem

__all__ = ["figure1", "figure3", "figure5", "figure9", "eq4_heatmaps", "figure6"]


def _floats(values) -> list:
    return [float(v) for v in values]


# ----------------------------------------------------------------------------- Figure 1
def _error_curves(task: str, d: int, L_grid, n_grid, sigma: float):
    """ICL errors against ``n``: softmax at the exact ``w*`` (exact quadrature, with its stated error)
    and linear attention at ``m*`` (derived), one row per ``L``."""
    soft, soft_abs, linear = [], [], []
    for L in L_grid:
        losses = [
            exact_loss(p, wstar(p, "exact").w_star.value).loss
            for p in (make_problem(task, d, nn, L, sigma) for nn in n_grid)
        ]
        soft.append([e.value for e in losses])
        soft_abs.append([e.abs_error for e in losses])
        linear.append([lin.linear_optimum(task, d, nn, L, sigma)[1] for nn in n_grid])
    return soft, soft_abs, linear


def _weight_slice(task, L_grid, n, sigma, slice_seed, slice_points, ws, m_n) -> dict:
    """Figure 1's top rows: one task drawn at ``L = 1`` and scaled by ``L``, with the softmax (``w*``) and linear
    (``m*``) weight profiles over the query angle."""
    slice_data = slice_task(task, L_grid, n, sigma, np.random.default_rng(slice_seed), slice_points)
    soft_w, lin_w = weight_profiles(slice_data["angle"], ws, m_n)
    return {**slice_data, "softmax_weights": soft_w, "linear_weights": lin_w}


def _figure1_quantities(L_grid, ws, w_n, steps, last, n_last) -> tuple:
    """Figure 1's quantities: the window ``1/sqrt(w*)`` per ``L``, its ``L``-elasticities, and ``E_lin - E_soft``."""
    quantities = [
        Quantity(
            name=f"window 1/sqrt(w*) at L={L:g}",
            measured=1 / math.sqrt(w),
            ci_low=r.ci_high**-0.5,
            ci_high=r.ci_low**-0.5,
            note=f"w* = {w:.5g} (exact)",
        )
        for L, w, r in zip(L_grid, ws, w_n)
    ]
    quantities += [
        Quantity(
            name=f"d log width / d log L, L {La:g} -> {Lb:g}",
            measured=mid,
            ci_low=lo,
            ci_high=hi,
            verdict=decision.sign(lo, hi, -1).verdict,
            note="must be < 0",
        )
        for (La, Lb), (lo, mid, hi) in zip(itertools.pairwise(L_grid), steps)
    ]
    quantities += [
        Quantity(
            name=f"ICL error at n={n_last}, L={L:g}: linear (m*) - softmax (w*)",
            measured=e_lin - e_soft,
            ci_low=e_lin - e_soft - err,
            ci_high=e_lin - e_soft + err,
            note="must be > 0",
        )
        for L, (e_lin, e_soft, err) in zip(L_grid, last)
    ]
    return tuple(quantities)


def _figure1_settings(task, d, n, sigma, L_grid, n_grid) -> dict:
    """Figure 1's settings panel."""
    return {
        "task": task,
        "d": d,
        "n (top and middle rows)": n,
        "sigma": sigma,
        "L": list(L_grid),
        "n grid (bottom row)": list(n_grid),
        "softmax": "M = w* I, w* exact (quadrature)",
        "linear": "M = m* I, m* derived (lipschitz_icl.derivations.linear_attention)",
        "softmax error": "exact quadrature",
        "linear error": "derived E_lin(n)",
        "window shaded": "query angle +- 1/sqrt(w*)",
        "context draw": "one task at L = 1 scaled by L",
    }


def figure1(
    *, task: str, L_grid: list, n: int, sigma: float, n_grid: list, slice_points: int, slice_seed: int
) -> Outcome:
    """Figure 1 on the circle (``d = 2``).  Claim (rule ``sign``): (i) the optimal softmax window
    ``1/sqrt(w*)`` shrinks as ``L`` grows (each elasticity ``d log(1/sqrt(w*)) / d log L`` between
    consecutive ``L`` below zero, intervals from the exact ``w*``'s stated accuracy); (ii) at the
    largest ``n`` softmax attention at ``w*`` has a smaller ICL error than the optimal linear attention,
    for every ``L`` (``E_lin - E_soft > 0``; ``E_soft`` from the exact quadrature with its stated error,
    ``E_lin`` derived).  ``decide(shift, gap_factor, window_sign, gap_sign)``: every elasticity beyond
    ``shift`` on the side ``window_sign`` (``+1``: the window does not shrink), and ``E_lin - (1 +
    gap_factor) E_soft`` on the side ``gap_sign``.  The task drawn in the top row (``slice_seed``) is an
    illustration only and does not enter the decision.
    """
    d = 2  # the circle
    w_n = [wstar(make_problem(task, d, n, L, sigma), "exact") for L in L_grid]
    ws = [w.w_star.value for w in w_n]
    m_n = [lin.linear_optimum(task, d, n, L, sigma)[0] for L in L_grid]
    slice_data = _weight_slice(task, L_grid, n, sigma, slice_seed, slice_points, ws, m_n)
    soft_err, soft_abs, lin_err = _error_curves(task, d, L_grid, n_grid, sigma)
    steps = [(-0.5 * hi, -0.5 * mid, -0.5 * lo) for lo, mid, hi in wstar_elasticities(L_grid, w_n)]  # of the width
    last = [(lin[-1], soft[-1], e[-1]) for lin, soft, e in zip(lin_err, soft_err, soft_abs)]  # at the largest n

    def decide(shift: float = 0.0, gap_factor: float = 0.0, window_sign: int = -1, gap_sign: int = +1):
        window = [decision.sign(lo - window_sign * shift, hi - window_sign * shift, window_sign) for lo, _, hi in steps]
        gaps = [(e_lin - (1 + gap_factor) * e_soft, (1 + gap_factor) * err) for e_lin, e_soft, err in last]
        return decision.combined("sign", window + decision.signs(gaps, gap_sign))

    return Outcome(
        decide=decide,
        quantities=_figure1_quantities(L_grid, ws, w_n, steps, last, n_grid[-1]),
        margin="0 (every interval on its predicted side)",
        rule="sign rule on each window-width elasticity in L (intervals from the exact w*'s stated accuracy) and on "
        f"E_lin - E_soft at n = {n_grid[-1]} for every L (interval from the quadrature's stated error).",
        figure={
            "name": "fig1",
            "title": "Figure 1: softmax attention adapts its window to L",
            "settings": _figure1_settings(task, d, n, sigma, L_grid, n_grid),
            "L": list(L_grid),
            "w_star": ws,
            "m_star": m_n,
            "window": [1 / math.sqrt(w) for w in ws],
            **slice_data,
            "n_grid": _floats(n_grid),
            "softmax_error": soft_err,
            "linear_error": lin_err,
            "verdict": decide().verdict,
        },
    )


# ----------------------------------------------------------------------------- Figure 3
def _trained_norms(task, d, points, seed, runs, protocol) -> tuple[dict, dict]:
    """At each ``(n, sigma, L)``: ``||M||_2`` of ``runs`` independently trained ``M``, and the exact ``w*``."""
    norms, w_stars = {}, {}
    for (n, s, L), stream in zip(points, seed.spawn(len(points))):
        problem = make_problem(task, d, n, L, s)
        trained = independent_runs(problem, stream, runs, **protocol)
        norms[(n, s, L)] = [float(np.linalg.norm(r.M, 2)) for _, r in trained]
        w_stars[(n, s, L)] = wstar(problem, "exact")
    return norms, w_stars


def _figure3_quantities(points, norms, w_stars) -> tuple:
    """Figure 3's quantities: the mean ``||M||_2`` at each point against the exact ``w*``."""
    return tuple(
        Quantity(
            name=f"||M||_2 at n={n}, sigma={s:g}, L={L:g}",
            theory=w_stars[(n, s, L)].w_star.value,
            measured=float(np.mean(norms[(n, s, L)])),
            note="theory: exact w*; runs " + ", ".join(f"{v:.4f}" for v in norms[(n, s, L)]),
        )
        for n, s, L in points
    )


def _figure3_record(task, d, L_grid, settings, runs, protocol, norms, w_stars, verdict) -> dict:
    """Figure 3's figure record: per ``(n, sigma)`` the mean and per-run ``||M||_2`` and ``w*`` against ``L``."""
    series = [
        {
            "label": f"n={n}, sigma={s:g}",
            "L": list(L_grid),
            "norm_mean": [float(np.mean(norms[(n, s, L)])) for L in L_grid],
            "norm_runs": [norms[(n, s, L)] for L in L_grid],
            "w_star": [w_stars[(n, s, L)].w_star.value for L in L_grid],
        }
        for n, s in settings
    ]
    fig_settings = {
        "task": task,
        "d": d,
        "L": list(L_grid),
        "(n, sigma)": [list(x) for x in settings],
        "runs per point": runs,
        "training": f"M-form softmax, {protocol}",
        "start": "i.i.d. N(0, 1/d) entries",
        "w*": "exact quadrature",
    }
    return {
        "name": "fig3",
        "title": "Figure 3: the trained window follows w* as L grows",
        "settings": fig_settings,
        "series": series,
        "verdict": verdict,
    }


def figure3(
    *,
    task: str,
    d: int,
    L_grid: list,
    settings: list,
    runs: int,
    protocol: dict,
    level: float,
    margin: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 3.  Claim: the spectral norm of the trained ``M`` (the inverse squared window; ``runs``
    independent runs of ``protocol`` per point, :func:`lipschitz_icl.pretraining.independent_runs`)
    increases with ``L`` (``sign`` on each consecutive difference of mean norms, ``level`` t-interval)
    and agrees with the exact ``w*`` (``equivalence``: ``level`` interval of ``mean ||M||_2 / w* - 1``
    within ``+-margin``), at every ``(n, sigma)`` of ``settings``.  ``decide(change, target)``: the norm
    claimed to be ``(1 + change) w*``; ``target = "fixed"``: the ``w*`` at the largest ``L`` for every ``L``
    (the window does not adapt)."""
    points = [(n, s, L) for n, s in settings for L in L_grid]
    norms, w_stars = _trained_norms(task, d, points, seed, runs, protocol)
    rising = [
        mean_difference(norms[(n, s, La)], norms[(n, s, Lb)], level)
        for n, s in settings
        for La, Lb in itertools.pairwise(L_grid)
    ]

    def decide(change: float = 0.0, target: str = "exact") -> decision.Decision:
        agree = []
        for n, s, L in points:
            ref = w_stars[(n, s, L_grid[-1] if target == "fixed" else L)]
            w0 = ref.w_star.value
            low, high = scale_interval(norms[(n, s, L)], ref, target=w0 * (1 + change), level=level)
            agree.append(decision.equivalence(low / w0, high / w0, margin))
        return decision.combined("equivalence", agree + decision.signs(rising, +1))

    return Outcome(
        decide=decide,
        quantities=_figure3_quantities(points, norms, w_stars),
        margin=f"+-{margin:g} on ||M||_2 / w* - 1; sign 0 on the increase",
        rule=f"sign on consecutive differences of the mean ||M||_2 over {runs} runs ({level:g} t-intervals); "
        f"equivalence of mean ||M||_2 / w* - 1 with 0 within +-{margin:g} ({level:g} Welch intervals).",
        figure=_figure3_record(task, d, L_grid, settings, runs, protocol, norms, w_stars, decide().verdict),
    )


# ----------------------------------------------------------------------------- Figure 5
def _class_curves(classes, d, n, L, sigma, streams, z, protocol, init_scale, segments, segment_steps, test_contexts):
    """Per class: the test-error curve during pretraining, the final ``M``, ``(end - start, z (se_end + se_start))``."""
    curves, finals, drops = {}, {}, []
    for task, stream in zip(classes, streams):
        steps, errors, ses, Ms, _ = pretraining_curve(
            make_problem(task, d, n, L, sigma),
            stream,
            kind="softmax",
            protocol=protocol,
            init_scale=init_scale,
            segments=segments,
            segment_steps=segment_steps,
            test_contexts=test_contexts,
        )
        curves[task], finals[task] = {"steps": steps, "error": errors, "se": ses}, Ms[-1]
        drops.append((errors[-1] - errors[0], z * (ses[-1] + ses[0])))  # paired: se of the difference <= sum
    return curves, finals, drops


def _cosine_ratios(classes, finals, d, n, L, sigma, cross_contexts, stream) -> tuple:
    """``(order, E, E_class / E_cosine, se)`` on common cosine-task contexts of the layers pretrained on each class."""
    order = [c for c in classes if c != "cosine"] + ["cosine"]
    cross_err, ratios, ratio_se = paired_ratio(
        make_problem("cosine", d, n, L, sigma), [Attention(finals[c]) for c in order], cross_contexts, stream
    )
    return order, cross_err, ratios, ratio_se


def _figure5_record(settings, curves, cross, verdict) -> dict:
    """Figure 5's figure record: settings panel, pretraining curves per class, cross-class errors on cosine tasks."""
    order, cross_err, ratios, ratio_se = cross
    return {
        "name": "fig5",
        "title": "Figure 5: pretraining on three classes, tested on cosine tasks",
        "settings": settings,
        "curves": curves,
        "cross": {"pretrained_on": order, "error": cross_err, "ratio": ratios, "ratio_se": ratio_se},
        "verdict": verdict,
    }


def _figure5_quantities(classes, order, curves, drops, cross_err, ratios, ratio_se, z) -> tuple:
    """Figure 5's quantities: each class's end-of-pretraining test error, and each class's cosine-task error ratio."""
    quantities = [
        Quantity(
            name=f"test error of {c}: start -> end",
            measured=curves[c]["error"][-1],
            verdict=dec.verdict,
            note=f"start {curves[c]['error'][0]:.4g}",
        )
        for c, dec in zip(classes, decision.signs(drops, -1))
    ]
    quantities += [
        Quantity(
            name=f"error on cosine tasks, pretrained on {c}, / pretrained on cosine",
            theory=1.0,
            measured=r,
            ci_low=r - z * s,
            ci_high=r + z * s,
            note=f"error {e:.4g}",
        )
        for c, e, r, s in zip(order[:-1], cross_err, ratios, ratio_se)
    ]
    return tuple(quantities)


def _figure5_settings(
    classes, d, n, L, sigma, protocol, init_scale, segments, segment_steps, test_contexts, cross_contexts
) -> dict:
    """Figure 5's settings panel."""
    return {
        "d": d,
        "n": n,
        "L": L,
        "sigma": sigma,
        "classes": list(classes),
        "training": f"M-form softmax from N(0, {init_scale:g}^2/d) starts, {segments} segments of "
        f"{segment_steps} steps, {protocol}",
        "test error": f"task-averaged estimator, {test_contexts} common contexts per checkpoint",
        "cross-class error": f"{cross_contexts} common cosine-task contexts",
        "cosine frequency": 1.0,
    }


def figure5(
    *,
    classes: list,
    d: int,
    n: int,
    L: float,
    sigma: float,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    cross_contexts: int,
    protocol: dict,
    init_scale: float,
    margin: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 5.  Left: held-out test error during pretraining of softmax attention on each class (same class at
    test, :func:`~lipschitz_icl.pretraining.pretraining_curve`).  Right: the error on cosine tasks of the three
    pretrained layers.  Claim: (i) the test error at the end of pretraining is below that at the start, for each
    class (``sign`` on the paired difference, common test contexts, interval ``+- z (se_end + se_start)``); (ii) the
    layers pretrained on the other classes generalise to cosine tasks: ``E_class / E_cosine - 1`` lies within
    ``+-margin`` (``equivalence``, paired delta-method intervals, :func:`~lipschitz_icl.loss.paired_ratio`); ``z``
    Bonferroni over all intervals at ``family_level``. ``decide(change, only, drop_sign)``: the ratio of ``only``
    (default every class) claimed to be ``1 + change``; the end-minus-start error on the side ``drop_sign``."""
    streams = seed.spawn(len(classes) + 1)
    z = decision.bonferroni_z(2 * len(classes), family_level)
    curves, finals, drops = _class_curves(
        classes, d, n, L, sigma, streams, z, protocol, init_scale, segments, segment_steps, test_contexts
    )
    order, cross_err, ratios, ratio_se = _cosine_ratios(classes, finals, d, n, L, sigma, cross_contexts, streams[-1])

    def decide(change: float = 0.0, only: str = "", drop_sign: int = -1) -> decision.Decision:
        moved = [r - 1 - (change if only in ("", c) else 0.0) for c, r in zip(order, ratios[:-1])]
        cross = [decision.equivalence(x - z * s, x + z * s, margin) for x, s in zip(moved, ratio_se)]
        return decision.combined("equivalence", cross + decision.signs(drops, drop_sign))

    settings = _figure5_settings(
        classes, d, n, L, sigma, protocol, init_scale, segments, segment_steps, test_contexts, cross_contexts
    )
    return Outcome(
        decide=decide,
        quantities=_figure5_quantities(classes, order, curves, drops, cross_err, ratios, ratio_se, z),
        margin=f"+-{margin:g} on E_class / E_cosine - 1",
        rule=f"sign on the end-minus-start test error per class; equivalence of E_class/E_cosine - 1 on cosine tasks "
        f"with 0 within +-{margin:g} (paired delta-method intervals, z = {z:.2f}).",
        figure=_figure5_record(settings, curves, (order, cross_err, ratios, ratio_se), decide().verdict),
    )


# ----------------------------------------------------------------------------- Figure 9
def _link_runs(problem, stream, *, kind: str, runs: int, **curve) -> dict:
    """``runs`` pretraining curves of ``kind`` on ``problem`` (run ``k`` from child ``k`` of ``stream``):
    ``{steps, rho, error, se}``, ``rho(M, B)`` of the effective ``M`` at each checkpoint."""
    out: dict[str, Any] = {"rho": [], "error": [], "se": []}
    for run in stream.spawn(runs):
        steps, errors, se, Ms, _ = pretraining_curve(problem, run, kind=kind, **curve)
        out["rho"].append([geometry.rho(M, problem.task_class.B) for M in Ms])
        out["error"].append(errors)
        out["se"].append(se)
    return {"steps": steps, **out}


def _figure9_rows(links, series, changes, gaps, runs: int) -> tuple:
    """The reported rows of :func:`figure9`: per link the mean change of softmax's rho (``changes``, ``(mean,
    half-width)``) and each run's final error gap linear - softmax (``gaps``)."""
    quantities = []
    for i, link in enumerate(links):
        s, (m, h) = series[link], changes[i]
        quantities.append(
            Quantity(
                name=f"{link}: softmax rho end - start (mean over runs)",
                measured=m,
                ci_low=m - h,
                ci_high=m + h,
                verdict=decision.sign(m - h, m + h, -1).verdict,
                note="must be < 0; final rho: "
                + "; ".join(f"{kind} " + ", ".join(f"{r[-1]:.4f}" for r in s[kind]["rho"]) for kind in s),
            )
        )
        quantities += [
            Quantity(
                name=f"{link}, run {k}: final error linear - softmax",
                measured=g,
                ci_low=g - hw,
                ci_high=g + hw,
                verdict=decision.sign(g - hw, g + hw, +1).verdict,
            )
            for k, (g, hw) in enumerate(gaps[i * runs : (i + 1) * runs])
        ]
    return tuple(quantities)


def _link_pretraining(
    problems, seed, z, level, protocol, linear_protocol, runs, init_scale, segments, segment_steps, test_contexts
) -> tuple[dict, dict, list]:
    """Per link (``problems``): softmax and linear pretraining runs, each kind's mean end-minus-start ``rho``
    change (``level`` t-interval), and every run's final error gap linear - softmax ``+- z (se_lin + se_soft)``."""
    series, gaps = {}, []
    changes: dict[str, list] = {"softmax": [], "linear": []}
    curve: dict[str, Any] = {
        "runs": runs,
        "init_scale": init_scale,
        "segments": segments,
        "segment_steps": segment_steps,
        "test_contexts": test_contexts,
    }
    for (link, problem), ls in zip(problems.items(), seed.spawn(len(problems))):
        out = {
            kind: _link_runs(problem, ks, kind=kind, protocol=proto, **curve)
            for kind, proto, ks in zip(("softmax", "linear"), (protocol, linear_protocol), ls.spawn(2))
        }
        series[link] = out
        for kind in changes:
            changes[kind].append(mean_interval([r[-1] - r[0] for r in out[kind]["rho"]], 0.5 + level / 2))
        gaps += [
            (lin_e[-1] - soft_e[-1], z * (lin_s[-1] + soft_s[-1]))
            for lin_e, soft_e, lin_s, soft_s in zip(
                out["linear"]["error"], out["softmax"]["error"], out["linear"]["se"], out["softmax"]["se"]
            )
        ]
    return series, changes, gaps


def _figure9_settings(
    d, rank, n, L, sigma, links, runs, segments, segment_steps, protocol, linear_protocol, test_contexts
) -> dict:
    """Figure 9's settings panel."""
    return {
        "d": d,
        "rank": rank,
        "B": "first rank coordinate axes",
        "n": n,
        "L": L,
        "sigma": sigma,
        "links": list(links),
        "runs": runs,
        "softmax training": f"{segments} x {segment_steps} steps, {protocol}",
        "linear training": f"{segments} x {segment_steps} steps, {linear_protocol} (Adam restarted at "
        "each segment), value weight v",
        "test error": f"task-averaged estimator on {test_contexts} common contexts per run",
        "cosine frequency": 1.0,
        "rho of linear attention": "rho(v M, B)",
    }


def _figure9_record(settings, series, verdict) -> dict:
    """Figure 9's figure record: the settings panel and each link's softmax and linear pretraining runs."""
    return {
        "name": "fig9",
        "title": "Figure 9: softmax learns the low-rank subspace, linear does not",
        "settings": settings,
        "series": series,
        "verdict": verdict,
    }


def figure9(
    *,
    links: list,
    d: int,
    rank: int,
    n: int,
    L: float,
    sigma: float,
    runs: int,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    protocol: dict,
    linear_protocol: dict,
    init_scale: float,
    level: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 9.  ``rho(M, B)`` and the held-out test error during pretraining, softmax (``protocol``)
    against linear attention (``linear_protocol``; ``rho(v M, B)``), on low-rank tasks (``d``, ``rank``)
    with each link.  Claim (rule ``sign``), for every link: (i) softmax's ``rho(M, B)`` falls during
    pretraining (``level`` t-interval over ``runs`` runs of the mean end-minus-start change) and (ii) in
    every run softmax attention's test error at the end is below linear attention's (interval: the
    difference +- z times the sum of the two standard errors, valid whatever their correlation;
    Bonferroni over runs and links at ``family_level``).  ``decide(shift, kind, gap_sign)``: the rho
    of ``kind`` falls by more than ``shift``; the gap linear - softmax on the side ``gap_sign``."""
    z = decision.bonferroni_z(len(links) * runs, family_level)
    problems = {link: make_problem(f"lowrank-{link}", d, n, L, sigma, rank=rank) for link in links}
    series, changes, gaps = _link_pretraining(
        problems, seed, z, level, protocol, linear_protocol, runs, init_scale, segments, segment_steps, test_contexts
    )

    def decide(shift: float = 0.0, kind: str = "softmax", gap_sign: int = +1) -> decision.Decision:
        return decision.combined("sign", decision.signs(changes[kind], -1, shift) + decision.signs(gaps, gap_sign))

    settings = _figure9_settings(
        d, rank, n, L, sigma, links, runs, segments, segment_steps, protocol, linear_protocol, test_contexts
    )
    return Outcome(
        decide=decide,
        quantities=_figure9_rows(links, series, changes["softmax"], gaps, runs),
        margin="0 (every interval on its predicted side)",
        rule=f"sign on the mean end-minus-start change of softmax's rho ({level:g} t-interval over runs) and on each "
        f"run's final error gap linear - softmax (+- z (se_lin + se_soft), z = {z:.2f}), {runs} runs per link and "
        "kind.",
        figure=_figure9_record(settings, series, decide().verdict),
    )


# ----------------------------------------------------------------------------- rebuttal: Eq. (4) heat maps
def eq4_heatmaps(
    *,
    task: str,
    d_grid: list,
    n_per_d: int,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    init_scale: float,
    level: float,
    threshold: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """The rebuttal's figure: the trained ``W_K^T W_Q`` of full layers (:func:`independent_runs`,
    ``protocol``, start scale ``init_scale``, ``n = n_per_d d``) on ``task`` tasks for each ``d`` of
    ``d_grid``, and its distance to the Eq. (4) form (:func:`lipschitz_icl.geometry.block_distance`).  Claim
    (``one-sided``): for every ``d`` the ``level`` upper limit of the mean distance over ``runs`` runs is
    at most ``threshold`` (interval ``[min over runs, upper limit]``).  ``decide(floor)``: the statement
    "the layers carry a distance of at least ``floor``" at the ``d`` with the largest upper limit, by the
    same rule."""
    mats, dists = [], []
    for d, stream in zip(d_grid, seed.spawn(len(d_grid))):
        layers = independent_runs(
            make_problem(task, d, n_per_d * d, L, sigma), stream, runs, init_scale=init_scale, **protocol
        )
        As = [geometry.kq_matrix(r.params) for _, r in layers]
        mats.append(As[0].tolist())
        dists.append([geometry.block_distance(A) for A in As])
    means, _, highs = zip(*(mean_limits(v, level) for v in dists))
    bounds = [(min(*v, hi), hi) for v, hi in zip(dists, highs)]

    def decide(floor: float | None = None) -> decision.Decision:
        if floor is None:
            return decision.combined("one-sided", [decision.one_sided(lo, hi, threshold, "<=") for lo, hi in bounds])
        return decision.one_sided(*max(bounds, key=lambda b: b[1]), floor, ">=")

    quantities = tuple(
        Quantity(
            name=f"distance to the Eq. (4) form, d={d} ({level:g} upper limit)",
            theory=0.0,
            measured=mean,
            ci_low=lo,
            ci_high=hi,
            verdict=decision.one_sided(lo, hi, threshold, "<=").verdict,
            note=f"threshold {threshold}; runs " + ", ".join(f"{x:.4f}" for x in v),
        )
        for d, v, mean, (lo, hi) in zip(d_grid, dists, means, bounds)
    )
    settings = {
        "task": task,
        "d": list(d_grid),
        "n": [n_per_d * d for d in d_grid],
        "L": L,
        "sigma": sigma,
        "runs per d": runs,
        "shown": "W_K^T W_Q of the first run (rows and columns: x_1..x_d, label)",
        "training": f"{protocol}, start scale {init_scale}",
    }
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin=f"<= {threshold} on the mean distance ({level:g} upper limit)",
        rule=f"one-sided: {level:g} upper limit of the mean distance to the Eq. (4) form over {runs} runs <= "
        f"{threshold}, for each d.",
        figure={
            "name": "eq4",
            "title": "Trained W_K^T W_Q on ReLU tasks: the Eq. (4) block form",
            "settings": settings,
            "d": list(d_grid),
            "matrices": mats,
            "distance": dists,
            "verdict": decide().verdict,
        },
    )


# ----------------------------------------------------------------------------- Figure 6 (Lemma B.5)
def _error_gap(problem, M, w: float, contexts: int, seed):
    """``(mean, se)`` of the paired per-context ICL error of ``M`` minus that of ``w I`` on common random
    numbers, and the mean error of ``w I``."""
    terms = general_terms(
        problem, [Attention(M), Attention.isotropic(w, problem.d)], contexts, np.random.default_rng(seed)
    )
    return mean_se((terms[0][0] + terms[0][1]) - (terms[1][0] + terms[1][1])), float(np.mean(terms[1][0] + terms[1][1]))


def _profiles_shown(angle, profiles: dict, points: int) -> dict:
    """The weight profiles of Figure 6 at no more than about 720 of the ``points`` grid angles."""
    shown = slice(None, None, max(1, points // 720))
    return {
        "angle": _floats(angle[shown]),
        "weights_isotropic": _floats(profiles["iso"][shown]),
        "weights_general": _floats(profiles["gen"][shown]),
    }


def _figure6_quantities(centres, theory, step, centre_rule, gap, costlier) -> tuple:
    """Figure 6's quantities: the two attention centres against their predicted directions, and ``E(M) - E(w* I)``."""
    mean, se, z, e_iso = gap
    return (
        Quantity(
            name="centre of the attention of w* I (radians from the query)",
            theory=0.0,
            measured=centres["iso"],
            ci_low=centres["iso"] - step,
            ci_high=centres["iso"] + step,
            verdict=centre_rule("iso", 0.0).verdict,
        ),
        Quantity(
            name="centre of the attention of the general M (radians from the query)",
            theory=theory["gen"],
            measured=centres["gen"],
            ci_low=centres["gen"] - step,
            ci_high=centres["gen"] + step,
            verdict=centre_rule("gen", theory["gen"]).verdict,
            note="theory: the direction of M q",
        ),
        Quantity(
            name="ICL error of the general M minus that of w* I",
            measured=mean,
            ci_low=mean - z * se,
            ci_high=mean + z * se,
            verdict=costlier.verdict,
            note=f"must be > 0; E(w* I) = {e_iso:.4g}",
        ),
    )


def _figure6_record(angle, profiles, points, centres, theory, M, verdict, settings) -> dict:
    """Figure 6's figure record: the weight profiles on the circle and their centres."""
    return {
        "name": "fig6",
        **_profiles_shown(angle, profiles, points),
        "centre_isotropic": centres["iso"],
        "centre_general": centres["gen"],
        "centre_theory": theory["gen"],
        "M": M.tolist(),
        "verdict": verdict,
        "settings": settings,
    }


def _figure6_settings(task, d, n, L, sigma, w, rotation, anisotropy, points, contexts) -> dict:
    """Figure 6's settings panel."""
    return {
        "task": task,
        "d": d,
        "n": n,
        "L": L,
        "sigma": sigma,
        "w*": f"{w:.5g} (exact)",
        "general M": f"w* R({rotation:g}) diag({1 + anisotropy:g}, {1 - anisotropy:g})",
        "query": "q = (1, 0)",
        "centres": f"argmax over {points} grid points, +- one step",
        "ICL errors": f"task-averaged estimator, {contexts} common contexts",
    }


def figure6(
    *,
    task: str,
    d: int,
    n: int,
    L: float,
    sigma: float,
    rotation: float,
    anisotropy: float,
    points: int,
    contexts: int,
    margin: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 6 (Lemma B.5): the attention a general ``M = w* R(rotation) diag(1 + a, 1 - a)`` induces on
    the circle centres on the direction of ``M q``, not on the query, and costs ICL error, while that of
    ``w* I`` centres on the query.  A centre is the grid point of largest weight, its interval one grid step
    either side (``exp(|Mq| cos(t - t_Mq))`` is unimodal).  ``equivalence``: each centre within ``+-margin``
    rad of its predicted direction; ``sign``: the general centre away from the query, and ``E(M) - E(w* I)
    > 0`` on its paired interval (Bonferroni ``z`` at ``family_level``; common random numbers).
    ``decide(offset, centre)``: ``w* I``'s attention claimed ``offset`` rad from the query; ``centre =
    "query"`` claims the general ``M`` centres on the query too (the rival of an isotropic picture)."""
    problem = make_problem(task, d, n, L, sigma)
    w = wstar(problem, "exact").w_star.value
    M = circle.general_window(w, rotation, anisotropy)
    angle, step, profiles, centres = circle.centres(M, w, points)
    theory = {"iso": 0.0, "gen": math.atan2(float(M[1, 0]), float(M[0, 0]))}
    z = decision.bonferroni_z(1, family_level)
    (mean, se), e_iso = _error_gap(problem, M, w, contexts, seed)
    costlier = decision.sign(mean - z * se, mean + z * se, +1)

    def centre_rule(name: str, target: float) -> decision.Decision:
        return decision.equivalence(centres[name] - target - step, centres[name] - target + step, margin)

    def decide(offset: float = 0.0, centre: str = "Mq") -> decision.Decision:
        gen = centre_rule("gen", theory["gen"] if centre == "Mq" else 0.0)
        away = decision.sign(centres["gen"] - step, centres["gen"] + step, 1 if theory["gen"] > 0 else -1)
        parts = [centre_rule("iso", offset), gen] + ([away, costlier] if centre == "Mq" else [])
        return decision.combined("equivalence", parts)

    settings = _figure6_settings(task, d, n, L, sigma, w, rotation, anisotropy, points, contexts)
    return Outcome(
        decide=decide,
        margin=f"+-{margin:g} rad on each centre; E(M) - E(w* I) > 0",
        rule=f"equivalence of each centre with its predicted direction within +-{margin:g} rad (interval: one grid "
        f"step of {step:.2g}); sign of the general centre and of E(M) - E(w* I) (paired, z = {z:.2f}).",
        quantities=_figure6_quantities(centres, theory, step, centre_rule, (mean, se, z, e_iso), costlier),
        figure=_figure6_record(angle, profiles, points, centres, theory, M, decide().verdict, settings),
    )
