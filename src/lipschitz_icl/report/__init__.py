"""The LaTeX report built from ``claims.json`` (the records the pytest plugin writes).

``build_report(claims_path, out_dir)`` renders ``report.tex`` from the Jinja2 template
``templates/report.tex.j2`` (LaTeX-safe delimiters ``\\VAR{...}``, ``\\BLOCK{...}``; every printed
string is escaped unless it is already :class:`~lipschitz_icl.report.latex.Latex`), writes the figures
(:mod:`lipschitz_icl.report.figures`) into ``out_dir/figures/`` and, when ``latexmk`` is on ``PATH``,
compiles ``report.pdf``.  The report holds:

* a summary (verdict counts, false variants refuted in total);
* one table of every compared number: theory, measured with its uncertainty (``siunitx``
  ``\\num{1.234(5)}``), ratio measured/theory (with the interval's uncertainty), verdict;
* the power table (:func:`power_summary`): false variants refuted per claim and in total;
* a section per claim: statement, paper reference, decision rule, verdict, its further numbers
  (``extra``), its quantities, its false variants and its figures (measured against theory with intervals; plus any ``figure`` data a gate
  attached to its record).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..evidence import VERDICTS
from ..validation import ParameterError
from .figures import FigureDataError, data_figure, quantities_figure
from .latex import Latex, as_float, breakable, escape, num
from .schema import MAX_FILE_BYTES, reject_constant, validate_claims

__all__ = ["build_report", "load_claims", "power_summary", "render_tex", "ReportResult", "LATEXMK_TIMEOUT"]

LATEXMK_TIMEOUT = 600


@dataclass
class ReportResult:
    """What :func:`build_report` produced: paths, whether latexmk ran, and a one-line message."""

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

    def as_dict(self) -> dict:
        return {"tex": str(self.tex), "pdf": None if self.pdf is None else str(self.pdf),
                "figures": [str(p) for p in self.figures], "compiled": self.compiled, "message": self.message,
                "claims": self.claims, "verdicts": self.counts, "power": self.power, "notes": self.notes,
                "log": None if self.log is None else str(self.log)}


def load_claims(path) -> dict:
    """Read ``claims.json`` (a regular file of at most 64 MiB) and check it against the schema of
    :mod:`lipschitz_icl.report.schema`.  Problems raise :class:`ParameterError` (parameter ``claims``)."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError("claims", "an existing claims.json file (run `pytest verify/` first)", str(path))
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())[:120]
        raise ParameterError("claims", f"a readable JSON file ({type(exc).__name__}: {reason})", str(path)) from None
    return validate_claims(data, str(path))


def _power(record: dict) -> tuple[int, int, list[str]]:
    variants = [v for v in record.get("false_variants", []) if isinstance(v, dict)]
    unrefuted = [str(v.get("name", "?")) for v in variants if v.get("verdict") != "fails"]
    if variants or not isinstance(record.get("power"), list):
        return len(variants) - len(unrefuted), len(variants), unrefuted
    refuted, total = (int(x) for x in record["power"][:2])
    return refuted, total, []


def power_summary(claims: list[dict]) -> dict:
    """False variants refuted per claim and in total (the target is all of them).

    Returns ``{"rows": [{claim_id, refuted, total, unrefuted}], "refuted", "total", "all_refuted",
    "claims_without_false_variants"}``; a claim's counts come from its ``false_variants`` (a variant
    counts as refuted when its verdict is ``fails``), else from its ``power`` pair.
    """
    rows = []
    for record in claims:
        refuted, total, unrefuted = _power(record)
        rows.append({"claim_id": record["claim_id"], "refuted": refuted, "total": total, "unrefuted": unrefuted})
    refuted = sum(r["refuted"] for r in rows)
    total = sum(r["total"] for r in rows)
    return {"rows": rows, "refuted": refuted, "total": total, "all_refuted": refuted == total,
            "claims_without_false_variants": [r["claim_id"] for r in rows if r["total"] == 0]}


