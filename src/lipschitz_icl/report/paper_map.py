"""The paper, statement by statement: which claims check each theorem, lemma, assumption and figure.

The paper's structure is data (``paper_map.toml`` beside this module: each item with its parts and the
claim keys that check them, and the regular expressions on a record's ``paper_ref`` that place a record
under the item); everything else is read from ``claims.json``.  A record belongs to an item when its key
matches a part's keys or its ``paper_ref`` matches one of the item's ``refs`` (so a claim added later
under the same paper reference, e.g. a proof of Theorem 3.4's bound, is listed without report work);
records of scope ``beyond`` never belong to the paper's items.

Status of an item: ``checked`` when every part has a confirmatory case, ``partly`` when some part has
none (or only exploratory cases), ``not checked`` when no record belongs to it (with the data file's
reason).  Method of a record: ``proof`` (rule ``proof``), ``figure`` (the ``figures`` group, a recomputed
paper figure with its caption's claim decided by a rule) or the rule's name.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from lipschitz_icl.gates import registry
from lipschitz_icl.report.scope import case_params, checked_scope, record_scope, setting_text

__all__ = [
    "Part",
    "Item",
    "MapRow",
    "PartRow",
    "items",
    "paper_map",
    "map_rows",
    "method_of",
    "case_list",
    "part_domain",
    "STATUSES",
    "FURTHER",
]

STATUSES = ("checked", "partly", "not checked")


@dataclass(frozen=True)
class Part:
    """A part of an item's statement and the claim keys (shell patterns) that check it."""

    what: str
    keys: tuple[str, ...]

    def covers(self, key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.keys)


@dataclass(frozen=True)
class Item:
    """One statement, lemma, assumption or figure of the paper (module docstring)."""

    label: str
    kind: str
    statement: str
    refs: tuple[str, ...]
    parts: tuple[Part, ...] = ()
    note: str = ""
    not_checked: str = ""
    scope: str = "paper"  # the scope its records are expected to have

    def holds_record(self, record: dict) -> bool:
        if record_scope(record) == "beyond":
            return False
        key = str(record.get("key", ""))
        if any(part.covers(key) for part in self.parts):
            return True
        paper_ref = str(record.get("paper_ref", ""))
        return any(re.search(ref, paper_ref) for ref in self.refs)


@cache
def items() -> tuple[Item, ...]:
    """The items of ``paper_map.toml`` in the paper's order."""
    import tomllib

    raw = tomllib.loads(resources.files("lipschitz_icl.report").joinpath("paper_map.toml").read_text("utf-8"))
    out = []
    for entry in raw["item"]:
        parts = tuple(Part(p["what"], tuple(p["keys"])) for p in entry.get("part", []))
        out.append(
            Item(
                label=entry["label"],
                kind=entry["kind"],
                statement=entry["statement"],
                refs=tuple(entry.get("refs", [])),
                parts=parts,
                note=entry.get("note", ""),
                not_checked=entry.get("not_checked", ""),
                scope=entry.get("scope", "paper"),
            )
        )
    return tuple(out)


def method_of(record: dict) -> str:
    """``proof``, ``figure`` or the rule's name (module docstring)."""
    rule = str(record.get("rule_name") or "")
    if rule == "proof":
        return "proof"
    if str(record.get("group", "")) == "figures" or str(record.get("key", "")).startswith("figures."):
        return "figure"
    return f"rule ({rule})" if rule else "rule"


def case_list(numbers: list[int]) -> str:
    """Case numbers as ranges with an en dash: ``#3\u20138, 12`` (``""`` for none)."""
    numbers = sorted(set(numbers))
    if not numbers:
        return ""
    spans, start, last = [], numbers[0], numbers[0]
    for x in numbers[1:]:
        if x == last + 1:
            last = x
            continue
        spans.append((start, last))
        start = last = x
    spans.append((start, last))
    return "#" + ", ".join(f"{a}" if a == b else f"{a}\u2013{b}" for a, b in spans)


@dataclass
class PartRow:
    """A part of an item as checked: its records' domain, methods, case numbers and verdicts."""

    what: str
    records: list = field(default_factory=list)

    @property
    def status(self) -> str:
        if any(r.get("status", "confirmatory") == "confirmatory" for r in self.records):
            return "checked"
        return "exploratory only" if self.records else "not checked"


@dataclass
class MapRow:
    """An item of the paper with what checks it."""

    item: Item
    records: list = field(default_factory=list)
    parts: list = field(default_factory=list)  # of PartRow; a last row "further cases" holds the rest

    @property
    def status(self) -> str:
        if not self.records:
            return "not checked"
        named = [p for p in self.parts if p.what is not None and p.what != FURTHER]
        if named and all(p.status == "checked" for p in named):
            return "checked"
        if not named and any(r.get("status", "confirmatory") == "confirmatory" for r in self.records):
            return "checked"
        return "partly"


FURTHER = "further cases under this reference"


