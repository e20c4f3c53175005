"""Evidence for a claim: theory against measurement, the decision rule, the verdict.

A claim's measure function (``lipschitz_icl.claims.<group>``) returns an :class:`Outcome`: its
measurements as :class:`Quantity` rows (theory value from ``lipschitz_icl.derivations``, measured
value with its interval from an estimator), the rule as applied, and ``decide``, the claim's rule on
those measurements as a function of the deviations its registry entry names.  The registry
(:mod:`lipschitz_icl.gates.registry`) judges the outcome (:func:`lipschitz_icl.decision.judge`: verdict,
resolutions, pre-specified alternatives on fresh replicates) and completes one frozen
:class:`Evidence` -- one row of ``claims.json`` -- with the registry's statement, scope, status,
design hash and seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from lipschitz_icl.decision import Decision, Verdict, combine

__all__ = ["VERDICTS", "STATUSES", "SCOPES", "Quantity", "Outcome", "Evidence", "combine_verdicts", "plot"]

VERDICTS = tuple(v.value for v in Verdict)
STATUSES = ("confirmatory", "exploratory")
# what a claim is about: the paper's own statement, a textbook lemma its proofs cite, a sharper result of
# this project beyond the paper, or a finding that goes past or against the paper; user bound variants
# are "variant"
SCOPES = ("paper", "lemma", "beyond", "finding")


@dataclass(frozen=True, kw_only=True)
class Quantity:
    """One compared number: ``theory`` vs ``measured`` (interval ``[ci_low, ci_high]``).

    ``symbol`` is its LaTeX symbol, ``setting`` the parameters it was measured at, and ``constant`` marks
    a derived constant for the report's table of theoretical against measured constants."""

    name: str
    theory: float | None = None
    measured: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: str | None = None
    note: str = ""
    symbol: str = ""
    setting: dict = field(default_factory=dict, hash=False)
    constant: bool = False

    @classmethod
    def within(cls, name: str, measured: float, interval: tuple[float, float], **fields) -> Quantity:
        """A row whose ``measured`` value has the interval ``[ci_low, ci_high] = interval``."""
        low, high = interval
        return cls(name=name, measured=measured, ci_low=low, ci_high=high, **fields)

    @classmethod
    def estimated(cls, name: str, estimate, level: float, **fields) -> Quantity:
        """A row of an :class:`~lipschitz_icl.estimate.Estimate`: ``measured`` its value, the interval its
        ``confidence_interval(level)``."""
        return cls.within(name, estimate.value, estimate.confidence_interval(level), **fields)

    @property
    def ratio(self) -> float | None:
        """``measured / theory`` where both exist and theory is non-zero."""
        if self.theory in (None, 0) or self.measured is None:
            return None
        return self.measured / self.theory


def plot(kind: str, x: list, y: list, xlabel: str, ylabel: str, **more) -> dict:
    """An :attr:`Outcome.figure` record for the report: the curve ``y`` along ``x`` drawn as ``kind``
    (``loglog``, ``semilogx``, ``semilogy``, ``scatter``) with its axis labels, and ``more`` keys the report
    reads (``theory_y``, ``y_low``/``y_high``, ``series``, ``title``)."""
    return {"kind": kind, "x": x, "y": y, **more, "xlabel": xlabel, "ylabel": ylabel}


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a measure function returns: ``decide(**deviations) -> Decision`` is the claim's rule on its
    measurements (no argument: the claim itself; the registry's resolution and alternative entries name
    the keyword arguments), ``rule`` the rule as applied (statistic, numbers), ``margin`` the margin as
    applied, and the rows, figure data and further numbers for the report."""

    decide: Callable[..., Decision]
    rule: str
    margin: str = ""
    quantities: tuple[Quantity, ...] = ()
    figure: dict | list | None = None
    extra: dict = field(default_factory=dict)
    points: int | None = None  # a universal statement evaluated at this many points only
    proof: dict | None = None  # the prover's account when the claim is decided by proof


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The record of one claim case (one row of ``claims.json``)."""

    claim_id: str
    verdict: str
    statement: str = ""
    paper_ref: str = ""
    key: str = ""  # registry key <group>.<name> of the claim this record is a case of
    group: str = ""
    scope: str = ""  # one of SCOPES (registry claims) or "variant" (user bound variants)
    status: str = "confirmatory"  # or "exploratory": rule set after seeing data; never counts as the paper
    sharper: str = ""
    params: dict = field(default_factory=dict)  # the case's grid parameters (added to the statement)
    rule_name: str = ""  # one of lipschitz_icl.decision.RULES (or "proof" for the prover)
    rule: str = ""  # the rule as applied: statistic, numbers, grid
    margin: str = ""  # the margin as applied (numbers)
    margin_source: str = ""  # where the margin comes from (a derivation, or the registry's stated reason)
    decision: str = ""  # one line on what decided
    quantities: tuple[Quantity, ...] = ()
    resolution: dict | None = None  # the claim's resolution (its power): Resolution.to_dict()
    resolutions: tuple[dict, ...] = ()  # every resolution searched, the claim's first
    alternatives: tuple[dict, ...] = ()  # AlternativeResult.to_dict() of the pre-specified alternatives
    points: int | None = None  # a universal statement evaluated at this many points only
    proof: dict | None = None  # the prover's account (boxes, undecided share, certificate) when proved
    design_hash: str = ""
    design_fixed: str = ""  # the date its design was locked
    salt: int = 0  # the design's seed salt (a changed design draws fresh data)
    seed: int | None = None  # replicate index of a stochastic claim (child `seed` of its SeedSequence)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU seconds of the process while the claim ran (every thread; time.process_time)
    figure: dict | list | None = None  # optional plot data for the report: {kind, x, y, ...}
    extra: dict = field(default_factory=dict)  # further numbers a command or the report may show

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.scope not in ("", "variant", *SCOPES):
            raise ValueError(f"scope must be one of {SCOPES} or 'variant', got {self.scope!r}")

    @property
    def power(self) -> tuple[int, int]:
        """``(ruled out, total)`` over the pre-specified alternatives."""
        return sum(a["ruled_out"] for a in self.alternatives), len(self.alternatives)

    @property
    def resolved(self) -> bool:
        """The claim's rule refutes some deviation within its search limit (its power is shown)."""
        return (
            isinstance(self.resolution, dict)
            and self.resolution.get("value") is not None
            and math.isfinite(self.resolution["value"])
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        for q, raw in zip(self.quantities, out["quantities"]):
            raw["ratio"] = q.ratio
        out["power"] = list(self.power)
        return _finite(out)


def _finite(value):
    """JSON-safe copy: infinite floats become the strings ``"inf"``/``"-inf"``; NaN is refused (a failed
    measurement never reaches claims.json, README "Numbers in JSON"); tuples become lists."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise ValueError("evidence holds NaN (a failed measurement); claims.json never carries NaN")
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def combine_verdicts(verdicts) -> str:
    """``fails`` if any fails, else ``inconclusive`` if any is, else ``holds`` (see
    :func:`lipschitz_icl.decision.combine`)."""
    return combine(verdicts)
