"""The paper's figures drawn from the data the ``figures`` gates attach to their evidence.

Each renderer takes the ``Evidence.figure`` dict of one claim of ``claims/figures.toml`` (computed by
:mod:`lipschitz_icl.claims.figures`; keys listed in each renderer's docstring) and returns a
:class:`matplotlib.figure.Figure` on the Agg canvas (never pyplot, so no display is touched), drawn in
the report's style (:mod:`lipschitz_icl.report.style`): the full text width, 8-9 pt text, no in-image
title (LaTeX numbers the figure), legends outside the axes, mathtext labels.  Data of the wrong shape
raise :class:`~lipschitz_icl.report.figures.data.FigureDataError` naming the field.  :func:`write` saves a
figure as vector PDF and as PNG; :func:`caption` turns the ``settings`` dict into the text to print
under a figure.  :data:`RENDERERS` maps the figure's ``name`` to its renderer.

Optional reference lines are drawn when the data carry them (older data do not): ``fig5``:
``curves[class]["optimal"]`` (the optimal error ``E(w* I)`` on that class) and ``cross["optimal"]`` (on
cosine tasks); ``fig9``: ``series[link]["optimal"]`` (the optimal softmax error) and
``series[link]["linear_optimum"]`` (the linear population optimum ``E_lin``).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from scipy import stats

from lipschitz_icl.report.figures.data import FigureDataError
from lipschitz_icl.report.mathtext import mpl_text, to_mathtext
from lipschitz_icl.report.style import FULL_WIDTH, LABEL_PT, new_figure, save_pdf, save_png, styled

__all__ = [
    "RENDERERS",
    "render",
    "write",
    "caption",
    "caption_note",
    "CAPTION_NOTES",
    "fig1",
    "fig3",
    "fig5",
    "fig6",
    "fig9",
    "eq4",
]

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


# ----------------------------------------------------------------------------- data checks
def _array(data: dict, key: str, length: int | None = None, ndim: int = 1) -> np.ndarray:
    """``data[key]`` as a float array of ``ndim`` dimensions (first axis of ``length`` if given)."""
    if key not in data:
        raise FigureDataError(f"figure field {key!r} is missing")
    try:
        arr = np.asarray(data[key], dtype=float)
    except (TypeError, ValueError):
        raise FigureDataError(f"figure field {key!r} must hold numbers of a regular shape") from None
    if arr.ndim != ndim:
        raise FigureDataError(f"figure field {key!r} must be {ndim}-dimensional (got {arr.ndim})")
    if length is not None and arr.shape[0] != length:
        raise FigureDataError(f"figure field {key!r} has {arr.shape[0]} entries, expected {length}")
    if arr.size == 0:
        raise FigureDataError(f"figure field {key!r} is empty")
    return arr


def _shape(arr: np.ndarray, key: str, shape: tuple) -> np.ndarray:
    if arr.shape != shape:
        raise FigureDataError(f"figure field {key!r} has shape {arr.shape}, expected {shape}")
    return arr


def _legend_right(ax) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


# ----------------------------------------------------------------------------- Figure 1
def fig1(data: dict) -> Figure:
    """Figure 1 (keys ``L, window, angle, context_angle, context_y, query_angle, query_f, curves,
    softmax_weights, linear_weights, n_grid, softmax_error, linear_error``): top, the targets on the circle
    with the context points, the query and the shaded window ``+-1/sqrt(w*)``; middle, ``n`` x attention
    weight against the angle to the query, softmax (``w*``) and linear (``m*``); bottom, ICL error against
    ``n``."""
    L = _array(data, "L")
    k = len(L)
    angle = _array(data, "angle")
    ctx = _array(data, "context_angle")
    n_grid = _array(data, "n_grid")
    window = _array(data, "window", k)
    query_f = _array(data, "query_f", k)
    curves = _shape(_array(data, "curves", k, 2), "curves", (k, len(angle)))
    ctx_y = _shape(_array(data, "context_y", k, 2), "context_y", (k, len(ctx)))
    soft_w = _shape(_array(data, "softmax_weights", k, 2), "softmax_weights", (k, len(angle)))
    lin_w = _shape(_array(data, "linear_weights", k, 2), "linear_weights", (k, len(angle)))
    soft_e = _shape(_array(data, "softmax_error", k, 2), "softmax_error", (k, len(n_grid)))
    lin_e = _shape(_array(data, "linear_error", k, 2), "linear_error", (k, len(n_grid)))
    query = float(data.get("query_angle", 0.0))
    fig, ax = new_figure(FULL_WIDTH, 3.4, 3, k, sharex="row")
    for j, Lj in enumerate(L):
        top, mid, bottom = ax[0, j], ax[1, j], ax[2, j]
        top.axvspan(
            query - window[j],
            query + window[j],
            color="tab:blue",
            alpha=0.15,
            label=r"softmax window $\pm 1/\sqrt{w^*}$",
        )
        top.plot(angle, curves[j], color="black", lw=1.0, label="target $f$")
        top.scatter(ctx, ctx_y[j], s=7, color="tab:gray", label="context $(x_i, y_i)$")
        top.scatter([query], [query_f[j]], marker="*", s=60, color="tab:red", zorder=3, label="query")
        top.set_title(f"$L = {Lj:g}$", loc="left")
        mid.plot(angle, soft_w[j], color="tab:blue", label=r"softmax, $w^* I$")
        mid.plot(angle, lin_w[j], color="tab:orange", label=r"linear, $m^* I$")
        mid.axhline(0.0, color="black", lw=0.5)
        bottom.loglog(n_grid, soft_e[j], "o-", color="tab:blue", label=r"softmax, $w^* I$")
        bottom.loglog(n_grid, lin_e[j], "s-", color="tab:orange", label=r"linear, $m^* I$")
        top.set_xlabel("angle (rad)")
        mid.set_xlabel("angle to the query (rad)")
        bottom.set_xlabel("context size $n$")
    ax[0, 0].set_ylabel("$f(x)$, $y$")
    ax[1, 0].set_ylabel(r"$n\,\times$ weight")
    ax[2, 0].set_ylabel("ICL error")
    for row in range(3):
        _legend_right(ax[row, -1])
    return fig


# ----------------------------------------------------------------------------- Figure 3
def _t_interval(runs, level: float = 0.99) -> tuple[float, float]:
    """Mean and half-width of the ``level`` t-interval of ``runs`` (half-width 0 for one run)."""
    runs = np.asarray(runs, dtype=float)
    if runs.size < 2:
        return float(runs.mean()), 0.0
    half = stats.t.ppf(0.5 + level / 2, runs.size - 1) * runs.std(ddof=1) / math.sqrt(runs.size)
    return float(runs.mean()), float(half)


def fig3(data: dict) -> Figure:
    """Figure 3 (keys ``series``: each ``{label, L, norm_mean, norm_runs, w_star}``; optional ``margin``):
    left, the spectral norm of the trained ``M`` against ``L`` (mean over runs with its 99% t-interval,
    the runs as dots) and the exact ``w*`` dashed, log-log; right, ``||M||_2 / w* - 1`` with its interval
    and the claim's margin shaded, which shows the small bias the left panel hides."""
    series = data.get("series")
    if not isinstance(series, list) or not series:
        raise FigureDataError("figure field 'series' must be a non-empty list")
    margin = float(data.get("margin", 0.05))
    fig, ax = new_figure(FULL_WIDTH, 1.8, 1, 2)
    left, right = ax[0]
    right.axhspan(-margin, margin, color="0.9", label=f"margin $\\pm{margin:g}$")
    right.axhline(0.0, color="black", lw=0.5)
    for i, s in enumerate(series):
        if not isinstance(s, dict):
            raise FigureDataError("figure field 'series' must hold objects")
        colour = _COLOURS[i % len(_COLOURS)]
        Ls = _array(s, "L")
        w = _array(s, "w_star", len(Ls))
        runs = s.get("norm_runs")
        if not isinstance(runs, list) or len(runs) != len(Ls):
            raise FigureDataError(f"figure field 'norm_runs' must hold one list of runs per L ({len(Ls)})")
        means, halves = zip(*(_t_interval(r) for r in runs))
        label = to_mathtext(str(s.get("label", f"series {i + 1}")))
        for L, r in zip(Ls, runs):
            left.scatter([L] * len(r), r, s=5, color=colour, alpha=0.45, lw=0)
        left.errorbar(Ls, means, yerr=halves, fmt="o-", color=colour, ms=3, label=f"trained, {label}")
        left.plot(Ls, w, "--", color=colour, lw=1.0, label=f"$w^*$ exact, {label}")
        shift = (i - (len(series) - 1) / 2) * 0.03  # small horizontal offsets so the intervals do not overlap
        right.errorbar(
            Ls * math.exp(shift),
            np.asarray(means) / w - 1,
            yerr=np.asarray(halves) / w,
            fmt="o",
            color=colour,
            ms=3,
            label=f"trained, {label}",
        )
    ticks = sorted({float(L) for s in series for L in s.get("L", [])})
    for a in (left, right):
        a.set_xscale("log")
        a.set_xticks(ticks, [f"{t:g}" for t in ticks])
        a.minorticks_off()
        a.set_xlabel("Lipschitz constant $L$")
    left.set_yscale("log")
    left.set_ylabel(r"spectral norm $\Vert M\Vert_2$")
    right.set_ylabel(r"$\Vert M\Vert_2 / w^* - 1$")
    _legend_right(right)
    handles, labels = left.get_legend_handles_labels()
    right.legend(
        [h for h, lab in zip(handles, labels) if lab.startswith("$w")] + right.get_legend_handles_labels()[0],
        [lab for lab in labels if lab.startswith("$w")] + right.get_legend_handles_labels()[1],
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
    )
    return fig