def paper_map(records: list) -> list[MapRow]:
    """Every item of the paper (module docstring) with its records, in the paper's order."""
    rows = []
    for item in items():
        mine = [r for r in records if item.holds_record(r)]
        parts = [PartRow(p.what, [r for r in mine if p.covers(str(r.get("key", "")))]) for p in item.parts]
        placed = {id(r) for p in parts for r in p.records}
        rest = [r for r in mine if id(r) not in placed]
        if rest:
            parts.append(PartRow(FURTHER, rest))
        rows.append(MapRow(item, mine, parts))
    return rows


def part_domain(part: PartRow) -> str:
    """What the part's cases covered (classes, ``d``, ``n``, ...), plain text with ASCII math.  A case whose
    context sizes are a grid (not a parameter of the case) adds the grid it ran (:func:`_run_n`) to ``n``: the
    map never shows only the ``n`` of its neighbours (``thm35.generalisation`` runs n = 100, 1000, 10000 beside
    ``thm35.envelope``'s n = 1000), nor a design grid that the run extended (``linear.cannot-adapt`` to 160)."""
    if not part.records:
        return ""
    segments = checked_scope(part.records).split("; ")
    grid = [n for r in part.records if "n" not in case_params(r) for n in _run_n(r)]
    if not grid:
        return "; ".join(segments)
    values = [case_params(r)["n"] for r in part.records if "n" in case_params(r)]
    ns = sorted({float(v) for v in values} | set(grid))
    text = setting_text("n", [_number_text(n) for n in ns])
    at = next((i + 1 for i, seg in enumerate(segments) if seg.startswith("d = ")), 0)
    segments = [seg for seg in segments if not seg.startswith("n = ")]
    segments.insert(min(at, len(segments)), text)
    return "; ".join(seg for seg in segments if seg)


def _run_n(record: dict) -> list[float]:
    """The context sizes a record's case ran at: its ``extra`` ``n_grid`` or ``n`` (the grid as run, extended where
    the claim's rule extends it), else its design's ``n_grid``."""
    extra = record.get("extra") or {}
    for name in ("n_grid", "n"):
        found = extra.get(name)
        values: list = found if isinstance(found, list) else [found]
        numbers = [float(x) for x in values if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0]
        if values and len(numbers) == len(values):
            return numbers
    return _design_n_grid(str(record.get("key", "")))


def _design_n_grid(key: str) -> list[float]:
    """The context sizes of a claim's design grid (``n_grid``: a flat list of numbers), else ``[]``."""
    try:
        grid = registry.find(key).design.get("n_grid")
    except KeyError:
        return []
    if isinstance(grid, list) and grid and all(isinstance(x, (int, float)) for x in grid):
        return [float(x) for x in grid]
    return []


def _number_text(x: float) -> str:
    """``1000`` for an integer value below ``1e5``, ``1e6`` for a power of ten from there on (typeset
    ``10^6``), else the float as Python writes it."""
    if x >= 1e5 and 10.0 ** round(math.log10(x)) == x:
        return f"1e{round(math.log10(x))}"
    return str(int(x)) if x == int(x) and abs(x) < 1e5 else f"{x:g}"


def _verdicts(records: list) -> str:
    """``3/0/0`` (confirmatory holds/fails/inconclusive), ``, 6 proved``, ``[1/0/0 exploratory]``."""
    conf = [r for r in records if r.get("status", "confirmatory") == "confirmatory"]
    expl = [r for r in records if r.get("status", "confirmatory") != "confirmatory"]

    def count(rows, verdict):
        return sum(r.get("verdict") == verdict for r in rows)

    parts = []
    if conf:
        statistical = [r for r in conf if r.get("rule_name") != "proof"]
        if statistical:
            parts.append(f"{count(conf, 'holds')}/{count(conf, 'fails')}/{count(conf, 'inconclusive')}")
        for verdict in ("proved", "refuted", "undecided"):
            if count(conf, verdict):
                parts.append(f"{count(conf, verdict)} {verdict}")
    if expl:
        parts.append(f"[{count(expl, 'holds')}/{count(expl, 'fails')}/{count(expl, 'inconclusive')} exploratory]")
    return ", ".join(parts)


def _methods(records: list) -> str:
    found = list(dict.fromkeys(method_of(r) for r in records))
    return ", ".join(found)


