"""``lipschitz-icl report``: the LaTeX report (and PDF, when latexmk is on PATH) from claims.json.

``--claims FILE`` (default ``reports/claims.json``), ``--out DIR`` (default ``reports/``), ``--force``
(replace existing output files), ``--no-pdf``.  Writes ``DIR/report.tex``, ``DIR/constants.csv``,
``DIR/quantities.csv``, ``DIR/cases.csv`` and ``DIR/figures/*``; with ``latexmk`` on PATH also
``DIR/report.pdf`` and ``DIR/report.log``, else a one-line message on stderr and exit 0.  Everything is
built in a fresh temporary directory and moved into ``DIR`` file by file, atomically, never through a
symbolic link (:mod:`lipschitz_icl.report.output`); without ``--force`` an existing output file (a
dangling link counts) refuses the run before anything is written.

JSON keys: ``tex``, ``pdf`` (null when not compiled), ``compiled``, ``message``, ``claims``, ``verdicts``
(counts), ``power`` (pre-specified alternatives ruled out, or an older file's near misses refuted, per claim and in
total: ``rows`` [{claim_id, refuted, total,
unrefuted}], ``refuted``, ``total``, ``all_refuted``), ``figures``, ``notes``, ``constants``.  Exit codes: 0
written, 1 latexmk failed (the one-line reason names the log) or another I/O failure, 2 bad input
(missing or malformed claims file, an unusable ``--out``: empty, read-only, full, a symbolic link in the
way, existing files without ``--force``).
"""

from __future__ import annotations

import sys

from lipschitz_icl.validation import ParameterError

NAME = "report"
HELP = "LaTeX report (booktabs, siunitx, figures) from claims.json; PDF when latexmk is available"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--claims",
        default="reports/claims.json",
        help="claims.json written by `pytest verify/` (default reports/claims.json)",
    )
    parser.add_argument("--out", default="reports", help="output directory (default reports/)")
    parser.add_argument("--no-pdf", action="store_true", help="write report.tex only, do not run latexmk")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace existing output files (a symbolic link is replaced itself, never its target)",
    )


def _failure(args, message: str):
    print(f"lipschitz-icl: report: {message}", file=sys.stderr)
    return {"tex": None, "pdf": None, "compiled": False, "message": message}, 1


def run(args):
    from lipschitz_icl.report import LatexError, build_report
    from lipschitz_icl.report.output import USER_ERRNOS, OutputError, describe

    try:
        result = build_report(args.claims, args.out, compile_pdf=not args.no_pdf, force=args.force)
    except LatexError as exc:
        return _failure(args, str(exc))
    except OutputError as exc:
        return _failure(args, exc.strerror or str(exc))
    except OSError as exc:  # the temporary build directory: its disk full, or unwritable
        if exc.errno in USER_ERRNOS:
            raise ParameterError(
                "out", f"a report that can be built ({describe(exc)} in the temporary build directory)", args.out
            ) from None
        return _failure(args, f"building the report failed ({describe(exc)})")
    except (MemoryError, RecursionError) as exc:
        raise ParameterError(
            "claims", f"a claims.json the report can hold in memory ({type(exc).__name__})", args.claims
        ) from None
    if not result.compiled:
        print(f"lipschitz-icl: report: {result.message}", file=sys.stderr)
    payload = result.to_dict()
    if not args.json:
        power = result.power
        payload = {
            "tex": payload["tex"],
            "pdf": payload["pdf"],
            "constants": payload["constants"],
            "claims": result.claims,
            "verdicts": ", ".join(f"{v} {n}" for v, n in result.counts.items()),
            "alternatives ruled out": f"{power['refuted']}/{power['total']}",
        }
    return payload, 0
