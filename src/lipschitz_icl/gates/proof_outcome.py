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

import math
import re
from functools import cache

from lipschitz_icl.decision import Decision, Verdict, combine
from lipschitz_icl.gates.evidence import Outcome, Quantity
from lipschitz_icl.prover import search
from lipschitz_icl.prover.pieces import Lemma, Piece

__all__ = ["proof_outcome"]


def _where(counterexample: dict, relation: str) -> str:
    """Where a certified counterexample lies and how it breaks the relation: the quantity's ball above the
    bound's for ``<=``, below it for ``>=``."""
    params = ", ".join(
        f"{k}={v:.9g}" if isinstance(v, float) else f"{k}={v}" for k, v in counterexample["params"].items()
    )
    q, b = counterexample["quantity"], counterexample["bound"]
    broken = ">" if relation == "<=" else "<"
    return f"at {params}: quantity in [{q[0]:.9g}, {q[1]:.9g}] {broken} bound in [{b[0]:.9g}, {b[1]:.9g}]"


def _piece(piece: Piece, constants: dict, budget: dict) -> tuple[str, str, int, dict | None]:
    """``(verdict, detail, boxes, certificate)`` of the prover on one piece with the named ``constants``."""
    result = search.prove(
        piece.quantity,
        piece.bound,
        piece.domain,
        relation=piece.relation,
        constants=constants,
        task=piece.task,
        **budget,
    )
    detail = f"{piece.quantity} on {piece.domain}: {result.verdict.value} ({result.boxes} boxes)"
    if result.verdict is Verdict.REFUTED:
        assert result.counterexample is not None  # a refuted proof carries its counterexample
        detail += "; certified counterexample " + _where(result.counterexample, piece.relation)
        if piece.plan:  # the proof's own choice failed, not the statement: no verdict on the claim
            return "undecided", detail + " (a piece of the proof's plan: the claim stays undecided)", result.boxes, None
    return result.verdict.value, detail, result.boxes, result.certificate


def _lemma(lemma: Lemma, name: str, value: float, budget: dict) -> tuple[str, str, int, dict | None]:
    verdict, detail = lemma.check(value)
    if verdict is Verdict.UNDECIDED and lemma.search is not None:
        found, search_detail, boxes, certificate = _piece(lemma.search, {name: value}, budget)
        if found == "refuted":
            return found, f"{lemma.text}: {search_detail}", boxes, certificate
    return verdict.value, f"{lemma.text}: {verdict.value} ({detail})", 0, None


