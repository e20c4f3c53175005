"""The decision vocabulary: the four statistical rules every claim and every bound variant is judged by,
and ``proof``, the prover's verdict on a whole domain (:mod:`lipschitz_icl.prover.search`).

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
``proof``        a deterministic statement certified by ball arithmetic on its whole domain: proved (every
                 box decided), refuted (a certified counterexample), otherwise undecided.

:func:`resolution` measures what a rule can resolve: the smallest deviation of a claim's natural
parameter that the same rule, on the same measurements, refutes (bisection): the claim's power, beside the
pre-specified alternatives that :func:`judge` decides by the same rule.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Verdict",
    "STATISTICAL",
    "PROVER",
    "exit_code",
    "RULES",
    "bonferroni_z",
    "Decision",
    "Resolution",
    "AsymptoticPoint",
    "equivalence",
    "shifted_equivalence",
    "one_sided",
    "sign",
    "asymptotic",
    "extend_grid",
    "combine",
    "combined",
    "any_of",
    "unless",
    "labelled",
    "signs",
    "resolution",
    "two_sided_resolution",
    "ResolutionSpec",
    "Alternative",
    "AlternativeResult",
    "Judgement",
    "judge",
]


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
PROVER = (Verdict.PROVED.value, Verdict.REFUTED.value, Verdict.UNDECIDED.value)


def exit_code(verdict: str) -> int:
    """The CLI exit code of a verdict text (:attr:`Verdict.exit_code`)."""
    return Verdict(verdict).exit_code


RULES = ("equivalence", "one-sided", "sign", "asymptotic", "proof")


@dataclass(frozen=True)
class Decision:
    """A rule's verdict on one comparison, with a one-line account of what was compared.  The statistical
    rules say holds/fails/inconclusive; ``proof`` (the prover on a whole domain) says
    proved/refuted/undecided."""

    rule: str
    verdict: str
    detail: str = ""

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {self.rule!r}")
        allowed = STATISTICAL if self.rule != "proof" else PROVER
        if self.verdict not in allowed:
            raise ValueError(f"verdict of rule {self.rule} must be one of {allowed}, got {self.verdict!r}")

    @property
    def refutes(self) -> bool:
        return Verdict(self.verdict).refutes


def bonferroni_z(tests: int, family_level: float) -> float:
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


def shifted_equivalence(interval, centre: float, accuracy: float, tolerance: float) -> Decision:
    """``equivalence`` of a measured change (its ``interval``) with a derived ``centre`` known to
    ``+- accuracy``: the interval of the difference, widened by the accuracy, within ``+- tolerance``."""
    low, high = interval
    return equivalence(low - centre - accuracy, high - centre + accuracy, tolerance)


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


def asymptotic(
    points: Sequence[AsymptoticPoint], margin: float, *, follow: float = 0.5, floor: float = 0.1
) -> Decision:
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
    follows = all(
        _within(p.low - p.next_order, p.high - p.next_order, follow * max(abs(p.next_order), floor * margin))
        for p in points[-2:]
    )
    residual_low, residual_high = last.low - last.next_order, last.high - last.next_order
    if in_range and follows and _within(last.low, last.high, margin):
        verdict = "holds"
    elif in_range and (residual_high < -margin or residual_low > margin):
        verdict = "fails"
    else:
        verdict = "inconclusive"
    state = "in range" if in_range else "not yet in range"
    return Decision(
        "asymptotic",
        verdict,
        f"distance [{last.low:.3g}, {last.high:.3g}] at x = {last.x:.3g}, next-order term "
        f"{last.next_order:.3g} ({state}, margin {margin:.3g}); follows the derived rate: {follows}",
    )


def _within(low: float, high: float, margin: float) -> bool:
    return -margin <= low and high <= margin


def extend_grid(
    grid: Sequence[float],
    next_order: Callable[[float], float],
    margin: float,
    *,
    factor: float,
    x_max: float,
    reach: float = 0.5,
) -> list[float]:
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


def any_of(rule: str, decisions: Sequence[Decision]) -> Decision:
    """A disjunction ("for some one of these"): holds if any holds, fails if every one fails."""
    verdicts = [d.verdict for d in decisions]
    verdict = (
        "holds" if "holds" in verdicts else ("fails" if verdicts and set(verdicts) == {"fails"} else "inconclusive")
    )
    return Decision(rule, verdict, f"any of {len(verdicts)}: " + ", ".join(verdicts))


def labelled(label: str, dec: Decision) -> Decision:
    """``dec`` with ``label`` in front of its detail (so a combined detail says which comparison decided)."""
    return Decision(dec.rule, dec.verdict, f"{label}: {dec.detail}")


def signs(intervals, expected: int, shift: float = 0.0) -> list[Decision]:
    """:func:`sign` (``expected`` side of zero) on each ``(centre, half-width)`` interval moved by ``shift``."""
    return [sign(c - h + shift, c + h + shift, expected) for c, h in intervals]


def unless(dec: Decision, reason: str) -> Decision:
    """``dec``, except that ``holds`` becomes ``inconclusive`` when ``reason`` (non-empty) says why the
    measurement cannot support it (a search at its edge, a noise floor too high); the detail starts with it."""
    if reason and dec.verdict == "holds":
        return Decision(dec.rule, "inconclusive", f"{reason}; {dec.detail}")
    return dec


def combine(verdicts) -> str:
    """``fails`` if any fails, else ``inconclusive`` if any is, else ``holds`` (empty: inconclusive); the
    prover's verdicts in the same order (``refuted``, ``undecided``, ``proved`` when all are proved)."""
    verdicts = [Verdict(v.verdict if isinstance(v, Decision) else v) for v in verdicts]
    if not verdicts:
        return "inconclusive"
    for test in (lambda v: v.refutes, lambda v: not v.passes):
        first = next((v for v in verdicts if test(v)), None)
        if first is not None:
            return first.value
    return "proved" if all(v is Verdict.PROVED for v in verdicts) else "holds"


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

    def to_dict(self) -> dict:
        value = self.value if math.isfinite(self.value) else None
        return {
            "parameter": self.parameter,
            "value": value,
            "low": self.low,
            "high": self.high if math.isfinite(self.high) else None,
            "limit": self.limit,
            "evaluations": self.evaluations,
            "note": self.note,
            **self.extra,
        }


