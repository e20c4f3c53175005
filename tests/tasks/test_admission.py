"""What a task class must pass to be registered (:mod:`lipschitz_icl.tasks.admission`), and hostile plugins: each
a class (or module) that an installed package could offer through the entry point group.  Every one is refused
before use with one line on stderr naming the entry point and the reason, exit 2: never a traceback, never a
number, never a silent exit 0.

Rows of :data:`HOSTILE`: ``(id, the class's attributes over the worked example's, fragment of the reason)``; the
module rows (:data:`MODULES`) are plugin modules that fail when imported."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from lipschitz_icl.cli import main
from lipschitz_icl.tasks import admission
from lipschitz_icl.tasks import registry as tasks
from lipschitz_icl.tasks.builtin import BUILTIN_TASKS
from lipschitz_icl.tasks.registry import TASKS, register_task
from lipschitz_icl.validation import ParameterError
from tasks.test_registry import EXAMPLE, CenteredQuadraticTask

ROOT = Path(__file__).resolve().parents[2]
t = sp.Symbol("t")


class _Raises:
    """An attribute that raises when read (a descriptor)."""

    def __get__(self, obj, owner):
        raise RuntimeError("read me not")


def _form(factor=1.0, sign=1.0):
    """The example's kernel form times ``factor`` (and ``sign``)."""

    @classmethod
    def kernel_form(cls, d, L):
        return sign * factor * CenteredQuadraticTask.kernel_form.__func__(cls, d, L)

    return kernel_form


def _doubled_sampler(self, s, col):
    return np.sqrt(2.0) * (col["l"] * (s * s - 1.0 / self.d) + col["b"])


def _doubled_features(self, s_x, s_q):
    from lipschitz_icl.tasks.family import Features

    return Features(s_x[..., None] ** 2, s_q[..., None] ** 2, 2 * self.L**2 / 3.0)


def _gap_times(factor):
    @classmethod
    def kernel_gap(cls, d, L):
        c = 2.0 * L * L / (3.0 * d * (d + 2.0))
        return lambda u: factor * c * (2.0 * np.asarray(u) - np.asarray(u) ** 2)

    return kernel_gap


def _raising_gap():
    def gap(u):
        raise ZeroDivisionError("kernel used")

    return classmethod(lambda cls, d, L: gap)


def _raising(error):
    def method(*args, **kwargs):
        raise error

    return method