def _ratio_cell(q: dict) -> Latex:
    theory, lo, hi = as_float(q.get("theory")), as_float(q.get("ci_low")), as_float(q.get("ci_high"))
    ratio = as_float(q.get("ratio"))
    if ratio is None:
        measured = as_float(q.get("measured"))
        if measured is None or not theory:
            return Latex("--")
        ratio = measured / theory
    if theory and theory > 0 and lo is not None and hi is not None:
        return num(ratio, lo / theory, hi / theory)
    return num(ratio)


def _quantity_row(claim_id: str, q: dict) -> dict:
    return {"claim_id": breakable(claim_id), "name": escape(q.get("name", "")),
            "theory": num(q.get("theory")),
            "measured": num(q.get("measured"), q.get("ci_low"), q.get("ci_high")),
            "ratio": _ratio_cell(q), "verdict": escape(q.get("verdict") or "--")}


def _extra_value(value) -> Latex:
    """A further number of a record: a number via ``num``, a list of numbers to 4 significant digits,
    anything else as its JSON text (escaped)."""
    if as_float(value) is not None:
        return num(value)
    if isinstance(value, list) and value and all(as_float(v) is not None for v in value):
        return escape(", ".join(f"{as_float(v):.4g}" for v in value))
    return escape(json.dumps(value))


def _slug(claim_id: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")[:40] or "claim"
    return f"{base}-{hashlib.sha256(claim_id.encode()).hexdigest()[:8]}"


def _figures(record: dict, fig_dir: Path, notes: list[str]) -> tuple[list[dict], list[str], list[Path]]:
    slug = _slug(record["claim_id"])
    figures, figure_notes, paths = [], [], []
    path = fig_dir / f"{slug}-quantities.pdf"
    if quantities_figure(record, path):
        paths.append(path)
        figures.append({"file": Latex(f"figures/{path.name}"),
                        "caption": escape(f"{record['claim_id']}: measured (with interval) against theory "
                                          "for each compared quantity.")})
    specs = record.get("figure")
    specs = [] if specs is None else (specs if isinstance(specs, list) else [specs])
    for i, spec in enumerate(specs):
        path = fig_dir / f"{slug}-data{i + 1}.pdf"
        try:
            data_figure(spec, path, title=record["claim_id"])
        except FigureDataError as exc:
            message = f"figure {i + 1} of {record['claim_id']}: {exc}"
            figure_notes.append(escape(message))
            notes.append(message)
            continue
        paths.append(path)
        caption = spec.get("caption") or spec.get("title") or f"{record['claim_id']}: figure data of the gate."
        figures.append({"file": Latex(f"figures/{path.name}"), "caption": escape(caption)})
    return figures, figure_notes, paths


def render_tex(data: dict, out_dir, source: str = "claims.json") -> tuple[str, list[Path], list[str], dict]:
    """Render the report's LaTeX source from claims ``data``; writes figures to ``out_dir/figures``.

    Returns ``(tex, figure paths, notes, power summary)``.
    """
    import jinja2

    out_dir = Path(out_dir)
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    claims = data["claims"]
    power = power_summary(claims)
    notes: list[str] = []
    figure_paths: list[Path] = []
    table_rows, sections = [], []
    for record, prow in zip(claims, power["rows"]):
        rows = [_quantity_row(record["claim_id"], q) for q in record.get("quantities", []) if isinstance(q, dict)]
        table_rows.extend(rows)
        figures, figure_notes, paths = _figures(record, fig_dir, notes)
        figure_paths.extend(paths)
        if prow["total"] == 0:
            power_text = "none kept (the gate's power is not shown)"
        else:
            power_text = f"{prow['refuted']} of {prow['total']} refuted"
            if prow["unrefuted"]:
                power_text += "; not refuted: " + ", ".join(prow["unrefuted"])
        seconds = as_float(record.get("seconds"))
        sections.append({
            "claim_id": escape(record["claim_id"]), "paper_ref": escape(record.get("paper_ref", "")),
            "statement": escape(record.get("statement", "")), "rule": escape(record.get("rule", "")),
            "verdict": escape(record["verdict"]), "seconds": escape(f"{seconds:.2f}" if seconds is not None else "--"),
            "test": escape(record.get("test", "")), "power_text": escape(power_text),
            "quantities": [{k: v for k, v in r.items() if k != "claim_id"} for r in rows],
            "false_variants": [{"name": escape(v.get("name", "")), "verdict": escape(v.get("verdict", "")),
                                "detail": escape(v.get("detail", ""))}
                               for v in record.get("false_variants", []) if isinstance(v, dict)],
            "figures": figures, "figure_notes": figure_notes,
            "extra": [{"key": escape(k), "value": _extra_value(v)}
                      for k, v in (record.get("extra") or {}).items()] if isinstance(record.get("extra"), dict) else [],
        })
    power_rows = [{"claim_id": breakable(r["claim_id"]), "refuted": r["refuted"], "total": r["total"],
                   "unrefuted_text": escape(", ".join(r["unrefuted"]) if r["unrefuted"]
                                            else ("--" if r["total"] else "none kept"))}
                  for r in power["rows"]]
    counts = {v: sum(r["verdict"] == v for r in claims) for v in VERDICTS}
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("lipschitz_icl.report", "templates"),
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=lambda value: value if isinstance(value, Latex) else escape(value),
    )
    tex = env.get_template("report.tex.j2").render(
        title="lipschitz-icl: claims of Softmax Attention Adapts to Function Lipschitzness",
        profile=str(data.get("profile", "?")), source=source, n_claims=len(claims), counts=counts,
        power={**power, "rows": power_rows}, table_rows=table_rows, claims=sections)
    return tex, figure_paths, notes, power


