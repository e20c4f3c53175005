"""The decision vocabulary: the four rules every claim and every bound variant is judged by.

Each rule turns an *interval* (never a point) into a verdict in {holds, fails, inconclusive}, and
each is monotone in the interval's width: widening the interval can turn ``holds`` or ``fails`` into
``inconclusive``, never one into the other, so a noisier measurement can never pass more easily.
"Did not reject, therefore holds" is not a rule here: ``holds`` always means the interval itself lies
where the claim says.

``equivalence``  (TOST) the interval of ``measured - theory`` lies inside ``[-margin, +margin]``: holds;
                 wholly outside it: fails; otherwise inconclusive.
``one-sided``    bounds and inequalities: ``measured <= bound`` holds iff the whole interval is at or
                 below the bound, fails iff the whole interval is above it (and mirrored for ``>=``).
``sign``         directions: holds iff the interval lies wholly on the predicted side of zero (beyond
                 ``margin``), fails iff it lies wholly on the other side (beyond ``margin``).
``asymptotic``   a law reached as ``n -> inf``: the distance to the law must follow the derived
                 next-order term and be within ``margin`` at the largest ``n``; it fails only where the
                 derived next-order term is already below the margin and the distance, less that term,
                 still exceeds it (the sequence converges elsewhere); a grid whose derived next-order
                 term is still at or above the margin is "not yet in range": inconclusive, and
                 :func:`extend_grid` says how far to go before saying so.

:func:`resolution` measures what a rule can resolve: the smallest deviation of a claim's natural
parameter that the same rule, on the same measurements, refutes (bisection).  Near-miss false
variants sit at about twice that deviation (:data:`NEAR_MISS`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

__all__ = ["Verdict", "STATISTICAL", "exit_code", "RULES", "NEAR_MISS", "FAMILY_LEVEL", "bonferroni_z", "Decision", "Resolution", "AsymptoticPoint", "equivalence", "one_sided",
           "sign", "asymptotic", "extend_grid", "combine", "combined", "resolution",
           "two_sided_resolution"]

class Verdict(str, enum.Enum):
    """Every verdict the project gives, with its CLI exit code and its meaning.

    Statistical rules (this module) say ``holds`` / ``fails`` / ``inconclusive``; the prover
    (certified ball arithmetic on a whole domain) says ``proved`` / ``refuted`` / ``undecided``.  A
    member compares equal to its text (``Verdict.HOLDS == "holds"``), so records keep plain strings.
    """

    HOLDS = "holds"
    FAILS = "fails"
    INCONCLUSIVE = "inconclusive"
    PROVED = "proved"
    REFUTED = "refuted"
    UNDECIDED = "undecided"

    @property
    def exit_code(self) -> int:
        """0 holds or proved, 1 fails or refuted, 3 inconclusive or undecided (README, exit codes)."""
        return {"holds": 0, "proved": 0, "fails": 1, "refuted": 1}.get(self.value, 3)

    @property
    def passes(self) -> bool:
        return self.value in ("holds", "proved")

    @property
    def refutes(self) -> bool:
        return self.value in ("fails", "refuted")

    @property
    def meaning(self) -> str:
        return _MEANINGS[self.value]

    def __str__(self) -> str:
        return self.value


_MEANINGS = {
    "holds": "shown by the claim's stated rule: the interval lies inside the margin or beyond the bound",
    "fails": "refuted by the claim's stated rule: the interval lies wholly on the wrong side",
    "inconclusive": "the rule decides neither way (the interval straddles the margin or bound)",
    "proved": "certified by ball arithmetic on the whole stated domain",
    "refuted": "a certified counterexample: enclosures put the quantity strictly on the wrong side",
    "undecided": "the prover's budget ended with boxes of the domain decided neither way",
}
STATISTICAL = (Verdict.HOLDS.value, Verdict.FAILS.value, Verdict.INCONCLUSIVE.value)


def exit_code(verdict: str) -> int:
    """The CLI exit code of a verdict text (:attr:`Verdict.exit_code`)."""
    return Verdict(verdict).exit_code


RULES = ("equivalence", "one-sided", "sign", "asymptotic")
NEAR_MISS = 2.0  # false variants sit about NEAR_MISS resolutions away from the claim
FAMILY_LEVEL = 1e-3  # family-wise error of the Monte Carlo intervals within one claim (Bonferroni)


@dataclass(frozen=True)
class Decision:
    """A rule's verdict on one comparison, with a one-line account of what was compared."""

    rule: str
    verdict: str
    detail: str = ""

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {self.rule!r}")
        if self.verdict not in STATISTICAL:
            raise ValueError(f"verdict must be holds, fails or inconclusive, got {self.verdict!r}")

    @property
    def refutes(self) -> bool:
        return self.verdict == "fails"


