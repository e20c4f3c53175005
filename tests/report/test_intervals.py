"""The meaning of a case's intervals, read from its rule's words: a confidence level (stated, or derived
from a z), or a bound on the numerical error of an exact computation."""

from __future__ import annotations

import pytest

from lipschitz_icl.report.intervals import interval_kind, interval_short, normal_level


def test_a_stated_level_is_printed_as_stated():
    assert interval_kind({"rule": "sign rule (interval at level 0.999875, Bonferroni)"}) == "99.9875% confidence"
    assert interval_kind({"rule": "Clopper-Pearson at 0.999900 (10 points)"}) == "99.99% confidence"


def test_a_z_gives_its_two_sided_normal_level():
    assert normal_level(1.959963984540054) == pytest.approx(0.95)
    assert interval_kind({"rule": "sign of log(E_L'/E_L) (z = 3.76, Bonferroni at 0.001)"}) == (
        "99.983% confidence (z = 3.76)"
    )


def test_t_and_welch_intervals_name_their_kind():
    assert interval_kind({"rule": "0.99 t-interval of mean tr(M)/d"}) == "99% confidence (t)"
    assert interval_kind({"rule": "0.99 Welch interval of tr(M)/d - w*"}) == "99% confidence (Welch)"


def test_an_exact_computation_states_a_numerical_bound_not_a_level():
    kind = interval_kind({"rule": "asymptotic rule on exact w* (interval: its stated accuracy)."})
    assert "numerical error" in kind and "%" not in kind


def test_a_family_wise_error_is_not_read_as_a_confidence_level():
    kind = interval_kind({"rule": "one-sided tests on Bonferroni intervals over 11 tests (level 0.001)"})
    assert kind == "Bonferroni intervals at family-wise error 0.001"


def test_a_rule_that_states_nothing_gives_nothing():
    assert interval_kind({"rule": "proof"}) == "" and interval_kind({}) == ""


def test_the_short_form_names_the_level_or_the_numerical_bound():
    assert interval_short({"rule": "sign (z = 3.76, Bonferroni at 0.001)"}) == "99.983% interval"
    assert interval_short({"rule": "exact w* (interval: its stated accuracy)"}) == "numerical-error bound"
    assert interval_short({"rule": "proof"}) == ""
