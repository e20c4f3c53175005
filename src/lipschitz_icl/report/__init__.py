"""The LaTeX report built from ``claims.json`` (the records the pytest plugin writes).

``build_report(claims_path, out_dir)`` (:mod:`.build`) renders ``report.tex`` (:mod:`.render`, template
``templates/report.tex.j2``), the figures (:mod:`.figures`: claim figures and the paper's) and the tables
``constants.csv``, ``quantities.csv``, ``cases.csv`` in a fresh temporary directory, copies the proof
certificates found beside ``claims.json``, compiles ``report.pdf`` there when ``latexmk`` is on ``PATH``
(refusing lost text: :mod:`.latexlog`), and moves the files into ``out_dir`` safely (:mod:`.output`).
The page plan is in ``docs/report.md``: page 1 the cases by scope, the point-only checks, what the
profile leaves out (:mod:`.profile`) and every deviation (:mod:`.deviations`, :mod:`.summary`,
:mod:`.scope`); the paper statement by statement (:mod:`.paper_map`, data ``paper_map.toml``); the
notation (:mod:`.notation`); the proofs written out (:mod:`.proofs`); the constants with their closed
forms (:mod:`.constants`, :mod:`.closed_forms`, fallback symbols :mod:`.symbols`); one section per claim
group with its figure, table and where theory and practice part (:mod:`.remarks`); appendices with every
case, the margins, what the profile leaves out, the design history and provenance (:mod:`.provenance`);
the references (:mod:`.references`, data ``references.toml``).  Text is typeset by :mod:`.mathtext`,
numbers by :mod:`.latex`; ``claims.json`` is read and checked by :mod:`.schema`.
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
