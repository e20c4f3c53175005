"""The report's LaTeX source from ``claims.json``: the page plan (docs/report.md) filled in.

:func:`render_tex` writes the figures into ``out_dir/figures/`` and the tables ``constants.csv``,
``quantities.csv`` and ``cases.csv`` into ``out_dir``, and returns the LaTeX text rendered from the
Jinja2 template ``templates/report.tex.j2`` (LaTeX-safe delimiters ``\\VAR{...}``, ``\\BLOCK{...}``; every
printed string is escaped unless it is already :class:`~lipschitz_icl.report.latex.Latex`).

Work is bounded whatever the file holds: at most :data:`MAX_FIGURES` figures (one per claim group and
the paper's figures, in order; the rest are named in the notes), at most :data:`MAX_SERIES` cases per
figure, the constants and case tables print at most :data:`MAX_TABLE_ROWS` rows each (the CSV files
hold all), and page 1's box names at most :data:`MAX_NOT_HOLDING` cases; the text says so when a list
is cut.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from lipschitz_icl.gates import registry
from lipschitz_icl.report.constants import constant_rows, constants_csv
from lipschitz_icl.report.figures import FigureDataError, Panel, axis_labels, data_figure, parse_series
from lipschitz_icl.report.figures import paper as paperfigs
from lipschitz_icl.report.latex import Latex, as_float, breakable, escape, num
from lipschitz_icl.report.mathtext import code, to_latex, to_mathtext
from lipschitz_icl.report.provenance import provenance
from lipschitz_icl.report.quantities import quantities_csv
from lipschitz_icl.report.scope import case_params, record_scope, setting_text
from lipschitz_icl.report.sections import Claim, SectionView, build_sections, near_misses, verdict_counts
from lipschitz_icl.report.style import FULL_WIDTH
from lipschitz_icl.report.summary import caveats, headline, not_holding, scope_rows
from lipschitz_icl.report.symbols import RESOLUTIONS, figure_axes, rename_for, resolution_symbol

__all__ = ["render_tex", "Rendered", "power_summary", "MAX_FIGURES", "MAX_SERIES", "MAX_TABLE_ROWS", "cases_csv"]

MAX_FIGURES = 24
MAX_SERIES = 8
MAX_TABLE_ROWS = 400
MAX_NOT_HOLDING = 30  # cases named in page 1's box (a box cannot break across pages); the rest: Appendix A
MEASURED_DIGITS = 7  # significant digits of a measured constant at most (the CSV has them all)
REASON_CLIP = 240  # characters of an exploratory reason printed in a section


@dataclass
class Rendered:
    """What :func:`render_tex` produced."""

    tex: str
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    power: dict = field(default_factory=dict)
    constants: list = field(default_factory=list)


# ----------------------------------------------------------------------------- power (alternatives ruled out)
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
    return {
        "rows": rows,
        "refuted": refuted,
        "total": total,
        "all_refuted": refuted == total,
        "claims_without_false_variants": [r["claim_id"] for r in rows if r["total"] == 0],
    }


# ----------------------------------------------------------------------------- resolutions
def resolution_of(records: list) -> dict:
    """``{symbol, value, meaning}`` (LaTeX) over the records' resolutions: the symbol and meaning the
    records carry, else :func:`lipschitz_icl.report.symbols.resolution_symbol`; the value a range when
    the cases differ, ``not reached`` when the rule refuted nothing up to its limit."""
    found = [r["resolution"] for r in records if isinstance(r.get("resolution"), dict)]
    if not found:
        return {"symbol": Latex("--"), "value": Latex(""), "meaning": Latex("")}
    own = next((r for r in found if isinstance(r.get("meaning"), str) and r["meaning"]), None)
    parameter = str(found[0].get("parameter", ""))
    symbol, mapped = resolution_symbol(parameter)
    symbol = next((r["symbol"] for r in found if isinstance(r.get("symbol"), str) and r["symbol"]), symbol)
    if own is not None:
        meaning = to_latex(own["meaning"])
    else:  # the mapping's meanings are LaTeX; an unknown parameter's own words are text
        meaning = Latex(mapped) if parameter in RESOLUTIONS else to_latex(parameter)
    values = [v for v in (as_float(r.get("value")) for r in found) if v is not None and math.isfinite(v)]
    unreached = len(found) - len(values)
    if values:
        lo, hi = min(values), max(values)
        value = (
            num(lo, digits=2)
            if math.isclose(lo, hi, rel_tol=0.05)
            else Latex(num(lo, digits=2) + "--" + num(hi, digits=2))
        )
        if unreached:
            value = Latex(value + escape(f" ({unreached} not reached)"))
    else:
        value = Latex("not reached")
    return {"symbol": Latex(f"${_math_symbol(symbol)}$"), "value": value, "meaning": meaning}


def _math_symbol(symbol: str) -> str:
    """A symbol from the records or the mapping, made safe inside ``$...$`` (only LaTeX commands, letters,
    digits and ``^_{}()*'+-/,.|`` pass; anything else is dropped)."""
    return re.sub(r"[^A-Za-z0-9\\^_{}()*'+\-/,.| ]", "", symbol)


# ----------------------------------------------------------------------------- figures
def _slug(text: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "figure"
    return f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _specs(record: dict) -> list:
    spec = record.get("figure")
    return [] if spec is None else (spec if isinstance(spec, list) else [spec])


def _first_seed(claim: Claim) -> list:
    return [r for r in claim.records if r.get("seed") in (None, 0)] or claim.records[:1]


def case_label(record: dict) -> str:
    """A case's setting as a label, e.g. ``ReLU, d = 3`` (ASCII math)."""
    params = case_params(record)
    return ", ".join(setting_text(k, [v]) for k, v in params.items()) or str(record["claim_id"]).split("/")[-1]


def _claim_panels(claim: Claim) -> list[Panel]:
    """Up to two panels of the claim's own figure data: one per set of axes, the cases (first seed) as
    series, each labelled with its setting; the series of a single case keep their own labels."""
    groups: dict[tuple, list] = {}
    order = []
    first = _first_seed(claim)
    for record in first:
        for spec in _specs(record):
            if not isinstance(spec, dict) or "name" in spec:
                continue
            axes = (spec.get("kind", "line"), str(spec.get("xlabel", "")), str(spec.get("ylabel", "")))
            if axes not in groups:
                groups[axes] = []
                order.append((axes, spec))
            own = isinstance(spec.get("series"), list)
            for s in parse_series(spec):
                raw = s["label"]
                if own and len(first) == 1:
                    s["label"] = None if raw is None else to_mathtext(raw)
                else:  # typeset apart: math drops the space before the parenthesis
                    s["label"] = to_mathtext(case_label(record)) + (f" ({to_mathtext(raw)})" if own and raw else "")
                groups[axes].append(s)
    panels = []
    for axes, spec in order[:2]:
        mapped = figure_axes(claim.key, axes[2])
        xlabel, ylabel, theory = axis_labels(spec)
        panels.append(
            Panel(
                axes[0],
                mapped.get("xlabel") or xlabel,
                mapped.get("ylabel") or ylabel,
                groups[axes][:MAX_SERIES],
                theory_label=mapped.get("theory") or theory,
                transform=mapped.get("transform"),
                log_y=bool(mapped.get("log_y")),
                dodge=bool(mapped.get("dodge")),
            )
        )
    return panels


def _statement(claim: Claim) -> str:
    """The claim's statement as the registry words it (the record's own where the registry has none)."""
    try:
        return registry.find(claim.key).statement
    except KeyError:
        return str(claim.records[0].get("statement", ""))


def _caption_head(claim: Claim) -> str:
    counts = verdict_counts(claim.records, claim.status)
    shown = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    scope = record_scope(claim.records[0])
    return f"{claim.key} ({scope}, {claim.status}: {shown})"


def _group_figure(view: SectionView, fig_dir: Path, notes: list) -> dict | None:
    """The section's one figure: the first claim with figure data of its own."""
    for claim in view.claims:
        try:
            panels = _claim_panels(claim)
        except FigureDataError as exc:
            notes.append(f"figure of {claim.key}: {exc}")
            continue
        if not panels:
            continue
        path = fig_dir / f"{_slug(claim.key)}.pdf"
        try:
            data_figure(panels, path, width=FULL_WIDTH, height=2.2)
        except FigureDataError as exc:
            notes.append(f"figure of {claim.key}: {exc}")
            continue
        n_cases = len(_first_seed(claim))
        more = f" ({n_cases - MAX_SERIES} further cases not drawn)" if n_cases > MAX_SERIES else ""
        mark = "Dashes" if panels[0].kind == "scatter" else "Dashed"
        theory = (
            f" {mark}: " + panels[0].theory_label + "."
            if any(s["theory_y"] is not None for p in panels for s in p.series)
            else ""
        )
        caption = Latex(
            escape(_caption_head(claim) + ": ")
            + to_latex(_statement(claim), rename=rename_for(claim.key))
            + escape(f" One series per case{more}.")
            + _mathtext_to_latex(theory)
        )
        return {"file": Latex(f"figures/{path.name}"), "caption": caption, "path": path}
    return None


def _mathtext_to_latex(text: str) -> Latex:
    """A label written for matplotlib (mathtext between ``$``) as LaTeX: text escaped, math kept."""
    parts = re.split(r"(?<!\\)(\$[^$]*\$)", text)
    return Latex(
        "".join(
            p if p.startswith("$") and p.endswith("$") and len(p) > 1 else escape(p.replace(r"\$", "$")) for p in parts
        )
    )


def _has_paper_figures(view: SectionView) -> bool:
    return any(
        isinstance(s, dict) and s.get("name") in paperfigs.RENDERERS
        for c in view.claims
        for r in _first_seed(c)[:1]
        for s in _specs(r)
    )


def _paper_figures(view: SectionView, fig_dir: Path, notes: list, limit: int) -> list[dict]:
    """The paper's figures a ``figures`` gate attached (at most ``limit``), rendered as PDF (and PNG)."""
    out: list[dict] = []
    for claim in view.claims:
        if len(out) >= limit:
            notes.append(f"figures of {claim.key} not drawn: the report draws at most {MAX_FIGURES} figures")
            continue
        for record in _first_seed(claim)[:1]:
            for spec in _specs(record):
                if not (isinstance(spec, dict) and spec.get("name") in paperfigs.RENDERERS):
                    continue
                stem = _slug(f"{record['claim_id']}-{spec['name']}")
                try:
                    paths = paperfigs.write(paperfigs.render(spec), fig_dir, stem)
                except FigureDataError as exc:
                    notes.append(f"figure {spec['name']} of {record['claim_id']}: {exc}")
                    continue
                number = paperfigs.PAPER_NUMBERS.get(spec["name"], "?")
                ref = "paper Fig. " + number if number != "rebuttal" else "the rebuttal's figure"
                rename = rename_for(claim.key)
                caption = Latex(
                    escape(f"({ref}) {_caption_head(claim)}: ")
                    + to_latex(_statement(claim), rename=rename)
                    + escape(" Settings: ")
                    + to_latex(paperfigs.caption(spec), rename=rename)
                )
                out.append(
                    {
                        "file": Latex(f"figures/{Path(paths[0]).name}"),
                        "caption": caption,
                        "paths": [Path(p) for p in paths],
                    }
                )
    return out


# ----------------------------------------------------------------------------- tables
def _counts_cell(counts: dict) -> Latex:
    main = f"{counts['holds']}/{counts['fails']}/{counts['inconclusive']}"
    extra = "".join(f", {counts[v]} {v}" for v in ("proved", "refuted", "undecided") if counts.get(v))
    return escape(main + extra)


def _claim_row(claim: Claim) -> dict:
    refuted, total = near_misses(claim.records)
    res = resolution_of(claim.records)
    return {
        "name": escape(claim.name),
        "scope": escape(record_scope(claim.records[0])),
        "status": escape("expl." if claim.status == "exploratory" else "conf."),
        "rule": escape(claim.rule),
        "cases": len(claim.records),
        "counts": _counts_cell(verdict_counts(claim.records, claim.status)),
        "symbol": res["symbol"],
        "value": res["value"],
        "meaning": res["meaning"],
        "near_misses": escape(f"{refuted}/{total}"),
    }


def _section_notes(view: SectionView) -> list[Latex]:
    notes = []
    for claim in view.claims:
        reason = (claim.records[0].get("extra") or {}).get("exploratory_reason", "")
        if claim.status == "exploratory" and reason:
            clipped = reason if len(reason) <= REASON_CLIP else reason[:REASON_CLIP].rsplit(" ", 1)[0] + " ..."
            notes.append(
                Latex(
                    r"\textit{"
                    + escape(claim.name)
                    + "} is exploratory: "
                    + to_latex(clipped, rename=rename_for(claim.key))
                )
            )
        notes.extend(caveats(claim.records))
    return notes


def _case_row(number: int, record: dict) -> dict:
    refuted, total = near_misses([record])
    seconds = as_float(record.get("seconds"))
    res = resolution_of([record])
    verdict = record.get("verdict", "")
    if verdict == "holds" and isinstance(record.get("points"), int):
        verdict = f"holds at {record['points']} points"
    return {
        "number": number,
        "claim_id": breakable(record["claim_id"]),
        "verdict": escape(verdict),
        "scope": escape(record_scope(record)),
        "status": escape("expl." if record.get("status") == "exploratory" else "conf."),
        "resolution": Latex(res["symbol"] + " " + res["value"]) if res["value"] else Latex("--"),
        "near_misses": escape(f"{refuted}/{total}"),
        "seconds": escape(f"{seconds:.1f}" if seconds is not None else "--"),
    }


def _constant_row(row) -> dict:
    setting = ", ".join(setting_text(k, [v]) for k, v in row.setting.items())
    rel = (
        num(row.rel_dev, row.rel_dev_low, row.rel_dev_high, digits=3, compact=True, max_digits=4)
        if row.rel_dev is not None
        else Latex("--")
    )
    constant = Latex(row.constant) if row.source != "claims.json" else to_latex(row.constant)
    return {
        "number": row.case,
        "constant": constant,
        "symbol": Latex(f"${_math_symbol(row.symbol)}$") if row.symbol else Latex("--"),
        "setting": to_latex(setting),
        "theory": num(row.theory),
        "measured": num(row.measured, row.ci_low, row.ci_high, compact=True, max_digits=MEASURED_DIGITS),
        "rel": rel,
        "margin": to_latex(row.margin) if row.margin else Latex("--"),
        "verdict": escape(row.verdict),
    }


def cases_csv(records: list, numbers: dict) -> str:
    """``cases.csv``: one row per case (number, id, key, scope, status, verdict, resolution, near misses,
    seconds)."""
    import csv
    import io

    from lipschitz_icl.report.constants import csv_cell

    buffer = io.StringIO()
    fields = (
        "case",
        "claim_id",
        "key",
        "scope",
        "status",
        "verdict",
        "resolution_parameter",
        "resolution",
        "alternatives_ruled_out",
        "alternatives",
        "seconds",
    )
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for record in records:
        res = record.get("resolution") if isinstance(record.get("resolution"), dict) else {}
        refuted, total = near_misses([record])
        row = {
            "case": numbers[record["claim_id"]],
            "claim_id": record["claim_id"],
            "key": record.get("key", ""),
            "scope": record_scope(record),
            "status": record.get("status", "confirmatory"),
            "verdict": record["verdict"],
            "resolution_parameter": res.get("parameter", ""),
            "resolution": res.get("value", ""),
            "alternatives_ruled_out": refuted,
            "alternatives": total,
            "seconds": record.get("seconds", ""),
        }
        writer.writerow({k: ("" if v is None else csv_cell(v)) for k, v in row.items()})
    return buffer.getvalue()


def _margins(views: list[SectionView]) -> list[dict]:
    out = []
    for view in views:
        for claim in view.claims:
            record = claim.records[0]
            rename = rename_for(claim.key)
            out.append(
                {
                    "key": code(claim.key),
                    "margin": to_latex(str(record.get("margin") or "--"), rename=rename),
                    "source": to_latex(str(record.get("margin_source") or "--"), rename=rename),
                }
            )
    return out


def _design_history(data: dict) -> list[dict]:
    """The lock's events, one row per (salt, date, commit, reason): the claims locked together, each with
    the first 8 hex digits of its design hash (the whole hash is in ``claims.json``)."""
    history = data.get("design_history")
    if not isinstance(history, list):
        return []
    groups: dict[tuple, list[dict]] = {}
    for h in (h for h in history if isinstance(h, dict)):
        event = tuple(str(h.get(field, "")) for field in ("salt", "fixed", "commit", "reason"))
        groups.setdefault(event, []).append(h)
    return [
        {
            "claims": Latex(
                ", ".join(
                    f"{breakable(str(h.get('key', '')))} ({code(str(h.get('design_hash', ''))[:8])})" for h in members
                )
            ),
            "salt": escape(salt),
            "fixed": escape(fixed),
            "commit": escape(commit[:7]),
            "reason": to_latex(reason),
        }
        for (salt, fixed, commit, reason), members in groups.items()
    ]


# ----------------------------------------------------------------------------- the document
def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("lipschitz_icl.report", "templates"),
        block_start_string=r"\BLOCK{",
        block_end_string="}",
        variable_start_string=r"\VAR{",
        variable_end_string="}",
        comment_start_string=r"\#{",
        comment_end_string="}",
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=lambda value: value if isinstance(value, Latex) else escape(value),
    )


def render_tex(data: dict, out_dir, source: str = "claims.json", claims_path=None) -> Rendered:
    """Render the report (module docstring) from claims ``data`` into ``out_dir``."""
    out_dir = Path(out_dir)
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    claims = data["claims"]
    views = build_sections(claims)
    ordered = [r for v in views for r in v.records]
    numbers = {r["claim_id"]: i + 1 for i, r in enumerate(ordered)}
    prov = provenance(data, claims_path)
    rows = constant_rows(ordered, numbers)
    (out_dir / "constants.csv").write_text(constants_csv(rows), encoding="utf-8")
    (out_dir / "quantities.csv").write_text(quantities_csv(ordered, numbers), encoding="utf-8")
    (out_dir / "cases.csv").write_text(cases_csv(ordered, numbers), encoding="utf-8")
    notes: list[str] = []
    figure_paths: list[Path] = []
    sections = []
    drawn = 0
    for view in views:
        if drawn >= MAX_FIGURES:
            figures = []
            notes.append(f"figures of {view.name} not drawn: the report draws at most {MAX_FIGURES} figures")
        elif _has_paper_figures(view):
            figures = _paper_figures(view, fig_dir, notes, MAX_FIGURES - drawn)
            figure_paths.extend(p for f in figures for p in f["paths"])
        else:
            found = _group_figure(view, fig_dir, notes)
            figures = [found] if found else []
            figure_paths.extend(f["path"] for f in figures)
        drawn += len(figures)
        rename = rename_for(view.claims[0].key)
        sections.append(
            {
                "name": escape(view.name),
                "paper_ref": escape(view.paper_ref),
                "statement": to_latex(view.statement, rename=rename),
                "sharper": to_latex(view.sharper, rename=rename) if view.sharper else Latex(""),
                "claims": [_claim_row(c) for c in view.claims],
                "notes": _section_notes(view),
                "figures": figures,
            }
        )
    power = power_summary(claims)
    env = _environment()
    tex = env.get_template("report.tex.j2").render(
        title="Softmax attention adapts to function Lipschitzness: the claims, checked",
        source=source,
        n_cases=len(claims),
        head=headline(claims, prov),
        prov=prov,
        provenance_derived=", ".join(prov.derived),
        not_holding=not_holding(claims, numbers)[:MAX_NOT_HOLDING],
        not_holding_count=len(not_holding(claims, numbers)),
        scopes=scope_rows(views),
        sections=sections,
        constants=[_constant_row(r) for r in rows[:MAX_TABLE_ROWS]],
        constants_cut=max(len(rows) - MAX_TABLE_ROWS, 0),
        n_constants=len(rows),
        fallback=any(r.source != "claims.json" for r in rows),
        cases=[_case_row(numbers[r["claim_id"]], r) for r in ordered[:MAX_TABLE_ROWS]],
        cases_cut=max(len(ordered) - MAX_TABLE_ROWS, 0),
        margins=_margins(views),
        history=_design_history(data),
        notes=[escape(n) for n in notes],
    )
    return Rendered(tex, figure_paths, notes, power, rows)
