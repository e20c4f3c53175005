"""Where theory and practice part: one sentence per place, built from the records' numbers.

The derived laws are large-``n`` (or large-``w``) statements; the claims check them where they apply.
A reader of the report also needs to know where they do *not* yet apply at the sizes used in practice.
Each function here reads one claim's records and returns the sentence that says so, with the numbers
from ``claims.json`` (``None`` when the records do not show a gap):

* :func:`window_law_at_practical_sizes`: how far ``w*`` is from ``C_d Lambda^alpha`` at ``Lambda <= 1e4``
  (paper Figure 1's range), where the derived next-order term matches the measured gap and where it
  does not, from the window law's per-``n`` series;
* :func:`two_sided_constants`: Theorem 3.4's two-sided constants ``c_lo``, ``c_hi`` (the min and max of
  ``w*/Lambda^alpha`` over the ``n`` range of the grid, each with its interval from each ``w*``'s), per case;
* :func:`dimension_limit`: the low-rank error's distance to its ``d``-free limit at each ``d``.

:data:`REMARKS` maps a claim key to its function; the report prints the sentence in the claim's section.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lipschitz_icl.report.latex import as_float
from lipschitz_icl.report.scope import case_params, setting_text

__all__ = ["REMARKS", "remarks", "TwoSided", "two_sided_constants", "PRACTICAL_LAMBDA"]

PRACTICAL_LAMBDA = 1e4  # the largest n L^2/sigma^2 of the paper's Figure 1 (n <= 1e4 at L, sigma of order 1)


def _label(record: dict) -> str:
    return ", ".join(setting_text(k, [v]) for k, v in case_params(record).items())


AGREES = 0.1  # the derived next-order term "accounts for" the gap where it is within 10% of it


def _series(record: dict) -> list[tuple[float, float, float | None]]:
    """``(Lambda, w*/(C_d Lambda^alpha), derived next-order term k w0^-q or None)`` along the grid of ``n``."""
    extra = record.get("extra") or {}
    rho, ratio, term = extra.get("rho"), extra.get("ratio"), extra.get("next_order")
    if not (isinstance(rho, list) and isinstance(ratio, list) and len(rho) == len(ratio)):
        return []
    terms = term if isinstance(term, list) and len(term) == len(rho) else [None] * len(rho)
    return [
        (float(x), float(y), float(t) if isinstance(t, (int, float)) else None)
        for x, y, t in zip(rho, ratio, terms)
        if isinstance(x, (int, float)) and isinstance(y, (int, float))
    ]


def _agrees_from(series: list) -> float | None:
    """The smallest ``Lambda`` of the grid from which on the measured gap ``w*/(C_d Lambda^alpha) - 1`` is
    within :data:`AGREES` of the derived term at every larger ``Lambda`` (``None``: nowhere, or no term)."""
    found = None
    for x, y, t in reversed(series):
        if t is None or t == 0 or abs((y - 1) - t) > AGREES * abs(t):
            break
        found = x
    return found


def window_law_at_practical_sizes(records: list) -> str | None:
    """What the window law's series show (ASCII math): ``w*/(C_d Lambda^alpha)`` at ``Lambda <=
    PRACTICAL_LAMBDA`` (its range over the cases), the derived next-order curve ``1 + k w0^-q`` there, from
    which ``Lambda`` on that term matches the measured gap to :data:`AGREES`, and the cases where it never
    does (the ratio gap/term at the largest ``Lambda``)."""
    worst: list[tuple[float, float, float, str]] = []
    curve: list[float] = []
    agree: list[str] = []
    apart: list[str] = []
    for r in records:
        series = _series(r)
        small = [(x, y, t) for x, y, t in series if x <= PRACTICAL_LAMBDA]
        if small:
            x, y, _ = max(small, key=lambda xyt: abs(xyt[1] - 1))
            worst.append((abs(y - 1), y, x, _label(r)))
            curve.extend(1 + t for _, _, t in small if t is not None)
        terms = [(x, y, t) for x, y, t in series if t]
        if not terms:
            continue
        since = _agrees_from(series)
        if since is not None:
            agree.append(f"{_label(r)} from rho = {since:.0e}")
        else:
            x, y, t = terms[-1]
            apart.append(f"{_label(r)}: {(y - 1) / t:.3g} at rho = {x:.0e}")
    if not worst:
        return None
    worst.sort(reverse=True)
    _, ratio, rho, label = worst[0]
    low, high = min(w[1] for w in worst), max(w[1] for w in worst)
    text = (
        "Where theory and practice part: at the sizes of practice "
        f"(rho <= {PRACTICAL_LAMBDA:.0e}, paper Figure 1's range) "
        f"w*/(C_d rho^alpha) lies between {low:.3g} and {high:.3g} over these cases, farthest from 1 for {label} "
        f"({ratio:.3g} at rho = {rho:.3g}): the leading-order law is reached only as rho grows."
    )
    if curve:
        text += (
            f" The derived next-order curve 1 + k w0^-q is an asymptotic (large-w0) term: there it lies between "
            f"{min(curve):.3g} and {max(curve):.3g}, so it does not account for the gap at these sizes."
        )
    if agree:
        text += (
            f" It matches the measured gap w*/(C_d rho^alpha) - 1 to within {AGREES:.0%} of the term only at larger "
            f"rho: {'; '.join(agree)}."
        )
    if apart:
        text += (
            " It never does for "
            + "; ".join(apart)
            + " (measured gap over derived term at the largest rho: a ratio that stays away from 1 along the grid"
            " means the derived coefficient k misses a part of the same order)."
        )
    return text + " The claim is decided at the largest rho, where that term falls below the margin."


@dataclass
class TwoSided:
    """Theorem 3.4's two-sided constants of one case: ``c_lo <= w*/Lambda^alpha <= c_hi`` over the grid, each
    ``(value, low, high)``: the min (max) over the grid and its interval from each ``w*``'s interval."""

    number: int
    label: str
    alpha: float | None
    c_d: float | None
    c_lo: tuple[float, float, float]
    c_hi: tuple[float, float, float]
    n_range: str


