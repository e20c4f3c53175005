"""Page 1's deviations: every statement that does not hold, holds in part, is exploratory or goes against
the paper, one item each, with case numbers."""

from __future__ import annotations

import re

from lipschitz_icl.report.deviations import deviations
from lipschitz_icl.report.paper_map import paper_map
from lipschitz_icl.report.sections import build_sections


def _record(claim_id: str, key: str, **more) -> dict:
    return {"claim_id": claim_id, "key": key, "verdict": "holds", "status": "confirmatory", "quantities": [], **more}


def _items(records: list) -> list:
    views = build_sections(records)
    ordered = [r for v in views for r in v.records]
    numbers = {r["claim_id"]: i + 1 for i, r in enumerate(ordered)}
    run_ids = {re.sub(r"/seed\d+$", "", r["claim_id"]) for r in ordered}
    return deviations(views, paper_map(ordered), numbers, run_ids)


def test_a_case_that_does_not_hold_comes_first_with_its_number_and_reason():
    bad = _record(
        "thm34/window-law/relu/d5",
        "thm34.window-law",
        paper_ref="Theorem 3.4",
        verdict="fails",
        quantities=[{"name": "w*/law - 1", "measured": 0.2, "ci_low": 0.15, "ci_high": 0.25, "verdict": "fails"}],
    )
    ok = _record("thm34/monotonicity/affine/d3", "thm34.monotonicity", paper_ref="Theorem 3.4")
    items = _items([ok, bad])
    first = items[0]
    assert first.first and "Theorem 3.4" in first.where and "window-law" in first.where
    assert first.cases == "#2" and r"\verdict{fails}" in first.what and "ReLU, $d = 5$: " in first.what


def test_exploratory_findings_alternatives_and_reported_numbers_are_each_said():
    expl = _record(
        "figures/fig3/affine/seed0",
        "figures.fig3",
        paper_ref="Figure 3",
        status="exploratory",
        extra={"exploratory_reason": "the protocol had not reached w* at L = 2"},
    )
    finding = _record(
        "thm44/saddle/lowrank-quadratic/d3k1/seed0",
        "thm44.saddle",
        paper_ref="Theorem 4.4",
        scope="finding",
        alternatives=[{"name": "the O(1/n) expansion", "verdict": "holds", "ruled_out": False}],
    )
    against = _record(
        "thm35/mismatch/d3/n1000/seed0",
        "thm35.mismatch",
        paper_ref="Theorem 3.5",
        rule_name="sign",
        quantities=[
            {
                "name": "affine: error ratio E(L' = 10L)/E(L' = L)",
                "measured": 2.9,
                "ci_low": 2.8,
                "ci_high": 3.1,
                "verdict": "holds",
            },
            {
                "name": "triangle-4: error ratio E(L' = 10L)/E(L' = L)",
                "measured": 0.927,
                "ci_low": 0.867,
                "ci_high": 0.991,
                "verdict": None,
            },
        ],
    )
    text = " ".join(d.what for d in _items([expl, finding, against]))
    # one line: exploratory, and where its section gives the reason in full (not on page 1)
    assert "Exploratory" in text and r"(why: Section~\ref{sec:" in text and "had not reached" not in text
    assert "Finding" in text and "Alternatives not ruled out" in " ".join(d.where for d in _items([finding]))
    # a finding with a registry headline is said in one line; its statement in full is in its section
    assert "is a saddle along the complement" in text and "changes as derived exactly in" not in text
    assert "expansion (1 of 1; holds)" in text
    assert "Against its direction" in text and "triangle-4" in text
    assert "below 1, unlike every decided number of this kind" in text  # the side it lies on, said plainly
    where = " ".join(d.where for d in _items([expl, finding, against]))
    assert "Not checked" in text and "Checked in part" in where  # the paper map's gaps follow the claims


def test_an_equivalence_claim_has_no_direction_to_be_against():
    equiv = _record(
        "thm35/same-l-classes/d3/n1000/seed0",
        "thm35.same-l-classes",
        paper_ref="Figure 5",
        rule_name="equivalence",
        quantities=[
            {"name": "affine: error ratio", "measured": 1.02, "ci_low": 1.0, "ci_high": 1.04, "verdict": "holds"},
            {"name": "triangle-4: error ratio", "measured": 0.9, "ci_low": 0.85, "ci_high": 0.95, "verdict": None},
        ],
    )
    assert not any("Against its direction" in d.what for d in _items([equiv]))


