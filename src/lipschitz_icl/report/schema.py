"""The schema of ``claims.json`` (what the pytest plugin writes and ``lipschitz-icl report`` reads).

:func:`validate_claims` checks a decoded document before anything is rendered and raises
:class:`~lipschitz_icl.validation.ParameterError` (parameter ``claims``) naming the first offending
location, e.g. ``claims[3].quantities[0].theory``.

Numbers (the project's JSON convention): a finite JSON number with ``|x|`` in ``[1e-300, 1e300]`` or
zero, or one of the strings ``"inf"``/``"-inf"`` where a number may be unbounded; NaN in any spelling
is refused (``NaN`` literals are rejected while decoding).

Document: an object with ``claims`` (a list of at most :data:`MAX_RECORDS` records), optional
``profile`` (string) and ``seconds`` (number).  Record keys it knows and checks:

=================== ===================================================================================
``claim_id``        string, 1 to 200 printable characters (no control characters); unique
``verdict``         ``holds`` | ``fails`` | ``inconclusive`` (statistical rules) | ``proved`` | ``refuted`` |
                    ``undecided`` (the prover)
``paper_ref``, ``statement``, ``rule``, ``test``, ``group``, ``margin_source``: strings
``quantities``      list of objects: ``name`` string; ``theory``, ``measured``, ``ci_low``, ``ci_high``,
                    ``ratio`` number or null; ``verdict`` null or a verdict; ``note`` string
``false_variants``  list of objects: ``name``, ``verdict``, ``detail`` strings; ``distance`` number/null
``power``           ``[refuted, total]``, integers with ``0 <= refuted <= total``
``seconds``         number >= 0
``status``          ``confirmatory`` | ``exploratory``
``scope``           ``paper`` | ``lemma`` | ``beyond`` | ``finding`` | ``variant`` (optional)
``resolution``      null or an object with string ``parameter`` and number-or-null ``value``
``margin``          string or number;  ``seed``: integer or null
``figure``, ``extra`` and any other key: any JSON-safe value
=================== ===================================================================================

JSON-safe: nesting depth at most :data:`MAX_DEPTH`, strings at most :data:`MAX_STRING` characters,
containers at most :data:`MAX_ITEMS` entries, numbers as above.
"""

from __future__ import annotations

import math
import re

from ..evidence import SCOPES, VERDICTS
from ..validation import ParameterError

__all__ = ["validate_claims", "reject_constant", "MAX_DEPTH", "MAX_STRING", "MAX_ITEMS", "MAX_RECORDS",
           "MAX_FILE_BYTES"]

MAX_DEPTH = 20
MAX_STRING = 100_000
MAX_ITEMS = 100_000
MAX_RECORDS = 10_000
MAX_FILE_BYTES = 64 * 1024**2
MAX_ID = 200
TINY, HUGE = 1e-300, 1e300
STATUSES = ("confirmatory", "exploratory")
_ID = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]{1,%d}" % MAX_ID)


def reject_constant(name: str):
    """``json.loads(parse_constant=...)`` hook: ``NaN``/``Infinity`` literals are not JSON."""
    raise ValueError(f"the literal {name} is not allowed (write infinities as \"inf\"/\"-inf\")")


class _Invalid(Exception):
    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")


def _is_number(value, *, unbounded: bool = True) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return unbounded and value in ("inf", "-inf")
    if isinstance(value, int):
        return abs(value) <= HUGE
    if isinstance(value, float):
        return math.isfinite(value) and (value == 0 or TINY <= abs(value) <= HUGE)
    return False


