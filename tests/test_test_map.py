"""The test map: every module of ``src/lipschitz_icl/`` has its tests where a reader looks first,
``tests/<same folders>/test_<module>.py``, or is listed below with the test files that exercise it and
why it has no file of its own.  A new module without either fails here; so does an entry that names a
module or a test file that no longer exists."""

from pathlib import Path

import pytest

import lipschitz_icl

SRC = Path(lipschitz_icl.__file__).parent
TESTS = Path(__file__).parent

# module (path below src/lipschitz_icl, no suffix) -> (test files below tests/, why no file of its own)
ELSEWHERE = {
    "certified/arithmetic": (["certified/test_certified.py"], "the certified enclosures share one test file"),
    "certified/laws": (["certified/test_certified.py"], "the certified enclosures share one test file"),
    "commands/_options": (["test_cli_boundary.py", "test_hostile_cli.py"], "typed options, through every command"),
    "prover/pieces": (["claims/test_concentration.py"], "the pieces and end lemmas of claims decided by proof"),
    "__main__": (["test_cli.py"], "two lines; python -m lipschitz_icl is run as a subprocess there"),
    "_entry": (["test_cli.py", "test_hostile_cli.py"], "the console script: Ctrl-C and exit codes through the CLI"),
    "prover/certificate": (["prover/test_checker.py"], "certificates are written, forged and rechecked there"),
    "certified/kernels": (
        ["certified/test_loss.py"],
        "the certified kernels of every class, through the loss they give against the exact method",
    ),
    "certified/laplace": (
        ["certified/test_loss.py", "certified/test_certified.py"],
        "the certified quadrature of the loss, through its balls against the exact method and mpmath",
    ),
    "certified/quadrature": (["certified/test_certified.py"], "the certified enclosures share one test file"),
    "claims/figures": (["report/test_figures.py"], "figure data of the figures gates, drawn and checked there"),
    "commands/_common": (["test_cli.py"], "shared CLI helpers, through every command"),
    "commands/_zonal": (["tasks/test_zonal.py", "test_hostile_round2.py"], "the kernel options, through the CLI"),
    "commands/check": (["gates/test_variants.py"], "bound variants through lipschitz-icl check"),
    "commands/claims": (["test_cli.py", "gates/test_pytest_plugin.py"], "the claims listing through the CLI"),
    "commands/derivations": (["derivations/test_documents.py"], "writes and checks the derivation documents"),
    "commands/figures": (
        ["report/test_figures.py", "runtime/test_sweep.py"],
        "the figures command, serial and on a cluster",
    ),
    "commands/lock": (["gates/test_lock.py"], "the design lock, through lipschitz-icl lock"),
    "commands/loss": (["test_cli.py", "test_cli_boundary.py"], "the loss command through the CLI"),
    "commands/prove": (["prover/test_search.py"], "the prover through lipschitz-icl prove"),
    "commands/report": (["report/test_render.py", "report/test_hostile_report.py"], "the report command"),
    "commands/scaling": (
        ["runtime/test_sweep.py", "test_hostile_cli.py"],
        "the scaling command, serial and on a cluster",
    ),
    "commands/train": (["test_cli_train.py", "test_cli_boundary.py"], "the train command through the CLI"),
    "commands/wstar": (["test_cli.py", "test_hostile_cli.py"], "the wstar command through the CLI"),
    "sphere/concentration": (["claims/test_concentration.py"], "the exact tail laws, with the claims that use them"),
    "derivations/linear_attention": (["claims/test_linear.py"], "the derived linear optimum, with its claims"),
    "derivations/writeup": (["derivations/test_documents.py"], "renders the documents checked there"),
    "prover/domain": (["prover/test_search.py"], "the [domain] table, through prove's refusals and boxes"),
    "exact/quadrature": (["exact/test_route.py", "test_optimum.py"], "the affine/relu quadrature of the exact method"),
    "exact/zonal": (["tasks/test_zonal.py", "exact/test_zonal_sweep.py"], "the zonal series against pairwise MC"),
    "sphere/inequalities": (["claims/test_concentration.py"], "the stated bounds, with the claims that use them"),
    "runtime/memo": (["runtime/test_cache.py", "runtime/test_hostile_cache.py"], "the engine through the cache"),
    "loss/pairwise": (["tasks/test_zonal.py", "exact/test_zonal_sweep.py"], "the Monte Carlo reference of zonal tasks"),
    "problem": (
        ["loss/test_estimators.py", "exact/test_route.py"],
        "make_problem and prompts, with the losses computed on them",
    ),
    "report/build": (["report/test_render.py", "report/test_hostile_report.py"], "the LaTeX build"),
    "report/constants": (["report/test_render.py", "report/test_report_pdf.py"], "the constants table"),
    "report/figures/data": (["report/test_render.py"], "claim figures, drawn with the report"),
    "report/figures/paper": (["report/test_figures.py"], "the paper's figures (the package's test file)"),
    "report/latex": (["report/test_render.py", "report/test_hostile_report.py"], "escaping, through the report"),
    "report/output": (["report/test_hostile_report.py"], "--force, links, full disks"),
    "report/provenance": (["report/test_render.py", "report/test_report_pdf.py"], "page 1's provenance"),
    "report/quantities": (["report/test_render.py"], "quantities.csv, written with the report"),
    "report/scope": (["report/test_render.py"], "the scope table of page 1"),
    "report/sections": (["report/test_render.py"], "one section per claim group"),
    "report/style": (["report/test_figures.py", "report/test_report_pdf.py"], "figure widths and font sizes"),
    "report/summary": (["report/test_render.py", "report/test_report_pdf.py"], "page 1's headline and box"),
    "report/symbols": (["report/test_render.py", "report/test_report_pdf.py"], "symbols in the constants table"),
    "tasks/symbolic": (["tasks/test_zonal.py", "test_hostile_round2.py"], "SymPy budgets, on hostile kernels"),
    "sphere/tails": (["claims/test_concentration.py"], "Monte Carlo tails of the concentration claims"),
    "tasks/family": (["tasks/test_registry.py", "tasks/test_builtin.py"], "the base class, through a registered class"),
    "tomlfile": (["gates/test_variants.py", "test_hostile_round2.py"], "variant and kernel files read through it"),
    "model/train": (
        ["model/test_train_stream.py", "model/test_train_gradients.py", "model/test_train_theory.py"],
        "one file per aspect",
    ),
    "tasks/kernel": (["tasks/test_zonal.py", "tasks/test_registry.py"], "kernels and the Schoenberg check"),
    "tasks/zonal_class": (["tasks/test_zonal.py", "exact/test_zonal_sweep.py"], "kernel and mixture problems"),
}


def _modules() -> list[str]:
    return sorted(str(p.relative_to(SRC).with_suffix("")) for p in SRC.rglob("*.py") if p.name != "__init__.py")


def _own_test(module: str) -> Path:
    parent, _, name = module.rpartition("/")
    return TESTS / parent / f"test_{name}.py"


@pytest.mark.parametrize("module", _modules())
def test_every_module_has_its_tests_where_a_reader_looks(module):
    if _own_test(module).is_file():
        assert module not in ELSEWHERE, f"{module} has tests/{_own_test(module).relative_to(TESTS)}: drop its entry"
        return
    assert module in ELSEWHERE, f"{module}: no tests/{_own_test(module).relative_to(TESTS)} and no entry in ELSEWHERE"
    files, reason = ELSEWHERE[module]
    assert reason and all((TESTS / f).is_file() for f in files), (module, files)


def test_every_entry_names_a_module_that_exists():
    assert not set(ELSEWHERE) - set(_modules())
