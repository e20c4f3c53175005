"""Page 1's executive summary: every statement that does not hold, or holds only in part, in one item.

Read from ``claims.json`` and the paper map (:mod:`lipschitz_icl.report.paper_map`), claim by claim in
the report's order.  A claim yields an item when

* a case does not hold (verdict ``fails``, ``inconclusive``, ``refuted`` or ``undecided``): the cases and
  the compared number that carries the verdict;
* it is a finding (scope ``finding``: past or against the paper): its headline (the registry's one-line gist;
  the statement in full is in its section), else its statement;
* it is exploratory (its rule was set after seeing data): one line pointing to its section, where the
  reason is in full (a note under the section's table, or its figure's caption), and what each case not
  holding measured;
* a number reported beside it, not decided, lies on the other side of its direction
  (:func:`lipschitz_icl.report.summary.caveats`);
* a pre-specified alternative is not ruled out (any claim, any scope, confirmatory or exploratory): one
  item for them all (:func:`alternatives_item`), each claim with its cases, the alternative and its
  verdicts, so the count beside it is that of page 1's box;

and an item of the paper map yields one when it is checked only in part or not at all.  Each item names
the paper's statement it concerns (the map's label, else the report section) and the case numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from lipschitz_icl.report.latex import Latex, escape
from lipschitz_icl.report.mathtext import to_latex
from lipschitz_icl.report.paper_map import MapRow, case_list
from lipschitz_icl.report.profile import unrun_mentions
from lipschitz_icl.report.scope import checked_scope, record_scope
from lipschitz_icl.report.sections import SectionView, section_label
from lipschitz_icl.report.summary import NON_HOLDING, caveats, claim_headline, claim_statement, reason
from lipschitz_icl.report.symbols import rename_for

__all__ = ["Deviation", "deviations", "alternatives_item"]


@dataclass
class Deviation:
    """One item of the summary: where (the paper's statement and the claim), the cases, and what;
    ``first`` for a case that does not hold (listed before the rest), ``finding`` for a finding (listed next:
    past or against the paper)."""

    where: Latex
    cases: str
    what: Latex
    first: bool = False
    finding: bool = False

    @property
    def rank(self) -> int:
        """The order of page 1: cases that do not hold, then findings, then the rest."""
        return 0 if self.first else (1 if self.finding else 2)


def _label(key: str, views: list[SectionView], rows: list[MapRow]) -> str:
    for row in rows:
        if any(str(r.get("key", "")) == key for r in row.records):
            return row.item.label
    for view in views:
        if any(c.key == key for c in view.claims):
            return view.name
    return key.split(".")[0]


def _alternatives(records: list) -> list[tuple[str, list[dict]]]:
    """``(alternative name, records where it is not ruled out)`` in first-seen order."""
    out: dict[str, list[dict]] = {}
    for r in records:
        for alt in r.get("alternatives", []):
            if isinstance(alt, dict) and not alt.get("ruled_out"):
                out.setdefault(str(alt.get("name", "?")), []).append(r)
    return list(out.items())


def _setting(record: dict, rename: dict | None = None) -> Latex:
    """A case named by its setting as it reads (``exponential, d = 3``; typeset with the group's ``rename``),
    its id where it has no parameters."""
    setting = checked_scope([record]).replace("; ", ", ")
    return to_latex(setting, rename=rename) if setting else Latex(r"\code{" + escape(record["claim_id"]) + "}")


def _claim_items(claim, numbers: dict, where: Latex, run_ids: set, section: str = "") -> list[Deviation]:
    records = claim.records
    rename = rename_for(claim.key)
    nums = [numbers[r["claim_id"]] for r in records]
    scope = record_scope(records[0])
    exploratory = claim.status == "exploratory"
    out = []
    bad = [r for r in records if r.get("verdict") in NON_HOLDING]
    for r in [] if exploratory else bad:  # an exploratory claim's cases are in its one item below
        out.append(
            Deviation(
                where,
                case_list([numbers[r["claim_id"]]]),
                Latex(
                    r"\verdict{"
                    + escape(r["verdict"])
                    + "}"
                    + escape(" (exploratory)" if exploratory else "")
                    + " "
                    + _setting(r, rename)
                    + ": "
                    + reason(r)
                ),
                first=True,
            )
        )
    if scope == "finding":  # its headline (one line) where the registry has one, else its statement
        statement = claim_statement(claim.key, records)
        unrun = unrun_mentions(claim.key, statement, run_ids)  # said briefly: page 1 has no room to spare
        out.append(
            Deviation(
                where,
                case_list(nums),
                Latex(
                    r"\emph{Finding:} "
                    + to_latex(claim_headline(claim.key) or statement, rename=rename)
                    + escape(f" ({', '.join(unrun)}: not in this run.)" if unrun else "")
                ),
                finding=True,
            )
        )
    if exploratory:  # one line: the verdicts, where its section says why, and what each case not holding measured
        verdicts = ", ".join(sorted({str(r.get("verdict")) for r in records}))
        measured = "".join("; " + _setting(r, rename) + ": " + reason(r) for r in bad)
        out.append(
            Deviation(
                where,
                case_list(nums),
                Latex(
                    r"\emph{Exploratory} ("
                    + escape(verdicts)
                    + r"): its rule was set after seeing the data (why: Section~\ref{"
                    + section
                    + "})"
                    + measured
                ),
                first=bool(bad),
            )
        )
    against = caveats(records)
    if against:
        out.append(
            Deviation(
                where, case_list(nums), Latex(r"\emph{Against its direction, reported only:} " + "; ".join(against))
            )
        )
    return out


def alternatives_item(views: list[SectionView], numbers: dict) -> Deviation | None:
    """One item for every pre-specified alternative not ruled out, of every claim in every scope (module
    docstring): ``"N of M alternatives ... : claim (#cases, scope): name (verdicts); ..."``, ``None`` when
    every alternative is ruled out."""
    total = sum(isinstance(a, dict) for view in views for r in view.records for a in r.get("alternatives", []))
    pieces, count = [], 0
    for view in views:
        for claim in view.claims:
            for name, where_not in _alternatives(claim.records):
                count += len(where_not)
                verdicts = ", ".join(
                    sorted(
                        {str(a.get("verdict")) for r in where_not for a in r["alternatives"] if a.get("name") == name}
                    )
                )
                scope = record_scope(claim.records[0]) + ("" if claim.status == "confirmatory" else ", exploratory")
                pieces.append(
                    r"\textit{"
                    + escape(claim.name)
                    + "} ("
                    + escape(f"{case_list([numbers[r['claim_id']] for r in where_not])}, {scope}")
                    + "): "
                    + to_latex(name, rename=rename_for(claim.key))
                    + escape(f" ({len(where_not)} of {len(claim.records)}; {verdicts})")
                )
    if not pieces:
        return None
    return Deviation(
        Latex(r"\textbf{Alternatives not ruled out}"),
        "",
        Latex(
            escape(
                f"{count} of {total}, every claim and scope (claim (cases, scope): the alternative (cases, verdicts)): "
            )
            + "; ".join(pieces)
        ),
    )


def deviations(views: list[SectionView], rows: list[MapRow], numbers: dict, run_ids: set) -> list[Deviation]:
    """The summary's items (module docstring): claims in the report's order, then the paper map's items
    checked only in part or not at all; sorted (stably) by :attr:`Deviation.rank`: the cases that do not hold
    first, then the findings, then the rest.  ``run_ids``: the base ids of the cases run (a finding's statement
    naming a setting beyond them says so)."""
    out = []
    for view in views:
        for claim in view.claims:
            label = _label(claim.key, views, rows)
            where = Latex(r"\textbf{" + escape(label) + r"}, \textit{" + escape(claim.name) + "}")
            out.extend(_claim_items(claim, numbers, where, run_ids, section_label(view.name)))
    alternatives = alternatives_item(views, numbers)
    if alternatives is not None:
        out.append(alternatives)
    unchecked: dict[str, list[str]] = {}
    partly = []
    for row in rows:
        if row.status == "checked":
            continue
        if row.status == "not checked":
            unchecked.setdefault(row.item.not_checked or "no record of claims.json refers to it", []).append(
                row.item.label
            )
            continue
        missing = [p for p in row.parts if p.status != "checked"]
        text = "; ".join(f"{p.what} ({p.status})" for p in missing)
        partly.append(r"\textbf{" + escape(row.item.label) + "}: " + to_latex(text))
    if partly:  # one item: the parts of the paper's statements without a confirmatory case
        out.append(Deviation(Latex(r"\emph{Checked in part}"), "", Latex("; ".join(partly))))
    for why, labels in unchecked.items():
        where = Latex(r"\textbf{" + escape(_joined(labels)) + "}")
        out.append(Deviation(where, "", Latex(r"\emph{Not checked:} " + to_latex(why))))
    return sorted(out, key=lambda d: d.rank)


def _joined(labels: list[str]) -> str:
    """``paper Figures 2, 4, 7`` for several paper figures, else the labels joined."""
    prefix = "paper Figure "
    if len(labels) > 1 and all(label.startswith(prefix) for label in labels):
        return "paper Figures " + ", ".join(label[len(prefix) :] for label in labels)
    return ", ".join(labels)
