"""What the command line imports: the import list of each command, held in a fresh interpreter.

A refused argument and ``--help`` are answered before any heavy library loads (the parser of the command
given is built alone, and a command module imports the engine inside ``add_arguments`` and ``run``), and
``wstar`` and ``loss`` with a numeric method never import SymPy, matplotlib, Dask or Jinja2 (the kernels'
SymPy forms are built on first read).  The timings are benchmarks/bench_cli.py's.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lipschitz_icl.cli import COMMAND_MODULES

SRC = str(Path(__file__).resolve().parents[1] / "src")

# no command line needs these before it has read its arguments
HEAVY = ("scipy", "sympy", "mpmath", "flint", "matplotlib", "dask", "distributed", "jinja2", "tqdm")
# the numeric methods of wstar and loss need none of these
NOT_NUMERIC = ("sympy", "matplotlib", "dask", "distributed", "jinja2")
# what a command's parser needs beyond that, and why (none: prove's option defaults live in prover.budget)
PARSER_NEEDS: dict = {}

PROBLEM = ["--task", "affine", "--d", "3", "--n", "50", "--L", "1", "--sigma", "0.5"]
REFUSED = {
    "wstar": ["wstar", "--task", "affine", "--d", "1000000", "--n", "100", "--L", "1", "--sigma", "0.5"],
    "loss": ["loss", *PROBLEM, "--w", "-1"],
    "train": ["train", *PROBLEM, "--steps", "0"],
    "check": ["check"],
    "prove": ["prove", "--max-boxes", "0"],
    "report": ["report", "--no-such-option"],
    "scaling": ["scaling", "--task", "affine", "--d", "1000"],
    "claims": ["claims", "--profile", "no-such-profile"],
    "figures": ["figures", "--out", "x", "--profile", "no-such-profile"],
    "lock": ["lock", "--no-such-option"],
    "derivations": ["derivations"],
}

SMALL = ["--d", "3", "--n", "20", "--L", "1", "--sigma", "0.5"]
NUMERIC = [
    ["wstar", "--task", "affine", *SMALL, "--method", "mc", "--rel-precision", "0.2"],
    ["wstar", "--task", "cosine", *SMALL, "--method", "exact"],
    ["loss", "--task", "relu", *SMALL, "--w", "2", "--method", "averaged", "--contexts", "200"],
    ["loss", "--task", "relu", *SMALL, "--w", "2", "--method", "naive", "--contexts", "200"],
    ["loss", "--task", "cosine", *SMALL, "--w", "2", "--method", "exact"],
    # the large-n method answers inside its regime only (n = 20 is outside it at w = 2)
    [
        "loss",
        "--task",
        "relu",
        "--d",
        "3",
        "--n",
        "1000",
        "--L",
        "1",
        "--sigma",
        "0.5",
        "--w",
        "2",
        "--method",
        "asymptotic",
    ],
    ["loss", "--task", "mix:affine=1,relu=1,cosine=1", *SMALL, "--w", "2", "--method", "averaged", "--contexts", "100"],
]

# One interpreter imports the CLI (as ``python -m lipschitz_icl`` does first) and forks a child per command
# line: each child starts from that state, runs ``main(argv)`` and reports its exit code and sys.modules.
RUNNER = """
import contextlib, io, json, os, sys
from lipschitz_icl.cli import main

def imports(argv):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = main(argv)
            except SystemExit as exc:  # --help
                code = exc.code
        with os.fdopen(write, "w") as out:
            json.dump({"code": code, "modules": sorted(sys.modules)}, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as source:
        text = source.read()
    os.waitpid(pid, 0)
    return json.loads(text)

print(json.dumps([imports(argv) for argv in json.loads(sys.argv[1])]))
"""


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """``" ".join(argv) -> (exit code, top-level packages imported)`` of every command line of this file."""
    cases = [["--help"], *([c, "--help"] for c in COMMAND_MODULES), *REFUSED.values(), *NUMERIC]
    tmp = tmp_path_factory.mktemp("cli-imports")
    env = dict(os.environ, PYTHONPATH=SRC, LIPSCHITZ_ICL_CACHE=str(tmp / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(cases)], env=env, cwd=tmp, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        " ".join(argv): (r["code"], {name.split(".")[0] for name in r["modules"]}) for argv, r in zip(cases, results)
    }


def test_every_command_has_a_refused_argument_here():
    assert set(REFUSED) == set(COMMAND_MODULES)


def test_the_list_of_commands_imports_no_heavy_library(imported):
    code, modules = imported["--help"]
    assert code == 0
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("command", COMMAND_MODULES)
def test_help_imports_only_what_the_parser_needs(command, imported):
    code, modules = imported[f"{command} --help"]
    allowed = PARSER_NEEDS.get(command, (set(), ""))[0]
    assert code == 0
    assert not modules & (set(HEAVY) - allowed), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("command", COMMAND_MODULES)
def test_a_refused_argument_imports_only_what_the_parser_needs(command, imported):
    code, modules = imported[" ".join(REFUSED[command])]
    allowed = PARSER_NEEDS.get(command, (set(), ""))[0]
    assert code == 2
    assert not modules & (set(HEAVY) - allowed), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("argv", NUMERIC, ids=lambda argv: " ".join(argv[:3] + argv[-3:]))
def test_numeric_methods_import_no_symbolic_plotting_or_cluster_library(argv, imported):
    code, modules = imported[" ".join(argv)]
    assert code == 0
    assert not modules & set(NOT_NUMERIC), sorted(modules & set(NOT_NUMERIC))
