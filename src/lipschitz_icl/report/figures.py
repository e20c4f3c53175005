"""Figures of the report (vector PDF via matplotlib; Agg canvas, no display needed).

:func:`data_figure` draws figure data a gate attached to its record (the optional ``figure`` field;
the report overlays the cases of one claim that share their axes), a dict

      {"kind": "line" | "scatter" | "loglog" | "semilogx" | "semilogy",
       "x": [...], "y": [...],                      # required, same length
       "y_low": [...], "y_high": [...],             # optional interval of y
       "theory_y": [...],                           # optional theory curve at the same x
       "series": [{"label", "x", "y", ...}, ...],   # optional: several curves (each as above)
       "xlabel": str, "ylabel": str, "title": str}

  Invalid figure data raises :class:`FigureDataError` (the report notes it and goes on).

Figures are built on :class:`matplotlib.figure.Figure` with the Agg canvas (never pyplot, so no GUI
backend is touched) and written without a creation date, so the same data give the same file.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .latex import as_float

__all__ = ["FigureDataError", "data_figure", "FIGURE_KINDS"]

FIGURE_KINDS = ("line", "scatter", "loglog", "semilogx", "semilogy")
_PDF_METADATA = {"CreationDate": None, "Creator": "lipschitz-icl report", "Producer": None}


class FigureDataError(ValueError):
    """The ``figure`` field of a claims.json record does not follow the documented form."""


def _new_figure(width=5.0, height=3.2):
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _save(fig, path) -> None:
    fig.tight_layout()
    fig.savefig(path, format="pdf", metadata=_PDF_METADATA)


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
    return values


def _series(spec: dict, label: str | None):
    x = _vector(spec, "x", None, True)
    if not x:
        raise FigureDataError("figure field 'x' is empty")
    return {"label": label, "x": x, "y": _vector(spec, "y", len(x), True),
            "y_low": _vector(spec, "y_low", len(x), False), "y_high": _vector(spec, "y_high", len(x), False),
            "theory_y": _vector(spec, "theory_y", len(x), False)}


def data_figure(spec, path, title: str = "") -> None:
    """Draw a gate's ``figure`` data (see the module docstring) to ``path``."""
    if not isinstance(spec, dict):
        raise FigureDataError("the figure field must be an object {kind, x, y, ...}")
    kind = spec.get("kind", "line")
    if kind not in FIGURE_KINDS:
        raise FigureDataError(f"figure kind must be one of {', '.join(FIGURE_KINDS)} (got {kind!r})")
    series = []
    if "series" in spec:
        if not isinstance(spec["series"], list) or not spec["series"]:
            raise FigureDataError("figure field 'series' must be a non-empty list of objects")
        for i, s in enumerate(spec["series"]):
            if not isinstance(s, dict):
                raise FigureDataError("figure field 'series' must be a non-empty list of objects")
            series.append(_series(s, str(s.get("label", f"series {i + 1}"))))
    else:
        series.append(_series(spec, spec.get("label")))
    fig, ax = _new_figure()
    style = "o" if kind == "scatter" else "o-"
    for i, s in enumerate(series):
        color = f"C{i % 10}"
        if s["y_low"] is not None and s["y_high"] is not None:
            yerr = [[max(y - lo, 0.0) for y, lo in zip(s["y"], s["y_low"])],
                    [max(hi - y, 0.0) for y, hi in zip(s["y"], s["y_high"])]]
            ax.errorbar(s["x"], s["y"], yerr=yerr, fmt=style, color=color, capsize=3, label=s["label"])
        else:
            ax.plot(s["x"], s["y"], style, color=color, label=s["label"])
        if s["theory_y"] is not None:
            ax.plot(s["x"], s["theory_y"], "--", color=color,
                    label=f"theory ({s['label']})" if s["label"] else "theory")
    if kind in ("loglog", "semilogx"):
        ax.set_xscale("log")
    if kind in ("loglog", "semilogy"):
        ax.set_yscale("log")
    ax.set_xlabel(str(spec.get("xlabel", "")))
    ax.set_ylabel(str(spec.get("ylabel", "")))
    ax.set_title(str(spec.get("title", title)), fontsize=9)
    if any(s["label"] for s in series) or any(s["theory_y"] is not None for s in series):
        ax.legend(fontsize=7)
    _save(fig, path)
