"""The derivations as documents (lipschitz_icl.derivations.documents, writeup) and ``lipschitz-icl derivations``.

The committed top-level ``derivations/`` must equal the generated text (the check CI runs); an edited copy must be
reported stale; the command never overwrites a differing file without ``--force`` and refuses bad targets with one
line and exit 2; the numbers the documents print are those the derivation functions return, and the exponents
equal their closed forms (affine ``2/(d+3)``, relu ``2/(d+2)``); the settings the documents copy from the registry
(the regularity kernels, the saddle's design and grid, the thm35 settings) equal the registry's.

Rendering all eight documents costs about 35 s of SymPy, so the three tests that need every document (each module
has one, every formula is SymPy's, the committed folder is current) are ``slow`` (run by ``--slow`` and by CI,
whose ``lipschitz-icl derivations --out derivations --check`` step also checks every document); the default run
checks the three cheap documents (kernel identity, ratio expansion, linear attention) against their committed
files, and the command's write/check/refuse mechanics on them (:func:`few_documents`).
"""

import json
import math
import pkgutil
import shutil
from pathlib import Path

import pytest
import sympy as sp

import lipschitz_icl.derivations as derivations_pkg
from lipschitz_icl import cli
from lipschitz_icl.claims import thm35, thm44
from lipschitz_icl.derivations import (
    documents,
    generalisation,
    kernel_identity,
    ratio_expansion,
    regularity,
    saddle,
    sphere_asymptotics,
    window_law,
    writeup,
)
from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.gates import registry
from lipschitz_icl.tasks import zonal

COMMITTED = Path(__file__).resolve().parents[2] / "derivations"


def run(capsys, *argv):
    code = cli.main(["derivations", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lipschitz-icl: error: "), err
    assert "Traceback" not in err
    return lines[0]


def table_after(text: str, heading: str) -> list[dict]:
    """The rows of the first Markdown table after ``heading``, as ``{header: cell}``."""
    lines = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    header = [c.strip() for c in lines[start].strip("|").split(" | ")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip().strip("|").split(" | ")))))
    return rows


def committed(name: str) -> str:
    return (COMMITTED / name).read_text(encoding="utf-8")


def rounded_from(cell: str, value: float, digits: int) -> bool:
    """True when ``cell`` is ``value`` rounded to ``digits`` significant digits (half a unit of the last digit,
    with room for the last bits of a double)."""
    unit = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return abs(float(cell) - value) <= 0.5 * unit * (1 + 1e-9) + 1e-15 * abs(value)


ALL_DOCUMENTS = pytest.mark.slow(
    reason="renders all eight documents (~35 s of SymPy); CI's derivations --check "
    "step renders them too; the default run checks the cheap three"
)
FEW = ("kernel_identity", "ratio_expansion", "linear_attention")  # the documents that render in about a second


@pytest.fixture(scope="module")
def _few():
    return (kernel_identity.document(), ratio_expansion.document(), lin.document())


@pytest.fixture
def few_documents(_few, monkeypatch):
    """``documents.documents()`` (so ``files()`` and the command) restricted to the cheap documents :data:`FEW`,
    in reading order: the write/check/refuse mechanics do not depend on which documents there are."""
    assert tuple(d.name for d in _few) == FEW
    monkeypatch.setattr(documents, "documents", lambda: _few)
    return _few


def one_line_formulas(text: str) -> list[str]:
    """The display blocks of ``text``, each asserted to be one line of LaTeX: the printer's output, never
    wrapped by hand."""
    blocks = [block.split("\n```", 1)[0] for block in text.split("```math\n")[1:]]
    for body in blocks:
        assert "\n" not in body and body.strip()
    return blocks


# --- the documents ------------------------------------------------------------------------------------------


def test_the_cheap_documents_are_current_and_printed_by_sympy(few_documents):
    """Each of :data:`FEW` as generated equals its committed file, and its formulas are SymPy's one-line LaTeX
    (all documents: the slow tests below and CI's ``derivations --check``)."""
    generated = documents.files()
    assert list(generated) == [documents.INDEX] + [f"{name}.md" for name in FEW]
    for name in FEW:
        assert generated[f"{name}.md"] == committed(f"{name}.md"), name
        assert one_line_formulas(generated[f"{name}.md"]), name


