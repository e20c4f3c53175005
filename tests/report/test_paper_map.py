"""The statement-by-statement map of the paper: items, the records they hold, and their status."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from lipschitz_icl.gates import registry
from lipschitz_icl.report.paper_map import FURTHER, case_list, items, map_rows, method_of, paper_map

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "claims_example.json"


def _record(claim_id: str, key: str, paper_ref: str, **more) -> dict:
    return {"claim_id": claim_id, "key": key, "paper_ref": paper_ref, "verdict": "holds", **more}


def test_the_map_covers_every_theorem_lemma_and_figure_of_the_paper():
    labels = [item.label for item in items()]
    for wanted in ("Theorem 3.4", "Theorem 3.5", "Theorem 4.4", "Linear attention", "Lemma B.1", "Lemma B.5"):
        assert wanted in labels
    assert "Assumption B.4, Lemmas C.3-C.9" in labels
    assert [f"paper Figure {n}" for n in range(1, 11)] == [x for x in labels if x.startswith("paper Figure")]
    for lemma in ("Projection tails", "Cap probability", "Cap counts", "Lipschitz functionals", "Softmax normaliser"):
        assert lemma in labels
    for item in items():  # an item no record reaches says why it is not checked
        assert item.parts or item.not_checked, item.label


def test_every_registry_claim_that_is_not_beyond_the_paper_has_a_place_on_the_map():
    records = [
        _record(f"{spec.key}/x", spec.key, spec.paper_ref, scope=spec.scope, status=spec.status)
        for spec in registry.load()
    ]
    placed = {r["key"] for row in paper_map(records) for r in row.records}
    for spec in registry.load():
        if spec.scope != "beyond":
            assert spec.key in placed, spec.key
        else:
            assert spec.key not in placed, spec.key  # beyond the paper: never one of its items


def test_a_claim_added_under_a_paper_reference_appears_without_report_work():
    new = _record(
        "thm34/window-bound/affine/d3", "thm34.window-bound", "Theorem 3.4 (two-sided bound)", rule_name="proof"
    )
    new["verdict"] = "proved"
    row = next(r for r in paper_map([new]) if r.item.label == "Theorem 3.4")
    assert row.records == [new]
    assert row.parts[-1].what == FURTHER and row.parts[-1].records == [new]
    assert method_of(new) == "proof"
    assert row.status == "partly"  # its named parts (the window law, monotonicity) have no case here


def test_status_checked_partly_not_checked():
    law = _record("thm34/window-law/affine/d2", "thm34.window-law", "Theorem 3.4", rule_name="asymptotic")
    mono = _record("thm34/monotonicity/affine/d3", "thm34.monotonicity", "Theorem 3.4", rule_name="sign")
    expl = dict(mono, status="exploratory")
    status = {r.item.label: r.status for r in paper_map([law, mono])}
    assert status["Theorem 3.4"] == "checked"
    assert status["paper Figure 2"] == "not checked"
    assert {r.item.label: r.status for r in paper_map([law, expl])}["Theorem 3.4"] == "partly"
    assert {r.item.label: r.status for r in paper_map([law])}["Theorem 3.4"] == "partly"


def test_a_statement_checked_without_proof_says_at_how_many_settings():
    """``checked`` on one (d, n) must not read as checked on the whole domain: the status cell counts the
    confirmatory settings when none is a proof, and says nothing of the kind once a proof checks a part."""
    one = _record("lemmaB1/value-leak/affine/d2-n20", "lemmaB1.value-leak", "Lemma B.1", rule_name="one-sided")
    rows = {r["label"]: r for r in map_rows(paper_map([one]), {one["claim_id"]: 56})}
    assert "at 1 setting, none by proof" in rows["Lemma B.1"]["status"]
    law = _record("thm34/window-law/affine/d2", "thm34.window-law", "Theorem 3.4", rule_name="asymptotic")
    law3 = dict(law, claim_id="thm34/window-law/affine/d3")
    bound = _record("loss_shape/window-bound/d2", "loss_shape.window-bound", "Theorem 3.4", rule_name="proof")
    numbers = {law["claim_id"]: 1, law3["claim_id"]: 2, bound["claim_id"]: 3}
    assert "at 2 settings, none by proof" in map_rows(paper_map([law, law3]), numbers)[0]["status"]
    assert "none by proof" not in map_rows(paper_map([law, law3, bound]), numbers)[0]["status"]


def test_a_finding_under_a_statement_is_flagged_as_past_or_against_it():
    """A finding that holds goes past or against the paper: the status cell names it beside the statement,
    and its part carries its scope, so its verdict never reads as the statement holding."""
    direction = _record("thm44/direction/lowrank-linear/d3k1", "thm44.direction", "Theorem 4.4", rule_name="sign")
    saddle = _record(
        "thm44/saddle/lowrank-quadratic/d3k1", "thm44.saddle", "Theorem 4.4", rule_name="equivalence", scope="finding"
    )
    numbers = {direction["claim_id"]: 1, saddle["claim_id"]: 2}
    row = next(r for r in map_rows(paper_map([direction, saddle]), numbers) if r["label"].startswith("Theorem 4.4"))
    assert r"findings past or against it: saddle \#2" in row["status"]
    assert any(r"[scope: finding \#2]" in part for part in row["parts"])


def test_map_rows_name_domain_method_cases_and_verdicts():
    data = json.loads(FIXTURE.read_text())
    records = copy.deepcopy(data["claims"])
    numbers = {r["claim_id"]: i + 1 for i, r in enumerate(records)}
    rows = map_rows(paper_map(records), numbers)
    thm34 = next(r for r in rows if r["label"].startswith("Theorem 3.4"))
    text = " ".join(thm34["parts"])
    assert "rule (asymptotic)" in text and "rule (sign)" in text and "#1" in text
    figures = [r for r in rows if "Figures 2" in r["label"]]  # the unchecked figures share one row, each named
    assert len(figures) == 1 and "2, 4, 7, 8, 10" in figures[0]["label"]
    assert "not reproduced" in figures[0]["reason"]


def test_case_list_reads_as_ranges():
    assert case_list([3, 4, 5, 8, 12, 13]) == "#3\u20135, 8, 12\u201313"  # ranges with an en dash
    assert case_list([]) == ""


def test_a_part_s_domain_names_the_context_sizes_of_a_design_grid():
    """thm35.generalisation runs n = 100, 1000, 10000 (no n in its id): beside thm35.envelope at n = 1000 the map
    printed n = 1000 alone (a referee read); now every n run, from the record, else from the design."""
    from lipschitz_icl.report.paper_map import PartRow, part_domain

    records = [
        {"key": "thm35.generalisation", "claim_id": "thm35/generalisation/affine/d3/seed0"},
        {"key": "thm35.envelope", "claim_id": "thm35/envelope/affine/d3/n1000/seed0"},
    ]
    assert "n = 100, 1000, 10000" in part_domain(PartRow("small error", records))
    assert "n = 1000" in part_domain(PartRow("envelope", records[1:]))
    window = [{"key": "thm34.window-law", "claim_id": "thm34/window-law/affine/d3"}]  # no record of its run
    assert "n = 100, 10000, 1e6, 1e8" in part_domain(PartRow("window", window))  # the design's grid
    # the grid as run, extended past the design's (a review found the map printing n up to 80 for a run to 160)
    ran = [{"key": "linear.cannot-adapt", "claim_id": "linear/cannot-adapt/affine/d3/seed0",
            "extra": {"n": [10, 20, 40, 80, 160]}}]  # fmt: skip
    assert "n = 10, 20, 40, 80, 160" in part_domain(PartRow("floor", ran))
    window[0]["extra"] = {"n_grid": [1e2, 1e14, 1e18]}
    assert "n = 100, 1e14, 1e18" in part_domain(PartRow("window", window))
