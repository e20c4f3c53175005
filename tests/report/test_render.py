"""The LaTeX report: escaping, siunitx numbers, power summary, figures, the command, the PDF."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lipschitz_icl.cli import main
from lipschitz_icl.report import build as report_build
from lipschitz_icl.report import build_report, load_claims, power_summary, render_tex
from lipschitz_icl.report.figures import FigureDataError, data_figure, spec_panel
from lipschitz_icl.report.latex import Latex, breakable, escape, num
from lipschitz_icl.report.mathtext import to_latex
from lipschitz_icl.report.scope import checked_scope

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "claims_example.json"


def test_escape_makes_every_special_character_literal():
    assert escape(r"a_b & 50% $x^2$ {c} ~ # \ <>") == (
        r"a\_b \& 50\% \$x\textasciicircum{}2\$ \{c\} \textasciitilde{} \# \textbackslash{} "
        r"\textless{}\textgreater{}"
    )
    assert escape(Latex(r"\num{1}")) == r"\num{1}"  # already LaTeX: untouched
    assert escape(12) == "12"
    assert breakable("thm/a_b:c") == r"thm/\allowbreak{}a\_\allowbreak{}b:\allowbreak{}c"


@pytest.mark.parametrize(
    "value, low, high, expected",
    [
        # the ends' binary values lie just beyond 1.234 +- 0.005: the printed interval must hold them
        (1.234, 1.229, 1.239, r"\num{1.2340(51)}"),
        (0.3341, 0.3311, 0.3371, r"\num{0.3341(31)}"),
        (12345.678, 12322.0, 12368.0, r"\num{1.2346(24)e4}"),
        (1234.5, 1004.0, 1464.0, r"\num{1230(240)}"),
        (5e-15, 4e-15, 6e-15, r"\num{5.0(10)e-15}"),
        (-3.2, -3.3, -3.1, r"\num{-3.20(10)}"),
        (2.0, 1.9, 2.3, r"\num{2.00(30)}"),  # asymmetric interval: the larger half-width
        (0.5, 0.5, 0.5, r"\num{0.5}"),
        (0.1234567891, None, None, r"\num{0.123457}"),
        ("inf", None, None, r"$\infty$"),
        (None, None, None, "--"),
    ],
)
def test_num_formats_value_and_uncertainty(value, low, high, expected):
    assert num(value, low, high) == expected


@pytest.mark.parametrize(
    "value, half, shown, decade",
    [
        (-1.99999999997107, 8.7e-13, "-2", -10),  # the rounding (2.9e-11) dominates the half-width
        (0.11111111111750, 1e-13, "0.1111111", -7),  # 0.1111111 is 1.2e-8 from the value
        (-2.0000019542, 1e-15, "-2.000002", -7),
        (-2.0, 8.7e-16, "-2", -15),  # printed exactly: the half-width alone
    ],
)
def test_a_value_too_precise_for_its_column_prints_a_bound_that_holds_the_computed_interval(value, half, shown, decade):
    """A constants-table value shown to a few digits with ``+-10^k``: the interval printed, ``shown +- 10^k``, holds
    the computed one, ``value +- half`` -- the rounding of the value as printed included (it was left out: ``-2
    +-10^-12`` for -1.99999999997 was a false interval)."""
    out = num(value, value - half, value + half, digits=7, compact=True, max_digits=7)
    assert out == rf"\num{{{shown}}}\,{{\tiny$\pm 10^{{{decade}}}$}}"
    _holds(out, value - half, value + half)


def _holds(out: str, lo: float, hi: float) -> None:
    """The interval a reader rebuilds from ``out`` (``v(uu)e k`` or ``v +- 10^k``) holds ``[lo, hi]`` exactly."""
    from decimal import Decimal, localcontext

    with localcontext(prec=2000):
        m = re.fullmatch(r"\\num\{([-0-9.]+)\((\d+)\)(?:e(-?\d+))?\}", out)
        if m:
            value, digits, e = m.group(1), m.group(2), int(m.group(3) or 0)
            decimals = len(value.split(".")[1]) if "." in value else 0
            # uu counts units of the value's last digit (of 10^(uu's trailing zeros) when the value has no decimals)
            half = Decimal(digits).scaleb(-decimals + e)
            centre = Decimal(value).scaleb(e)
        else:
            m = re.fullmatch(r"\\num\{([-+0-9.e]+)\}\\,\{\\tiny\$\\pm 10\^\{(-?\d+)\}\$\}", out)
            assert m, out
            centre, half = Decimal(m.group(1)), Decimal(1).scaleb(int(m.group(2)))
        assert centre - half <= Decimal(lo) and Decimal(hi) <= centre + half, (out, lo, hi)


def test_a_printed_value_and_uncertainty_always_hold_the_computed_interval():
    """Fuzzed: every ``num`` output, parenthesised or ``+-10^k``, read back as an interval, holds the computed one
    exactly (the review of the previous form found the printed value's rounding left out)."""
    import random

    rng = random.Random(7)
    for _ in range(4000):
        v = rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12)
        half = abs(v) * 10 ** rng.uniform(-14, -0.5)
        lo, hi = v - half * rng.uniform(0.2, 1.0), v + half * rng.uniform(0.2, 1.0)
        if not lo < v < hi:
            continue
        _holds(num(v, lo, hi, digits=7, compact=True, max_digits=7), lo, hi)
        out = num(v, lo, hi, digits=7, compact=True)
        if "e" not in out or re.search(r"\(\d+\)e", out):
            _holds(out, lo, hi)


