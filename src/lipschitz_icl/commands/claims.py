"""``lipschitz-icl claims``: the claims registry (``lipschitz_icl/claims/*.toml``), one row per case.

JSON: an object with key ``claims``, a list of objects with keys ``claim_id``, ``paper_ref``,
``statement``, ``status``, ``scope`` (paper, lemma, beyond or finding), ``rule``, ``margin``,
``resolution`` (from the last recorded run in ``--claims``, default ``reports/claims.json``; null before
one), ``design_hash`` and ``design`` (the registry's numbers, fixed by the design lock), ``alternatives``
(the pre-specified competing statements, with their verdicts from the last run when there is one), and
further keys ``group``, ``sharper``, ``margin_source``, ``parameter``, ``verdict`` (last run, or null:
``holds``/``fails``/``inconclusive`` by a statistical rule, ``proved``/``refuted``/``undecided`` by the
prover).
"""

from __future__ import annotations

import os
from pathlib import Path

from lipschitz_icl.validation import ParameterError

NAME = "claims"
HELP = "list the claims registry (statement, status, rule, margin, resolution from the last run)"


def add_arguments(parser) -> None:
    from lipschitz_icl.gates import registry

    parser.add_argument(
        "--profile",
        choices=registry.PROFILES,
        default="default",
        help="which profile's cases to list (default: default)",
    )
    parser.add_argument(
        "--claims",
        default=None,
        metavar="PATH",
        help="claims.json of the last run, for resolutions and verdicts (default: reports/claims.json, if there; "
        "a path given must exist)",
    )


DEFAULT_CLAIMS = Path("reports/claims.json")


def _last_run(path: Path | None) -> dict:
    """``claim_id -> record`` of a previous run, read by the one reader of claims.json
    (:func:`lipschitz_icl.report.load_claims`: a regular file of bounded size, UTF-8 JSON without
    ``NaN``/``Infinity`` literals or deep nesting, checked against the schema).  The default file not there
    yet: empty (no run yet); a path the user gave that is not there: refused (a mistyped path must not read as
    'no run')."""
    if path is None:
        path = DEFAULT_CLAIMS
        if not os.path.lexists(path):
            return {}
    elif not os.path.lexists(path):
        raise ParameterError("claims", "an existing claims.json (written by pytest verify/)", str(path))
    from lipschitz_icl.report import load_claims

    data = load_claims(path)
    return {r["claim_id"]: r for r in data["claims"] if isinstance(r, dict) and "claim_id" in r}


def run(args):
    from lipschitz_icl.gates import registry

    last = _last_run(None if args.claims is None else Path(args.claims))
    rows = []
    for case in registry.cases(args.profile):
        spec, record = case.spec, last.get(case.claim_id, {})
        rows.append(
            {
                "claim_id": case.claim_id,
                "paper_ref": spec.paper_ref,
                "statement": spec.statement,
                "status": spec.status,
                "scope": spec.scope,
                "rule": spec.rule,
                "margin": spec.margin,
                "resolution": record.get("resolution"),
                "group": spec.group,
                "sharper": spec.sharper,
                "margin_source": spec.margin_source,
                "parameter": spec.parameter,
                "design_hash": spec.design_hash,
                "design": spec.design,
                "alternatives": record.get("alternatives")
                or [{"name": a.name, "statement": a.statement} for a in spec.alternatives],
                "verdict": record.get("verdict"),
            }
        )
    return {"claims": rows}, 0


def format_text(payload: dict) -> str:
    """One line per case: id, status, rule, verdict of the last run, resolution."""
    lines = []
    for r in payload["claims"]:
        res = r["resolution"]
        res_text = "-" if not res else f"{res.get('parameter')} = {res.get('value')}"
        lines.append(
            f"{r['claim_id']}  [{r['scope']}, {r['status']}, {r['rule']}]  last run: {r['verdict'] or '-'}  "
            f"resolution: {res_text}"
        )
    return "\n".join(lines)
