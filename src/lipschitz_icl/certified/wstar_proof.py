"""The ``w*`` proof and its check: the tests every step of a certified ``w*`` search passes, and
:func:`verify`, which re-derives from a proof's hints alone that every global minimiser of the ICL loss
``L(w)`` of ``M = w I`` over the search range :data:`W_SEARCH` lies in ``[low, high]``.

The search (:mod:`lipschitz_icl.certified.wstar`: a Newton start, a bracket widened until the slope's sign
changes, pieces halved until a test passes) decides *where* to look; this module decides *whether* what it
found is a proof.  The proof checker of the prover (:mod:`lipschitz_icl.prover.checker`) trusts this module
and the certified loss (:mod:`lipschitz_icl.certified.loss`), not the search.

**A proof** (:class:`WStarProof`, its JSON form :meth:`WStarProof.to_dict`) gives the bracket ``[low,
high]``, a window ``w1``, the accuracy ``rtol`` of the bracket's slope tests, and two walks of pieces: the
``right`` walk from ``high`` up to a cut or the range's end, the ``left`` walk from ``low`` down.  Every
number below is a ball of the certified loss (any certified class; ``n``, ``sigma``, ``L`` numbers or
intervals: then the statement holds at every point of the box).  What is checked, all of it:

1. ``U`` = the upper end of the ball of ``L(w1)``: a value the minimum does not exceed.
2. The bracket: ``L'(low) < 0 < L'(high)``.
3. Each piece ``[a, b]`` of a walk, starting where the previous one ended (the right walk at ``high``,
   going up; the left walk at ``low``, going down), by its kind:

   * ``excluded``: ``sigma^2 N(a) + a_1 Q(b) > U`` -- the loss exceeds ``U`` on the whole piece.  Theorems:
     ``N(w) = E[sum_i p_i^2]`` is nondecreasing in ``w`` (``d/dw sum_i p_i^2 = 2 Cov_p(p, t) >= 0``,
     Chebyshev's sum inequality, ``p_i`` increasing in ``t_i``) and at least ``1/n``; ``Q(w) = E[(sum_i p_i
     u_i)^2]``, ``u = 1 - t``, is nonincreasing (``d/dw sum_i p_i u_i = -Var_p(t) <= 0``, ``sum_i p_i u_i >=
     0``); the bias of a zonal kernel is at least ``a_1 Q`` (its ``l = 1`` Gegenbauer part is ``a_1 (Q +
     E[sum_i p_i^2 (1 - t_i^2)])``, every part ``>= 0``: :mod:`lipschitz_icl.certified.laplace`);
   * ``up`` (right walk) / ``down`` (left walk): the slope has the walk's sign on the whole piece, by
     Taylor's theorem at the centre (:meth:`Objective.shape`);
   * ``convex``: ``L'' > 0`` on the piece, allowed only when the slope at its inner end is known to have the
     walk's sign (the bracket's sign at the start, or a previous ``up``/``down``/``convex`` piece: after an
     ``excluded`` piece nothing is known);
   * the walk's last entry, ``cut``: on the right ``sigma^2 N(x) > U`` at the walk's end ``x`` (no minimiser
     beyond it), on the left ``sigma^2/n + a_1 Q(x) > U``; or ``end``: the walk reached the end of
     :data:`W_SEARCH`.

   So on the right of ``high``, ``L`` increases along each run of ``up``/``convex`` pieces from a point where
   it is ``> U`` or from ``high`` itself, and exceeds ``U`` on the excluded pieces and beyond the cut: every
   ``w > high`` has ``L(w) > min(L(high), U) >= min L``; the left side likewise.  Hence every global
   minimiser lies in ``[low, high]``.
4. The minimum loss is in ``[m, U]``, ``m`` the Taylor lower bound of ``L`` on ``[low, high]``
   (:func:`minimum_lower_bound`; a second derivative without a finite enclosure on the bracket fails the
   check: a NaN compares false both ways, and once passed for "not negative").

**A one-sided proof** (:class:`BoundProof`, checked by :func:`verify_bound`) shows ``w* <= B`` (side
``upper``) or ``w* >= B`` (``lower``) without locating ``w*``: ``U`` = the smaller of the upper ends of the
balls of ``L(B)`` and of ``L(anchor)`` (:func:`start_level`; any window is a value the minimum does not
exceed), and one walk from ``B`` outwards (up for ``upper``, down for ``lower``) checked as in item 3, its
first piece ``convex`` only when the slope at ``B`` has the walk's sign.  Every ``w`` beyond ``B`` then has
``L(w) > min(L(B), U) >= min L``: no global minimiser lies beyond ``B``.

A malformed proof (:func:`read_proof`, :func:`read_bound_proof`) and a failed test raise :class:`ProofError`
naming what failed.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

from flint import arb

from lipschitz_icl.certified import arithmetic, loss
from lipschitz_icl.validation import ParameterError

__all__ = [
    "W_SEARCH",
    "MAX_EVALUATIONS",
    "COARSE",
    "MAX_PIECES",
    "OutOfBudget",
    "ProofError",
    "Objective",
    "Piece",
    "WStarProof",
    "Verified",
    "read_proof",
    "verify",
    "BoundProof",
    "read_bound_proof",
    "verify_bound",
    "start_level",
    "excluded",
    "monotone",
    "convex",
    "cut",
    "minimum_lower_bound",
]

W_SEARCH = (1e-3, 1e8)  # the range over which w* is the global minimiser
MAX_EVALUATIONS = 400
COARSE = 1e-4  # accuracy of the piece and cut tests (certified whatever it is)
SPAN = 1.3  # a design covers its first window's range widened by this factor each way
MAX_PIECES = 4000  # pieces of one walk in a proof read from a file
KINDS = ("excluded", "up", "down", "convex")
RTOL_RANGE = (1e-14, 1e-2)
SUB_PIECE = 0.03  # widest relative sub-piece of a ball evaluation of the third derivative (third_bound)
THIRD_RTOL = 0.1  # quadrature target of a ball of the third derivative (Objective.third_ball): speed only.  The
# ball enters a proof only through the remainder of a Taylor bound; over a piece of w its width is the dependency on
# w, not the quadrature's error (affine, d = 3, 3% of w at n near 1e2, 1e4, 1e5: the same bound to 3-4 digits as at
# 1e-3, with 17-35% less work)


TIER_RTOL = (1e-4, 1e-6, 1e-10)  # a design's accuracy per tier of _tier (tier 2 plans at the request's own rtol;
# 1e-10 is what a tier-1 design refined by Objective._refine is built for)


def _tier(rtol: float) -> int:
    """The accuracy tier of a requested ``rtol``: 0 (``>= 1e-4``), 1 (``>= 1e-7``) or 2 (finer)."""
    return 0 if rtol >= 1e-4 else (1 if rtol >= 1e-7 else 2)


class OutOfBudget(Exception):
    """The time or evaluation budget is spent, or an evaluation is beyond the certified grid's budget (the
    message says which)."""


class ProofError(Exception):
    """A ``w*`` proof that is malformed or whose test fails (the message names it)."""


# ----------------------------------------------------------------------------- the objective
class Objective:
    """The loss of one problem (a certified kernel; ``n``, ``sigma``, ``L`` numbers or intervals) as certified
    balls, with the designs (grids) reused across evaluations and a budget of CPU seconds and evaluations
    (:class:`OutOfBudget` when spent)."""

    def __init__(self, kernel, n, sigma, L=None, *, seconds: float = 120.0, evaluations: int = MAX_EVALUATIONS):
        self.kernel, self.n, self.sigma, self.L = kernel, n, sigma, L
        self.deadline = time.process_time() + seconds  # CPU seconds: the same work decides the same way
        self.max_evaluations = evaluations
        self.evaluations = 0
        self.plans: dict = {}
        self.points: dict = {}
        self.values: dict = {}
        self.shapes: dict = {}
        self.thirds: dict = {}
        self.refine_first = False  # speed only: which shape of a piece the tests try first (_shown)
        self.span = (0.0, 0.0)
        n_lo = n[0] if isinstance(n, (tuple, list)) else n
        n_hi = n[1] if isinstance(n, (tuple, list)) else n
        self.n_range = (float(n_lo), float(n_hi))
        sig = sigma if isinstance(sigma, (tuple, list)) else (sigma, sigma)
        self.sigma_low = float(sig[0])
        scale = kernel.scale if L is None else _square(L)
        self.a1 = scale * kernel.first_coefficient()

    def _plan(self, order: int, w_lo: float, w_hi: float, rtol: float, want_q: bool):
        """A design for ``[w_lo, w_hi]`` at the accuracy tier of ``rtol`` (``>= 1e-4``, ``>= 1e-7``, finer),
        reused while the evaluations stay inside its range (:attr:`span` widens a new one)."""
        tier = _tier(rtol)
        rtol = TIER_RTOL[tier] if tier < 2 else rtol
        key = (order, want_q, tier)
        plan = self.plans.get(key)
        if plan is None or plan.w_lo > w_lo or plan.w_hi < w_hi:
            lo, hi = w_lo / SPAN, w_hi * SPAN
            if self.span[0]:
                lo, hi = min(lo, self.span[0]), max(hi, self.span[1])
            self.span = (0.0, 0.0)
            try:
                plan = loss.design(self.kernel, (lo, hi), self.n_range, order=order, rtol=rtol, want_q=want_q)
            except ParameterError:
                plan = loss.design(self.kernel, (w_lo, w_hi), self.n_range, order=order, rtol=rtol, want_q=want_q)
            self.plans[key] = plan
        return plan

    def at(
        self, w, orders: tuple = (0,), rtol: float = COARSE, want_q: bool = False, splits: int = 6
    ) -> loss.LossEnclosure:
        """The certified enclosure at ``w`` (a number or a ``(lo, hi)`` piece).  Where a coarse design's ball of
        the loss holds 0 (the loss is positive: the quadrature's error bound has swamped the value, as the
        8-point theta rule does for relu at ``d = 3``, ``n = 1000`` on a design for ``w`` in ``[13.1, 22.1]``:
        ``+/- 1.03`` against a loss of ``0.0052``), the design of the next accuracy tier over the evaluation's
        own range replaces it, and the evaluation is made again (one more evaluation of the budget).  Speed
        only: every ball is an enclosure; the finer one is the one a test can use."""
        result = self._enclose(w, orders, rtol, want_q, splits)
        if not result.loss > 0 and self._refine(max(orders), w, rtol, want_q):
            result = self._enclose(w, orders, rtol, want_q, splits)
        return result

    def _refine(self, order: int, w, rtol: float, want_q: bool) -> bool:
        """Replace the design of ``rtol``'s tier by one of the next tier over ``w``'s own range (:meth:`at`);
        False where there is no finer tier or its grid is beyond the certified budget."""
        tier = _tier(rtol)
        if tier >= 2:
            return False
        lo, hi = (w, w) if not isinstance(w, tuple) else w
        try:
            plan = loss.design(
                self.kernel, (lo / SPAN, hi * SPAN), self.n_range, order=order, rtol=TIER_RTOL[tier + 1], want_q=want_q
            )
        except ParameterError:
            return False
        self.plans[(order, want_q, tier)] = plan
        return True

    def _enclose(self, w, orders: tuple, rtol: float, want_q: bool, splits: int) -> loss.LossEnclosure:
        """One evaluation on the design of :meth:`_plan` (:class:`OutOfBudget` past the budget)."""
        if self.evaluations >= self.max_evaluations or time.process_time() > self.deadline:
            raise OutOfBudget(f"out of budget after {self.evaluations} evaluations")
        self.evaluations += 1
        lo, hi = (w, w) if not isinstance(w, tuple) else w
        try:
            plan = self._plan(max(orders), lo, hi, rtol, want_q)
            return loss.enclose(
                self.kernel,
                w,
                self.n,
                self.sigma,
                self.L,
                orders=orders,
                rtol=rtol,
                want_q=want_q,
                plan=plan,
                splits=splits,
            )
        except ParameterError as exc:
            raise OutOfBudget(f"an evaluation at w = {w} is beyond the certified budget: {exc}") from None

    def slope(self, w, rtol: float = COARSE) -> arb:
        return self.at(w, (1,), rtol).derivative(1).loss

    def point(self, c: float) -> loss.LossEnclosure:
        """The value, ``q`` and the first two derivatives at ``c`` (cached)."""
        if c not in self.points:
            self.points[c] = self.at(c, (0, 1, 2), want_q=True)
        return self.points[c]

    def value(self, x: float) -> loss.LossEnclosure:
        """The value and ``q`` at ``x`` (cached; a point with derivatives serves too)."""
        if x in self.points:
            return self.points[x]
        if x not in self.values:
            self.values[x] = self.at(x, (0,), want_q=True)
        return self.values[x]

    def upper_value(self, w1: float) -> arb:
        """``U``: the upper end of the ball of ``L(w1)`` (fine accuracy), a value the minimum does not exceed."""
        return arb(self.at(w1, rtol=1e-10).loss.upper())

    def shape(self, a: float, b: float, refined: bool = False) -> tuple:
        """``(low, high, curvature)``: bounds of the slope on ``[a, b]`` and a lower bound of the second
        derivative there, by Taylor's theorem at the centre ``c`` with the remainder from a bound ``T`` of the
        third derivative over the piece (:meth:`third_bound`): the slope at ``c + z`` lies in ``L1 + L2 z +
        T z^2/2`` and the second derivative in ``L2 + T z`` (``|z| <= r``, ``r`` the larger distance from ``c`` to
        an end, in ball arithmetic; ``L1``, ``L2`` the first and second derivatives at ``c``).  ``T`` is one ball
        evaluation over the piece, or with ``refined`` :meth:`third_bound` (a test that fails with the first
        asks again refined).  Cached: the tests of one piece (``monotone``, ``convex``) share it."""
        if (a, b, refined) in self.shapes:
            return self.shapes[(a, b, refined)]
        c = 0.5 * (a + b)  # a double: the loss is enclosed at exactly this point
        r = _half_width(a, b, c)
        point = self.point(c)
        first, second = point.derivative(1).loss, point.derivative(2).loss
        third = self.third_bound(a, b) if refined else self.third_ball(a, b)
        spread = arb(abs(second).abs_upper()) * r + third * r * r / 2
        self.shapes[(a, b, refined)] = (first - spread, first + spread, second - third * r)
        return self.shapes[(a, b, refined)]

    def third_ball(self, a: float, b: float) -> arb:
        """An upper bound of ``|d^3 L/dw^3|`` on ``[a, b]`` from one ball evaluation over the piece (cached)."""
        if (a, b) not in self.thirds:
            ball = self.at((a, b), (1, 2, 3), rtol=THIRD_RTOL).derivative(3).loss
            self.thirds[(a, b)] = arb(abs(ball).abs_upper())
        return self.thirds[(a, b)]

    def third_bound(self, a: float, b: float) -> arb:
        """A finer upper bound of ``|d^3 L/dw^3|`` on ``[a, b]``: the largest of the balls (:meth:`third_ball`)
        over sub-pieces of relative width at most :data:`SUB_PIECE` covering ``[a, b]``.  A ball over a wide
        piece of ``w`` can overestimate by orders of magnitude (at ``d = 3``, ``n = 116``, ``w = 6.5`` it is
        2.4e-3 over 4%, 1e4 over 6%, against a third derivative of about 2e-4)."""
        count = max(1, math.ceil(math.log(b / a) / math.log1p(SUB_PIECE)))
        edges = [a] + [a * (b / a) ** (k / count) for k in range(1, count)] + [b]
        bound = arb(0)
        for lo, hi in itertools.pairwise(edges):
            bound = bound.max(self.third_ball(lo, hi))
        return bound

    def noise_floor(self, x: float) -> arb:
        """A lower bound of the noise part (so of ``L``) at every ``w >= x``: ``sigma^2 N(x)`` (``N``
        nondecreasing)."""
        return self.value(x).noise

    def q_floor(self, x: float) -> arb:
        """A lower bound of the bias at every ``w <= x``: ``a_1 Q(x)`` (``Q`` nonincreasing)."""
        q = self.value(x).q
        if q is None:
            raise ValueError("the bias floor needs Q (the objective evaluates with want_q)")
        return self.a1 * q.nonnegative_part()

    def bias_floor(self, x: float) -> arb:
        """A lower bound of ``L`` at every ``w <= x``: ``sigma^2/n + a_1 Q(x)`` (``N >= 1/n``)."""
        return arithmetic.exact(self.sigma_low) ** 2 / self.n_range[1] + self.q_floor(x)


def _square(L) -> arb:
    ball = arithmetic.interval(*L) if isinstance(L, (tuple, list)) else arithmetic.exact(L)
    return ball * ball


def _half_width(a: float, b: float, c: float) -> arb:
    """The larger distance from the double ``c`` to ``a`` and to ``b``, as an upper bound in ball arithmetic
    (``0.5 (b - a)`` rounded in doubles could fall short of it)."""
    return arb((arb(b) - arb(c)).union(arb(c) - arb(a)).abs_upper())


# ----------------------------------------------------------------------------- the tests of a step
def excluded(f: Objective, a: float, b: float, U: arb) -> bool:
    """``sigma^2 N(a) + a_1 Q(b) > U``: the loss exceeds ``U`` on all of ``[a, b]`` (module docstring)."""
    return bool(f.noise_floor(a) + f.q_floor(b) > U)


def _shown(f: Objective, a: float, b: float, shows) -> bool:
    """Whether ``shows(shape)`` holds for the shape of ``[a, b]`` (:meth:`Objective.shape`): plain, then
    refined; once a refined shape has passed where the plain one failed (``f.refine_first``, which a caller may
    also set from an earlier objective), refined first, then plain.  Either shape is a proof; the order is speed
    only.  Over a piece wider than :data:`SUB_PIECE` the plain ball is cheap where it is tight (affine, d = 2, n
    in [1e5, 1.3e5]: the plain-first walks take 0.6 times the refined-first ones' CPU time) and wasted where it
    explodes (d = 3, n in [100, 133], 12% of w: 2 s for a bound of 1e110, against 4 x 0.2 s)."""
    if f.refine_first:
        if shows(f.shape(a, b, True)):
            return True
        return bool(b > a * (1 + SUB_PIECE) and shows(f.shape(a, b, False)))
    if shows(f.shape(a, b, False)):
        return True
    if shows(f.shape(a, b, True)):
        f.refine_first = True
        return True
    return False


def monotone(f: Objective, a: float, b: float, direction: int) -> bool:
    """The slope has the sign ``direction`` (``+1``: ``up``; ``-1``: ``down``) on all of ``[a, b]``."""
    return _shown(f, a, b, lambda shape: bool(shape[0] > 0) if direction > 0 else bool(shape[1] < 0))


def convex(f: Objective, a: float, b: float) -> bool:
    """``L'' > 0`` on all of ``[a, b]``."""
    return _shown(f, a, b, lambda shape: bool(shape[2] > 0))


def cut(f: Objective, x: float, direction: int, U: arb) -> bool:
    """No minimiser beyond ``x``: ``sigma^2 N(x) > U`` (``direction = +1``, every ``w >= x``) or ``sigma^2/n +
    a_1 Q(x) > U`` (``-1``, every ``w <= x``)."""
    return bool(f.noise_floor(x) > U) if direction > 0 else bool(f.bias_floor(x) > U)


def minimum_lower_bound(f: Objective, low: float, high: float) -> arb:
    """A ball below every ``L(w)``, ``w`` in ``[low, high]``, by Taylor's theorem at the centre ``c``:
    ``L(w) >= L(c) - |L'(c)| h + min(0, m) h^2/2`` with ``h`` the larger distance from ``c`` to an end and ``m``
    a lower bound of ``L''`` on the piece (second order: near the minimum ``L'(c)`` is small, so the bound is
    far tighter than the piece's own ball)."""
    c = 0.5 * (low + high)
    h = _half_width(low, high, c)
    centre = f.at(c, (0, 1), rtol=1e-10)
    second = f.at((low, high), (2,), rtol=1e-10).derivative(2).loss
    if not second.is_finite():  # fail closed: a NaN would compare false both ways
        raise ProofError(f"the second derivative on [{low!r}, {high!r}] has no finite enclosure")
    curvature = second.lower()
    m = arb(0) if curvature >= 0 else curvature
    slope = abs(centre.derivative(1).loss).abs_upper()
    return centre.loss.lower() - slope * h + m * h * h / 2


# ----------------------------------------------------------------------------- a proof and its check
@dataclass(frozen=True)
class Piece:
    """One entry of a walk: ``[a, b]`` and its kind (:data:`KINDS`, or ``cut``/``end`` as the last entry; a
    right cut has ``b = inf``, a left cut ``a = 0``, an end ``a = b``)."""

    a: float
    b: float
    kind: str

    def to_list(self) -> list:
        """JSON-ready: an infinite end is written ``"inf"``."""
        return [self.a, self.b if math.isfinite(self.b) else "inf", self.kind]


@dataclass(frozen=True)
class WStarProof:
    """The hints of a ``w*`` proof (module docstring): the bracket, ``w1`` (for ``U``), the bracket tests'
    accuracy, and the two walks in walk order."""

    low: float
    high: float
    w1: float
    rtol: float
    left: tuple[Piece, ...]
    right: tuple[Piece, ...]

    def to_dict(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "w1": self.w1,
            "rtol": self.rtol,
            "left": [piece.to_list() for piece in self.left],
            "right": [piece.to_list() for piece in self.right],
        }


@dataclass(frozen=True)
class Verified:
    """What a checked proof shows: every global minimiser in ``[low, high]``, the minimum loss in ``[loss_low,
    loss_high]`` (balls)."""

    low: float
    high: float
    loss_low: arb
    loss_high: arb


def _finite(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProofError(f"{where} must be a finite number")
    return float(value)


def _piece(raw, where: str) -> Piece:
    if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[2], str)):
        raise ProofError(f"{where} must be a list [a, b, kind]")
    if raw[2] not in (*KINDS, "cut", "end"):
        raise ProofError(f"{where}'s kind must be one of {', '.join((*KINDS, 'cut', 'end'))}")
    a = _finite(raw[0], f"{where}'s a")
    b = math.inf if raw[1] == "inf" else _finite(raw[1], f"{where}'s b")
    return Piece(a, b, raw[2])


def _read_walk(entries, name: str) -> tuple[Piece, ...]:
    """The pieces of a walk's JSON form (``name``: how errors call it, e.g. "the left walk")."""
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_PIECES:
        raise ProofError(f"{name} must be a list of 1 to {MAX_PIECES} pieces")
    return tuple(_piece(entry, f"a piece of {name}") for entry in entries)


def read_proof(raw) -> WStarProof:
    """The proof of its JSON form (:meth:`WStarProof.to_dict`); :class:`ProofError` names what is malformed."""
    keys = ("low", "high", "w1", "rtol", "left", "right")
    if not isinstance(raw, dict) or set(raw) != set(keys):
        raise ProofError(f"a w* proof is an object with exactly the keys {', '.join(keys)}")
    walks = {}
    for side in ("left", "right"):
        walks[side] = _read_walk(raw[side], f"the {side} walk")
    low, high, w1 = (_finite(raw[key], f"the proof's {key}") for key in ("low", "high", "w1"))
    rtol = _finite(raw["rtol"], "the proof's rtol")
    if not W_SEARCH[0] < low < high < W_SEARCH[1]:
        raise ProofError(f"the bracket must satisfy {W_SEARCH[0]:g} < low < high < {W_SEARCH[1]:g}")
    if not W_SEARCH[0] <= w1 <= W_SEARCH[1]:
        raise ProofError(f"w1 must lie in the search range [{W_SEARCH[0]:g}, {W_SEARCH[1]:g}]")
    if not RTOL_RANGE[0] <= rtol <= RTOL_RANGE[1]:
        raise ProofError(f"rtol must lie in [{RTOL_RANGE[0]:g}, {RTOL_RANGE[1]:g}]")
    return WStarProof(low, high, w1, rtol, walks["left"], walks["right"])


def _check_walk(f: Objective, start: float, direction: int, pieces: tuple, U: arb, known: bool = True) -> None:
    """The walk from ``start`` (module docstring, item 3); :class:`ProofError` at the first piece that fails.
    ``known``: the slope at ``start`` has the walk's sign (a two-sided proof's bracket shows it)."""
    side = "right" if direction > 0 else "left"
    end = W_SEARCH[1] if direction > 0 else W_SEARCH[0]
    x = start
    for i, piece in enumerate(pieces):
        where = f"the {side} walk's piece {i} [{piece.a!r}, {piece.b!r}] ({piece.kind})"
        last = i == len(pieces) - 1
        if piece.kind in ("cut", "end"):
            if not last:
                raise ProofError(f"{where}: a walk ends at its {piece.kind}")
            if piece.kind == "end":
                if not (x == end and piece.a == piece.b == x):
                    raise ProofError(f"{where}: an end must be the search range's end {end:g}, where the walk is")
                return
            beyond = (piece.a == x and piece.b == math.inf) if direction > 0 else (piece.a == 0 and piece.b == x)
            if not beyond:
                raise ProofError(f"{where}: a cut must start where the walk is and reach past the search range")
            if not cut(f, x, direction, U):
                raise ProofError(f"{where}: the floor at the cut does not exceed U")
            return
        if piece.kind not in KINDS or piece.kind == ("down" if direction > 0 else "up"):
            raise ProofError(f"{where}: not a kind of the {side} walk")
        inner, outer = (piece.a, piece.b) if direction > 0 else (piece.b, piece.a)
        if inner != x or not (piece.a < piece.b) or not (W_SEARCH[0] <= piece.a and piece.b <= W_SEARCH[1]):
            raise ProofError(f"{where}: pieces must follow on from {x!r}, inside the search range")
        if piece.kind == "excluded":
            ok = excluded(f, piece.a, piece.b, U)
        elif piece.kind == "convex":
            if not known:
                raise ProofError(f"{where}: a convex piece needs the slope's sign at its inner end")
            ok = convex(f, piece.a, piece.b)
        else:
            ok = monotone(f, piece.a, piece.b, direction)
        if not ok:
            raise ProofError(f"{where}: its test fails on fresh enclosures")
        known = piece.kind != "excluded"
        x = outer
    raise ProofError(f"the {side} walk stops at {x!r} without a cut or the search range's end")


def verify(f: Objective, proof: WStarProof) -> Verified:
    """Check ``proof`` on the problem of ``f`` (module docstring); :class:`ProofError` names the first failure
    (a spent budget of ``f`` included)."""
    try:
        U = f.upper_value(proof.w1)
        if not (f.slope(proof.low, proof.rtol) < 0 and f.slope(proof.high, proof.rtol) > 0):
            raise ProofError("the bracket's slopes do not have the signs L'(low) < 0 < L'(high)")
        _check_walk(f, proof.high, 1, proof.right, U)
        _check_walk(f, proof.low, -1, proof.left, U)
        lowest = minimum_lower_bound(f, proof.low, proof.high)
    except OutOfBudget as exc:
        raise ProofError(str(exc)) from None
    return Verified(proof.low, proof.high, lowest, U)


# ----------------------------------------------------------------------------- a one-sided proof and its check
SIDES = ("upper", "lower")


@dataclass(frozen=True)
class BoundProof:
    """The hints of a one-sided proof (module docstring): ``w* <= bound`` (``side = "upper"``: the walk goes up
    from ``bound``) or ``w* >= bound`` (``"lower"``: down), ``anchor`` a window whose loss may lower ``U``
    (None: ``U`` from ``L(bound)`` alone), and the walk in walk order."""

    bound: float
    side: str
    anchor: float | None
    walk: tuple[Piece, ...]

    def to_dict(self) -> dict:
        return {
            "bound": self.bound,
            "side": self.side,
            "anchor": self.anchor,
            "walk": [piece.to_list() for piece in self.walk],
        }


def read_bound_proof(raw) -> BoundProof:
    """The one-sided proof of its JSON form (:meth:`BoundProof.to_dict`); :class:`ProofError` names what is
    malformed."""
    keys = ("bound", "side", "anchor", "walk")
    if not isinstance(raw, dict) or set(raw) != set(keys):
        raise ProofError(f"a one-sided w* proof is an object with exactly the keys {', '.join(keys)}")
    if raw["side"] not in SIDES:
        raise ProofError("a one-sided proof's side must be 'upper' or 'lower'")
    bound = _finite(raw["bound"], "the proof's bound")
    anchor = None if raw["anchor"] is None else _finite(raw["anchor"], "the proof's anchor")
    for value, name in ((bound, "bound"), (anchor, "anchor")):
        if value is not None and not W_SEARCH[0] < value < W_SEARCH[1]:
            raise ProofError(f"the proof's {name} must lie inside the search range ({W_SEARCH[0]:g}, {W_SEARCH[1]:g})")
    walk = _read_walk(raw["walk"], "the walk")
    return BoundProof(bound, raw["side"], anchor, walk)


def start_level(f: Objective, bound: float, anchor: float | None) -> tuple[arb, int]:
    """``(U, sign)`` of a one-sided proof at ``bound``: ``U`` the smaller of the upper ends of the balls of
    ``L(bound)`` and ``L(anchor)`` (a value the minimum does not exceed, at every point of ``f``'s box), and
    the certain sign of the slope at ``bound`` (0 when uncertain).  One source for the search and the check."""
    at = f.point(bound)
    U = arb(at.loss.upper())
    if anchor is not None:
        U = U.min(arb(f.value(anchor).loss.upper()))
    slope = at.derivative(1).loss
    sign = 1 if slope > 0 else (-1 if slope < 0 else 0)
    return U, sign


def verify_bound(f: Objective, proof: BoundProof) -> None:
    """Check ``proof`` on the problem of ``f`` (module docstring): every global minimiser lies at or below
    ``proof.bound`` (side ``upper``) or at or above it (``lower``), at every point of ``f``'s box;
    :class:`ProofError` names the first failure (a spent budget of ``f`` included)."""
    direction = 1 if proof.side == "upper" else -1
    try:
        U, sign = start_level(f, proof.bound, proof.anchor)
        _check_walk(f, proof.bound, direction, proof.walk, U, known=sign == direction)
    except OutOfBudget as exc:
        raise ProofError(str(exc)) from None
