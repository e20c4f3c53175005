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
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from lipschitz_icl.gates import registry
from lipschitz_icl.report import notation as notation_table
from lipschitz_icl.report import references as refs
from lipschitz_icl.report.closed_forms import closed_form_latex
from lipschitz_icl.report.constants import constant_rows, constants_csv
from lipschitz_icl.report.deviations import deviations
from lipschitz_icl.report.figures import FigureDataError, Panel, axis_labels, data_figure, parse_series
from lipschitz_icl.report.figures import paper as paperfigs
from lipschitz_icl.report.figures.data import theory_on_diagonal
from lipschitz_icl.report.intervals import interval_short
from lipschitz_icl.report.latex import Latex, as_float, breakable, escape, num
from lipschitz_icl.report.mathtext import SYMBOLS, code, to_latex, to_mathtext
from lipschitz_icl.report.paper_map import map_rows, paper_map
from lipschitz_icl.report.profile import omissions, unrun_mentions, unrun_phrase
from lipschitz_icl.report.proofs import certificate_rows, find_certificates, libraries_text, proof_blocks, proof_cases
from lipschitz_icl.report.provenance import provenance, run_rows
from lipschitz_icl.report.quantities import quantities_csv
from lipschitz_icl.report.remarks import remarks, two_sided_constants
from lipschitz_icl.report.scope import case_params, record_scope, setting_text
from lipschitz_icl.report.sections import (
    Claim,
    SectionView,
    build_sections,
    near_misses,
    section_label,
    verdict_counts,
)
from lipschitz_icl.report.style import FULL_WIDTH
from lipschitz_icl.report.summary import claim_statement, headline, point_checks, points_of, scope_counts
from lipschitz_icl.report.symbols import (
    FIGURE_CAPTIONS,
    RESOLUTIONS,
    figure_axes,
    rename_for,
    resolution_letter,
    resolution_symbol,
)

__all__ = ["render_tex", "Rendered", "power_summary", "MAX_FIGURES", "MAX_SERIES", "MAX_TABLE_ROWS", "cases_csv"]

MAX_FIGURES = 24
MAX_SERIES = 8
MAX_TABLE_ROWS = 400
# significant digits of a measured constant (and of a relative deviation) in the value(uncertainty) form;
# beyond, the value and the power of ten that bounds the half-width
MEASURED_DIGITS = 9
REL_DIGITS = 6
FIGURE_HEIGHT = 1.6  # inches, a claim figure at the text width (the default profile's report is held to 20 pages)


@dataclass
class Rendered:
    """What :func:`render_tex` produced."""

    tex: str
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    power: dict = field(default_factory=dict)
    constants: list = field(default_factory=list)
    files: list = field(default_factory=list)  # further files to ship beside the report (certificates)


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
def resolution_of(records: list, rename: dict | None = None) -> dict:
    """``{symbol, value, meaning}`` (LaTeX) over the records' resolutions: the symbol and meaning the
    records carry (typeset with the group's ``rename``: :data:`lipschitz_icl.report.symbols.RENAMES`), else
    :func:`lipschitz_icl.report.symbols.resolution_symbol`; the value a range when the cases differ, ``not
    reached`` when the rule refuted nothing up to its limit."""
    found = [r["resolution"] for r in records if isinstance(r.get("resolution"), dict)]
    if not found:
        return {"symbol": Latex("--"), "value": Latex(""), "meaning": Latex("")}
    own = next((r for r in found if isinstance(r.get("meaning"), str) and r["meaning"]), None)
    parameter = str(found[0].get("parameter", ""))
    symbol, mapped = resolution_symbol(parameter)
    symbol = next((r["symbol"] for r in found if isinstance(r.get("symbol"), str) and r["symbol"]), symbol)
    # a letter meaning something else in the report is printed as the resolution's own symbol, its meaning's words
    # alike; any other symbol under the group's renames (the regularity group's bias power beta is zeta)
    # (delta is every resolution's own letter, whatever else a claim's statement calls delta)
    rename = {k: v for k, v in (rename or {}).items() if k != "delta"}
    symbol, letter = resolution_letter(symbol)
    symbol = renamed_symbol(symbol, rename) if not letter else symbol
    rename = {**rename, **letter}
    if own is not None:
        # "(1 + value)" names the resolution itself: written with its symbol, C (1 + delta C/C)
        safe = _math_symbol(symbol).strip()
        if safe:
            pieces = [to_latex(piece, rename=rename) for piece in str(own["meaning"]).split("(1 + value)")]
            meaning = Latex(f"$(1 + {safe})$".join(pieces))
        else:  # a symbol with nothing printable: the words as they are
            meaning = to_latex(own["meaning"], rename=rename)
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
def _sentence(text: str) -> str:
    """``text`` ending as a sentence does: a full stop added where it has none."""
    text = str(text).rstrip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


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