def _merged_unchecked(rows: list[MapRow]) -> dict[int, str]:
    """Items not checked for the same reason, printed as one row (``paper Figures 2, 4, 7``): ``id(row)``
    -> the joined label for the first of a group, ``""`` for the others."""
    groups: dict[tuple, list[MapRow]] = {}
    for row in rows:
        if row.status == "not checked" and not row.parts:
            groups.setdefault((row.item.kind, row.item.not_checked, row.item.statement), []).append(row)
    out: dict[int, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        labels = [m.item.label for m in members]
        prefix = "paper Figure "
        if all(label.startswith(prefix) for label in labels):
            joined = "paper Figures " + ", ".join(label[len(prefix) :] for label in labels)
        else:
            joined = ", ".join(labels)
        out[id(members[0])] = joined
        out.update({id(m): "" for m in members[1:]})
    return out


def _scope_tags(records: list, expected: str, numbers: dict) -> str:
    """The cases of a part whose scope is not the item's, by scope: ``finding #47-50; lemma #29`` (``""``
    when every case has the item's scope)."""
    by_scope: dict[str, list[int]] = {}
    for r in records:
        scope = record_scope(r)
        if scope != expected:
            by_scope.setdefault(scope, []).append(numbers.get(r["claim_id"], 0))
    return "; ".join(f"{scope} {case_list(nums)}" for scope, nums in sorted(by_scope.items()))


def _status_why(row: MapRow, numbers: dict):
    """What the status cell says under the status (LaTeX): when no confirmatory case is a proof, at how many
    settings (cases) the statement was checked, so ``checked`` at one setting never reads as checked on the
    statement's whole domain; for ``partly``, which parts lack a confirmatory case and why (exploratory only,
    or no case); for any row, the findings (scope ``finding``: past or
    against the paper) among its cases, with their numbers, so a finding that departs from a statement is
    flagged beside it."""
    from lipschitz_icl.report.latex import Latex, escape

    lines = []
    confirmatory = [r for r in row.records if r.get("status", "confirmatory") == "confirmatory"]
    if confirmatory and not any(method_of(r) == "proof" for r in confirmatory):
        n = len(confirmatory)
        lines.append(escape(f"at {n} setting{'s' if n != 1 else ''}, none by proof"))
    if row.status == "partly":
        named = [p for p in row.parts if p.what != FURTHER]
        missing = [p for p in named if p.status != "checked"]
        counts = {s: sum(p.status == s for p in missing) for s in ("exploratory only", "not checked")}
        why = ", ".join(f"{n} of {len(named)} parts {s}" for s, n in counts.items() if n)
        lines.append(escape(why))
    findings: dict[str, list[int]] = {}
    for r in row.records:
        if record_scope(r) == "finding":
            findings.setdefault(str(r.get("key", "")).split(".")[-1], []).append(numbers.get(r["claim_id"], 0))
    if findings:
        lines.append(
            escape(
                "findings past or against it: " + "; ".join(f"{name} {case_list(n)}" for name, n in findings.items())
            )
        )
    return Latex("".join(r"\newline{\scriptsize " + line + "}" for line in lines))


def _rename(records: list) -> dict:
    """The renames (:func:`lipschitz_icl.report.symbols.rename_for`) of records that share one claim group (a
    group's letters are printed as the report's symbols, ``P(...)`` a probability): ``{}`` when they do not."""
    from lipschitz_icl.report.symbols import rename_for

    groups = {str(r.get("key", "")).split(".")[0] for r in records}
    return rename_for(groups.pop()) if len(groups) == 1 else {}


def map_rows(rows: list[MapRow], numbers: dict) -> list[dict]:
    """The map as the report prints it: per item its label, status, statement, note and one line per
    part (``what: domain; method; #cases; verdicts``), LaTeX."""
    from lipschitz_icl.report.latex import Latex, escape
    from lipschitz_icl.report.mathtext import to_latex
    from lipschitz_icl.report.references import citations

    out = []
    merged = _merged_unchecked(rows)
    for row in rows:
        if id(row) in merged and not merged[id(row)]:
            continue  # printed in the first row of its group
        parts = []
        for part in row.parts:
            rename = _rename(part.records)
            head = r"\textit{" + to_latex(part.what, rename=rename) + "}"
            if not part.records:
                parts.append(Latex(head + ": not checked"))
                continue
            cases = case_list([numbers.get(r["claim_id"], 0) for r in part.records])
            domain = part_domain(part)
            body = "; ".join(x for x in (domain, _methods(part.records)) if x)
            scopes = _scope_tags(part.records, row.item.scope, numbers)
            parts.append(
                Latex(
                    head
                    + ": "
                    + to_latex(body, rename=rename)
                    + escape(f"; {cases}; {_verdicts(part.records)}")
                    + ("" if part.status == "checked" else escape(f" ({part.status})"))
                    + (escape(f" [scope: {scopes}]") if scopes else "")
                )
            )
        status = {"checked": r"\textsc{checked}", "partly": r"\textsc{partly}", "not checked": r"\textsc{not checked}"}
        cites = citations(*(str(r.get("paper_ref", "")) for r in row.records))
        label = merged.get(id(row)) or row.item.label
        out.append(
            {
                "label": Latex(escape(label) + (r"~\cite{" + ",".join(cites) + "}" if cites else "")),
                "status": Latex(status[row.status] + _status_why(row, numbers)),
                "statement": to_latex(row.item.statement, rename=_rename(row.records)),
                "note": to_latex(row.item.note, rename=_rename(row.records)) if row.item.note else Latex(""),
                "parts": parts,
                "reason": to_latex(row.item.not_checked or "no record refers to it") if not row.records else Latex(""),
            }
        )
    return out
