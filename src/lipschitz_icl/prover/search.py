"""The prover: decide ``quantity <relation> bound`` on a whole domain by branch and bound on boxes.

A statement (:class:`Statement`) is a quantity of the trusted table (:mod:`lipschitz_icl.prover.trusted`),
a relation ``<=`` or ``>=``, a bound (:class:`~lipschitz_icl.expression.Expression` over the parameters
and named constants) and a :class:`~lipschitz_icl.prover.domain.Domain`.  The search keeps a queue of
boxes, the most violated first (the relative margin at the box's midpoint); on each box:

* the quantity's enclosure ``Q`` over the box (:meth:`~lipschitz_icl.prover.trusted.Quantity.enclose`)
  and the bound's ``B`` (ball arithmetic on the box,
  :meth:`~lipschitz_icl.expression.Expression.evaluate_ball`) are computed;
* rule ``holds``: ``Q <= B`` certainly (every point of ``Q`` below every point of ``B``; ``>=`` mirrors):
  the box is *proved*;
* rule ``violated``: at the box's midpoint the point enclosures satisfy ``Q > B`` certainly: that point
  is a certified counterexample and the statement is *refuted*;
* otherwise the box is split in two and both halves are queued: along the parameter the quantity has no
  enclosure without (a loss quantity's ``d`` or ``n``), else along the one widest relative to its scale
  (:func:`split_param`); a box that cannot be split (a real range at double resolution, or a point whose
  quantity has no enclosure) stays *undecided*.

Verdicts (:class:`lipschitz_icl.decision.Verdict`): ``proved`` when every box of the partition was
proved, ``refuted`` with a counterexample, ``undecided`` when the budget (``max_boxes`` evaluated, or
``seconds`` of wall clock, enforced inside a box's evaluation too: :mod:`lipschitz_icl.prover.budget`) ran
out or boxes could not be decided; the result lists the undecided boxes, their share of the domain
(measure: length times count, :class:`~lipschitz_icl.prover.domain.Box`) and the work spent.
Closed domains include their endpoints: at ``h = 1`` the cap probability is exactly 0, at ``s = 1`` the
projection tail exactly 0, and these values enter the corner enclosures; a box at an endpoint where
both sides vanish cannot be separated by enclosures and is reported undecided with that reason.

The sharpest constant (:func:`sharpest`): for a bound with a named constant ``C`` and a bracket
``[lo, hi]``, the statement is proved at one end and refuted at the other, then the bracket is bisected,
keeping a proved end and a refuted end, until ``hi - lo <= rtol * max(|lo|, |hi|)``: the certified
interval ``[C_low, C_high]`` holds the boundary between valid and invalid constants (the sharpest
constant, when the bound is monotone in ``C``).  Each end carries its proof or counterexample.

Every result carries its certificate (:mod:`lipschitz_icl.prover.certificate`), which
:mod:`lipschitz_icl.prover.checker` rechecks without this module.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import time
from dataclasses import dataclass
from fractions import Fraction

from lipschitz_icl import progress
from lipschitz_icl.certified import arithmetic
from lipschitz_icl.decision import Verdict
from lipschitz_icl.expression import Expression, ExpressionError, parse_expression
from lipschitz_icl.prover import witness
from lipschitz_icl.prover.budget import MAX_BOXES, SECONDS, SHARPEST_RTOL, OutOfTime, deadline
from lipschitz_icl.prover.domain import INTEGER_PARAMS, Box, Domain, parse_domain
from lipschitz_icl.prover.trusted import NoEnclosure, Quantity, lookup
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real

__all__ = [
    "Statement",
    "ProofResult",
    "UndefinedBound",
    "prove",
    "prove_statement",
    "sharpest",
    "bisect_constant",
    "Bisection",
    "make_statement",
    "quantity_of",
    "check_domain",
    "split_param",
    "MAX_BOXES",
    "SECONDS",
    "SHARPEST_RTOL",
    "RELATIONS",
]

MAX_LISTED_BOXES = 20  # undecided boxes listed in a result (all are counted)
RELATIONS = ("<=", ">=")
FINAL = "<final>"  # a box whose quantity cannot be enclosed at all (e.g. a w* proof that did not close)
OUT_OF_TIME = "budget exhausted before this box was decided"


@dataclass(frozen=True)
class Statement:
    """``quantity relation bound`` on ``domain`` with the ``constants`` (name -> number); ``sharpest`` names
    the constant whose sharpest value is sought (its value, when set, is in ``constants``)."""

    quantity: Quantity
    relation: str
    bound: Expression
    constants: dict
    domain: Domain
    sharpest: str | None = None

    def with_constant(self, name: str, value) -> Statement:
        return dataclasses.replace(self, constants={**self.constants, name: value})

    def holds(self, q: tuple, b) -> bool:
        """The relation certain on a box: ``q = (low, high)`` the quantity's extreme balls, ``b`` the bound's."""
        return bool(q[1] <= b) if self.relation == "<=" else bool(q[0] >= b)

    def violated(self, q, b) -> bool:
        """The relation certainly false at a point: ``q`` and ``b`` the two sides' balls there."""
        return bool(q > b) if self.relation == "<=" else bool(q < b)

    def bound_on(self, balls: dict):
        return self.bound.evaluate_ball({**balls, **self.constants})

    def describe(self) -> str:
        return f"{self.quantity.name} {self.relation} {self.bound.text}"


