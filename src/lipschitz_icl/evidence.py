"""Evidence for a claim: theory against measurement, the decision rule, the verdict.

Every gate in ``verify/`` builds one :class:`Evidence` per claim it checks: the claim's id and paper
reference, its statement, the rule that decides it (statistic, tolerance and where the tolerance comes
from), one :class:`Quantity` per compared number (theory value from ``derivations/``, measured value
with its interval from an estimator) and the verdict in {holds, fails, inconclusive}.  Each claim also
carries the outcome of its *false variants* (a wrong exponent, constant, sign or direction run through
the same machinery), which must all be refuted for the gate to have power.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

__all__ = ["VERDICTS", "Quantity", "FalseVariant", "Evidence", "combine_verdicts", "interval_verdict"]

VERDICTS = ("holds", "fails", "inconclusive")


@dataclass
class Quantity:
    """One compared number: ``theory`` vs ``measured`` (interval ``[ci_low, ci_high]``)."""

    name: str
    theory: float | None
    measured: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: str | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """``measured / theory`` where both exist and theory is non-zero."""
        if self.theory in (None, 0) or self.measured is None:
            return None
        return self.measured / self.theory


@dataclass
class FalseVariant:
    """A deliberately false version of the claim and the verdict the same machinery gave it."""

    name: str
    verdict: str
    detail: str = ""

    @property
    def refuted(self) -> bool:
        return self.verdict == "fails"


@dataclass
class Evidence:
    """The record of one claim (one row of ``claims.json``)."""

    claim_id: str
    paper_ref: str
    statement: str
    rule: str
    quantities: list[Quantity] = field(default_factory=list)
    verdict: str = "inconclusive"
    seconds: float = 0.0
    false_variants: list[FalseVariant] = field(default_factory=list)
    figure: dict | None = None  # optional plot data for the report: {kind, x, y, ...}
    extra: dict = field(default_factory=dict)  # further numbers a command or the report may show

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def power(self) -> tuple[int, int]:
        """``(refuted, total)`` over the false variants."""
        return sum(v.refuted for v in self.false_variants), len(self.false_variants)

    def to_dict(self) -> dict:
        out = asdict(self)
        for q, raw in zip(self.quantities, out["quantities"]):
            raw["ratio"] = q.ratio
        out["power"] = list(self.power)
        return _finite(out)


def _finite(value):
    """JSON-safe copy: non-finite floats become strings ('inf', '-inf', 'nan')."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def combine_verdicts(verdicts) -> str:
    """``fails`` if any fails, else ``inconclusive`` if any is, else ``holds`` (empty: inconclusive)."""
    verdicts = list(verdicts)
    if not verdicts:
        return "inconclusive"
    if "fails" in verdicts:
        return "fails"
    if "inconclusive" in verdicts:
        return "inconclusive"
    return "holds"


def interval_verdict(value: float, low: float, high: float, *, resolution: float | None = None) -> str:
    """``holds`` when ``value`` lies in ``[low, high]``; ``fails`` when outside; ``inconclusive`` when
    the interval is wider than ``resolution`` (too uncertain to decide anything)."""
    if resolution is not None and high - low > resolution:
        return "inconclusive"
    return "holds" if low <= value <= high else "fails"