@ALL_DOCUMENTS
def test_every_derivation_module_has_a_document():
    modules = {m.name for m in pkgutil.iter_modules(derivations_pkg.__path__)} - set(documents.SUPPORT_MODULES)
    docs = documents.documents()
    assert {d.name for d in docs} == modules
    assert set(documents.files()) == {documents.INDEX} | {f"{m}.md" for m in modules}
    for d in docs:
        assert d.steps and d.results and d.statement.prose
        assert all(registry.find(key) for key in d.claims)  # every claim named exists in the registry


def test_regularity_examples_are_the_kernels_of_the_claims():
    """The expression kernels worked through are the union of the regularity claims' ``kernels`` tables
    (the same text under the same label), and every other example is a built-in class."""
    kernels = {}
    for spec in registry.specs("regularity"):
        for label, text in spec.design.get("kernels", {}).items():
            assert kernels.setdefault(label, text) == text, label  # one text per label across the claims
    assert kernels and dict(documents.REGULARITY_EXPRESSIONS) == kernels
    assert len(documents.REGULARITY_EXPRESSIONS) == len(kernels)
    labels = {label for label, _, _ in documents.regularity_examples()}
    assert labels == set(kernels) | set(zonal.BUILTIN_KERNELS)


def test_saddle_cases_are_the_claims_design_and_grid():
    spec = registry.find("thm44.saddle")
    design = {key: spec.design[key] for key in ("n", "L0", "sigma", "step")}
    assert design == {key: documents.SADDLE_DESIGN[key] for key in design}
    assert tuple(spec.design["scale_bounds"]) == documents.SADDLE_DESIGN["scale_bounds"]
    grid = {(p["task"], p["d"], p["k"]) for profile in spec.grids for p in spec.grids[profile]}
    assert grid == set(documents.SADDLE_GRID) and len(documents.SADDLE_GRID) == len(grid)


def test_generalisation_settings_are_the_claims():
    specs = {spec.name: spec for spec in registry.specs("thm35")}
    dims = {
        p["d"]
        for name in ("generalisation", "noise-part", "mismatch", "same-l-classes")
        for p in specs[name].grids["full"]
    }
    assert dims == set(generalisation.DIMS)
    for name in ("mismatch", "mismatch-marked"):
        assert specs[name].design["factor"] == generalisation.FACTOR
    same = specs["same-l-classes"]
    assert {p["n"] for grid in same.grids.values() for p in grid} == {generalisation.SAME_L["n"]}
    assert (same.design["L"], same.design["sigma"]) == (generalisation.SAME_L["L"], generalisation.SAME_L["sigma"])
    assert same.design["gated"] == ["affine", "relu", "cosine-1"]
    assert {p["train_task"] for p in specs["generalisation"].grids["full"]} == set(window_law.TASKS)


@ALL_DOCUMENTS
def test_committed_documents_are_current(capsys):
    """The same check as CI: ``lipschitz-icl derivations --out derivations --check``."""
    code, out, _ = run(capsys, "--out", str(COMMITTED), "--check")
    assert code == 0, out
    assert out.strip().endswith("all documents are current")


@ALL_DOCUMENTS
def test_every_formula_is_printed_by_sympy():
    """Each display block is one line of LaTeX: the printer's output, never wrapped by hand."""
    for name, text in documents.files().items():
        assert one_line_formulas(text) or name == documents.INDEX


# --- --check on an edited copy -----------------------------------------------------------------------------


