"""Evidence for a claim: theory against measurement, the decision rule, the verdict.

Every gate in ``verify/`` builds one :class:`Evidence` per claim case of the registry
(:mod:`lipschitz_icl.registry`): the claim's id and paper reference, its statement and status
(``confirmatory`` or ``exploratory``), the rule that decides it (one of
:data:`lipschitz_icl.decision.RULES`, with its margin and where the margin comes from), one
:class:`Quantity` per compared number (theory value from ``lipschitz_icl/derivations/``, measured value with its
interval from an estimator), the verdict in {holds, fails, inconclusive}, the claim's *resolution*
(the smallest deviation of its natural parameter its own rule refutes) and its near-miss *false
variants* (about two resolutions away, run through the same machinery), which must all be refuted for
the gate to have power.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .decision import NEAR_MISS, Verdict, combine

__all__ = ["VERDICTS", "STATUSES", "SCOPES", "Quantity", "FalseVariant", "Evidence", "combine_verdicts"]

VERDICTS = tuple(v.value for v in Verdict)
STATUSES = ("confirmatory", "exploratory")
# what a claim is about: the paper's own statement, a textbook lemma its proofs cite, a sharper result of
# this project beyond the paper, or a finding that goes past or against the paper; user bound variants
# are "variant"
SCOPES = ("paper", "lemma", "beyond", "finding")


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
    distance: float | None = None  # how far from the claim, in resolutions (near misses: about 2)

    @property
    def refuted(self) -> bool:
        return self.verdict == "fails"

    @classmethod
    def decided(cls, name: str, decision, distance: float | None = NEAR_MISS) -> "FalseVariant":
        """A false variant decided by a :class:`lipschitz_icl.decision.Decision` (``distance`` in
        resolutions; near misses sit at :data:`lipschitz_icl.decision.NEAR_MISS`, the default)."""
        return cls(name, decision.verdict, decision.detail, distance)


@dataclass
class Evidence:
    """The record of one claim (one row of ``claims.json``)."""

    claim_id: str = ""
    paper_ref: str = ""
    statement: str = ""
    rule: str = ""  # the rule as applied: statistic, margin value, grid
    quantities: list[Quantity] = field(default_factory=list)
    verdict: str = "inconclusive"
    seconds: float = 0.0
    false_variants: list[FalseVariant] = field(default_factory=list)
    figure: dict | None = None  # optional plot data for the report: {kind, x, y, ...}
    extra: dict = field(default_factory=dict)  # further numbers a command or the report may show
    rule_name: str = ""  # one of lipschitz_icl.decision.RULES
    status: str = "confirmatory"  # or "exploratory": rule set after seeing data; never counts as the paper
    margin: str = ""  # the margin as applied (numbers), e.g. "+-0.01 on w*/law - 1"
    margin_source: str = ""  # where the margin comes from (a derivation, or the registry's stated reason)
    resolution: dict | None = None  # lipschitz_icl.decision.Resolution.to_dict()
    seed: int | None = None  # replicate index of a stochastic claim (child `seed` of its SeedSequence)
    group: str = ""  # registry group (thm34, thm35, linear, thm44, concentration, variants)
    sharper: str = ""  # the project's sharper statement, where it has one
    key: str = ""  # registry key <group>.<name> of the claim this record is a case of
    scope: str = ""  # one of SCOPES (registry claims) or "variant" (user bound variants)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.scope not in ("", "variant", *SCOPES):
            raise ValueError(f"scope must be one of {SCOPES} or 'variant', got {self.scope!r}")

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
    """JSON-safe copy: infinite floats become the strings ``"inf"``/``"-inf"``; NaN is refused (a failed
    measurement never reaches claims.json, README "Numbers in JSON")."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise ValueError("evidence holds NaN (a failed measurement); claims.json never carries NaN")
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def combine_verdicts(verdicts) -> str:
    """``fails`` if any fails, else ``inconclusive`` if any is, else ``holds`` (see
    :func:`lipschitz_icl.decision.combine`)."""
    return combine(verdicts)