def bonferroni_z(tests: int, family_level: float = FAMILY_LEVEL) -> float:
    """Normal quantile of each of ``tests`` two-sided intervals at family-wise level ``family_level``:
    ``z_{1 - family_level / (2 tests)}``."""
    from scipy import stats

    return float(stats.norm.ppf(1 - family_level / (2 * max(tests, 1))))


def _interval(low: float, high: float) -> tuple[float, float]:
    low, high = float(low), float(high)
    if math.isnan(low) or math.isnan(high):
        raise ValueError("interval endpoints must not be NaN")
    if low > high:
        raise ValueError(f"interval [{low:g}, {high:g}] is reversed")
    return low, high


def equivalence(low: float, high: float, margin: float) -> Decision:
    """TOST on the interval ``[low, high]`` of ``measured - theory``: holds iff
    ``-margin <= low`` and ``high <= margin``; fails iff ``high < -margin`` or ``low > margin``."""
    low, high = _interval(low, high)
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    if -margin <= low and high <= margin:
        verdict = "holds"
    elif high < -margin or low > margin:
        verdict = "fails"
    else:
        verdict = "inconclusive"
    return Decision("equivalence", verdict, f"[{low:.4g}, {high:.4g}] vs +-{margin:.3g}")


def one_sided(low: float, high: float, bound: float, relation: str = "<=") -> Decision:
    """``measured <relation> bound`` with ``measured`` in ``[low, high]``: for ``<=`` holds iff
    ``high <= bound`` and fails iff ``low > bound``; for ``>=`` holds iff ``low >= bound`` and fails
    iff ``high < bound``."""
    low, high = _interval(low, high)
    if relation == "<=":
        verdict = "holds" if high <= bound else ("fails" if low > bound else "inconclusive")
    elif relation == ">=":
        verdict = "holds" if low >= bound else ("fails" if high < bound else "inconclusive")
    else:
        raise ValueError(f"relation must be '<=' or '>=', got {relation!r}")
    return Decision("one-sided", verdict, f"[{low:.4g}, {high:.4g}] {relation} {bound:.4g}")


def sign(low: float, high: float, expected: int, margin: float = 0.0) -> Decision:
    """Direction of an effect with interval ``[low, high]``: holds iff ``expected * x > margin`` on
    the whole interval; fails iff ``expected * x < -margin`` on the whole interval."""
    low, high = _interval(low, high)
    if expected not in (+1, -1):
        raise ValueError(f"expected sign must be +1 or -1, got {expected!r}")
    lo, hi = (low, high) if expected > 0 else (-high, -low)
    verdict = "holds" if lo > margin else ("fails" if hi < -margin else "inconclusive")
    side = ">" if expected > 0 else "<"
    return Decision("sign", verdict, f"[{low:.4g}, {high:.4g}] {side} 0 (margin {margin:.3g})")


@dataclass(frozen=True)
class AsymptoticPoint:
    """One point of an asymptotic sequence: ``distance`` to the law (e.g. ``w*/law - 1``) with its
    numerical interval ``[low, high]``, and the derived next-order term ``next_order`` predicted for
    that distance at this point."""

    x: float
    low: float
    high: float
    next_order: float


def asymptotic(points: Sequence[AsymptoticPoint], margin: float, *, follow: float = 0.5,
               floor: float = 0.1) -> Decision:
    """``distance -> 0`` along increasing ``x`` at the derived next-order rate.

    Let ``D_i`` be the distance interval and ``T_i`` the derived next-order term at point ``i``.
    *In range*: ``|T_last| < margin``.
    *Follows the rate*: at the last two points ``|D_i - T_i| <= follow max(|T_i|, floor margin)`` (the
    measured distance is the next-order term up to a smaller remainder, so it shrinks as the derivation
    says; where the derived term vanishes or is below ``floor`` margins, the remainder is held to
    ``follow floor margin``, the scale below which the rule resolves nothing).
    Holds iff in range, the rate is followed and ``D_last`` lies within ``+-margin``; fails iff in
    range and ``D_last - T_last`` lies wholly outside ``+-margin`` (converges elsewhere); otherwise
    inconclusive (the detail says "not yet in range" when ``|T_last| >= margin``).
    """
    if len(points) < 2:
        raise ValueError("the asymptotic rule needs at least two points")
    last = points[-1]
    in_range = abs(last.next_order) < margin
    follows = all(_within(p.low - p.next_order, p.high - p.next_order,
                          follow * max(abs(p.next_order), floor * margin)) for p in points[-2:])
    residual_low, residual_high = last.low - last.next_order, last.high - last.next_order
    if in_range and follows and _within(last.low, last.high, margin):
        verdict = "holds"
    elif in_range and (residual_high < -margin or residual_low > margin):
        verdict = "fails"
    else:
        verdict = "inconclusive"
    state = "in range" if in_range else "not yet in range"
    return Decision("asymptotic", verdict,
                    f"distance [{last.low:.3g}, {last.high:.3g}] at x = {last.x:.3g}, next-order term "
                    f"{last.next_order:.3g} ({state}, margin {margin:.3g}); follows the derived rate: {follows}")