# ----------------------------------------------------------------------------- Figure 5
def fig5(data: dict) -> Figure:
    """Figure 5 (keys ``curves``: class -> ``{steps, error, se}`` and optionally ``optimal``; ``cross``:
    ``{pretrained_on, error}`` and optionally ``ratio``, ``ratio_se``, ``optimal``; optional ``margin``;
    optional ``mismatch``: ``{case, probes: probe -> {smaller, larger: [ratio, low, high], decided}}``):
    left, the test error during pretraining of the layer pretrained on each class, tested on that same
    class (bands: +-2 standard errors); middle, the error on cosine tasks of the layers pretrained on each
    class over that of the cosine-pretrained layer (+-2 standard errors, paired, drawn with caps), with the
    claim's margin shaded; right (when ``mismatch`` is given, the rebuttal's mismatched-``L`` panel), the
    error of attention pretrained at ``L' = L/10`` and ``L' = 10 L`` over the matched one, per probe task
    (filled: a class the claim decides on; open: reported only)."""
    curves = data.get("curves")
    cross = data.get("cross")
    if not isinstance(curves, dict) or not curves or not isinstance(cross, dict):
        raise FigureDataError("figure fields 'curves' (an object by class) and 'cross' are required")
    mismatch = data.get("mismatch") if isinstance(data.get("mismatch"), dict) else None
    classes = list(curves)
    ratios_width = (1.5, 0.9, 1.3) if mismatch else (1.6, 1.0)
    fig, ax = new_figure(FULL_WIDTH, 2.1, 1, len(ratios_width), width_ratios=ratios_width)
    left, right = ax[0][0], ax[0][1]
    for i, c in enumerate(classes):
        colour = _COLOURS[i % len(_COLOURS)]
        cur = curves[c]
        steps = _array(cur, "steps")
        err = _array(cur, "error", len(steps))
        se = _array(cur, "se", len(steps))
        name = mpl_text(c)
        left.plot(steps, err, "o-", color=colour, ms=3, label=f"{name}")
        left.fill_between(steps, np.maximum(err - 2 * se, err * 1e-3), err + 2 * se, color=colour, alpha=0.2, lw=0)
        if "optimal" in cur:
            left.axhline(float(cur["optimal"]), color=colour, ls=":", lw=1.0, label=f"optimal $E(w^*I)$, {name}")
    left.set_yscale("log")
    left.set_xlabel("pretraining step")
    left.set_ylabel("test ICL error, own class")
    names = [str(x) for x in cross.get("pretrained_on", [])]
    errors = _array(cross, "error", len(names))
    ratios = _array(cross, "ratio", len(names)) if "ratio" in cross else errors / errors[-1]
    ratio_se = _array(cross, "ratio_se", len(names)) if "ratio_se" in cross else np.zeros(len(names))
    margin = float(data.get("margin", 0.10))
    right.axhspan(1 - margin, 1 + margin, color="0.9", label=f"margin $\\pm{margin:g}$")
    right.axhline(1.0, color="black", lw=0.5)
    for i, (c, r, se) in enumerate(zip(names, ratios, ratio_se)):
        colour = _COLOURS[classes.index(c) % len(_COLOURS)] if c in classes else "0.5"
        right.errorbar([i], [r], yerr=[2 * se], fmt="o", color=colour, ms=3, capsize=4, elinewidth=1.2)
    if "optimal" in cross:
        right.axhline(
            float(cross["optimal"]) / float(errors[-1]), color="black", ls=":", lw=1.0, label="optimal $E(w^*I)$"
        )
    right.set_xticks(range(len(names)), [mpl_text(n) for n in names])
    right.set_xlim(-0.5, len(names) - 0.5)
    right.set_xlabel("pretrained on")
    right.set_ylabel("cosine-task error\n(relative)")
    if mismatch:
        _mismatch_panel(ax[0][2], mismatch)
    handles, labels = left.get_legend_handles_labels()
    more: tuple[list, list] = ([], [])
    for a in ax[0][1:]:
        h, lab = a.get_legend_handles_labels()
        more = (more[0] + h, more[1] + lab)
    fig.legend(
        handles + more[0],
        ["pretrained on " + lab if not lab.startswith("optimal") else lab for lab in labels] + more[1],
        loc="outside upper center",
        ncols=4,
        columnspacing=1.6,
        handletextpad=0.5,
    )
    return fig


