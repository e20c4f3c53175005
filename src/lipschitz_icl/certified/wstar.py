"""Certified optimal window ``w*`` (affine class): an interval proved to hold the global minimiser of the
ICL loss ``L(w)`` of ``M = w I`` over the search range ``[1e-3, 1e8]`` (:data:`lipschitz_icl.optimum.W_SEARCH`).

Every number below is a ball of :mod:`lipschitz_icl.certified.loss`; the float minimiser ``w0`` of
:func:`lipschitz_icl.optimum.wstar_exact` only says where to look.  The proof:

1. *A value the minimum does not exceed*: ``U`` = upper end of the ball of ``L(w0)``; ``min L <= U``.
2. *Monotone lower bounds* (theorems used here): ``N(w) = E[sum_i p_i^2]`` is nondecreasing in ``w``
   (``d/dw sum_i p_i^2 = 2 Cov_p(p, t) >= 0``: Chebyshev's sum inequality, ``p_i`` increasing in
   ``t_i``); ``Q(w) = E[(sum_i p_i u_i)^2]``, ``u = 1 - t``, is nonincreasing (``d/dw sum_i p_i u_i =
   -Var_p(t) <= 0`` and ``sum_i p_i u_i >= 0``); the bias is ``c (Q + E[sum_i p_i^2 (1 - t_i^2)]) >= c Q``.
   Also ``N >= 1/n`` (Cauchy-Schwarz) and ``Q >= (E[min_i u_i])^2`` (Jensen, and ``sum_i p_i u_i >= min_i u_i``)
   with ``E[min_i u_i] = int_0^2 (1 - P(t >= 1 - u))^n du`` bounded below by a Riemann sum of its
   decreasing integrand (certified cap probabilities).  So on ``[a, b]``,
   ``L(w) >= sigma^2 max(N(a), 1/n) + c max(Q(b), m^2)``: a piece where this exceeds ``U`` holds no
   minimiser; so do ``[a_R, 1e8]`` and ``[1e-3, b_L]`` when the bound with ``b = inf`` or ``a = 1e-3``
   exceeds it at ``a_R`` or ``b_L``.
3. *Shape*: every other piece ``[c - r, c + r]`` of ``[b_L, a_R]`` is proved decreasing or increasing
   (``L'(c)`` and ``L'(c) -+ r sup |L''|`` of one sign) or convex (``L''(c) - r sup |L'''| > 0``), the
   ``sup`` over a ball of the piece (mean value form), or halved.
4. *The sign change*: a run of such pieces must read decreasing, convex, increasing (else undecided);
   then ``L' < 0`` up to ``D``, ``L'`` is increasing on ``[D, C]`` and ``> 0`` after ``C``.  A run whose
   ``L`` rises from its left end, or falls into its right end, holds no minimiser (its ends touch
   excluded pieces, where ``L > U``, unless they are ends of the search range).  In the run that is
   left, a Newton step from ``w0`` on the certified ``L'(w0)``, ``L''(w0)`` gives ``w1``, and
   ``L'(w1 (1 - delta)) < 0 < L'(w1 (1 + delta))`` proves the minimiser in
   ``[w1 (1 - delta), w1 (1 + delta)]`` (``delta`` doubled until both signs are certified).

Covered: the affine class, ``n >= 2``, ``sigma > 0``.  Cost: some tens of certified loss evaluations.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from lipschitz_icl.certified import arithmetic, laws
from lipschitz_icl.certified.loss import loss_derivatives, loss_enclosure, noise_and_q
from lipschitz_icl.validation import ParameterError

__all__ = ["WStarEnclosure", "certified_wstar", "W_SEARCH"]

W_SEARCH = (1e-3, 1e8)
PIECE = 0.008  # first half-width of a piece relative to its centre (then set by the margins)
CUT_STEP = 1.15  # far-field cuts move outward by this factor
COARSE = 1e-4  # tolerance of the value and convexity tests (certified whatever it is)
FAR = 100.0  # the far-field cuts are looked for within this factor of the float minimiser
NEAR = 0.1  # within this relative distance of the float minimiser convexity is tried first


@dataclass(frozen=True)
class WStarEnclosure:
    """``[low, high]`` proved to hold the global minimiser over the search range (``decided``), or the
    reason it could not be (``decided`` False; the interval is then what was reached)."""

    low: float
    high: float
    guess: float
    decided: bool
    loss_low: float
    loss_high: float
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "w_star": math.sqrt(self.low * self.high),
            "w_star_low": self.low,
            "w_star_high": self.high,
            "ci_low": self.low,
            "ci_high": self.high,
            "loss": 0.5 * (self.loss_low + self.loss_high),
            "loss_low": self.loss_low,
            "loss_high": self.loss_high,
            "method": "certified",
            "guess": self.guess,
            "decided": self.decided,
            **self.info,
        }


class _Loss:
    """Cached certified evaluations for one problem; :meth:`noise_q` holds the lower bounds of step 2."""

    def __init__(self, d, n, sigma, L):
        self.d, self.n, self.sigma, self.L = d, n, sigma, L
        self.points = {}
        self.evaluations = 0
        c = arithmetic.exact(L) ** 2 / (3 * d)
        self.noise_floor = arithmetic.exact(sigma) ** 2 / n
        self.q_floor = c * _min_u_mean(d, n) ** 2

    def noise_q(self, w: float):
        """Lower bounds ``(sigma^2 max(N(w), 1/n), c max(Q(w), m^2))``."""
        if w not in self.points:
            self.evaluations += 1
            noise, q = noise_and_q(self.d, self.n, w, self.sigma, self.L, rtol=COARSE)
            self.points[w] = (noise.max(self.noise_floor), q.max(self.q_floor))
        return self.points[w]

    def derivatives(self, w, orders, rtol):
        self.evaluations += 1
        return loss_derivatives(self.d, self.n, w, self.sigma, self.L, orders, rtol=rtol)


def _min_u_mean(d: int, n: int, steps: int = 256):
    """A lower bound of ``E[min_i u_i] = int_0^2 (1 - P(t >= 1 - u))^n du`` (``u_i = 1 - t_i``): the lower
    Riemann sum of the decreasing integrand on ``steps`` equal cells."""
    total = arithmetic.exact(0)
    for j in range(1, steps + 1):
        u = arithmetic.exact(2) * j / steps
        total += (1 - laws.cap_probability(d, 1 - u)) ** n
    return (total * 2 / steps).lower()


def certified_wstar(
    d: int, n: int, sigma: float, L: float, *, rel_width: float = 1e-6, task: str = "affine", seconds: float = 600.0
) -> WStarEnclosure:
    """The certified ``w*`` interval (module docstring), of relative width about ``rel_width``."""
    from lipschitz_icl.optimum import wstar_exact
    from lipschitz_icl.problem import make_problem

    if task != "affine":
        raise ParameterError("task", "affine for the certified method (relu and zonal kernels are not certified)", task)
    problem = make_problem("affine", d, n, L, sigma)
    if n < 2 or sigma <= 0:
        raise ParameterError(
            "n" if n < 2 else "sigma",
            ">= 2 and sigma > 0 for w* (else the loss has no interior minimiser)",
            n if n < 2 else sigma,
        )
    start = time.perf_counter()
    deadline = start + seconds
    guess = wstar_exact(problem)
    w0 = guess.w_star.value
    f = _Loss(d, n, sigma, L)
    info: dict[str, Any] = {"search_range": list(W_SEARCH)}
    if guess.inconclusive:
        return _undecided(w0, guess, "the float minimiser is at an end of the search range", info, start, f)
    try:
        upper = loss_enclosure(d, n, w0, sigma, L, rtol=1e-10).loss.upper()
        cuts = _far_cuts(f, w0, upper)
        if cuts is None:
            return _undecided(w0, guess, f"no far-field cut within a factor {FAR:g} of the minimiser", info, start, f)
        info["cuts"] = list(cuts)
        pieces = _pieces(f, cuts[0], cuts[1], upper, w0, deadline)
    except ParameterError as exc:  # the certified grid refuses a window (few points dominate)
        return _undecided(w0, guess, f"a certified evaluation was refused: {exc}", info, start, f)
    if pieces is None:
        return _undecided(w0, guess, "convexity not proved in time between the far-field cuts", info, start, f)
    runs = _runs(pieces)
    info["runs"] = [[run[0][0], run[-1][1], "".join(k[0] for _, _, k in run)] for run in runs]
    found = [_candidates(f, run) for run in runs]
    if "pattern" in found:
        return _undecided(w0, guess, "a run of pieces is not decreasing, convex, then increasing", info, start, f)
    survivors = [c for c in found if c is not None]
    if len(survivors) != 1:
        return _undecided(w0, guess, f"{len(survivors)} runs may hold the minimiser", info, start, f)
    a, b = survivors[0]
    low, high = _bracket(f, w0, a, b, rel_width, deadline)
    info["at_search_bound"] = low is not None and (low <= W_SEARCH[0] or high >= W_SEARCH[1])
    info["evaluations"] = f.evaluations
    info["seconds"] = time.perf_counter() - start
    if low is None:
        return _undecided(w0, guess, "the sign change of L' was not certified", info, start, f)
    # the minimum of L is L(w) for a w in [low, high]: L(c) -+ r sup |L'| there (mean value theorem)
    c, r = 0.5 * (low + high), arithmetic.exact(0.5 * (high - low))
    at_c = loss_enclosure(d, n, c, sigma, L, rtol=1e-10).loss
    slope = abs(f.derivatives((low, high), (1,), 1e-8)[1]).abs_upper()
    return WStarEnclosure(
        low,
        high,
        w0,
        True,
        arithmetic.low(at_c - r * slope),
        min(arithmetic.high(at_c + r * slope), arithmetic.high(upper)),
        info,
    )


def _undecided(w0, guess, reason, info, start, f):
    info.update(reason=reason, evaluations=f.evaluations, seconds=time.perf_counter() - start)
    return WStarEnclosure(0.0, math.inf, w0, False, guess.loss.value, guess.loss.value, info)


def _far_cuts(f: _Loss, w0: float, upper) -> tuple | None:
    """``(b_L, a_R)``: ``c Q(b_L) > U`` and ``sigma^2 N(a_R) > U`` (step 2), the left cut stopping at the
    range's end; None for a cut not found within a factor :data:`FAR` of ``w0``."""
    a = w0 * CUT_STEP
    while not f.noise_q(a)[0] + f.q_floor > upper:
        a *= CUT_STEP
        if a > min(w0 * FAR, W_SEARCH[1]):
            return None
    b = max(w0 / CUT_STEP, W_SEARCH[0])
    while b > W_SEARCH[0] and not f.noise_floor + f.noise_q(b)[1] > upper:
        b = max(b / CUT_STEP, W_SEARCH[0])
        if b < w0 / FAR:
            return None
    return b, a


