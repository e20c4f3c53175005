"""Page 1: the headline, the cases that do not hold, and the claim groups by scope.

* :func:`headline`: one line in the manner of pytest's last line -- confirmatory and exploratory verdict
  counts, alternatives ruled out, runtime, commit, date, profile, seeds.
* :func:`not_holding`: every case whose verdict is neither ``holds`` nor ``proved``, with its number and
  one line on why (the first compared number that carries the case's verdict).
* :func:`scope_rows`: the claim groups under the scopes of the registry (the paper's statements, the
  lemmas the proofs cite, results beyond the paper, findings, user variants), each statement followed
  by what was checked (:mod:`lipschitz_icl.report.scope`) so it is never read wider than that.
* :func:`caveats`: numbers reported alongside a claim (not decided) that lie on the other side of the
  claim's direction -- said next to the claim, never left uncommented.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lipschitz_icl.gates import registry
from lipschitz_icl.report.intervals import interval_short
from lipschitz_icl.report.latex import Latex, as_float, escape, num
from lipschitz_icl.report.mathtext import to_latex
from lipschitz_icl.report.scope import (
    SCOPE_ORDER,
    SCOPE_TITLES,
    checked_scope,
    decided_probes,
    how_checked,
    record_scope,
)
from lipschitz_icl.report.sections import SectionView, verdict_counts
from lipschitz_icl.report.symbols import rename_for

__all__ = [
    "headline",
    "not_holding",
    "scope_rows",
    "caveats",
    "alternatives",
    "NON_HOLDING",
    "reason",
    "claim_statement",
    "ScopeCount",
    "scope_counts",
    "point_checks",
    "points_of",
    "PointChecks",
]

NON_HOLDING = ("fails", "inconclusive", "refuted", "undecided")
DIRECTION_RULES = ("sign", "one-sided")  # rules with a direction a reported number can lie against


def alternatives(claims: list) -> tuple[int, int, str]:
    """``(ruled out, total, word)``: pre-specified alternatives (``alternatives``, ``ruled_out``) where the
    records carry them, else the near-miss false variants refuted (verdict ``fails``)."""
    alts = [a for r in claims for a in r.get("alternatives", []) if isinstance(a, dict)]
    if alts:
        return sum(bool(a.get("ruled_out")) for a in alts), len(alts), "alternatives ruled out"
    variants = [v for r in claims for v in r.get("false_variants", []) if isinstance(v, dict)]
    return sum(v.get("verdict") == "fails" for v in variants), len(variants), "near-miss variants refuted"


def _counts_text(counts: dict) -> str:
    main = f"{counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} inconclusive"
    extra = [f"{counts[v]} {v}" for v in ("proved", "refuted", "undecided") if counts.get(v)]
    return main + ("" if not extra else ", " + ", ".join(extra))


def headline(claims: list, prov) -> dict:
    """The pieces of the first line (LaTeX): ``confirmatory``, ``exploratory``, ``alternatives``,
    ``seconds``, ``commit``, ``date``, ``profile``, ``seeds``, ``points``."""
    conf = verdict_counts(claims, "confirmatory")
    expl = verdict_counts(claims, "exploratory")
    ruled, total, word = alternatives(claims)
    points = [r for r in claims if isinstance(r.get("points"), int) and r.get("verdict") == "holds"]
    commit = prov.short_commit + ("" if prov.dirty is None else (" (dirty tree)" if prov.dirty else " (clean tree)"))
    return {
        "confirmatory": escape(_counts_text(conf)),
        "exploratory": escape(
            f"{expl['holds']}/{expl['fails']}/{expl['inconclusive']}"
            + "".join(f"/{expl[v]} {v}" for v in ("proved", "refuted", "undecided") if expl.get(v))
        ),
        "alternatives": escape(f"{word[0].upper() + word[1:]}: {ruled} of {total}"),
        "seconds": escape("runtime unknown" if prov.seconds is None else f"{prov.seconds:.0f} s"),
        "commit": escape(commit),
        "date": escape(prov.date[:10]),
        "profile": escape(prov.profile),
        "seeds": escape(prov.seeds),
        "points": escape(f"{len(points)} universal statements hold at points only" if points else ""),
        "derived": escape(", ".join(prov.derived)),
    }


def reason(record: dict) -> Latex:
    """One line on why a case does not hold: its first compared number carrying its verdict (else one not
    holding), as ``name = measured(interval)``, the theory if any and the start of its note."""
    quantities = [q for q in record.get("quantities", []) if isinstance(q, dict)]
    q = next((q for q in quantities if q.get("verdict") == record.get("verdict")), None) or next(
        (q for q in quantities if q.get("verdict") not in (None, "holds", "proved")), None
    )
    if q is None:
        res = record.get("resolution") or {}
        return escape(
            "no compared number carries the verdict"
            + ("; the rule's resolution was not reached" if isinstance(res, dict) and res.get("value") is None else "")
        )
    rename = rename_for(str(record.get("key", "")))
    parts = [
        to_latex(str(q.get("name", "")), rename=rename),
        Latex(" $=$ "),
        num(q.get("measured"), q.get("ci_low"), q.get("ci_high"), digits=4),
        _level(record, q),
    ]
    if as_float(q.get("theory")) is not None:
        parts += [Latex(", theory "), num(q.get("theory"), digits=4)]
    note = " ".join(str(q.get("note", "")).split())
    if note:
        parts += [Latex("; "), to_latex(note, rename=rename)]
    return Latex("".join(parts))


def _level(record: dict, q: dict) -> Latex:
    """`` (99.983% interval)`` after a number printed with its interval: what the interval is (its
    confidence level or a numerical-error bound, :func:`lipschitz_icl.report.intervals.interval_short`)."""
    low, high = as_float(q.get("ci_low")), as_float(q.get("ci_high"))
    kind = interval_short(record) if low is not None and high is not None and low != high else ""
    return escape(f" ({kind})") if kind else Latex("")


@dataclass
class NotHolding:
    number: int
    claim_id: Latex
    verdict: str
    status: str
    why: Latex


def not_holding(claims: list, numbers: dict) -> list[NotHolding]:
    """Every case whose verdict is in :data:`NON_HOLDING`, in case-number order."""
    out = [
        NotHolding(
            numbers.get(r["claim_id"], 0),
            escape(r["claim_id"]),
            r["verdict"],
            r.get("status", "confirmatory"),
            reason(r),
        )
        for r in claims
        if r.get("verdict") in NON_HOLDING
    ]
    return sorted(out, key=lambda x: x.number)


def claim_statement(key: str, records: list) -> str:
    """A claim's statement as the registry words it (the record's own where the registry has none)."""
    try:
        return registry.find(key).statement
    except KeyError:
        return str(records[0].get("statement", ""))


def claim_headline(key: str) -> str:
    """A finding's gist in one line as the registry words it (``headline``), else ``""``."""
    try:
        return registry.find(key).headline
    except KeyError:
        return ""