def _mismatch_panel(ax, mismatch: dict) -> None:
    """Error ratios of mismatched pretraining ``L' = L/10`` and ``10 L`` over matched, per probe (log axis)."""
    probes = mismatch.get("probes")
    if not isinstance(probes, dict) or not probes:
        raise FigureDataError("figure field 'mismatch.probes' must be a non-empty object")
    names = list(probes)
    ax.axhline(1.0, color="black", lw=0.5)
    for which, colour, marker, shift in (("smaller", "tab:purple", "v", -0.15), ("larger", "tab:brown", "^", 0.15)):
        for i, name in enumerate(names):
            entry = probes[name]
            value = entry.get(which) if isinstance(entry, dict) else None
            if not (isinstance(value, list) and len(value) == 3):
                raise FigureDataError(f"figure field 'mismatch.probes.{name}.{which}' must be [ratio, low, high]")
            r, lo, hi = (float(v) for v in value)
            filled = bool(entry.get("decided"))
            ax.errorbar(
                [i + shift],
                [r],
                yerr=[[r - lo], [hi - r]],
                fmt=marker,
                color=colour,
                mfc=colour if filled else "white",
                ms=4,
                capsize=2,
            )
        ax.plot(
            [], [], marker, color=colour, ls="", ms=4, label=r"$L' = L/10$" if which == "smaller" else r"$L' = 10L$"
        )
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), [mpl_text(n) for n in names], rotation=45, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("error ratio\nmismatched / matched")