HOSTILE = [
    ("name-raises", {"name": _Raises()}, "its attribute name raises RuntimeError: read me not"),
    ("fact-raises", {"has_kink": _Raises()}, "its attribute has_kink raises RuntimeError"),
    ("fact-array", {"rotation_invariant": np.array([True, False])}, "rotation_invariant is ndarray, not True or"),
    ("fact-numpy-bool", {"has_intercept": np.bool_(True)}, "has_intercept is np.True_, not True or False"),
    ("quadrature-array", {"quadrature": np.array(["linear"])}, "its quadrature ndarray is none of None"),
    ("parameters-array", {"parameters": np.zeros(3)}, "its parameters are ndarray, not a dict"),
    ("parameter-array", {"parameters": {"k": np.zeros(3)}}, "its parameter k is ndarray"),
    ("parameter-default-outside", {"parameters": {"k": (5.0, 0.0, 1.0)}}, "default 5.0 outside [0.0, 1.0]"),
    ("name-array", {"name": np.array(["x"])}, "its name ndarray is not lower-case words"),
    ("low-rank-and-invariant", {"low_rank": True}, "a low-rank class is not rotation-invariant"),
    ("overrides-zonal-kernel", {"zonal_kernel": classmethod(lambda cls, d, L: None)}, "overrides zonal_kernel"),
    ("not-positive-definite", {"kernel_form": classmethod(lambda cls, d, L: -(t**2))}, "K(1) > 0"),
    ("negative-kernel", {"kernel_form": _form(sign=-1.0)}, "covariance with K(1) > 0"),
    ("kernel-twice-the-sampler", {"kernel_form": _form(2.0)}, "its sampler does not match its covariance"),
    (
        "sampler-and-kernel-twice-the-features",
        {"kernel_form": _form(2.0), "link": _doubled_sampler},
        "its features does not match its covariance",
    ),
    (
        "features-twice",
        {"scalar_features": _doubled_features},
        "its features does not match its covariance",
    ),
    ("gap-twice-the-form", {"kernel_gap": _gap_times(2.0)}, "kernel_gap D(u) = K(1) - K(1 - u) agrees with its"),
    ("gap-raises-when-used", {"kernel_gap": _raising_gap()}, "kernel_gap can be evaluated (ZeroDivisionError"),
    ("form-raises", {"kernel_form": classmethod(_raising(RuntimeError("no form")))}, "kernel_form can be evaluated"),
    ("form-not-sympy", {"kernel_form": classmethod(lambda cls, d, L: 0.5)}, "returns a SymPy expression in t"),
    (
        "form-free-symbol",
        {"kernel_form": classmethod(lambda cls, d, L: sp.Symbol("L") ** 2 * (1 + t) + 1)},
        "no free symbol but t (it has L)",
    ),
    ("form-complex", {"kernel_form": classmethod(lambda cls, d, L: sp.sqrt(t))}, "a real, finite kernel on [-1, 1]"),
    ("claims-the-linear-quadrature", {"quadrature": "linear"}, "the 'linear' form its quadrature implements"),
    ("link-raises", {"link": _raising(ValueError("no link"))}, "its sampler raises ValueError: no link"),
    ("sampler-nan", {"link": lambda self, s, col: s * np.nan}, "its sampler gives values that are not finite"),
    (
        "lipschitz-raises",
        {"task_lipschitz": _raising(KeyError("l"))},
        "its task_lipschitz raises KeyError",
    ),
    ("features-raise", {"scalar_features": _raising(TypeError("no features"))}, "its features raises TypeError"),
    ("constructor-raises", {"__init__": _raising(RuntimeError("no instance"))}, "its constructor raises"),
]


class Hostile:
    """The classes of :data:`HOSTILE`, by id (entry points name them ``module:Hostile.<id>``)."""


for _id, _attributes, _ in HOSTILE:
    setattr(Hostile, _id.replace("-", "_"), type("Hostile", (CenteredQuadraticTask,), dict(_attributes)))


MODULES = [
    ("exits-at-import", "import sys\nsys.exit(0)\n", "it calls sys.exit(0) when imported"),
    ("exits-1-at-import", "raise SystemExit(1)\n", "it calls sys.exit(1) when imported"),
    ("raises-at-import", "raise ImportError('a missing dependency')\n", "ImportError: a missing dependency"),
    ("no-such-class", "X = 1\n", "not a subclass"),
]


@pytest.fixture
def entry_points(monkeypatch):
    """Replace the installed entry points of the task group by a list the test sets; the registry reads the
    group afresh and is restored afterwards."""
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


def _refused_in_one_line(capsys, fragment: str) -> None:
    code = main(["loss", "--task", "affine", "--d", "3", "--n", "40", "--L", "1", "--sigma", "0.3", "--w", "6"])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 2 and captured.out == "" and len(err) == 1, captured
    assert "task plugin" in err[0] and fragment in err[0] and "Traceback" not in err[0], err[0]


@pytest.mark.parametrize("case, attributes, fragment", HOSTILE, ids=[row[0] for row in HOSTILE])
def test_a_hostile_class_is_refused_in_one_line(entry_points, capsys, case, attributes, fragment):
    cls = getattr(Hostile, case.replace("-", "_"))
    entry = "other-name" if case.startswith("name-") else "centered-quadratic"
    entry_points.append(metadata.EntryPoint(entry, f"{__name__}:Hostile.{case.replace('-', '_')}", "g"))
    _refused_in_one_line(capsys, fragment)
    with pytest.raises(ParameterError, match="registrable task class"):  # and in the same process
        register_task(cls)


