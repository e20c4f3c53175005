"""A claim's domain cut into pieces: each a statement the prover decides, or an end piece decided by a lemma.

A :class:`Piece` is ``quantity <= bound`` (or ``>=``) on a sub-domain (names as in variant files; a loss
quantity names its task class), decided by
:func:`lipschitz_icl.prover.search.prove`; a :class:`Lemma` decides an end piece where both sides vanish
(and enclosures cannot separate them) by a stated argument evaluated in ball arithmetic.  A claim decided
by proof (:mod:`lipschitz_icl.gates.proof_outcome`) lists its pieces and lemmas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Piece", "Lemma"]


@dataclass(frozen=True)
class Piece:
    """A part of a claim's domain: ``quantity relation bound`` on ``domain`` (names as in variant files;
    ``task`` the class of a loss quantity).  ``plan``: a sufficient condition the claim's proof chose (a window
    that should hold ``w*``), not a part of its statement: its refutation shows the plan failed, not the
    statement, and leaves the claim undecided."""

    quantity: str
    bound: str
    domain: dict
    task: str | None = None
    relation: str = "<="
    plan: bool = False


@dataclass(frozen=True)
class Lemma:
    """An end piece decided by a stated argument: ``check(value)`` returns ``(verdict, detail)`` for the
    constant's ``value`` (``undecided`` where the argument does not apply; then counterexamples are looked
    for on ``search``)."""

    text: str
    check: Callable
    search: Piece | None = None
