"""The constants table: every derived constant of every case, theory against measured, from
``claims.json`` alone (written into the report as a longtable and as ``constants.csv``).

A compared number is a *constant* when its quantity says so (``"constant": true``, with its ``symbol``
and ``setting``) or, for records without those fields, when :mod:`lipschitz_icl.report.symbols` maps
its name to one (the fallback).  A row holds: the constant in words, its symbol, the setting (the case's
parameters and those named in the quantity), the theory value (from ``lipschitz_icl.derivations`` or
the stated bound), the measured value with its interval, the relative deviation ``measured/theory - 1``
(with the interval's image; for a quantity that already is a relative deviation, that quantity), the
margin and verdict of the quantity that decides it (or ``reported``), the case's number and id, and what
its interval is (:func:`lipschitz_icl.report.intervals.interval_kind`: a confidence level or a bound on
the numerical error).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

from lipschitz_icl.report.intervals import interval_kind
from lipschitz_icl.report.latex import as_float
from lipschitz_icl.report.scope import case_params
from lipschitz_icl.report.symbols import constant_spec

__all__ = ["ConstantRow", "constant_rows", "constants_csv", "CSV_FIELDS", "csv_cell", "runs_interval"]

CSV_FIELDS = (
    "case",
    "claim_id",
    "key",
    "constant",
    "symbol",
    "setting",
    "theory",
    "measured",
    "ci_low",
    "ci_high",
    "rel_dev",
    "rel_dev_low",
    "rel_dev_high",
    "margin",
    "verdict",
    "quantity",
    "source",
    "intervals",
)
_MARGIN = re.compile(r"margin\s*(?P<pm>[+-]+\s*[\d.eE+-]+)|required factor\s*(?P<factor>[\d.]+)")


@dataclass
class ConstantRow:
    """One row of the constants table (module docstring); numbers as in ``claims.json``."""

    case: int
    claim_id: str
    key: str
    constant: str
    symbol: str
    setting: dict
    theory: float | None
    measured: float | None
    ci_low: float | None
    ci_high: float | None
    rel_dev: float | None
    rel_dev_low: float | None
    rel_dev_high: float | None
    margin: str
    verdict: str
    quantity: str
    source: str
    note: str = ""
    intervals: str = ""  # what its interval is: a confidence level or a numerical bound (report.intervals)

    def csv_row(self) -> dict:
        setting = "; ".join(f"{k}={v}" for k, v in self.setting.items())
        out = {name: getattr(self, name) for name in CSV_FIELDS if name != "setting"}
        out["setting"] = setting
        return {k: ("" if v is None else csv_cell(v)) for k, v in out.items()}


def csv_cell(value):
    """A CSV cell: text that a spreadsheet would read as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "@", "\t", "\r"):
        return "'" + value
    return value


def _relative(
    theory: float | None, measured: float | None, low: float | None, high: float | None
) -> tuple[float | None, float | None, float | None]:
    """``measured/theory - 1`` and the image of ``[low, high]`` (``None`` without a non-zero theory)."""
    if theory in (None, 0) or measured is None or not math.isfinite(theory):
        return None, None, None
    ends = [x / theory - 1 for x in (low, high) if x is not None and math.isfinite(x)]
    rel = measured / theory - 1
    return rel, (min(ends) if len(ends) == 2 else None), (max(ends) if len(ends) == 2 else None)


_RUNS = re.compile(r"\bruns ((?:-?[\d.]+(?:e-?\d+)?,\s*)+-?[\d.]+(?:e-?\d+)?)")
_T_LEVEL = re.compile(r"\b(0\.\d+) (?:Welch |)t-intervals?")


def runs_interval(record: dict, q: dict, measured: float) -> tuple[float | None, float | None]:
    """The t-interval of a mean over runs, when the quantity lists its runs (``runs 1.19, 1.18, ...``)
    and the rule states the t-interval's level (``0.99 t-intervals``): the estimator's own error estimate,
    not recorded as an interval.  ``(None, None)`` otherwise, or when the runs' mean is not ``measured``."""
    m, level = _RUNS.search(str(q.get("note", ""))), _T_LEVEL.search(str(record.get("rule", "")))
    if m is None or level is None:
        return None, None
    runs = [float(x) for x in re.split(r",\s*", m.group(1))]
    if len(runs) < 2:
        return None, None
    mean = sum(runs) / len(runs)
    if not math.isclose(mean, measured, rel_tol=1e-3):
        return None, None
    from scipy import stats

    sd = math.sqrt(sum((x - mean) ** 2 for x in runs) / (len(runs) - 1))
    half = float(stats.t.ppf(0.5 + float(level.group(1)) / 2, len(runs) - 1)) * sd / math.sqrt(len(runs))
    return measured - half, measured + half


