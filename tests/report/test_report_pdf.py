"""The built report as a reader meets it (run by .ci/run on the report of the gate run it just made;
skipped unless ``LIPSCHITZ_ICL_REPORT`` names a directory holding report.pdf, report.tex, figures/ and
claims.json -- or the claims.json given in ``LIPSCHITZ_ICL_CLAIMS`` -- and poppler's pdftotext).

What a referee checks by eye, checked by machine (issues 20 and 31):

* the default profile's report has at most :data:`PAGE_BOUND` pages, and every page renders (pdftoppm)
  to an image that is not blank;
* page 1 names every case whose verdict is not ``holds``/``proved`` and the commit;
* every case id of claims.json is in the PDF's text, and every exploratory reason is printed whole
  (no note cut);
* every figure is referenced from the text and printed within a page of its first reference;
* no ``^2`` and no ``sigma`` in the PDF's text outside code (``\\code{...}`` spans of report.tex);
* the constants table prints ``C_d`` for affine and ReLU at d = 2, 3, 5 with theory and measured values
  equal to claims.json's to the digits printed, and ``constants.csv`` exists; the two-sided constants
  ``c_lo``, ``c_hi`` of Theorem 3.4 are printed as claims.json has them, each with its interval's half-width;
* the paper's Figure 6 is in the report, called "paper Figure 6";
* report.tex prints none of the notation clashes a referee found (one symbol per meaning: :data:`_CLASHES`);
* every figure file is drawn at the report's text width (or half of it) with 8-9 pt text (mathtext
  scripts at matplotlib's factor 0.7 below that), read from the figure PDFs themselves.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from lipschitz_icl.report.mathtext import written_out
from lipschitz_icl.report.style import FULL_WIDTH, HALF_WIDTH, LABEL_PT, SCRIPT_FACTOR, TICK_PT
from lipschitz_icl.report.symbols import rename_for

PAGE_BOUND = 20  # the default profile's report: a referee's length (issue 31)

REPORT = os.environ.get("LIPSCHITZ_ICL_REPORT")
pytestmark = pytest.mark.skipif(
    not REPORT or shutil.which("pdftotext") is None,
    reason="needs LIPSCHITZ_ICL_REPORT (a built report directory) and pdftotext",
)


def _dir() -> Path:
    return Path(REPORT)


def _text(first: int | None = None, last: int | None = None, layout: bool = False) -> str:
    args = ["pdftotext"] + (["-f", str(first), "-l", str(last)] if first else []) + (["-layout"] if layout else [])
    out = subprocess.run(args + [str(_dir() / "report.pdf"), "-"], capture_output=True, text=True, check=True)
    return out.stdout.replace("\u2019", "'")  # LaTeX typesets ' as a right quote


def _claims() -> dict:
    path = Path(os.environ.get("LIPSCHITZ_ICL_CLAIMS") or _dir() / "claims.json")
    return json.loads(path.read_text())


def _pages() -> int:
    info = subprocess.run(["pdfinfo", str(_dir() / "report.pdf")], capture_output=True, text=True).stdout
    return int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_default_report_stays_within_the_page_bound():
    if _claims().get("profile") != "default":
        pytest.skip("the page bound is for the default profile")
    assert _pages() <= PAGE_BOUND


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="needs pdftoppm")
def test_every_page_renders_and_none_is_blank(tmp_path):
    subprocess.run(["pdftoppm", "-r", "30", "-gray", str(_dir() / "report.pdf"), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.pgm"))
    assert len(pages) == _pages()
    for page in pages:
        pixels = page.read_bytes().split(b"\n", 3)[-1]  # P5 header: magic, size, maxval, then the pixels
        inked = sum(1 for b in pixels if b < 192)  # small type renders grey at 30 dpi
        assert inked > 200, f"{page.name} is (nearly) blank"


def _case_numbers(text: str) -> set[int]:
    """Every case number a page lists (``#50-53, 55``), ranges expanded."""
    found: set[int] = set()
    for listed in re.findall(r"#(\d+(?:\s*[-\u2013,]\s*\d+)*)", text):
        for piece in listed.split(","):
            ends = [int(x) for x in re.split(r"[-\u2013]", piece.strip())]
            found.update(range(ends[0], ends[-1] + 1))
    return found


def test_page_one_names_every_case_that_does_not_hold_and_the_commit():
    """Each case not holding is on page 1 by its claim's name and its case number (the setting beside it)."""
    from lipschitz_icl.report.sections import build_sections

    text = _text(1, 1)
    page = _squeeze(text)
    claims = _claims()
    ordered = [r for view in build_sections(claims["claims"]) for r in view.records]
    numbers = {r["claim_id"]: i + 1 for i, r in enumerate(ordered)}
    listed = _case_numbers(text)
    for record in claims["claims"]:
        if record["verdict"] not in ("holds", "proved"):
            assert _squeeze(str(record["key"]).split(".")[-1]) in page, record["claim_id"]
            assert numbers[record["claim_id"]] in listed, record["claim_id"]
    commit = (claims.get("provenance") or {}).get("commit")
    if commit is None:  # derived when the report was built: the checkout's HEAD
        here = Path(__file__).resolve().parent
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert commit.strip()[:7] in page


def test_page_one_ends_on_page_one():
    """Page 1's material (the box, the deviations and how to read them) does not run over onto page 2."""
    assert "How to read" in _text(1, 1) and "How to read" not in _text(2, 2)
    assert _squeeze("the paper's are") in _squeeze(_text(1, 1))  # the paragraph's last words


def _code_spans(tex: str) -> list[str]:
    """The text of every ``\\code{...}`` span of report.tex as it prints (escapes undone)."""
    spans, start = [], 0
    while (i := tex.find(r"\code{", start)) >= 0:
        depth, j = 1, i + len(r"\code{")
        while j < len(tex) and depth:
            depth += {"{": 1, "}": -1}.get(tex[j], 0) if tex[j - 1] != "\\" else 0
            j += 1
        body = tex[i + len(r"\code{") : j - 1]
        body = body.replace(r"\allowbreak{}", "").replace(r"\textbackslash{}", "\\")
        body = re.sub(r"\\textasciicircum\{\}", "^", body)
        body = re.sub(r"\\textasciitilde\{\}", "~", body)
        spans.append(re.sub(r"\\([_{}$&#%])", r"\1", body))
        start = j
    return spans


def test_no_ascii_math_outside_code():
    text = _squeeze(_text())
    for span in sorted(_code_spans((_dir() / "report.tex").read_text()), key=len, reverse=True):
        if span.strip():
            text = text.replace(_squeeze(span), "")
    for ascii_math in ("^2", "sigma"):
        where = text.find(ascii_math)
        assert where < 0, f"{ascii_math!r} outside code: ...{text[max(0, where - 60) : where + 60]}..."


def _matches(printed: str, value: float) -> bool:
    """``value`` rounds to ``printed`` (a number as siunitx prints it, uncertainty dropped)."""
    printed = printed.replace("\u2212", "-").split("(")[0]
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed) - value) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


