"""Measure functions of the group ``loss_shape`` (registry: ``claims/loss_shape.toml``): the shape of the ICL
loss of ``M = w I`` in ``w``, decided by proof on the certified loss quantities
(:mod:`lipschitz_icl.prover.trusted`, :mod:`lipschitz_icl.gates.proof_outcome`)."""

from __future__ import annotations

from lipschitz_icl.gates.evidence import Outcome
from lipschitz_icl.gates.proof_outcome import proof_outcome
from lipschitz_icl.prover.pieces import Piece

__all__ = ["bias_turns"]


def bias_turns(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    falls_at: float,
    rises_at: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The bias part is not monotone in ``w``: ``dB/dw <= -C`` at ``w = falls_at`` and ``dB/dw >= C`` at
    ``w = rises_at`` (``C = stated``), each certified at its point by the prover (rule ``proof``)."""
    common = {"d": [d], "n": [n], "L": L, "sigma": sigma}
    pieces = [
        Piece("dbias_dw", "-C", {**common, "w": falls_at}, task=task, relation="<="),
        Piece("dbias_dw", "C", {**common, "w": rises_at}, task=task, relation=">="),
    ]
    return proof_outcome(pieces=pieces, constant="C", stated=stated, max_boxes=max_boxes, seconds=seconds)
