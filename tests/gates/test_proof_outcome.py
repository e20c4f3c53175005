"""A claim decided by proof (:mod:`lipschitz_icl.gates.proof_outcome`): the first pass stops at a certified
counterexample without proving the other pieces, the pieces it decides keep their verdicts and certificates,
and further named constants (``fixed``) are set by the alternatives only."""

from __future__ import annotations

import dataclasses

import pytest

from lipschitz_icl.gates import proof_outcome as po
from lipschitz_icl.prover.pieces import Piece

# Ball's cap bound P(t >= h) <= exp(-d h^2/2) (true) and a false one with rate C d h^2 for C = 2
TRUE_CAP = Piece("cap_tail", "exp(-d*h**2/2)", {"d": [3], "h": [0.0, 1.0]})
RATE_CAP = Piece("cap_tail", "exp(-C*d*h**2)", {"d": [5], "h": [0.01, 0.99]})
SHIFTED_CAP = Piece("cap_tail", "exp(-(C + S)*d*h**2)", {"d": [5], "h": [0.01, 0.99]})


def _outcome(pieces, **kwargs):
    return po.proof_outcome(pieces=pieces, constant="C", stated=0.5, max_boxes=200, seconds=60.0, **kwargs)


def test_a_counterexample_in_the_first_pass_decides_without_proving_the_rest(monkeypatch):
    calls = []
    real = po._piece

    def counting(piece, constants, budget):
        calls.append((piece.bound, budget["max_boxes"]))
        return real(piece, constants, budget)

    monkeypatch.setattr(po, "_piece", counting)
    outcome = _outcome([TRUE_CAP, RATE_CAP])
    refuted = outcome.decide(value=2.0)  # the rate 2 d h^2 is false (the sharpest rate is about 1.1)
    assert refuted.verdict == "refuted" and "certified counterexample" in refuted.detail
    assert all(boxes == po.QUICK_BOXES for _, boxes in calls)  # nothing ran with the whole budget
    proved = outcome.decide()  # C = 1/2 is Ball's bound: both pieces proved
    assert proved.verdict == "proved"
    assert outcome.proof is not None and len(outcome.proof["certificates"]) == 2


def test_a_piece_not_reached_is_reported_as_not_proved():
    later = Piece("cap_tail", "exp(-d*h**2/2)", {"d": [4], "h": [0.0, 1.0]})
    parts = po._decide_pieces([RATE_CAP, later], {"C": 2.0}, {"max_boxes": 200, "seconds": 60.0})
    (first, first_detail, _, first_certificate), (second, second_detail, boxes, certificate) = parts
    assert first == "refuted" and "certified counterexample" in first_detail and first_certificate is not None
    assert second == "undecided" and "not proved (another piece is refuted)" in second_detail
    assert boxes == 0 and certificate is None


def test_fixed_constants_move_only_for_the_alternatives():
    outcome = _outcome([SHIFTED_CAP], fixed={"S": 0.0})
    assert outcome.decide().verdict == "proved"
    moved = outcome.decide(S=1.5)  # rate 2 d h^2: false
    assert moved.verdict == "refuted" and "S = 1.5" in moved.detail
    assert outcome.proof is not None and outcome.proof["proved_at"] == [0.5]
    with pytest.raises(TypeError, match="not among the fixed constants"):
        outcome.decide(P=1.0)
    assert "exp(-d*h**2*(C + 0.0))" not in outcome.rule and "S" not in outcome.rule  # stated at S = 0


def test_a_counterexample_reads_the_way_it_breaks_its_relation():
    # P(t >= h) <= exp(-d h^2/2) < exp(-0.1 d h^2): the lower bound ">= exp(-0.1 d h^2)" is false everywhere
    lower = Piece("cap_tail", "exp(-C*d*h**2)", {"d": [5], "h": [0.2, 0.9]}, relation=">=")
    verdict, detail, _, _ = po._piece(lower, {"C": 0.1}, {"max_boxes": 50, "seconds": 30.0})
    assert verdict == "refuted" and "] < bound in [" in detail and "] > bound" not in detail
    verdict, detail, _, _ = po._piece(RATE_CAP, {"C": 2.0}, {"max_boxes": 50, "seconds": 30.0})
    assert verdict == "refuted" and "] > bound in [" in detail


def test_the_bracket_keeps_the_certificates_of_the_largest_proved_and_the_smallest_refuted_constant():
    """The sharpest constant's ends are certified where the record's decisions reached them: the proved end at
    the largest constant proved (the stated one counts), the refuted end at the smallest refuted, with the
    refuting piece's certificate alone there; an alternative that moves a fixed constant is not the claim's
    constant and leaves the bracket alone."""
    outcome = _outcome([TRUE_CAP, SHIFTED_CAP], fixed={"S": 0.0})
    bracket = outcome.proof["bracket_certificates"]
    assert bracket["proved"]["value"] == 0.5 and len(bracket["proved"]["certificates"]) == 2
    assert "refuted" not in bracket
    for value in (3.0, 2.0, 0.8, 0.4):
        outcome.decide(value=value)
    assert bracket["proved"]["value"] == 0.8  # 0.4 is proved too, but 0.8 is sharper
    assert bracket["refuted"]["value"] == 2.0
    (refuting,) = bracket["refuted"]["certificates"]  # the true piece proved first: not a certificate of this end
    assert refuting["verdict"] == "refuted"
    outcome.decide(S=1.0)  # refuted, but at C = 0.5 with S moved: not an end of C's bracket
    assert bracket["refuted"]["value"] == 2.0


def test_a_refuted_piece_of_the_plan_leaves_the_claim_undecided():
    """A piece the proof chose (a window meant to hold w*) is a sufficient condition, not the statement: its
    certified counterexample shows the plan failed, so the claim is undecided, never refuted, and the piece
    ships no certificate as the claim's."""
    plan = Piece("cap_tail", "exp(-2*d*h**2)", {"d": [5], "h": [0.01, 0.99]}, plan=True)  # false: rate 2
    outcome = _outcome([TRUE_CAP, plan])
    decision = outcome.decide()
    assert decision.verdict == "undecided" and "a piece of the proof's plan" in outcome.quantities[0].note
    assert len(outcome.proof["certificates"]) == 1  # the true piece's alone
    assert _outcome([TRUE_CAP, dataclasses.replace(plan, plan=False)]).decide().verdict == "refuted"