def two_sided_resolution(
    refutes: Callable[[float], bool], parameter: str, *, start: float, limit: float, rel_tol: float = 0.1
) -> Resolution:
    """The larger of the resolutions for ``+delta`` and ``-delta`` (both sides must be resolved for the
    claim to be); ``extra`` keeps each side's value."""
    up = resolution(lambda x: refutes(+x), parameter, start=start, limit=limit, rel_tol=rel_tol)
    down = resolution(lambda x: refutes(-x), parameter, start=start, limit=limit, rel_tol=rel_tol)
    worst = up if up.value >= down.value else down
    return Resolution(
        parameter,
        worst.value,
        worst.low,
        worst.high,
        limit,
        up.evaluations + down.evaluations,
        "larger of the + and - sides",
        {"plus": up.to_dict()["value"], "minus": down.to_dict()["value"]},
    )


def resolution(
    refutes: Callable[[float], bool],
    parameter: str,
    *,
    start: float,
    limit: float,
    rel_tol: float = 0.1,
    max_steps: int = 40,
    note: str = "",
) -> Resolution:
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


# ----------------------------------------------------------------------------- one claim's judgement
@dataclass(frozen=True, kw_only=True)
class ResolutionSpec:
    """How a claim's resolution is searched (registry ``[[claim.resolution]]``): the deviation ``x`` of
    the natural ``parameter`` is passed to the claim's decide function as keyword ``arg`` and bisected on
    ``[start, limit]``, on both signs when ``two_sided``; ``meaning`` says in words what the value is,
    ``symbol`` is its LaTeX symbol."""

    parameter: str
    meaning: str
    symbol: str = ""
    arg: str = "shift"
    start: float
    limit: float
    two_sided: bool = False
    rel_tol: float = 0.1  # the bisection stops when high/low <= 1 + rel_tol

    def search(self, decide: Callable[..., Decision]) -> Resolution:
        """The smallest ``|x|`` whose ``decide(**{arg: x})`` refutes (:func:`resolution`)."""
        refutes = lambda x: decide(**{self.arg: x}).refutes  # noqa: E731
        if self.two_sided:
            res = two_sided_resolution(
                refutes, self.parameter, start=self.start, limit=self.limit, rel_tol=self.rel_tol
            )
        else:
            res = resolution(refutes, self.parameter, start=self.start, limit=self.limit, rel_tol=self.rel_tol)
        return Resolution(
            res.parameter,
            res.value,
            res.low,
            res.high,
            res.limit,
            res.evaluations,
            res.note,
            {**res.extra, "meaning": self.meaning, "symbol": self.symbol, "arg": self.arg},
        )


@dataclass(frozen=True, kw_only=True)
class Alternative:
    """A pre-specified competing statement (registry ``[[claim.alternative]]``): the claim's decide
    function with keyword arguments ``args`` (for example ``{"shift": 0.262}`` for "the ratio is 1.3",
    or ``{"law": "other-class"}``), decided by the same rule on fresh replicates of a stochastic claim."""

    name: str
    statement: str
    args: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True, kw_only=True)
class AlternativeResult:
    """An alternative's decision: ``ruled_out`` when the claim's rule refutes it."""

    name: str
    statement: str
    verdict: str
    detail: str
    fresh: bool  # decided on fresh replicates (a stochastic claim) or on the claim's own deterministic data

    @property
    def ruled_out(self) -> bool:
        return Verdict(self.verdict).refutes

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "statement": self.statement,
            "verdict": self.verdict,
            "detail": self.detail,
            "fresh": self.fresh,
            "ruled_out": self.ruled_out,
        }


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """The main decision, the resolutions (the first is the claim's power) and the alternatives."""

    decision: Decision
    resolutions: tuple[Resolution, ...]
    alternatives: tuple[AlternativeResult, ...]

    @property
    def resolved(self) -> bool:
        return bool(self.resolutions) and self.resolutions[0].resolved


def judge(
    decide: Callable[..., Decision],
    resolutions: Sequence[ResolutionSpec],
    alternatives: Sequence[Alternative] = (),
    fresh: Callable[..., Decision] | None = None,
) -> Judgement:
    """Judge one claim with its own rule: ``decide()`` is the claim, ``decide(**{spec.arg: x})`` the claim
    moved by ``x`` (bisected for each resolution spec), ``fresh(**alt.args)`` (else ``decide``) each
    pre-specified alternative -- ``fresh`` being the same rule on fresh replicates."""
    decide_alt = fresh or decide
    alts = []
    for alt in alternatives:
        dec = decide_alt(**alt.args)
        alts.append(
            AlternativeResult(
                name=alt.name, statement=alt.statement, verdict=dec.verdict, detail=dec.detail, fresh=fresh is not None
            )
        )
    return Judgement(
        decision=decide(), resolutions=tuple(spec.search(decide) for spec in resolutions), alternatives=tuple(alts)
    )
