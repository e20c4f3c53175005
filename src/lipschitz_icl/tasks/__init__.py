"""Task classes: the priors over functions ``f`` the paper pretrains on, and their registry.

===============  ==============================================================================================
``family``       :class:`TaskFamily`, the base class a task class subclasses (sampler, features, kernel form)
``builtin``      the seven built-in classes (affine, relu, cosine, low-rank linear/affine/quadratic/cosine)
``registry``     the registry ``TASKS``: built-in classes, ``register_task``, the entry point group
                 ``lipschitz_icl.tasks``
``kernel``       :class:`ZonalKernel`: a covariance ``K(t)``, its Gegenbauer expansion, the Schoenberg check
``kernel_form``  a class's kernel from its one statement, the SymPy form: ``K(1)`` and ``D`` derived or checked
``admission``    what a class must pass to be registered: its facts, a trial of its sampler and features
``zonal``        the kernels of the registered classes, mixtures, user expressions and callables
``zonal_class``  a task class given by its kernel alone (no sampler)
``symbolic``     budgets for SymPy steps on user input
===============  ==============================================================================================

The package re-exports :mod:`lipschitz_icl.tasks.registry` (``from lipschitz_icl.tasks import register_task``).
"""

from lipschitz_icl.tasks import registry
from lipschitz_icl.tasks.registry import (
    ENTRY_POINT_GROUP,
    FREQUENCY_RANGE,
    TASKS,
    Features,
    Task,
    TaskFamily,
    TaskPluginError,
    make_task_class,
    parameters_of,
    register_task,
    relu_kernel,
    sphere_characteristic,
    task_names,
    unregister_task,
)

# the registry's __all__, named one by one: a star import would freeze TASK_NAMES and ROTATION_INVARIANT
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
    "TASK_NAMES",  # by __getattr__, read from the registry on every access
    "ROTATION_INVARIANT",  # likewise
]


def __getattr__(name):
    """``TASK_NAMES`` and ``ROTATION_INVARIANT``, read from the registry on every access (classes can be
    registered later)."""
    if name in ("TASK_NAMES", "ROTATION_INVARIANT"):
        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
