"""The import structure: the layers of the package (its docstring draws them), each importing only the layers
below it; no import cycle, function-level imports included; at most 15 modules flat at the top; every
module imports on its own, in any order; the old flat module paths still import (with a warning)."""

import ast
import functools
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import lipschitz_icl

PACKAGE = Path(lipschitz_icl.__file__).parent

# the layers from the ground up: a module may import its own layer and the layers below, never above
LAYERS = (
    (
        "ground",
        (
            "lipschitz_icl.validation",
            "lipschitz_icl.estimate",
            "lipschitz_icl.decision",
            "lipschitz_icl.quadrature",
            "lipschitz_icl.expression",
            "lipschitz_icl.progress",
            "lipschitz_icl.tomlfile",
            "lipschitz_icl.writefile",
            "lipschitz_icl.budget",
        ),
    ),
    ("sphere", ("lipschitz_icl.sphere",)),
    ("tasks", ("lipschitz_icl.tasks",)),
    ("problem", ("lipschitz_icl.problem",)),
    ("model", ("lipschitz_icl.model",)),
    ("exact", ("lipschitz_icl.exact",)),
    ("loss", ("lipschitz_icl.loss",)),
    ("optimum", ("lipschitz_icl.optimum",)),
    ("certified", ("lipschitz_icl.certified",)),
    ("prover", ("lipschitz_icl.prover",)),
    ("derivations", ("lipschitz_icl.derivations",)),
    ("estimators", ("lipschitz_icl.estimators",)),
    ("runtime", ("lipschitz_icl.runtime",)),
    ("gates", ("lipschitz_icl.gates",)),
    ("claims", ("lipschitz_icl.claims",)),
    ("report", ("lipschitz_icl.report",)),
    ("commands", ("lipschitz_icl.commands",)),
    ("entry", ("lipschitz_icl.cli", "lipschitz_icl._entry", "lipschitz_icl.__main__")),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py")


def _imports(name: str, path: Path) -> set[str]:
    """Every ``lipschitz_icl`` module ``path`` imports, at module level or inside a function: for
    ``from P import x`` the submodule ``P.x`` where ``x`` is one, else ``P``."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("lipschitz_icl") and m != name}


NAMES = sorted(name for name in MODULES if name != "lipschitz_icl")


@functools.cache
def graph() -> dict[str, set[str]]:
    """The import graph ``{module: the lipschitz_icl modules it imports}``, parsed once, when a test first asks
    (not while every worker collects)."""
    return {name: _imports(name, MODULES[name]) for name in NAMES}


def test_every_module_is_in_a_layer_and_the_top_is_small():
    for name in graph():
        _layer(name)
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(flat) <= 15, flat


@pytest.mark.parametrize("name", NAMES)
def test_a_module_imports_no_layer_above_its_own(name):
    upward = sorted(m for m in graph()[name] if m != "lipschitz_icl" and _layer(m) > _layer(name))
    assert not upward, f"{name} (layer {LAYERS[_layer(name)][0]}) imports {upward}"


def test_a_module_never_imports_the_face_of_its_own_package():
    """A package's ``__init__`` re-exports its core module; a module of the package importing it back
    would be a cycle through the face (the root package is exempt: it imports lazily)."""
    offenders = [
        (name, imported)
        for name, imported in graph().items()
        for m in imported
        if m != "lipschitz_icl"
        and MODULES[m].name == "__init__.py"
        and name.startswith(m + ".")
        and MODULES[name].name != "__init__.py"
    ]
    assert not offenders, offenders


def test_no_import_cycle():
    """Tarjan's strongly connected components of the import graph (function-level imports included): every
    component is one module."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph().get(v, ()):
            if w not in graph():
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in NAMES:
        if v not in index:
            visit(v)
    assert not cycles, cycles


def _private_uses(path: Path) -> list[str]:
    """``from M import _x`` and ``m._x`` for a module ``m`` imported by name: another module's private names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("lipschitz_icl")):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {node.module} import {alias.name}")
                imported[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("lipschitz_icl"):
                    imported[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("name", NAMES)
def test_a_module_uses_no_other_modules_private_names(name):
    assert not _private_uses(MODULES[name]), _private_uses(MODULES[name])


def test_the_private_name_check_can_fail(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from lipschitz_icl.exact import grids\nx = grids._hidden\n", encoding="utf-8")
    assert _private_uses(path) == ["grids._hidden"]


def test_the_cache_imports_nothing_of_the_engine():
    imported = graph()["lipschitz_icl.runtime.cache"]
    assert imported <= {"lipschitz_icl"}, imported


def test_the_layers_catch_an_upward_import(tmp_path):
    """The check itself can fail: the sphere importing the loss is refused."""
    assert _layer("lipschitz_icl.loss.estimators") > _layer("lipschitz_icl.sphere.laws")
    path = tmp_path / "laws.py"
    path.write_text("from lipschitz_icl.loss import estimators\n", encoding="utf-8")
    imported = _imports("lipschitz_icl.sphere.laws", path)
    assert any(_layer(m) > _layer("lipschitz_icl.sphere.laws") for m in imported)


@pytest.mark.parametrize("old", sorted(lipschitz_icl.MOVED))
def test_an_old_module_path_still_imports_with_a_warning(old):
    new = importlib.import_module(f"lipschitz_icl.{lipschitz_icl.MOVED[old]}")
    sys.modules.pop(f"lipschitz_icl.{old}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(f"lipschitz_icl.{old}")
    assert module is new and module.__spec__.name == new.__name__
    assert any(issubclass(w.category, DeprecationWarning) and new.__name__ in str(w.message) for w in caught)


def test_the_documented_package_imports_work():
    from lipschitz_icl.exact import exact_loss
    from lipschitz_icl.loss import icl_loss
    from lipschitz_icl.optimum import wstar
    from lipschitz_icl.prover import prove
    from lipschitz_icl.tasks import TASK_NAMES, register_task

    assert callable(exact_loss) and callable(icl_loss) and callable(wstar) and callable(prove)
    assert callable(register_task) and "affine" in TASK_NAMES


@pytest.mark.slow(reason="re-imports the package once per module (~10 s); the reverse-order import runs by default")
def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each module imported first, alone, in one child interpreter per module batch (a cycle that only
    resolves from another entry point fails here)."""
    names = sorted(n for n in MODULES if not n.endswith("__main__"))
    script = (
        "import importlib, sys\nfailed = []\nfor name in sys.argv[1:]:\n"
        "    for m in [k for k in sys.modules if k.startswith('lipschitz_icl')]:\n        del sys.modules[m]\n"
        "    try:\n        importlib.import_module(name)\n"
        "    except Exception as exc:\n        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\nsys.exit(1 if failed else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_modules_in_reverse_order_works():
    for name in sorted(MODULES, reverse=True):
        if not name.endswith("__main__"):
            importlib.import_module(name)


def test_a_face_re_exports_exactly_its_core_modules():
    """A package's ``__all__`` is its core module's (one source of truth for the public names)."""
    from lipschitz_icl import certified, exact, loss, prover, sphere, tasks
    from lipschitz_icl.certified import arithmetic, laws
    from lipschitz_icl.exact import route
    from lipschitz_icl.loss import estimators
    from lipschitz_icl.prover import search
    from lipschitz_icl.sphere import laws as sphere_laws
    from lipschitz_icl.tasks import registry

    for face, cores in (
        (certified, (arithmetic, laws)),
        (exact, (route,)),
        (loss, (estimators,)),
        (prover, (search,)),
        (sphere, (sphere_laws,)),
        (tasks, (registry,)),
    ):
        assert list(face.__all__) == [name for core in cores for name in core.__all__], face.__name__
        for core in cores:
            for name in core.__all__:
                assert getattr(face, name) == getattr(core, name), (face.__name__, name)