def test_an_exploratory_case_that_does_not_hold_is_one_item_first():
    """An exploratory claim's inconclusive case was listed twice (once as not holding, once as exploratory):
    it is one item, first, with the reason it is exploratory and what the case measured."""
    rough = _record(
        "regularity/window-law/exponential/d3",
        "regularity.window-law-rough",
        paper_ref="Regularity law",
        status="exploratory",
        verdict="inconclusive",
        extra={"exploratory_reason": "the next-order term was identified after seeing the data"},
        quantities=[
            {"name": "w*/law - 1", "measured": -0.0239, "ci_low": -0.024, "ci_high": -0.0238, "verdict": "inconclusive"}
        ],
    )
    ok = _record("thm34/monotonicity/affine/d3", "thm34.monotonicity", paper_ref="Theorem 3.4")
    items = [d for d in _items([ok, rough]) if "window-law-rough" in d.where]
    assert len(items) == 1
    (item,) = items
    assert item.first and "Exploratory" in item.what and "after seeing the data" in item.what
    assert "exponential, $d = 3$: " in item.what and "0.0239" in item.what


def test_findings_come_right_after_the_cases_that_do_not_hold():
    """A finding goes past or against the paper: it is listed before exploratory notes and partial checks."""
    expl = _record(
        "figures/fig3/affine/seed0",
        "figures.fig3",
        paper_ref="Figure 3",
        status="exploratory",
        extra={"exploratory_reason": "the protocol had not reached w* at L = 2"},
    )
    finding = _record(
        "thm44/saddle/lowrank-quadratic/d3k1/seed0", "thm44.saddle", paper_ref="Theorem 4.4", scope="finding"
    )
    items = _items([expl, finding])
    assert "Finding" in items[0].what and items[0].rank == 1
    assert all(item.rank == 2 for item in items[1:])


def test_every_alternative_not_ruled_out_is_listed_whatever_its_scope_or_status():
    """Page 1 counts every alternative not ruled out (a lemma's, a result beyond the paper's, an exploratory
    claim's), not only those of the paper's statements, in one item whose count matches the records."""
    lemma = _record(
        "concentration/levy-exact/d3",
        "concentration.levy-exact",
        paper_ref="Sphere concentration: Levy",
        scope="lemma",
        alternatives=[
            {"name": "the Gaussian rate d/2", "verdict": "holds", "ruled_out": False},
            {"name": "rate 2", "verdict": "fails", "ruled_out": True},
        ],
    )
    expl = _record(
        "thm35/noise-part/affine/d3/seed0",
        "thm35.noise-part",
        paper_ref="Theorem 3.5",
        status="exploratory",
        alternatives=[{"name": "without the 1/n^2 term", "verdict": "holds", "ruled_out": False}],
    )
    (item,) = [d for d in _items([lemma, expl]) if "Alternatives not ruled out" in d.where]
    assert item.what.startswith("2 of 3,")
    assert "the Gaussian rate" in item.what and "lemma" in item.what
    assert "without the" in item.what and "exploratory" in item.what


def test_a_finding_whose_statement_names_a_setting_the_run_did_not_reach_says_so():
    """The saddle finding's statement names d8k2 (the full profile's grid); a run of d3k1 only must not present
    the d8k2 result as this run's."""
    finding = _record(
        "thm44/saddle/lowrank-quadratic/d3k1/seed0", "thm44.saddle", paper_ref="Theorem 4.4", scope="finding"
    )
    (item,) = [d for d in _items([finding]) if "Finding" in str(d.what)]
    assert "d8k2: not in this run" in str(item.what)
    ran = [
        _record(f"thm44/saddle/lowrank-{link}/{grid}/seed0", "thm44.saddle", paper_ref="Theorem 4.4", scope="finding")
        for link in ("quadratic", "cosine")
        for grid in ("d3k1", "d4k2", "d8k2")
    ]
    (item,) = [d for d in _items(ran) if "Finding" in str(d.what)]
    assert "not in this run" not in str(item.what)


def test_a_case_not_holding_is_named_by_its_setting_in_its_group_s_symbols():
    """``falls_at`` is printed ``w_fall`` in the loss-shape statements; the setting of a case that does not hold
    uses the same symbol, not the program's name."""
    bad = _record(
        "loss_shape/relu-bias-turns/d3-n20-w2.0-12.0",
        "loss_shape.relu-bias-turns",
        paper_ref="Lemmas C.3-C.9",
        scope="finding",
        verdict="undecided",
    )
    text = " ".join(d.what for d in _items([bad]))
    assert r"$w_{\mathrm{fall}} = 2.0$" in text and r"\mathrm{falls}" not in text and "falls_" not in text
