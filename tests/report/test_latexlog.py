"""Lost text in the LaTeX log: every overfull vbox and every overfull hbox over 5 pt fails the build."""

from __future__ import annotations

import shutil

import pytest

from lipschitz_icl.report.build import LatexError, run_latexmk
from lipschitz_icl.report.latexlog import HBOX_TOLERANCE_PT, lost_text

LOG = r"""
(./report.tex [1] [2 <./figures/a.pdf>]
Overfull \hbox (3.2pt too wide) in paragraph at lines 10--12
 []
Overfull \hbox (23.8pt too wide) in alignment at lines 256--260
 []
[3]
Overfull \vbox (193.14832pt too high) has occurred while \output is active []
[4]
Underfull \hbox (badness 1867) in paragraph at lines 43--43
"""


def test_every_overfull_vbox_and_every_wide_overfull_hbox_is_lost_text():
    problems = lost_text(LOG)
    assert problems == [
        "overfull hbox 23.8 pt too wide (in alignment at lines 256--260) after page 2",
        "overfull vbox 193.1 pt too high (while the output routine was active) after page 3",
    ]


def test_a_line_a_few_points_into_the_margin_is_not_lost_text():
    assert HBOX_TOLERANCE_PT == 5.0
    assert lost_text(r"Overfull \hbox (4.99pt too wide) in paragraph at lines 1--2") == []
    assert lost_text(r"Overfull \hbox (5.01pt too wide) in paragraph at lines 1--2")
    assert lost_text(r"Overfull \vbox (0.1pt too high) detected at line 7")  # any vbox
    assert lost_text("") == []


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
@pytest.mark.parametrize(
    "body, found",
    [
        (r"\noindent\hbox to 1.2\textwidth{x\hfil}", "overfull hbox"),
        (r"\noindent\vbox to 1.5\textheight{x\vfil}", "overfull vbox"),
    ],
)
def test_the_build_refuses_a_pdf_with_lost_text(tmp_path, body, found):
    (tmp_path / "report.tex").write_text(
        "\\documentclass{article}\\begin{document}" + body + "\\end{document}\n", encoding="utf-8"
    )
    with pytest.raises(LatexError, match=f"text does not fit the page: {found}"):
        run_latexmk(tmp_path, shutil.which("latexmk"))