@dataclass
class _Node:
    box: Box
    priority: float = 0.0
    split: tuple | None = None  # (param, at, lower node, upper node)
    leaf: dict | None = None  # {"decision", "quantity", "bound"} (and "reason" when undecided)


@dataclass(frozen=True)
class ProofResult:
    """What a search (or a sharpest-constant bisection) established, JSON-ready by :meth:`to_dict`."""

    verdict: Verdict
    statement: str
    boxes: int
    proved_boxes: int
    undecided_boxes: tuple
    undecided_count: int
    undecided_share: float
    counterexample: dict | None
    sharpest: dict | None
    certificate: dict
    seconds: float
    notes: tuple = ()

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict.value,
            "statement": self.statement,
            "boxes_evaluated": self.boxes,
            "boxes_proved": self.proved_boxes,
            "undecided_boxes": list(self.undecided_boxes),
            "undecided_count": self.undecided_count,
            "undecided_share": self.undecided_share,
            "counterexample": self.counterexample,
            "sharpest": self.sharpest,
            "seconds": self.seconds,
            "notes": list(self.notes),
        }


# ----------------------------------------------------------------------------- one box
def _enclosure_pair(st: Statement, box: Box):
    """``(Q, B, split_param, reason, witnesses)``: the quantity's extreme balls ``(low, high)`` and the bound's
    ball on ``box`` (None when unavailable), and the certificate entries of the witnesses that show ``Q`` (a
    witnessed quantity's, :mod:`lipschitz_icl.prover.witness`; else none)."""
    split, reason = None, ""
    witnesses: list[dict] = []
    try:
        if st.quantity.witnessed:
            q, witnesses = witness.enclose(st.quantity, box.to_dict())
        else:
            q = st.quantity.enclose(box.to_dict())
    except NoEnclosure as exc:
        q, split, reason = None, exc.param or FINAL, exc.reason
    try:
        b = st.bound_on(box.balls())
    except ExpressionError as exc:
        b, reason = None, f"bound: {exc.reason}"
    return q, b, split, reason, witnesses


class UndefinedBound(ParameterError):
    """The bound has no value at a point inside the domain (``point``, with the statement's constants: a
    sharpest constant's current value among them; ``reason``, e.g. the square root of a negative number): the
    statement says nothing there, so no search can decide it.  A box around that point would otherwise be split
    until the budget ran out."""

    def __init__(self, bound: Expression, point: dict, reason: str):
        self.point, self.reason = point, reason
        where = ", ".join(f"{k}={float(v):g}" for k, v in point.items())
        super().__init__("bound", f"defined at every point of the domain (undefined at {where}: {reason})", bound.text)


def _point_pair(st: Statement, point: dict):
    """Point enclosures ``(Q, B, witnesses)`` at ``point`` (B is None where the bound's ball is not certified
    to be defined, e.g. an argument of ``sqrt`` straddling 0 by rounding; the witnesses as in
    :func:`_enclosure_pair`).  Raises :class:`UndefinedBound` where the bound is undefined at the point
    (:meth:`~lipschitz_icl.expression.Expression.undefined_at`: an operation outside its domain at 30 and 60
    digits)."""
    witnesses: list[dict] = []
    if st.quantity.witnessed:
        q, entry = witness.point_value(st.quantity, point)
        witnesses = [entry]
    else:
        q = st.quantity.value(point)
    try:
        b = st.bound_on({k: arithmetic.exact(v) for k, v in point.items()})
    except ExpressionError:
        b = None
        env = {**point, **st.constants}
        reason = st.bound.undefined_at(env)
        if reason is not None:
            raise UndefinedBound(st.bound, env, reason) from None
    return q, b, witnesses


