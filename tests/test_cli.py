"""The CLI contract: JSON keys, exit codes, one-line errors without traceback."""

import json
import subprocess
import sys

import pytest

from lipschitz_icl.cli import main

BASE = ["--task", "affine", "--d", "3", "--n", "200", "--L", "1", "--sigma", "0.5"]


def test_wstar_json_keys(capsys):
    assert main(["wstar", *BASE, "--method", "asymptotic", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"w_star", "ci_low", "ci_high", "loss", "method"} <= set(out)
    assert out["ci_low"] <= out["w_star"] <= out["ci_high"] and out["method"] == "asymptotic"


def test_wstar_mc_json(capsys):
    assert main(["wstar", *BASE, "--seed", "3", "--rel-precision", "0.02", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "mc" and out["ci_low"] < out["w_star"] < out["ci_high"]


@pytest.mark.parametrize("method", ["averaged", "naive", "asymptotic"])
def test_loss_json_keys(capsys, method):
    contexts = ["--contexts", "2000"] if method != "asymptotic" else []  # refused where nothing is sampled
    assert main(["loss", *BASE, "--w", "5", "--method", method, *contexts, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"loss", "ci_low", "ci_high", "bias", "noise"} <= set(out)
    assert out["ci_low"] <= out["loss"] <= out["ci_high"]
    assert out["loss"] == pytest.approx(out["bias"] + out["noise"], rel=1e-9 if method != "naive" else 0.2)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["loss", "--task", "affine", "--d", "1", "--n", "10", "--L", "1", "--sigma", "0", "--w", "1"], "--d"),
        (["loss", "--task", "affine", "--d", "3", "--n", "0", "--L", "1", "--sigma", "0", "--w", "1"], "--n"),
        (["loss", "--task", "affine", "--d", "3", "--n", "5", "--L", "0", "--sigma", "0", "--w", "1"], "--L"),
        (["loss", "--task", "affine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "-1", "--w", "1"], "--sigma"),
        (["loss", "--task", "affine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "1", "--w", "nan"], "--w"),
        (["loss", "--task", "sine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "1", "--w", "1"], "--task"),
        (["loss", "--task", "affine", "--d", "x", "--n", "5", "--L", "1", "--sigma", "1", "--w", "1"], "--d"),
        (
            [
                "loss",
                "--task",
                "affine",
                "--d",
                "3",
                "--n",
                "5",
                "--L",
                "1",
                "--sigma",
                "1",
                "--w",
                "1",
                "--contexts",
                "1",
            ],
            "--contexts",
        ),
        (["wstar", "--task", "affine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "0"], "--sigma"),
        (["wstar", "--task", "affine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "1", "--seed", "-2"], "--seed"),
        (
            ["wstar", "--task", "cosine", "--d", "3", "--n", "5", "--L", "1", "--sigma", "1", "--method", "asymptotic"],
            "--task",
        ),
        (["frobnicate"], "COMMAND"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err and "Traceback" not in err


def test_module_entry_point_runs_as_a_subprocess():
    ok = subprocess.run(
        [sys.executable, "-m", "lipschitz_icl", "loss", *BASE, "--w", "2", "--contexts", "500", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and "loss" in json.loads(ok.stdout)
    bad = subprocess.run(
        [sys.executable, "-m", "lipschitz_icl", "loss", *BASE, "--w", "inf"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_a_closed_stdout_is_one_line_and_exit_141():
    """`lipschitz-icl ... | head -c 10`: the reader closes the pipe; no traceback, a non-zero exit."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "lipschitz_icl", "claims", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and err.count("\n") == 1 and "stdout closed" in err


def test_scaling_names_the_kernel_when_the_exact_search_cannot_reach_its_w_star(capsys, monkeypatch):
    """'scaling --kernel exp(50*t)' was refused as "parameter 'method' must be ..." (scaling has no --method): the
    exact w* search's refusal now names --kernel.  The search itself is stood in for (it takes seconds)."""
    from lipschitz_icl.claims import regularity
    from lipschitz_icl.validation import ParameterError

    def out_of_reach(kernel, spec):
        raise ParameterError("method", "a method that can evaluate the loss near w* for these inputs", "exact")

    monkeypatch.setattr(regularity, "kernel_scaling", out_of_reach)
    assert main(["scaling", "--kernel", "exp(2*t)", "--d", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lipschitz-icl: error: --kernel: must be a kernel whose w*"), err


def test_the_plain_text_output_reads_values_as_json_and_lists_of_lists_one_per_line():
    from lipschitz_icl.cli import plain_text

    text = plain_text(
        {
            "w_star": 4.5,
            "method": "certified",
            "decided": True,
            "guess": None,
            "range": [0.001, 1e8],
            "pieces": [[0.0, 2.5, "cut"], [2.5, "inf", "cut"]],
        }
    )
    assert text.splitlines() == [
        "w_star: 4.5",
        "method: certified",
        "decided: true",
        "guess: null",
        "range: [0.001, 100000000.0]",
        "pieces:",
        '  [0.0, 2.5, "cut"]',
        '  [2.5, "inf", "cut"]',
    ]