def _pieces(f: _Loss, lo: float, hi: float, upper, w0: float, deadline) -> list | None:
    """Pieces covering ``[lo, hi]`` left to right, each ``(a, b, kind)`` with kind ``excluded`` (value
    bound) or ``convex``; a piece that is neither is halved; the next piece's width follows the last
    margin (a value-bound exclusion counts as margin 1).  None when a piece shrinks below ``1e-6``
    relative or the time runs out."""
    out, a, half = [], lo, PIECE
    while a < hi:
        if time.perf_counter() > deadline:
            return None
        b = min(a * (1 + half) / (1 - half), hi)
        kind, margin = _piece(f, a, b, upper, w0)
        if kind is None:
            half *= 0.5
            if half < 1e-6:
                return None
            continue
        out.append((a, b, kind))
        a = b
        # the convexity test's overestimate grows about like half^2: aim the next margin at 0.3
        half = min(2 * half, half * math.sqrt(0.7 / max(1.0 - margin, 0.175)), 0.2)
    return out


def _piece(f: _Loss, a: float, b: float, upper, w0: float) -> tuple:
    """``("excluded", 1)`` when the value bound exceeds ``U``; else, trying first what is likelier at this
    distance from ``w0`` (the sign of ``L'`` away from it, convexity near it): ``("down" | "up", margin)``
    when ``L'`` at the centre, less ``r`` times the largest ``|L''|`` on the piece, keeps its sign;
    ``("convex", margin)`` when ``L''`` at the centre exceeds ``r`` times the largest ``|L'''|`` on it
    (``margin``: that difference over the centre's value); else ``(None, 0)``."""
    if f.noise_q(a)[0] + f.noise_q(b)[1] > upper:
        return "excluded", 1.0
    c = 0.5 * (a + b)
    tests = (_monotone, _convex) if abs(c / w0 - 1) > NEAR else (_convex, _monotone)
    for test in tests:
        kind, margin = test(f, a, b)
        if kind is not None:
            return kind, margin
    return None, 0.0