def _margin(st: Statement, q, b) -> float:
    """Relative margin ``(B - Q)/|B|`` (``<=``; mirrored for ``>=``) of the midpoints: the queue order."""
    qm, bm = float(q.mid()), float(b.mid())
    gap = bm - qm if st.relation == "<=" else qm - bm
    scale = max(abs(bm), abs(qm), 1e-300)
    return gap / scale if math.isfinite(gap) else 0.0


def _enclosure(low, high=None) -> list | None:
    """``[low, high]`` rounded outward from the ball ``low`` (or from the two balls ``low``, ``high``), or
    None when an end is not finite."""
    ends = [arithmetic.low(low), arithmetic.high(low if high is None else high)]
    return ends if all(math.isfinite(end) for end in ends) else None


def _counterexample(st: Statement, point: dict, q, b, witnesses: list) -> dict:
    found = {
        "params": dict(point),
        "quantity": arithmetic.Enclosure.of(q).as_list(),
        "bound": arithmetic.Enclosure.of(b).as_list(),
        "rule": "low(quantity) > high(bound)" if st.relation == "<=" else "high(quantity) < low(bound)",
    }
    return {**found, "witnesses": witnesses} if witnesses else found


def _decide(st: Statement, node: _Node) -> tuple[str, dict | None, str | None]:
    """``(outcome, counterexample, split_param)`` for one box; fills ``node.leaf`` when decided."""
    box = node.box
    outcome, leaf = _one_sided(st, box)
    if leaf is not None:
        node.leaf = leaf
        return "proved", None, None
    if outcome == "opposite":  # every point of the box violates the statement: certify it at one point
        try:
            qm, bm, at_point = _point_pair(st, box.midpoint())
        except NoEnclosure:
            pass
        else:
            if bm is not None and st.violated(qm, bm):
                return "refuted", _counterexample(st, box.midpoint(), qm, bm, at_point), None
    q, b, split, reason, witnesses = _enclosure_pair(st, box)
    if q is not None and b is not None and st.holds(q, b):
        node.leaf = {"decision": "proved", "quantity": _enclosure(*q), "bound": _enclosure(b)}
        if witnesses:
            node.leaf["witnesses"] = witnesses
        return "proved", None, None
    node.priority = 0.0
    for point in _probes(st, box):
        try:
            qm, bm, at_point = _point_pair(st, point)
        except NoEnclosure as exc:  # a point value that could not be certified
            reason = reason or exc.reason
            continue
        if bm is not None and st.violated(qm, bm):
            return "refuted", _counterexample(st, point, qm, bm, at_point), None
        node.priority = min(node.priority, _margin(st, qm, bm) if bm is not None else 0.0)
    node.leaf = {
        "decision": "undecided",
        "reason": reason or "enclosures overlap",
        "quantity": None if q is None else _enclosure(*q),
        "bound": None if b is None else _enclosure(b),
    }
    return "undecided", None, split


def _one_sided(st: Statement, box: Box) -> tuple[str, dict | None]:
    """``(outcome, leaf)`` of a ``w_star`` statement's one-sided proofs on the whole box
    (:func:`lipschitz_icl.prover.witness.one_sided`): a proved leaf (no ``w*`` located), or ``"opposite"`` (the
    opposite bound proved on the box: any point of it is a counterexample) or ``"undecided"`` with no leaf (the
    box goes on as any other)."""
    if st.quantity.name != "w_star":
        return "undecided", None
    try:
        b = st.bound_on(box.balls())
    except ExpressionError:
        return "undecided", None
    outcome, proof = witness.one_sided(st.quantity, box.to_dict(), st.relation, b)
    if outcome != "proved":
        return outcome, None
    return outcome, {"decision": "proved", "quantity": None, "bound": _enclosure(b), "one_sided": proof}


def _probes(st: Statement, box: Box) -> list:
    """Where a box is tested for a counterexample: its midpoint, or for a quantity whose point values are
    costly the two corners its enclosure already used (cached)."""
    if st.quantity.costly:
        try:
            return list(st.quantity.extremes(box.to_dict()))
        except NoEnclosure:
            return []
    return [box.midpoint()]


