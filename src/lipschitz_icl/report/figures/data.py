"""Figures of the report's claim groups (vector PDF via matplotlib; Agg canvas, no display needed).

:func:`data_figure` draws figure data a gate attached to its record (the optional ``figure`` field), a
dict

      {"kind": "line" | "scatter" | "loglog" | "semilogx" | "semilogy",
       "x": [...], "y": [...],                      # required, same length
       "y_low": [...], "y_high": [...],             # optional interval of y
       "theory_y": [...],                           # optional theory curve at the same x
       "series": [{"label", "x", "y", ...}, ...],   # optional: several curves (each as above)
       "xlabel": str, "ylabel": str}

in the report's style (:mod:`lipschitz_icl.report.style`): a fixed width, 8-9 pt text, mathtext axis
labels (:mod:`lipschitz_icl.report.mathtext`; a ``(dashed: ...)`` remark in a label becomes the theory
curve's legend entry), no title, the legend outside the axes.  On a log axis a point whose value or lower
limit is not positive is drawn as its upper confidence limit (a downward triangle), never as a drop to
zero; a point with neither is left out and counted in the legend.  ``transform="deviation"`` plots
``|y - 1|`` (and ``|theory - 1|``) on a log axis: the distance to a law, where its decay shows.

Invalid figure data raise :class:`FigureDataError` (the report notes it and goes on).
"""

from __future__ import annotations

import re

import numpy as np

from lipschitz_icl.report.latex import as_float
from lipschitz_icl.report.mathtext import to_mathtext
from lipschitz_icl.report.style import FULL_WIDTH, new_figure, save_pdf, styled

__all__ = [
    "theory_colour",
    "FigureDataError",
    "data_figure",
    "FIGURE_KINDS",
    "Panel",
    "parse_series",
    "axis_labels",
    "spec_panel",
    "merge_equal_series",
    "theory_on_diagonal",
]

FIGURE_KINDS = ("line", "scatter", "loglog", "semilogx", "semilogy")
_DASHED = re.compile(r"\s*\(dashed:\s*(.+?)\)\s*$")


class FigureDataError(ValueError):
    """The ``figure`` field of a claims.json record does not follow the documented form."""


def _vector(spec: dict, key: str, length: int | None, required: bool):
    if key not in spec or spec[key] is None:
        if required:
            raise FigureDataError(f"figure field {key!r} is required")
        return None
    raw = spec[key]
    if not isinstance(raw, list):
        raise FigureDataError(f"figure field {key!r} must be a list of numbers")
    values = [as_float(v) for v in raw]
    if any(v is None for v in values):
        raise FigureDataError(f"figure field {key!r} must hold numbers only")
    if length is not None and len(values) != length:
        raise FigureDataError(f"figure field {key!r} has {len(values)} entries, expected {length}")
    return np.asarray(values, dtype=float)


def _series(spec: dict, label: str | None):
    x = _vector(spec, "x", None, True)
    if not len(x):
        raise FigureDataError("figure field 'x' is empty")
    return {
        "label": label,
        "x": x,
        "y": _vector(spec, "y", len(x), True),
        "y_low": _vector(spec, "y_low", len(x), False),
        "y_high": _vector(spec, "y_high", len(x), False),
        "theory_y": _vector(spec, "theory_y", len(x), False),
    }


def parse_series(spec) -> list[dict]:
    """The series of one figure spec (validated; see the module docstring)."""
    if not isinstance(spec, dict):
        raise FigureDataError("the figure field must be an object {kind, x, y, ...}")
    kind = spec.get("kind", "line")
    if kind not in FIGURE_KINDS:
        raise FigureDataError(f"figure kind must be one of {', '.join(FIGURE_KINDS)} (got {kind!r})")
    if "series" not in spec:
        return [_series(spec, spec.get("label"))]
    if not isinstance(spec["series"], list) or not spec["series"]:
        raise FigureDataError("figure field 'series' must be a non-empty list of objects")
    out = []
    for i, s in enumerate(spec["series"]):
        if not isinstance(s, dict):
            raise FigureDataError("figure field 'series' must be a non-empty list of objects")
        out.append(_series(s, str(s.get("label", f"series {i + 1}"))))
    return out


class Panel:
    """One panel's data: ``kind``, axis labels (mathtext), ``series`` (each with a ``label``), the theory
    curve's legend entry, the ``transform`` (``None`` or ``"deviation"``), ``log_y`` (a log value axis
    whatever the kind) and ``dodge`` (scatter series set side by side around each ``x``)."""

    def __init__(
        self, kind, xlabel, ylabel, series, *, theory_label="theory", transform=None, log_y=False, dodge=False
    ):
        self.kind, self.xlabel, self.ylabel = kind, xlabel, ylabel
        self.series, self.theory_label, self.transform = series, theory_label, transform
        self.log_y, self.dodge = log_y, dodge


