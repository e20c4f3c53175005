"""The report's structure: records grouped into sections and claims, the summary a referee reads first.

A *record* is one case of ``claims.json`` (one claim at one grid point and seed); a *claim* is a
registry entry (records sharing a ``key``); a *section* (:func:`lipschitz_icl.gates.registry.sections`)
holds the claims its member patterns match.  Exploratory records are counted apart and never in the
verdict counts of the paper's statements.  Records of an older ``claims.json`` without a ``key`` are
placed by their ``group``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from lipschitz_icl.gates import registry
from lipschitz_icl.gates.evidence import VERDICTS
from lipschitz_icl.report.latex import as_float

__all__ = ["Claim", "SectionView", "build_sections", "resolution_text", "section_label", "verdict_counts"]

OTHER = "Other records"


@dataclass
class Claim:
    """The records of one registry claim (``key``), in their order in ``claims.json``."""

    key: str
    records: list = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.records[0].get("status", "confirmatory")

    @property
    def rule(self) -> str:
        return self.records[0].get("rule_name") or "--"

    @property
    def margin(self) -> str:
        return self.records[0].get("margin") or "--"

    @property
    def margin_source(self) -> str:
        return self.records[0].get("margin_source") or ""

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[-1]


@dataclass
class SectionView:
    """One section of the report with its claims."""

    name: str
    paper_ref: str
    statement: str
    sharper: str
    claims: list = field(default_factory=list)

    @property
    def records(self) -> list:
        return [r for c in self.claims for r in c.records]


def section_label(name: str) -> str:
    """The LaTeX label of the report's section on the group ``name`` (``sec:theorem-3-4``)."""
    return "sec:" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _key(record: dict) -> str:
    """The record's registry key; for records without one, ``<group>.<second part of the id>``."""
    key = record.get("key")
    if isinstance(key, str) and key:
        return key
    parts = str(record.get("claim_id", "?")).split("/")
    return f"{record.get('group') or parts[0]}.{parts[1] if len(parts) > 1 else parts[0]}"


def build_sections(records: list) -> list[SectionView]:
    """Records grouped by registry section and claim, sections in the registry's order, empty ones
    dropped; records no section matches go to a final section :data:`OTHER`."""
    views = [SectionView(s.name, s.paper_ref, s.statement, s.sharper) for s in registry.sections()]
    other = SectionView(OTHER, "", "records of claims outside the registry's sections", "")
    claims: dict[str, Claim] = {}
    for record in records:
        key = _key(record)
        if key not in claims:
            claims[key] = Claim(key)
            section = registry.section_of(key)
            target = next((v for v in views if section is not None and v.name == section.name), other)
            target.claims.append(claims[key])
        claims[key].records.append(record)
    return [v for v in [*views, other] if v.claims]


def verdict_counts(records, status: str) -> dict:
    """Counts of every verdict (``holds, fails, inconclusive, proved, refuted, undecided``) over the
    records of ``status``."""
    rows = [r for r in records if r.get("status", "confirmatory") == status]
    return {v: sum(r.get("verdict") == v for r in rows) for v in VERDICTS}


def resolution_text(records, with_parameter: bool = True) -> str:
    """``parameter: value`` or ``parameter: low to high`` over the records' resolutions (``not
    reached`` when a record's rule refuted nothing up to its limit, ``--`` when none is recorded);
    without the parameter's name when ``with_parameter`` is false."""
    values, parameter, unreached = [], None, 0
    for r in records:
        res = r.get("resolution")
        if not isinstance(res, dict):
            continue
        parameter = parameter or res.get("parameter")
        value = as_float(res.get("value"))
        if value is None or not math.isfinite(value):
            unreached += 1
        else:
            values.append(value)
    if parameter is None:
        return "--"
    head = f"{parameter}: " if with_parameter else ""
    if not values:
        return f"{head}not reached"
    lo, hi = min(values), max(values)
    span = f"{lo:.2g}" if math.isclose(lo, hi, rel_tol=0.05) else f"{lo:.2g} to {hi:.2g}"
    return f"{head}{span}" + (f" ({unreached} not reached)" if unreached else "")


def near_misses(records) -> tuple[int, int]:
    """``(ruled out, total)`` over the records' pre-specified alternatives (``ruled_out``); an older
    record without alternatives counts its near-miss false variants (refuted: verdict ``fails``)."""
    ruled = total = 0
    for r in records:
        alts = [a for a in r.get("alternatives", []) if isinstance(a, dict)]
        if alts:
            total += len(alts)
            ruled += sum(bool(a.get("ruled_out")) for a in alts)
            continue
        for v in r.get("false_variants", []):
            if isinstance(v, dict):
                total += 1
                ruled += v.get("verdict") == "fails"
    return ruled, total