def _group_figure(view: SectionView, fig_dir: Path, notes: list, run_ids: set) -> dict | None:
    """The section's one figure: the first claim with figure data of its own (its caption says which settings its
    statement names that the run did not reach)."""
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
            data_figure(panels, path, width=FULL_WIDTH, height=FIGURE_HEIGHT)
        except FigureDataError as exc:
            notes.append(f"figure of {claim.key}: {exc}")
            continue
        n_cases = len(_first_seed(claim))
        more = f" ({n_cases - MAX_SERIES} further cases not drawn)" if n_cases > MAX_SERIES else ""
        scatter = panels[0].kind == "scatter" and not theory_on_diagonal(panels[0].series)
        mark = "Dashes" if scatter else "Dashed"
        theory = (
            f" {mark}: " + panels[0].theory_label + "."
            if any(s["theory_y"] is not None for p in panels for s in p.series)
            else ""
        )
        unrun = unrun_phrase(unrun_mentions(claim.key, _statement(claim), run_ids))
        caption = Latex(
            escape(_caption_head(claim) + ": ")
            + to_latex(_statement(claim), rename=rename_for(claim.key))
            + escape(f" ({unrun[0].upper() + unrun[1:]}.)" if unrun else "")
            + escape(" " + _series_words(panels, min(n_cases, MAX_SERIES)) + more + ".")
            + _mathtext_to_latex(theory)
            + _figure_words(claim.key)
        )
        return {
            "file": Latex(f"figures/{path.name}"),
            "caption": caption,
            "path": path,
            "label": Latex("fig:" + path.stem),
            "what": escape(f"the data of {claim.key}"),
        }
    return None


def _series_words(panels: list[Panel], n_cases: int) -> str:
    """What a claim figure's series are, counted from what it draws: one per case (labelled with its
    setting), or the series of a single case (as labelled), or several per case."""
    drawn = [sum(s.get("y") is not None for s in p.series) for p in panels]
    if n_cases == 1:
        return "The series of its one case, as labelled"
    if all(n == n_cases for n in drawn):
        return "One series per case"
    where = "each panel" if len(panels) > 1 else "the panel"
    return f"{' and '.join(map(str, drawn))} series in {where} from {n_cases} cases"


def _mathtext_to_latex(text: str) -> Latex:
    """A label written for matplotlib (mathtext between ``$``) as LaTeX: text escaped, math kept."""
    parts = re.split(r"(?<!\\)(\$[^$]*\$)", text)
    return Latex(
        "".join(
            p if p.startswith("$") and p.endswith("$") and len(p) > 1 else escape(p.replace(r"\$", "$")) for p in parts
        )
    )


def _paper_figure_specs(claim: Claim) -> list[tuple[dict, dict]]:
    """``(record, spec)`` of every recomputed paper figure a claim draws: those of its first seed's record
    (a caption states the claim's exploratory reason, if any)."""
    return [
        (record, spec)
        for record in _first_seed(claim)[:1]
        for spec in _specs(record)
        if isinstance(spec, dict) and spec.get("name") in paperfigs.RENDERERS
    ]


def _has_paper_figures(view: SectionView) -> bool:
    return any(_paper_figure_specs(c) for c in view.claims)


_MISMATCH = re.compile(r"^(?P<probe>[\w.-]+): error ratio E\(L' = (?P<which>L/10|10L)\)/E\(L' = L\)$")


def mismatch_data(records: list) -> dict | None:
    """The mismatched-``L`` error ratios of the first ``thm35.mismatch`` case, for paper Figure 5's
    mismatched-``L`` panel (the rebuttal's): per probe the ratios ``E(L' = L/10)/E(L)`` and
    ``E(L' = 10L)/E(L)`` with their intervals, and whether the claim decides on that probe."""
    record = next((r for r in records if r.get("key") == "thm35.mismatch"), None)
    if record is None:
        return None
    probes: dict[str, dict] = {}
    for q in record.get("quantities", []):
        m = _MISMATCH.match(str(q.get("name", ""))) if isinstance(q, dict) else None
        if not m or not all(isinstance(q.get(k), (int, float)) for k in ("measured", "ci_low", "ci_high")):
            continue
        entry = probes.setdefault(m.group("probe"), {"decided": q.get("verdict") is not None})
        entry["smaller" if m.group("which") == "L/10" else "larger"] = [q["measured"], q["ci_low"], q["ci_high"]]
    probes = {p: e for p, e in probes.items() if "smaller" in e and "larger" in e}
    if not probes:
        return None
    return {"case": record["claim_id"], "probes": probes, "level": interval_short(record)}