# ----------------------------------------------------------------------------- Figure 6
def fig6(data: dict) -> Figure:
    """Figure 6 (keys ``angle``, ``weights_isotropic``, ``weights_general`` (``n`` x attention weight of a
    context point at each angle from the query), ``centre_isotropic``, ``centre_general`` (measured
    centres), ``centre_theory`` (the direction of ``M q``), optional ``M``): left, the weights under a
    general ``M``, centred away from the query, and under ``w* I``, centred on it; right, the same on
    the circle, with the query and the direction ``M q``."""
    angle = _array(data, "angle")
    w_iso = _array(data, "weights_isotropic", len(angle))
    w_gen = _array(data, "weights_general", len(angle))
    c_iso, c_gen = float(data.get("centre_isotropic", 0.0)), float(data.get("centre_general", 0.0))
    c_theory = float(data.get("centre_theory", c_gen))
    fig, ax = new_figure(FULL_WIDTH, 1.75, 1, 2, width_ratios=(1.9, 1.0))
    left, right = ax[0]
    left.plot(angle, w_iso, color="tab:blue", label=r"$M = w^* I$")
    left.plot(angle, w_gen, color="tab:red", label="general $M$")
    left.axvline(0.0, color="black", lw=0.6, ls=":", label="query")
    left.axvline(c_theory, color="tab:red", lw=0.8, ls="--", label=r"direction of $Mq$")  # not the measured centre
    left.plot([c_iso], [np.interp(c_iso, angle, w_iso)], "o", color="tab:blue", ms=4)
    left.plot([c_gen], [np.interp(c_gen, angle, w_gen)], "o", color="tab:red", ms=4)
    left.set_xlabel("angle of the context point from the query (radians)")
    left.set_ylabel(r"$n\,\times$ attention weight")
    left.legend(loc="upper left")  # the weights are near zero there
    theta = angle
    scale = 0.5 / max(float(np.max(w_iso)), float(np.max(w_gen)))
    right.plot(np.cos(theta), np.sin(theta), color="0.7", lw=0.8)
    for w, colour in ((w_iso, "tab:blue"), (w_gen, "tab:red")):
        r = 1 + scale * w
        right.plot(r * np.cos(theta), r * np.sin(theta), color=colour)
    right.annotate("", xy=(1.0, 0.0), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "black", "lw": 0.8})
    right.annotate(
        "",
        xy=(math.cos(c_theory), math.sin(c_theory)),
        xytext=(0, 0),
        arrowprops={"arrowstyle": "->", "color": "tab:red", "lw": 0.8, "ls": "--"},
    )
    right.text(0.55, -0.14, "query $q$", ha="center", va="top")
    right.text(
        0.5 * math.cos(c_theory) - 0.05,
        0.5 * math.sin(c_theory) + 0.05,
        "$Mq$",
        color="tab:red",
        ha="right",
        va="bottom",
    )
    right.set_aspect("equal")
    right.set_xlim(-1.6, 1.6)
    right.set_ylim(-1.6, 1.6)
    right.set_xlabel("$x^{(1)}$")  # coordinates (x_i is the i-th context point)
    right.set_ylabel("$x^{(2)}$")
    return fig


