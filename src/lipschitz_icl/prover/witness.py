"""The search's side of a witnessed quantity (``w_star``, ``icl_error``): the ``w*`` proof at a point, found by the
certified ``w*`` search (:func:`lipschitz_icl.certified.wstar.certified_wstar`) and written into the certificate
as the point's witness.

The trusted table (:mod:`lipschitz_icl.prover.trusted`) never searches: it checks a witness it is given
(:meth:`~lipschitz_icl.prover.trusted.Quantity.value_at`).  The checker (:mod:`lipschitz_icl.prover.checker`)
does not import this module; it checks the witnesses the certificate carries.  The search takes the ball the
``w*`` search proved (each step of which is a test of :mod:`lipschitz_icl.certified.wstar_proof`) rather than
checking its own proof a second time; the certificate's recheck checks it.

A certificate entry of a witness: ``{"point": {d, n, L, sigma}, "proof": <the w* proof's JSON form>}``
(:meth:`lipschitz_icl.certified.wstar_proof.WStarProof.to_dict`).

A statement ``w_star <= B`` (or ``>=``) on a box whose ``n`` is an interval (where no ``w*`` at a point
encloses the box: ``w*`` has no monotonicity in ``n`` the table could use) is first tried by a one-sided proof
(:func:`one_sided`: :func:`lipschitz_icl.certified.wstar.wstar_bound` from the bound's end outwards, with
``n``, ``sigma`` and ``L`` intervals), which locates no ``w*``: the leaf carries the proof (``"one_sided"``),
checked by :func:`lipschitz_icl.prover.trusted.one_sided_holds`.  A box at one ``n`` keeps its witnesses.
Planning (speed only): for the affine class an attempt that the exact method's float ``w*`` at a point of the
box already contradicts is not made (:func:`_may_hold`); the box is split as after a failed attempt.  A walk
whose tests had to bound the third derivative over sub-pieces (``refine_first``,
:func:`lipschitz_icl.certified.wstar_proof.monotone`) passes that on to the next box's walk of the same class
and dimension (:data:`_REFINE_FIRST`; a walk passes on only what it learned itself, so the choice lapses after
one box unless learned again: at d = 3 and n near 100 every plain ball over a wide piece explodes, at d = 2 and
n near 1e5 the refined shapes cost 1.5 times the plain ones).
"""

from __future__ import annotations

import functools
import math

from flint import arb

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.prover.trusted import NoEnclosure, Point, Quantity, Ranges
from lipschitz_icl.validation import ParameterError

__all__ = ["enclose", "point_value", "one_sided", "ONE_SIDED_SECONDS"]

ONE_SIDED_SECONDS = 60.0  # CPU budget of one box's one-sided proof (then the box goes on as before)
_REFINE_FIRST: dict = {}  # planning: (class, d) -> whether the last walk learned to try refined shapes first


@functools.lru_cache(maxsize=256)
def _search(task: str, d: int, n: int, sigma: float, L: float):
    from lipschitz_icl.certified.wstar import certified_wstar

    return certified_wstar(d, n, sigma, L, task=task)


def point_value(quantity: Quantity, point: Point) -> tuple[arb, dict]:
    """The ball of the witnessed ``quantity`` (bound to its class) at ``point`` and the certificate entry of its
    witness; :class:`~lipschitz_icl.prover.trusted.NoEnclosure` where the ``w*`` search was refused (the
    certified grid's budget) or did not close."""
    if quantity.task is None:
        raise NoEnclosure(None, f"{quantity.name} is evaluated for a class")
    try:
        result = _search(quantity.task, point["d"], point["n"], float(point["sigma"]), float(point["L"]))
    except ParameterError as exc:
        raise NoEnclosure(None, f"the certified w* was refused at {dict(point)}: {exc}") from None
    if not result.decided or result.proof is None:
        raise NoEnclosure(None, f"the certified w* did not close at {dict(point)}: {result.info.get('reason')}")
    if quantity.name == "w_star":
        ball = arithmetic.interval(result.low, result.high)
    else:
        ball = arithmetic.interval(result.loss_low, result.loss_high)
    return ball, {"point": dict(point), "proof": result.proof.to_dict()}


def enclose(quantity: Quantity, box: Ranges) -> tuple[tuple[arb, arb], list[dict]]:
    """:meth:`~lipschitz_icl.prover.trusted.Quantity.enclose` of a witnessed quantity, its witnesses found by
    the search: the balls at the two extremes of ``box`` and the certificate entries of their witnesses."""
    smallest, largest = quantity.extremes(box)
    low, first = point_value(quantity, smallest)
    if smallest == largest:
        return (low, low), [first]
    high, second = point_value(quantity, largest)
    return (low, high), [first, second]


