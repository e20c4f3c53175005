"""Building the report: render into a fresh temporary directory, compile there, then move the files into
``--out`` (:mod:`lipschitz_icl.report.output`).

Nothing the output directory holds is read or run: LaTeX runs in the temporary directory (so no stale
``report.aux`` and no ``.latexmkrc`` of the user's is seen), ``latexmk -norc`` reads no rc file at all,
pdfTeX runs without shell escape and with ``openout_any=p`` (it writes only below the build directory).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lipschitz_icl.decision import STATISTICAL
from lipschitz_icl.gates.evidence import VERDICTS
from lipschitz_icl.report.latexlog import lost_text
from lipschitz_icl.report.output import check_targets, install, out_directory
from lipschitz_icl.report.render import render_tex
from lipschitz_icl.report.schema import load_claims

__all__ = ["build_report", "ReportResult", "LATEXMK_TIMEOUT", "LatexError", "run_latexmk", "FIXED_OUTPUTS"]

LATEXMK_TIMEOUT = 600
# the files every run writes, besides figures/* and, when compiled, report.pdf and report.log
FIXED_OUTPUTS = ("report.tex", "constants.csv", "quantities.csv", "cases.csv")


class LatexError(RuntimeError):
    """``latexmk`` failed or timed out (the message names the log in ``--out``)."""


@dataclass(kw_only=True)
class ReportResult:
    """What :func:`build_report` produced: paths, whether latexmk ran, and a one-line message (fields given by
    name)."""

    tex: Path
    pdf: Path | None
    figures: list[Path]
    compiled: bool
    message: str
    power: dict
    counts: dict
    claims: int
    notes: list[str] = field(default_factory=list)
    log: Path | None = None
    constants: Path | None = None

    def to_dict(self) -> dict:
        return {
            "tex": str(self.tex),
            "pdf": None if self.pdf is None else str(self.pdf),
            "figures": [str(p) for p in self.figures],
            "compiled": self.compiled,
            "message": self.message,
            "claims": self.claims,
            "verdicts": self.counts,
            "power": self.power,
            "notes": self.notes,
            "log": None if self.log is None else str(self.log),
            "constants": None if self.constants is None else str(self.constants),
        }


def _latex_env() -> dict:
    """The environment of the LaTeX run: pdfTeX may write only in the build directory and below."""
    env = {k: v for k, v in os.environ.items() if k not in ("TEXMFOUTPUT", "LATEXMKRCSYS")}
    env["openout_any"] = "p"
    return env


def run_latexmk(build: Path, latexmk: str) -> None:
    """Run ``latexmk`` on ``build/report.tex`` in ``build`` (rc files off, no shell escape); raises
    :class:`LatexError` with the first error line on failure, and when the log shows lost text (any
    overfull vbox, an overfull hbox over 5 pt: :func:`lipschitz_icl.report.latexlog.lost_text`)."""
    cmd = [
        latexmk,
        "-norc",
        "-pdf",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        "-pdflatex=pdflatex -no-shell-escape %O %S",
        "report.tex",
    ]
    try:
        proc = subprocess.run(
            cmd,
            cwd=build,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=LATEXMK_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=_latex_env(),
            check=False,  # the exit status is read below
        )
    except subprocess.TimeoutExpired:
        raise LatexError(f"latexmk did not finish within {LATEXMK_TIMEOUT} s") from None
    if proc.returncode != 0 or not (build / "report.pdf").is_file():
        first = next(
            (line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith(("!", "./"))),
            f"exit code {proc.returncode}",
        )
        raise LatexError(f"latexmk failed: {first.strip()}")
    log = build / "report.log"
    problems = lost_text(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else []
    if problems:
        more = f" (and {len(problems) - 1} more in report.log)" if len(problems) > 1 else ""
        raise LatexError(f"text does not fit the page: {problems[0]}{more}")


def _counts(claims: list) -> dict:
    return {v: n for v in VERDICTS if (n := sum(r["verdict"] == v for r in claims)) or v in STATISTICAL}


def build_report(claims_path, out_dir, *, compile_pdf: bool = True, force: bool = False) -> ReportResult:
    """Write ``report.tex``, ``constants.csv``, ``quantities.csv`` and ``figures/`` (and, with ``latexmk`` on
    PATH and ``compile_pdf``, ``report.pdf`` and ``report.log``) into ``out_dir`` from ``claims_path``.

    Without ``force`` an existing output file (a link, even a dangling one, counts) refuses the run
    before anything is written.  A failed compilation raises :class:`LatexError` after placing
    ``report.tex`` and ``report.log`` in ``out_dir`` for the reader."""
    data = load_claims(claims_path)
    out = out_directory(out_dir)
    latexmk = shutil.which("latexmk") if compile_pdf else None
    compiled_names = ["report.pdf", "report.log"] if latexmk else []
    check_targets(out, [*FIXED_OUTPUTS, *compiled_names], force)
    with tempfile.TemporaryDirectory(prefix="lipschitz-icl-report-") as tmp:
        build = Path(tmp)
        rendered = render_tex(data, build, source=Path(claims_path).name, claims_path=claims_path)
        (build / "report.tex").write_text(rendered.tex, encoding="utf-8")
        figures = [p.relative_to(build).as_posix() for p in rendered.figures]
        shipped = [p.relative_to(build).as_posix() for p in rendered.files]
        names = [*FIXED_OUTPUTS, *figures, *shipped]
        check_targets(out, [*names, *compiled_names], force)
        result = ReportResult(
            tex=out / "report.tex",
            pdf=None,
            figures=[out / f for f in figures],
            compiled=False,
            message="",
            power=rendered.power,
            counts=_counts(data["claims"]),
            claims=len(data["claims"]),
            notes=rendered.notes,
            constants=out / "constants.csv",
        )
        if latexmk is None:
            install(build, out, names, force)
            result.message = (
                f"wrote {result.tex} (compilation not requested)"
                if not compile_pdf
                else f"latexmk not found on PATH: wrote {result.tex} only (install latexmk and TeX Live "
                "with booktabs and siunitx to get report.pdf)"
            )
            return result
        try:
            run_latexmk(build, latexmk)
        except LatexError as exc:
            kept = [n for n in ("report.tex", "report.log") if (build / n).is_file()]
            install(build, out, kept, force)
            raise LatexError(f"{exc} (log: {out / 'report.log'})") from None
        install(build, out, [*names, *compiled_names], force)
    result.pdf, result.log, result.compiled = out / "report.pdf", out / "report.log", True
    result.message = f"wrote {result.tex} and {result.pdf}"
    return result