def _printed_numbers(text: str) -> list[str]:
    """The numbers of ``text`` as siunitx prints them (uncertainty and exponent dropped)."""
    return re.findall(r"-?\d+(?:\.\d+)?", text.replace("\u2212", "-"))


_CASE_HEADING = re.compile(r"\s*\d+\s+[a-z_]+[0-9]*\.[\w-]+")  # "16 thm34.bias-noise: affine, d = 2"


def _row_block(layout: str, case: int, marker: str) -> str:
    """The lines of the layout text from the first line holding ``marker`` under the heading line of case
    ``case`` (its number and claim) to the next case's heading: the constant's row, its wrapped cells, and
    the case's later rows (a row's cells wrap over several lines)."""
    lines = layout.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\s*{case}\s", line) and _CASE_HEADING.match(line):
            end = next((j for j in range(i + 1, len(lines)) if _CASE_HEADING.match(lines[j])), len(lines))
            rows = lines[i + 1 : end]
            start = next((j for j, row in enumerate(rows) if marker in row), None)
            if start is not None:
                return "\n".join(rows[start:])
    raise AssertionError(f"no row of case {case} with {marker!r}")


# the referee's notation clashes (one symbol per meaning, notation.py): what report.tex must never print again
_CLASHES = {
    "the bias part as B(w), N(w) (B is the low-rank basis)": r"(?<![{\\A-Za-z])[BN]'?\(w\)",
    "the bias power as p (p_i are the softmax weights)": r"w\^\{-p\}|\$-?p\$\)|\$p = \\min",
    "a probability as P (P is the projector)": r"(?<![{\\A-Za-z_])P\((?:\\\||x\\cdot|N |X )",
    "the ICL loss as L (L is the Lipschitz constant)": r"\\Delta L\b|(?<![{\\A-Za-z])L\(\{?c\^|d\^\{2\}L/",
    "the window-law constant as C (C is a proved inequality's constant)": r"[(~ ]C \\Lambda\^|\$C\$: ",
    "the window law's next-order exponent as q (q is the query)": r"w_\{?0\}?\^\{-q\}",
    "a resolution written s, c, x or gamma": r"& \$(?:s|c|x|\\gamma)\$ \$=\$",
    "a move's step as s or epsilon": r"\\pm\s*s Q|\\epsilon\b",
    "the Beta law's a, b and the Beta function B": r"\\mathrm\{Beta\}\(a|\\mathrm\{B\}\(",
    "Bonferroni's level as alpha": r"\\alpha/m",
    "a derivative's d as the dimension d": r"\$d\$/dw|\$d B/d w|\\mathrm\{ds\}",
    "seconds as the symbol s": r"\$\d+ s\$|CPU \$s\$",
    "a symbol's ASCII name printed as letters": r"\b(?:cal[LBN]|bbP)\b",
}


def test_the_report_prints_one_symbol_per_meaning():
    tex = (_dir() / "report.tex").read_text()
    found = {what: m.group(0) for what, pattern in _CLASHES.items() if (m := re.search(pattern, tex))}
    assert not found, found