def _safe(value, where: str, depth: int = 0) -> None:
    """Any JSON-safe value (module docstring)."""
    if depth > MAX_DEPTH:
        raise _Invalid(where, f"nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise _Invalid(where, f"a string longer than {MAX_STRING} characters")
        if value.lower() in ("nan", "+nan", "-nan"):
            raise _Invalid(where, "NaN (never a valid number)")
        return
    if isinstance(value, (int, float)):
        if not _is_number(value):
            raise _Invalid(where, "a number outside 0 or |x| in [1e-300, 1e300]")
        return
    if isinstance(value, (list, dict)):
        if len(value) > MAX_ITEMS:
            raise _Invalid(where, f"more than {MAX_ITEMS} entries")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            _safe(item, f"{where}[{key!r}]" if isinstance(value, dict) else f"{where}[{key}]", depth + 1)
        return
    raise _Invalid(where, f"a {type(value).__name__}, not a JSON value")


def _string(record: dict, key: str, where: str, required: bool = False) -> None:
    if key not in record:
        if required:
            raise _Invalid(where, f"missing {key!r}")
        return
    if not isinstance(record[key], str):
        raise _Invalid(f"{where}.{key}", "not a string")


def _number_or_null(record: dict, key: str, where: str) -> None:
    value = record.get(key)
    if value is not None and not _is_number(value):
        raise _Invalid(f"{where}.{key}", "not a number (finite, |x| in [1e-300, 1e300], or \"inf\"/\"-inf\") or null")


def _list_of_objects(record: dict, key: str, where: str) -> list:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _Invalid(f"{where}.{key}", "not a list of objects")
    return value


def _quantity(q: dict, where: str) -> None:
    _string(q, "name", where)
    _string(q, "note", where)
    for key in ("theory", "measured", "ci_low", "ci_high", "ratio"):
        _number_or_null(q, key, where)
    if q.get("verdict") is not None and q["verdict"] not in VERDICTS:
        raise _Invalid(f"{where}.verdict", f"not null or one of {', '.join(VERDICTS)}")


def _record(record, where: str) -> None:
    if not isinstance(record, dict):
        raise _Invalid(where, "not an object")
    _safe(record, where)
    claim_id = record.get("claim_id")
    if not isinstance(claim_id, str) or not _ID.fullmatch(claim_id) or not claim_id.strip():
        raise _Invalid(f"{where}.claim_id", f"not 1-{MAX_ID} printable characters (no line breaks or controls)")
    if record.get("verdict") not in VERDICTS:
        raise _Invalid(f"{where}.verdict", f"not one of {', '.join(VERDICTS)}")
    for key in ("paper_ref", "statement", "rule", "test", "group", "margin_source"):
        _string(record, key, where)
    for i, q in enumerate(_list_of_objects(record, "quantities", where)):
        _quantity(q, f"{where}.quantities[{i}]")
    for i, v in enumerate(_list_of_objects(record, "false_variants", where)):
        for key in ("name", "verdict", "detail"):
            _string(v, key, f"{where}.false_variants[{i}]")
        _number_or_null(v, "distance", f"{where}.false_variants[{i}]")
    power = record.get("power", [0, 0])
    if (not isinstance(power, list) or len(power) != 2
            or not all(isinstance(p, int) and not isinstance(p, bool) for p in power)
            or not 0 <= power[0] <= power[1]):
        raise _Invalid(f"{where}.power", "not [refuted, total] with integers 0 <= refuted <= total")
    seconds = record.get("seconds")
    if seconds is not None and not (_is_number(seconds, unbounded=False) and seconds >= 0):
        raise _Invalid(f"{where}.seconds", "not a finite number >= 0")
    if "status" in record and record["status"] not in STATUSES:
        raise _Invalid(f"{where}.status", f"not one of {', '.join(STATUSES)}")
    if "scope" in record and record["scope"] not in ("", "variant", *SCOPES):
        raise _Invalid(f"{where}.scope", f"not one of {', '.join(SCOPES)}, variant or empty")
    _resolution(record.get("resolution"), f"{where}.resolution")
    margin = record.get("margin")
    if margin is not None and not (isinstance(margin, str) or _is_number(margin)):
        raise _Invalid(f"{where}.margin", "not a string or a number")
    seed = record.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise _Invalid(f"{where}.seed", "not an integer or null")


def _resolution(value, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise _Invalid(where, "not null or an object")
    if not isinstance(value.get("parameter"), str):
        raise _Invalid(f"{where}.parameter", "not a string")
    _number_or_null(value, "value", where)


def validate_claims(data, source: str = "claims.json") -> dict:
    """``data`` if it satisfies the schema (module docstring); else :class:`ParameterError` naming the
    first offending location."""
    try:
        if not isinstance(data, dict):
            raise _Invalid("(document)", "not a JSON object")
        if not isinstance(data.get("claims"), list):
            raise _Invalid("(document)", "needs a 'claims' list")
        if len(data["claims"]) > MAX_RECORDS:
            raise _Invalid("claims", f"more than {MAX_RECORDS} records")
        for key, value in data.items():
            if key != "claims":
                _safe(value, key)
        if "profile" in data and not isinstance(data["profile"], str):
            raise _Invalid("profile", "not a string")
        if data.get("seconds") is not None and not _is_number(data["seconds"], unbounded=False):
            raise _Invalid("seconds", "not a finite number")
        seen = {}
        for i, record in enumerate(data["claims"]):
            _record(record, f"claims[{i}]")
            if record["claim_id"] in seen:
                raise _Invalid(f"claims[{i}].claim_id", f"duplicate of claims[{seen[record['claim_id']]}] "
                                                        f"({record['claim_id'][:40]!r}); ids must be unique")
            seen[record["claim_id"]] = i
    except _Invalid as exc:
        raise ParameterError("claims", f"a valid claims.json ({exc})", source) from None
    return data