# ----------------------------------------------------------------------------- Figure 9
def fig9(data: dict) -> Figure:
    """Figure 9 (keys ``series``: link -> kind -> ``{steps, rho, error}``, one list per run; optional
    ``series[link]["optimal"]`` and ``["linear_optimum"]``): top row ``rho(M, B)`` during pretraining,
    bottom row the test ICL error (log), softmax against linear attention (mean over runs, the band their
    range), one column per link."""
    series = data.get("series")
    if not isinstance(series, dict) or not series:
        raise FigureDataError("figure field 'series' must be an object by link")
    links = list(series)
    fig, ax = new_figure(FULL_WIDTH, 2.15, 2, len(links), sharex=True)
    for j, link in enumerate(links):
        entry = series[link]
        if not isinstance(entry, dict):
            raise FigureDataError(f"figure field 'series.{link}' must be an object by kind")
        for kind, colour in (("softmax", "tab:blue"), ("linear", "tab:orange")):
            s = entry.get(kind)
            if not isinstance(s, dict):
                raise FigureDataError(f"figure field 'series.{link}.{kind}' is missing")
            steps = _array(s, "steps")
            for row, key in ((0, "rho"), (1, "error")):
                runs = _array(s, key, None, 2)
                _shape(runs, key, (runs.shape[0], len(steps)))
                ax[row, j].plot(steps, runs.mean(axis=0), "o-", color=colour, ms=2.5, label=f"{kind} attention")
                ax[row, j].fill_between(steps, runs.min(axis=0), runs.max(axis=0), color=colour, alpha=0.2, lw=0)
        if "optimal" in entry:
            ax[1, j].axhline(float(entry["optimal"]), color="tab:blue", ls=":", lw=1.0, label="optimal softmax error")
        if "linear_optimum" in entry:
            ax[1, j].axhline(
                float(entry["linear_optimum"]),
                color="tab:orange",
                ls=":",
                lw=1.0,
                label=r"linear optimum $E_{\mathrm{lin}}$",
            )
        ax[0, j].set_title(f"{mpl_text(link)} link", loc="left")
        ax[0, j].set_ylim(0, 1.05)
        ax[1, j].set_yscale("log")
        ax[1, j].set_xlabel("pretraining step")
    ax[0, 0].set_ylabel(r"$\rho(M, B)$")
    ax[1, 0].set_ylabel("test ICL error")
    _legend_right(ax[0, -1])
    if len(ax[1, -1].get_legend_handles_labels()[0]) > 2:
        _legend_right(ax[1, -1])
    return fig