def _within(low: float, high: float, margin: float) -> bool:
    return -margin <= low and high <= margin


def extend_grid(grid: Sequence[float], next_order: Callable[[float], float], margin: float, *,
                factor: float, x_max: float, reach: float = 0.5) -> list[float]:
    """``grid`` extended by multiplying its last point by ``factor`` until the derived next-order term
    ``|next_order(x)|`` is below ``reach * margin`` or ``x`` would pass ``x_max``."""
    out = [float(x) for x in grid]
    while abs(next_order(out[-1])) >= reach * margin and out[-1] * factor <= x_max:
        out.append(out[-1] * factor)
    return out


def combined(rule: str, decisions: Sequence[Decision]) -> Decision:
    """One decision from several of the same ``rule`` (:func:`combine`); the detail names the count and
    the first comparison that decided (failing, else inconclusive, else holding)."""
    verdict = combine(decisions)
    first = next((d for d in decisions if d.verdict == verdict), None)
    detail = f"{len(decisions)} comparisons, {verdict}" + (f"; e.g. {first.detail}" if first else "")
    return Decision(rule, verdict, detail)


def combine(verdicts) -> str:
    """``fails`` if any fails, else ``inconclusive`` if any is, else ``holds`` (empty: inconclusive)."""
    verdicts = [v.verdict if isinstance(v, Decision) else v for v in verdicts]
    if not verdicts:
        return "inconclusive"
    if "fails" in verdicts:
        return "fails"
    if "inconclusive" in verdicts:
        return "inconclusive"
    return "holds"


@dataclass(frozen=True)
class Resolution:
    """The smallest deviation ``value`` of ``parameter`` that a claim's rule refutes, bracketed by
    ``[low, high]`` (``value = high``, the conservative end); ``value = inf`` if even ``limit`` was not
    refuted."""

    parameter: str
    value: float
    low: float
    high: float
    limit: float
    evaluations: int = 0
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return math.isfinite(self.value)

    def near_miss(self, factor: float = NEAR_MISS) -> float:
        """The deviation at which a near-miss false variant sits: ``factor`` resolutions."""
        if not self.resolved:
            raise ValueError(f"{self.parameter}: not resolved up to {self.limit:g}; no near miss to place")
        return factor * self.value

    def to_dict(self) -> dict:
        value = self.value if math.isfinite(self.value) else None
        return {"parameter": self.parameter, "value": value, "low": self.low,
                "high": self.high if math.isfinite(self.high) else None, "limit": self.limit,
                "evaluations": self.evaluations, "note": self.note, **self.extra}


def two_sided_resolution(refutes: Callable[[float], bool], parameter: str, *, start: float,
                         limit: float) -> Resolution:
    """The larger of the resolutions for ``+delta`` and ``-delta`` (both sides must be resolved for the
    claim to be); ``extra`` keeps each side's value."""
    up = resolution(lambda x: refutes(+x), parameter, start=start, limit=limit)
    down = resolution(lambda x: refutes(-x), parameter, start=start, limit=limit)
    worst = up if up.value >= down.value else down
    return Resolution(parameter, worst.value, worst.low, worst.high, limit, up.evaluations + down.evaluations,
                      "larger of the + and - sides", {"plus": up.to_dict()["value"], "minus": down.to_dict()["value"]})


def resolution(refutes: Callable[[float], bool], parameter: str, *, start: float, limit: float,
               rel_tol: float = 0.1, max_steps: int = 40, note: str = "") -> Resolution:
    """Smallest deviation ``delta`` in ``(0, limit]`` with ``refutes(delta)`` true, assuming the rule is
    monotone in ``delta`` (a larger deviation is refuted if a smaller one is).

    Doubling from ``start`` brackets the threshold, then geometric bisection narrows the bracket
    ``(low, high]`` to ``high / low <= 1 + rel_tol``.  ``refutes(delta)`` must run the claim's own rule on
    the claim's own measurements with the claimed value shifted by ``delta``.
    """
    if not 0 < start <= limit:
        raise ValueError(f"need 0 < start <= limit, got start={start!r}, limit={limit!r}")
    calls = 0
    low, high = 0.0, start
    while True:
        calls += 1
        if refutes(high):
            break
        low = high
        if high >= limit:
            return Resolution(parameter, math.inf, low, math.inf, limit, calls, note or "not refuted up to the limit")
        high = min(2 * high, limit)
    while calls < max_steps and (low == 0.0 or high / low > 1 + rel_tol):
        mid = math.sqrt(low * high) if low > 0 else high / 4
        if low == 0.0 and mid < start * 1e-6:
            break
        calls += 1
        if refutes(mid):
            high = mid
        else:
            low = mid
    return Resolution(parameter, high, low, high, limit, calls, note)
