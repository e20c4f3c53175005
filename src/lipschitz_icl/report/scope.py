"""What was checked: each case's parameters and each claim's scope, read from the registry.

A case's parameters are those its registry id pattern names (``thm34/window-law/{task}/d{d}`` gives
``task`` and ``d``), matched on the record's ``claim_id``; ids the registry does not know are read by
shape (``d3``, ``n50``, ``d5k2``, a class name).  A claim's *checked scope* lists the values its cases
took, so a statement is never worded beyond them, and *how* it was checked where a record says so: at
``N`` points (``points``, or a note "at all N points"), or locally along ``N`` moves (quantities
``Delta ... along ...``).  Scopes of the records (``paper``, ``lemma``, ``beyond``, ``finding``,
``variant``) come from ``claims.json``; older files without them get the registry's.
"""

from __future__ import annotations

import re
import string
from functools import cache

from lipschitz_icl.gates import registry
from lipschitz_icl.report.symbols import CLASS_PARAMETERS, PARAMETER_WORDS, task_name

__all__ = [
    "case_params",
    "record_scope",
    "checked_scope",
    "how_checked",
    "decided_probes",
    "setting_text",
    "SCOPE_ORDER",
    "SCOPE_TITLES",
]

SCOPE_ORDER = ("paper", "lemma", "beyond", "finding", "variant")
SCOPE_TITLES = {
    "paper": "The paper's statements",
    "lemma": "Lemmas the proofs cite",
    "beyond": "Results beyond the paper",
    "finding": "Findings (past or against the paper)",
    "variant": "User bound variants",
}
_ORDER = ("train_task", "task", "link", "kernel", "d", "k", "rank", "n", "w", "h")


@cache
def _patterns() -> dict:
    """Claim key -> (compiled id regex, field names) for every registry claim."""
    out = {}
    for spec in registry.load():
        fields, regex = [], ""
        for literal, name, _, _ in string.Formatter().parse(spec.id_pattern):
            regex += re.escape(literal)
            if name:
                fields.append(name)
                regex += f"(?P<{name}>[^/]+?)"
        out[spec.key] = (re.compile(regex + r"(?:/seed\d+)?$"), tuple(fields))
    return out


def _by_shape(claim_id: str) -> dict:
    """Parameters of an id the registry does not know: ``d3``, ``n50``, ``k2``, ``d5k2``, a class name."""
    out: dict[str, object] = {}
    for part in claim_id.split("/")[2:]:
        if part.startswith("seed"):
            continue
        pairs = re.findall(r"([a-z])(\d+(?:\.\d+)?)", part) if re.fullmatch(r"(?:[a-z]\d+(?:\.\d+)?)+", part) else []
        if pairs:
            out.update(pairs)
        elif "task" not in out:
            out["task"] = part
    return out


def case_params(record: dict) -> dict:
    """The parameters of a record's case (module docstring), as strings, in a fixed reading order."""
    found = _patterns().get(str(record.get("key", "")))
    params = {}
    if found is not None:
        m = found[0].match(str(record["claim_id"]))
        if m:
            params = m.groupdict()
    if not params:
        params = _by_shape(str(record["claim_id"]))
    return dict(sorted(params.items(), key=lambda kv: (_ORDER.index(kv[0]) if kv[0] in _ORDER else len(_ORDER), kv[0])))


def record_scope(record: dict) -> str:
    """The record's scope; the registry's where the record has none; ``variant`` for user bounds."""
    scope = record.get("scope")
    if scope:
        return scope
    key = str(record.get("key", ""))
    if key.startswith("variants."):
        return "variant"
    try:
        return registry.find(key).scope
    except KeyError:
        return "paper"


def _values(records, name: str) -> list[str]:
    seen = []
    for r in records:
        value = case_params(r).get(name)
        if value is not None and value not in seen:
            seen.append(value)
    return seen


def checked_scope(records) -> str:
    """The values the claim's cases took, e.g. ``affine, ReLU; d = 2, 3, 5`` (plain text, ASCII math)."""
    names = []
    for r in records:
        for name in case_params(r):
            if name not in names:
                names.append(name)
    return "; ".join(setting_text(name, _values(records, name)) for name in names)


def setting_text(name: str, values) -> str:
    """One parameter's values as they read: classes by name (``affine, ReLU``), ``train_task`` as
    ``pretrained on affine``, others as ``d = 2, 3, 5``; a value that is itself a list of numbers (a grid of
    ``n``) in parentheses, ``ngrid = (100, 1000)``, not as code (braces would open a group in the typeset math)."""
    values = ["(" + ", ".join(str(x) for x in v) + ")" if isinstance(v, (list, tuple)) else str(v) for v in values]
    if name in CLASS_PARAMETERS:
        return ", ".join(task_name(v) for v in values)
    if name in PARAMETER_WORDS:
        return PARAMETER_WORDS[name].format(", ".join(task_name(v) for v in values))
    return f"{name} = " + ", ".join(values)


def decided_probes(records) -> str:
    """Where a claim's compared numbers are named by probe (``cosine-4: error ratio ...``) and some are
    only reported (verdict null), which probes decided it and which were reported only, e.g. ``decided
    on affine, relu, cosine-1; reported only: cosine-4, triangle-1`` (else ``""``)."""
    decided: list[str] = []
    reported: list[str] = []
    for r in records:
        for q in r.get("quantities", []):
            m = re.match(r"^([A-Za-z][\w.-]*):\s", str(q.get("name", ""))) if isinstance(q, dict) else None
            if not m:
                continue
            target = decided if q.get("verdict") is not None else reported
            if m.group(1) not in target:
                target.append(m.group(1))
    reported = [p for p in reported if p not in decided]
    if not decided or not reported:
        return ""
    return f"decided on {', '.join(decided)}; reported only: {', '.join(reported)}"


def how_checked(records) -> str:
    """``at N points`` / ``locally, along N moves from the optimum`` where the records say so, else ``""``."""
    points = [r.get("points") for r in records if isinstance(r.get("points"), int)]
    noted = [
        int(m.group(1))
        for r in records
        for q in r.get("quantities", [])
        if isinstance(q, dict)
        for m in [re.search(r"at all (\d+) points", str(q.get("note", "")))]
        if m
    ]
    moves = [
        q
        for q in (records[0].get("quantities", []) if records else [])
        if isinstance(q, dict) and re.match(r"Delta \S+ along ", str(q.get("name", "")))
    ]
    if points:
        return f"at {max(points)} points"
    if noted:
        return "at grid points"
    if moves:
        return f"locally, along {len(moves)} moves from the optimum"
    return ""
