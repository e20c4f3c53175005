"""``lipschitz-icl report``: the LaTeX report (and PDF, when latexmk is on PATH) from claims.json.

``--claims FILE`` (default ``reports/claims.json``), ``--out DIR`` (default ``reports/``).  Writes
``DIR/report.tex`` and ``DIR/figures/*.pdf``; with ``latexmk`` on PATH also ``DIR/report.pdf``, else a
one-line message on stderr and exit 0.  JSON keys: ``tex``, ``pdf`` (null when not compiled),
``compiled``, ``message``, ``claims``, ``verdicts`` (counts), ``power`` (false variants refuted per claim
and in total: ``rows`` [{claim_id, refuted, total, unrefuted}], ``refuted``, ``total``,
``all_refuted``), ``figures``, ``notes``.  Exit codes: 0 written, 1 latexmk failed (the one-line
reason names the log), 2 bad input (missing or malformed claims file).
"""

from __future__ import annotations

import sys

from ..report import build_report

NAME = "report"
HELP = "LaTeX report (booktabs, siunitx, figures) from claims.json; PDF when latexmk is available"


def add_arguments(parser) -> None:
    parser.add_argument("--claims", default="reports/claims.json",
                        help="claims.json written by `pytest verify/` (default reports/claims.json)")
    parser.add_argument("--out", default="reports", help="output directory (default reports/)")
    parser.add_argument("--no-pdf", action="store_true", help="write report.tex only, do not run latexmk")


def run(args):
    try:
        result = build_report(args.claims, args.out, compile_pdf=not args.no_pdf)
    except RuntimeError as exc:
        print(f"lipschitz-icl: report: {exc}", file=sys.stderr)
        return {"tex": f"{args.out}/report.tex", "pdf": None, "compiled": False, "message": str(exc)}, 1
    if not result.compiled:
        print(f"lipschitz-icl: report: {result.message}", file=sys.stderr)
    payload = result.as_dict()
    if not args.json:
        power = result.power
        payload = {"tex": payload["tex"], "pdf": payload["pdf"], "claims": result.claims,
                   "verdicts": ", ".join(f"{v} {n}" for v, n in result.counts.items()),
                   "false variants refuted": f"{power['refuted']}/{power['total']}"
                                             + (" (all)" if power["all_refuted"] else " (NOT all)"),
                   **{f"  {r['claim_id']}": f"{r['refuted']}/{r['total']}" for r in power["rows"]}}
    return payload, 0
