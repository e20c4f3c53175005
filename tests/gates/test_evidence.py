"""lipschitz_icl.gates.evidence: the record of one claim case and its JSON form."""

import json
import math

import pytest

from lipschitz_icl.gates.evidence import Evidence, Quantity, combine_verdicts


def test_ratio_is_measured_over_theory_and_none_without_a_nonzero_theory():
    assert Quantity(name="x", theory=2.0, measured=3.0).ratio == 1.5
    assert Quantity(name="x", theory=0.0, measured=3.0).ratio is None
    assert Quantity(name="x", measured=3.0).ratio is None


@pytest.mark.parametrize("field, value", [("verdict", "maybe"), ("status", "final"), ("scope", "rumour")])
def test_an_unknown_verdict_status_or_scope_is_refused(field, value):
    kwargs = {"claim_id": "g/c", "verdict": "holds", field: value}
    with pytest.raises(ValueError, match=field):
        Evidence(**kwargs)


def test_evidence_is_frozen_and_keyword_only():
    with pytest.raises(TypeError):
        Evidence("g/c", "holds")  # positional arguments are refused
    e = Evidence(claim_id="g/c", verdict="holds")
    with pytest.raises(AttributeError):
        e.verdict = "fails"


def test_to_dict_is_json_with_infinities_as_strings_ratios_and_power():
    e = Evidence(
        claim_id="g/c",
        verdict="holds",
        quantities=(Quantity(name="q", theory=2.0, measured=1.0, ci_high=math.inf),),
        alternatives=({"name": "a", "ruled_out": True}, {"name": "b", "ruled_out": False}),
    )
    out = json.loads(json.dumps(e.to_dict(), allow_nan=False))
    assert out["quantities"][0]["ci_high"] == "inf" and out["quantities"][0]["ratio"] == 0.5
    assert out["power"] == [1, 2] and e.power == (1, 2)


def test_nan_never_reaches_the_json_form():
    e = Evidence(claim_id="g/c", verdict="holds", quantities=(Quantity(name="q", measured=math.nan),))
    with pytest.raises(ValueError, match="NaN"):
        e.to_dict()


def test_resolved_needs_a_finite_resolution_value():
    assert Evidence(claim_id="g/c", verdict="holds", resolution={"value": 0.1}).resolved
    assert not Evidence(claim_id="g/c", verdict="holds", resolution={"value": None}).resolved
    assert not Evidence(claim_id="g/c", verdict="holds", resolution={"value": math.inf}).resolved
    assert not Evidence(claim_id="g/c", verdict="holds").resolved


@pytest.mark.parametrize(
    "verdicts, combined",
    [
        (["holds", "holds"], "holds"),
        (["holds", "inconclusive"], "inconclusive"),
        (["inconclusive", "fails", "holds"], "fails"),
    ],
)
def test_combined_verdict_is_the_worst(verdicts, combined):
    assert combine_verdicts(verdicts) == combined


def test_rows_from_an_interval_and_from_an_estimate():
    from lipschitz_icl.estimate import Estimate

    row = Quantity.within("x", 2.0, (1.5, 2.5), theory=2.1, note="n")
    assert (row.name, row.measured, row.ci_low, row.ci_high, row.theory, row.note) == ("x", 2.0, 1.5, 2.5, 2.1, "n")
    e = Estimate(3.0, 0.5)
    row = Quantity.estimated("y", e, 0.95, verdict="holds")
    assert (row.measured, (row.ci_low, row.ci_high), row.verdict) == (3.0, e.confidence_interval(0.95), "holds")
    assert row.ci_low == pytest.approx(3.0 - 1.959963984540054 * 0.5)


def test_plot_is_the_figure_record_the_report_reads():
    from lipschitz_icl.gates.evidence import plot

    record = plot("loglog", [1.0, 2.0], [3.0, 4.0], "$n$", "error", theory_y=[3.1, 4.1], title="t")
    assert record == {
        "kind": "loglog",
        "x": [1.0, 2.0],
        "y": [3.0, 4.0],
        "theory_y": [3.1, 4.1],
        "title": "t",
        "xlabel": "$n$",
        "ylabel": "error",
    }
