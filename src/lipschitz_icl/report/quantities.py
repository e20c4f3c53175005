"""``quantities.csv``: every compared number of every case (the report prints the constants, the
verdicts and the cases; this file holds the rest, one row per quantity)."""

from __future__ import annotations

import csv
import io

from lipschitz_icl.report.constants import csv_cell

__all__ = ["quantities_csv", "QUANTITY_FIELDS"]

QUANTITY_FIELDS = (
    "case",
    "claim_id",
    "case_verdict",
    "quantity",
    "theory",
    "measured",
    "ci_low",
    "ci_high",
    "ratio",
    "verdict",
    "note",
)


def quantities_csv(claims: list, numbers: dict) -> str:
    """One row per quantity of every record (``numbers``: claim id -> case number), full precision."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=QUANTITY_FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in claims:
        for q in record.get("quantities", []):
            if not isinstance(q, dict):
                continue
            row = {
                "case": numbers.get(record["claim_id"], ""),
                "claim_id": record["claim_id"],
                "case_verdict": record.get("verdict"),
                "quantity": q.get("name"),
                "theory": q.get("theory"),
                "measured": q.get("measured"),
                "ci_low": q.get("ci_low"),
                "ci_high": q.get("ci_high"),
                "ratio": q.get("ratio"),
                "verdict": q.get("verdict"),
                "note": q.get("note"),
            }
            writer.writerow({k: ("" if v is None else csv_cell(v)) for k, v in row.items()})
    return buffer.getvalue()