def test_num_uncertainty_is_never_rounded_down():
    out = num(1.0, 0.9, 1.1234)  # half-width 0.1234 -> 0.13
    assert out == r"\num{1.00(13)}"


def test_load_claims_rejects_malformed_files(tmp_path):
    bad = tmp_path / "c.json"
    for text, reason in [
        ("{", "readable JSON"),
        ('{"claims": 3}', "'claims' list"),
        ('{"claims": [{"verdict": "holds"}]}', "claim_id"),
        ('{"claims": [{"claim_id": "x", "verdict": "maybe"}]}', "verdict"),
    ]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=reason):
            load_claims(bad)
    with pytest.raises(ValueError, match="run `pytest verify/` first"):
        load_claims(tmp_path / "missing.json")


def test_power_summary_counts_refuted_false_variants():
    claims = load_claims(FIXTURE)["claims"]
    power = power_summary(claims)
    assert [(r["refuted"], r["total"], r["unrefuted"]) for r in power["rows"]] == [
        (4, 4, []),
        (3, 3, []),
        (2, 2, []),
        (1, 1, []),
        (0, 0, []),
        (1, 1, []),
        (1, 1, []),
        (3, 3, []),
    ]
    assert (power["refuted"], power["total"], power["all_refuted"]) == (15, 15, True)
    lost = [dict(claims[0], false_variants=[dict(claims[0]["false_variants"][0], verdict="holds")])]
    summary = power_summary(lost)
    assert summary["all_refuted"] is False
    assert summary["rows"][0]["unrefuted"] == [claims[0]["false_variants"][0]["name"]]
    none = [dict(claims[0], false_variants=[], power=[0, 0])]
    assert power_summary(none)["claims_without_false_variants"] == [claims[0]["claim_id"]]


PAGE_ONE_END = r"\section{The paper, statement by statement}"


