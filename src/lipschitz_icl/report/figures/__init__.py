"""The figures room: everything that draws, for the report and for ``lipschitz-icl figures``.

:mod:`.data` draws a claim's figure data (``Evidence.figure``: lines, scatter, log axes, bands, theory
curves) in the report's style; :mod:`.paper` draws the paper's figures (1, 3, 5, 6, 9 and the rebuttal's
Eq. (4) maps) from the data the ``figures`` gates attach.  The numbers are computed by the claims'
measure functions (:mod:`lipschitz_icl.claims`); nothing here computes, and nothing beside the engine
draws.
"""

from lipschitz_icl.report.figures.data import (
    FIGURE_KINDS,
    FigureDataError,
    Panel,
    axis_labels,
    data_figure,
    parse_series,
    spec_panel,
)

__all__ = ["FIGURE_KINDS", "FigureDataError", "Panel", "axis_labels", "data_figure", "parse_series", "spec_panel"]