def _with_interval(quantity: dict | None) -> tuple[float, float, float] | None:
    """``(measured, ci_low, ci_high)`` of ``quantity`` (an open end of the interval is ``inf``), ``None``
    without it or without a value or either end."""
    if quantity is None:
        return None
    value, low, high = (as_float(quantity.get(k)) for k in ("measured", "ci_low", "ci_high"))
    if value is None or low is None or high is None:
        return None
    return value, low, high


def two_sided_constants(records: list, numbers: dict) -> list[TwoSided]:
    """The two-sided constants of every window-law case: its quantities ``c_lo: min over the grid ...`` and
    ``c_hi: max over the grid ...`` of ``w*/Lambda^alpha``, each a value with its interval (a case without both
    is left out); the ``n`` range from the note ``over n in [...]``."""
    out = []
    for r in records:
        named = {str(q.get("name", "")).split(":")[0]: q for q in r.get("quantities", []) if isinstance(q, dict)}
        c_lo, c_hi = _with_interval(named.get("c_lo")), _with_interval(named.get("c_hi"))
        if c_lo is None or c_hi is None:
            continue
        derived = (r.get("extra") or {}).get("derived") or {}
        m = re.search(r"\[([^\]]+)\]", str(named["c_lo"].get("note", "")))
        out.append(
            TwoSided(
                numbers.get(r["claim_id"], 0),
                _label(r),
                derived.get("alpha") if isinstance(derived.get("alpha"), (int, float)) else None,
                derived.get("C") if isinstance(derived.get("C"), (int, float)) else None,
                c_lo,
                c_hi,
                m.group(1) if m else "",
            )
        )
    return out


def dimension_limit(records: list) -> str | None:
    """``L_P(d)/L_P(inf)`` at each ``d`` of the low-rank dimension claim (ASCII math)."""
    parts = []
    for r in records:
        found = []
        for q in r.get("quantities", []):
            m = re.match(r"^B: L_P\(d=(\d+)\)/L_P\(inf\) - 1", str(q.get("name", ""))) if isinstance(q, dict) else None
            if m and isinstance(q.get("measured"), (int, float)):
                found.append(f"{1 + q['measured']:.2f} at d = {m.group(1)}")
        if found:
            parts.append(f"{_label(r)}: {', '.join(found)}")
    if not parts:
        return None
    return (
        "Where theory and practice part: L_P(d)/L_P(inf), the low-rank optimal error over its d-free limit, is "
        + "; ".join(parts)
        + ". The error still grows with d toward that limit at these sizes: it follows k, not d, only as d grows."
    )


def _finite_n_limit_rows(records: list) -> str | None:
    """A limit compared at a finite ``n`` (a quantity named for ``n -> inf`` whose note says where it was
    measured): say where, and the derived next-order term that separates the two."""
    for r in records:
        quantities = [q for q in r.get("quantities", []) if isinstance(q, dict)]
        limit = next(
            (q for q in quantities if "n -> inf" in str(q.get("name", "")) and "measured at" in str(q.get("note", ""))),
            None,
        )
        step = next(
            (q for q in quantities if q.get("verdict") is not None and isinstance(q.get("theory"), (int, float))), None
        )
        if limit is None or step is None or not isinstance(limit.get("measured"), (int, float)):
            continue
        where = str(limit["note"]).replace("measured at ", "")
        theory = limit.get("theory")
        if not isinstance(theory, (int, float)) or theory == 0 or not math.isfinite(theory):
            continue
        gap = limit["measured"] / theory - 1
        return (
            f"The row named for the limit n -> inf is measured at {where}: there it lies {gap:+.3g} (relative) from "
            f"the limit, against the derived next-order term {step['theory']:.3g} at that n."
        )
    return None


REMARKS = {
    "thm34.window-law": window_law_at_practical_sizes,
    "thm44.dimension": dimension_limit,
    "linear.cannot-adapt": _finite_n_limit_rows,
}


def remarks(key: str, records: list) -> list[str]:
    """The sentences of :data:`REMARKS` for claim ``key`` (ASCII math; typeset by the report)."""
    func = REMARKS.get(key)
    if func is None:
        return []
    text = func(records)
    return [text] if text else []
