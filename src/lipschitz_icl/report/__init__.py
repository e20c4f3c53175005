"""The LaTeX report built from ``claims.json`` (the records the pytest plugin writes).

``build_report(claims_path, out_dir)`` renders ``report.tex`` from the Jinja2 template
``templates/report.tex.j2`` (LaTeX-safe delimiters ``\\VAR{...}``, ``\\BLOCK{...}``; every printed
string is escaped unless it is already :class:`~lipschitz_icl.report.latex.Latex`), writes the figures
(:mod:`lipschitz_icl.report.figures`, :mod:`lipschitz_icl.paperfigs`) into ``out_dir/figures/`` and,
when ``latexmk`` is on ``PATH``, compiles ``report.pdf``.  The report holds, in the order a referee
reads it (structure: :mod:`lipschitz_icl.report.sections`, sections from ``claims/_sections.toml``):

* a summary: one row per claim group with the paper's statement, the confirmatory verdict counts,
  the exploratory ones apart, the project's sharper result (with the derived constants the records
  carry) and the resolutions;
* one section per group: its claims (status, rule, margin and its source, cases, verdicts,
  resolution, near misses refuted) and its figures, each with one quantity per axis: the cases of a
  claim that share their axes overlaid, and the paper's figures from the ``figures`` gates;
* an appendix with every case (verdict, resolution, near misses) and the compared numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..decision import STATISTICAL
from ..evidence import VERDICTS
from ..validation import ParameterError
from .figures import FigureDataError, data_figure
from .latex import Latex, as_float, breakable, escape, num
from .sections import Claim, SectionView, build_sections, near_misses, resolution_text, verdict_counts
from .schema import MAX_FILE_BYTES, reject_constant, validate_claims

MAX_SERIES = 8  # cases drawn in one overlaid figure
MAX_QUANTITY_ROWS = 8  # compared numbers printed per shown case in the appendix

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


def _quantity_row(claim_id: str, q: dict) -> dict:
    return {"claim_id": breakable(claim_id), "name": escape(q.get("name", "")),
            "theory": num(q.get("theory")),
            "measured": num(q.get("measured"), q.get("ci_low"), q.get("ci_high")),
            "verdict": escape(q.get("verdict") or "--")}


def _quantity_rows(record: dict) -> list[dict]:
    """The appendix rows of a case's compared numbers: at most :data:`MAX_QUANTITY_ROWS`, then one row
    saying how many more ``claims.json`` holds."""
    rows = [_quantity_row(record["claim_id"], q) for q in record.get("quantities", []) if isinstance(q, dict)]
    if len(rows) <= MAX_QUANTITY_ROWS:
        return rows
    more = {"claim_id": breakable(record["claim_id"]), "name": escape(f"... {len(rows) - MAX_QUANTITY_ROWS} more "
                                                                       "(claims.json)"),
            "theory": Latex(""), "measured": Latex(""), "verdict": Latex("")}
    return rows[:MAX_QUANTITY_ROWS] + [more]


def _slug(claim_id: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")[:40] or "claim"
    return f"{base}-{hashlib.sha256(claim_id.encode()).hexdigest()[:8]}"


def _case_label(claim: Claim, record: dict) -> str:
    """The part of a case's id that tells it from the claim's other cases (e.g. ``relu/d3``)."""
    parts = str(record["claim_id"]).split("/")
    return "/".join(p for p in parts[2:] if not p.startswith("seed")) or parts[-1]


def _first_seed(claim: Claim) -> list:
    return [r for r in claim.records if r.get("seed") in (None, 0)] or claim.records[:1]


def _pairs(items: list) -> list[list]:
    """``items`` two by two (the last alone when odd): figures set side by side."""
    return [items[i:i + 2] for i in range(0, len(items), 2)]


def _shown_cases(claim: Claim) -> list:
    """The cases whose compared numbers the appendix prints: the claim's first case, and every case
    that does not hold."""
    first = claim.records[0]
    return [first] + [r for r in claim.records[1:] if r.get("verdict") != "holds"]


def _specs(record: dict) -> list:
    spec = record.get("figure")
    return [] if spec is None else (spec if isinstance(spec, list) else [spec])


def _paper_figures(claim: Claim, fig_dir: Path, notes: list) -> tuple[list, list]:
    """The paper's figures a ``figures`` gate attached (``figure['name']`` in
    :data:`lipschitz_icl.paperfigs.RENDERERS`), rendered as PDF and PNG."""
    from .. import paperfigs

    figures, paths = [], []
    for record in _first_seed(claim):
        for spec in _specs(record):
            if not (isinstance(spec, dict) and spec.get("name") in paperfigs.RENDERERS):
                continue
            stem = _slug(f"{record['claim_id']}-{spec['name']}")
            try:
                files = paperfigs.write(paperfigs.render(spec), fig_dir, stem)
            except (KeyError, TypeError, ValueError) as exc:
                notes.append(f"figure {spec['name']} of {record['claim_id']}: {exc}")
                continue
            pdf = next(Path(f) for f in files if str(f).endswith(".pdf"))
            paths.extend(Path(f) for f in files)
            figures.append({"file": Latex(f"figures/{pdf.name}"), "wide": True,
                            "caption": escape(f"{record['claim_id']} ({record['verdict']}). "
                                              f"{paperfigs.caption(spec)}")})
    return figures, paths


def _overlay_specs(claim: Claim) -> list[tuple[tuple, list]]:
    """The single-quantity figure data of the claim's cases (first seed), grouped by axes
    ``(kind, xlabel, ylabel)``: one series per case (a case's own series keep their labels)."""
    groups: dict[tuple, list] = {}
    for record in _first_seed(claim):
        label = _case_label(claim, record)
        for spec in _specs(record):
            if not isinstance(spec, dict) or "name" in spec:
                continue
            axes = (spec.get("kind", "line"), str(spec.get("xlabel", "")), str(spec.get("ylabel", "")))
            inner = spec.get("series") if isinstance(spec.get("series"), list) else [spec]
            for s in inner:
                if isinstance(s, dict):
                    sub = s.get("label")
                    groups.setdefault(axes, []).append({**s, "label": f"{label} {sub}" if sub and s is not spec
                                                        else label})
    return list(groups.items())


def _claim_figures(claim: Claim, fig_dir: Path, notes: list) -> tuple[list, list]:
    """One figure per set of axes of the claim: the cases' series overlaid (at most
    :data:`MAX_SERIES`), or the paper's figures the claim carries."""
    figures, paths = _paper_figures(claim, fig_dir, notes)
    for i, ((kind, xlabel, ylabel), series) in enumerate(_overlay_specs(claim)):
        shown = series[:MAX_SERIES]
        path = fig_dir / f"{_slug(claim.key)}-{i + 1}.pdf"
        spec = {"kind": kind, "xlabel": xlabel, "ylabel": ylabel, "series": shown, "title": claim.key}
        try:
            data_figure(spec, path, title=claim.key)
        except FigureDataError as exc:
            notes.append(f"figure {i + 1} of {claim.key}: {exc}")
            continue
        paths.append(path)
        more = f" ({len(series) - len(shown)} further cases not drawn)" if len(series) > len(shown) else ""
        figures.append({"file": Latex(f"figures/{path.name}"), "wide": False,
                        "caption": escape(f"{claim.key}: {ylabel} against {xlabel}, one series per case{more} "
                                          "(dashed: theory or bound).")})
    return figures, paths


def _derived_text(claim: Claim) -> str:
    """The derived constants the claim's records carry (``extra['derived']``), case by case."""
    parts = []
    for record in _first_seed(claim):
        derived = (record.get("extra") or {}).get("derived")
        if isinstance(derived, dict) and derived:
            values = ", ".join(f"{k} {as_float(v):.4g}" for k, v in derived.items() if as_float(v) is not None)
            parts.append(f"{_case_label(claim, record)}: {values}")
    return "; ".join(parts)


def _claim_row(claim: Claim) -> dict:
    conf = verdict_counts(claim.records, claim.status)
    refuted, total = near_misses(claim.records)
    return {"name": escape(claim.name), "status": escape(claim.status), "rule": escape(claim.rule),
            "margin": escape(claim.margin), "margin_source": escape(claim.margin_source),
            "cases": len(claim.records), "holds": conf["holds"], "fails": conf["fails"],
            "inconclusive": conf["inconclusive"], "resolution": escape(resolution_text(claim.records)),
            "near_misses": escape(f"{refuted}/{total}"),
            "reason": escape((claim.records[0].get("extra") or {}).get("exploratory_reason", ""))}


def _summary_row(view: SectionView) -> dict:
    conf = verdict_counts(view.records, "confirmatory")
    expl = verdict_counts(view.records, "exploratory")
    n_expl = sum(expl.values())
    derived = "; ".join(t for t in (_derived_text(c) for c in view.claims) if t)
    resolutions = "; ".join(f"{c.name} {resolution_text(c.records, with_parameter=False)}" for c in view.claims
                            if c.status == "confirmatory")
    return {"name": escape(view.name), "statement": escape(view.statement), "holds": conf["holds"],
            "fails": conf["fails"], "inconclusive": conf["inconclusive"],
            "exploratory": escape(f"{n_expl} ({expl['holds']} hold)" if n_expl else "--"),
            "sharper": escape(view.sharper + (f" [derived: {derived}]" if derived else "") or "--"),
            "resolution": escape(resolutions or "--")}


def _case_row(record: dict) -> dict:
    refuted, total = near_misses([record])
    seconds = as_float(record.get("seconds"))
    return {"claim_id": breakable(record["claim_id"]), "verdict": escape(record["verdict"]),
            "status": escape("expl." if record.get("status") == "exploratory" else ""),
            "resolution": escape(resolution_text([record])), "near_misses": escape(f"{refuted}/{total}"),
            "seconds": escape(f"{seconds:.1f}" if seconds is not None else "--")}


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
    views = build_sections(claims)
    sections = []
    for view in views:
        figures = []
        for claim in view.claims:
            found, paths = _claim_figures(claim, fig_dir, notes)
            figures.extend(found)
            figure_paths.extend(paths)
        sections.append({"name": escape(view.name), "paper_ref": escape(view.paper_ref),
                         "statement": escape(view.statement), "sharper": escape(view.sharper),
                         "claims": [_claim_row(c) for c in view.claims],
                         "wide_figures": [f for f in figures if f["wide"]],
                         "figure_pairs": _pairs([f for f in figures if not f["wide"]]),
                         "appendix": [{"key": escape(c.key), "statement": escape(c.records[0].get("statement", "")),
                                       "cases": [_case_row(r) for r in c.records],
                                       "quantities": [row for r in _shown_cases(c) for row in _quantity_rows(r)]}
                                      for c in view.claims]})
    conf = verdict_counts(claims, "confirmatory")
    expl = verdict_counts(claims, "exploratory")
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
        profile=str(data.get("profile", "?")), source=source, n_claims=len(claims), confirmatory=conf,
        exploratory=expl, n_exploratory=sum(expl.values()), power=power,
        summary=[_summary_row(v) for v in views], sections=sections, notes=[escape(n) for n in notes])
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
    counts = {v: n for v in VERDICTS if (n := sum(r["verdict"] == v for r in data["claims"]))
              or v in STATISTICAL}
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
