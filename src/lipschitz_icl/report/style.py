"""One figure style for the report and the paper's figures: fixed final widths, 8-9 pt text.

Every figure is drawn at the size it is printed (the report includes it unscaled), so its text is the
size set here: 8 pt for ticks, legends and annotations, 9 pt for axis labels (mathtext sub- and
superscripts are smaller by matplotlib's factor 0.7).  Widths: :data:`FULL_WIDTH` (the text width of the
report's A4 page with 14 mm margins) and :data:`HALF_WIDTH` (two side by side).  Figures carry no
titles (LaTeX numbers and captions them); legends sit outside the axes, so they never cover data.
PDFs are written without a creation date (the same data give the same file), with Type 3 fonts (subset
by matplotlib: fast to write).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

__all__ = [
    "FULL_WIDTH",
    "HALF_WIDTH",
    "TICK_PT",
    "LABEL_PT",
    "RC",
    "new_figure",
    "save_pdf",
    "save_png",
    "PDF_METADATA",
    "styled",
    "SCRIPT_FACTOR",
    "tidy_log_axes",
]

MM = 1 / 25.4
FULL_WIDTH = (210 - 2 * 14) * MM  # inches: the report's text width
HALF_WIDTH = (FULL_WIDTH - 6 * MM) / 2
TICK_PT, LABEL_PT = 8.0, 9.0
SCRIPT_FACTOR = 0.7  # matplotlib mathtext's shrink factor for sub- and superscripts
PDF_METADATA = {"CreationDate": None, "Creator": "lipschitz-icl", "Producer": None}
RC = {
    "font.size": TICK_PT,
    "axes.labelsize": LABEL_PT,
    "axes.titlesize": LABEL_PT,
    "xtick.labelsize": TICK_PT,
    "ytick.labelsize": TICK_PT,
    "legend.fontsize": TICK_PT,
    "legend.title_fontsize": TICK_PT,
    "figure.titlesize": LABEL_PT,
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.1,
    "lines.markersize": 3.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 200,
    "errorbar.capsize": 2.0,
    "legend.handlelength": 1.6,
    "axes.formatter.limits": (-3, 4),
}


@contextmanager
def styled():
    """matplotlib's rc parameters set to :data:`RC` for the duration (restored afterwards)."""
    with matplotlib.rc_context(RC):  # type: ignore[arg-type]  # matplotlib types rc keys as a Literal of names
        yield


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, **kwargs):
    """A figure of exactly ``width x height`` inches on the Agg canvas (never pyplot) with constrained
    layout, and its axes as a ``rows x cols`` array.  Call inside :func:`styled`."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    engine = fig.get_layout_engine()
    assert isinstance(engine, ConstrainedLayoutEngine)
    engine.set(w_pad=2 / 72, h_pad=2 / 72, wspace=0.04, hspace=0.04)
    axes = fig.subplots(rows, cols, squeeze=False, **kwargs)
    return fig, axes


def tidy_log_axes(fig) -> None:
    """On a log axis spanning less than two decades, ticks at 1, 2, 5 times powers of ten labelled as
    plain numbers (``0.2``, not ``2 x 10^-1``), and no labels on the minor ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log" or min(limits) <= 0 or isinstance(axis.get_major_locator(), FixedLocator):
                continue  # not log, or ticks placed on purpose
            if math.log10(max(limits) / min(limits)) < 2:
                axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())


def save_pdf(fig, path) -> None:
    with styled():
        tidy_log_axes(fig)
        fig.savefig(path, format="pdf", metadata=PDF_METADATA)


def save_png(fig, path, dpi: int = 150) -> None:
    with styled():
        tidy_log_axes(fig)
        fig.savefig(path, format="png", dpi=dpi)