def _paper_figures(view: SectionView, fig_dir: Path, notes: list, limit: int, records: list) -> list[dict]:
    """The paper's figures a ``figures`` gate attached (at most ``limit``), rendered as PDF (and PNG);
    paper Figure 5 gains the mismatched-``L`` panel from ``thm35.mismatch`` when ``records`` hold it."""
    out: list[dict] = []
    for claim in view.claims:
        if len(out) >= limit:
            notes.append(f"figures of {claim.key} not drawn: the report draws at most {MAX_FIGURES} figures")
            continue
        for record, spec in _paper_figure_specs(claim):
            stem = _slug(f"{record['claim_id']}-{spec['name']}")
            if spec["name"] == "fig5" and (mismatch := mismatch_data(records)) is not None:
                spec = {**spec, "mismatch": mismatch}  # noqa: PLW2901 -- the figure drawn with its panel
            try:
                paths = paperfigs.write(paperfigs.render(spec), fig_dir, stem)
            except FigureDataError as exc:
                notes.append(f"figure {spec['name']} of {record['claim_id']}: {exc}")
                continue
            number = paperfigs.PAPER_NUMBERS.get(spec["name"], "?")
            ref = "paper Figure " + number if number != "rebuttal" else "the rebuttal's figure"
            rename = rename_for(claim.key)
            reason = (record.get("extra") or {}).get("exploratory_reason", "")
            caption = Latex(
                escape(f"{ref[0].upper() + ref[1:]}, recomputed. {_caption_head(claim)}: ")
                + to_latex(_statement(claim), rename=rename)
                + escape(" Settings: ")
                + to_latex(paperfigs.caption(spec), rename=rename)
                + escape(". ")
                + paperfigs.caption_note(spec)
                + (escape(" Exploratory: ") + to_latex(_sentence(reason), rename=rename) if reason else Latex(""))
            )
            out.append(
                {
                    "file": Latex(f"figures/{Path(paths[0]).name}"),
                    "caption": caption,
                    "paths": [Path(p) for p in paths],
                    "label": Latex("fig:" + stem),
                    "what": escape(f"{ref}, recomputed ({claim.key})"),
                }
            )
    return out


# ----------------------------------------------------------------------------- tables
def _counts_cell(counts: dict) -> Latex:
    """``holds/fails/inconclusive``, and the prover's verdicts where there are any (a claim decided by
    proof alone shows only those)."""
    main = f"{counts['holds']}/{counts['fails']}/{counts['inconclusive']}"
    proofs = [f"{counts[v]} {v}" for v in ("proved", "refuted", "undecided") if counts.get(v)]
    if proofs and not (counts["holds"] or counts["fails"] or counts["inconclusive"]):
        return escape(", ".join(proofs))
    return escape(", ".join([main, *proofs]))


