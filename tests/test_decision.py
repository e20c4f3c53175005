"""The decision vocabulary: each rule gives holds / fails / inconclusive on constructed intervals, a
noisier measurement never turns ``fails`` into ``holds``, and the resolution bisection finds a known
threshold."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lipschitz_icl import decision

finite = st.floats(-10, 10, allow_nan=False)
positive = st.floats(0, 5, allow_nan=False)


def test_equivalence_three_outcomes():
    assert decision.equivalence(-0.01, 0.02, 0.05).verdict == "holds"
    assert decision.equivalence(0.06, 0.08, 0.05).verdict == "fails"
    assert decision.equivalence(-0.09, -0.06, 0.05).verdict == "fails"
    assert decision.equivalence(0.01, 0.07, 0.05).verdict == "inconclusive"
    assert decision.equivalence(-1.0, 1.0, 0.05).verdict == "inconclusive"  # too wide: never holds


def test_one_sided_both_relations():
    assert decision.one_sided(0.1, 0.2, 0.3, "<=").verdict == "holds"
    assert decision.one_sided(0.4, 0.5, 0.3, "<=").verdict == "fails"
    assert decision.one_sided(0.2, 0.4, 0.3, "<=").verdict == "inconclusive"
    assert decision.one_sided(0.4, 0.5, 0.3, ">=").verdict == "holds"
    assert decision.one_sided(0.1, 0.2, 0.3, ">=").verdict == "fails"


def test_sign_both_directions_and_margin():
    assert decision.sign(0.1, 0.2, +1).verdict == "holds"
    assert decision.sign(-0.2, -0.1, +1).verdict == "fails"
    assert decision.sign(-0.1, 0.1, +1).verdict == "inconclusive"
    assert decision.sign(-0.2, -0.1, -1).verdict == "holds"
    assert decision.sign(0.1, 0.2, +1, margin=0.15).verdict == "inconclusive"


def test_bad_intervals_are_refused():
    with pytest.raises(ValueError):
        decision.equivalence(1.0, 0.0, 0.1)
    with pytest.raises(ValueError):
        decision.sign(math.nan, 0.0, +1)
    with pytest.raises(ValueError):
        decision.one_sided(0.0, 1.0, 0.5, "<")


def _points(distances, next_orders, half=1e-6):
    return [
        decision.AsymptoticPoint(10.0**i, d - half, d + half, t) for i, (d, t) in enumerate(zip(distances, next_orders))
    ]


def test_asymptotic_holds_when_the_distance_follows_the_derived_term():
    t = [0.1, 0.03, 0.004]
    assert decision.asymptotic(_points([x * 1.05 for x in t], t), 0.01).verdict == "holds"


def test_asymptotic_not_yet_in_range_is_inconclusive_never_fails():
    t = [0.3, 0.2, 0.1]  # the derived next-order term is still above the margin
    out = decision.asymptotic(_points([0.5, 0.4, 0.3], t), 0.01)
    assert out.verdict == "inconclusive" and "not yet in range" in out.detail


def test_asymptotic_fails_when_converging_elsewhere():
    t = [0.01, 0.001, 0.0001]
    assert decision.asymptotic(_points([0.05 + x for x in t], t), 0.01).verdict == "fails"


def test_asymptotic_distance_not_following_the_rate_is_not_holds():
    t = [0.01, 0.004, 0.002]  # in range, distance within margin but three times the derived term
    assert decision.asymptotic(_points([3 * x for x in t], t), 0.01).verdict == "inconclusive"


def test_extend_grid_goes_until_the_next_order_term_is_small_or_the_limit():
    grid = decision.extend_grid([1e2, 1e4], lambda x: x**-0.25, 0.02, factor=100.0, x_max=1e30)
    assert abs(grid[-1] ** -0.25) < 0.01 <= abs(grid[-2] ** -0.25)
    capped = decision.extend_grid([1e2], lambda x: x**-0.25, 0.02, factor=100.0, x_max=1e6)
    assert capped[-1] == 1e6


@given(finite, positive, positive, st.floats(0.01, 3))
def test_equivalence_wider_interval_never_turns_fails_into_holds(centre, half, extra, margin):
    narrow = decision.equivalence(centre - half, centre + half, margin).verdict
    wide = decision.equivalence(centre - half - extra, centre + half + extra, margin).verdict
    assert not (narrow == "fails" and wide == "holds")
    assert wide in (narrow, "inconclusive")


@given(finite, positive, positive, finite)
def test_one_sided_and_sign_wider_interval_is_never_more_decided(centre, half, extra, bound):
    for rule in (
        lambda lo, hi: decision.one_sided(lo, hi, bound, "<="),
        lambda lo, hi: decision.one_sided(lo, hi, bound, ">="),
        lambda lo, hi: decision.sign(lo, hi, +1),
        lambda lo, hi: decision.sign(lo, hi, -1),
    ):
        narrow = rule(centre - half, centre + half).verdict
        wide = rule(centre - half - extra, centre + half + extra).verdict
        assert wide in (narrow, "inconclusive")


@given(st.lists(st.tuples(finite, positive, finite), min_size=2, max_size=4), positive, st.floats(0.01, 1))
def test_asymptotic_wider_interval_is_never_more_decided(rows, extra, margin):
    narrow = [decision.AsymptoticPoint(10.0**i, d - h, d + h, t) for i, (d, h, t) in enumerate(rows)]
    wide = [decision.AsymptoticPoint(p.x, p.low - extra, p.high + extra, p.next_order) for p in narrow]
    assert decision.asymptotic(wide, margin).verdict in (decision.asymptotic(narrow, margin).verdict, "inconclusive")


def test_resolution_finds_a_known_threshold():
    res = decision.resolution(lambda x: x > 0.0123, "shift", start=1e-4, limit=1.0, rel_tol=0.01)
    assert res.resolved and 0.0123 < res.value <= 0.0123 * 1.011 and res.low <= 0.0123


def test_resolution_not_reached_is_reported_not_invented():
    res = decision.resolution(lambda x: False, "shift", start=1e-3, limit=0.5)
    assert not res.resolved and res.to_dict()["value"] is None


def test_combine():
    assert decision.combine(["holds", "holds"]) == "holds"
    assert decision.combine(["holds", "inconclusive"]) == "inconclusive"
    assert decision.combine(["inconclusive", "fails"]) == "fails"
    assert decision.combine([]) == "inconclusive"
    assert decision.combine(["proved", "proved"]) == "proved"
    assert decision.combine(["proved", "undecided"]) == "undecided"
    assert decision.combine(["undecided", "refuted", "proved"]) == "refuted"
    assert decision.combine(["holds", "proved"]) == "holds"


def test_judge_decides_the_claim_its_resolutions_and_its_alternatives():
    """``judge`` runs the claim's own rule: the claim at no deviation, each resolution by bisection on its
    keyword, each alternative with its arguments -- on the fresh decide function when one is given."""

    def make(centre):
        def decide(shift=0.0, scale=1.0):
            return decision.equivalence(scale * centre - 0.01 - shift, scale * centre + 0.01 - shift, 0.05)

        return decide

    specs = [
        decision.ResolutionSpec(parameter="shift", meaning="m", start=1e-3, limit=1.0, two_sided=True),
        decision.ResolutionSpec(parameter="scale", meaning="m", arg="scale", start=1.0, limit=100.0),
    ]
    alternatives = [
        decision.Alternative(name="off by 0.3", statement="s", args={"shift": 0.3}),
        decision.Alternative(name="near", statement="s", args={"shift": 0.01}),
    ]
    judged = decision.judge(make(0.0), specs, alternatives)
    assert judged.decision.verdict == "holds" and judged.resolved
    assert 0.06 < judged.resolutions[0].value <= 0.07 * 1.1
    assert [a.ruled_out for a in judged.alternatives] == [True, False] and not judged.alternatives[0].fresh
    fresh = decision.judge(make(0.0), specs, alternatives, fresh=make(0.3))
    assert [a.verdict for a in fresh.alternatives] == ["holds", "fails"] and fresh.alternatives[0].fresh


def test_verdict_vocabulary_carries_exit_codes_and_meanings():
    from lipschitz_icl.decision import Verdict, exit_code

    assert [v.exit_code for v in Verdict] == [0, 1, 3, 0, 1, 3]
    assert Verdict.PROVED.passes and Verdict.HOLDS.passes and not Verdict.UNDECIDED.passes
    assert Verdict.REFUTED.refutes and Verdict.FAILS.refutes and not Verdict.INCONCLUSIVE.refutes
    assert Verdict("holds") == "holds" and str(Verdict.PROVED) == "proved"
    assert exit_code("inconclusive") == 3 and exit_code("refuted") == 1
    assert all(v.meaning for v in Verdict)
    with pytest.raises(ValueError):
        exit_code("passes")


def test_any_of_is_a_disjunction():
    h, f, i = (decision.Decision("sign", v) for v in ("holds", "fails", "inconclusive"))
    assert decision.any_of("sign", [f, h, i]).verdict == "holds"
    assert decision.any_of("sign", [f, f]).verdict == "fails"
    assert decision.any_of("sign", [f, i]).verdict == "inconclusive"
    assert decision.any_of("sign", []).verdict == "inconclusive"


def test_shifted_equivalence_is_an_equivalence_with_the_derived_value():
    # measured change -1.00e-4 +- 1e-6 (interval), derived -1.02e-4 known to 1e-8, tolerance 10%
    near = (-1.01e-4, -0.99e-4)
    assert decision.shifted_equivalence(near, -1.02e-4, 1e-8, 1.02e-5).verdict == "holds"
    assert (
        decision.shifted_equivalence(near, -1.5e-4, 1e-8, 1.02e-5).verdict == "fails"
    )  # a 50% error of the derivation
    assert decision.shifted_equivalence(near, +1.02e-4, 1e-8, 1.02e-5).verdict == "fails"  # the opposite sign
    # a wide interval, or a derived value known only roughly, decides nothing
    assert decision.shifted_equivalence((-1.3e-4, -0.7e-4), -1.02e-4, 1e-8, 1.02e-5).verdict == "inconclusive"
    assert decision.shifted_equivalence(near, -1.02e-4, 2e-5, 1.02e-5).verdict == "inconclusive"


def test_labelled_signs_and_unless():
    dec = decision.labelled("scale", decision.sign(0.1, 0.2, +1))
    assert dec.verdict == "holds" and dec.detail.startswith("scale: [0.1, 0.2] > 0")
    assert [d.verdict for d in decision.signs([(1.0, 0.5), (-1.0, 0.5), (0.0, 0.5)], +1)] == [
        "holds",
        "fails",
        "inconclusive",
    ]
    assert decision.signs([(1.0, 0.5)], +1, shift=-2.0)[0].verdict == "fails"  # moved by the shift
    held = decision.unless(dec, "search at its edge")
    assert held.verdict == "inconclusive" and held.detail == f"search at its edge; {dec.detail}"
    assert decision.unless(dec, "") is dec
    failing = decision.sign(-0.2, -0.1, +1)
    assert decision.unless(failing, "search at its edge") is failing  # only a holding verdict is withheld
