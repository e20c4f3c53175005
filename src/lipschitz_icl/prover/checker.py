"""The proof checker: ``prove --recheck`` re-derives a certificate's verdict from its statement alone.

A reader who does not trust the search (:mod:`lipschitz_icl.prover.search`: its queue, its split rule, its
heuristics, its bookkeeping) need trust only this module and the base it names.  The certificate is read
as *hints*: the cover of the domain (how it was split), the counterexample, the precision.  Everything
that decides the verdict is recomputed here from the statement.  The libraries a certificate says made it
(``libraries``, optional) are for its reader: the recheck takes nothing from them.

**What it trusts** (its trusted base, and nothing else of the package):

* :mod:`lipschitz_icl.prover.trusted`: the table of quantities, each with its parameters and their
  ranges, its certified value function and the monotonicity theorem that encloses it on a box (proofs in
  that module's docstring);
* the value functions that table names: :mod:`lipschitz_icl.certified.laws` (regularised incomplete beta
  laws), the certified loss (:mod:`lipschitz_icl.certified.loss`: :func:`~lipschitz_icl.certified.loss.enclose`
  and :func:`~lipschitz_icl.certified.loss.enclose_on_w_range`, for the loss quantities ``bias``, ``noise``,
  ``loss`` and their ``w``-derivatives; :func:`~lipschitz_icl.certified.loss.enclose_step_in_n` for
  ``dloss_dw_step``), the ``w*`` proof check (:mod:`lipschitz_icl.certified.wstar_proof`,
  for ``w_star`` and ``icl_error``: it checks the proof a certificate carries, step by step, on the certified
  loss), the closed form of the optimal linear attention's error
  (:func:`lipschitz_icl.certified.linear.linear_error`, 60 lines, for ``linear_error``), and
  :mod:`lipschitz_icl.certified.arithmetic` (exact balls of doubles and intervals);
* the bound reader :func:`lipschitz_icl.expression.parse_expression` and its ball evaluation
  :meth:`~lipschitz_icl.expression.Expression.evaluate_ball`;
* two names of :mod:`lipschitz_icl.validation` (the error type, the shortening of a value in a message)
  and two numbers of :mod:`lipschitz_icl.problem` (the ranges of ``L`` and ``sigma``, in the table);
* python-flint (FLINT/Arb ball arithmetic) and the Python standard library (``json``).

It imports no search, splitting, queue, budget or domain code of the prover.  Its size, the de Bruijn
criterion of proof assistants (a checker small enough to be read in full, and all it relies on named):
this module is about 710 lines (490 of code, the rest its documentation), the table of quantities 550
(340 of code), the laws 90 (40), the ball arithmetic 100 (60) and the bound reader 680 (475); that is
about 1405 lines of code for the tail quantities (``tests/prover/test_checker.py`` counts them again).

Certificates of the loss quantities add the certified loss with its kernels and its Laplace-transform
quadrature, about 2760 lines (1930 of code) more: a base checked against the exact method by its tests rather
than small enough to read at a sitting.  For ``w_star`` and ``icl_error`` the certificate carries, at each
point where the quantity is enclosed, a *witness*: a ``w*`` proof (a bracket, a window ``w1`` and two walks
of pieces), and the check of :mod:`lipschitz_icl.certified.wstar_proof` (about 560 lines, 350 of code)
re-derives from it, on fresh balls of the loss, that every global minimiser lies in the bracket (a
one-sided proof of a box of ``n``: that none lies beyond its window).  The
``w*`` search (:mod:`lipschitz_icl.certified.wstar`: its Newton start, its bracket widening, its piece
halving) and its float helpers (:mod:`lipschitz_icl.optimum`) are not loaded: a wrong witness fails the
check, it never proves.  The float helpers the loss itself loads (:mod:`lipschitz_icl.exact.grids` and
:mod:`lipschitz_icl.sphere.laws`, for where the quadrature grids lie) choose only where to look: a wrong
grid gives a wider ball, never a wrong one.

**What it checks**, all of it, or the recheck fails:

1. *Schema* (:data:`VERSION`): every field with its type, size and limit (module constants below); a file
   that is not such a certificate is refused with :class:`CertificateError` (exit 2, one line naming
   ``--recheck``), never a traceback.
2. *The statement*: a quantity of the table (and its task), a relation ``<=`` or ``>=``, a bound that
   reads over the quantity's parameters, the statement's constants and at most one *sharpest* constant;
   no constant names a parameter, a function or ``pi``; the domain gives every parameter of the
   quantity and nothing else, non-empty and within the parameter's range, integers as integer pieces,
   at most :data:`MAX_ROOTS` root boxes (counted before any is built), and the quantity's own domain rule.
3. *The cover*: the root boxes are the product of the domain's pieces, in the domain's order; each
   root's tree (a preorder list) splits a box in two along one parameter -- a real range ``[lo, hi]`` at
   ``lo < at < hi`` into ``[lo, at]`` and ``[at, hi]``, an integer range ``{lo..hi}`` at an integer
   ``lo <= at < hi`` into ``{lo..at}`` and ``{at+1..hi}`` -- so the leaves cover the domain exactly, with
   no gap and nothing outside it; every stored box must be the box so rebuilt.
4. *Each leaf marked proved*: the quantity enclosed on the leaf by the table, the bound evaluated on the
   leaf's balls with the statement's constants (only the sharpest constant's value comes from the part),
   and the relation certain on the two balls (``high(Q) <= low(B)`` for ``<=``); the stored enclosures
   must meet the fresh ones (they are hints: null where an end is beyond the double range).  A leaf of a
   witnessed quantity gives the witnesses of its extremes (at most :data:`MAX_WITNESSES`; each proof's form
   is read here, its steps are checked by the table's ``witness_value``); or, for ``w_star``, a one-sided
   proof of the whole box, its quantity null (:func:`~lipschitz_icl.prover.trusted.one_sided_holds`).  Leaves
   marked undecided are counted, not evaluated.
5. *A counterexample*: a point of the domain (every parameter given, integers as JSON integers inside an
   integer piece, reals inside their interval) where the fresh balls violate the relation certainly
   (``low(Q) > high(B)`` for ``<=``); for a witnessed quantity, with the witness at that point.
6. *The verdict*, by one rule, from the parts as rechecked: a part is *proved* when every leaf of its
   cover is proved, *refuted* when its counterexample is verified, *undecided* otherwise; a plain
   statement has exactly one part and its verdict; a sharpest constant ``C`` is certified in
   ``[low, high]`` when exactly two parts are rechecked: proved at one end (on the whole domain) and
   refuted at the other, the ends being ``low`` and ``high``.  The recheck passes when the verdict it
   derives is the one the certificate claims.

The working precision is the certificate's ``precision_bits`` (a hint: any precision gives valid balls).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from flint import arb

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.expression import FUNCTIONS, Expression, ExpressionError, parse_expression
from lipschitz_icl.prover.trusted import PARAMETERS, QUANTITIES, NoEnclosure, Quantity, one_sided_holds, point_key
from lipschitz_icl.validation import ParameterError, shorten

__all__ = [
    "FORMAT",
    "VERSION",
    "MAX_LISTED",
    "MAX_ROOTS",
    "CertificateError",
    "Statement",
    "Recheck",
    "recheck",
    "check",
    "read_statement",
]

FORMAT = "lipschitz-icl prove certificate"
VERSION = 4  # 3: w_star and icl_error carry their w* proofs (witnesses); 4: or a one-sided proof of a box
MAX_BYTES = 256 * 1024 * 1024  # a certificate file
MAX_LISTED = 1000  # integer pieces of one parameter
MAX_ROOTS = 4096  # root boxes of a domain: the product of its pieces' counts
MAX_NODES = 20_000_000  # nodes of all the covers of a certificate
MAX_CONSTANTS = 32
MAX_WITNESSES = 2  # witnesses of a leaf (its two extremes) or of a counterexample (one)
MAX_TEXT = 1000  # characters of a bound (the reader refuses beyond 500) or of an undecided leaf's reason
PRECISION_BITS = (64, 1024)
RELATIONS = ("<=", ">=")
VERDICTS = ("proved", "refuted", "undecided")
TOP_KEYS = ("format", "version", "statement", "verdict", "precision_bits", "sharpest", "parts")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}", re.ASCII)


class CertificateError(ParameterError):
    """The file is not a certificate of :data:`VERSION` (exit 2; the message names ``--recheck``)."""

    def __init__(self, reason: str, path: object = ""):
        super().__init__("recheck", f"a proof certificate of `lipschitz-icl prove`, version {VERSION} ({reason})", path)
        self.reason = reason


class _Failure(Exception):
    """A well-formed certificate that does not certify what it claims: ``where`` and ``reason``."""

    def __init__(self, where: str, reason: str):
        super().__init__(reason)
        self.where = where
        self.reason = reason


# ----------------------------------------------------------------------------- the schema's pieces
def _fields(raw, where: str, required: tuple, optional: tuple = ()) -> dict:
    """``raw`` as a JSON object with every key of ``required``, and no key beyond ``optional``."""
    if not isinstance(raw, dict):
        raise CertificateError(f"{where} must be an object")
    if any(key not in raw for key in required) or any(key not in required + optional for key in raw):
        raise CertificateError(f"{where} must have exactly the keys {list(required)}{_optional_text(optional)}")
    return raw


def _optional_text(optional: tuple) -> str:
    return f" (and may have {list(optional)})" if optional else ""


def _number(value, where: str) -> float:
    """A finite JSON number (never a boolean or a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CertificateError(f"{where} must be a finite number")
    if abs(value) > 1e300:
        raise CertificateError(f"{where} must be at most 1e300 in size")
    return float(value)


def _stored(value, where: str) -> tuple[float, float] | None:
    """A stored enclosure: ``[low, high]`` (:func:`_enclosure`) or null."""
    return None if value is None else _enclosure(value, where)


def _enclosure(value, where: str) -> tuple[float, float]:
    """``[low, high]``, two finite numbers with ``low <= high``."""
    if not isinstance(value, list) or len(value) != 2:
        raise CertificateError(f"{where} must be an enclosure [low, high]")
    low, high = _number(value[0], where), _number(value[1], where)
    if not low <= high:
        raise CertificateError(f"{where} must have low <= high")
    return low, high


def _name(value, where: str) -> str:
    """A constant's name: an identifier that is no parameter, no function and not ``pi``."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise CertificateError(f"{where} must be a name (letters, digits, _)")
    if value in PARAMETERS or value in FUNCTIONS or value == "pi":
        raise CertificateError(f"{where} {value!r} names a parameter, a function or pi, not a constant")
    return value


# ----------------------------------------------------------------------------- the statement
@dataclass(frozen=True)
class Statement:
    """``quantity relation bound`` at every point of ``domain`` (name -> pieces ``(lo, hi)``, in order), with
    the ``constants``; ``sharpest`` names the constant whose sharpest value is certified (or None)."""

    quantity: Quantity
    relation: str
    bound: Expression
    constants: dict
    domain: dict
    sharpest: str | None

    def holds(self, q: tuple, b: arb) -> bool:
        """Certain on a box: ``q = (low, high)``, the balls of the quantity at its extremes."""
        return bool(q[1] <= b) if self.relation == "<=" else bool(q[0] >= b)

    def violated(self, q: tuple, b: arb) -> bool:
        """Certainly false at a point (where ``low`` and ``high`` are the one value's ball)."""
        return bool(q[0] > b) if self.relation == "<=" else bool(q[1] < b)

    def describe(self) -> str:
        """The statement in words: what a passing recheck has verified (the class too, for a loss quantity)."""
        where = ", ".join(
            f"{name} in {_pieces_text(self.quantity.parameter(name).integer, p)}" for name, p in self.domain.items()
        )
        text = f"{self.quantity.name} {self.relation} {self.bound.text}"
        if self.quantity.task is not None:  # a loss quantity: the class is part of what was verified
            text += f" for the {self.quantity.task} class"
        text += f" at every point of {where}"
        if self.constants:
            text += " with " + ", ".join(f"{k} = {v!r}" for k, v in self.constants.items())
        return text


def _pieces_text(integer: bool, pieces: tuple) -> str:
    if not integer:
        return f"[{pieces[0][0]!r}, {pieces[0][1]!r}]"
    return "{" + ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in pieces) + "}"


def _domain(raw, quantity: Quantity) -> dict:
    if not isinstance(raw, dict) or set(raw) != set(quantity.names):
        raise CertificateError(f"the domain must give exactly the parameters {', '.join(quantity.names)}")
    domain, roots = {}, 1
    for name, value in raw.items():
        parameter = quantity.parameter(name)
        if parameter.integer:
            if not isinstance(value, list) or not 1 <= len(value) <= MAX_LISTED:
                raise CertificateError(f"the domain's {name} must be a list of 1 to {MAX_LISTED} integer pieces")
            pieces = tuple(_integer_piece(piece, parameter) for piece in value)
            ordered = sorted(pieces)
            if any(b[0] <= a[1] for a, b in itertools.pairwise(ordered)):
                raise CertificateError(f"the domain's {name} has overlapping pieces")
        else:
            lo, hi = _enclosure(value, f"the domain's {name}")
            if not (parameter.admits(lo) and parameter.admits(hi)):
                raise CertificateError(f"the domain's {name} must lie in {parameter.describe()}")
            pieces = ((lo, hi),)
        domain[name] = pieces
        roots *= len(pieces)
    if roots > MAX_ROOTS:
        raise CertificateError(f"the domain has {roots} root boxes, more than {MAX_ROOTS}")
    rule = quantity.domain_rule(domain)
    if rule is not None:
        raise CertificateError(f"the domain of {quantity.name} must have {rule}")
    return domain


def _integer_piece(piece, parameter) -> tuple:
    if not (isinstance(piece, list) and len(piece) == 2 and all(parameter.admits(v) for v in piece)):
        raise CertificateError(f"a piece of the domain's {parameter.name} must be [a, b], each {parameter.describe()}")
    if piece[0] > piece[1]:
        raise CertificateError(f"a piece of the domain's {parameter.name} is empty ({piece[0]} > {piece[1]})")
    return piece[0], piece[1]


def read_statement(raw) -> Statement:
    """The :class:`Statement` of a certificate's ``statement`` object (module docstring, item 2)."""
    raw = _fields(raw, "the statement", ("quantity", "task", "relation", "bound", "constants", "sharpest", "domain"))
    name = raw["quantity"]
    if not isinstance(name, str) or name not in QUANTITIES:
        raise CertificateError(f"the quantity must be one of {', '.join(QUANTITIES)}")
    quantity = QUANTITIES[name]
    if quantity.tasks:
        if raw["task"] not in quantity.tasks:
            raise CertificateError(f"the task of {name} must be one of {', '.join(quantity.tasks)}")
        quantity = quantity.for_task(raw["task"])
    elif raw["task"] != quantity.task:
        raise CertificateError(f"the task of {name} must be null (a tail of the sphere has no class)")
    if raw["relation"] not in RELATIONS:
        raise CertificateError("the relation must be '<=' or '>='")
    constants = raw["constants"]
    if not isinstance(constants, dict) or len(constants) > MAX_CONSTANTS:
        raise CertificateError(f"the constants must be an object of at most {MAX_CONSTANTS} numbers")
    constants = {_name(k, "a constant"): _number(v, f"the constant {k}") for k, v in constants.items()}
    sharpest = raw["sharpest"]
    if sharpest is not None and (_name(sharpest, "the sharpest constant") in constants):
        raise CertificateError("the sharpest constant must not also be a constant of the statement")
    domain = _domain(raw["domain"], quantity)
    bound = raw["bound"]
    if not isinstance(bound, str) or len(bound) > MAX_TEXT:
        raise CertificateError(f"the bound must be a text of at most {MAX_TEXT} characters")
    names = set(quantity.names) | set(constants) | ({sharpest} if sharpest else set())
    try:
        expression = parse_expression(bound, names)
    except ExpressionError as exc:
        raise CertificateError(f"the bound does not read: {exc}") from None
    return Statement(quantity, raw["relation"], expression, constants, domain, sharpest)


# ----------------------------------------------------------------------------- one part
def _roots(domain: dict):
    names = list(domain)
    for combo in itertools.product(*domain.values()):
        yield dict(zip(names, combo))


def _box_text(box: dict) -> str:
    return ", ".join(f"{k}={lo!r}" if lo == hi else f"{k} in [{lo!r}, {hi!r}]" for k, (lo, hi) in box.items())


def _balls(box: dict) -> dict:
    return {name: arithmetic.interval(lo, hi) for name, (lo, hi) in box.items()}


@dataclass
class _Tally:
    """Leaves rechecked so far over all parts: proved, undecided, and nodes still allowed (:data:`MAX_NODES`)."""

    proved: int = 0
    undecided: int = 0
    nodes_left: int = MAX_NODES


class _PartCheck:
    """Recheck one part of a certificate against ``statement`` with the part's ``constants`` (balls)."""

    def __init__(self, statement: Statement, constants: dict, tally: _Tally):
        self.statement = statement
        self.constants = constants
        self.tally = tally

    def sides(self, box: dict, witnesses: dict | None = None, one_sided=None) -> tuple[tuple | None, arb]:
        """Fresh balls of the quantity (at its two extremes, a witnessed quantity's shown by ``witnesses``; None
        with a ``one_sided`` proof, checked against the bound instead) and of the bound on ``box``; a box the
        trusted base cannot enclose (a witness or proof that fails, a bound undefined on it) is a failure."""
        try:
            b = self.statement.bound.evaluate_ball({**_balls(box), **self.constants})
            q = None if one_sided is not None else self.statement.quantity.enclose(box, witnesses)
        except NoEnclosure as exc:
            raise _Failure(_box_text(box), f"the quantity has no enclosure here ({exc.reason})") from None
        except (ValueError, ArithmeticError) as exc:  # the bound undefined on the box, or a law refusing it
            raise _Failure(_box_text(box), f"cannot be evaluated here ({exc})") from None
        if one_sided is not None:
            _one_sided(self.statement, box, b, one_sided)
        return q, b

    def witnesses_of(self, raw, box: dict, extremes: bool) -> dict:
        """The witnesses given for ``box`` (:func:`_witnesses`): exactly one per point where the quantity is
        enclosed -- the box's two extremes (``extremes``), or the counterexample's point."""
        witnesses = _witnesses(raw, self.statement.quantity)
        if extremes:
            try:
                points = self.statement.quantity.extremes(box)
            except NoEnclosure as exc:
                raise _Failure(_box_text(box), f"the quantity has no enclosure here ({exc.reason})") from None
        else:
            points = ({name: lo for name, (lo, _) in box.items()},)
        if set(witnesses) != {point_key(point) for point in points} or len(raw) != len(set(witnesses)):
            raise _Failure(_box_text(box), "the witnesses are not one per point where the quantity is enclosed")
        return witnesses

    def cover(self, roots) -> str:
        """The verdict of a cover: proved when every leaf is proved (each one rechecked), else undecided."""
        if not isinstance(roots, list):
            raise CertificateError("a part's roots must be a list of trees")
        expected = list(_roots(self.statement.domain))
        if len(roots) != len(expected):
            raise _Failure("the domain", f"{len(roots)} trees for {len(expected)} root boxes")
        undecided_before = self.tally.undecided
        for nodes, root in zip(roots, expected):
            self.tree(nodes, root)
        return "proved" if self.tally.undecided == undecided_before else "undecided"

    def tree(self, nodes, root: dict) -> None:
        """Walk one root's preorder list, rebuilding every box from the root and the splits."""
        if not isinstance(nodes, list) or len(nodes) > self.tally.nodes_left:
            raise CertificateError(f"a tree must be a list, at most {MAX_NODES} nodes in all")
        self.tally.nodes_left -= len(nodes)
        stack, used = [root], 0
        while stack:
            box = stack.pop()
            if used == len(nodes):
                raise _Failure(_box_text(box), "the cover ends before this box")
            node, used = nodes[used], used + 1
            if not isinstance(node, dict) or "box" not in node:
                raise CertificateError("a node must be an object with a box")
            if not self.same_box(node["box"], box):
                raise _Failure(_box_text(box), "the stored box is not the box its parent's split gives")
            if "split" in node:
                _fields(node, "a split node", ("box", "split"))
                stack.extend(reversed(self.halves(box, node["split"])))
            else:
                self.leaf(node, box)
        if used != len(nodes):
            raise _Failure(_box_text(root), "nodes beyond the cover of this root box")

    def same_box(self, stored, box: dict) -> bool:
        """The stored box is ``box``: the same parameters in order, integers as integers, reals as numbers."""
        if not isinstance(stored, dict) or list(stored) != list(box):
            return False
        for name, ends in stored.items():
            kind = int if self.statement.quantity.parameter(name).integer else (int, float)
            if not (
                isinstance(ends, list)
                and len(ends) == 2
                and all(isinstance(end, kind) and not isinstance(end, bool) for end in ends)
                and tuple(ends) == box[name]
            ):
                return False
        return True

    def halves(self, box: dict, split) -> tuple[dict, dict]:
        """The two halves of ``box`` along ``split`` (module docstring, item 3)."""
        split = _fields(split, "a split", ("param", "at"))
        name, at = split["param"], split["at"]
        if not isinstance(name, str) or name not in box:
            raise _Failure(_box_text(box), f"a split along {name!r}, not a parameter")
        lo, hi = box[name]
        if self.statement.quantity.parameter(name).integer:
            if isinstance(at, bool) or not isinstance(at, int) or not lo <= at < hi:
                reason = f"a split of the integer {name} at {at!r}, not an integer in {lo}..{hi - 1}"
                raise _Failure(_box_text(box), reason)
            return {**box, name: (lo, at)}, {**box, name: (at + 1, hi)}
        at = _number(at, "a split point")
        if not lo < at < hi:
            raise _Failure(_box_text(box), f"a split of {name} at {at!r}, not inside ({lo!r}, {hi!r})")
        return {**box, name: (lo, at)}, {**box, name: (at, hi)}

    def leaf(self, node: dict, box: dict) -> None:
        """An undecided leaf is counted; a proved one is rechecked (module docstring, item 4)."""
        decision = node.get("decision")
        if decision == "undecided":
            _fields(node, "an undecided leaf", ("box", "decision", "reason", "quantity", "bound"))
            _stored(node["quantity"], "a leaf's quantity")
            _stored(node["bound"], "a leaf's bound")
            if not isinstance(node["reason"], str) or len(node["reason"]) > MAX_TEXT:
                raise CertificateError(f"an undecided leaf's reason must be a text of at most {MAX_TEXT} characters")
            self.tally.undecided += 1
            return
        if decision != "proved":
            raise CertificateError("a leaf's decision must be 'proved' or 'undecided'")
        one_sided = node.get("one_sided")  # a w_star leaf's one-sided proof replaces its witnesses and quantity
        witnessed = ("witnesses",) if self.statement.quantity.witnessed and one_sided is None else ()
        extra = ("one_sided",) if one_sided is not None else witnessed
        _fields(node, "a proved leaf", ("box", "decision", "quantity", "bound", *extra))
        stored_q = _stored(node["quantity"], "a leaf's quantity")
        stored_b = _stored(node["bound"], "a leaf's bound")
        witnesses = self.witnesses_of(node["witnesses"], box, extremes=True) if witnessed else None
        if one_sided is not None and stored_q is not None:
            raise CertificateError("a proved leaf with a one-sided proof has a null quantity")
        q, b = self.sides(box, witnesses, one_sided)
        if q is not None and not self.statement.holds(q, b):
            raise _Failure(_box_text(box), f"{self.statement.relation} is not certain on fresh enclosures")
        if not ((q is None or _meets(stored_q, *q)) and _meets(stored_b, b)):
            raise _Failure(_box_text(box), "the stored enclosures do not meet the fresh ones")
        self.tally.proved += 1

    def counterexample(self, raw) -> str:
        """``refuted`` when the counterexample is verified (module docstring, item 5)."""
        witnessed = ("witnesses",) if self.statement.quantity.witnessed else ()
        raw = _fields(raw, "the counterexample", ("params", "quantity", "bound", *witnessed))
        params = raw["params"]
        names = self.statement.quantity.names
        if not isinstance(params, dict) or set(params) != set(names):
            raise CertificateError(f"the counterexample must give exactly the parameters {', '.join(names)}")
        point = {name: params[name] for name in self.statement.domain}
        for name, value in point.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CertificateError(f"the counterexample's {name} must be a number")
            if self.statement.quantity.parameter(name).integer and not isinstance(value, int):
                raise _Failure(f"{name}={value!r}", f"the counterexample's {name} is not an integer")
            if not (math.isfinite(value) and any(lo <= value <= hi for lo, hi in self.statement.domain[name])):
                raise _Failure(f"{name}={value!r}", f"the counterexample's {name} lies outside the domain")
        box = {name: (value, value) for name, value in point.items()}
        stored_q = _stored(raw["quantity"], "the counterexample's quantity")
        stored_b = _stored(raw["bound"], "the counterexample's bound")
        witnesses = self.witnesses_of(raw["witnesses"], box, extremes=False) if witnessed else None
        q, b = self.sides(box, witnesses)
        assert q is not None  # a counterexample has no one-sided proof
        if not self.statement.violated(q, b):
            raise _Failure(_box_text(box), "the counterexample does not violate the statement on fresh enclosures")
        if not (_meets(stored_q, *q) and _meets(stored_b, b)):
            raise _Failure(_box_text(box), "the counterexample's stored enclosures do not meet the fresh ones")
        return "refuted"


def _one_sided(statement: Statement, box: dict, bound: arb, raw) -> None:
    """A ``w_star`` leaf's one-sided proof checked by the table (item 4): malformed, or failing at ``box``."""
    from lipschitz_icl.certified import wstar_proof  # the certified loss: loaded for a loss certificate only

    try:
        one_sided_holds(statement.quantity, box, statement.relation, bound, raw)
    except wstar_proof.ProofError as exc:
        raise CertificateError(f"a one-sided proof: {exc}") from None
    except NoEnclosure as exc:
        raise _Failure(_box_text(box), exc.reason) from None


def _witnesses(raw, quantity: Quantity) -> dict:
    """The witnesses of a leaf or a counterexample of a witnessed quantity (module docstring, item 4), as the
    trusted table reads them: :func:`~lipschitz_icl.prover.trusted.point_key` of each point -> its proof.
    Only their form is read here; whether a proof proves is the table's check."""
    from lipschitz_icl.certified import wstar_proof  # the certified loss: loaded for a loss certificate only

    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_WITNESSES:
        raise CertificateError(f"the witnesses must be a list of 1 to {MAX_WITNESSES} entries")
    out = {}
    for raw_entry in raw:
        entry = _fields(raw_entry, "a witness", ("point", "proof"))
        point = entry["point"]
        if not isinstance(point, dict) or set(point) != set(quantity.names):
            raise CertificateError(f"a witness's point must give exactly the parameters {', '.join(quantity.names)}")
        for name, value in point.items():
            kind = int if quantity.parameter(name).integer else (int, float)
            if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
                raise CertificateError(f"a witness's {name} must be {'an integer' if kind is int else 'a number'}")
        try:
            wstar_proof.read_proof(entry["proof"])
        except wstar_proof.ProofError as exc:
            raise CertificateError(f"a witness's proof: {exc}") from None
        out[point_key(point)] = entry["proof"]
    return out


def _meets(stored: tuple | None, low: arb, high: arb | None = None) -> bool:
    """The stored ``[low, high]`` meets the fresh ball (or the hull of the two fresh balls); a leaf may store
    none (null: an end beyond the double range)."""
    if stored is None:
        return True
    fresh_low, fresh_high = low.lower(), (low if high is None else high).upper()
    return bool(arb(stored[0]) <= fresh_high and fresh_low <= arb(stored[1]))


# ----------------------------------------------------------------------------- the certificate
@dataclass(frozen=True)
class Recheck:
    """What a recheck established.  ``recheck``: ``passed`` (the certificate certifies what it claims) or
    ``failed`` (``where`` and ``reason`` name the first place that does not check); ``verdict``: the
    verdict re-derived from the statement (None when failed); ``sharpest``: ``{"name", "low", "high"}``
    when a sharpest constant is certified in ``[low, high]``."""

    recheck: str
    verdict: str | None
    claimed: str
    statement: str
    sharpest: dict | None
    boxes_checked: int
    undecided_boxes: int
    where: str | None = None
    reason: str | None = None

    @property
    def passed(self) -> bool:
        return self.recheck == "passed"

    def to_dict(self) -> dict:
        return {
            "recheck": self.recheck,
            "verdict": self.verdict,
            "claimed": self.claimed,
            "statement": self.statement,
            "sharpest": self.sharpest,
            "boxes_checked": self.boxes_checked,
            "undecided_boxes": self.undecided_boxes,
            "first_bad_box": self.where,
            "reason": self.reason,
        }


def _load(path) -> dict:
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            raise CertificateError(f"a regular file of at most {MAX_BYTES} bytes", str(path))
        text = path.read_text(encoding="utf-8")
        return json.loads(text, object_pairs_hook=_no_repeated_keys, parse_constant=_no_constant)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        if isinstance(exc, CertificateError):
            raise
        raise CertificateError(f"readable JSON ({type(exc).__name__})", str(path)) from None


def _no_repeated_keys(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise CertificateError("an object with a repeated key")
    return dict(pairs)


def _no_constant(text: str):
    raise CertificateError(f"a number that is not finite ({text})")


def recheck(path) -> Recheck:
    """Recheck the certificate file at ``path`` (module docstring); a file that is not a certificate
    raises :class:`CertificateError` naming the path."""
    data = _load(path)
    try:
        return check(data)
    except CertificateError as exc:
        raise CertificateError(exc.reason, str(path)) from None


def check(data) -> Recheck:
    """Recheck a certificate given as the parsed JSON ``data`` (module docstring)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CertificateError(f"an object with format {FORMAT!r}")
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise CertificateError(f"this file says version {shorten(version)}: write it again with prove --certificate")
    data = _fields(data, "the certificate", TOP_KEYS, ("libraries",))  # libraries: for the reader, never read here
    statement = read_statement(data["statement"])
    claimed = data["verdict"]
    bits = data["precision_bits"]
    if claimed not in VERDICTS:
        raise CertificateError(f"the verdict must be one of {', '.join(VERDICTS)}")
    if isinstance(bits, bool) or not isinstance(bits, int) or not PRECISION_BITS[0] <= bits <= PRECISION_BITS[1]:
        raise CertificateError(f"precision_bits must be an integer in [{PRECISION_BITS[0]}, {PRECISION_BITS[1]}]")
    parts = data["parts"]
    if not isinstance(parts, list) or not 1 <= len(parts) <= (1 if statement.sharpest is None else 2):
        raise CertificateError("the parts must be a list of one part (one or two for a sharpest constant)")
    values = [_part_value(part, statement) for part in parts]
    claimed_sharpest = _sharpest_claim(data["sharpest"], statement, claimed)
    tally = _Tally()
    try:
        with arithmetic.precision(bits):
            rechecked = [_recheck_part(part, statement, value, tally) for part, value in zip(parts, values)]
        verdict, sharpest = _verdict(statement, rechecked, values, claimed_sharpest)
        if verdict != claimed:
            raise _Failure("the certificate", f"claims {claimed}, but its parts recheck as {verdict}")
    except _Failure as failure:
        return Recheck(
            recheck="failed",
            verdict=None,
            claimed=claimed,
            statement=statement.describe(),
            sharpest=None,
            boxes_checked=tally.proved,
            undecided_boxes=tally.undecided,
            where=failure.where,
            reason=failure.reason,
        )
    return Recheck(
        recheck="passed",
        verdict=verdict,
        claimed=claimed,
        statement=statement.describe(),
        sharpest=sharpest,
        boxes_checked=tally.proved,
        undecided_boxes=tally.undecided,
    )


def _part_value(part, statement: Statement) -> float | None:
    """The sharpest constant's value of ``part`` (None for a plain statement, whose parts have no constants)."""
    part = _fields(part, "a part", ("constants", "verdict"), ("roots", "counterexample"))
    constants = part["constants"]
    if statement.sharpest is None:
        if constants != {}:
            raise CertificateError("a part of a plain statement has no constants of its own (they are the statement's)")
        return None
    if not isinstance(constants, dict) or set(constants) != {statement.sharpest}:
        raise CertificateError(f"a part's constants must give exactly the sharpest constant {statement.sharpest}")
    return _number(constants[statement.sharpest], f"the part's {statement.sharpest}")


def _recheck_part(part: dict, statement: Statement, value: float | None, tally: _Tally) -> str:
    """The verdict of one part as rechecked; a part whose claimed verdict differs is a failure."""
    constants = dict(statement.constants)
    if value is not None:
        constants[statement.sharpest] = value
    check_part = _PartCheck(statement, {k: arithmetic.exact(v) for k, v in constants.items()}, tally)
    if part["verdict"] == "refuted":
        if set(part) != {"constants", "verdict", "counterexample"}:
            raise CertificateError("a refuted part has its counterexample and no roots")
        return check_part.counterexample(part["counterexample"])
    if part["verdict"] not in ("proved", "undecided") or set(part) != {"constants", "verdict", "roots"}:
        raise CertificateError("a proved or undecided part has its roots and no counterexample")
    verdict = check_part.cover(part["roots"])
    if verdict != part["verdict"]:
        raise _Failure("a part", f"claims {part['verdict']}, but its cover rechecks as {verdict}")
    return verdict


def _sharpest_claim(raw, statement: Statement, claimed: str) -> dict | None:
    """The claimed sharpest interval: required exactly when a sharpest constant is claimed certified."""
    if statement.sharpest is None or claimed != "proved":
        if raw is not None:
            raise CertificateError("sharpest must be null unless a sharpest constant is claimed certified")
        return None
    raw = _fields(raw, "sharpest", ("low", "high", "proved_at", "refuted_at"))
    return {key: _number(value, f"sharpest {key}") for key, value in raw.items()}


def _verdict(statement: Statement, verdicts: list, values: list, claimed: dict | None) -> tuple[str, dict | None]:
    """The one rule (module docstring, item 6)."""
    if statement.sharpest is None:
        return verdicts[0], None
    if verdicts != ["proved", "refuted"]:
        return "undecided", None
    good, bad = values
    low, high = min(good, bad), max(good, bad)
    if claimed is not None and claimed != {"low": low, "high": high, "proved_at": good, "refuted_at": bad}:
        raise _Failure("sharpest", f"the interval claimed is not the one its parts certify: [{low!r}, {high!r}]")
    return "proved", {"name": statement.sharpest, "low": low, "high": high, "proved_at": good, "refuted_at": bad}