# ----------------------------------------------------------------------------- Eq. (4)
def eq4(data: dict) -> Figure:
    """Rebuttal figure (keys ``d``, ``matrices`` (``W_K^T W_Q`` per ``d``), ``distance`` (per ``d``, one per
    run)): top row, the trained ``W_K^T W_Q`` divided by its window scale ``w = tr(M)/d`` (``M`` its top-left
    block), so the Eq. (4) form reads ``[[I, 0], [0, 0]]`` on a fixed colour scale; bottom row, what is off that
    form, ``(W_K^T W_Q - w [[I, 0], [0, 0]])/w``, on its own colour scale (the largest entry of the panels
    sets it).  The query token's label entry is always 0, so its column never reaches a score: greyed out.
    Each panel states ``d``, ``w`` and the mean distance to the Eq. (4) form over the runs."""
    ds = [int(d) for d in _array(data, "d")]
    mats = data.get("matrices")
    dists = data.get("distance")
    if not isinstance(mats, list) or len(mats) != len(ds) or not isinstance(dists, list) or len(dists) != len(ds):
        raise FigureDataError("figure fields 'matrices' and 'distance' must hold one entry per d")
    scaled, residuals, scales = [], [], []
    for d, raw in zip(ds, mats):
        A = _shape(np.asarray(raw, dtype=float), "matrices", (d + 1, d + 1))
        w = float(np.trace(A[:d, :d])) / d
        w = w if w != 0 else 1.0
        form = np.zeros_like(A)
        form[:d, :d] = np.eye(d)
        scaled.append(A / w)
        residuals.append(A / w - form)
        scales.append(w)
    off = max(float(np.max(np.abs(np.delete(r, -1, axis=1)))) for r in residuals) or 1e-12
    fig, ax = new_figure(FULL_WIDTH, 2.2, 2, len(ds))
    images = []
    for j, (d, dist) in enumerate(zip(ds, dists)):
        for row, (M, limit) in enumerate(((scaled[j], 1.0), (residuals[j], off))):
            a = ax[row, j]
            images.append(a.imshow(M, cmap="RdBu_r", vmin=-limit, vmax=limit))
            a.axvspan(d - 0.5, d + 0.5, color="0.82", zorder=2, lw=0)
            # a covariate's coordinates x^(j) (x_i is the i-th context point), then the label
            labels = [f"$x^{{({i + 1})}}$" for i in range(d)] + ["$y$"]
            # from d = 4 on the rows are too short for every name (the d = 5 names ran together): the first and
            # last coordinate and the label are named, the rows between are ticked
            rows = range(d + 1) if d < 4 else (0, d - 1, d)
            a.set_yticks(range(d + 1), [labels[i] if i in rows else "" for i in range(d + 1)])
            # the columns are too narrow for every coordinate's name side by side (x^(1) x^(2) run together, and
            # upright they shrink the panels): the first and the label's column are named, the rows name them all
            a.set_xticks([0, d], [labels[0], labels[d]])
            a.axhline(d - 0.5, color="black", lw=0.6)
            a.axvline(d - 0.5, color="black", lw=0.6)
            if j == 0:  # the rows are context tokens in every panel: named once per row, on two lines
                a.set_ylabel("context\ntoken")  # (one line is taller than a panel: the rows' labels would meet)
            a.spines[:].set_visible(True)
        ax[0, j].set_title(f"$d = {d}$, $w = {scales[j]:.3g}$\ndistance {float(np.mean(dist)):.3f}", loc="left")
    # the columns are query tokens in every panel: named once, under the row
    fig.supxlabel("query token (grey: meets the zero label)", fontsize=LABEL_PT)
    fig.colorbar(images[0], ax=list(ax[0]), shrink=0.9, label=r"$W_K^\top W_Q / w$")
    # on two lines: on one it is taller than its panel and runs into the label above
    fig.colorbar(images[1], ax=list(ax[1]), shrink=0.9, label="off the Eq. (4)\nform, over $w$")
    return fig


RENDERERS = {"fig1": fig1, "fig3": fig3, "fig5": fig5, "fig6": fig6, "fig9": fig9, "eq4": eq4}
PAPER_NUMBERS = {"fig1": "1", "fig3": "3", "fig5": "5", "fig6": "6", "fig9": "9", "eq4": "rebuttal"}