def split_param(box: Box, extents: dict, preferred: str | None = None) -> str | None:
    """The parameter to split ``box`` along: ``preferred`` (the one the quantity has no enclosure without)
    when it can be split; else the splittable parameter widest relative to its scale -- an integer range
    ``{lo..hi}`` relative to ``max(|lo|, |hi|)``, a real one ``[lo, hi]`` relative to
    ``max(|lo|, |hi|, extent)`` with ``extent`` the parameter's extent in the domain.  So a real range
    pinned to a tiny interval far from 0 is split last, and a range toward 0 (``[0, 2^-40]``) is no
    longer "wide" once it is a small part of its domain: the other parameters get their turn."""
    if preferred == FINAL:
        return None
    if preferred is not None:
        return preferred if box.splittable(preferred) else None
    best, best_width = None, -1.0
    for name, lo, hi in box.ranges:
        if box.splittable(name):
            scale = max(abs(lo), abs(hi)) if name in INTEGER_PARAMS else max(abs(lo), abs(hi), extents[name])
            width = (hi - lo) / (scale or 1.0)
            if width > best_width:
                best, best_width = name, width
    return best


def _extents(domain: Domain) -> dict:
    return {name: max(hi for _, hi in pieces) - min(lo for lo, _ in pieces) for name, pieces in domain.pieces.items()}


@dataclass
class _Search:
    """State of one branch-and-bound search (see :func:`prove_statement`)."""

    roots: list
    evaluated: int = 0
    counterexample: dict | None = None
    budget_hit: bool = False


def _run(st: Statement, max_boxes: int, until: float, bar) -> _Search:
    """The search, under the wall-clock ``until`` (inside a box's evaluation too); a box left when the
    budget ends keeps no leaf and is reported undecided (:func:`_leaves`)."""
    search = _Search([_Node(box) for box in st.domain.roots()])
    try:
        with deadline(until):
            _loop(st, search, max_boxes, bar, until)
    except OutOfTime:
        search.budget_hit = True
    return search


def _loop(st: Statement, search: _Search, max_boxes: int, bar, until: float) -> None:
    """Evaluate and split boxes, best first, until every box is decided, a counterexample is found or a budget
    ends: ``max_boxes``, or the clock time ``until`` checked before each box as well (the interruption of
    :func:`~lipschitz_icl.prover.budget.deadline` can be lost: delivered inside a garbage-collector callback,
    it is printed as unraisable and dropped, and the search would go on to ``max_boxes``)."""
    extents = _extents(st.domain)
    counter = itertools.count()
    heap = [(0.0, next(counter), node) for node in search.roots]
    while heap:
        if search.evaluated >= max_boxes or time.perf_counter() >= until:
            search.budget_hit = True
            return
        _, _, node = heapq.heappop(heap)
        search.evaluated += 1
        bar.update(1)
        outcome, counterexample, preferred = _decide(st, node)
        if outcome == "refuted":
            search.counterexample = counterexample
            return
        elif outcome == "undecided":
            param = split_param(node.box, extents, preferred)
            if param is None:
                node.leaf["reason"] += "; the box cannot be split further"
                continue
            at, lower, upper = node.box.split(param)
            children = (_Node(lower, node.priority), _Node(upper, node.priority))
            node.split = (param, at, *children)
            node.leaf = None
            for child in children:
                heapq.heappush(heap, (child.priority, next(counter), child))


