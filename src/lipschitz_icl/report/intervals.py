"""What a case's intervals are: their confidence level, or the numerical accuracy they bound.

The report prints a measurement as ``value(uu)``, ``uu`` the half-width of its interval in units of the last
digits; the reader needs the interval's meaning beside it.  A record states it in its rule's words (the
registry's rule text, as the gate ran it); :func:`interval_kind` reads it from there:

* ``level 0.999875`` or ``Clopper-Pearson at 0.9999``: a confidence interval at that level;
* ``z = 3.76``: a normal interval ``+- z se``, of two-sided level ``2 Phi(z) - 1``;
* ``0.99 t-interval`` / ``0.99 Welch interval``: a t (Welch) confidence interval at that level;
* ``level 0.001`` (a level below 1/2): Bonferroni intervals at that family-wise error;
* ``stated accuracy`` / ``stated error(s)`` / ``interval: rounding`` / ``interval: one grid step``: a bound on
  the numerical error of an exact computation (quadrature, root finding, rounding), not a confidence level.

A rule that states none of these gives ``""`` (the report then says nothing it cannot source).
"""

from __future__ import annotations

import math
import re

__all__ = ["interval_kind", "interval_short", "normal_level"]

_LEVEL = re.compile(r"\b(?:level|Clopper-Pearson at) (0\.\d+)")
_Z = re.compile(r"\bz = (\d+(?:\.\d+)?)")
_T = re.compile(r"\b(0\.\d+) (Welch |)(?:t-)?intervals?")
_ACCURACY = re.compile(r"stated (?:accuracy|errors?)|interval: (?:rounding|one grid step)")


def normal_level(z: float) -> float:
    """The two-sided level ``2 Phi(z) - 1 = erf(z / sqrt 2)`` of the interval ``+- z se``."""
    return math.erf(z / math.sqrt(2.0))


def _percent(level: float, derived: bool = False) -> str:
    """A level as a percentage: as stated (``0.999875`` -> ``99.9875%``), or, ``derived`` from a z, to two
    significant digits of the miss ``1 - level`` (``0.999830`` -> ``99.983%``)."""
    if not derived:
        return f"{100 * level:.10f}".rstrip("0").rstrip(".") + "%"
    miss = 100 * (1.0 - level)
    decimals = max(0, -math.floor(math.log10(miss)) + 1) if miss > 0 else 0
    return f"{100 * level:.{decimals}f}%"


def interval_kind(record: dict) -> str:
    """The meaning of the intervals of ``record`` in words (module docstring), ``""`` when its rule states
    none."""
    rule = str(record.get("rule") or "")
    found = []
    for m in _LEVEL.finditer(rule):
        level = float(m.group(1))
        found.append(
            f"Bonferroni intervals at family-wise error {level:g}" if level < 0.5 else f"{_percent(level)} confidence"
        )
    for m in _T.finditer(rule):
        found.append(f"{_percent(float(m.group(1)))} confidence ({'Welch' if m.group(2) else 't'})")
    for m in _Z.finditer(rule):
        z = float(m.group(1))
        found.append(f"{_percent(normal_level(z), derived=True)} confidence (z = {z:g})")
    if _ACCURACY.search(rule):
        found.append("a bound on the numerical error, not a confidence level")
    return "; ".join(dict.fromkeys(found))


def interval_short(record: dict) -> str:
    """The first meaning :func:`interval_kind` finds, in a few words for a number printed in running text
    (``99.983% interval``, ``numerical-error bound``, ``family-wise error 0.001``); ``""`` for none."""
    kind = interval_kind(record).split("; ")[0]
    if not kind:
        return ""
    if kind.startswith("a bound on the numerical error"):
        return "numerical-error bound"
    if kind.startswith("Bonferroni"):
        return kind.replace("Bonferroni intervals at ", "")
    return kind.split(" confidence")[0] + " interval"