def test_an_edited_copy_is_reported_stale(few_documents, tmp_path, capsys):
    copy = tmp_path / "derivations"
    for name in [documents.INDEX] + [f"{name}.md" for name in FEW]:
        copy.mkdir(exist_ok=True)
        shutil.copy(COMMITTED / name, copy / name)
    (copy / documents.INDEX).write_text(documents.files()[documents.INDEX])  # the index of the cheap three
    assert run(capsys, "--out", str(copy), "--check")[0] == 0
    edited = copy / "linear_attention.md"
    edited.write_text(edited.read_text().replace("0.416666666667", "0.416666666668"))
    (copy / "ratio_expansion.md").unlink()
    (copy / "notes.md").write_text("an old document no derivation makes\n")
    code, out, _ = run(capsys, "--out", str(copy), "--check", "--json")
    payload = json.loads(out)
    assert code == 1
    assert payload["stale"] == ["ratio_expansion.md", "linear_attention.md", "notes.md"]
    status = {d["file"]: d["status"] for d in payload["documents"]}
    assert status["linear_attention.md"] == "stale" and status["ratio_expansion.md"] == "missing"
    assert status["kernel_identity.md"] == "current"
    code, out, _ = run(capsys, "--out", str(copy), "--check")
    assert code == 1
    assert out.strip().splitlines()[-1] == (
        f"stale: {copy / 'ratio_expansion.md'}, {copy / 'linear_attention.md'}, {copy / 'notes.md'}"
    )


def test_check_of_a_missing_directory_reports_every_document_missing(few_documents, tmp_path, capsys):
    code, out, _ = run(capsys, "--out", str(tmp_path / "none"), "--check", "--json")
    assert code == 1
    assert json.loads(out)["stale"] == list(documents.files())
    assert not (tmp_path / "none").exists()


# --- writing -------------------------------------------------------------------------------------------------


def test_write_never_overwrites_a_differing_file_without_force(few_documents, tmp_path, capsys):
    out_dir = tmp_path / "docs"
    code, out, _ = run(capsys, "--out", str(out_dir), "--json")
    assert code == 0
    assert {d["status"] for d in json.loads(out)["documents"]} == {"written"}
    for name, text in documents.files().items():
        assert (out_dir / name).read_bytes() == text.encode("utf-8")
    mine = out_dir / "notes.md"
    mine.write_text("mine\n")
    edited = out_dir / "kernel_identity.md"
    edited.write_text("my edit\n")
    code, _, err = run(capsys, "--out", str(out_dir))
    line = one_error_line(err)
    assert code == 2 and "--force" in line and str(edited) in line
    assert edited.read_text() == "my edit\n"
    code, out, _ = run(capsys, "--out", str(out_dir), "--force", "--json")
    payload = json.loads(out)
    status = {d["file"]: d["status"] for d in payload["documents"]}
    assert code == 0 and status["kernel_identity.md"] == "overwritten" and status["README.md"] == "unchanged"
    assert payload["extra"] == ["notes.md"] and mine.read_text() == "mine\n"
    assert run(capsys, "--out", str(out_dir), "--check")[0] == 1  # notes.md is no derivation's document
    mine.unlink()
    assert run(capsys, "--out", str(out_dir), "--check")[0] == 0
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(documents.files())  # no temporary files left