def test_the_constants_table_prints_C_d_as_claims_json_has_it():
    assert (_dir() / "constants.csv").is_file()
    layout = _text(layout=True)
    records = [r for r in _claims()["claims"] if r.get("key") == "thm34.window-law"]
    cases = {int(row["case"]): row for row in csv.DictReader((_dir() / "cases.csv").open())}
    numbers = {row["claim_id"]: case for case, row in cases.items()}
    seen = set()
    for record in records:
        task, d = record["claim_id"].split("/")[2], record["claim_id"].split("/")[3][1:]
        q = next(q for q in record["quantities"] if q.get("symbol") == "C_d")
        printed = _printed_numbers(_row_block(layout, numbers[record["claim_id"]], "Cd"))
        assert any(_matches(p, q["theory"]) for p in printed), (task, d, printed, q["theory"])
        assert any(_matches(p, q["measured"]) for p in printed), (task, d, printed, q["measured"])
        seen.add((task, d))
    assert {(t, d) for t in ("affine", "relu") for d in ("2", "3", "5")} <= seen, sorted(seen)


def test_the_two_sided_constants_of_theorem_3_4_are_printed():
    text = _text()
    assert "two-sided constants" in text
    # the table's own numbers (C_d at the largest n, printed in the constants table, can equal c_hi), each
    # printed as value(uncertainty), each whole (a table's cells run together once squeezed)
    start = text.index("The two-sided constants.")
    section = text[start : start + 4000]  # the table's lead-in, its rows and the notes after it
    with_interval = re.findall(r"(?<![\d.])\d+\.\d+\(\d+\)", section)
    for record in _claims()["claims"]:
        if record.get("key") != "thm34.window-law":
            continue
        for name in ("c_lo:", "c_hi:"):
            q = next(q for q in record["quantities"] if str(q.get("name", "")).startswith(name))
            # printed as value(uncertainty): the value to its last digit, then the interval's half-width
            printed = [p for p in with_interval if _matches(p, q["measured"]) and len(p.split("(")[0]) >= 6]
            assert printed, (record["claim_id"], name, q["measured"])
            half = max(q["ci_high"] - q["measured"], q["measured"] - q["ci_low"])
            decimals = len(printed[0].split("(")[0].split(".")[1])
            assert int(printed[0].split("(")[1][:-1]) * 10.0**-decimals >= half * (1 - 1e-9), (printed, half)


def test_every_case_id_is_in_the_pdf_and_no_note_is_cut():
    squeezed = _squeeze(_text())
    claims = _claims()["claims"]
    missing = [r["claim_id"] for r in claims if _squeeze(r["claim_id"]) not in squeezed]
    assert not missing, missing
    for record in claims:
        reason = (record.get("extra") or {}).get("exploratory_reason")
        if reason:  # its last words are printed: the note was not cut
            # as the report words it (a factor "2x", "99%t-interval" and the group's phrases written out)
            tail = re.sub(r"[^A-Za-z]", "", written_out(reason, rename_for(record.get("key", ""))))[-40:]
            assert tail in re.sub(r"[^A-Za-z]", "", squeezed), (record["claim_id"], tail)


def test_every_figure_is_referenced_and_printed_within_a_page_of_its_text():
    pages = _pages()
    refs, captions = {}, {}
    for page in range(1, pages + 1):
        text = _text(page, page)
        for m in re.finditer(r"Figure (R\d+) draws", text):
            refs.setdefault(m.group(1), page)
        for m in re.finditer(r"Figure (R\d+):", text):
            captions.setdefault(m.group(1), page)
    assert captions, "no figure captions found"
    for figure, page in captions.items():
        assert figure in refs, f"{figure} is never referenced"
        assert abs(page - refs[figure]) <= 1, (figure, page, refs[figure])


def _pdf_box_and_sizes(path: Path) -> tuple[float, set]:
    data = path.read_bytes()
    box = re.search(rb"/MediaBox\s*\[\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*\]", data)
    sizes = set()
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
        try:
            stream = zlib.decompress(m.group(1))
        except zlib.error:
            continue
        sizes |= {float(x) for x in re.findall(rb"/F\d+\s+([\d.]+)\s+Tf", stream)}
    return float(box.group(1)), sizes


def test_figure_files_have_the_fixed_widths_and_8_to_9_pt_text():
    included = re.findall(r"includegraphics\{(figures/[^}]+\.pdf)\}", (_dir() / "report.tex").read_text())
    assert included
    for name in included:
        width, sizes = _pdf_box_and_sizes(_dir() / name)
        assert min(abs(width - 72 * w) for w in (FULL_WIDTH, HALF_WIDTH)) < 0.5, (name, width)
        assert sizes, f"{name}: no text found"
        body = {s for s in sizes if s >= TICK_PT - 1e-6}
        scripts = sizes - body
        assert body and min(body) >= TICK_PT - 1e-6 and max(body) <= LABEL_PT + 1e-6, (name, sorted(sizes))
        assert all(SCRIPT_FACTOR**2 * TICK_PT - 1e-6 <= s <= SCRIPT_FACTOR * LABEL_PT + 1e-6 for s in scripts), (
            name,
            sorted(sizes),
        )
