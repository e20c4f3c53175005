"""lipschitz_icl.report.schema: claims.json checked before the report reads it."""

import copy
import json

import pytest

from lipschitz_icl.gates.evidence import Evidence, Quantity
from lipschitz_icl.report.schema import MAX_DEPTH, load_claims, validate_claims
from lipschitz_icl.validation import ParameterError

RECORD = Evidence(
    claim_id="thm34/window-law/affine/d2",
    verdict="holds",
    key="thm34.window-law",
    scope="paper",
    quantities=(Quantity(name="C_d", theory=0.388, measured=0.389, ci_low=0.387, ci_high=0.391),),
    resolution={"parameter": "delta", "value": 0.01},
    alternatives=({"name": "a", "statement": "s", "verdict": "fails", "detail": "", "ruled_out": True},),
    seconds=0.5,
).to_dict()


def _doc(**record_changes):
    record = {**copy.deepcopy(RECORD), **record_changes}
    return {"profile": "default", "seconds": 1.0, "claims": [record]}


def test_a_record_the_plugin_writes_is_valid():
    assert validate_claims(_doc())["claims"][0]["claim_id"] == RECORD["claim_id"]


@pytest.mark.parametrize(
    "changes, where",
    [
        ({"verdict": "probably"}, "verdict"),
        ({"claim_id": "a\x07b"}, "claim_id"),
        ({"power": [3, 2]}, "power"),
        ({"status": "final"}, "status"),
        ({"scope": "rumour"}, "scope"),
        ({"seconds": -1.0}, "seconds"),
        ({"quantities": [{"name": "q", "theory": "high"}]}, "theory"),
        ({"proof": {"boxes": 3, "proved_at": [0.5, "x"]}}, "proved_at"),
        ({"proof": {"boxes": 3, "constant": "T} \\input{x"}}, "constant"),
        ({"proof": {"boxes": 3, "bracket": {"low": {}}}}, "bracket"),
        ({"proof": {"boxes": 3, "bracket": {"proved": {"value": "x", "files": ["a.json"]}}}}, "bracket.proved.value"),
        ({"proof": {"boxes": 3, "bracket": {"refuted": {"value": 2.0, "files": []}}}}, "bracket.refuted.files"),
    ],
)
def test_a_bad_field_is_refused_naming_where(changes, where):
    with pytest.raises(ParameterError, match=where):
        validate_claims(_doc(**changes))


def test_duplicate_claim_ids_are_refused():
    doc = _doc()
    doc["claims"].append(copy.deepcopy(doc["claims"][0]))
    with pytest.raises(ParameterError, match=r"unique|duplicate"):
        validate_claims(doc)


def test_deep_nesting_and_nan_tokens_are_refused_when_loading(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text(
        json.dumps(_doc(extra={"x": {}})).replace('{"x": {}}', "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))
    )
    with pytest.raises(ParameterError, match="claims"):
        load_claims(deep)
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(_doc()).replace("0.389", "NaN"))
    with pytest.raises(ParameterError, match="claims"):
        load_claims(nan)


def test_a_missing_file_says_how_to_make_one(tmp_path):
    with pytest.raises(ParameterError, match="pytest verify/"):
        load_claims(tmp_path / "claims.json")


def test_records_may_name_the_run_that_made_them_and_the_file_lists_its_runs():
    doc = _doc(run="run-2")
    doc["runs"] = [{"id": "run-1", "date": "2026-11-28", "selection": "(all)"}, {"id": "run-2", "seconds": 3.0}]
    doc["provenance"] = {"versions": {"python-flint": "0.9.0"}}
    assert validate_claims(doc)["claims"][0]["run"] == "run-2"
    for runs, where in (
        ("all", "runs"),
        ([{"date": "x"}], r"runs\[0\]\.id"),
        ([{"id": "r", "seconds": -1}], r"runs\[0\]\.seconds"),
    ):
        with pytest.raises(ParameterError, match=where):
            validate_claims({**doc, "runs": runs})
    with pytest.raises(ParameterError, match=r"\.run"):
        validate_claims(_doc(run=3))
    with pytest.raises(ParameterError, match="versions"):
        validate_claims({**_doc(), "provenance": {"versions": {"numpy": 2}}})
