"""The task registry: a new class is one subclass and one registry entry, through the CLI's own code path;
task classes from other packages arrive through the entry point group ``lipschitz_icl.tasks``.  The class used
here is the worked example of the how-to, ``examples/task_class/centered_quadratic.py`` (loaded from there, so
the example is what is tested)."""

from __future__ import annotations

import importlib.util
import json
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from lipschitz_icl import sphere
from lipschitz_icl.cli import main
from lipschitz_icl.tasks import registry as tasks
from lipschitz_icl.tasks.kernel import check_schoenberg
from lipschitz_icl.tasks.registry import TASKS, make_task_class, register_task, unregister_task
from lipschitz_icl.validation import ParameterError

Z = 4.0  # two-sided normal quantile for the Monte Carlo comparisons (false alarm ~6e-5 per comparison)
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "task_class"


def _load_example():
    """``examples/task_class/centered_quadratic.py`` as the module ``centered_quadratic`` (as installed)."""
    if "centered_quadratic" not in sys.modules:
        spec = importlib.util.spec_from_file_location("centered_quadratic", EXAMPLE / "centered_quadratic.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["centered_quadratic"] = module
        spec.loader.exec_module(module)
    return sys.modules["centered_quadratic"]


CenteredQuadraticTask = _load_example().CenteredQuadraticTask


@pytest.fixture
def registered():
    register_task(CenteredQuadraticTask)
    yield CenteredQuadraticTask
    unregister_task(CenteredQuadraticTask.name)


def _json(capsys, argv):
    code = main(argv + ["--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_the_new_class_is_a_valid_task_class(registered):
    """Its kernel is a covariance (Schoenberg), equals the sampled tasks' covariance and its SymPy form;
    its tasks respect the Lipschitz constant."""
    rng = np.random.default_rng(20240601)
    d, N = 4, 200000
    tc = make_task_class("centered-quadratic", d, 1.4)
    kernel = tc.covariance_kernel()
    check_schoenberg(kernel)
    ts = np.linspace(-1, 1, 9)
    t = sp.Symbol("t")
    by_hand = 1.4**2 / 3 * ((1 + 2 * ts**2) / (d * (d + 2)) - 1 / d**2 + 1)  # the docstring's K(t)
    assert np.allclose(kernel(ts), by_hand, rtol=1e-13, atol=0)
    assert np.allclose(sp.lambdify(t, kernel.sympy, "numpy")(ts), by_hand, rtol=1e-13, atol=0)
    a, b = sphere.uniform_sphere(rng, 2, d)
    task = tc.sample(rng, N)
    prod = task(np.broadcast_to(a, (N, d))) * task(np.broadcast_to(b, (N, d)))
    assert abs(prod.mean() - kernel(a @ b)) < Z * prod.std() / np.sqrt(N)
    few = tc.sample(rng, 300)
    x, y = sphere.uniform_sphere(rng, (2, 300, 200), d)
    slopes = np.abs(few(x) - few(y)) / np.linalg.norm(x - y, axis=-1)
    assert np.all(slopes <= few.lipschitz[:, None] * (1 + 1e-9))
    assert np.max(slopes / few.lipschitz[:, None]) > 0.9  # and the constant is not loose by a factor


def test_wstar_loss_and_train_run_on_a_registered_class(registered, capsys):
    """The CLI offers the class where its facts allow (wstar, loss, train, mixtures) and computes with it:
    the exact loss (the zonal series of its kernel) agrees with the task-averaged Monte Carlo (its sampler
    and features); w* exact is a minimum of that loss; train returns a finite model."""
    base = ["--task", "centered-quadratic", "--d", "3", "--n", "40", "--L", "1", "--sigma", "0.3"]
    exact = _json(capsys, ["loss", *base, "--w", "6", "--method", "exact"])
    assert exact["converged"] is True
    mc = _json(capsys, ["loss", *base, "--w", "6", "--method", "averaged", "--contexts", "40000", "--seed", "7"])
    se = mc["loss_stderr"]
    assert abs(mc["loss"] - exact["loss"]) <= Z * se + 1e-6 * exact["loss"]
    star = _json(capsys, ["wstar", *base, "--method", "exact"])
    w = star["w_star"]
    at = _json(capsys, ["loss", *base, "--w", repr(w), "--method", "exact"])["loss"]
    for factor in (0.8, 1.25):
        assert at < _json(capsys, ["loss", *base, "--w", repr(w * factor), "--method", "exact"])["loss"]
    trained = _json(capsys, ["train", *base, "--steps", "30", "--batch", "16"])
    assert trained["task"] == "centered-quadratic" and np.isfinite(trained["final_loss"])
    mixed = _json(
        capsys, ["loss", "--task", "mix:affine=1,centered-quadratic=1", *base[2:], "--w", "6", "--method", "exact"]
    )
    affine = _json(capsys, ["loss", "--task", "affine", *base[2:], "--w", "6", "--method", "exact"])
    assert mixed["bias"] == pytest.approx(0.5 * (affine["bias"] + exact["bias"]), rel=1e-12)


def test_unregistered_the_class_is_refused_in_one_line(capsys):
    assert "centered-quadratic" not in TASKS
    code = main(
        ["loss", "--task", "centered-quadratic", "--d", "3", "--n", "40", "--L", "1", "--sigma", "0.3", "--w", "6"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--task" in err[0] and "affine, relu, cosine" in err[0]


def test_a_class_that_breaks_the_rules_is_not_registered():
    class Broken(CenteredQuadraticTask):
        name = "Not A Name"

    for bad in (Broken, int, "affine"):
        with pytest.raises(ParameterError, match="registrable task class"):
            register_task(bad)
    with pytest.raises(ParameterError, match="is registered"):
        register_task(type("Again", (CenteredQuadraticTask,), {"name": "affine"}))


@pytest.fixture
def entry_points(monkeypatch):
    """Replace the installed entry points of the task group by a list the test sets; the registry reads
    the group afresh and is restored afterwards."""
    chosen = []
    real = metadata.entry_points

    def fake(**kwargs):
        if kwargs.get("group") == tasks.ENTRY_POINT_GROUP:
            return chosen
        return real(**kwargs)

    monkeypatch.setattr(metadata, "entry_points", fake)
    monkeypatch.setattr(TASKS, "_plugins_loaded", False)
    monkeypatch.setattr(TASKS, "_classes", dict(TASKS._classes))
    return chosen


def test_a_plugin_class_arrives_through_the_entry_point_group(entry_points, capsys):
    entry_points.append(
        metadata.EntryPoint("centered-quadratic", f"{__name__}:CenteredQuadraticTask", tasks.ENTRY_POINT_GROUP)
    )
    assert TASKS["centered-quadratic"] is CenteredQuadraticTask
    out = _json(
        capsys,
        [
            "loss",
            "--task",
            "centered-quadratic",
            "--d",
            "3",
            "--n",
            "40",
            "--L",
            "1",
            "--sigma",
            "0.3",
            "--w",
            "6",
            "--method",
            "exact",
        ],
    )
    assert out["loss"] > 0


@pytest.mark.parametrize(
    "value, reason",
    [
        ("no_such_module_for_lipschitz_icl:Task", "cannot be loaded"),
        (f"{__name__}:Z", "not a subclass"),
        (f"{__name__}:CenteredQuadraticTask", "not 'other-name'"),
    ],
)
def test_a_broken_plugin_is_one_line_and_exit_2(entry_points, capsys, value, reason):
    name = "other-name" if "not 'other" in reason else "centered-quadratic"
    entry_points.append(metadata.EntryPoint(name, value, tasks.ENTRY_POINT_GROUP))
    code = main(["wstar", "--task", "affine", "--d", "3", "--n", "40", "--L", "1", "--sigma", "0.3"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "task plugin" in err[0] and reason in err[0] and "Traceback" not in err[0]
    with pytest.raises(tasks.TaskPluginError):  # raised again on the next read: never a partial registry
        TASKS["affine"]