def _convex(f: _Loss, a: float, b: float) -> tuple:
    c, r = 0.5 * (a + b), arithmetic.exact(0.5 * (b - a))
    second = f.derivatives(c, (2,), 1e-3)[2]
    third = f.derivatives((a, b), (3,), 1e-2)[3]
    low = second - r * abs(third).abs_upper()
    return ("convex", float((low / second).mid())) if low > 0 else (None, 0.0)


def _monotone(f: _Loss, a: float, b: float) -> tuple:
    c, r = 0.5 * (a + b), arithmetic.exact(0.5 * (b - a))
    first = f.derivatives(c, (1,), 1e-4)[1]
    slope = r * abs(f.derivatives((a, b), (2,), 1e-2)[2]).abs_upper()
    if first - slope > 0:
        return "up", float(((first - slope) / first).mid())
    if first + slope < 0:
        return "down", float(((first + slope) / first).mid())
    return None, 0.0


def _runs(pieces: list) -> list:
    """Maximal runs of consecutive pieces that are not excluded: lists of ``(a, b, kind)``."""
    out: list[list] = []
    for piece in pieces:
        if piece[2] == "excluded":
            continue
        if out and out[-1][-1][1] == piece[0]:
            out[-1].append(piece)
        else:
            out.append([piece])
    return out