def test_tex_has_the_counts_by_scope_the_deviations_and_escaped_statements(tmp_path):
    data = load_claims(FIXTURE)
    cap = next(r for r in data["claims"] if r["key"] == "concentration.cap-probability")
    cap["figure"] = dict(cap["figure"], kind="pie")  # the group's first figure is malformed: noted, the next tried
    rendered = render_tex(data, tmp_path)
    tex = rendered.tex
    for package in ("booktabs", "siunitx", "longtable", "graphicx"):
        assert rf"\usepackage{{{package}}}" in tex
    head = tex[: tex.index(PAGE_ONE_END)]
    # counts by scope: claims, cases, proved, hold, fail, inconclusive, exploratory, at points only
    assert "The paper's statements & 4 & 5 & 0 & 2 & 1 & 1 & 1/0/0 & 1" in head
    assert "Lemmas the proofs cite & 1 & 3 & 1 & 2 & 0 & 0 & 0/0/0 & 2" in head
    assert "3 cases of 2 universal statements" in head and "24 points in all (grid points, probe moves)" in head
    not_holding = [r for r in data["claims"] if r["verdict"] not in ("holds", "proved")]
    assert len(not_holding) == 2
    for case in not_holding:  # every non-holding case on page 1, among the deviations: its claim and setting
        assert rf"\textit{{{case['key'].split('.')[-1]}}}" in head, case["claim_id"]
        assert f"{to_latex(checked_scope([case]).replace('; ', ', '))}: " in head, case["claim_id"]
    assert r"\emph{Exploratory}" in head  # the exploratory claim is a deviation, with its reason
    # the heading counts the claims listed (monotonicity, made-up-bound, noise-part), not the summary rows after them
    assert r"\textbf{Deviations} (3 claims)" in head
    # page 1 says in one line that noise-part is exploratory and where; its section's note gives the reason in full
    assert r"(why: Section~\ref{sec:theorem-3-5})" in head and "earlier Monte Carlo run" not in head
    body = tex[tex.index(r"\section{Theorem 3.5}") :]
    assert r"\textit{noise-part} is exploratory: the 2\% margin was fixed after seeing" in body
    for group in ("Theorem 3.4", "Theorem 3.5", "Sphere concentration"):  # one section per group present
        assert rf"\section{{{group}}}" in tex
    assert r"\appendix" in tex and r"\section{Every case}" in tex
    # special characters of a record are escaped, never live LaTeX; Unicode is mapped
    statement = to_latex(next(r["statement"] for r in data["claims"] if "not math" in r["statement"]))
    assert r"\$not math\$" in statement and "$not math$" not in statement
    assert r"\{braces\} \#hash" in statement and r"\textbackslash{}backslash" in statement
    assert r"$\geq$" in statement and r"$\alpha$" in statement
    # figures: one per claim group (cases overlaid), each referenced from its text; the malformed one noted
    assert rendered.figures and all(p.is_file() and p.read_bytes().startswith(b"%PDF") for p in rendered.figures)
    assert any("thm34-window-law" in p.name for p in rendered.figures)
    for label in re.findall(r"\\label\{(fig:[^}]+)\}", tex):
        assert rf"\ref{{{label}}}" in tex, label
    assert [n.split(":")[0] for n in rendered.notes] == [
        "figure of concentration.cap-probability",
        "figure of concentration.made-up-bound",
    ]
    assert all("figure kind must be one of" in n for n in rendered.notes)


def test_figures_are_vector_pdfs_and_show_zeros_as_upper_limits(tmp_path):
    spec = {
        "kind": "loglog",
        "series": [
            {"label": "a", "x": [1, 2], "y": [1, 4]},
            {"label": "b", "x": [1, 2], "y": [2, 3], "theory_y": [2, 2.9]},
            {
                "label": "c",
                "x": [1, 2, 3],
                "y": [1e-3, 0.0, 0.0],
                "y_low": [5e-4, 0.0, 0.0],
                "y_high": [2e-3, 1e-3, 0.0],
            },
        ],
    }
    data_figure(spec, tmp_path / "s.pdf")
    data = (tmp_path / "s.pdf").read_bytes()
    assert data.startswith(b"%PDF") and b"/Subtype /Image" not in data
    panel = spec_panel(spec)
    import matplotlib.figure as mfig

    from lipschitz_icl.report.figures import data as report_figures

    fig = mfig.Figure()
    ax = fig.add_subplot()
    report_figures._panel(ax, panel)
    labels = ax.get_legend_handles_labels()[1]
    assert "upper confidence limit (value 0)" in labels and "1 points at 0 not shown" in labels
    for bad, reason in [
        ({"kind": "line", "x": [1, 2], "y": [1]}, "expected 2"),
        ({"kind": "line", "x": [1, "a"], "y": [1, 2]}, "numbers only"),
        ({"kind": "pie", "x": [1], "y": [1]}, "kind must be"),
        ([1, 2], "must be an object"),
    ]:
        with pytest.raises(FigureDataError, match=reason):
            data_figure(bad, tmp_path / "bad.pdf")