def _deviation(s: dict) -> dict:
    out = dict(s)
    out["y"] = np.abs(s["y"] - 1)
    out["theory_y"] = None if s["theory_y"] is None else np.abs(s["theory_y"] - 1)
    if s["y_low"] is not None and s["y_high"] is not None:
        lo, hi = s["y_low"] - 1, s["y_high"] - 1
        straddles = (lo <= 0) & (hi >= 0)
        out["y_low"] = np.where(straddles, 0.0, np.minimum(np.abs(lo), np.abs(hi)))
        out["y_high"] = np.maximum(np.abs(lo), np.abs(hi))
    return out


def _draw_series(ax, s: dict, colour: str, style: str, log_y: bool) -> int:
    """One series on ``ax``; returns how many points could not be shown on the log axis."""
    x, y, lo, hi = s["x"], s["y"], s["y_low"], s["y_high"]
    label = s["label"]
    hidden = 0
    if log_y:
        good = y > 0
        limits = ~good & (hi > 0) if hi is not None else np.zeros_like(good)
        hidden = int(np.sum(~good & ~limits))
        if np.any(limits):
            ax.plot(x[limits], hi[limits], "v", color=colour, ms=4, mfc="none")
        x, y = x[good], y[good]
        lo = None if lo is None else np.maximum(lo[good], y * 1e-3)
        hi = None if hi is None else hi[good]
    if lo is not None and hi is not None:
        yerr = [np.maximum(y - lo, 0.0), np.maximum(hi - y, 0.0)]
        ax.errorbar(x, y, yerr=yerr, fmt=style, color=colour, ms=3, label=label, elinewidth=0.8)
    else:
        ax.plot(x, y, style, color=colour, ms=3, label=label)
    if s["theory_y"] is not None:
        t = s["theory_y"]
        keep = t > 0 if log_y else np.ones_like(t, dtype=bool)
        # on top of the data, in a darker shade of the series' colour: where theory and data agree a dashed
        # line of the data's own colour would vanish into the data's line, and the legend would list it unseen
        ax.plot(s["x"][keep], t[keep], _theory_style(style), color=theory_colour(colour), lw=0.9, ms=9, zorder=3)
    return hidden


def theory_colour(colour: str, darken: float = 0.45) -> tuple:
    """``colour`` mixed with black (``darken`` the share of black): a series' theory line stays its hue yet
    shows over the series' own line."""
    from matplotlib.colors import to_rgb

    return tuple((1 - darken) * c for c in to_rgb(colour))


def _theory_style(style: str) -> str:
    """Theory as a dashed line beside connected points, as a dash marker beside a scatter's single points
    (a line through one point draws nothing)."""
    return "_" if style == "o" else "--"


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-12, atol=0.0))


def merge_equal_series(series: list[dict]) -> list[tuple[int, dict]]:
    """``(index, series)`` of the series to draw: one equal to an earlier one (same points, intervals and
    theory) is drawn once, in the earlier one's colour (the noise part of two task classes is one curve;
    drawn twice, one would hide the other).  The index keeps each series' colour across panels."""
    out: list[tuple[int, dict]] = []
    for i, s in enumerate(series):
        keys = ("x", "y", "y_low", "y_high", "theory_y")
        if not any(all(_same(t[k], s[k]) for k in keys) for _, t in out):
            out.append((i, s))
    return out


def theory_on_diagonal(series: list[dict]) -> bool:
    """Every theory value equals its x (a scatter of measured against derived): draw the line y = x."""
    with_theory = [s for s in series if s["theory_y"] is not None]
    return bool(with_theory) and all(_same(s["theory_y"], s["x"]) for s in with_theory)


