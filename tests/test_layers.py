"""The import structure: the engine (everything that computes) imports nothing of the layers above it
(the claims, the report, the commands, the cache and what stands on them), and every module imports on
its own, in any order (no import cycle that only works from one entry point)."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import lipschitz_icl

PACKAGE = Path(lipschitz_icl.__file__).parent
# the layers above the engine: packages (with their submodules) and single modules
ABOVE_PACKAGES = ("lipschitz_icl.claims", "lipschitz_icl.report", "lipschitz_icl.commands")
ABOVE_MODULES = {
    "lipschitz_icl.cache": "the on-disk cache (the engine is cached from above, through memo)",
    "lipschitz_icl.memo": "the engine's w* and loss through the cache",
    "lipschitz_icl.cli": "the command line",
    "lipschitz_icl._entry": "the console script",
    "lipschitz_icl.__main__": "python -m lipschitz_icl",
    "lipschitz_icl.sweep": "runs commands and gates on a cluster",
    "lipschitz_icl.variants": "user bound variants, evaluated through memo",
    "lipschitz_icl.pytest_plugin": "the verify/ gates",
    "lipschitz_icl.registry": "the claims registry (imports the claims' measure functions by name)",
    "lipschitz_icl.lock": "the registry's design lock",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every ``lipschitz_icl`` module ``path`` imports, at module level or inside a function."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("lipschitz_icl")}


def _above(module: str) -> bool:
    return (
        module in ABOVE_MODULES or module.startswith(tuple(p + "." for p in ABOVE_PACKAGES)) or module in ABOVE_PACKAGES
    )


ENGINE = sorted(name for name in _modules() if not _above(name) and name != "lipschitz_icl")


def test_the_layer_lists_name_real_modules():
    modules = _modules()
    assert set(ABOVE_MODULES) <= set(modules) and all(p in modules for p in ABOVE_PACKAGES)
    assert len(ENGINE) > 40


@pytest.mark.parametrize("name", ENGINE)
def test_an_engine_module_imports_nothing_above_the_engine(name):
    upward = sorted(m for m in _imports(name, _modules()[name]) if _above(m))
    assert not upward, f"{name} imports {upward}"


def test_the_cache_imports_nothing_of_the_engine():
    imported = _imports("lipschitz_icl.cache", _modules()["lipschitz_icl.cache"])
    assert imported <= {"lipschitz_icl", "lipschitz_icl.__version__"}, imported


@pytest.mark.slow(reason="re-imports the package once per module (~10 s); the reverse-order import runs by default")
def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each module imported first, alone, in one child interpreter per module batch (a cycle that only
    resolves from another entry point fails here)."""
    names = sorted(n for n in _modules() if not n.endswith("__main__"))
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
    for name in sorted(_modules(), reverse=True):
        if not name.endswith("__main__"):
            importlib.import_module(name)
