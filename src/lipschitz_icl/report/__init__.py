"""The LaTeX report built from ``claims.json`` (the records the pytest plugin writes).

``build_report(claims_path, out_dir)`` (:mod:`.build`) renders ``report.tex`` (:mod:`.render`, template
``templates/report.tex.j2``), the figures (:mod:`.figures`: claim figures and the paper's) and the tables
``constants.csv``, ``quantities.csv``, ``cases.csv`` in a fresh temporary directory, compiles
``report.pdf`` there when ``latexmk`` is on ``PATH``, and moves the files into ``out_dir`` safely
(:mod:`.output`).  The page plan is in ``docs/report.md``: page 1 the headline, the cases that do not
hold and the claim groups by scope (:mod:`.summary`, :mod:`.scope`); then the constants table
(:mod:`.constants`, fallback symbols :mod:`.symbols`); one short section per claim group with its table
and one figure; appendices with every case, the margins and the design history (:mod:`.provenance`).
Text is typeset by :mod:`.mathtext`, numbers by :mod:`.latex`; ``claims.json`` is read and checked by
:mod:`.schema`.
"""

from __future__ import annotations

from lipschitz_icl.report.build import LATEXMK_TIMEOUT, LatexError, ReportResult, build_report
from lipschitz_icl.report.render import power_summary, render_tex
from lipschitz_icl.report.schema import load_claims

__all__ = [
    "build_report",
    "load_claims",
    "power_summary",
    "render_tex",
    "ReportResult",
    "LATEXMK_TIMEOUT",
    "LatexError",
]
