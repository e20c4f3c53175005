"""Certified optimal window ``w*``: an interval proved to hold every global minimiser of the ICL loss ``L(w)`` of
``M = w I`` over the search range ``[1e-3, 1e8]`` (:func:`certified_wstar`), and one-sided statements ``w* <= B``
or ``w* >= B`` proved without locating ``w*`` (:func:`wstar_bound`).

The search decides *where* to look; what makes a proof is :mod:`lipschitz_icl.certified.wstar_proof` (the
tests each step passes, the theorems behind them, and :func:`~lipschitz_icl.certified.wstar_proof.verify`, which
checks a two-sided proof from its hints alone).  Every number is a ball of :mod:`lipschitz_icl.certified.loss`
(any certified class; ``n``, ``sigma``, ``L`` numbers or intervals: then the statement holds at every point of
the box, ``w*`` being the minimiser at that point).

1. ``w* <= B`` (:func:`wstar_bound`, ``side="upper"``): with ``U = L(B)``, pieces from ``B`` upwards, each
   *up*, *convex* (continuing a known sign) or *excluded* (the monotone floors exceed ``U``), to a *cut*
   (``sigma^2 N(a) > U``: nothing beyond ``a``): every ``w > B`` has ``L(w) > L(B) >= min L``.  ``w* >= B``:
   *down* pieces from ``B`` downwards to the left cut (or the search range's end).  The statement is
   *refuted* by the opposite one-sided proof at ``B`` itself (``w* > B`` proved), and otherwise *undecided*.
2. Two-sided (:func:`certified_wstar`): a Newton step on the certified ``L'``, ``L''`` from a float guess
   gives ``w1``; ``L'(w1 (1 - delta)) < 0 < L'(w1 (1 + delta))`` brackets a zero of ``L'`` (``delta`` doubled
   from half the relative width until the signs are certain); walks from the bracket outwards up to the two
   cuts with ``U = L(w1)`` prove that every global minimiser lies in ``[w1 (1 - delta), w1 (1 + delta)]``, and
   the minimum is at least the Taylor lower bound of ``L`` over it and at most ``U``.  The result carries the
   proof (:class:`~lipschitz_icl.certified.wstar_proof.WStarProof`) for a checker.

Budget: a search is refused up front (a :class:`~lipschitz_icl.validation.ParameterError` from the loss's
budget, naming it) when one evaluation near the guess is beyond the certified grid's budget, and stops as
undecided (never proved) after ``seconds`` of the process's CPU time or :data:`MAX_EVALUATIONS`.  CPU time, not
the wall clock: the budget counts the search's own work, so the same search decides the same way on a busy
machine (a wall-clock deadline left ``wstar --task affine --d 3 --n 100 --method certified``, 15 CPU seconds,
undecided when other processes slowed it four times).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from flint import arb

from lipschitz_icl.certified import arithmetic, kernels, loss
from lipschitz_icl.certified.wstar_proof import (
    MAX_EVALUATIONS,
    W_SEARCH,
    BoundProof,
    Objective,
    OutOfBudget,
    Piece,
    ProofError,
    WStarProof,
    convex,
    cut,
    excluded,
    minimum_lower_bound,
    monotone,
    start_level,
)
from lipschitz_icl.validation import ParameterError

__all__ = [
    "WStarEnclosure",
    "WStarBound",
    "certified_wstar",
    "problem_wstar",
    "wstar_bound",
    "W_SEARCH",
    "MAX_EVALUATIONS",
]

FIRST_PIECE = 0.05  # first relative width of a piece (then 1.5 times wider after a success, halved after a failure)
MIN_PIECE = 1e-7
MAX_PIECE = 0.12  # widest piece (relative): beyond it the ball of the third derivative grows past use


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class WStarEnclosure:
    """``[low, high]`` proved to hold every global minimiser over the search range (``decided``), with the
    minimum loss in ``[loss_low, loss_high]`` and the ``proof`` (its hints, for a checker); when not
    ``decided`` the minimiser interval is the whole range (``0, inf``) and the loss interval what is certain:
    ``[sigma^2/n, U]`` (``N >= 1/n``; ``U`` an upper bound of ``L`` at a window, or ``inf`` when none was
    computed)."""

    low: float
    high: float
    guess: float
    decided: bool
    loss_low: float
    loss_high: float
    info: dict = field(default_factory=dict)
    proof: WStarProof | None = None  # the hints a checker verifies (decided results only)

    def to_dict(self) -> dict:
        if self.decided:
            w_star = math.sqrt(self.low * self.high)
            loss_value = 0.5 * (self.loss_low + self.loss_high)
        else:
            w_star = self.guess
            loss_value = self.loss_high if math.isfinite(self.loss_high) else self.loss_low
        return {
            "w_star": w_star,
            "w_star_low": self.low,
            "w_star_high": self.high,
            "ci_low": self.low,
            "ci_high": self.high,
            "loss": loss_value,
            "loss_low": self.loss_low,
            "loss_high": self.loss_high,
            "method": "certified",
            "guess": self.guess,
            "decided": self.decided,
            **self.info,
        }


@dataclass(frozen=True)
class WStarBound:
    """The one-sided statement ``w* <= bound`` (``side = "upper"``) or ``w* >= bound`` (``"lower"``):
    ``outcome`` is ``"proved"``, ``"refuted"`` (the opposite strict statement proved) or ``"undecided"``;
    ``pieces``: what the proof consists of, ``(a, b, kind)`` (kinds ``up``, ``down``, ``convex``, ``excluded``,
    then ``cut`` or ``end``); ``proof``: the one-sided proof of a proved statement, for a checker
    (:func:`lipschitz_icl.certified.wstar_proof.verify_bound`)."""

    side: str
    bound: float
    outcome: str
    reason: str = ""
    pieces: tuple = ()
    info: dict = field(default_factory=dict)
    proof: BoundProof | None = None  # the hints a checker verifies (proved results only)


# ----------------------------------------------------------------------------- walks between a point and a cut
def _walk(f: Objective, start: float, direction: int, sign_at_start: int, U: arb, pieces: list) -> str | None:
    """Show that no global minimiser lies beyond ``start`` (``direction = +1``: in ``(start, 1e8]``; ``-1``: in
    ``[1e-3, start)``), piece by piece, each piece passing one test of :mod:`lipschitz_icl.certified.wstar_proof`
    (*excluded*, *up*/*down*, or *convex* continuing a sign known at its inner end), until a *cut* or the
    search range's end.  The pieces are appended to ``pieces`` (:class:`~lipschitz_icl.certified.wstar_proof.
    Piece`, in walk order).  ``None`` on success, else the reason."""
    x = start
    h = FIRST_PIECE
    known = sign_at_start == direction
    end = W_SEARCH[1] if direction > 0 else W_SEARCH[0]
    while True:
        if cut(f, x, direction, U):
            pieces.append(Piece(x, math.inf, "cut") if direction > 0 else Piece(0.0, x, "cut"))
            return None
        while True:
            y = min(x * (1 + h), end) if direction > 0 else max(x / (1 + h), end)
            a, b = (x, y) if direction > 0 else (y, x)
            if excluded(f, a, b, U):
                kind = "excluded"
                break
            if monotone(f, a, b, direction):
                kind = "up" if direction > 0 else "down"
                break
            if known and convex(f, a, b):
                kind = "convex"
                break
            h *= 0.5
            if h < MIN_PIECE:
                return f"no shape shown for L on a piece next to w = {x:.6g}"
        pieces.append(Piece(a, b, kind))
        known = kind != "excluded"
        x = y
        if x == end:
            pieces.append(Piece(x, x, "end"))
            return None
        h = min(1.5 * h, MAX_PIECE if kind != "excluded" else 1.0)


# ----------------------------------------------------------------------------- one-sided bounds
def wstar_bound(
    kernel,
    n,
    sigma,
    L,
    bound: float,
    side: str = "upper",
    *,
    anchor: float | None = None,
    refute: bool = True,
    seconds: float = 60.0,
    evaluations: int = MAX_EVALUATIONS,
    refine_first: bool = False,
) -> WStarBound:
    """Decide ``w* <= bound`` (``side="upper"``) or ``w* >= bound`` (``"lower"``) for the certified kernel at
    ``n``, ``sigma``, ``L`` (numbers or intervals; then at every point of the box) without locating ``w*``
    (module docstring, step 4).  ``U`` is the smaller of the loss's upper ends at ``bound`` and at ``anchor``
    (any window, best near ``w*``: the monotone floors then exclude more).  When the statement's own walk
    does not close and the slope at ``bound`` has the other sign, the opposite strict statement is tried
    (``refuted`` when it closes; not with ``refute`` false).  ``refine_first`` (speed only): the walk's tests try
    the refined shape of a piece first (:func:`lipschitz_icl.certified.wstar_proof.monotone`), as an earlier
    walk learned; ``info["refine_first"]`` is whether this walk learned it itself (a plain shape failed where the
    refined one passed), never an inherited choice passed on, so a choice that no longer pays lapses."""
    if side not in ("upper", "lower"):
        raise ParameterError("side", "upper or lower", side)
    if not W_SEARCH[0] < bound < W_SEARCH[1]:
        raise ParameterError("bound", f"inside the search range ({W_SEARCH[0]:g}, {W_SEARCH[1]:g})", bound)
    _check_problem(n, sigma)
    f = Objective(kernel, n, sigma, L, seconds=seconds, evaluations=evaluations)
    f.refine_first = refine_first
    lo, hi = (min(bound, anchor), max(bound, anchor)) if anchor else (bound, bound)
    f.span = (lo / 1.3, hi * 1.6)
    start = time.monotonic()
    direction = 1 if side == "upper" else -1
    try:
        anchor = anchor if anchor is not None and W_SEARCH[0] < anchor < W_SEARCH[1] else None
        U, sign = start_level(f, bound, anchor)
        attempts = [(direction, "proved"), (-direction, "refuted")]
        if sign == -direction:  # the slope at the bound points the other way: try the opposite first
            attempts.reverse()
        reason = f"the sign of dL/dw at w = {bound:.6g} is not certain"
        for way, outcome in attempts:
            if way == -direction and (sign != -direction or not refute):
                continue  # the opposite statement needs the slope at the bound to point its way
            if way == direction and sign != direction and not excluded(f, *_first(bound, way), U):
                continue  # no first piece: not up or convex without the sign, not excluded next to the bound
            pieces: list = []
            failed = _walk(f, bound, way, sign, U, pieces)
            if failed is None:
                note = "" if outcome == "proved" else "the opposite strict bound is proved"
                entries = tuple((piece.a, piece.b, piece.kind) for piece in pieces)
                proof = BoundProof(bound, side, anchor, tuple(pieces)) if outcome == "proved" else None
                return WStarBound(side, bound, outcome, note, entries, _info(f, start, refine_first), proof)
            reason = failed
    except OutOfBudget as exc:
        reason = str(exc)
    return WStarBound(side, bound, "undecided", reason, (), _info(f, start, refine_first))


def _first(bound: float, way: int) -> tuple[float, float]:
    """The first piece a walk from ``bound`` tries (:data:`FIRST_PIECE` wide), as ``(a, b)``."""
    return (bound, bound * (1 + FIRST_PIECE)) if way > 0 else (bound / (1 + FIRST_PIECE), bound)


def _info(f: Objective, start: float, inherited: bool) -> dict:
    learned = f.refine_first and not inherited
    return {"evaluations": f.evaluations, "seconds": time.monotonic() - start, "refine_first": learned}


def _check_problem(n, sigma) -> None:
    n_lo = n[0] if isinstance(n, (tuple, list)) else n
    s_lo = sigma[0] if isinstance(sigma, (tuple, list)) else sigma
    if n_lo < 2:
        raise ParameterError("n", ">= 2 for w* (at n = 1 the loss does not depend on w)", n)
    if not s_lo > 0:
        raise ParameterError(
            "sigma",
            "> 0 for the certified w* (at sigma = 0 the loss is the bias alone, which keeps falling as w "
            "grows: no minimiser inside the search range)",
            sigma,
        )


# ----------------------------------------------------------------------------- two-sided
def certified_wstar(
    d: int,
    n,
    sigma,
    L,
    *,
    rel_width: float = 1e-6,
    task: str = "affine",
    frequency: float = 1.0,
    kernel=None,
    guess: float | None = None,
    seconds: float = 120.0,
) -> WStarEnclosure:
    """The certified ``w*`` interval of relative width about ``rel_width`` (module docstring, step 5) for the
    class ``task`` (or a given certified ``kernel``) at ``n``, ``sigma``, ``L``."""
    _check_problem(n, sigma)
    if kernel is None:
        kernel = loss.kernel_of(task, d, 1.0, frequency)
    start = time.monotonic()
    if guess is None:
        guess = _float_guess(kernel, task, d=d, n=n, sigma=sigma, L=L, frequency=frequency)
    floor = arithmetic.exact(sigma[0] if isinstance(sigma, (tuple, list)) else sigma) ** 2
    floor = floor / (n[1] if isinstance(n, (tuple, list)) else n)
    info: dict[str, Any] = {"search_range": list(W_SEARCH)}
    if not W_SEARCH[0] * 1.01 < guess < W_SEARCH[1] / 1.01:
        info["at_search_bound"] = True
        return _undecided(
            guess,
            "the float minimiser is at an end of the search range",
            info=info,
            start=start,
            U=None,
            floor=floor,
            evaluations=0,
        )
    n_lo, n_hi = _n_range(n)
    loss.design(kernel, (guess / 2, guess * 2), (n_lo, n_hi), order=2, rtol=1e-9)  # refused up front beyond the budget
    f = Objective(kernel, n, sigma, L, seconds=seconds)
    f.span = (guess / 1.5, guess * 1.6)
    U = None
    try:
        w1 = _newton(f, guess)
        low, high, rtol = _bracket(f, w1, rel_width)
        if low is None:
            return _undecided(
                guess,
                "the sign change of dL/dw was not certified",
                info=info,
                start=start,
                U=U,
                floor=floor,
                evaluations=f.evaluations,
            )
        U = f.upper_value(w1)
        right: list = []
        left: list = []
        reason = _walk(f, high, 1, 1, U, right) or _walk(f, low, -1, -1, U, left)
        # JSON-ready: a piece cut off to infinity (the far side excluded by a floor) has the end "inf"
        info["pieces"] = [piece.to_list() for piece in left[::-1] + right]
        if reason is not None:
            return _undecided(w1, reason, info=info, start=start, U=U, floor=floor, evaluations=f.evaluations)
        at = minimum_lower_bound(f, low, high)
    except ProofError as exc:  # the bracket's curvature has no finite enclosure: no minimum is certified
        return _undecided(w1, str(exc), info=info, start=start, U=U, floor=floor, evaluations=f.evaluations)
    except OutOfBudget as exc:
        return _undecided(guess, str(exc), info=info, start=start, U=U, floor=floor, evaluations=f.evaluations)
    info.update(evaluations=f.evaluations, seconds=time.monotonic() - start, at_search_bound=False)
    proof = WStarProof(low, high, w1, rtol, tuple(left), tuple(right))
    loss_low = arithmetic.low(at)
    loss_high = arithmetic.high(U)  # the loss at w1 bounds the minimum from above
    return WStarEnclosure(low, high, w1, True, loss_low, loss_high, info, proof)


def _n_range(n) -> tuple:
    if isinstance(n, (tuple, list)):
        return float(n[0]), float(n[1])
    return float(n), float(n)


def _float_guess(kernel, task, *, d, n, sigma, L, frequency) -> float:
    """A start (not a result): the exact float minimiser for the affine and cosine classes, the asymptotic one
    for relu (the large-n model covers affine and relu only), a coarse certified scan of ``kernel`` otherwise
    and wherever the float method refuses the inputs (relu at small ``n``, outside the large-n regime).

    ``task`` the class's name, ``d`` the dimension, ``n``, ``sigma`` and ``L`` the context size, label noise and
    Lipschitz constant (each a value or a ``(low, high)`` range, started from its geometric mean; ``L`` None
    reads 1), ``frequency`` the cosine class's frequency."""
    from lipschitz_icl.optimum import wstar_asymptotic, wstar_exact
    from lipschitz_icl.problem import make_problem

    n_mid = n if not isinstance(n, (tuple, list)) else int(math.sqrt(n[0] * n[1]))
    s_mid = sigma if not isinstance(sigma, (tuple, list)) else math.sqrt(sigma[0] * sigma[1])
    L_mid = 1.0 if L is None else (L if not isinstance(L, (tuple, list)) else math.sqrt(L[0] * L[1]))
    name = task if task in ("affine", "relu", "cosine") else None
    if name is None:
        return _certified_scan(kernel, n_mid, s_mid, L_mid)
    problem = make_problem(name, d, n_mid, L_mid, s_mid, **({"frequency": frequency} if name == "cosine" else {}))
    try:
        result = wstar_asymptotic(problem) if name == "relu" else wstar_exact(problem)
    except ParameterError:  # outside the float method's regime (relu at small n): the certified scan starts it
        return _certified_scan(kernel, n_mid, s_mid, L_mid)
    return float(result.w_star.value)


def _certified_scan(kernel, n, sigma, L) -> float:
    """A coarse start from the certified loss on a log grid of ``w`` (for a prior without a float method)."""
    best, value = 1.0, math.inf
    for k in range(-2, 9):
        w = 10.0 ** (k / 2)
        try:
            x = float(loss.enclose(kernel, w, n, sigma, L, rtol=1e-4).loss.mid())
        except ParameterError:
            break
        if x < value:
            best, value = w, x
    return best


def problem_wstar(problem, *, rel_width: float = 1e-6, seconds: float = 600.0) -> WStarEnclosure:
    """:func:`certified_wstar` for a :class:`~lipschitz_icl.problem.Problem` (its class's certified kernel,
    or the :class:`ParameterError` naming what is not certified); the start is the class's own float guess
    (a prior given by its kernel: its leading-order guess)."""
    _check_problem(problem.n, problem.sigma)
    kernel = kernels.certified_kernel(problem.task_class)
    task = getattr(problem.task_class, "name", "")
    frequency = getattr(problem.task_class, "frequency", 1.0)
    if task in ("affine", "relu", "cosine"):
        guess = _float_guess(
            kernel, task, d=problem.d, n=problem.n, sigma=problem.sigma, L=problem.L, frequency=frequency
        )
    elif hasattr(problem.task_class, "wstar_guess"):
        guess = float(problem.task_class.wstar_guess(problem.n, problem.sigma))
    else:
        guess = None
    return certified_wstar(
        problem.d,
        problem.n,
        problem.sigma,
        None,
        rel_width=rel_width,
        task=task,
        kernel=kernel,
        guess=guess,
        seconds=seconds,
    )


def _newton(f: Objective, w: float) -> float:
    """Newton steps on the certified ``L'``, ``L''`` (midpoints) from ``w`` until the step is below ``1e-8 w``."""
    for _ in range(12):
        e = f.at(w, (1, 2), rtol=1e-9)
        first, second = e.derivative(1).loss, e.derivative(2).loss
        if not second > 0:
            return w
        step = float((first / second).mid())
        nxt = min(max(w - step, w / 2), w * 2)
        if abs(nxt - w) < 1e-8 * w:
            return nxt
        w = nxt
    return w


def _bracket(f: Objective, w1: float, rel_width: float) -> tuple:
    """``(low, high, rtol)`` with ``L'(low) < 0 < L'(high)`` around ``w1`` (the slopes at accuracy ``rtol``),
    or ``(None, None, None)``."""
    delta = 0.5 * rel_width
    while delta < 0.25:
        low, high = w1 * (1 - delta), w1 * (1 + delta)
        rtol = max(1e-12, 0.02 * delta)
        if f.slope(low, rtol) < 0 and f.slope(high, rtol) > 0:
            return low, high, rtol
        delta *= 2
    return None, None, None


def _undecided(w0, reason, *, info, start, U, floor, evaluations) -> WStarEnclosure:
    """The undecided :class:`WStarEnclosure` with the guess ``w0`` (the window reached so far): ``reason`` (why
    the search stopped), ``evaluations`` (certified loss evaluations) and the seconds since ``start`` (a
    ``time.monotonic`` reading) are recorded in ``info`` (the search's record); the loss interval is
    ``[floor, U]``, ``floor`` the ball ``sigma^2/n`` and ``U`` a ball bounding the loss at a window from above
    (None when none was computed: ``inf``)."""
    info.update(reason=reason, evaluations=evaluations, seconds=time.monotonic() - start)
    info.setdefault("at_search_bound", False)
    high = arithmetic.high(U) if U is not None else math.inf
    return WStarEnclosure(0.0, math.inf, w0, False, arithmetic.low(floor), high, info)