def test_refusals_are_one_line_and_exit_2(few_documents, tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    a_file = tmp_path / "file.md"
    a_file.write_text("x\n")
    cases = [
        (["--out", ""], "--out"),
        (["--out", "  "], "--out"),
        (["--out", str(link)], "symbolic link"),
        (["--out", str(a_file)], "--out"),
        (["--out", str(a_file), "--check"], "--out"),
        (["--out", str(real), "--check", "--force"], "--force"),
        # a directory that cannot be made is refused before the derivations run (it took 13 s), naming --out
        (["--out", str(a_file / "sub")], "--out: must be a directory that can be created"),
    ]
    for argv, needle in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and needle in one_error_line(err), (argv, err)
    # a document path that is a link (it could point anywhere) or a directory is refused, nothing written
    target = tmp_path / "elsewhere.md"
    target.write_text("not mine to change\n")
    (real / "window_law.md").symlink_to(target)
    (real / "README.md").mkdir()
    for argv in (["--out", str(real)], ["--out", str(real), "--force"], ["--out", str(real), "--check"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "--out" in one_error_line(err)
    assert target.read_text() == "not mine to change\n"
    assert sorted(p.name for p in real.iterdir()) == ["README.md", "window_law.md"]


# --- the numbers in the documents are the derivation's numbers ----------------------------------------------


def test_window_law_numbers_equal_the_derivation():
    rows = table_after(committed("window_law.md"), "### The window law")
    closed = {"affine": lambda d: sp.Rational(2, d + 3), "relu": lambda d: sp.Rational(2, d + 2)}
    assert {(r["class"], int(r["d"])) for r in rows} == {(t, d) for t in window_law.TASKS for d in window_law.DIMS}
    for r in rows:
        task, d = r["class"], int(r["d"])
        alpha, C = window_law.window_law(task, d)
        assert r["alpha exact"] == f"$`{sp.latex(closed[task](d))}`$"
        assert float(r["alpha"]) == pytest.approx(float(closed[task](d)), rel=1e-11)
        assert float(r["alpha"]) == pytest.approx(alpha, rel=1e-11)
        assert float(r["C"]) == pytest.approx(C, rel=1e-11)
        q, k = window_law.wstar_correction(task, d)
        assert (float(r["q"]), float(r["k"])) == pytest.approx((q, k), rel=1e-11, abs=1e-300)
    for r in table_after(committed("window_law.md"), "### Bias and noise constants"):
        task, d = r["class"], int(r["d"])
        assert (float(r["bias power"]), float(r["b"])) == pytest.approx(window_law.bias_leading(task, d), rel=1e-11)
        assert (float(r["noise power"]), float(r["c_R"])) == pytest.approx(window_law.noise_leading(d), rel=1e-11)


def test_sphere_and_linear_numbers_equal_the_derivation():
    for r in table_after(committed("sphere_asymptotics.md"), "### The constants per dimension"):
        d = int(r["d"])
        assert float(r["c_R"]) == pytest.approx(sphere_asymptotics.c_R_float(d), rel=1e-11)
        assert float(r["c_R"]) == pytest.approx(math.sqrt(math.pi) / (math.gamma(d / 2) * 2 ** (d - 2)), rel=1e-11)
        assert float(r["r_1"]) == pytest.approx(window_law.noise_next_order(d), rel=1e-11, abs=1e-300)
        assert float(r["a_1"]) == pytest.approx((d - 1) / 2, rel=1e-12)
    rows = table_after(committed("linear_attention.md"), "### The limits per class and dimension")
    assert len(rows) == len(lin.CLASSES) * len(lin.DIMS)
    for r in rows:
        m_lim, e_lim = lin.linear_limit(r["class"], int(r["d"]), 1.0, lin.FREQUENCY)
        assert float(r["lim m*"]) == m_lim == int(r["d"])
        assert float(r["lim E_lin"]) == pytest.approx(e_lim, rel=1e-11)
        if r["class"] == "affine":
            assert float(r["lim E_lin"]) == pytest.approx(1 / 3, rel=1e-11)


def test_regularity_numbers_equal_the_derivation():
    rows = table_after(committed("regularity.md"), "### The law per kernel and dimension")
    examples = documents.regularity_examples()
    assert [(r["kernel"], int(r["d"])) for r in rows] == [(label, d) for label, _, d in examples]
    for r, (_, k_expr, d) in zip(rows, examples):
        law = regularity.regularity(k_expr, d)
        assert float(r["alpha"]) == pytest.approx(2 / (2 * law.beta + d - 1), rel=1e-11)
        assert (float(r["beta"]), float(r["b"]), float(r["C"])) == pytest.approx((law.beta, law.b, law.C), rel=1e-11)
        assert r["k"] == "—" if law.k is None else float(r["k"]) == pytest.approx(law.k, rel=1e-11)


def test_saddle_numbers_equal_the_claims_derivation():
    """The saddle's tables give, within their stated accuracy, the numbers the claim itself derives
    (``thm44._saddle_theory``, the claim's path: the d3k1 cases, the fastest)."""
    text = committed("saddle.md")
    change = table_after(text, "### The optimal scale and the change along Q")
    curv = table_after(text, "### The curvature along Q")
    rivals = table_after(text, "### The rivals")
    cases = documents.saddle_cases()
    for rows in (change, curv, rivals):
        assert [(r["task"], int(r["d"]), int(r["k"])) for r in rows] == list(documents.SADDLE_GRID)
    design = documents.SADDLE_DESIGN
    for (_task, setting), r, rc, rr in zip(cases, change, curv, rivals):
        assert float(r["L"]) == pytest.approx(setting.L, rel=1e-11)
        assert rc["c* B B^T is"] == ("saddle" if float(rc["curvature"]) < 0 else "minimum")
        if setting.d != 3:
            continue
        th = thm44._saddle_theory(setting, design["step"], *design["scale_bounds"])
        assert not th["at_bound"]
        # each number as the claim derives it, printed as this machine or another computes it (within its
        # stated accuracy): the cells are the claim's own numbers through the document's rows
        ((change_row,), (curv_row,), (rival_row,)) = saddle._case_rows([(_task, setting)], [th])
        assert (change_row[5].value, change_row[7].value) == (th["c"], th["change"].value)
        assert (curv_row[3].value, rival_row[4].value) == (th["curvature"].value, th["large_n"])
        for row, cells in ((r, change_row), (rc, curv_row), (rr, rival_row)):
            for header, cell in zip(row, cells):
                if isinstance(cell, writeup.Approximate):
                    assert cell.admits(row[header]), (header, row[header], cell)


def test_generalisation_numbers_equal_the_claims_theory():
    text = committed("generalisation.md")
    rows = table_after(text, "### The cost of a mismatched L")
    assert [(int(r["d"]), r["L'/L"]) for r in rows] == [
        (d, lp) for d in generalisation.DIMS for lp in (f"1/{generalisation.FACTOR}", f"{generalisation.FACTOR}")
    ]
    for r in rows:
        d, sign = int(r["d"]), -1 if r["L'/L"].startswith("1/") else +1
        # as thm35.mismatch_marked computes it
        alpha, beta, p = (
            window_law.window_law("affine", d)[0],
            window_law.noise_leading(d)[0],
            -window_law.bias_leading("affine", d)[0],
        )
        lam = generalisation.FACTOR ** (sign * 2 * alpha)
        assert float(r["lambda"]) == pytest.approx(lam, rel=1e-11)
        assert float(r["E(lambda w*)/E(w*)"]) == pytest.approx(generalisation.mismatch_ratio(lam, p, beta), rel=1e-11)
        assert float(r["E(lambda w*)/E(w*)"]) > 1
    for r in table_after(text, "### The envelope rate and the own-class rate"):
        task, d = r["class"], int(r["d"])
        assert float(r["alpha"]) == pytest.approx(window_law.window_law(task, d)[0], rel=1e-11)
        assert float(r["p alpha"]) == pytest.approx(-window_law.min_error_law(task, d)[0], rel=1e-11)
    for r in table_after(text, "### The noise part"):
        assert float(r["c_q"]) == pytest.approx(window_law.noise_finite_n_leading(int(r["d"]))[1], rel=1e-11)
    same = generalisation.SAME_L
    rows = [r for r in table_after(text, "### Same L, other class") if int(r["d"]) == 5]  # the fastest d
    assert [r["test class"] for r in rows] == ["affine", "relu", "cosine-1"]
    ws = {task: thm35._wstar(task, 5, same["n"], same["L"], same["sigma"]) for task in window_law.TASKS}
    for r, derived in zip(rows, generalisation.class_rows(5)):
        _, _, w_affine, w_relu, ratio = derived
        assert (w_affine.value, w_relu.value) == (ws["affine"], ws["relu"])  # the claim's own windows
        kind = "cosine" if r["test class"] == "cosine-1" else r["test class"]
        errors = [
            generalisation.class_error(kind, 5, n=same["n"], L=same["L"], sigma=same["sigma"], w=ws[task])
            for task in window_law.TASKS
        ]
        assert ratio.value == errors[1] / errors[0]
        # each printed as this machine or another computes it: within the stated accuracy
        assert w_affine.admits(r["w* affine"]) and w_relu.admits(r["w* relu"])
        assert ratio.admits(r["E(relu window)/E(affine window)"])


# --- the writer ------------------------------------------------------------------------------------------------


def test_numbers_are_printed_to_twelve_significant_digits():
    assert writeup.number(2 / 3) == "0.666666666667"
    assert writeup.number(-0.0) == "0"
    assert writeup.number(sp.sqrt(sp.pi)) == "1.77245385091"
    assert writeup.number(2.14646820905e-08) == "2.14646820905e-08"
    for bad in (math.inf, math.nan):
        with pytest.raises(ValueError):
            writeup.number(bad)


def test_table_cells_keep_their_pipes_escaped():
    table = writeup.Table(("a", "b"), ((sp.Abs(sp.Symbol("x")), None),))
    line = writeup._table(table)[-1]
    assert line == r"| $`\left\|{x}\right\|`$ | — |"
    with pytest.raises(ValueError):
        writeup._table(writeup.Table(("a",), ((1, 2),)))
    with pytest.raises(ValueError):
        writeup.Formula(sp.Symbol("x"), 1, r"\le").latex()


def _doc_with(cell) -> writeup.Document:
    step = writeup.Step("s", "prose", (), writeup.Table(("x",), ((cell,),)))
    return writeup.Document("d", "T", "sum", "paper", (), (), step, (), (), (), "exact")


def test_a_numerically_computed_number_is_printed_to_its_accuracy_and_compared_within_it():
    """generalisation.md differed on another machine in the sixth digit of a w* whose search is accurate to 3e-6:
    such a number is printed to the digits its accuracy warrants, and ``--check`` compares it within that accuracy
    (twice it, for two computations, and half a unit of the printed digit)."""
    w = writeup.Approximate(9.611647982597493, 2.88e-5)
    assert w.digits == 5 and w.text() == "9.6116"
    assert writeup.Approximate(2.5, 0.0).text() == "2.5" and writeup.Approximate(123456.0, 7.0).text() == "1.2346e+05"
    doc = _doc_with(w)
    text = writeup.to_markdown(doc)
    assert "| 9.6116 |" in text and writeup.agrees(doc, text)
    assert writeup.agrees(doc, text.replace("9.6116", "9.6117"))  # another machine's last digit
    assert not writeup.agrees(doc, text.replace("9.6116", "9.6119"))  # beyond twice the accuracy
    assert not writeup.agrees(doc, text.replace("prose", "prosa"))  # the text is compared as text
    with pytest.raises(ValueError):
        writeup.Approximate(1.0, math.nan)


def test_check_accepts_and_write_keeps_a_document_within_its_accuracy(tmp_path, capsys, monkeypatch):
    doc = _doc_with(writeup.Approximate(9.611647982597493, 2.88e-5))
    monkeypatch.setattr(documents, "documents", lambda: (doc,))
    assert run(capsys, "--out", str(tmp_path))[0] == 0
    path = tmp_path / "d.md"
    path.write_text(path.read_text().replace("9.6116", "9.6117"))  # as another machine wrote it
    code, out, _ = run(capsys, "--out", str(tmp_path), "--check", "--json")
    assert code == 0 and json.loads(out)["stale"] == []
    code, out, _ = run(capsys, "--out", str(tmp_path), "--force", "--json")
    assert code == 0 and {"file": "d.md", "status": "unchanged"} in json.loads(out)["documents"]
    assert "9.6117" in path.read_text()  # the committed text does not follow this machine's last digit
    path.write_text(path.read_text().replace("9.6117", "9.7"))
    code, out, _ = run(capsys, "--out", str(tmp_path), "--check", "--json")
    assert code == 1 and json.loads(out)["stale"] == ["d.md"]


def test_the_directories_made_for_out_go_again_when_the_run_fails_before_writing(tmp_path, capsys, monkeypatch):
    """--out is made before the derivations run (so that one that cannot be made is refused at once); a run that
    fails or is interrupted before writing leaves none of the directories it made (a review)."""
    from lipschitz_icl.derivations import documents

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(documents, "files", interrupted)
    out = tmp_path / "a" / "b" / "c"
    assert cli.main(["derivations", "--out", str(out)]) == 130  # interrupted, as the command line reports it
    assert sorted(p.name for p in tmp_path.iterdir()) == []