def test_report_without_latexmk_writes_tex_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report_build.shutil, "which", lambda name: None)
    assert main(["report", "--claims", str(FIXTURE), "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["pdf"] is None and payload["compiled"] is False
    assert (tmp_path / "report.tex").is_file() and not (tmp_path / "report.pdf").exists()
    assert (tmp_path / "constants.csv").is_file() and (tmp_path / "quantities.csv").is_file()
    assert captured.err.count("\n") == 1 and "latexmk not found on PATH" in captured.err
    assert payload["power"]["refuted"] == payload["power"]["total"] == 15
    assert payload["verdicts"] == {"holds": 5, "fails": 1, "inconclusive": 1, "proved": 1}


def test_report_bad_claims_file_is_exit_2(tmp_path, capsys):
    assert main(["report", "--claims", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "--claims:" in capsys.readouterr().err  # the option the user passed


def test_failed_compilation_is_exit_1_with_the_log(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "bin" / "latexmk"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho '! Undefined control sequence.'\nexit 12\n")
    fake.chmod(0o755)
    monkeypatch.setattr(report_build.shutil, "which", lambda name: str(fake))
    assert main(["report", "--claims", str(FIXTURE), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "latexmk failed: ! Undefined control sequence." in err and "report.log" in err
    assert err.count("\n") == 1 and (tmp_path / "out" / "report.tex").is_file()


@pytest.mark.skipif(
    shutil.which("latexmk") is None,
    reason="latexmk is not installed (apt-get install latexmk texlive-latex-recommended "
    "texlive-science); the PDF build is not checked",
)
def test_pdf_builds_and_contains_every_claim_id(tmp_path):
    result = build_report(FIXTURE, tmp_path)
    assert result.compiled and result.pdf.read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cases.csv",
        "constants.csv",
        "figures",
        "quantities.csv",
        "report.log",
        "report.pdf",
        "report.tex",
    ]
    ids = [r["claim_id"] for r in load_claims(FIXTURE)["claims"]]
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(result.pdf), "-"], capture_output=True, text=True, check=True).stdout
        source = "pdftotext"
    else:  # no poppler: the ids must be in the source and the log must show the pages were written
        text = (tmp_path / "report.tex").read_text().replace("\\_", "_")
        assert "Output written on report.pdf" in (tmp_path / "report.log").read_text()
        source = "report.tex"
    squeezed = re.sub(r"\s+", "", text)  # an id may break across lines in its table column
    missing = [claim_id for claim_id in ids if re.sub(r"\s+", "", claim_id) not in squeezed]
    assert not missing, f"claim ids missing from {source}: {missing}"
    log = (tmp_path / "report.log").read_text(errors="replace")
    assert "Undefined control sequence" not in log and "Missing $ inserted" not in log


def _strip_new_keys(data: dict) -> dict:
    """``data`` as an older claims.json has it: none of the keys the newer format adds."""
    for key in ("provenance", "design_history"):
        data.pop(key, None)
    for record in data["claims"]:
        for key in ("design_hash", "design_fixed", "salt", "proof", "alternatives", "points", "scope"):
            record.pop(key, None)
        if record["verdict"] == "proved":
            record["verdict"] = "holds"
        if isinstance(record.get("resolution"), dict):
            record["resolution"] = {k: v for k, v in record["resolution"].items() if k not in ("meaning", "symbol")}
        for q in record.get("quantities", []):
            for key in ("symbol", "setting", "constant"):
                q.pop(key, None)
            if q.get("verdict") == "proved":
                q["verdict"] = "holds"
    return data


def test_the_newer_claims_json_keys_are_used_when_present(tmp_path):
    data = load_claims(FIXTURE)
    rendered = render_tex(data, tmp_path)
    tex = rendered.tex
    head = tex[: tex.index(PAGE_ONE_END)]
    assert "Alternatives ruled out: 1 of 2" in head  # pre-specified alternatives replace the near misses
    assert r"commit \code{abc1234 (clean tree)}" in head and "2026-11-23" in head and "157 s" in head
    assert "Read when the report was built" not in head  # everything came from claims.json
    row = next(r for r in rendered.constants if r.source == "claims.json")
    assert (row.symbol, row.verdict, row.setting["h"]) == (r"c_{\mathrm{cap}}", "proved", "[0, 1)")
    assert "holds at 12 pts" in tex  # a universal statement checked at points says so, in the case list too
    assert "how much faster a rate the certified tails still refute" in tex  # the record's own meaning
    assert r"\section{Design history and provenance}" in tex and "first lock of the design" in tex
    csv_rows = (tmp_path / "constants.csv").read_text().splitlines()
    assert csv_rows[0].startswith("case,claim_id,key,constant,symbol") and len(csv_rows) == 1 + len(rendered.constants)


def test_an_older_claims_json_is_reported_with_what_can_be_derived(tmp_path):
    data = _strip_new_keys(load_claims(FIXTURE))
    rendered = render_tex(data, tmp_path, claims_path=FIXTURE)
    head = rendered.tex[: rendered.tex.index(PAGE_ONE_END)]
    assert "Near-miss variants refuted: 15 of 15" in head
    assert "Read when the report was built, not from" in head and "commit, date" in head  # and said so
    assert all(r.source == "fallback mapping" for r in rendered.constants)
    assert any(r.symbol == "C_d" and r.setting == {"task": "affine", "d": "3"} for r in rendered.constants)
    assert "The paper's statements" in head and "Lemmas the proofs cite" in head  # scopes from the registry


def test_the_runs_merged_into_claims_json_are_named_per_case(tmp_path):
    data = load_claims(FIXTURE)
    for i, record in enumerate(data["claims"]):
        record["run"] = "run-a" if i % 2 else "run-b"
    data["runs"] = [{"id": "run-a", "date": "2026-11-28", "selection": "-k thm34"}]
    rendered = render_tex(data, tmp_path)
    head = rendered.tex[: rendered.tex.index(PAGE_ONE_END)]
    assert "merges 2 runs" in head
    appendix = rendered.tex[rendered.tex.index(r"\section{Every case}") :]
    assert r"\code{run-\allowbreak{}a}" in appendix and r"\code{run-\allowbreak{}b}" in appendix
    assert "not in the file's runs list" in rendered.tex  # run-b names a run the list lacks


def test_one_run_is_named_on_page_one_without_a_run_column(tmp_path):
    data = load_claims(FIXTURE)
    for record in data["claims"]:
        record["run"] = "run-a"
    rendered = render_tex(data, tmp_path)
    head = rendered.tex[: rendered.tex.index(PAGE_ONE_END)]
    assert r"It comes from one run (\code{run-\allowbreak{}a})." in head and "merges" not in head
    appendix = rendered.tex[rendered.tex.index(r"\section{Every case}") :]
    assert "(run " not in appendix[: appendix.index(r"\section{Margins")]


def test_the_constants_table_is_by_case_with_the_shared_setting_once(tmp_path):
    tex = render_tex(load_claims(FIXTURE), tmp_path).tex
    table = tex[
        tex.index(r"\section{The constants}") : tex.index(r"\end{longtable}", tex.index(r"\section{The constants}"))
    ]
    # a heading line per case (number, claim, the settings its constants share), then one line per constant
    assert (
        r"1 & \multicolumn{6}{@{}P{0.9\textwidth}@{}}{thm34.window-law: affine, $d = 3$; \emph{intervals:} a bound"
        in table
    )
    assert table.count("thm34.window-law: affine") == 1
    assert r"$\frac{1}{3} = {}$\num{0.333333}" in table  # the closed form beside the theory value
    assert r"window-law constant ($C_d$)" in table  # the symbol after the name


def test_a_constant_named_by_its_symbol_does_not_repeat_it(tmp_path):
    data = load_claims(FIXTURE)
    data["claims"][0]["quantities"].append(
        {
            "name": "C_d: w*/rho^alpha at the largest n",
            "symbol": "C_d",
            "constant": True,
            "theory": 0.6,
            "measured": 0.6,
        }
    )
    tex = render_tex(data, tmp_path).tex
    table = tex[tex.index(r"\section{The constants}") :]
    assert r"$C_{d}$: ${w^{*}}/\Lambda^{\alpha}$ at the largest $n$ &" in table  # not "... ($C_d$)"


def test_the_constants_note_counts_the_values_without_an_interval(tmp_path):
    data = load_claims(FIXTURE)
    quantity = {"name": "C_d: w*/rho^alpha at the largest n", "symbol": "C_d", "constant": True, "theory": 0.6}
    data["claims"][0]["quantities"].append({**quantity, "measured": 0.6})  # no interval: a dagger
    tex = render_tex(data, tmp_path / "a").tex
    daggers = tex.count(r"$^{\dagger}$")
    assert daggers >= 1 and f"marked $\\dagger$ ({daggers} of " in tex
    for record in data["claims"]:  # every measured value given an interval: no dagger, and the note says so
        for q in record.get("quantities", []):
            if q.get("measured") is not None and (q.get("ci_low") is None or q.get("ci_high") is None):
                q.update(ci_low=q["measured"], ci_high=q["measured"])
    tex = render_tex(data, tmp_path / "b").tex
    assert r"$^{\dagger}$" not in tex
    assert "Every measured value carries its interval" in tex and "marked $\\dagger$" not in tex


def test_a_resolution_s_own_meaning_takes_its_group_s_symbols():
    from lipschitz_icl.report.render import resolution_of

    records = [{"resolution": {"parameter": "s", "value": 0.5, "meaning": "rho is shown to fall"}}]
    assert resolution_of(records)["meaning"] == r"$\Lambda$ is shown to fall"  # rho alone: n L^2/sigma^2
    assert resolution_of(records, {"rho": r"\rho"})["meaning"] == r"$\rho$ is shown to fall"  # rho(M, B)


def test_point_checks_count_every_universal_statement_evaluated_at_points():
    from lipschitz_icl.report.summary import point_checks, scope_counts

    records = [
        {"claim_id": "a", "key": "k.a", "verdict": "holds", "points": 3},
        {
            "claim_id": "b",
            "key": "k.b",
            "verdict": "holds",
            "rule_name": "one-sided",
            "quantities": [{"name": "max", "verdict": "holds", "note": "must be <= 1 at all 12 points"}],
        },
        {"claim_id": "c", "key": "k.c", "verdict": "proved", "rule_name": "proof", "points": 5},
        {"claim_id": "d", "key": "k.d", "verdict": "holds", "quantities": [{"name": "x", "verdict": "holds"}]},
    ]
    checks = point_checks(records)
    assert [r["claim_id"] for r, _ in checks.cases] == ["a", "b"] and checks.points == 15
    (paper,) = scope_counts(records)  # none carries a scope the registry knows: the paper's
    assert (paper.cases, paper.point_cases, paper.confirmatory["proved"]) == (4, 2, 1)


def test_breakable_gives_every_long_identifier_break_opportunities():
    out = breakable("concentration/softmax-normaliser/d10-w4.0-n100/seed0")
    assert out.count(r"\allowbreak{}") >= 6
    assert breakable("x" * 30).count(r"\allowbreak{}") == 2  # a long run is cut every 14 characters
    assert r"\textbackslash{}" in breakable("a\\b")  # commands are never cut


def test_a_mean_over_runs_gets_the_t_interval_its_rule_states():
    from lipschitz_icl.report.constants import runs_interval

    record = {"rule": "sign on consecutive differences of the mean over 4 runs (0.99 t-intervals)"}
    note = {"note": "theory: exact w*; runs 1.0, 1.2, 1.1, 1.3"}
    low, high = runs_interval(record, note, 1.15)
    half = 5.840909 * (0.05 / 3) ** 0.5 / 2  # t(0.995, 3 dof) sd / sqrt(4)
    assert low == pytest.approx(1.15 - half, rel=1e-5) and high == pytest.approx(1.15 + half, rel=1e-5)
    assert runs_interval(record, note, 2.0) == (None, None)  # not the runs' mean: no interval made up
    assert runs_interval({"rule": "no level stated"}, note, 1.15) == (None, None)


def test_a_series_theory_line_keeps_its_hue_but_shows_over_the_series_line():
    import numpy as np
    from matplotlib.colors import rgb_to_hsv, to_rgb

    from lipschitz_icl.report.figures.data import theory_colour

    for colour in ("C0", "C1", "tab:green", "#d62728"):
        data, theory = np.array(to_rgb(colour)), np.array(theory_colour(colour))
        assert np.all(theory < data) or np.all(data == 0)  # darker in every channel
        assert np.allclose(rgb_to_hsv(theory)[0], rgb_to_hsv(data)[0])  # the same hue
        assert np.abs(theory - data).max() > 0.2  # a visible difference


def test_the_theory_key_shows_the_theory_lines_colours_not_a_grey_none_of_them_has(tmp_path, monkeypatch):
    """Each series' theory line is a darker shade of its colour; the key was one grey dash.  It is now one
    dash per theory colour (at most three), side by side, in the colours the lines have."""
    from matplotlib.colors import to_rgb

    from lipschitz_icl.report.figures import data as report_figures

    drawn: list = []
    monkeypatch.setattr(report_figures, "save_pdf", lambda fig, path: drawn.append(fig))
    spec = {
        "kind": "line",
        "xlabel": "n",
        "ylabel": "ratio",
        "series": [
            {"label": f"s{i}", "x": [1, 2], "y": [1.0 + i, 2.0 + i], "theory_y": [1.1 + i, 2.1 + i]} for i in range(4)
        ],
    }
    report_figures.data_figure(spec, tmp_path / "t.pdf")
    (legend,) = drawn[0].legends
    from matplotlib.lines import Line2D

    dashed = [to_rgb(line.get_color()) for line in legend.findobj(Line2D) if line.get_linestyle() != "-"]
    expected = [report_figures.theory_colour(f"C{i}") for i in range(3)]
    assert dashed == [pytest.approx(c) for c in expected]  # three dashes in the lines' colours, no grey one


def test_a_case_counted_at_points_on_page_one_says_so_in_the_case_list(tmp_path):
    """Page 1 counts a case as checked at points when its record gives ``points`` or a decided quantity's note
    says "at all N points"; the case list used the first only, so 11 cases counted on page 1 read a plain
    "holds" in the appendix.  Both now read :func:`lipschitz_icl.report.summary.points_of`."""
    data = load_claims(FIXTURE)
    record = next(r for r in data["claims"] if r.get("verdict") == "holds" and r.get("points") is None)
    record["quantities"] = [
        {"name": "margin at every point", "value": 0.1, "verdict": "holds", "note": "holds at all 7 points"}
    ]
    tex = render_tex(data, tmp_path).tex
    assert "holds at 7 pts" in tex
    head = tex[: tex.index(PAGE_ONE_END)]
    assert "At points only:" in head


def test_every_entry_of_the_bibliography_is_cited(tmp_path):
    """A reference list holds only works the text cites: each library where its version is given."""
    tex = render_tex(load_claims(FIXTURE), tmp_path).tex
    cited = {key.strip() for group in re.findall(r"\\cite\{([^}]*)\}", tex) for key in group.split(",")}
    listed = set(re.findall(r"\\bibitem\{([^}]*)\}", tex))
    assert listed and listed <= cited, sorted(listed - cited)


def test_figures_are_set_in_place_never_as_floats(tmp_path):
    """A float deferred to the next page lands between the rows of the claims table that follows it (a
    table split by a figure): every figure is set where it is referenced, with its caption."""
    tex = render_tex(load_claims(FIXTURE), tmp_path).tex
    assert r"\begin{figure}" not in tex and r"\captionof{figure}" in tex


def test_the_margins_appendix_leaves_out_the_package_prefix_of_module_paths(tmp_path):
    """A margin's source names modules (``lipschitz_icl.derivations.window_law``); the appendix states the
    package once and prints the paths without it, the record in claims.json keeping the whole path."""
    data = load_claims(FIXTURE)
    data["claims"][0]["margin_source"] = "derivation: lipschitz_icl.derivations.window_law.window_law gives it"
    tex = render_tex(data, tmp_path).tex
    appendix = tex[tex.index(r"\label{app:margins}") : tex.index(r"\label{app:profile}")]
    assert "window" in appendix and "lipschitz" not in appendix.split(r"\par}", 1)[1]
    assert r"modules of the package \code{lipschitz\_icl}" in appendix


def test_the_libraries_recorded_by_the_run_come_before_those_read_at_report_time(tmp_path):
    """One phrase ``read at report time:`` before the versions the run did not record (it was repeated after
    each of them), each library cited."""
    data = load_claims(FIXTURE)
    data["provenance"] = {**data.get("provenance", {}), "versions": {"numpy": "2.4.6"}}
    tex = render_tex(data, tmp_path).tex
    line = tex[tex.index("Libraries: ") :].split(". Seeds:", 1)[0]
    assert line.startswith(r"Libraries: numpy 2.4.6~\cite{")
    assert line.count("read at report time") == 1 and "(at report time)" not in line
    assert line.index("numpy") < line.index("read at report time") < line.index("scipy")


def test_the_proved_statements_of_the_paper_are_listed_by_group_and_w_star_is_defined_where_named():
    from types import SimpleNamespace

    from lipschitz_icl.certified.wstar_proof import W_SEARCH
    from lipschitz_icl.report.render import _grouped_keys, _wstar_range

    keys = ["linear.error-floor", "loss_shape.bias-falls", "loss_shape.window-bound"]
    assert _grouped_keys(keys) == "linear: error-floor; loss_shape: bias-falls, window-bound"
    named = SimpleNamespace(record={"statement": "T C_d rho^alpha <= w* <= C_d rho^alpha / T"})
    unnamed = SimpleNamespace(record={"statement": "the noise part rises"})
    assert _wstar_range([unnamed]) == ""
    assert W_SEARCH == (1e-3, 1e8)  # the range the sentence prints, read from the prover
    assert _wstar_range([unnamed, named]) == r"$w \in (10^{-3}, 10^{8})$"


def test_a_proved_claim_says_under_its_section_what_it_does_not_prove_and_why():
    """The registry's ``not_proved`` (the window bound: ReLU and d = 5 stay decided statistically) is printed
    under the claim's section, typeset, as a sentence; a claim without it gets no such note."""
    from lipschitz_icl.gates import registry
    from lipschitz_icl.report.render import _section_notes
    from lipschitz_icl.report.sections import build_sections

    spec = registry.find("loss_shape.window-bound")
    assert "ReLU" in spec.not_proved and "counterexample" in spec.not_proved
    records = [
        {"key": key, "claim_id": f"{key.replace('.', '/')}/x", "verdict": "proved", "status": "confirmatory"}
        for key in ("loss_shape.window-bound", "loss_shape.bias-falls")
    ]
    (view,) = build_sections(records)
    notes = _section_notes(view, set())
    (note,) = [n for n in notes if "not proved" in n]
    assert note.startswith(r"\textit{window-bound}, not proved: ReLU and $d = 5$ stay with Theorem 3.4")
    assert note.endswith(".") and r"$T = 0.8$" in note
    assert not any(n.startswith(r"\textit{bias-falls}, not proved") for n in notes)
