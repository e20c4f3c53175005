"""The paper's figures drawn from the data the ``figures`` gates attach to their evidence.

Each renderer takes the ``Evidence.figure`` dict of one claim of ``claims/figures.toml`` (computed by
:mod:`lipschitz_icl.claims.figures`; keys listed in each renderer's docstring) and returns a
:class:`matplotlib.figure.Figure` on the Agg canvas (never pyplot, so no display is touched).
:func:`write` saves a figure as vector PDF and as PNG; :func:`caption` turns the ``settings`` dict into
the text to print under a figure.  :data:`RENDERERS` maps the figure's ``name`` to its renderer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["RENDERERS", "render", "write", "caption", "fig1", "fig3", "fig5", "fig9", "eq4"]

_PDF_METADATA = {"CreationDate": None, "Creator": "lipschitz-icl figures", "Producer": None}
_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def _figure(rows: int, cols: int, width: float, height: float):
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def fig1(data: dict) -> Figure:
    """Figure 1 (keys ``L, window, angle, context_angle, curves, context_y, query_f, softmax_weights,
    linear_weights, n_grid, softmax_error, linear_error``): top, the targets on the circle with the
    context points, the query and the shaded window ``+-1/sqrt(w*)``; middle, ``n`` x attention weight
    against the angle to the query, softmax (``w*``) and linear (``m*``); bottom, ICL error against ``n``."""
    L = data["L"]
    fig, ax = _figure(3, len(L), 3.3 * len(L), 8.4)
    angle = np.asarray(data["angle"])
    for k, Lk in enumerate(L):
        top, mid, bottom = ax[0, k], ax[1, k], ax[2, k]
        half = data["window"][k]
        top.axvspan(-half, half, color="tab:blue", alpha=0.15, label="softmax window")
        top.plot(angle, data["curves"][k], color="black", lw=1.2, label="target f")
        top.scatter(data["context_angle"], data["context_y"][k], s=12, color="tab:gray", label="context (x_i, y_i)")
        top.scatter([data["query_angle"]], [data["query_f"][k]], marker="*", s=90, color="tab:red", zorder=3,
                    label="query")
        top.set_title(f"L = {Lk:g}")
        top.set_xlabel("angle on the circle")
        mid.plot(angle, data["softmax_weights"][k], color="tab:blue", label="softmax (w*)")
        mid.plot(angle, data["linear_weights"][k], color="tab:orange", label="linear (m*)")
        mid.axhline(0.0, color="black", lw=0.5)
        mid.set_xlabel("angle to the query")
        bottom.loglog(data["n_grid"], data["softmax_error"][k], "o-", color="tab:blue", ms=3, label="softmax (w*)")
        bottom.loglog(data["n_grid"], data["linear_error"][k], "s-", color="tab:orange", ms=3, label="linear (m*)")
        bottom.set_xlabel("context size n")
    ax[0, 0].set_ylabel("f(x), y")
    ax[1, 0].set_ylabel("n x attention weight")
    ax[2, 0].set_ylabel("ICL error")
    ax[0, 0].legend(fontsize=7, loc="best")
    ax[1, 0].legend(fontsize=7, loc="best")
    ax[2, 0].legend(fontsize=7, loc="best")
    return fig


def fig3(data: dict) -> Figure:
    """Figure 3 (keys ``series``: each ``{label, L, norm_mean, norm_runs, w_star}``): the spectral norm of
    the trained ``M`` against ``L`` (runs as dots, their mean as a line) with the exact ``w*`` dashed."""
    fig, ax = _figure(1, 1, 5.0, 3.6)
    a = ax[0, 0]
    for colour, s in zip(_COLOURS, data["series"]):
        for L, runs in zip(s["L"], s["norm_runs"]):
            a.scatter([L] * len(runs), runs, s=10, color=colour, alpha=0.5)
        a.plot(s["L"], s["norm_mean"], "o-", color=colour, label=f"trained, {s['label']}")
        a.plot(s["L"], s["w_star"], "--", color=colour, lw=1, label=f"w* (exact), {s['label']}")
    a.set_xlabel("Lipschitz constant L")
    a.set_ylabel("spectral norm ||M||_2")
    a.legend(fontsize=7)
    return fig


def fig5(data: dict) -> Figure:
    """Figure 5 (keys ``curves``: class -> ``{steps, error, se}``; ``cross``: ``{pretrained_on, error}``):
    left panels, test error during pretraining per class; right panel, error on cosine tasks of the
    layers pretrained on each class."""
    classes = list(data["curves"])
    fig, ax = _figure(1, len(classes) + 1, 3.0 * (len(classes) + 1), 3.2)
    for a, c, colour in zip(ax[0], classes, _COLOURS):
        cur = data["curves"][c]
        err, se = np.asarray(cur["error"]), np.asarray(cur["se"])
        a.plot(cur["steps"], err, "o-", color=colour, ms=3)
        a.fill_between(cur["steps"], err - 2 * se, err + 2 * se, color=colour, alpha=0.2)
        a.set_yscale("log")
        a.set_title(f"pretrained and tested on {c}", fontsize=9)
        a.set_xlabel("pretraining step")
    ax[0, 0].set_ylabel("test ICL error")
    cross = data["cross"]
    a = ax[0, -1]
    a.bar(range(len(cross["pretrained_on"])), cross["error"],
          color=[_COLOURS[classes.index(c)] if c in classes else "gray" for c in cross["pretrained_on"]])
    a.set_xticks(range(len(cross["pretrained_on"])), cross["pretrained_on"])
    a.set_xlabel("pretrained on")
    a.set_ylabel("ICL error on cosine tasks")
    a.set_title("tested on cosine", fontsize=9)
    return fig


def fig9(data: dict) -> Figure:
    """Figure 9 (keys ``series``: link -> kind -> ``{steps, rho, error}``, one list per run): top row
    ``rho(M, B)`` during pretraining, bottom row the test ICL error, softmax against linear attention,
    one column per link."""
    links = list(data["series"])
    fig, ax = _figure(2, len(links), 3.2 * len(links), 5.6)
    for k, link in enumerate(links):
        for kind, colour in (("softmax", "tab:blue"), ("linear", "tab:orange")):
            s = data["series"][link][kind]
            for i, (rho, err) in enumerate(zip(s["rho"], s["error"])):
                label = kind if i == 0 else None
                ax[0, k].plot(s["steps"], rho, "o-", color=colour, ms=3, alpha=0.8, label=label)
                ax[1, k].plot(s["steps"], err, "o-", color=colour, ms=3, alpha=0.8, label=label)
        ax[0, k].set_title(f"low-rank, {link} link", fontsize=9)
        ax[0, k].set_ylim(0, 1)
        ax[1, k].set_yscale("log")
        ax[1, k].set_xlabel("pretraining step")
    ax[0, 0].set_ylabel("rho(M, B)")
    ax[1, 0].set_ylabel("test ICL error")
    ax[0, 0].legend(fontsize=7)
    return fig


def eq4(data: dict) -> Figure:
    """Rebuttal figure (keys ``d``, ``matrices`` (``W_K^T W_Q`` per ``d``), ``distance`` (per ``d``, one per
    run)): heat maps of the trained ``W_K^T W_Q`` (rows: the context token's entries, columns: the query
    token's) with the label row and column marked, titled with the mean distance to the Eq. (4) form over
    the runs."""
    ds = data["d"]
    fig, ax = _figure(1, len(ds), 2.9 * len(ds), 3.0)
    for a, d, A, dist in zip(ax[0], ds, data["matrices"], data["distance"]):
        A = np.asarray(A)
        scale = float(np.max(np.abs(A)))
        image = a.imshow(A, cmap="RdBu_r", vmin=-scale, vmax=scale)
        labels = [f"x{i + 1}" for i in range(d)] + ["y"]
        a.set_xticks(range(d + 1), labels, fontsize=7)
        a.set_yticks(range(d + 1), labels, fontsize=7)
        a.axhline(d - 0.5, color="black", lw=0.8)
        a.axvline(d - 0.5, color="black", lw=0.8)
        a.set_xlabel("query token entry")
        a.set_ylabel("context token entry")
        a.set_title(f"d = {d}: distance to Eq. (4) {np.mean(dist):.3f}", fontsize=9)
        fig.colorbar(image, ax=a, fraction=0.046, pad=0.04)
    return fig


RENDERERS = {"fig1": fig1, "fig3": fig3, "fig5": fig5, "fig9": fig9, "eq4": eq4}


def render(data: dict) -> Figure:
    """The figure for ``data`` (its ``name`` picks the renderer), titled with ``data['title']``."""
    fig = RENDERERS[data["name"]](data)
    if data.get("title"):
        fig.suptitle(data["title"], fontsize=10)
    fig.tight_layout()
    return fig


def write(fig: Figure, directory, stem: str) -> list[str]:
    """Save ``fig`` as ``<stem>.pdf`` (vector, no creation date) and ``<stem>.png`` (150 dpi) in
    ``directory``; returns the two paths."""
    directory = Path(directory)
    pdf, png = directory / f"{stem}.pdf", directory / f"{stem}.png"
    fig.savefig(pdf, format="pdf", metadata=_PDF_METADATA)
    fig.savefig(png, format="png", dpi=150)
    return [str(pdf), str(png)]


def caption(data: dict) -> str:
    """The figure's settings as one line of ``key: value`` pairs (to print under it)."""
    return "; ".join(f"{k}: {v}" for k, v in data.get("settings", {}).items())