def _shown(bound: str, fixed: dict) -> str:
    """The bound as the claim states it: the ``fixed`` constants replaced by their stated values and the text
    simplified (``w**(-(2 + S))`` at ``S = 0`` reads ``w**(-2)``); the bound itself when it has none."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", bound))
    used = {name: value for name, value in fixed.items() if name in names}
    if not used:
        return bound
    import sympy as sp

    from lipschitz_icl.expression import parse_expression

    expr = parse_expression(bound, names).sympy
    values = {symbol: sp.Rational(str(used[symbol.name])) for symbol in expr.free_symbols if symbol.name in used}
    return str(sp.simplify(expr.subs(values)))


QUICK_BOXES = 8  # the first pass over the pieces: a few boxes each, looking for a certified counterexample


def _bound_names(bound: str) -> frozenset:
    return frozenset(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", bound))


def _decide_pieces(pieces, constants: dict, budget: dict, memo: dict | None = None) -> list:
    """The prover's parts of every piece: a first pass of :data:`QUICK_BOXES` boxes per piece, stopped by the
    first certified counterexample (one refutes the claim, while a true piece can take hundreds of boxes to
    prove: the pieces not decided then are reported as not proved); otherwise the pieces the first pass
    left undecided are run again with the whole budget.  The verdict is the one the whole budget gives
    every piece: a refutation stands on its counterexample alone.  ``memo`` keeps each piece's result by the
    constants its bound names: a piece whose bound does not name the constant a resolution moves (a window
    of ``w*`` beside a slope bound) is proved once, not once per constant."""
    quick = {"max_boxes": min(QUICK_BOXES, budget["max_boxes"]), "seconds": budget["seconds"]}
    memo = {} if memo is None else memo

    def decided(index: int, piece, limits: dict) -> tuple:
        used = tuple(sorted((k, v) for k, v in constants.items() if k in _bound_names(piece.bound)))
        key = (index, used, limits["max_boxes"])
        if key not in memo:
            memo[key] = _piece(piece, constants, limits)
        return memo[key]

    parts: list = [None] * len(pieces)
    for index, piece in enumerate(pieces):
        parts[index] = decided(index, piece, quick)
        if parts[index][0] == "refuted":
            return [
                part
                if part is not None and part[0] != "undecided"
                else ("undecided", f"{p.quantity} on {p.domain}: not proved (another piece is refuted)", 0, None)
                for p, part in zip(pieces, parts)
            ]
    return [
        part if part[0] != "undecided" else decided(index, p, budget)
        for index, (p, part) in enumerate(zip(pieces, parts))
    ]


def proof_outcome(
    *,
    pieces,
    lemmas=(),
    constant: str,
    stated: float,
    max_boxes: int,
    seconds: float,
    fixed: dict | None = None,
    figure: dict | None = None,
    extra: dict | None = None,
) -> Outcome:
    """The outcome of a claim decided by proof (module docstring).  Every piece and lemma is decided at a
    value of ``constant``: refuted if one is, proved if all are, else undecided (the prover's budgets
    ``max_boxes`` and ``seconds`` per piece).  ``fixed`` names further constants of the pieces' bounds with
    their stated values (say a power); a pre-specified alternative may set them (``decide(S=0.5)``), the
    resolution moves ``constant`` only.  Lemmas see ``constant`` alone."""
    budget = {"max_boxes": max_boxes, "seconds": seconds}
    stated_fixed = dict(fixed or {})

    memo: dict = {}  # the pieces' results by the constants their bounds name (_decide_pieces)

    @cache
    def at(value: float, overrides: tuple = ()) -> tuple:
        constants = {**stated_fixed, **dict(overrides), constant: value}
        parts = _decide_pieces(pieces, constants, budget, memo)
        if not any(verdict == "refuted" for verdict, *_ in parts):
            parts += [_lemma(lemma, constant, value, budget) for lemma in lemmas]
        certificates = tuple(c for *_, c in parts if c is not None)
        return (
            combine([v for v, *_ in parts]),
            tuple(d for _, d, *_ in parts),
            sum(b for _, _, b, _ in parts),
            certificates,
        )

    proved_at: list[float] = []  # every constant proved on the whole domain (the resolution's search included)
    bracket: dict = {}  # the sharpest constant's certified ends so far (_extend_bracket)

    def decide(shift: float = 0.0, value: float | None = None, **overrides: float) -> Decision:
        unknown = sorted(set(overrides) - set(stated_fixed))
        if unknown:
            raise TypeError(f"decide: {', '.join(unknown)} not among the fixed constants {sorted(stated_fixed)}")
        c = stated * (1 + shift) if value is None else value
        verdict, details, boxes, certificates = at(c, tuple(sorted(overrides.items())))
        if verdict == "proved" and not overrides and c not in proved_at:
            proved_at.append(c)
        if not overrides:
            _extend_bracket(bracket, c, verdict, certificates)
        first = next((d for d in details if "refuted" in d), details[0])
        moved = "".join(f", {k} = {v:g}" for k, v in sorted(overrides.items()))
        return Decision("proof", verdict, f"{verdict} at {constant} = {c:.8g}{moved} ({boxes} boxes); {first}")

    verdict, details, boxes, certificates = at(stated)
    _extend_bracket(bracket, stated, verdict, certificates)
    domain = "; ".join(
        f"{p.quantity}{f' ({p.task})' if p.task else ''} {p.relation} {_shown(p.bound, stated_fixed)} on {p.domain}"
        for p in pieces
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
            "constant": constant,
            # the certificates of the sharpest constant's ends (filled as the record's decisions are made,
            # written beside the stated constant's by the gates): proved at the largest constant proved,
            # refuted at the smallest refuted
            "bracket_certificates": bracket,
        },
    )


def _extend_bracket(bracket: dict, value: float, verdict: str, certificates: tuple) -> None:
    """Keep in ``bracket`` the certificates of the sharpest constant's two certified ends: ``"proved"`` the
    largest constant proved on the whole domain, ``"refuted"`` the smallest refuted by a certified
    counterexample (each ``{"value": c, "certificates": [...]}``: at the proved end every piece's, at the
    refuted end the refuting piece's alone); the claim's constant weakens the statement as it falls (a rate,
    a slope bound, a tightness read as the claim states it), so every constant below a proved one holds and
    every one above a refuted one fails."""
    own = [c for c in certificates if isinstance(c, dict) and c.get("verdict") == verdict]
    if not own:
        return
    if verdict == "proved" and value > bracket.get("proved", {}).get("value", -math.inf):
        bracket["proved"] = {"value": value, "certificates": own}
    if verdict == "refuted" and value < bracket.get("refuted", {}).get("value", math.inf):
        bracket["refuted"] = {"value": value, "certificates": own}