@pytest.mark.parametrize("case, source, fragment", MODULES, ids=[row[0] for row in MODULES])
def test_a_plugin_module_that_fails_at_import_is_refused(
    entry_points, capsys, monkeypatch, tmp_path, case, source, fragment
):
    module = f"hostile_{case.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry_points.append(metadata.EntryPoint("centered-quadratic", f"{module}:X", tasks.ENTRY_POINT_GROUP))
    _refused_in_one_line(capsys, fragment)


def test_every_built_in_class_passes_its_trial():
    """The trial cannot refuse a correct class: every built-in one passes it (the same fixed seed)."""
    for cls in BUILTIN_TASKS:
        assert admission.refusal(cls) == "", cls.name


def test_the_trial_has_power_against_a_kernel_off_by_a_fifth():
    """A kernel 20% above what the sampler draws (form and numeric D agreeing) is refused."""
    refused = type("Fifth", (CenteredQuadraticTask,), {"kernel_form": _form(1.2)})
    assert "its sampler does not match its covariance" in admission.refusal(refused)


def _site(tmp_path: Path, module: str, source: str) -> Path:
    """A directory that Python reads as an installed distribution with one entry point of the task group."""
    site = tmp_path / "site"
    dist = site / "hostile_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[lipschitz_icl.tasks]\ncentered-quadratic = {module}:CenteredQuadraticTask\n"
    )
    (site / f"{module}.py").write_text(source)
    return site


def _cli(site: Path, *argv) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(site)]))
    return subprocess.run(
        [sys.executable, "-m", "lipschitz_icl", *argv], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.slow(reason="a fresh interpreter importing the package: 10-40 s on a loaded machine")
def test_an_installed_plugin_that_exits_at_import_is_exit_2_in_a_real_process(tmp_path):
    """``sys.exit(0)`` in a plugin module gave exit 0 and no output: now one line and exit 2."""
    argv = ["wstar", "--task", "affine", "--d", "3", "--n", "100", "--L", "1", "--sigma", "0.5", "--method", "exact"]
    run = _cli(_site(tmp_path, "exits_plugin", "import sys\nsys.exit(0)\n"), *argv)
    err = run.stderr.strip().splitlines()
    assert run.returncode == 2 and run.stdout == "" and len(err) == 1, run
    assert "sys.exit(0)" in err[0] and "exits_plugin" in err[0]


@pytest.mark.slow(reason="a fresh interpreter and an exact loss: 10-40 s on a loaded machine")
def test_the_worked_example_installed_is_a_task_choice_of_the_command_line(tmp_path):
    """The how-to's package (``examples/task_class``) as an installed distribution: ``--task centered-quadratic``
    works in a fresh process (``register_task`` alone would not reach it)."""
    source = (EXAMPLE / "centered_quadratic.py").read_text()
    argv = ["loss", "--task", "centered-quadratic", "--d", "3", "--n", "40", "--L", "1", "--sigma", "0.3", "--w", "6"]
    run = _cli(_site(tmp_path, "centered_quadratic", source), *argv, "--method", "exact", "--json")
    assert run.returncode == 0 and run.stderr == "", run
    assert '"loss": ' in run.stdout and '"converged": true' in run.stdout


@dataclass(frozen=True)
class _Late(CenteredQuadraticTask):
    """A kernel that passes its trial and raises later, on more points than the trial evaluates."""

    @classmethod
    def kernel_gap(cls, d, L):
        c = 2.0 * L * L / (3.0 * d * (d + 2.0))

        def gap(u):
            u = np.asarray(u, dtype=float)
            if u.size > 10**5:
                raise RuntimeError("too many points")
            return c * (2.0 * u - u * u)

        return gap


def test_a_kernel_that_raises_after_its_trial_is_a_parameter_error_naming_the_class():
    kernel = _Late(3, 1.0).covariance_kernel()
    with pytest.raises(ParameterError, match=r"kernel_gap can be evaluated \(RuntimeError: too many points") as info:
        kernel.gap(np.zeros(10**5 + 1))
    assert info.value.name == "task" and info.value.value == "centered-quadratic"