def _panel(ax, panel: Panel) -> list:
    log_x = panel.kind in ("loglog", "semilogx")
    log_y = panel.kind in ("loglog", "semilogy") or panel.transform == "deviation" or panel.log_y
    style = "o" if panel.kind == "scatter" else "o-"
    hidden = 0
    drawn = merge_equal_series([_deviation(s) if panel.transform == "deviation" else s for s in panel.series])
    series = [s for _, s in drawn]
    colours = [f"C{i % 10}" for i, _ in drawn]
    diagonal = panel.kind == "scatter" and theory_on_diagonal(series)
    if diagonal:
        xs = np.concatenate([s["x"] for s in series])
        lo, hi = float(xs.min()), float(xs.max())
        pad = 0.05 * (hi - lo or abs(hi) or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "--", color="0.3", lw=0.9, label="measured = derived")
        series = [dict(s, theory_y=None) for s in series]
    if panel.dodge and len(series) > 1:
        width = 0.6 / len(series)
        series = [dict(s, x=s["x"] + (i - (len(series) - 1) / 2) * width) for i, s in enumerate(series)]
    for s, colour in zip(series, colours):
        hidden += _draw_series(ax, s, colour, style, log_y)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    keys = [
        theory_colour(colour) for s, colour in zip(series, colours) if s["theory_y"] is not None
    ]  # the theory key: one dash per series' theory colour (theory_key), never a grey none of the lines has
    if keys:
        ax.plot([], [], _theory_style(style), color=keys[0], lw=0.9, ms=9, label=panel.theory_label)
    if log_y and any(s["y_high"] is not None and np.any(s["y"] <= 0) for s in series):
        ax.plot([], [], "v", color="0.3", ms=4, mfc="none", label="upper confidence limit (value 0)")
    if hidden:
        ax.plot([], [], " ", label=f"{hidden} points at 0 not shown")
    return [(panel.theory_label, _theory_style(style), keys)] if keys else []


def theory_key(style: str, colours: list) -> tuple:
    """The legend handle of the theory lines: one dash (or dash marker) in each series' theory colour, side
    by side (matplotlib's ``HandlerTuple``), so the key shows what the lines show, not a grey none of them
    has; at most :data:`KEY_COLOURS`, the rest being darker shades of the same palette.  Each dash is short
    (one on-off of 3 and 1.5 points) so that it reads as a dash at a third of the key's length."""
    from matplotlib.lines import Line2D

    unique = list(dict.fromkeys(colours))[:KEY_COLOURS]
    return tuple(
        Line2D(
            [],
            [],
            linestyle=(0, (3, 1.5)) if style == "--" else "none",
            marker="_" if style == "_" else None,
            color=colour,
            lw=0.9,
            ms=6,
        )
        for colour in unique
    )


KEY_COLOURS = 3  # series colours in the theory key (theory_key)


def data_figure(panels, path, *, width: float = FULL_WIDTH, height: float = 2.3) -> None:
    """Draw ``panels`` (:class:`Panel` objects, or one figure spec dict) side by side into ``path`` (PDF)
    at ``width x height`` inches, one legend outside on the right."""
    if not (isinstance(panels, (list, tuple)) and panels and all(isinstance(p, Panel) for p in panels)):
        panels = [spec_panel(panels)]
    with styled():
        fig, axes = new_figure(width, height, 1, len(panels))
        theory: dict = {}
        for ax, panel in zip(axes[0], panels):
            for label, style, colours in _panel(ax, panel):
                theory.setdefault(label, (style, []))[1].extend(colours)
        handles, labels = [], []
        for ax in axes[0]:
            for h, label in zip(*ax.get_legend_handles_labels()):
                if label and label not in labels and not label.startswith("_"):
                    handles.append(theory_key(*theory[label]) if label in theory else h)
                    labels.append(label)
        if handles:
            from matplotlib.legend_handler import HandlerTuple

            fig.legend(
                handles, labels, loc="outside right upper", handler_map={tuple: HandlerTuple(ndivide=None, pad=0)}
            )
        try:
            save_pdf(fig, path)
        except ValueError as exc:  # a label matplotlib cannot typeset
            raise FigureDataError(f"a label could not be typeset ({' '.join(str(exc).split())[:100]})") from None


def split_label(text: str) -> tuple[str, str | None]:
    """``(label, theory remark)``: a trailing ``(dashed: ...)`` taken off an axis label."""
    m = _DASHED.search(text)
    if not m:
        return text, None
    return text[: m.start()], m.group(1)


def axis_labels(spec: dict) -> tuple[str, str, str]:
    """``(xlabel, ylabel, theory legend entry)`` of a figure spec, as mathtext."""
    raw_y, theory = split_label(str(spec.get("ylabel", "")))
    return (
        to_mathtext(str(spec.get("xlabel", ""))),
        to_mathtext(raw_y),
        ("theory: " + to_mathtext(theory)) if theory else "theory",
    )


def spec_panel(spec) -> Panel:
    """A :class:`Panel` from one figure spec (its labels converted to mathtext)."""
    series = parse_series(spec)
    for s in series:
        s["label"] = None if s["label"] is None else to_mathtext(s["label"])
    xlabel, ylabel, theory = axis_labels(spec)
    return Panel(spec.get("kind", "line"), xlabel, ylabel, series, theory_label=theory)