@dataclass
class ScopeRow:
    group: Latex
    paper_ref: Latex
    statement: Latex
    checked: list
    confirmatory: dict
    exploratory: dict


def _checked_lines(view: SectionView, scope: str) -> list[Latex]:
    lines = []
    for claim in view.claims:
        records = [r for r in claim.records if record_scope(r) == scope]
        if not records:
            continue
        how = "; ".join(x for x in (how_checked(records), decided_probes(records)) if x)
        text = checked_scope(records) + (f"; {how}" if how else "")
        status = "" if claim.status == "confirmatory" else " (exploratory)"
        lines.append(
            Latex(
                r"\textit{"
                + escape(claim.name)
                + "}"
                + escape(status)
                + ": "
                + to_latex(text or "one case", rename=rename_for(claim.key))
            )
        )
    return lines


def scope_rows(views: list[SectionView]) -> list[tuple[str, list[ScopeRow]]]:
    """``[(scope title, rows)]`` in :data:`SCOPE_ORDER`; a section appears under every scope its records
    have, with its own statement for the paper's scope and its claims' statements otherwise."""
    out = []
    for scope in SCOPE_ORDER:
        rows = []
        for view in views:
            records = [r for r in view.records if record_scope(r) == scope]
            if not records:
                continue
            mixed = {record_scope(r) for r in view.records} != {scope}
            if scope == "paper" or not mixed:
                statement = view.statement
            else:
                keys = list(dict.fromkeys(str(r.get("key", "")) for r in records))
                statement = " ".join(claim_statement(k, [r for r in records if r.get("key") == k]) for k in keys)
            rename = rename_for(str(records[0].get("key", "")))
            rows.append(
                ScopeRow(
                    escape(view.name),
                    escape(view.paper_ref),
                    to_latex(statement, rename=rename),
                    _checked_lines(view, scope),
                    verdict_counts(records, "confirmatory"),
                    verdict_counts(records, "exploratory"),
                )
            )
        if rows:
            out.append((SCOPE_TITLES[scope], rows))
    return out


