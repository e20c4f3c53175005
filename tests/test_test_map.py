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
    "__main__": (["test_cli.py"], "two lines; python -m lipschitz_icl is run as a subprocess there"),
    "_entry": (["test_cli.py", "test_hostile_cli.py"], "the console script: Ctrl-C and exit codes through the CLI"),
    "asymptotic": (["test_exact.py", "test_loss.py"], "the large-n loss is held against the exact method"),
    "builtin_tasks": (["test_tasks.py", "test_task_registry.py"], "the built-in classes, through the registry"),
    "certificate": (["test_prove.py"], "certificates are written, tampered with and rechecked there"),
    "certified_loss": (["test_certified.py"], "the certified enclosures share one test file"),
    "certified_quadrature": (["test_certified.py"], "the certified enclosures share one test file"),
    "certified_wstar": (["test_certified.py"], "the certified enclosures share one test file"),
    "claims/figures": (["report/test_figures.py"], "figure data of the figures gates, drawn and checked there"),
    "commands/_common": (["test_cli.py"], "shared CLI helpers, through every command"),
    "commands/_zonal": (["test_zonal.py", "test_hostile_round2.py"], "the kernel options, through the CLI"),
    "commands/check": (["test_variants.py"], "bound variants through lipschitz-icl check"),
    "commands/claims": (["test_cli.py", "test_plugin.py"], "the claims listing through the CLI"),
    "commands/derivations": (["derivations/test_documents.py"], "writes and checks the derivation documents"),
    "commands/figures": (["report/test_figures.py", "test_sweep.py"], "the figures command, serial and on a cluster"),
    "commands/lock": (["test_lock.py"], "the design lock, through lipschitz-icl lock"),
    "commands/loss": (["test_cli.py", "test_cli_boundary.py"], "the loss command through the CLI"),
    "commands/prove": (["test_prove.py"], "the prover through lipschitz-icl prove"),
    "commands/report": (["report/test_render.py", "report/test_hostile_report.py"], "the report command"),
    "commands/scaling": (["test_sweep.py", "test_hostile_cli.py"], "the scaling command, serial and on a cluster"),
    "commands/train": (["test_cli_train.py", "test_cli_boundary.py"], "the train command through the CLI"),
    "commands/wstar": (["test_cli.py", "test_hostile_cli.py"], "the wstar command through the CLI"),
    "concentration": (["claims/test_concentration.py"], "the exact tail laws, with the claims that use them"),
    "derivations/linear_attention": (["claims/test_linear.py"], "the derived linear optimum, with its claims"),
    "derivations/writeup": (["derivations/test_documents.py"], "renders the documents checked there"),
    "domain": (["test_prove.py"], "the [domain] table, through prove's refusals and boxes"),
    "enclosures": (["test_prove.py"], "ball evaluation of bounds, checked against point values there"),
    "exact_quadrature": (["test_exact.py", "test_optimum.py"], "the affine/relu quadrature of the exact method"),
    "exact_zonal": (["test_zonal.py", "test_exact_zonal_sweep.py"], "the zonal series against pairwise MC"),
    "inequalities": (["claims/test_concentration.py"], "the stated bounds, with the claims that use them"),
    "loss_enclosures": (["test_certified.py"], "the certified loss, through loss --method certified"),
    "memo": (["test_cache.py", "test_hostile_cache.py"], "the engine through the cache"),
    "pairwise": (["test_zonal.py", "test_exact_zonal_sweep.py"], "the Monte Carlo reference of zonal tasks"),
    "problem": (["test_loss.py", "test_exact.py"], "make_problem and prompts, with the losses computed on them"),
    "proof_outcome": (["claims/test_concentration.py"], "claims decided by proof"),
    "prover": (["test_prove.py"], "the prover's Python and CLI entry points"),
    "pytest_plugin": (["test_plugin.py", "test_hostile_plugin.py"], "the gates, run with pytester"),
    "recheck": (["test_prove.py"], "certificates rechecked, tampered ones refused"),
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
    "symbolic": (["test_zonal.py", "test_hostile_round2.py"], "SymPy budgets, on hostile kernels"),
    "tails": (["claims/test_concentration.py"], "Monte Carlo tails of the concentration claims"),
    "task_family": (["test_task_registry.py", "test_tasks.py"], "the base class, through a registered class"),
    "tomlfile": (["test_variants.py", "test_hostile_round2.py"], "variant and kernel files read through it"),
    "train": (["test_train_stream.py", "test_train_gradients.py", "test_train_theory.py"], "one file per aspect"),
    "zonal_kernel": (["test_zonal.py", "test_task_registry.py"], "kernels and the Schoenberg check"),
    "zonal_task": (["test_zonal.py", "test_exact_zonal_sweep.py"], "kernel and mixture problems"),
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