def _sign(f: _Loss, w: float, rtol: float = 1e-8) -> int:
    """+1 or -1 when ``L'(w)`` is certainly positive or negative, else 0."""
    first = f.derivatives(w, (1,), rtol)[1]
    return 1 if first > 0 else (-1 if first < 0 else 0)


def _candidates(f: _Loss, run: list):
    """Where the run can hold the global minimiser: ``None`` (nowhere), ``(D, C)`` (``L' < 0`` left of
    ``D``, increasing on ``[D, C]``, ``> 0`` right of ``C``), or ``"pattern"`` when the kinds are not
    down* convex* up* (step 4).  The run's ends touch excluded pieces (``L > U``), unless they are the
    ends of the search range: a run whose ``L`` increases from its left end, or decreases into its right
    end, holds no minimiser."""
    order = {"down": 0, "convex": 1, "up": 2}
    kinds = [order[k] for _, _, k in run]
    if kinds != sorted(kinds):
        return "pattern"
    a, b = run[0][0], run[-1][1]
    downs = [p for p in run if p[2] == "down"]
    convex = [p for p in run if p[2] == "convex"]
    left = downs[-1][1] if downs else a
    right = convex[-1][1] if convex else left
    if left == a and a > W_SEARCH[0] and (not convex or _sign(f, a, 1e-6) > 0):
        return None
    if right == b and b < W_SEARCH[1] and (not convex or _sign(f, b, 1e-6) < 0):
        return None
    return left, right


def _bracket(f: _Loss, w0: float, a: float, b: float, rel_width: float, deadline) -> tuple:
    """``(low, high)`` in ``[a, b]`` with ``L'(low) < 0 < L'(high)`` (step 4), or ``(None, None)``; an end
    of ``[a, b]`` counts as certified (the sign outside it is known)."""
    if a == b:
        return a, b
    derivs = f.derivatives(min(max(w0, a), b), (1, 2), 1e-10)
    w1 = float((arithmetic.exact(min(max(w0, a), b)) - derivs[1] / derivs[2]).mid())
    w1 = min(max(w1, a), b)
    delta = 0.5 * rel_width
    while delta < 0.5 and time.perf_counter() < deadline:
        low, high = max(a, w1 * (1 - delta)), min(b, w1 * (1 + delta))
        rtol = max(1e-12, 0.05 * delta)
        if (low == a or _sign(f, low, rtol) < 0) and (high == b or _sign(f, high, rtol) > 0):
            return low, high
        delta *= 2
    return None, None