def _suffix(name: str) -> str:
    """A quantity's name without its leading ``<probe>:`` (``affine: error ratio ...`` -> ``error ratio ...``)."""
    return re.sub(r"^[^:]{1,40}:\s*", "", name)


def _reference(q: dict) -> float:
    theory = as_float(q.get("theory"))
    if theory is not None and math.isfinite(theory):
        return theory
    return 1.0 if "ratio" in str(q.get("name", "")) else 0.0


def caveats(records: list) -> list[Latex]:
    """Numbers reported alongside a claim but not decided (verdict null) whose interval lies wholly on the
    other side of the reference (theory, else 1 for a ratio, else 0) from every decided number of the same
    kind (same name after its ``<probe>:`` prefix), e.g. a mismatched-``L`` error ratio below 1 on a
    probe outside the claim's classes."""
    out = []
    for record in records:
        if record.get("rule_name") not in DIRECTION_RULES:
            continue  # an equivalence (or a proof) has no side to be against
        quantities = [q for q in record.get("quantities", []) if isinstance(q, dict)]
        for q in quantities:
            if q.get("verdict") is not None:
                continue
            low, high = as_float(q.get("ci_low")), as_float(q.get("ci_high"))
            if low is None or high is None:
                continue
            gated = [
                g
                for g in quantities
                if g.get("verdict") in ("holds", "proved")
                and _suffix(str(g.get("name", ""))) == _suffix(str(q.get("name", "")))
            ]
            sides = {
                math.copysign(1, measured - _reference(g))
                for g in gated
                if (measured := as_float(g.get("measured"))) is not None
            }
            ref = _reference(q)
            if len(sides) == 1 and ((sides == {1.0} and high < ref) or (sides == {-1.0} and low > ref)):
                value = num(q.get("measured"), low, high, digits=4)
                side = "below" if high < ref else "above"
                out.append(
                    Latex(
                        to_latex(str(q.get("name", "")), rename=rename_for(str(record.get("key", ""))))
                        + " $=$ "
                        + value
                        + _level(record, q)
                        + escape(f": {side} {ref:g}, unlike every decided number of this kind")
                    )
                )
    return out


@dataclass
class ScopeCount:
    """The cases of one scope: verdict counts of its confirmatory and exploratory cases, and how many
    claims (statements) they are cases of."""

    scope: str
    title: str
    confirmatory: dict
    exploratory: dict
    cases: int
    claims: int
    point_cases: int


def scope_counts(claims: list) -> list[ScopeCount]:
    """One :class:`ScopeCount` per scope present, in :data:`SCOPE_ORDER`."""
    out = []
    points = {id(r) for r, _ in point_checks(claims).cases}
    for scope in SCOPE_ORDER:
        records = [r for r in claims if record_scope(r) == scope]
        if not records:
            continue
        out.append(
            ScopeCount(
                scope,
                SCOPE_TITLES[scope],
                verdict_counts(records, "confirmatory"),
                verdict_counts(records, "exploratory"),
                len(records),
                len({str(r.get("key") or r["claim_id"]) for r in records}),
                sum(id(r) in points for r in records),
            )
        )
    return out


_AT_POINTS = re.compile(r"at all (\d+) points")


def points_of(record: dict) -> int | None:
    """The number of points a record's universal statement was evaluated at (``points``, else a note
    "at all N points"), or ``None`` for a record that is not such a check."""
    if record.get("rule_name") == "proof":
        return None
    if isinstance(record.get("points"), int):
        return record["points"]
    for q in record.get("quantities", []):
        if isinstance(q, dict) and q.get("verdict") is not None:
            m = _AT_POINTS.search(str(q.get("note", "")))
            if m:
                return int(m.group(1))
    return None


@dataclass
class PointChecks:
    """Cases of universal statements evaluated at points only: ``cases`` as ``(record, points)``."""

    cases: list

    @property
    def claims(self) -> list[str]:
        return list(dict.fromkeys(str(r.get("key") or r["claim_id"]) for r, _ in self.cases))

    @property
    def points(self) -> int:
        return sum(p for _, p in self.cases)


def point_checks(claims: list) -> PointChecks:
    """Every case whose statement holds for a whole domain but was evaluated at grid points only."""
    return PointChecks([(r, p) for r in claims if (p := points_of(r)) is not None])
