"""The loss-shape claims (``claims/loss_shape.py``): the turn of the bias part is decided by proof, and the same
rule refutes a turn where there is none (at n = 20 the affine bias part still falls at w = 3)."""

from __future__ import annotations

from lipschitz_icl.claims.loss_shape import bias_turns

DESIGN = {"L": 1.0, "sigma": 0.5, "stated": 1e-6, "max_boxes": 50, "seconds": 60.0}


def test_a_turn_is_proved_where_it_is_and_refuted_where_it_is_not():
    turns = bias_turns(d=3, n=20, task="affine", falls_at=2.0, rises_at=12.0, **DESIGN)
    assert turns.decide().verdict == "proved"  # the affine bias part turns too (dB/dw(12) = +2.4e-4)
    none = bias_turns(d=3, n=20, task="affine", falls_at=2.0, rises_at=3.0, **DESIGN)
    decision = none.decide()
    assert decision.verdict == "refuted" and "certified counterexample" in decision.detail
    assert none.proof is not None and len(none.proof["certificates"]) == 2  # one per piece
    assert "dbias_dw (affine) >= C" in none.rule and "dbias_dw (affine) <= -C" in none.rule
