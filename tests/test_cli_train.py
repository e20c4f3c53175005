"""``lipschitz-icl train``: JSON contract, the .npz output, bad input as one line and exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lipschitz_icl.cli import main
from lipschitz_icl.model import geometry

BASE = [
    "train",
    "--task",
    "affine",
    "--d",
    "2",
    "--n",
    "10",
    "--L",
    "1",
    "--sigma",
    "0.3",
    "--steps",
    "60",
    "--batch",
    "32",
]
KEYS = {"w_trained", "anisotropy", "rho", "final_loss", "steps", "seconds"}


def _run(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_payload_has_the_contract_keys(capsys):
    code, out, err = _run(capsys, BASE + ["--json"])
    assert code == 0, err
    payload = json.loads(out)
    assert set(payload) >= KEYS
    assert payload["steps"] == 60 and payload["rho"] is None
    assert payload["seconds"] > 0 and payload["final_loss"] > 0
    assert 0 <= payload["anisotropy"] <= 1
    assert np.isfinite(payload["w_trained"])


def test_same_seed_same_numbers_other_seed_other_numbers(capsys):
    first = json.loads(_run(capsys, BASE + ["--seed", "3", "--json"])[1])
    again = json.loads(_run(capsys, BASE + ["--seed", "3", "--json"])[1])
    other = json.loads(_run(capsys, BASE + ["--seed", "4", "--json"])[1])
    for key in ("w_trained", "anisotropy", "final_loss"):
        assert first[key] == again[key]
    assert first["w_trained"] != other["w_trained"]


def test_low_rank_task_reports_rho_and_writes_npz(capsys, tmp_path):
    path = tmp_path / "params.npz"
    argv = [
        "train",
        "--task",
        "lowrank-linear",
        "--d",
        "3",
        "--k",
        "1",
        "--n",
        "10",
        "--L",
        "1",
        "--sigma",
        "0.3",
        "--steps",
        "40",
        "--batch",
        "16",
        "--out",
        str(path),
        "--json",
    ]
    code, out, err = _run(capsys, argv)
    assert code == 0, err
    payload = json.loads(out)
    stored = np.load(path)
    assert set(stored.files) >= {"M", "M_effective", "loss_curve"}
    assert stored["loss_curve"].shape == (40,)
    B = np.eye(3)[:, :1]
    assert payload["rho"] == pytest.approx(geometry.rho(stored["M_effective"], B), rel=1e-12)
    assert payload["w_trained"] == pytest.approx(np.trace(stored["M_effective"]) / 3, rel=1e-12)


@pytest.mark.parametrize("attention", ["softmax", "linear"])
def test_full_layer_reports_value_structure(capsys, tmp_path, attention):
    path = tmp_path / "layer.npz"
    code, out, err = _run(capsys, BASE + ["--param", "full", "--attention", attention, "--out", str(path), "--json"])
    assert code == 0, err
    payload = json.loads(out)
    stored = np.load(path)
    assert {"W_K", "W_Q", "W_V"} <= set(stored.files)
    A_xx = (stored["W_K"].T @ stored["W_Q"])[:-1, :-1]
    scale = stored["W_V"][-1, -1] if attention == "linear" else 1.0
    assert payload["w_trained"] == pytest.approx(scale * np.trace(A_xx) / 2, rel=1e-12)
    assert payload["value_leak"] == pytest.approx(geometry.value_leak(stored["W_V"]), rel=1e-12)
    assert payload["label_coupling"] is not None and payload["value_weight"] == stored["W_V"][-1, -1]


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--steps", "0"], "steps"),
        (["--batch", "0"], "batch"),
        (["--batch", "100000000"], "batch"),  # would not fit in memory: refused up front
        (["--n", "1e14"], "n"),
        (["--lr", "0"], "lr"),
        (["--d", "1"], "d"),
        (["--sigma", "-1"], "sigma"),
        (["--seed", "-1"], "seed"),
        (["--average", "1.5"], "average"),
        (["--k", "1"], "k"),
        (["--out", os.path.join("no-such-directory-here", "x.npz")], "out"),
    ],
)
def test_bad_input_is_one_line_naming_the_parameter(capsys, extra, name):
    code, out, err = _run(capsys, BASE + extra + ["--json"])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"--{name}" in lines[0], err


@pytest.mark.parametrize(
    "argv, word",
    [
        (["--task", "nope"], "--task"),
        (["--param", "W"], "--param"),
        (["--attention", "relu"], "--attention"),
    ],
)
def test_bad_choices_are_one_line(capsys, argv, word):
    code, out, err = _run(capsys, BASE + argv + ["--json"])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and word in err


def test_low_rank_task_needs_k_in_range(capsys):
    base = [
        "train",
        "--task",
        "lowrank-affine",
        "--d",
        "3",
        "--n",
        "10",
        "--L",
        "1",
        "--sigma",
        "0.3",
        "--steps",
        "5",
        "--json",
    ]
    for extra in ([], ["--k", "0"], ["--k", "4"]):
        code, _, err = _run(capsys, base + extra)
        assert code == 2 and "--k" in err and len(err.strip().splitlines()) == 1


def test_out_into_a_directory_is_refused(capsys, tmp_path):
    code, _, err = _run(capsys, BASE + ["--out", str(tmp_path), "--json"])
    assert code == 2 and "--out" in err


@pytest.mark.slow(
    reason="a python -m subprocess importing the trainer (~9 s); test_cli checks the module entry point by default"
)
def test_module_entry_point_subprocess(tmp_path):
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "lipschitz_icl", *BASE, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress line when stderr is not a terminal
    payload = json.loads(proc.stdout)
    assert set(payload) >= KEYS
    bad = subprocess.run(
        [sys.executable, "-m", "lipschitz_icl", *BASE, "--steps", "0", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stdout == "" and "Traceback" not in bad.stderr


def test_held_out_evaluation_counts_against_the_work_budget(capsys, monkeypatch):
    """--n 1e7 --batch 1 --steps 5 trained 5 prompts, then spent hours on 20000 held-out ones: refused
    before any work (neither the trainer nor the held-out loss is called), naming --n and the largest n the
    budget allows."""
    from lipschitz_icl.model import train as trainer

    calls = []

    def record(name):
        def called(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} called before the refusal")

        return called

    monkeypatch.setattr(trainer, "train", record("train"))
    monkeypatch.setattr(trainer, "icl_loss", record("icl_loss"))
    code, out, err = _run(
        capsys,
        [
            "train",
            "--task",
            "affine",
            "--d",
            "3",
            "--n",
            "1e7",
            "--L",
            "1",
            "--sigma",
            "0.5",
            "--batch",
            "1",
            "--steps",
            "5",
            "--json",
        ],
    )
    assert code == 2 and out == "" and calls == []
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--n: must be within the work budget of 60 s" in lines[0] and "held-out" in lines[0]
    assert "a cheaper setting: n <= 12000 in d = 3" in lines[0]


@pytest.mark.parametrize("param, lr", [("M", "10"), ("full", "1000")])
def test_an_lr_that_overflows_is_refused_in_one_line_without_numpy_warnings(param, lr):
    """The trainer stops at its first non-finite loss and --lr is refused; numpy's overflow warnings printed
    four to eight lines before that one (a hostile-input review).  A subprocess: its stderr is the user's."""
    argv = ["train", "--task", "affine", "--d", "3", "--n", "30", "--L", "1e6", "--sigma", "1e6", "--steps", "50"]
    argv += ["--attention", "linear", "--param", param, "--optimizer", "sgd", "--lr", lr]
    done = subprocess.run([sys.executable, "-m", "lipschitz_icl", *argv], capture_output=True, text=True, timeout=120)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    assert err[0].startswith("lipschitz-icl: error: --lr: must be small enough")


@pytest.mark.parametrize("task, L", [("mix:cosine=1", "1"), ("mix:affine=1,cosine=1", "2"), ("affine", "2")])
def test_the_payload_echoes_the_given_L(capsys, task, L):
    """A mixture's problem carries its kernel's derived constant as L (1.06 for mix:cosine=1 at --L 1): the
    payload echoes the --L asked for (a hostile-input review)."""
    argv = ["train", "--task", task, "--d", "3", "--n", "20", "--L", L, "--sigma", "0.5", "--steps", "5", "--json"]
    code, out, err = _run(capsys, argv)
    assert code == 0, err
    assert json.loads(out)["L"] == float(L)


def test_out_a_directory_is_refused_even_with_force(capsys, tmp_path):
    """--force replaces a file, never a directory; the message said 'or give --force' to a user who had."""
    target = tmp_path / "d.npz"
    target.mkdir()
    argv = ["train", "--task", "affine", "--d", "3", "--n", "20", "--L", "1", "--sigma", "0.5", "--steps", "5"]
    code, _, err = _run(capsys, [*argv, "--out", str(target), "--force"])
    assert code == 2 and "--out: must be a file path (it is a directory" in err and target.is_dir()
