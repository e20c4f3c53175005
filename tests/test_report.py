"""The LaTeX report: escaping, siunitx numbers, power summary, figures, the command, the PDF."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lipschitz_icl import report as report_mod
from lipschitz_icl.cli import main
from lipschitz_icl.report import build_report, load_claims, power_summary, render_tex
from lipschitz_icl.report.figures import FigureDataError, data_figure
from lipschitz_icl.report.latex import Latex, breakable, escape, num

FIXTURE = Path(__file__).resolve().parent / "data" / "claims_example.json"


def test_escape_makes_every_special_character_literal():
    assert escape(r"a_b & 50% $x^2$ {c} ~ # \ <>") == (
        r"a\_b \& 50\% \$x\textasciicircum{}2\$ \{c\} \textasciitilde{} \# \textbackslash{} "
        r"\textless{}\textgreater{}")
    assert escape(Latex(r"\num{1}")) == r"\num{1}"  # already LaTeX: untouched
    assert escape(12) == "12"
    assert breakable("thm/a_b:c") == r"thm/\allowbreak{}a\_\allowbreak{}b:\allowbreak{}c"


@pytest.mark.parametrize("value, low, high, expected", [
    (1.234, 1.229, 1.239, r"\num{1.2340(50)}"),
    (0.3341, 0.3311, 0.3371, r"\num{0.3341(30)}"),
    (12345.678, 12322.0, 12368.0, r"\num{1.2346(24)e4}"),
    (1234.5, 1004.0, 1464.0, r"\num{1230(240)}"),
    (5e-15, 4e-15, 6e-15, r"\num{5.0(10)e-15}"),
    (-3.2, -3.3, -3.1, r"\num{-3.20(10)}"),
    (2.0, 1.9, 2.3, r"\num{2.00(30)}"),  # asymmetric interval: the larger half-width
    (0.5, 0.5, 0.5, r"\num{0.5}"),
    (0.1234567891, None, None, r"\num{0.123457}"),
    ("inf", None, None, r"$\infty$"),
    (None, None, None, "--"),
])
def test_num_formats_value_and_uncertainty(value, low, high, expected):
    assert num(value, low, high) == expected


def test_num_uncertainty_is_never_rounded_down():
    out = num(1.0, 0.9, 1.1234)  # half-width 0.1234 -> 0.13
    assert out == r"\num{1.00(13)}"


def test_load_claims_rejects_malformed_files(tmp_path):
    bad = tmp_path / "c.json"
    for text, reason in [("{", "readable JSON"), ('{"claims": 3}', "'claims' list"),
                         ('{"claims": [{"verdict": "holds"}]}', "claim_id"),
                         ('{"claims": [{"claim_id": "x", "verdict": "maybe"}]}', "verdict")]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=reason):
            load_claims(bad)
    with pytest.raises(ValueError, match="run `pytest verify/` first"):
        load_claims(tmp_path / "missing.json")


def test_power_summary_counts_refuted_false_variants():
    claims = load_claims(FIXTURE)["claims"]
    power = power_summary(claims)
    assert [(r["refuted"], r["total"], r["unrefuted"]) for r in power["rows"]] == [
        (4, 4, []), (3, 3, []), (2, 2, []), (1, 1, []), (1, 1, []), (3, 3, [])]
    assert (power["refuted"], power["total"], power["all_refuted"]) == (14, 14, True)
    lost = [dict(claims[0], false_variants=[dict(claims[0]["false_variants"][0], verdict="holds")])]
    summary = power_summary(lost)
    assert summary["all_refuted"] is False and summary["rows"][0]["unrefuted"] == [claims[0]["false_variants"][0]["name"]]
    none = [dict(claims[0], false_variants=[], power=[0, 0])]
    assert power_summary(none)["claims_without_false_variants"] == [claims[0]["claim_id"]]


def test_tex_has_the_summary_sections_and_escaped_statements(tmp_path):
    data = load_claims(FIXTURE)
    tex, figures, notes, _ = render_tex(data, tmp_path)
    for package in ("booktabs", "siunitx", "longtable", "graphicx"):
        assert rf"\usepackage{{{package}}}" in tex
    summary = tex[tex.index(r"\section*{Summary}"):tex.index(r"\clearpage")]
    for group in ("Theorem 3.4", "Theorem 3.5", "Sphere concentration"):  # one summary row per group present
        assert rf"\textbf{{{group}}}" in summary and rf"\section{{{group}}}" in tex
    assert "Confirmatory: 3 hold, 1 fail, 1 inconclusive" in summary.replace("\n", " ")
    assert "Exploratory" in summary and "(1 hold)" in summary  # the exploratory record is counted apart
    assert r"\appendix" in tex and r"\paragraph{thm34.window-law}" in tex
    # the statement's special characters are escaped, never live LaTeX; Unicode is mapped
    assert r"\& C from derivations/ (100\% of the grid; x\_i \textasciitilde{} Unif, \$not math\$ " \
           r"\{braces\} \#hash \textasciitilde{}tilde \textbackslash{}backslash \textless{}less\textgreater{})" in tex
    assert r"--- holds for t $\geq$ 0 with $\alpha$" in tex and "$not math$" not in tex
    # figures: one per set of axes per claim (cases overlaid), the malformed one noted, never drawn
    assert figures and all(p.is_file() and p.read_bytes().startswith(b"%PDF") for p in figures)
    assert any("thm34-window-law" in p.name for p in figures)
    assert notes == ["figure 1 of concentration.made-up-bound: figure kind must be one of line, scatter, "
                     "loglog, semilogx, semilogy (got 'nonsense')"]


def test_figures_are_vector_pdfs(tmp_path):
    spec = {"kind": "loglog", "series": [{"label": "a", "x": [1, 2], "y": [1, 4]},
                                         {"label": "b", "x": [1, 2], "y": [2, 3], "theory_y": [2, 2.9]}]}
    data_figure(spec, tmp_path / "s.pdf")
    data = (tmp_path / "s.pdf").read_bytes()
    assert data.startswith(b"%PDF") and b"/Subtype /Image" not in data
    for bad, reason in [({"kind": "line", "x": [1, 2], "y": [1]}, "expected 2"),
                        ({"kind": "line", "x": [1, "a"], "y": [1, 2]}, "numbers only"),
                        ({"kind": "pie", "x": [1], "y": [1]}, "kind must be"), ([1, 2], "must be an object")]:
        with pytest.raises(FigureDataError, match=reason):
            data_figure(bad, tmp_path / "bad.pdf")


def test_report_without_latexmk_writes_tex_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report_mod.shutil, "which", lambda name: None)
    assert main(["report", "--claims", str(FIXTURE), "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["pdf"] is None and payload["compiled"] is False
    assert (tmp_path / "report.tex").is_file() and not (tmp_path / "report.pdf").exists()
    assert captured.err.count("\n") == 1 and "latexmk not found on PATH" in captured.err
    assert payload["power"]["refuted"] == payload["power"]["total"] == 14
    assert payload["verdicts"] == {"holds": 4, "fails": 1, "inconclusive": 1}


def test_report_bad_claims_file_is_exit_2(tmp_path, capsys):
    assert main(["report", "--claims", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "--claims:" in capsys.readouterr().err  # the option the user passed


def test_failed_compilation_is_exit_1_with_the_log(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "bin" / "latexmk"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho '! Undefined control sequence.'\nexit 12\n")
    fake.chmod(0o755)
    monkeypatch.setattr(report_mod.shutil, "which", lambda name: str(fake))
    assert main(["report", "--claims", str(FIXTURE), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "latexmk failed: ! Undefined control sequence." in err and "report.log" in err


@pytest.mark.skipif(shutil.which("latexmk") is None,
                    reason="latexmk is not installed (apt-get install latexmk texlive-latex-recommended "
                           "texlive-science); the PDF build is not checked")
def test_pdf_builds_and_contains_every_claim_id(tmp_path):
    result = build_report(FIXTURE, tmp_path)
    assert result.compiled and result.pdf.read_bytes().startswith(b"%PDF")
    ids = [r["claim_id"] for r in load_claims(FIXTURE)["claims"]]
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(result.pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
        source = "pdftotext"
    else:  # no poppler: the ids must be in the source and the log must show the pages were written
        text = (tmp_path / "report.tex").read_text().replace("\\_", "_")
        assert "Output written on report.pdf" in (tmp_path / "report.log").read_text()
        source = "report.tex"
    missing = [claim_id for claim_id in ids if claim_id not in text]
    assert not missing, f"claim ids missing from {source}: {missing}"
    log = (tmp_path / "report.log").read_text(errors="replace")
    assert "Undefined control sequence" not in log and "Missing $ inserted" not in log
