"""lipschitz-icl: numbers you can trust for *Softmax Attention Adapts to Function Lipschitzness*.

The layout, from the ground up (each layer imports only the layers below it; ``tests/test_layers.py``):

==============================  ======================================================================
the ground (modules here)       ``validation``, ``estimate``, ``decision``, ``quadrature``, ``expression``,
                                ``progress``, ``tomlfile``, ``budget``
``sphere/``                     uniform points on ``S^{d-1}``, their laws and concentration
``tasks/``                      task classes, their kernels and the registry
``problem``                     an ICL problem (task class, ``n``, ``sigma``) and its constructors
``model/``                      attention, its geometry, the NumPy trainer
``exact/``                      the loss of ``M = w I`` at any ``n`` by quadrature
``loss/``                       the loss by Monte Carlo and its large-``n`` formula
``optimum``                     ``w*``: Monte Carlo, asymptotic, exact
``certified/``                  ball-arithmetic enclosures of the laws, the loss and ``w*``
``prover/``                     statements on a domain: proved, refuted or undecided; certificates
``derivations/``                SymPy derivations of the theory numbers
``estimators/``                 what the claims stand on
``runtime/``                    the on-disk cache and sweeps (serial or Dask)
``gates/``                      the claims registry, the design lock, evidence, variants, the pytest plugin
``claims/``                     the measure functions, one module per claim group
``report/``                     the LaTeX report and its figures
``commands/``, ``cli``          the command line
==============================  ======================================================================

The names below are imported on first use (PEP 562), so importing the package (and the console script's
entry point, :mod:`lipschitz_icl._entry`) costs nothing and a Ctrl-C while NumPy is still loading is
caught by the CLI.  Modules that moved into the subpackages keep their old import path
(``from lipschitz_icl.train import train``) through :data:`MOVED`, with a ``DeprecationWarning`` naming
the new one."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

__version__ = "0.1.0"

_EXPORTS = {
    "Attention": "lipschitz_icl.model.attention",
    "AttentionLayer": "lipschitz_icl.model.attention",
    "Estimate": "lipschitz_icl.estimate",
    "LossEstimate": "lipschitz_icl.estimate",
    "ParameterError": "lipschitz_icl.validation",
    "Problem": "lipschitz_icl.problem",
    "TASK_NAMES": "lipschitz_icl.tasks.registry",
    "make_problem": "lipschitz_icl.problem",
    "make_task_class": "lipschitz_icl.tasks.registry",
}

_DYNAMIC = {"TASK_NAMES"}  # read from the task registry on every access (classes can be registered later)

# old module (before the subpackages) -> where it lives now; the old names that are now packages
# (sphere, tasks, loss, exact, certified, prover) re-export their core module instead
MOVED = {
    "concentration": "sphere.concentration",
    "inequalities": "sphere.inequalities",
    "tails": "sphere.tails",
    "task_family": "tasks.family",
    "builtin_tasks": "tasks.builtin",
    "zonal": "tasks.zonal",
    "zonal_kernel": "tasks.kernel",
    "symbolic": "tasks.symbolic",
    "zonal_task": "tasks.zonal_class",
    "attention": "model.attention",
    "geometry": "model.geometry",
    "train": "model.train",
    "exact_quadrature": "exact.quadrature",
    "exact_zonal": "exact.zonal",
    "isotropic": "loss.isotropic",
    "pairwise": "loss.pairwise",
    "fixed_draw": "loss.fixed_draw",
    "asymptotic": "loss.asymptotic",
    "certified_quadrature": "certified.quadrature",
    "certified_loss": "certified.loss",
    "certified_wstar": "certified.wstar",
    "domain": "prover.domain",
    "enclosures": "prover.trusted",
    "certificate": "prover.certificate",
    "recheck": "prover.checker",
    "loss_enclosures": "prover.trusted",
    "cache": "runtime.cache",
    "memo": "runtime.memo",
    "sweep": "runtime.sweep",
    "registry": "gates.registry",
    "lock": "gates.lock",
    "evidence": "gates.evidence",
    "variants": "gates.variants",
    "proof_outcome": "gates.proof_outcome",
    "pytest_plugin": "gates.pytest_plugin",
    "probes": "estimators.probes",
    "pretraining": "estimators.pretraining",
    "minimiser": "estimators.minimiser",
    "trained_scale": "estimators.trained_scale",
    "lowrank": "estimators.lowrank",
    "law_points": "estimators.law_points",
    "loss_direction": "estimators.loss_direction",
    "linear_scale": "estimators.linear_scale",
    "window_errors": "estimators.window_errors",
    "projection_lemma": "estimators.projection_lemma",
    "circle": "estimators.circle",
}

__all__ = [*_EXPORTS, "__version__"]  # noqa: PLE0604 (the keys of _EXPORTS, all strings)


class _MovedModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``lipschitz_icl.<old>`` for a module of :data:`MOVED` and hands out the module at its new path
    (the same module object, its own ``__spec__`` kept), with a ``DeprecationWarning``."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, old = fullname.rpartition(".")
        if package != __name__ or old not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        new = f"{__name__}.{MOVED[spec.name.rpartition('.')[2]]}"
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs = getattr(self, "_specs", {})
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # the import system set the old name's spec on the module; give it back its own
        module.__spec__ = self._specs.pop(module.__spec__.name)


if not any(isinstance(finder, _MovedModule) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModule())


def __getattr__(name):
    """An exported name (imported on first use), or a submodule (``lipschitz_icl.tasks`` after
    ``import lipschitz_icl``, as when ``__init__`` imported them eagerly)."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'lipschitz_icl' has no attribute {name!r}")
    if name not in _DYNAMIC:
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
