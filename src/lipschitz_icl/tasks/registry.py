"""The registry of task classes, :data:`TASKS` (name -> class), and the validated constructor.

Every part of the project that offers a choice of task reads it here: the CLI's ``--task`` choices, the
variant files' ``task``, the mixtures ``mix:NAME=WEIGHT,...`` and the zonal kernels, the routing of
the exact method.  A class is a subclass of :class:`~lipschitz_icl.tasks.family.TaskFamily` (its
docstring lists what a class supplies and the facts it declares); the built-in classes are in
:mod:`lipschitz_icl.tasks.builtin`.  Adding a class is one subclass and one call::

    register_task(MyTask)          # MyTask.name becomes a --task choice everywhere it applies, in this process

``register_task`` changes the registry of the process that calls it; the command line (``lipschitz-icl``) is
another process, which finds classes through the entry point group ``lipschitz_icl.tasks`` of an installed
package (``NAME = "package.module:Class"``, ``NAME`` equal to the class's ``name``; the how-to in the
documentation, ``docs/guide/task_class.rst``), loaded on the first read of the registry.  Either way the class
must pass :mod:`lipschitz_icl.tasks.admission`; a plugin that cannot be loaded or is refused is a
:class:`TaskPluginError` naming it (the CLI prints one line and exits 2).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from lipschitz_icl.tasks import admission
from lipschitz_icl.tasks.builtin import BUILTIN_TASKS, FREQUENCY_RANGE, relu_kernel, sphere_characteristic
from lipschitz_icl.tasks.family import Features, Task, TaskFamily
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real

__all__ = [
    "Features",
    "Task",
    "TaskFamily",
    "TASKS",
    "TaskPluginError",
    "ENTRY_POINT_GROUP",
    "register_task",
    "unregister_task",
    "task_names",
    "parameters_of",
    "make_task_class",
    "relu_kernel",
    "sphere_characteristic",
    "FREQUENCY_RANGE",
    "TASK_NAMES",  # noqa: F822 (served by the module __getattr__, read from the task registry)
    "ROTATION_INVARIANT",  # noqa: F822 (served by the module __getattr__, read from the task registry)
]

ENTRY_POINT_GROUP = "lipschitz_icl.tasks"


class TaskPluginError(ParameterError):
    """A task class from the entry point group that cannot be loaded or registered (one line)."""

    def __init__(self, entry: str, reason: str):
        self.name, self.requirement, self.value = "task plugin", reason, entry
        ValueError.__init__(self, f"task plugin {entry!r} (entry point group {ENTRY_POINT_GROUP}): {reason}")


class _Registry(Mapping):
    """``name -> class``, in registration order (built-in classes first); the entry point group is read
    on the first lookup."""

    def __init__(self, classes):
        self._classes = {cls.name: cls for cls in classes}
        self._plugins_loaded = False

    def _load(self) -> dict:
        if not self._plugins_loaded:  # all or nothing: a failed load is raised again on every read
            self._classes.update(_plugin_classes(self._classes))
            self._plugins_loaded = True
        return self._classes

    def __getitem__(self, name):
        return self._load()[name]

    def __iter__(self):
        return iter(list(self._load()))

    def __len__(self):
        return len(self._load())


TASKS = _Registry(BUILTIN_TASKS)


def register_task(cls, *, replace: bool = False):
    """Add ``cls`` (a :class:`TaskFamily` subclass) under ``cls.name`` in this process; returns ``cls`` (usable as
    a decorator).  The class must pass :mod:`lipschitz_icl.tasks.admission` (its facts, a trial of its code); a
    name already taken is refused unless ``replace``.  The command line runs in its own process: there a class
    arrives through the entry point group :data:`ENTRY_POINT_GROUP` of an installed package."""
    reason = admission.refusal(cls)
    if reason:
        raise ParameterError("task class", f"a registrable task class ({reason})", getattr(cls, "__name__", cls))
    classes = TASKS._load()
    if cls.name in classes and not replace and classes[cls.name] is not cls:
        raise ParameterError("task class", f"a class with a new name ({cls.name!r} is registered)", cls.__name__)
    classes[cls.name] = cls
    return cls


def unregister_task(name: str) -> None:
    """Remove the class registered under ``name``."""
    classes = TASKS._load()
    if name not in classes:
        raise ParameterError("task", "a registered task class", name)
    del classes[name]


def _plugin_classes(registered: dict) -> dict:
    """The classes of the entry point group :data:`ENTRY_POINT_GROUP`, admitted
    (:mod:`lipschitz_icl.tasks.admission`), by name."""
    from importlib import metadata

    found = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"{entry.name} = {entry.value}"
        cls = _load_entry(entry, where)
        reason = admission.facts_refusal(cls)
        if not reason and cls.name != entry.name:
            reason = f"its class is named {cls.name!r}, not {entry.name!r}"
        if not reason and (entry.name in registered or entry.name in found):
            reason = f"the name {entry.name!r} is taken"
        reason = reason or admission.trial(cls)
        if reason:
            raise TaskPluginError(where, reason)
        found[cls.name] = cls
    return found


def _load_entry(entry, where: str):
    """The object an entry point names; an import that fails, or exits (``sys.exit`` at import), is a
    :class:`TaskPluginError`."""
    try:
        return entry.load()
    except SystemExit as exc:
        raise TaskPluginError(where, f"cannot be loaded (it calls sys.exit({exc.code!r}) when imported)") from None
    except Exception as exc:
        raise TaskPluginError(where, f"cannot be loaded ({type(exc).__name__}: {exc})") from None


def task_names(**facts) -> tuple:
    """Names of the registered classes whose facts equal ``facts`` (e.g. ``rotation_invariant=True``), in
    registration order."""
    return tuple(name for name, cls in TASKS.items() if all(getattr(cls, k) == v for k, v in facts.items()))


def parameters_of(name: str, **values) -> dict:
    """Those of ``values`` that are extra parameters of the registered class ``name`` (e.g. the mixture's
    ``frequency``, which only the classes with a frequency take)."""
    return {key: value for key, value in values.items() if key in TASKS[name].parameters}


def __getattr__(name):
    """``TASK_NAMES`` (every registered class) and ``ROTATION_INVARIANT``, read from the registry."""
    if name == "TASK_NAMES":
        return tuple(TASKS)
    if name == "ROTATION_INVARIANT":
        return task_names(rotation_invariant=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_task_class(name: str, d: int, L: float, *, rank: int | None = None, B=None, **parameters) -> TaskFamily:
    """Validated constructor of the registered class ``name``.

    ``parameters`` are the class's extra parameters (e.g. ``frequency``), each a real within its range
    (default when omitted); ``rank`` (low-rank classes) sets ``B`` to the first ``rank`` coordinate axes
    unless ``B`` is given; a given ``B`` must be ``d x r`` with orthonormal columns, ``1 <= r <= d``.
    """
    name = check_choice("task", name, tuple(TASKS))
    cls = TASKS[name]
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    values = {}
    for pname, value in parameters.items():
        if pname not in cls.parameters:
            raise ParameterError(
                pname, f"unset for the class {name!r} (its parameters: {', '.join(cls.parameters) or 'none'})", value
            )
        _, low, high = cls.parameters[pname]
        values[pname] = check_real(pname, value, minimum=low, maximum=high)
    if not cls.low_rank:
        if B is not None or rank is not None:
            raise ParameterError("rank", f"unset for the full-rank class {name!r}", rank if B is None else "B")
        return cls(d, L, **values)
    return cls(d, L, B=_low_rank_B(name, d, rank, B), **values)


def _low_rank_B(name: str, d: int, rank, B) -> np.ndarray:
    """``B`` of a low-rank class: the first ``rank`` axes, or the given ``B`` checked."""
    if B is None:
        if rank is None:
            raise ParameterError("rank", f"an integer in [1, {d}] for the low-rank class {name!r}", rank)
        rank = check_int("rank", rank, minimum=1, maximum=d)
        return np.eye(d)[:, :rank]
    B = np.asarray(B, dtype=np.float64)
    if B.ndim != 2 or B.shape[0] != d or not 1 <= B.shape[1] <= d or not np.all(np.isfinite(B)):
        raise ParameterError("B", f"a finite d x r matrix with d = {d} and 1 <= r <= {d}", f"array of shape {B.shape}")
    if not np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-10):
        raise ParameterError("B", "a matrix with orthonormal columns (B^T B = I)", "B^T B != I")
    if rank is not None and check_int("rank", rank, minimum=1) != B.shape[1]:
        raise ParameterError("rank", f"equal to the number of columns of B ({B.shape[1]})", rank)
    return B
