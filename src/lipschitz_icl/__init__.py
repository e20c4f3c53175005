"""lipschitz-icl: numbers you can trust for *Softmax Attention Adapts to Function Lipschitzness*.

The names below are imported on first use (PEP 562), so importing the package (and the console script's
entry point, :mod:`lipschitz_icl._entry`) costs nothing and a Ctrl-C while NumPy is still loading is
caught by the CLI."""

import importlib
import importlib.util

__version__ = "0.1.0"

_EXPORTS = {
    "Attention": ".attention",
    "AttentionLayer": ".attention",
    "Estimate": ".estimate",
    "LossEstimate": ".estimate",
    "ParameterError": ".validation",
    "Problem": ".problem",
    "TASK_NAMES": ".tasks",
    "make_problem": ".problem",
    "make_task_class": ".tasks",
}

_DYNAMIC = {"TASK_NAMES"}  # read from the task registry on every access (classes can be registered later)

__all__ = [*_EXPORTS, "__version__"]  # noqa: PLE0604 (the keys of _EXPORTS, all strings)


def __getattr__(name):
    """An exported name (imported on first use), or a submodule (``lipschitz_icl.tasks`` after
    ``import lipschitz_icl``, as when ``__init__`` imported them eagerly)."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'lipschitz_icl' has no attribute {name!r}")
    if name not in _DYNAMIC:
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