def render(data: dict) -> Figure:
    """The figure for ``data`` (its ``name`` picks the renderer), in the report's style; malformed data
    raise :class:`FigureDataError` (one line naming the field)."""
    if not isinstance(data, dict) or data.get("name") not in RENDERERS:
        raise FigureDataError(f"figure name must be one of {', '.join(RENDERERS)}")
    with styled():
        try:
            return RENDERERS[data["name"]](data)
        except FigureDataError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
            raise FigureDataError(
                f"{data['name']}: malformed figure data ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
            ) from None


def write(fig: Figure, directory, stem: str) -> list[str]:
    """Save ``fig`` as ``<stem>.pdf`` (vector, no creation date) and ``<stem>.png`` (150 dpi) in
    ``directory``; returns the two paths.  A label matplotlib cannot typeset raises
    :class:`FigureDataError`."""
    directory = Path(directory)
    pdf, png = directory / f"{stem}.pdf", directory / f"{stem}.png"
    try:
        save_pdf(fig, pdf)
        save_png(fig, png)
    except ValueError as exc:  # a mathtext parse error from a label
        raise FigureDataError(f"{stem}: a label could not be typeset ({' '.join(str(exc).split())[:120]})") from None
    return [str(pdf), str(png)]


def _setting_value(value) -> str:
    """A setting as it reads: lists joined by commas (pairs in parentheses), objects as ``key value``,
    Python object notation inside a string (``{'lr': 12.5}``) the same way."""
    if isinstance(value, dict):
        return ", ".join(f"{_words(k)} {_setting_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(f"({_setting_value(v)})" if isinstance(v, (list, tuple)) else _setting_value(v) for v in value)
    if isinstance(value, str):
        return re.sub(r"\{[^{}]*\}", _literal_dict, value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _words(key) -> str:
    """A setting's name as words (``final_lr_fraction`` -> ``final lr fraction``): never a code name."""
    return str(key).replace("_", " ")


def _literal_dict(match: re.Match) -> str:
    try:
        value = ast.literal_eval(match.group(0))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return match.group(0)
    return "(" + _setting_value(value) + ")" if isinstance(value, dict) else match.group(0)


CAPTION_NOTES = {
    "fig1": r"Angles in radians.",
    "fig3": r"Error bars: 99\% $t$-intervals over the runs (dots: the runs).",
    "fig5": (
        r"Bands and error bars: $\pm 2$ standard errors, about 95\% (paired for the ratios; caps mark the ends, "
        r"smaller than the marker where not seen)."
    ),
    "fig6": (
        r"Left: $n\times$ the attention weight of a context point against its angle from the query (dots: the "
        r"measured centres; dotted: the query; dashed: the direction of $Mq$); right: the same weights drawn "
        r"outward from the unit circle (grey), with $q$ and $Mq$. Angles in radians."
    ),
    "fig9": r"Lines: mean over the runs; bands: their range.",
    "eq4": (
        r"Top: the trained matrix over its window scale $w$; bottom: its part off the Eq.~(4) form, on its own "
        r"scale."
    ),
}


def caption_note(data: dict) -> str:
    """What the figure's marks mean (LaTeX): error bars, bands, units (:data:`CAPTION_NOTES`); for paper
    Figure 5 with its mismatched-``L`` panel, where that panel's data come from."""
    from lipschitz_icl.report.latex import escape

    name = str(data.get("name", ""))
    note = CAPTION_NOTES.get(name, "")
    mismatch = data.get("mismatch") if isinstance(data.get("mismatch"), dict) else None
    if name == "fig5" and mismatch:
        note += (
            " Right: the rebuttal's mismatched-$L$ panel, from case "
            + r"\code{"
            + escape(str(mismatch.get("case", "")))
            + "} (filled: a class the claim decides on; open: reported only; error bars its intervals"
            + (", " + escape(str(mismatch["level"])) if mismatch.get("level") else "")
            + ")."
        )
    return note


def caption(data: dict) -> str:
    """The figure's settings as one line of ``key: value`` pairs (to print under it)."""
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        return ""
    return "; ".join(f"{_words(k)}: {_setting_value(v)}" for k, v in settings.items())