def _decider(record: dict, pattern: str | None):
    if pattern is None:
        return None
    return next(
        (q for q in record.get("quantities", []) if isinstance(q, dict) and re.search(pattern, str(q.get("name", "")))),
        None,
    )


def _margin_of(record: dict, decider: dict | None) -> str:
    """The margin that decides the row: the deciding quantity's own ("margin +-0.01" in its note), else
    the case's margin as applied, up to its first qualification (the whole margin is in the report's
    appendix)."""
    if decider is None:
        return ""
    m = _MARGIN.search(str(decider.get("note", "")))
    if m and m.group("pm"):
        return m.group("pm").replace(" ", "")
    if m:
        return f">= {m.group('factor')} x"
    return _first_clause(record)


def _first_clause(record: dict) -> str:
    """The case's margin as applied up to its first qualification (``+-0.01 on each power`` -> ``+-0.01``)."""
    return re.split(r" on | \(|;", str(record.get("margin") or ""), maxsplit=1)[0].strip()


def _row_from_fields(number: int, record: dict, q: dict) -> ConstantRow:
    """A row from a quantity that carries ``constant``/``symbol``/``setting`` itself."""
    theory, measured = as_float(q.get("theory")), as_float(q.get("measured"))
    low, high = as_float(q.get("ci_low")), as_float(q.get("ci_high"))
    rel = _relative(theory, measured, low, high)
    setting = {**case_params(record), **{str(k): v for k, v in (q.get("setting") or {}).items()}}
    decided = q.get("verdict")
    return ConstantRow(
        number,
        record["claim_id"],
        str(record.get("key", "")),
        str(q.get("name", "")),
        str(q.get("symbol") or ""),
        setting,
        theory,
        measured,
        low,
        high,
        *rel,
        _first_clause(record) if decided else "",
        _verdict(record, decided),
        str(q.get("name", "")),
        "claims.json",
        str(q.get("note", "")),
    )


def _verdict(record: dict, decided) -> str:
    if record.get("verdict") in ("proved", "refuted", "undecided"):
        return record["verdict"]
    return decided or "reported"


def _row_from_mapping(number: int, record: dict, q: dict, spec, match) -> ConstantRow:
    """A row from the fallback mapping (:mod:`lipschitz_icl.report.symbols`)."""
    theory, measured = as_float(q.get("theory")), as_float(q.get("measured"))
    low, high = as_float(q.get("ci_low")), as_float(q.get("ci_high"))
    if spec.kind == "relative":
        rel = (measured, low, high)
        theory = measured = low = high = None
    elif spec.kind == "theory":
        rel = (None, None, None)
        measured = low = high = None
    else:
        if measured is not None and (low is None or high is None):
            low, high = runs_interval(record, q, measured)
        rel = _relative(theory, measured, low, high)
    decider = q if spec.decided_by is None else _decider(record, spec.decided_by)
    decided = decider.get("verdict") if decider is not None and spec.decided_by is not None else None
    setting = {**case_params(record), **{k: v for k, v in match.groupdict().items() if v is not None}}
    return ConstantRow(
        number,
        record["claim_id"],
        str(record.get("key", "")),
        spec.constant,
        spec.symbol,
        setting,
        theory,
        measured,
        low,
        high,
        *rel,
        _margin_of(record, decider) if decided else "",
        _verdict(record, decided),
        str(q.get("name", "")),
        "fallback mapping",
        spec.note,
    )


def constant_rows(claims: list, numbers: dict) -> list[ConstantRow]:
    """Every constant of every case, in the order of ``claims`` (``numbers``: claim id -> case number)."""
    rows = []
    for record in claims:
        number = numbers.get(record["claim_id"], 0)
        own, mapped = [], []
        for q in record.get("quantities", []):
            if not isinstance(q, dict):
                continue
            if q.get("constant") is True:
                own.append(_row_from_fields(number, record, q))
                continue
            if "constant" in q:  # the record decided: not a constant
                continue
            found = constant_spec(str(record.get("key", "")), str(q.get("name", "")))
            if found is not None:
                mapped.append((found[2], _row_from_mapping(number, record, q, *found[:2])))
        kind = interval_kind(record)
        for row in [*own, *(row for _, row in sorted(mapped, key=lambda pair: pair[0]))]:  # the mapping's order
            row.intervals = kind
            rows.append(row)
    return rows


def constants_csv(rows: list[ConstantRow]) -> str:
    """The rows as CSV text (header :data:`CSV_FIELDS`; numbers with full precision)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row.csv_row())
    return buffer.getvalue()
