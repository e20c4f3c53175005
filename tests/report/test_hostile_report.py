"""Hostile input and hostile output directories for ``lipschitz-icl report`` and ``figures`` (issues #11,
#22): whatever Unicode a claim carries compiles; nothing in ``--out`` is run, read or followed (a
``.latexmkrc`` canary, a stale ``report.aux``, symbolic and dangling links as decoys); an existing file is
never replaced without ``--force``, and with it a link is replaced itself, never its target; an empty,
read-only or full ``--out`` is one line and exit 2 with no partial file; mathtext in labels and claim keys
and malformed figure data are one note, never a traceback; the figure count is capped.

Table rows: ``(id, command, prepare, expected exit code, stderr fragment, check)``; ``prepare(tmp)``
builds the decoys in the case directory and returns the ``--out`` directory, ``check(tmp)`` asserts what
must (not) have happened to them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lipschitz_icl.cli import main
from lipschitz_icl.report import build_report, render
from lipschitz_icl.report import output as report_output
from lipschitz_icl.report.latex import escape

FIXTURE = Path(__file__).parents[1] / "data" / "claims_example.json"
UNICODE_TEXT = "w* ≥ C ρ^α — ‘quoted’ “double” Δ Ω σ² ± ∞ ≤ ≠ → é ñ łŘ ĸ 中 😀 …"
HAS_LATEX = shutil.which("latexmk") is not None
SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_escape_maps_unicode_and_flattens_line_breaks():
    out = escape("a ≥ b — αβ\n\nnext\r\x00end 中")
    assert r"$\geq$" in out and "---" in out and r"$\alpha$$\beta$" in out and "[U+4E2D]" in out
    assert "\n" not in out and "\r" not in out and "\x00" not in out
    assert all(ord(ch) < 0x180 for ch in out)  # only what pdflatex's UTF-8 input with T1 fonts typesets


@pytest.mark.skipif(not HAS_LATEX, reason="latexmk not installed")
def test_report_with_unicode_compiles(tmp_path):
    data = json.loads(FIXTURE.read_text())
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


# ----------------------------------------------------------------------------- decoys
def _outside(tmp: Path) -> Path:
    """A directory outside ``--out`` that links point into (must stay as it is)."""
    target = tmp / "outside"
    target.mkdir(exist_ok=True)
    (target / "victim.tex").write_text("VICTIM")
    return target


def _link(out: Path, name: str, target: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, out / name)
    return out


def linked_tex(tmp):
    return _link(tmp / "out", "report.tex", _outside(tmp) / "victim.tex")


def dangling_tex(tmp):
    return _link(tmp / "out", "report.tex", tmp / "outside" / "created-through-the-link.tex")


def linked_figures(tmp):
    return _link(tmp / "out", "figures", _outside(tmp))


def linked_log(tmp):
    return _link(tmp / "out", "report.log", _outside(tmp) / "victim.tex")


def existing_tex(tmp):
    out = tmp / "out"
    out.mkdir()
    (out / "report.tex").write_text("MINE")
    return out


def out_is_file(tmp):
    (tmp / "afile").write_text("x")
    return tmp / "afile"


def victim_untouched(tmp):
    assert (tmp / "outside" / "victim.tex").read_text() == "VICTIM"
    assert sorted(p.name for p in (tmp / "outside").iterdir()) == ["victim.tex"]


def link_kept(name):
    def check(tmp):
        victim_untouched(tmp)
        assert (tmp / "out" / name).is_symlink()
        assert not (tmp / "out" / "constants.csv").exists()  # a refusal writes nothing

    return check


def link_replaced(name):
    def check(tmp):
        victim_untouched(tmp)
        path = tmp / "out" / name
        assert not path.is_symlink() and path.exists()

    return check


def _regular(path: Path) -> None:
    assert path.exists() and not path.is_symlink()


def nothing_created(tmp):
    victim_untouched_if_any(tmp)
    assert not (tmp / "outside" / "created-through-the-link.tex").exists()


def victim_untouched_if_any(tmp):
    if (tmp / "outside").exists():
        victim_untouched(tmp)


def mine_kept(tmp):
    assert (tmp / "out" / "report.tex").read_text() == "MINE"


def no_files_in_cwd(tmp):
    assert sorted(p.name for p in tmp.iterdir()) == ["claims.json"]


REPORT = ["report", "--no-pdf"]
CASES = [
    ("linked-tex", REPORT, linked_tex, 2, "--force", link_kept("report.tex")),
    ("linked-tex-force", REPORT + ["--force"], linked_tex, 0, "", link_replaced("report.tex")),
    ("dangling-tex", REPORT, dangling_tex, 2, "--force", nothing_created),
    (
        "dangling-tex-force",
        REPORT + ["--force"],
        dangling_tex,
        0,
        "",
        lambda tmp: (nothing_created(tmp), _regular(tmp / "out" / "report.tex")),
    ),
    ("linked-figures", REPORT, linked_figures, 2, "symbolic link", link_kept("figures")),
    ("linked-figures-force", REPORT + ["--force"], linked_figures, 0, "", link_replaced("figures")),
    (
        "linked-log",
        ["report"] if HAS_LATEX else REPORT,
        linked_log,
        2 if HAS_LATEX else 0,
        "--force" if HAS_LATEX else "",
        link_kept("report.log") if HAS_LATEX else victim_untouched,
    ),
    ("existing-tex", REPORT, existing_tex, 2, "--force", mine_kept),
    ("out-empty", REPORT, lambda tmp: "", 2, "--out", no_files_in_cwd),
    ("out-is-a-file", REPORT, out_is_file, 2, "--out", lambda tmp: None),
]


@pytest.mark.parametrize("case_id, command, prepare, code, fragment, check", CASES, ids=[c[0] for c in CASES])
def test_hostile_out(case_id, command, prepare, code, fragment, check, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "claims.json")
    out = prepare(tmp_path)
    assert main([*command, "--claims", str(tmp_path / "claims.json"), "--out", str(out)]) == code
    err = capsys.readouterr().err.strip().splitlines()
    if code == 0:
        assert all("Traceback" not in line for line in err)
    else:
        assert len(err) == 1 and fragment in err[0] and "Traceback" not in err[0], err
    check(tmp_path)


# ----------------------------------------------------------------------------- nothing in --out is run or read
@pytest.mark.skipif(not HAS_LATEX, reason="latexmk not installed")
def test_latexmkrc_canary_is_not_run_and_stale_aux_not_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    canary = tmp_path / "CANARY"
    (out / ".latexmkrc").write_text(f'system("touch {canary}");\n$pdflatex = "touch {canary}; pdflatex %O %S";\n')
    (out / "report.aux").write_text("\\errmessage{STALE AUX READ}\\gdef\\thepage{STALE}\n")
    result = build_report(FIXTURE, out)
    assert result.compiled and not canary.exists()
    text = (
        subprocess.run(["pdftotext", str(result.pdf), "-"], capture_output=True, text=True).stdout
        if shutil.which("pdftotext")
        else ""
    )
    assert "STALE" not in text
    assert (out / "report.aux").read_text().startswith("\\errmessage")  # not ours: left alone


# ----------------------------------------------------------------------------- a failing disk
def _fail_copy(errno_value):
    def copy(src, dst, length=0):
        dst.write(src.read(100))  # part of the file, then the disk gives out
        raise OSError(errno_value, os.strerror(errno_value))

    return copy


@pytest.mark.parametrize(
    "errno_value, code",
    [(errno.ENOSPC, 2), (errno.EROFS, 2), (errno.EACCES, 2), (errno.EDQUOT, 2), (errno.EIO, 1)],
    ids=["full", "read-only", "permission", "quota", "io-error"],
)
def test_a_failing_disk_is_one_line_and_leaves_no_partial_file(errno_value, code, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    monkeypatch.setattr(report_output.shutil, "copyfileobj", _fail_copy(errno_value))
    assert main(["report", "--no-pdf", "--claims", str(FIXTURE), "--out", str(out)]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and os.strerror(errno_value) in err[0] and "Traceback" not in err[0]
    assert list(out.iterdir()) == []  # no partial file, no temporary file, no empty figures/


def test_a_full_disk_for_real_is_one_line_and_exit_2(tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: every write past the limit fails with EFBIG."""
    out = tmp_path / "out"
    script = (
        "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000)); "
        "from lipschitz_icl.cli import main; "
        f"sys.exit(main(['report', '--no-pdf', '--claims', {str(FIXTURE)!r}, '--out', {str(out)!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(tmp_path)},
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert not out.exists() or list(out.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["out"] or not any(
        p.name.startswith("lipschitz-icl-report-") for p in tmp_path.iterdir()
    )


# ----------------------------------------------------------------------------- hostile claims data
def _claims_with(tmp_path, records) -> Path:
    data = json.loads(FIXTURE.read_text())
    data["claims"].extend(records)
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(data))
    return path


MATHTEXT = r"$\foo$ and $\frac{$ and \$"


def test_mathtext_in_claim_keys_and_labels_is_text_not_a_crash(tmp_path, capsys):
    record = {
        "claim_id": f"thm34/{MATHTEXT}/affine/d3",
        "key": f"thm34.{MATHTEXT}",
        "group": "thm34",
        "verdict": "holds",
        "statement": MATHTEXT,
        "quantities": [{"name": MATHTEXT, "theory": 1.0, "measured": 1.0}],
        "figure": {"kind": "line", "x": [1, 2], "y": [1, 2], "xlabel": MATHTEXT, "ylabel": MATHTEXT, "label": MATHTEXT},
    }
    other = dict(record, claim_id="other/x/y", key="other.x", group="other")
    path = _claims_with(tmp_path, [record, other])
    assert main(["report", "--no-pdf", "--claims", str(path), "--out", str(tmp_path / "out")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    tex = (tmp_path / "out" / "report.tex").read_text()
    assert r"\$\textbackslash{}foo\$" in tex  # printed as text, never live


def test_a_fig1_record_with_short_arrays_is_one_note(tmp_path):
    fig = {
        "name": "fig1",
        "L": [1.0, 2.0],
        "window": [0.5],
        "angle": [0.0, 1.0],
        "context_angle": [0.1],
        "context_y": [[0.0], [0.0]],
        "query_f": [0.0, 0.0],
        "curves": [[0.0, 1.0], [0.0, 1.0]],
        "softmax_weights": [[1.0, 1.0], [1.0, 1.0]],
        "linear_weights": [[1.0, 1.0], [1.0, 1.0]],
        "n_grid": [10.0, 100.0],
        "softmax_error": [[1.0, 0.1]],
        "linear_error": [[1.0, 0.9], [1.0, 0.9]],
    }
    record = {
        "claim_id": "figures/fig1/short",
        "key": "figures.fig1",
        "group": "figures",
        "verdict": "holds",
        "figure": fig,
    }
    rendered = render.render_tex(json.loads(_claims_with(tmp_path, [record]).read_text()), tmp_path / "build")
    (note,) = [n for n in rendered.notes if "fig1" in n]
    assert "window" in note and "\n" not in note


def test_the_figure_count_is_capped_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(render, "MAX_FIGURES", 2)
    eq4 = {"name": "eq4", "d": [2], "matrices": [[[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0]]], "distance": [[0.01]]}
    records = [
        {"claim_id": f"figures/eq4/x{i}", "key": f"figures.x{i}", "group": "figures", "verdict": "holds", "figure": eq4}
        for i in range(5)
    ]
    rendered = render.render_tex(json.loads(_claims_with(tmp_path, records).read_text()), tmp_path / "build")
    assert len([p for p in rendered.figures if p.suffix == ".pdf"]) == 2
    assert any("at most 2 figures" in n for n in rendered.notes)


def test_many_claim_keys_stay_cheap(tmp_path):
    """400 claim keys outside the registry: one section, one figure; the case table stops at its cap and
    says so, the CSV holds every case."""
    records = [
        {
            "claim_id": f"made/up{i}/d3",
            "key": f"made.up{i}",
            "group": "made",
            "verdict": "holds",
            "statement": "x" * 200,
            "quantities": [{"name": f"q{j}", "theory": 1.0, "measured": 1.0} for j in range(3)],
            "figure": {"kind": "line", "x": [1, 2, 3], "y": [1, 2, 3]},
        }
        for i in range(400)
    ]
    rendered = render.render_tex(json.loads(_claims_with(tmp_path, records).read_text()), tmp_path / "build")
    assert len(rendered.figures) <= render.MAX_FIGURES
    fixture = len(json.loads(FIXTURE.read_text())["claims"])
    shown = sum(f"made/\\allowbreak{{}}up{i}/" in rendered.tex for i in range(400))
    assert shown == render.MAX_TABLE_ROWS - fixture and "The table stops after 400 cases" in rendered.tex
    assert len((tmp_path / "build" / "cases.csv").read_text().splitlines()) == 1 + fixture + 400  # the CSV: all


# ----------------------------------------------------------------------------- figures --out
def _cheap_figure1(monkeypatch):
    from lipschitz_icl.claims import figures

    full = figures.figure1
    monkeypatch.setattr(figures, "figure1", lambda **kw: full(**{**kw, "n_grid": (10, 100)}))


FIGURE_CASES = [
    (
        "dangling-json",
        [],
        lambda tmp: _link(tmp / "out", "fig1.json", tmp / "outside" / "created.json"),
        2,
        "--force",
        lambda tmp: not (tmp / "outside" / "created.json").exists(),
    ),
    (
        "dangling-json-force",
        ["--force"],
        lambda tmp: _link(tmp / "out", "fig1.json", tmp / "outside" / "created.json"),
        0,
        "",
        lambda tmp: not (tmp / "outside" / "created.json").exists() and not (tmp / "out" / "fig1.json").is_symlink(),
    ),
    (
        "linked-png-force",
        ["--force"],
        lambda tmp: _link(tmp / "out", "fig1.png", _outside(tmp) / "victim.tex"),
        0,
        "",
        lambda tmp: (tmp / "outside" / "victim.tex").read_text() == "VICTIM",
    ),
    ("out-empty", [], lambda tmp: "", 2, "--out", lambda tmp: True),
]


@pytest.mark.parametrize(
    "case_id, extra, prepare, code, fragment, check", FIGURE_CASES, ids=[c[0] for c in FIGURE_CASES]
)
def test_hostile_figures_out(case_id, extra, prepare, code, fragment, check, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _cheap_figure1(monkeypatch)
    out = prepare(tmp_path)
    assert main(["figures", "--only", "fig1", "--out", str(out), "--scheduler", "serial", *extra]) == code
    err = capsys.readouterr().err.strip().splitlines()
    if code:
        assert len(err) == 1 and fragment in err[0], err
    assert check(tmp_path)
    assert not any(p.name.startswith("fig1") for p in tmp_path.iterdir())  # nothing beside --out