def _walk(root: _Node):
    """The nodes of a root's tree in preorder (a split node, then its lower subtree, then its upper one)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.split is not None:
            stack.extend([node.split[3], node.split[2]])


def _leaves(search: _Search) -> tuple[int, list]:
    """``(proved, undecided)``: the count of proved leaves and every other leaf (undecided, or never reached
    before the budget ended)."""
    proved, undecided = 0, []
    for root in search.roots:
        for node in _walk(root):
            if node.split is None and node.leaf is not None and node.leaf["decision"] == "proved":
                proved += 1
            elif node.split is None:
                undecided.append(node)
    return proved, undecided


def _tree(root: _Node) -> list:
    """The certificate form of a root's tree (:mod:`lipschitz_icl.prover.certificate`): its nodes in
    preorder, each with its box and either its split or its decision and enclosures."""
    out = []
    for node in _walk(root):
        entry: dict = {"box": node.box.to_dict()}
        if node.split is not None:
            entry["split"] = {"param": node.split[0], "at": node.split[1]}
        elif node.leaf is not None:
            entry.update(node.leaf)
        else:
            entry.update({"decision": "undecided", "reason": OUT_OF_TIME, "quantity": None, "bound": None})
        out.append(entry)
    return out


def _vanishing_note(st: Statement, node: _Node) -> str:
    """Names an endpoint of the domain on the box where both sides are 0 (enclosures cannot separate)."""
    for name, lo, hi in node.box.ranges:
        for end in (lo, hi):
            if lo == hi or name in INTEGER_PARAMS or end not in (st.domain.pieces[name][0]):
                continue
            corner = node.box.midpoint()
            corner[name] = end
            q, b, _ = _point_pair(st, corner)
            if b is not None and q.contains(0) and b.contains(0):
                return f"both sides vanish at {name} = {end:g}"
    return ""


def _box_entry(st: Statement, node: _Node, until: float) -> dict:
    reason = node.leaf["reason"] if node.leaf is not None else OUT_OF_TIME
    note = ""
    if node.leaf is not None and not st.quantity.costly and time.perf_counter() < until:
        try:
            with deadline(until):
                note = _vanishing_note(st, node)
        except OutOfTime:
            note = ""
    return {"box": node.box.to_dict(), "reason": f"{reason}; {note}" if note else reason}


def prove_statement(
    st: Statement,
    *,
    max_boxes: int = MAX_BOXES,
    seconds: float = SECONDS,
    until: float | None = None,
    desc: str = "prove",
    show_progress: bool | None = None,
    precision_bits: int = arithmetic.PRECISION,
) -> ProofResult:
    """Decide ``st`` on its whole domain (module docstring) within ``max_boxes`` and ``seconds`` (or by
    the clock time ``until`` of ``time.perf_counter``); never raises on an exhausted budget."""
    start = time.perf_counter()
    until = start + seconds if until is None else until
    with arithmetic.precision(precision_bits), progress.bar(desc=desc, unit="box", show=show_progress) as bar:
        search = _run(st, max_boxes, until, bar)
        proved, undecided = _leaves(search)
        undecided = [] if search.counterexample is not None else undecided
        listed = tuple(_box_entry(st, n, until) for n in undecided[:MAX_LISTED_BOXES])
    if search.counterexample is not None:
        verdict = Verdict.REFUTED
    elif undecided:
        verdict = Verdict.UNDECIDED
    else:
        verdict = Verdict.PROVED
    total = st.domain.measure()
    share = sum((n.box.measure() for n in undecided), Fraction(0))
    share = float(share / total) if total else float(bool(undecided))
    part: dict = {
        "constants": {st.sharpest: st.constants[st.sharpest]} if st.sharpest in st.constants else {},
        "verdict": verdict.value,
    }
    if verdict is Verdict.REFUTED:
        assert search.counterexample is not None
        found = search.counterexample
        part["counterexample"] = {
            "params": found["params"],
            **{side: found[side] if all(map(math.isfinite, found[side])) else None for side in ("quantity", "bound")},
        }
        if "witnesses" in found:
            part["counterexample"]["witnesses"] = found["witnesses"]
    else:
        part["roots"] = [_tree(root) for root in search.roots]
    return ProofResult(
        verdict=verdict,
        statement=st.describe(),
        boxes=search.evaluated,
        proved_boxes=proved,
        undecided_boxes=listed,
        undecided_count=len(undecided),
        undecided_share=share if verdict is Verdict.UNDECIDED else 0.0,
        counterexample=_shown(search.counterexample),
        sharpest=None,
        certificate=_certificate(st, [part], verdict, precision_bits),
        seconds=time.perf_counter() - start,
        notes=("budget exhausted",) if search.budget_hit and verdict is Verdict.UNDECIDED else (),
    )


def _shown(counterexample: dict | None) -> dict | None:
    """The counterexample as a result shows it: its witnesses (``w*`` proofs) are in the certificate only."""
    if counterexample is None:
        return None
    return {key: value for key, value in counterexample.items() if key != "witnesses"}


def _certificate(st: Statement, parts: list, verdict: Verdict, precision_bits: int, sharpest=None) -> dict:
    from lipschitz_icl.prover.certificate import build

    return build(st, parts, verdict=verdict.value, precision_bits=precision_bits, sharpest=sharpest)


# ----------------------------------------------------------------------------- sharpest constant
@dataclass(frozen=True)
class Bisection:
    """The end of a bisection on a constant: ``good`` (proved) and ``bad`` (refuted) ends, every decided
    value's result in ``ends``, and ``undecided`` (the result of an undecided bracket end, else None)."""

    good: float | None
    bad: float | None
    ends: dict
    undecided: object
    notes: tuple