def _claim_row(claim: Claim) -> dict:
    refuted, total = near_misses(claim.records)
    res = resolution_of(claim.records, rename_for(claim.key))
    return {
        "name": breakable(claim.name),
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


def _section_notes(view: SectionView, run_ids: set) -> list[Latex]:
    """Under a section's table, per claim: the claim's own sharper statement or reconciliation (the
    registry's ``sharper``), what of a proved statement is not proved and why (``not_proved``), that it is
    exploratory and that numbers are reported against its direction (both in full among page 1's deviations,
    printed once), the settings its statement names that the run did not reach, and where theory and practice
    part."""
    from lipschitz_icl.report.summary import caveats

    notes = []
    for claim in view.claims:
        rename = rename_for(claim.key)
        head = r"\textit{" + escape(claim.name) + "}"
        try:
            spec = registry.find(claim.key)
            sharper, not_proved = spec.sharper, spec.not_proved
        except KeyError:
            sharper, not_proved = str(claim.records[0].get("sharper", "")), ""
        if sharper and sharper != view.sharper:
            cites = refs.citations(sharper)
            cited = r"~\cite{" + ",".join(cites) + "}" if cites else ""
            notes.append(Latex(head + ": " + to_latex(sharper, rename=rename) + cited))
        if not_proved:  # what of a proved statement is not proved, and why (issue: a proof out of reach says why)
            notes.append(Latex(head + ", not proved: " + to_latex(_sentence(not_proved), rename=rename)))
        if claim.status == "exploratory":  # why in full here; page 1 says so in one line and points here
            reason = str((claim.records[0].get("extra") or {}).get("exploratory_reason", ""))
            if _paper_figure_specs(claim):
                why = escape("its rule was set after seeing data (why: its figure's caption).")
            elif reason:
                why = to_latex(_sentence(reason), rename=rename)
            else:
                why = escape("its rule was set after seeing data.")
            notes.append(Latex(head + " is exploratory: " + why))
        unrun = unrun_phrase(unrun_mentions(claim.key, _statement(claim), run_ids))
        if unrun:
            notes.append(Latex(head + escape(": " + unrun + " ") + r"(Appendix~\ref{app:profile})."))
        against = len(caveats(claim.records))
        if against:
            numbers = "1 number" if against == 1 else f"{against} numbers"
            notes.append(Latex(head + escape(f": {numbers} reported against its direction (page 1).")))
        notes.extend(Latex(head + ": " + to_latex(text, rename=rename)) for text in remarks(claim.key, claim.records))
    return notes


def _case_row(number: int, record: dict) -> dict:
    refuted, total = near_misses([record])
    seconds = as_float(record.get("seconds"))
    res = resolution_of([record], rename_for(str(record.get("key", ""))))
    verdict = record.get("verdict", "")
    points = points_of(record)  # the count page 1 reports (one source: a "points" field or an "at all N points" note)
    if verdict == "holds" and points is not None:
        verdict = f"holds at {points} points"
    return {
        "number": number,
        "claim_id": breakable(record["claim_id"]),
        "verdict": escape(verdict),
        "scope": escape(record_scope(record)),
        "status": escape("expl." if record.get("status") == "exploratory" else "conf."),
        "resolution": Latex(res["symbol"] + " " + res["value"]) if res["value"] else Latex("--"),
        "near_misses": escape(f"{refuted}/{total}"),
        "seconds": escape(f"{seconds:.1f}" if seconds is not None else "--"),
        "run": code(str(record["run"])) if isinstance(record.get("run"), str) else Latex("--"),
        # the case list is two cases per line: "holds at 12 pts" for a universal statement checked at its points
        "short": escape(verdict.replace(" points", " pts") if verdict.startswith("holds at") else verdict),
    }


def _setting_items(row) -> list[str]:
    """The row's setting as ASCII-math items (``affine``, ``d = 3``)."""
    return [setting_text(k, [v]) for k, v in row.setting.items()]


def _named_by_symbol(constant: str, symbol: str) -> bool:
    """Whether the constant's name already opens with its symbol (``C_d: w*/rho^alpha ...``): the symbol is
    then not repeated after the name."""
    head = constant.split(":", 1)[0].strip() if ":" in constant else ""
    return bool(head) and head in (symbol, symbol.lstrip("\\"))


def renamed_symbol(symbol: str, rename: dict) -> str:
    """A record's symbol (LaTeX) under its group's renames, letter by letter (the regularity group's bias power
    ``\\beta`` is printed ``\\zeta``, and ``\\delta\\beta`` ``\\delta\\zeta``: ``\\beta`` is the noise power
    elsewhere); the letters of an upright name (``\\mathrm{lin}``), of a sub- or superscript and the symbols the
    group does not rename stay as they are."""

    def one(m: re.Match) -> str:
        token = m.group(0)
        if m.group("upright") or m.group("script"):
            return token
        value = rename.get(token.lstrip("\\"))
        if value is None:
            return token
        value = SYMBOLS.get(value, value)
        return value + " " if value[-1].isalpha() and value.startswith("\\") else value

    whole = rename.get(symbol.strip().lstrip("\\"))
    if whole is not None:  # a name renamed whole (kappa_Q)
        return SYMBOLS.get(whole, whole)
    out = re.sub(
        r"(?P<upright>\\(?:mathrm|operatorname|text)\{[^}]*\})|(?P<script>[_^]\{[^}]*\}|[_^]\\?[A-Za-z])"
        r"|\\[A-Za-z]+(?![_'])|[A-Za-z]+(?![_'])",
        one,
        symbol,
    )
    return out.rstrip()


def _constant_row(row, shared: list[str]) -> dict:
    """A constants row for the template: the constant named for what it measures (with where it was
    measured when the record says so, and the settings its case's other constants do not share), its
    closed form, and its measured value with its interval (a dagger where the record carries none)."""
    rename = rename_for(row.key)
    rel = (
        num(row.rel_dev, row.rel_dev_low, row.rel_dev_high, digits=3, compact=True, max_digits=REL_DIGITS)
        if row.rel_dev is not None
        else Latex("--")
    )
    constant = Latex(row.constant) if row.source != "claims.json" else to_latex(row.constant, rename=rename)
    where = re.search(r"measured at ([^;]+)", row.note or "")
    if where and where.group(1) not in row.constant:
        constant = Latex(constant + escape(", measured at ") + to_latex(where.group(1)))
    own = [item for item in _setting_items(row) if item not in shared]
    if own:
        constant = Latex(constant + escape("; ") + to_latex(", ".join(own)))
    shown = renamed_symbol(row.symbol, rename)
    symbol = (
        Latex(f" (${_math_symbol(shown)}$)")
        if row.symbol and not _named_by_symbol(row.constant, row.symbol)
        else Latex("")
    )
    closed = closed_form_latex(row.key, row.symbol, row.setting, row.theory)
    measured = num(row.measured, row.ci_low, row.ci_high, digits=7, compact=True, max_digits=MEASURED_DIGITS)
    if row.measured is not None and (row.ci_low is None or row.ci_high is None):
        measured = Latex(measured + r"$^{\dagger}$")
    return {
        "constant": Latex(constant + symbol),
        "theory": Latex(f"${closed} = {{}}$" + num(row.theory)) if closed else num(row.theory),
        "measured": measured,
        "rel": rel,
        "margin": to_latex(row.margin) if row.margin else Latex("--"),
        "verdict": escape(row.verdict),
    }


def _constant_cases(rows: list) -> list[dict]:
    """The constants table by case: per case its number, claim and the settings all its rows share (printed
    once, as the case's heading line), then one line per constant."""
    cases: list[dict] = []
    for (number, key), members in itertools.groupby(rows, key=lambda r: (r.case, r.key)):
        group = list(members)
        shared = [item for item in _setting_items(group[0]) if all(item in _setting_items(r) for r in group)]
        kind = group[0].intervals
        cases.append(
            {
                "number": number,
                "head": Latex(
                    escape(key + (": " if shared else ""))
                    + to_latex(", ".join(shared))
                    + (r"; \emph{intervals:} " + escape(kind) if kind else "")
                ),
                "rows": [_constant_row(r, shared) for r in group],
            }
        )
    return cases


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


PACKAGE_PREFIX = re.compile(r"\blipschitz_icl\.")  # a module path's package, left out in the margins appendix


def _margins(views: list[SectionView]) -> list[dict]:
    """One entry per distinct margin and source: the margin as applied, where it comes from (module paths
    without their package prefix ``lipschitz_icl.``, which the appendix states once), and every claim that
    has them (in the order of the sections; the text is printed once)."""
    entries: dict[tuple, dict] = {}
    for view in views:
        for claim in view.claims:
            record = claim.records[0]
            rename = rename_for(claim.key)
            margin, source = str(record.get("margin") or "--"), str(record.get("margin_source") or "--")
            shown = (to_latex(margin, rename=rename), to_latex(PACKAGE_PREFIX.sub("", source), rename=rename))
            if shown in entries:  # the same words, typeset alike (renames that differ elsewhere do not split them)
                entries[shown]["key"] = Latex(entries[shown]["key"] + ", " + code(claim.key))
                continue
            entries[shown] = {"key": code(claim.key), "margin": shown[0], "source": shown[1]}
    return list(entries.values())


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
            "reason": to_latex(reason, rename=_shared_rename(h.get("key", "") for h in members)),
        }
        for (salt, fixed, commit, reason), members in groups.items()
    ]


