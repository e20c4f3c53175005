"""Window-law bounds decided by proof over a whole range of ``n``: ``w*(n) <= C Lambda(n)^alpha`` (or ``>=``) for
every integer ``n`` in ``[n_lo, n_hi]``, ``Lambda = n L^2 / sigma^2`` (Theorem 3.4's form; the constants of the
derived law are :mod:`lipschitz_icl.derivations.window_law`'s, passed in by the caller).

The range is cut into geometric pieces ``[a, b]`` of real ``n``; on a piece the bound is replaced by its value
at the end where it is tightest (``C Lambda(a)^alpha`` for ``<=``, ``C Lambda(b)^alpha`` for ``>=``, as
``Lambda^alpha`` increases with ``n``), and the one-sided statement at that constant is proved for every real
``n`` of the piece at once by :func:`lipschitz_icl.certified.wstar.wstar_bound` (the loss's balls hold over the
``n`` interval).  A piece whose proof does not close is halved; one that cannot be halved further is tested
for a counterexample at its integer end ``n = a`` (``<=``) or ``n = b`` (``>=``): ``w*(n) > C Lambda(n)^alpha``
proved there refutes the statement (a certified counterexample), else the piece stays open and the
statement is undecided, with its open pieces listed.  ``seconds`` (CPU time) bounds the whole decision (then undecided,
never proved).

Planning (speed only, never soundness): with ``guess`` (a float ``w*`` at an integer ``n``, e.g. the exact
method's) the pieces are sized from the float margin ``m = C Lambda(a)^alpha / w*(a) - 1`` (``<=``; ``w*(a) /
(C Lambda(a)^alpha) - 1`` for ``>=``): a piece from ``a`` reaches ``a (1 + USE m)^(1/alpha)``, where the
float ``w*`` uses the share :data:`USE` of the margin (``w*`` grows about like ``Lambda^alpha``), so a piece is
rarely tried too wide and halved.  Without it the pieces start at the ratio ``ratio``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.certified.wstar import wstar_bound
from lipschitz_icl.validation import ParameterError

__all__ = ["WindowDecision", "window_bound", "USE"]

USE = 0.6  # planning: the share of a piece's float margin its range of n may use (module docstring)


@dataclass(frozen=True)
class WindowDecision:
    """``outcome``: ``"proved"``, ``"refuted"`` (``counterexample``: the integer ``n`` and the proved opposite
    bound there) or ``"undecided"`` (``open``: the pieces of ``n`` not decided); ``pieces``: every piece
    ``(a, b, bound, outcome)`` tried."""

    outcome: str
    side: str
    C: float
    alpha: float
    n_range: tuple
    pieces: list = field(default_factory=list)
    open: list = field(default_factory=list)
    counterexample: dict | None = None
    info: dict = field(default_factory=dict)


def window_bound(
    kernel,
    n_range: tuple,
    *,
    sigma: float,
    L: float,
    C: float,
    alpha: float,
    side: str = "upper",
    ratio: float = 2.0,
    min_ratio: float = 1.02,
    seconds: float = 120.0,
    guess: Callable[[int], float] | None = None,
) -> WindowDecision:
    """Decide ``w*(n) <= C (n L^2/sigma^2)^alpha`` (``side="upper"``) or ``>=`` (``"lower"``) for every integer
    ``n`` in ``n_range`` (``5 <= n_lo < n_hi``), for the certified ``kernel`` (module docstring), label noise
    ``sigma`` and Lipschitz constant ``L`` (``Lambda = n L^2/sigma^2``), the law's constant ``C`` and power
    ``alpha``: pieces of ratio ``ratio`` at first (or planned from ``guess``, at most ``ratio``: module
    docstring), halved (geometrically) down to ``min_ratio``, within ``seconds`` of CPU time."""
    if side not in ("upper", "lower"):
        raise ParameterError("side", "upper or lower", side)
    n_lo, n_hi = n_range
    if not 5 <= n_lo < n_hi:
        raise ParameterError("n_range", "(n_lo, n_hi) with 5 <= n_lo < n_hi", n_range)
    if not (C > 0 and alpha > 0 and sigma > 0 and L > 0):
        raise ParameterError("C", "with alpha, sigma and L > 0", (C, alpha, sigma, L))
    start = time.monotonic()
    deadline = time.process_time() + seconds  # CPU seconds, as the w* searches count them (certified.wstar)

    def law(n: float, proving: bool = True) -> float:
        """``C Lambda(n)^alpha`` rounded toward the side where proving against it implies the stated bound
        (down for ``<=``, up for ``>=``; the other way for a counterexample, ``proving`` false): a ball, not a
        float product, so no rounding crosses the bound."""
        C_ball, alpha_ball = arithmetic.exact(C), arithmetic.exact(alpha)
        L_ball, sigma_ball = arithmetic.exact(L), arithmetic.exact(sigma)
        value = C_ball * (arithmetic.exact(n) * L_ball * L_ball / (sigma_ball * sigma_ball)) ** alpha_ball
        return arithmetic.low(value) if (side == "upper") == proving else arithmetic.high(value)

    if guess is None:
        count = max(1, math.ceil(math.log(n_hi / n_lo) / math.log(ratio)))
        stack = [(n_lo * (n_hi / n_lo) ** (k / count), n_lo * (n_hi / n_lo) ** ((k + 1) / count)) for k in range(count)]
    else:
        stack = _planned(n_range, side, C * (L * L / (sigma * sigma)) ** alpha, alpha, guess, ratio, min_ratio)
    stack.reverse()
    tried, still_open = [], []
    evaluations = 0
    while stack:
        a, b = stack.pop()
        remaining = deadline - time.process_time()
        if remaining <= 0:
            still_open.append((a, b))
            continue
        bound = law(a) if side == "upper" else law(b)
        n_box = (a, b) if b > a else a
        result = wstar_bound(kernel, n_box, sigma, L, bound, side, seconds=remaining)
        evaluations += result.info.get("evaluations", 0)
        tried.append((a, b, bound, result.outcome))
        if result.outcome == "proved":
            continue
        if b / a > min_ratio:
            mid = math.sqrt(a * b)
            stack.extend([(mid, b), (a, mid)])
            continue
        witness = math.ceil(a) if side == "upper" else math.floor(b)
        check = wstar_bound(
            kernel, witness, sigma, L, law(witness, False), side, seconds=max(deadline - time.process_time(), 1.0)
        )
        evaluations += check.info.get("evaluations", 0)
        if check.outcome == "refuted":
            counterexample = {"n": witness, "bound": law(witness, False), "proof": list(check.pieces)}
            info = {"evaluations": evaluations, "seconds": time.monotonic() - start}
            return WindowDecision("refuted", side, C, alpha, tuple(n_range), tried, [], counterexample, info)
        still_open.append((a, b))
    info = {"evaluations": evaluations, "seconds": time.monotonic() - start}
    outcome = "proved" if not still_open else "undecided"
    return WindowDecision(outcome, side, C, alpha, tuple(n_range), tried, still_open, None, info)


def _planned(n_range: tuple, side: str, scale: float, alpha: float, guess, ratio: float, min_ratio: float) -> list:
    """Pieces ``(a, b)`` covering ``n_range``, each reaching ``a (1 + USE m)^(1/alpha)`` with ``m`` the float
    margin at ``a`` (module docstring; ``scale n^alpha`` is the bound ``C Lambda(n)^alpha``), between
    ``min_ratio`` and ``ratio``.  Floats only: the proof of each piece decides."""
    n_lo, n_hi = n_range
    pieces, a = [], float(n_lo)
    while a < n_hi:
        estimate = guess(max(5, round(a)))
        law = scale * a**alpha
        margin = law / estimate - 1 if side == "upper" else estimate / law - 1
        step = (1 + USE * margin) ** (1 / alpha) if margin > 0 else min_ratio
        b = min(a * min(max(step, min_ratio), ratio), float(n_hi))
        if n_hi / b < min_ratio:  # no sliver at the end
            b = float(n_hi)
        pieces.append((a, b))
        a = b
    return pieces
