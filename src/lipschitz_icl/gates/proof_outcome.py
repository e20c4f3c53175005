"""A registry claim decided by proof: the prover's verdict on a whole domain, as a claim's outcome.

A claim (``lipschitz_icl.claims``) that states a deterministic inequality ``quantity <= bound(C)`` with a
named constant ``C`` builds its :class:`~lipschitz_icl.gates.evidence.Outcome` with :func:`proof_outcome`: the
domain split into :class:`~lipschitz_icl.prover.pieces.Piece` s (each decided by
:func:`lipschitz_icl.prover.search.prove`) and, where both
sides vanish at an end of the domain, :class:`~lipschitz_icl.prover.pieces.Lemma` s that decide the end piece by a
stated argument
evaluated in ball arithmetic.  Its ``decide(shift, value)`` is the rule ``proof`` (verdicts proved /
refuted / undecided) at ``C = stated (1 + shift)`` or at ``C = value``: the claim itself (``shift = 0``),
the registry's resolution (the smallest relative change of ``C`` refuted by a certified counterexample:
the sharpest valid ``C`` lies below ``C (1 + resolution)``) and its alternatives (another ``C``).
"""

from __future__ import annotations

from functools import cache

from lipschitz_icl.decision import Decision, Verdict, combine
from lipschitz_icl.gates.evidence import Outcome, Quantity
from lipschitz_icl.prover import search
from lipschitz_icl.prover.pieces import Lemma, Piece

__all__ = ["proof_outcome"]


def _where(counterexample: dict) -> str:
    params = ", ".join(
        f"{k}={v:.9g}" if isinstance(v, float) else f"{k}={v}" for k, v in counterexample["params"].items()
    )
    q, b = counterexample["quantity"], counterexample["bound"]
    return f"at {params}: quantity in [{q[0]:.9g}, {q[1]:.9g}] > bound in [{b[0]:.9g}, {b[1]:.9g}]"


def _piece(piece: Piece, name: str, value: float, budget: dict) -> tuple[str, str, int, dict]:
    """``(verdict, detail, boxes, certificate)`` of the prover on one piece at ``name = value``."""
    result = search.prove(
        piece.quantity,
        piece.bound,
        piece.domain,
        relation=piece.relation,
        constants={name: value},
        task=piece.task,
        **budget,
    )
    detail = f"{piece.quantity} on {piece.domain}: {result.verdict.value} ({result.boxes} boxes)"
    if result.verdict is Verdict.REFUTED:
        assert result.counterexample is not None  # a refuted proof carries its counterexample
        detail += "; certified counterexample " + _where(result.counterexample)
    return result.verdict.value, detail, result.boxes, result.certificate


def _lemma(lemma: Lemma, name: str, value: float, budget: dict) -> tuple[str, str, int, dict | None]:
    verdict, detail = lemma.check(value)
    if verdict is Verdict.UNDECIDED and lemma.search is not None:
        found, search_detail, boxes, certificate = _piece(lemma.search, name, value, budget)
        if found == "refuted":
            return found, f"{lemma.text}: {search_detail}", boxes, certificate
    return verdict.value, f"{lemma.text}: {verdict.value} ({detail})", 0, None


def proof_outcome(
    *,
    pieces,
    lemmas=(),
    constant: str,
    stated: float,
    max_boxes: int,
    seconds: float,
    figure: dict | None = None,
    extra: dict | None = None,
) -> Outcome:
    """The outcome of a claim decided by proof (module docstring).  Every piece and lemma is decided at a
    value of ``constant``: refuted if one is, proved if all are, else undecided (the prover's budgets
    ``max_boxes`` and ``seconds`` per piece)."""
    budget = {"max_boxes": max_boxes, "seconds": seconds}

    @cache
    def at(value: float) -> tuple:
        parts = [_piece(p, constant, value, budget) for p in pieces] + [
            _lemma(lemma, constant, value, budget) for lemma in lemmas
        ]
        certificates = tuple(c for *_, c in parts if c is not None)
        return (
            combine([v for v, *_ in parts]),
            tuple(d for _, d, *_ in parts),
            sum(b for _, _, b, _ in parts),
            certificates,
        )

    proved_at: list[float] = []  # every constant proved on the whole domain (the resolution's search included)

    def decide(shift: float = 0.0, value: float | None = None) -> Decision:
        c = stated * (1 + shift) if value is None else value
        verdict, details, boxes, _ = at(c)
        if verdict == "proved" and c not in proved_at:
            proved_at.append(c)
        first = next((d for d in details if "refuted" in d), details[0])
        return Decision("proof", verdict, f"{verdict} at {constant} = {c:.8g} ({boxes} boxes); {first}")

    verdict, details, boxes, certificates = at(stated)
    domain = "; ".join(
        f"{p.quantity}{f' ({p.task})' if p.task else ''} {p.relation} {p.bound} on {p.domain}" for p in pieces
    )
    return Outcome(
        decide=decide,
        margin="none: the relation of each piece at every point of its domain",
        rule="proved on the whole domain by certified ball arithmetic (lipschitz_icl.prover.search: branch and bound "
        f"on python-flint enclosures, at most {max_boxes} boxes per piece): {domain}"
        + "".join(f"; {lemma.text}" for lemma in lemmas),
        quantities=(
            Quantity(
                name=f"boxes decided at {constant} = {stated:g}",
                measured=float(boxes),
                verdict=verdict,
                note="; ".join(details),
            ),
        ),
        figure=figure,
        extra=extra or {},
        # the certificates of the pieces at the stated constant (prove --recheck re-derives each verdict):
        # written beside claims.json by the gates (lipschitz_icl.gates.pytest_plugin), named in the record
        # proved_at fills as the claim's rule, resolution and alternatives decide at other constants (the
        # record is written after them): the largest is the proved end of the sharpest constant's bracket
        proof={
            "verdict": verdict,
            "boxes": boxes,
            "pieces": list(details),
            "certificates": list(certificates),
            "proved_at": proved_at,
        },
    )
