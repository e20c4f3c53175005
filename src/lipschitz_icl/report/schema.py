"""The schema of ``claims.json`` (what the pytest plugin writes and ``lipschitz-icl report`` reads).

:func:`validate_claims` checks a decoded document before anything is rendered and raises
:class:`~lipschitz_icl.validation.ParameterError` (parameter ``claims``) naming the first offending
location, e.g. ``claims[3].quantities[0].theory``.

Numbers (the project's JSON convention): a finite JSON number with ``|x|`` in ``[1e-300, 1e300]`` or
zero, or one of the strings ``"inf"``/``"-inf"`` where a number may be unbounded; NaN in any spelling
is refused (``NaN`` literals are rejected while decoding).

Document: an object with ``claims`` (a list of at most :data:`MAX_RECORDS` records), optional
``profile`` (string), ``seconds`` (number), ``provenance`` (an object: ``commit``, ``date``, ``profile``,
``python``, ``numpy``, ``platform`` strings, ``dirty`` boolean or null (not known), ``seconds`` number >= 0, ``workers``
integer >= 1, ``versions`` an object of package -> version strings), ``design_history`` (a list of objects:
``key``, ``design_hash``, ``fixed``, ``commit``, ``reason`` strings, ``salt`` integer) and ``runs`` (a list of
objects, each with a string ``id`` and optionally ``date``, ``commit``, ``profile``, ``selection`` strings and
``seconds``: the runs merged into the file).  Every key of the newer format (``provenance``, ``design_history``
and the record keys marked *new* below) is optional: older files lack them.  Record keys it knows and
checks:

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
``resolution``      null or an object with string ``parameter`` and number-or-null ``value``; *new*:
                    ``meaning`` and ``symbol`` strings
``margin``          string or number;  ``seed``: integer or null
*new* quantity keys ``symbol`` string, ``setting`` object of scalars, ``constant`` boolean
*new* ``design_hash``, ``design_fixed`` strings; ``salt`` integer; ``points`` integer >= 1
*new* ``alternatives`` list of objects: ``name``, ``statement``, ``verdict``, ``detail`` strings, ``ruled_out``
                    boolean
*new* ``proof``     an object: ``boxes`` integer >= 0, ``undecided_share`` number in [0, 1], ``certificate``
                    string or null (the certificate file, in the folder ``certificates/`` beside claims.json),
                    ``bracket`` an object of ``proved`` and ``refuted``, each ``value`` a finite number and
                    ``files`` a list of file names (the sharpest constant's certified ends)
*new* ``run``       string: the id of the run that made the record (a ``runs`` entry), when ``pytest verify/``
                    merged a subset of the gates into an existing claims.json
``figure``, ``extra`` and any other key: any JSON-safe value
=================== ===================================================================================

JSON-safe: nesting depth at most :data:`MAX_DEPTH`, strings at most :data:`MAX_STRING` characters,
containers at most :data:`MAX_ITEMS` entries, numbers as above.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from lipschitz_icl.gates.evidence import SCOPES, VERDICTS
from lipschitz_icl.validation import ParameterError

__all__ = [
    "validate_claims",
    "load_claims",
    "reject_constant",
    "MAX_DEPTH",
    "MAX_STRING",
    "MAX_ITEMS",
    "MAX_RECORDS",
    "MAX_FILE_BYTES",
]

MAX_DEPTH = 20
MAX_STRING = 100_000
MAX_ITEMS = 100_000
MAX_RECORDS = 10_000
MAX_FILE_BYTES = 64 * 1024**2
MAX_ID = 200
TINY, HUGE = 1e-300, 1e300
STATUSES = ("confirmatory", "exploratory")
_ID = re.compile(rf"[^\x00-\x1f\x7f-\x9f\u2028\u2029]{{1,{MAX_ID}}}")


def reject_constant(name: str):
    """``json.loads(parse_constant=...)`` hook: ``NaN``/``Infinity`` literals are not JSON."""
    raise ValueError(f'the literal {name} is not allowed (write infinities as "inf"/"-inf")')


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
        raise _Invalid(f"{where}.{key}", 'not a number (finite, |x| in [1e-300, 1e300], or "inf"/"-inf") or null')


def _list_of_objects(record: dict, key: str, where: str) -> list:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _Invalid(f"{where}.{key}", "not a list of objects")
    return value


def _integer(record: dict, key: str, where: str, minimum: int | None = None) -> None:
    if key not in record:
        return
    value = record[key]
    if not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum):
        raise _Invalid(f"{where}.{key}", "not an integer" + (f" >= {minimum}" if minimum is not None else ""))


def _boolean(record: dict, key: str, where: str) -> None:
    if key in record and not isinstance(record[key], bool):
        raise _Invalid(f"{where}.{key}", "not true or false")


def _quantity(q: dict, where: str) -> None:
    _string(q, "name", where)
    _string(q, "note", where)
    _string(q, "symbol", where)
    _boolean(q, "constant", where)
    for key in ("theory", "measured", "ci_low", "ci_high", "ratio"):
        _number_or_null(q, key, where)
    if q.get("verdict") is not None and q["verdict"] not in VERDICTS:
        raise _Invalid(f"{where}.verdict", f"not null or one of {', '.join(VERDICTS)}")
    setting = q.get("setting")
    if setting is not None and (
        not isinstance(setting, dict)
        or not all(isinstance(v, (str, int, float, bool)) or v is None for v in setting.values())
    ):
        raise _Invalid(f"{where}.setting", "not an object of strings and numbers")


def _alternative(a: dict, where: str) -> None:
    for key in ("name", "statement", "detail"):
        _string(a, key, where)
    if a.get("verdict") is not None and a["verdict"] not in VERDICTS:
        raise _Invalid(f"{where}.verdict", f"not one of {', '.join(VERDICTS)}")
    _boolean(a, "ruled_out", where)


def _proof(value, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise _Invalid(where, "not an object")
    _integer(value, "boxes", where, 0)
    share = value.get("undecided_share")
    if share is not None and not (_is_number(share, unbounded=False) and 0 <= share <= 1):
        raise _Invalid(f"{where}.undecided_share", "not a number in [0, 1]")
    if value.get("certificate") is not None and not isinstance(value["certificate"], str):
        raise _Invalid(f"{where}.certificate", "not a string or null")
    proved_at = value.get("proved_at", [])
    if not isinstance(proved_at, list) or not all(_is_number(c, unbounded=False) for c in proved_at):
        raise _Invalid(f"{where}.proved_at", "not a list of finite numbers")
    constant = value.get("constant")
    if constant is not None and not (isinstance(constant, str) and re.fullmatch(r"[A-Za-z]\w{0,15}", constant)):
        raise _Invalid(f"{where}.constant", "not a name of at most 16 letters, digits or underscores")
    bracket = value.get("bracket", {})
    if not isinstance(bracket, dict) or set(bracket) - {"proved", "refuted"}:
        raise _Invalid(f"{where}.bracket", "not an object of 'proved' and 'refuted'")
    for end, item in bracket.items():
        if not (isinstance(item, dict) and _is_number(item.get("value"), unbounded=False)):
            raise _Invalid(f"{where}.bracket.{end}.value", "not a finite number")
        files = item.get("files")
        if not (isinstance(files, list) and files and all(isinstance(f, str) for f in files)):
            raise _Invalid(f"{where}.bracket.{end}.files", "not a list of file names")


def _record(record, where: str) -> None:
    if not isinstance(record, dict):
        raise _Invalid(where, "not an object")
    _safe(record, where)
    claim_id = record.get("claim_id")
    if not isinstance(claim_id, str) or not _ID.fullmatch(claim_id) or not claim_id.strip():
        raise _Invalid(f"{where}.claim_id", f"not 1-{MAX_ID} printable characters (no line breaks or controls)")
    if record.get("verdict") not in VERDICTS:
        raise _Invalid(f"{where}.verdict", f"not one of {', '.join(VERDICTS)}")
    for key in (
        "paper_ref",
        "statement",
        "rule",
        "test",
        "group",
        "margin_source",
        "design_hash",
        "design_fixed",
        "run",
    ):
        _string(record, key, where)
    _integer(record, "salt", where)
    if record.get("points") is not None:  # null: not a universal statement checked at points
        _integer(record, "points", where, 1)
    for i, a in enumerate(_list_of_objects(record, "alternatives", where)):
        _alternative(a, f"{where}.alternatives[{i}]")
    _proof(record.get("proof"), f"{where}.proof")
    for i, q in enumerate(_list_of_objects(record, "quantities", where)):
        _quantity(q, f"{where}.quantities[{i}]")
    for i, v in enumerate(_list_of_objects(record, "false_variants", where)):
        for key in ("name", "verdict", "detail"):
            _string(v, key, f"{where}.false_variants[{i}]")
        _number_or_null(v, "distance", f"{where}.false_variants[{i}]")
    power = record.get("power", [0, 0])
    if (
        not isinstance(power, list)
        or len(power) != 2
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in power)
        or not 0 <= power[0] <= power[1]
    ):
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
    _string(value, "meaning", where)
    _string(value, "symbol", where)


def _provenance(value) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise _Invalid("provenance", "not an object")
    for key in ("commit", "date", "profile", "python", "numpy", "platform"):
        _string(value, key, "provenance")
    if value.get("dirty") is not None:  # null: not known (the evidence was made outside a git checkout)
        _boolean(value, "dirty", "provenance")
    seconds = value.get("seconds")
    if seconds is not None and not (_is_number(seconds, unbounded=False) and seconds >= 0):
        raise _Invalid("provenance.seconds", "not a finite number >= 0")
    _integer(value, "workers", "provenance", 1)
    versions = value.get("versions")
    if versions is not None and (
        not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values())
    ):
        raise _Invalid("provenance.versions", "not an object of version strings")


def _runs(value) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise _Invalid("runs", "not a list of objects")
    for i, run in enumerate(value):
        if not isinstance(run.get("id"), str) or not run["id"]:
            raise _Invalid(f"runs[{i}].id", "not a non-empty string")
        for key in ("date", "commit", "profile", "selection"):
            _string(run, key, f"runs[{i}]")
        seconds = run.get("seconds")
        if seconds is not None and not (_is_number(seconds, unbounded=False) and seconds >= 0):
            raise _Invalid(f"runs[{i}].seconds", "not a finite number >= 0")


def load_claims(path) -> dict:
    """Read ``claims.json`` (a regular file of at most :data:`MAX_FILE_BYTES`) and check it against the
    schema.  Problems raise :class:`ParameterError` (parameter ``claims``)."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError("claims", "an existing claims.json file (run `pytest verify/` first)", str(path))
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())[:120]
        raise ParameterError("claims", f"a readable JSON file ({type(exc).__name__}: {reason})", str(path)) from None
    return validate_claims(data, str(path))


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
        _provenance(data.get("provenance"))
        if "design_history" in data:
            if not isinstance(data["design_history"], list) or not all(
                isinstance(h, dict) for h in data["design_history"]
            ):
                raise _Invalid("design_history", "not a list of objects")
            for i, h in enumerate(data["design_history"]):
                for key in ("key", "design_hash", "fixed", "commit", "reason"):
                    _string(h, key, f"design_history[{i}]")
                _integer(h, "salt", f"design_history[{i}]")
        _runs(data.get("runs"))
        seen: dict[str, int] = {}
        for i, record in enumerate(data["claims"]):
            _record(record, f"claims[{i}]")
            if record["claim_id"] in seen:
                raise _Invalid(
                    f"claims[{i}].claim_id",
                    f"duplicate of claims[{seen[record['claim_id']]}] "
                    f"({record['claim_id'][:40]!r}); ids must be unique",
                )
            seen[record["claim_id"]] = i
    except _Invalid as exc:
        raise ParameterError("claims", f"a valid claims.json ({exc})", source) from None
    return data