# ----------------------------------------------------------------------------- the document
def _environment():
    import jinja2

    env = jinja2.Environment(
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
    # a macro's output is the template's own LaTeX, its values already escaped: printed as it is
    env.filters["rendered"] = Latex
    return env


def _figure_words(key: str) -> Latex:
    """The words a figure's axes need (:data:`lipschitz_icl.report.symbols.FIGURE_CAPTIONS`)."""
    words = FIGURE_CAPTIONS.get(key, "")
    return Latex(" " + words) if words else Latex("")


def _figure_sentence(figures: list[dict]) -> Latex:
    """The text that refers to the section's figure (every figure is referenced from its text); a section
    with several figures refers to each just before it (``fig["sentence"]``), so each stays within a page
    of its reference."""
    for f in figures:
        f["sentence"] = Latex(r"Figure~\ref{" + f["label"] + "} draws " + f["what"] + ".")
    if len(figures) != 1:
        return Latex("")
    return figures[0]["sentence"]


def _scope_count_rows(claims: list) -> list[dict]:
    rows = []
    for c in scope_counts(claims):
        conf, expl = c.confirmatory, c.exploratory
        rows.append(
            {
                "title": escape(c.title),
                "claims": c.claims,
                "cases": c.cases,
                "proved": conf["proved"],
                "holds": conf["holds"],
                "fails": conf["fails"] + conf["refuted"],
                "inconclusive": conf["inconclusive"] + conf["undecided"],
                "exploratory": escape(
                    f"{expl['holds'] + expl['proved']}/{expl['fails'] + expl['refuted']}/"
                    f"{expl['inconclusive'] + expl['undecided']}"
                ),
                "points": c.point_cases,
            }
        )
    return rows


def _points_sentence(claims: list) -> Latex:
    checks = point_checks(claims)
    if not checks.cases:
        return Latex("No universal statement is evaluated at points only.")
    names = ", ".join(breakable(name) for name in checks.claims)  # long keys break: no stretched line
    return Latex(
        escape(f"At points only: {len(checks.cases)} cases of {len(checks.claims)} universal statements (")
        + names
        + escape(
            f") are evaluated at {checks.points} points in all (grid points, probe moves), not on their whole domain."
        )
    )


def _profile_sentence(prov, left_out: list) -> Latex:
    if not left_out:
        return escape(f"Profile {prov.profile}: nothing of the full profile is left out.")
    points = sum(o.grid_points for o in left_out)
    claims = sum(1 for o in left_out if o.grid_points)
    replicates = sorted({o.replicates for o in left_out if o.replicates})
    rep = "".join(f"; {a} of {b} replicates" for a, b in replicates)
    return Latex(
        escape(
            f"Profile {prov.profile}: it leaves out {points} grid points of the full profile over {claims} claims{rep} "
        )
        + r"(Appendix~\ref{app:profile})."
    )


def _runs_sentence(rows: list) -> Latex:
    if not rows:
        return Latex("")
    if len(rows) == 1:  # one run: named here, no run column in Appendix A
        return Latex(escape("It comes from one run (") + code(str(rows[0]["id"])) + escape(")."))
    return Latex(
        escape(f"This claims.json merges {len(rows)} runs (")
        + Latex(", ".join(code(str(r["id"])) for r in rows))
        + r"); each case names its run in Appendix~\ref{app:cases}."
    )


def _bibliography() -> list[dict]:
    """Every entry of ``references.toml`` as printed (a library's version is given where it is cited, in
    the provenance line of Appendix D: :func:`_libraries`)."""
    # names and titles: text, never math (an initial "S." is not a symbol)
    return [{"key": Latex(ref.key), "text": escape(ref.text)} for ref in refs.references()]


def _cited_only(bibliography: list[dict], tex: str) -> list[dict]:
    """The entries a ``\\cite`` of ``tex`` (the text before its bibliography) names: the reference list
    holds no work the report does not cite."""
    body = tex.split(r"\begin{thebibliography}", 1)[0]
    cited = {key.strip() for group in re.findall(r"\\cite\{([^}]*)\}", body) for key in group.split(",")}
    return [entry for entry in bibliography if entry["key"] in cited]


def _libraries(prov_raw: dict | None) -> Latex:
    """The libraries used, each with its version and its reference cited (so every library of the
    bibliography is cited where it is used): those the run recorded first, then, after ``read at report
    time:``, those read when the report was built."""
    versions = refs.library_versions(prov_raw)
    keys = {ref.package: ref.key for ref in refs.references() if ref.package}
    recorded: list[str] = []
    derived_parts: list[str] = []
    for name, (version, derived) in versions.items():
        part = escape(f"{name} {version}") + (r"~\cite{" + keys[name] + "}" if name in keys else "")
        (derived_parts if derived else recorded).append(part)
    flint_lib = refs.flint_library_version()
    if flint_lib:
        derived_parts.append(escape(f"FLINT/Arb {flint_lib}") + r"~\cite{johansson2017}")
    text = "; ".join(recorded)
    if derived_parts:
        text += ("; " if text else "") + "read at report time: " + "; ".join(derived_parts)
    return Latex(text)


def _certificates(claims_path, out_dir: Path) -> list:
    """The certificate files beside ``claims.json`` (folder ``certificates/``), copied into ``out_dir`` so
    that they are shipped beside the report."""
    import shutil

    if claims_path is None:
        return []
    found = find_certificates([Path(claims_path).parent])
    if found:
        target = out_dir / "certificates"
        target.mkdir(exist_ok=True)
        for cert in found:
            if not cert.error or cert.size:
                shutil.copyfile(cert.path, target / cert.name)
    return found


def _grouped_keys(keys: list[str]) -> str:
    """Claim keys by group, each group named once: ``linear: error-floor; loss_shape: bias-falls, bias-power``."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        group, _, name = key.partition(".")
        groups.setdefault(group, []).append(name or group)
    return "; ".join(f"{group}: {', '.join(names)}" for group, names in groups.items())


def _wstar_range(cases) -> Latex:
    """Where a proved statement names ``w*``: the range of ``w`` over which the certified ``w*`` is the
    minimiser (:data:`lipschitz_icl.certified.wstar_proof.W_SEARCH`), typeset; else empty."""
    if not any("w*" in str(c.record.get("statement", "")) for c in cases):
        return Latex("")
    from lipschitz_icl.certified.wstar_proof import W_SEARCH

    low, high = (f"10^{{{round(math.log10(v))}}}" if math.log10(v).is_integer() else f"{v:g}" for v in W_SEARCH)
    return Latex(f"$w \\in ({low}, {high})$")


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
    prov_raw = data.get("provenance") if isinstance(data.get("provenance"), dict) else None
    rows = constant_rows(ordered, numbers)
    (out_dir / "constants.csv").write_text(constants_csv(rows), encoding="utf-8")
    (out_dir / "quantities.csv").write_text(quantities_csv(ordered, numbers), encoding="utf-8")
    (out_dir / "cases.csv").write_text(cases_csv(ordered, numbers), encoding="utf-8")
    notes: list[str] = []
    figure_paths: list[Path] = []
    run_ids = {re.sub(r"/seed\d+$", "", str(r["claim_id"])) for r in claims}
    sections = []
    drawn = 0
    for view in views:
        if drawn >= MAX_FIGURES:
            figures = []
            notes.append(f"figures of {view.name} not drawn: the report draws at most {MAX_FIGURES} figures")
        elif _has_paper_figures(view):
            figures = _paper_figures(view, fig_dir, notes, MAX_FIGURES - drawn, ordered)
            figure_paths.extend(p for f in figures for p in f["paths"])
        else:
            found = _group_figure(view, fig_dir, notes, run_ids)
            figures = [found] if found else []
            figure_paths.extend(f["path"] for f in figures)
        drawn += len(figures)
        rename = rename_for(view.claims[0].key)
        sections.append(
            {
                "name": escape(view.name),
                "label": Latex(section_label(view.name)),
                "paper_ref": escape(view.paper_ref),
                "statement": to_latex(view.statement, rename=rename),
                "sharper": to_latex(view.sharper, rename=rename) if view.sharper else Latex(""),
                "figure_sentence": _figure_sentence(figures),
                "claims": _as_above([_claim_row(c) for c in view.claims]),
                "notes": _section_notes(view, run_ids),
                "figures": figures,
                "two_sided": any(c.key == "thm34.window-law" for c in view.claims),
            }
        )
    power = power_summary(claims)
    the_map = paper_map(ordered)
    certificates = _certificates(claims_path, out_dir)
    cases = proof_cases(ordered, certificates)
    paper_proofs = sorted({str(c.record.get("key")) for c in cases if record_scope(c.record) == "paper"})
    proof_scopes = sorted({str(record_scope(c.record)) for c in cases})
    runs = run_rows(data)
    left_out = omissions(prov.profile, {str(r.get("key", "")) for r in claims})
    window = [r for r in ordered if r.get("key") == "thm34.window-law"]
    env = _environment()
    context = {
        "title": "Softmax attention adapts to function Lipschitzness: the claims, checked",
        "source": source,
        "paper_version": escape(refs.paper_version()),
        "n_cases": len(claims),
        "head": headline(claims, prov),
        "prov": prov,
        "provenance_derived": ", ".join(prov.derived),
        "scope_counts": _scope_count_rows(claims),
        "points_sentence": _points_sentence(claims),
        "profile_sentence": _profile_sentence(prov, left_out),
        "runs": _runs_sentence(runs),
        "deviations": deviations(views, the_map, numbers, run_ids),
        "paper_map": map_rows(the_map, numbers),
        "proofs": proof_blocks(cases, numbers, claim_statement),
        "paper_proofs": escape(_grouped_keys(paper_proofs)),
        "wstar_range": _wstar_range(cases),
        "proof_scopes": escape(", ".join(proof_scopes)),
        "certificates": certificate_rows(certificates, cases, numbers),
        "n_certificates": len(certificates),
        "certificate_libraries": escape(libraries_text(certificates)),
        "flint_version": escape(refs.library_versions(prov_raw).get("python-flint", ("unknown", True))[0]),
        "flint_library": escape(refs.flint_library_version() or "unknown"),
        "sections": sections,
        "constants": _constant_cases(rows[:MAX_TABLE_ROWS]),
        "constants_cut": max(len(rows) - MAX_TABLE_ROWS, 0),
        "n_daggers": sum(1 for r in rows if r.measured is not None and (r.ci_low is None or r.ci_high is None)),
        "measured_digits": MEASURED_DIGITS,
        "n_constants": len(rows),
        "n_constants_shown": min(len(rows), MAX_TABLE_ROWS),
        "fallback": any(r.source != "claims.json" for r in rows),
        "two_sided": [_two_sided_row(t) for t in two_sided_constants(window, numbers)],
        "notation": _notation_rows(),
        "terms": [],
        "cases": [_case_row(numbers[r["claim_id"]], r) for r in ordered[:MAX_TABLE_ROWS]],
        # a run column only when the file merges several runs (one run is named once, in the provenance)
        "has_runs": len({r["run"] for r in claims if isinstance(r.get("run"), str)}) > 1,
        "cases_cut": max(len(ordered) - MAX_TABLE_ROWS, 0),
        "cases_shown": min(len(ordered), MAX_TABLE_ROWS),
        "margins": _margins(views),
        "omissions": _omission_rows(left_out),
        "history": _design_history(data),
        "libraries": _libraries(prov_raw),
        # the runs merged into the file, when there are several (one run is the provenance line above)
        "run_rows": [{"id": escape(r["id"]), "text": escape(f"{r['text']}; {r['records']} records")} for r in runs]
        if len(runs) > 1
        else [],
        "notes": [escape(n) for n in notes],
        "bibliography": _bibliography(),
    }
    template = env.get_template("report.tex.j2")
    tex = template.render(**context)
    context["terms"] = _terms(notation_table.glossary(tex))
    tex = template.render(**context)
    context["bibliography"] = _cited_only(_bibliography(), tex)  # the terms cite too
    tex = template.render(**context)
    extra = [out_dir / "certificates" / c.name for c in certificates if (out_dir / "certificates" / c.name).is_file()]
    return Rendered(tex, figure_paths, notes, power, rows, extra)


def _as_above(rows: list[dict]) -> list[dict]:
    """A claim row whose resolution means what the row above's does says so instead of repeating it."""
    for above, row in itertools.pairwise(rows):
        if row["meaning"] and row["meaning"] == above.get("_meaning", above["meaning"]):
            row["_meaning"] = row["meaning"]
            row["meaning"] = Latex(r"\emph{as above}")
    for row in rows:
        row.pop("_meaning", None)
    return rows


def _notation_rows() -> list:
    """The notation table (the symbols, in math) two entries per line, read down each half."""
    entries = [{"symbol": Latex(f"${sym}$"), "meaning": Latex(meaning)} for sym, meaning in notation_table.NOTATION]
    half = -(-len(entries) // 2)
    left, right = entries[:half], entries[half:]
    return [(a, right[i] if i < len(right) else None) for i, a in enumerate(left)]


def _terms(glossary: list) -> list[dict]:
    """The glossary's terms the report uses (:func:`lipschitz_icl.report.notation.glossary`), set after the
    symbols as one run of text (a term's definition is longer than its name: a table column wastes the
    width)."""
    return [{"term": Latex(term), "meaning": Latex(meaning)} for term, meaning in glossary]


def _omission_rows(left_out: list) -> list[dict]:
    """One row per distinct text of what is left out, with every claim it applies to."""
    grouped: dict[str, list[str]] = {}
    for o in left_out:
        grouped.setdefault(o.text(), []).append(o.key)
    return [
        {"key": Latex(", ".join(code(k) for k in keys)), "text": to_latex(text, rename=_shared_rename(keys))}
        for text, keys in grouped.items()
    ]


def _shared_rename(keys) -> dict:
    """The renames of claims of one group (:func:`lipschitz_icl.report.symbols.rename_for`); ``{}`` when the keys
    span groups (the words of one are then typeset as they are)."""
    groups = {str(k).split(".")[0] for k in keys}
    return rename_for(groups.pop()) if len(groups) == 1 else {}


def _two_sided_row(t) -> dict:
    """A row of the two-sided constants' table: ``c_lo``, ``c_hi`` each with the half-width of its interval
    in units of the last digits printed, as the constants table prints a measured value."""
    return {
        "number": t.number,
        "label": to_latex(t.label),
        "alpha": num(t.alpha, digits=4),
        "c_d": num(t.c_d, digits=6),
        "c_lo": num(*t.c_lo, digits=7, compact=True, max_digits=MEASURED_DIGITS),
        "c_hi": num(*t.c_hi, digits=7, compact=True, max_digits=MEASURED_DIGITS),
        "n_range": to_latex("n in [" + t.n_range + "]") if t.n_range else Latex("--"),
    }