def one_sided(quantity: Quantity, box: Ranges, relation: str, bound: arb) -> tuple[str, dict | None]:
    """``("proved", proof)``: the JSON form of a one-sided ``w*`` proof that ``w_star <relation> bound`` at every
    point of ``box`` (one ``d``; ``n`` an interval from 5 up; ``sigma``, ``L`` points or intervals), from the
    window at the bound's certain end (``low(bound)`` for ``<=``, ``high(bound)`` for ``>=``).  Else
    ``("opposite", None)`` when the opposite one-sided statement beyond the bound's other end is proved on the
    whole box (``w* >= high(bound)`` for ``<=``: every point of the box is then a counterexample, which the
    search certifies at one point with its witness), or ``("undecided", None)``: a box at one ``n`` (module
    docstring), no window inside the search range, or no walk closing within :data:`ONE_SIDED_SECONDS`."""
    from lipschitz_icl.certified.loss import kernel_of
    from lipschitz_icl.certified.wstar import wstar_bound
    from lipschitz_icl.certified.wstar_proof import W_SEARCH

    if quantity.name != "w_star" or quantity.task is None:
        return "undecided", None
    d_lo, d_hi = box["d"]
    n_lo, n_hi = box["n"]
    if d_lo != d_hi or n_lo == n_hi or n_lo < 5:
        return "undecided", None
    n, sigma, L = (lo if lo == hi else (lo, hi) for lo, hi in (box["n"], box["sigma"], box["L"]))
    kernel = kernel_of(quantity.task, d_lo, 1.0)
    corners = None  # the float w* at two corners, computed once a window is inside the search range
    ends = (arithmetic.low(bound), arithmetic.high(bound))
    sides = ("upper", "lower") if relation == "<=" else ("lower", "upper")
    attempts = [
        ("proved", ends[0] if relation == "<=" else ends[1], sides[0]),
        ("opposite", ends[1] if relation == "<=" else ends[0], sides[1]),
    ]
    for outcome, window, side in attempts:
        if not W_SEARCH[0] < window < W_SEARCH[1]:
            continue
        if corners is None:
            corners = _corner_wstars(quantity.task, d_lo, box)
        if not _may_hold(side, window, corners):
            continue
        learned = _REFINE_FIRST.get((quantity.task, d_lo), False)
        try:
            result = wstar_bound(
                kernel, n, sigma, L, window, side, refute=False, seconds=ONE_SIDED_SECONDS, refine_first=learned
            )
        except ParameterError:  # beyond the certified grid's budget
            continue
        _REFINE_FIRST[(quantity.task, d_lo)] = bool(result.info.get("refine_first", False))
        if result.outcome == "proved" and result.proof is not None:
            return outcome, result.proof.to_dict() if outcome == "proved" else None
    return "undecided", None


PLAN_RTOL = 1e-4  # planning: a float w* beyond a window by more than this share skips the attempt (_may_hold)


def _may_hold(side: str, window: float, corners: list) -> bool:
    """Whether a one-sided attempt ``w* <= window`` (``side="upper"``) or ``w* >= window`` (``"lower"``) on a box
    can hold, judged by the float ``w*`` at two points of the box (``corners``): a point where ``w*`` lies beyond
    the window by more than :data:`PLAN_RTOL` (the exact method's float ``w*`` has a stated accuracy of about
    3e-6) is a point where the statement is false, so no proof of it can close.  Planning only (it saves the
    attempt's seconds, never decides): a skipped box is split, as an attempt that failed would be; a skip in
    error could only leave a box undecided, never prove one."""
    if side == "upper":
        return all(w <= window * (1 + PLAN_RTOL) for w in corners)
    return all(w >= window * (1 - PLAN_RTOL) for w in corners)


def _corner_wstars(task: str, d: int, box: Ranges) -> list:
    """The float ``w*`` (exact method) at the two corners of ``box`` where it is largest and smallest if it grows
    with ``n`` and ``L / sigma`` (``(n_hi, sigma_lo, L_hi)`` and ``(n_lo, sigma_hi, L_lo)``); points of the box
    either way, which is all :func:`_may_hold` needs.  Empty for a class without a cheap float ``w*`` (the
    affine class's exact method takes about 0.1 s; relu's 0.3-1 s, about as long as an attempt)."""
    if task != "affine":
        return []
    (n_lo, n_hi), (s_lo, s_hi), (L_lo, L_hi) = box["n"], box["sigma"], box["L"]
    if n_lo != int(n_lo) or n_hi != int(n_hi):  # a real range of n: its ends are no context sizes
        return []
    found = [
        _float_wstar(task, d, int(n_hi), float(s_lo), float(L_hi)),
        _float_wstar(task, d, int(n_lo), float(s_hi), float(L_lo)),
    ]
    return [w for w in found if w is not None]


@functools.lru_cache(maxsize=1024)
def _float_wstar(task: str, d: int, n: int, sigma: float, L: float) -> float | None:
    """The exact method's float ``w*`` at one point (a plan, not a result); None where the method refuses it or
    its search ended at a bound (then the float is only a one-sided bound of ``w*``)."""
    from lipschitz_icl.optimum import wstar_exact
    from lipschitz_icl.problem import make_problem

    try:
        found = wstar_exact(make_problem(task, d, n, L, sigma))
    except (ParameterError, ArithmeticError, ValueError):  # a plan never stops the prover: no plan then
        return None
    value = float(found.w_star.value)
    # at a search or budget bound the float is a one-sided bound of w*, not w*: no plan from it
    return value if math.isfinite(value) and not found.inconclusive else None
