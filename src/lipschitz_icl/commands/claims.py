"""``lipschitz-icl claims``: the claims registry (``lipschitz_icl/claims/*.toml``), one row per case.

JSON: an object with key ``claims``, a list of objects with keys ``claim_id``, ``paper_ref``,
``statement``, ``status``, ``rule``, ``margin``, ``resolution`` (from the last recorded run in
``--claims``, default ``reports/claims.json``; null before one), and further keys ``group``,
``sharper``, ``margin_source``, ``parameter``, ``verdict`` (last run, or null).
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import registry
from ..validation import ParameterError

NAME = "claims"
HELP = "list the claims registry (statement, status, rule, margin, resolution from the last run)"


def add_arguments(parser) -> None:
    parser.add_argument("--profile", choices=registry.PROFILES, default="default",
                        help="which profile's cases to list (default: default)")
    parser.add_argument("--claims", default="reports/claims.json", metavar="PATH",
                        help="claims.json of the last run, for resolutions and verdicts (default: reports/claims.json)")


def _last_run(path: Path) -> dict:
    """``claim_id -> record`` of a previous run; empty if there is none."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {r["claim_id"]: r for r in data["claims"] if isinstance(r, dict) and "claim_id" in r}
    except (OSError, ValueError, KeyError, TypeError):
        raise ParameterError("--claims", "a claims.json written by pytest verify/", str(path)) from None


def run(args):
    last = _last_run(Path(args.claims))
    rows = []
    for case in registry.cases(args.profile):
        spec, record = case.spec, last.get(case.claim_id, {})
        rows.append({"claim_id": case.claim_id, "paper_ref": spec.paper_ref, "statement": spec.statement,
                     "status": spec.status, "scope": spec.scope, "rule": spec.rule, "margin": spec.margin,
                     "resolution": record.get("resolution"), "group": spec.group, "sharper": spec.sharper,
                     "margin_source": spec.margin_source, "parameter": spec.parameter,
                     "verdict": record.get("verdict")})
    return {"claims": rows}, 0


def format_text(payload: dict) -> str:
    """One line per case: id, status, rule, verdict of the last run, resolution."""
    lines = []
    for r in payload["claims"]:
        res = r["resolution"]
        res_text = "-" if not res else f"{res.get('parameter')} = {res.get('value')}"
        lines.append(f"{r['claim_id']}  [{r['scope']}, {r['status']}, {r['rule']}]  last run: {r['verdict'] or '-'}  "
                     f"resolution: {res_text}")
    return "\n".join(lines)