def bisect_constant(decide, name: str, bracket: tuple, rtol: float) -> Bisection:
    """Bisect ``bracket`` on the verdicts of ``decide(value)`` (anything with a ``verdict``), keeping a proved
    end and a refuted end, until ``|bad - good| <= rtol max(|good|, |bad|)``.  A bracket whose ends agree
    raises :class:`ParameterError` naming ``[constants] name``; an undecided end returns at once; an
    undecided step ends the bisection (noted)."""
    lo, hi = bracket
    ends = {value: decide(value) for value in (lo, hi)}
    verdicts = {value: r.verdict for value, r in ends.items()}
    if Verdict.UNDECIDED in verdicts.values():
        undecided = next(r for r in ends.values() if r.verdict is Verdict.UNDECIDED)
        return Bisection(None, None, ends, undecided, ("an end of the bracket is undecided",))
    if verdicts[lo] == verdicts[hi]:
        raise ParameterError(
            f"[constants] {name}",
            "a bracket [lo, hi] with the bound proved at one end and "
            f"refuted at the other (both ends are {verdicts[lo].value})",
            [lo, hi],
        )
    good, bad = (lo, hi) if verdicts[lo] is Verdict.PROVED else (hi, lo)
    notes = []
    while abs(bad - good) > rtol * max(abs(good), abs(bad)):
        mid = good + (bad - good) / 2
        if mid in (good, bad):
            break
        result = decide(mid)
        if result.verdict is Verdict.UNDECIDED:
            notes.append(f"bisection stopped: {name} = {mid:.8g} undecided within the budget")
            break
        ends[mid] = result
        good, bad = (mid, bad) if result.verdict is Verdict.PROVED else (good, mid)
    return Bisection(good, bad, ends, None, tuple(notes))


@dataclass(frozen=True)
class _SharpestRun:
    """One sharpest-constant run: the statement (``sharpest`` its constant), the bracket, the working
    precision and the clock time it started."""

    statement: Statement
    bracket: tuple
    precision_bits: int
    started: float

    @property
    def name(self) -> str:
        assert self.statement.sharpest is not None
        return self.statement.sharpest


def sharpest(
    st: Statement,
    name: str,
    bracket: tuple,
    *,
    rtol: float = SHARPEST_RTOL,
    max_boxes: int = MAX_BOXES,
    seconds: float = SECONDS,
    until: float | None = None,
    show_progress: bool | None = None,
    precision_bits: int = arithmetic.PRECISION,
) -> ProofResult:
    """The certified interval of the sharpest value of constant ``name`` in ``bracket`` (module docstring,
    :func:`bisect_constant`): ``undecided`` if an end is, else ``proved`` with the interval reached.  The
    budget: ``max_boxes`` per search, ``seconds`` in all (or until the clock time ``until``)."""
    run = _SharpestRun(
        statement=dataclasses.replace(st, sharpest=name),
        bracket=tuple(bracket),
        precision_bits=precision_bits,
        started=time.perf_counter(),
    )
    until = run.started + seconds if until is None else until

    def decide(value):
        return prove_statement(
            run.statement.with_constant(name, value),
            max_boxes=max_boxes,
            until=until,
            desc=f"{name}={value:.6g}",
            show_progress=show_progress,
            precision_bits=precision_bits,
        )

    return _sharpest_result(run, bisect_constant(decide, name, run.bracket, rtol))


def _sharpest_result(run: _SharpestRun, bisection: Bisection) -> ProofResult:
    """The result of a sharpest-constant run: its interval with both ends' proofs, or the undecided end."""
    boxes = sum(r.boxes for r in bisection.ends.values())
    if bisection.undecided is not None:
        end = bisection.undecided
        assert isinstance(end, ProofResult)
        return ProofResult(
            verdict=Verdict.UNDECIDED,
            statement=run.statement.describe(),
            boxes=boxes,
            proved_boxes=end.proved_boxes,
            undecided_boxes=end.undecided_boxes,
            undecided_count=end.undecided_count,
            undecided_share=end.undecided_share,
            counterexample=None,
            sharpest={"name": run.name, "bracket": list(run.bracket), "low": None, "high": None},
            certificate=end.certificate,
            seconds=time.perf_counter() - run.started,
            notes=bisection.notes,
        )
    good, bad = bisection.good, bisection.bad
    assert good is not None and bad is not None
    interval = {"low": min(good, bad), "high": max(good, bad), "proved_at": good, "refuted_at": bad}
    refuted = bisection.ends[bad]
    info = {
        "name": run.name,
        "bracket": list(run.bracket),
        **interval,
        "counterexample": refuted.counterexample,
        "width": abs(bad - good),
        "steps": len(bisection.ends),
    }
    parts = [bisection.ends[good].certificate["parts"][0], refuted.certificate["parts"][0]]
    return ProofResult(
        verdict=Verdict.PROVED,
        statement=run.statement.describe(),
        boxes=boxes,
        proved_boxes=bisection.ends[good].proved_boxes,
        undecided_boxes=(),
        undecided_count=0,
        undecided_share=0.0,
        counterexample=None,
        sharpest=info,
        certificate=_certificate(run.statement, parts, Verdict.PROVED, run.precision_bits, interval),
        seconds=time.perf_counter() - run.started,
        notes=bisection.notes,
    )