def build_report(claims_path, out_dir, *, compile_pdf: bool = True) -> ReportResult:
    """Write ``out_dir/report.tex`` (and figures) from ``claims_path``; compile ``report.pdf`` with
    ``latexmk`` when it is on PATH (and ``compile_pdf``).  A failed compilation raises
    :class:`RuntimeError` naming the log file."""
    data = load_claims(claims_path)
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise ParameterError("out", "a directory that can be created", str(out_dir)) from None
    tex_path = out_dir / "report.tex"
    if not out_dir.is_dir() or tex_path.is_dir() or (out_dir / "figures").is_file():
        raise ParameterError("out", "a directory where report.tex and figures/ can be written", str(out_dir))
    tex, figures, notes, power = render_tex(data, out_dir, source=Path(claims_path).name)
    try:
        tex_path.write_text(tex, encoding="utf-8")
    except OSError as exc:
        raise ParameterError("out", f"a writable directory ({exc.strerror})", str(out_dir)) from None
    counts = {v: sum(r["verdict"] == v for r in data["claims"]) for v in VERDICTS}
    result = ReportResult(tex_path, None, figures, False, "", power, counts, len(data["claims"]), notes)
    latexmk = shutil.which("latexmk")
    if not compile_pdf:
        result.message = f"wrote {tex_path} (compilation not requested)"
        return result
    if latexmk is None:
        result.message = (f"latexmk not found on PATH: wrote {tex_path} only (install latexmk and TeX Live with "
                          "booktabs and siunitx to get report.pdf)")
        return result
    cmd = [latexmk, "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error", "report.tex"]
    try:
        proc = subprocess.run(cmd, cwd=out_dir, capture_output=True, encoding="utf-8", errors="replace",
                              timeout=LATEXMK_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"latexmk did not finish within {LATEXMK_TIMEOUT} s (log: {out_dir / 'report.log'})") \
            from None
    result.log = out_dir / "report.log"
    pdf = out_dir / "report.pdf"
    if proc.returncode != 0 or not pdf.is_file():
        first = next((line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith(("!", "./"))),
                     f"exit code {proc.returncode}")
        raise RuntimeError(f"latexmk failed: {first.strip()} (log: {result.log})")
    result.pdf, result.compiled = pdf, True
    result.message = f"wrote {tex_path} and {pdf}"
    return result
