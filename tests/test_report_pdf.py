"""The built report as a reader meets it (run by .ci/run on the report of the gate run it just made;
skipped unless ``LIPSCHITZ_ICL_REPORT`` names a directory holding report.pdf and claims.json, or a
report built by ``lipschitz-icl report --out DIR`` next to the claims.json given in
``LIPSCHITZ_ICL_CLAIMS``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lipschitz_icl.report.sections import build_sections

PAGE_BOUND = 30  # the default profile's report: a reader's length

REPORT = os.environ.get("LIPSCHITZ_ICL_REPORT")
pytestmark = pytest.mark.skipif(not REPORT or shutil.which("pdftotext") is None,
                                reason="needs LIPSCHITZ_ICL_REPORT (a built report directory) and pdftotext")


def _text(first: int | None = None, last: int | None = None) -> str:
    args = ["pdftotext"] + (["-f", str(first), "-l", str(last)] if first else [])
    out = subprocess.run(args + [str(Path(REPORT) / "report.pdf"), "-"], capture_output=True, text=True, check=True)
    return " ".join(out.stdout.replace("\u2019", "'").split())  # LaTeX typesets ' as a right quote


def _claims() -> dict:
    path = Path(os.environ.get("LIPSCHITZ_ICL_CLAIMS") or Path(REPORT) / "claims.json")
    return json.loads(path.read_text())


def test_pages_one_and_two_name_every_claim_group_with_its_counts():
    head = _text(1, 2)
    assert "Summary" in head
    for view in build_sections(_claims()["claims"]):
        assert view.name in head, view.name


def test_the_default_report_stays_under_the_page_bound():
    if _claims().get("profile") != "default":
        pytest.skip("the page bound is for the default profile")
    info = subprocess.run(["pdfinfo", str(Path(REPORT) / "report.pdf")], capture_output=True, text=True).stdout
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    assert pages <= PAGE_BOUND, pages


def test_every_paper_figure_is_in_the_pdf():
    text = _text()
    names = [spec["name"] for r in _claims()["claims"] if r.get("group") == "figures"
             for spec in ([r["figure"]] if isinstance(r.get("figure"), dict) else r.get("figure") or [])
             if isinstance(spec, dict) and "name" in spec]
    assert names, "no paper figure recorded"
    figures = sorted(p.name for p in (Path(REPORT) / "figures").glob("*.png"))
    for name in set(names):
        assert any(name.replace("_", "-") in f for f in figures), (name, figures[:5])
    assert text.count("Figure") >= len(names)