# ----------------------------------------------------------------------------- the Python API
def prove(
    quantity: str,
    bound: str,
    domain: dict,
    *,
    relation: str = "<=",
    constants: dict | None = None,
    sharpest_constant: str | None = None,
    bracket: tuple | None = None,
    max_boxes: int = MAX_BOXES,
    seconds: float = SECONDS,
    rtol: float = SHARPEST_RTOL,
    show_progress: bool | None = False,
    task: str | None = None,
) -> ProofResult:
    """Decide ``quantity relation bound`` at every point of ``domain``; or certify the sharpest constant.

    Parameters
    ----------
    quantity : str
        A certified quantity: ``cap_tail``, ``projection_tail``, ``projection_lower_tail``,
        ``binomial_tail``, ``binomial_lower_tail``, or a loss quantity of ``task`` (affine, relu, cosine):
        ``w_star``, ``icl_error``, ``bias``, ``noise``, ``loss``, ``dbias_dw``, ``dnoise_dw``, ``dloss_dw``,
        ``dloss_dw_step``.
    bound : str
        The bound, an arithmetic expression in the quantity's parameters and the ``constants``
        (:mod:`lipschitz_icl.expression`).
    domain : dict
        The TOML ``[domain]`` table as a dict, e.g. ``{"d": [5], "h": [0.01, 0.99]}``: a real parameter
        a closed interval ``[lo, hi]``, an integer one a list or ``{"from": a, "to": b}``.
    relation : {"<=", ">="}
        ``quantity <= bound`` or ``quantity >= bound``.
    constants : dict, optional
        Named numbers of the bound.
    sharpest_constant : str, optional
        A constant of the bound, free here, whose sharpest value is certified in ``bracket``.
    bracket : tuple of float, optional
        ``(lo, hi)``, ``lo < hi``: the bound is proved at one end and refuted at the other, and the
        bracket is bisected to ``rtol``.
    max_boxes : int
        Budget: boxes evaluated by one search, ``1 <= max_boxes <= 1e7``.
    seconds : float
        Budget: wall-clock seconds.
    rtol : float
        Relative width of the sharpest-constant interval, ``1e-12 <= rtol <= 0.5``.
    show_progress : bool, optional
        A progress bar on stderr.
    task : str, optional
        The task class of the loss quantities.

    Returns
    -------
    ProofResult
        Frozen: the verdict (proved, refuted, undecided), boxes, undecided share, the counterexample
        (a point and both enclosures), the sharpest interval and the certificate dict.

    Raises
    ------
    ParameterError
        Bad input (an unknown quantity, a bound that is not arithmetic, a bracket that does not bracket, ...).

    Examples
    --------
    Ball's cap bound ``P(x . q >= h) <= exp(-d h^2 / 2)`` on ``S^4``, for every ``h`` in ``[0.01, 0.99]``:

    >>> from lipschitz_icl.prover.search import prove
    >>> result = prove("cap_tail", "exp(-d*h**2/2)", {"d": [5], "h": [0.01, 0.99]})
    >>> result.verdict.value, result.undecided_count
    ('proved', 0)

    Rate 2 is false; the counterexample is certified (both enclosures at a point):

    >>> refuted = prove("cap_tail", "exp(-2*d*h**2)", {"d": [5], "h": [0.01, 0.99]})
    >>> refuted.verdict.value, refuted.counterexample["params"]
    ('refuted', {'d': 5, 'h': 0.5})

    The sharpest rate ``C`` of ``exp(-C d h^2)`` on ``[0, 1]``, to 1%:

    >>> sharp = prove("cap_tail", "exp(-C*d*h**2)", {"d": [5], "h": [0.0, 1.0]},
    ...               sharpest_constant="C", bracket=(0.5, 2.0), rtol=1e-2)
    >>> print(f"{sharp.sharpest['low']:.3f} <= C <= {sharp.sharpest['high']:.3f}")
    1.109 <= C <= 1.115
    """
    statement = make_statement(
        quantity,
        bound,
        domain,
        relation=relation,
        constants=constants,
        free=(sharpest_constant,) if sharpest_constant else (),
        task=task,
    )
    max_boxes = check_int("max_boxes", max_boxes, minimum=1, maximum=10**7)
    seconds = check_real("seconds", seconds, minimum=0.0, strict_minimum=True, maximum=1e6)
    if sharpest_constant is None:
        return prove_statement(statement, max_boxes=max_boxes, seconds=seconds, show_progress=show_progress)
    lo, hi = check_bracket(sharpest_constant, bracket)
    rtol = check_real("rtol", rtol, minimum=1e-12, maximum=0.5)
    return sharpest(
        statement,
        sharpest_constant,
        (lo, hi),
        rtol=rtol,
        max_boxes=max_boxes,
        seconds=seconds,
        show_progress=show_progress,
    )


