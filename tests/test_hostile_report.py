"""The report compiles whatever Unicode a claim carries (issue #11: ``≥`` and ``—`` broke pdflatex),
and escape() never lets a line break end a paragraph inside a cell or heading."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lipschitz_icl.report import build_report
from lipschitz_icl.report.latex import escape

UNICODE_TEXT = "w* ≥ C ρ^α — ‘quoted’ “double” Δ Ω σ² ± ∞ ≤ ≠ → é ñ łŘ ĸ 中 😀 …"


def test_escape_maps_unicode_and_flattens_line_breaks():
    out = escape("a ≥ b — αβ\n\nnext\r\x00end 中")
    assert r"$\geq$" in out and "---" in out and r"$\alpha$$\beta$" in out and "[U+4E2D]" in out
    assert "\n" not in out and "\r" not in out and "\x00" not in out
    assert all(ord(ch) < 0x180 for ch in out)  # only what pdflatex's UTF-8 input with T1 fonts typesets


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk not installed")
def test_report_with_unicode_compiles(tmp_path):
    data = json.loads((Path(__file__).parent / "data" / "claims_example.json").read_text())
    record = data["claims"][0]
    record["statement"] = UNICODE_TEXT
    record["paper_ref"] = "Theorem 3.4 — p. 5"
    record["claim_id"] = "thm3.4 — α ≥ β"
    record["quantities"][0]["name"] = "α (d=3) ≥ 0"
    record["false_variants"][0]["detail"] = "slope ≈ 0.334 — far from 0.2"
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps(data))
    result = build_report(claims, tmp_path / "out")
    assert result.compiled and result.pdf.is_file() and result.pdf.stat().st_size > 1000