def check_bracket(name: str, bracket) -> tuple:
    """``(lo, hi)`` with finite ``lo < hi``."""
    where = f"[constants] {name}"
    if not isinstance(bracket, (list, tuple)) or len(bracket) != 2:
        raise ParameterError(where, "a bracket [lo, hi] of two numbers", bracket)
    lo = check_real(where, bracket[0], minimum=-1e300, maximum=1e300)
    hi = check_real(where, bracket[1], minimum=-1e300, maximum=1e300)
    if not lo < hi:
        raise ParameterError(where, "a bracket [lo, hi] with lo < hi", list(bracket))
    return lo, hi


_KEPT: dict = {}  # (quantity, class, point, working precision) -> its ball (_kept_values)
_MAX_KEPT = 65536


def _kept_values(quantity: Quantity) -> Quantity:
    """``quantity`` whose balls at points of plain ints and floats are kept, by the quantity, its class, the
    point and the working precision (at most :data:`_MAX_KEPT`, all dropped when full), for every statement
    of this process: a search evaluates the same points again (a box's split point is a corner of both
    halves and the midpoint tested before the split; a bisection on a constant encloses the same boxes once
    per constant: 54309 law evaluations, 5652 distinct, in concentration/projection-tails-sharp/d5-k2).  The
    ball is the one the value function computes (deterministic at a precision); a refusal is not kept."""
    from flint import ctx

    value = quantity.value

    def kept(point):
        if not all(type(v) in (int, float) for v in point.values()):
            return value(point)
        key = (quantity.name, quantity.task, tuple(point.items()), ctx.prec)
        ball = _KEPT.get(key)
        if ball is None:
            if len(_KEPT) >= _MAX_KEPT:
                _KEPT.clear()
            ball = _KEPT[key] = value(point)
        return ball

    return dataclasses.replace(quantity, value=kept)


def quantity_of(name: str, task: str | None = None) -> Quantity:
    """The certified quantity ``name`` (of ``task`` for a loss quantity): an entry of the trusted table
    :data:`lipschitz_icl.prover.trusted.QUANTITIES`."""
    return lookup(name, task)


def check_domain(quantity: Quantity, domain: Domain) -> None:
    """``domain`` gives every parameter of ``quantity`` (:attr:`Quantity.params`: ``w`` too for the loss parts),
    each within its range, and keeps its domain rule (``k <= d``); raises :class:`ParameterError` naming the
    parameter."""
    for parameter in quantity.params:
        if parameter.name not in domain.pieces:
            requirement = f"given in the [domain] ({parameter.describe()}: a parameter of {quantity.name})"
            raise ParameterError(parameter.name, requirement, "missing")
    for name, pieces in domain.pieces.items():
        parameter = quantity.parameter(name)
        for piece in pieces:
            if not all(parameter.admits(end) for end in piece):
                raise ParameterError(name, f"{parameter.describe()} for {quantity.name}", list(piece))
    rule = quantity.domain_rule(domain.pieces)
    if rule is not None:
        raise ParameterError("domain", f"a domain with {rule}", domain.to_dict())


def make_statement(
    quantity: str,
    bound: str,
    domain: dict,
    *,
    relation: str = "<=",
    constants: dict | None = None,
    free: tuple = (),
    task: str | None = None,
) -> Statement:
    """A :class:`Statement` from plain values (names as in variant files); ``free`` names constants that
    are filled in later (the sharpest constant)."""
    law = _kept_values(quantity_of(quantity, task))
    relation = check_choice("relation", relation, RELATIONS)
    constants = {
        k: check_real(f"[constants] {k}", v, minimum=-1e300, maximum=1e300) for k, v in (constants or {}).items()
    }
    dom = parse_domain(domain, law.names)
    check_domain(law, dom)
    names = set(law.names) | set(constants) | set(free)
    try:
        expression = parse_expression(bound, names)
    except ExpressionError as exc:
        raise ParameterError("bound", f"an arithmetic expression ({exc})", bound) from None
    return Statement(law, relation, expression, constants, dom, free[0] if free else None)
