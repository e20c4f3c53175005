"""What a task class must pass to be registered (:func:`lipschitz_icl.tasks.registry.register_task` and the entry
point group): its facts, then a trial of its code, each refusal one line saying why.

Facts (:class:`~lipschitz_icl.tasks.family.TaskFamily`): ``name`` lower-case words joined by ``-`` (at most 40
characters); ``rotation_invariant``, ``has_intercept``, ``low_rank``, ``has_kink`` exactly ``True`` or ``False``;
``quadrature`` ``None`` or a form of :data:`lipschitz_icl.tasks.family.QUADRATURE_FORMS`; ``parameters`` a
dict ``{name: (default, minimum, maximum)}`` of finite reals with ``minimum <= default <= maximum``; not both
rotation-invariant and low-rank; a rotation-invariant class states its kernel with ``kernel_form`` and does not
override ``zonal_kernel``.  An attribute that raises when read is a refusal naming it.

The trial (:func:`trial`), at ``d = 3`` and ``d = 5``, ``L = 0.7`` (low-rank classes: ``B`` the first two axes),
the parameters at their defaults; any exception of the class's code is a refusal naming the method:

* the kernel of a rotation-invariant class is built and checked (:func:`lipschitz_icl.tasks.kernel_form.class_kernel`:
  its numeric forms against its SymPy form, its quadrature form, ``K(1) > 0``, Schoenberg);
* the covariance the class states (its kernel, or ``link_covariance``) is held to what its sampler draws and to
  what its features give, by Monte Carlo: with ``x.q = t`` (``t = 0.6, -0.3``), ``E_f (f(x) - f(q))^2`` over
  :data:`TRIAL_TASKS` sampled tasks, and the task-averaged bias of one context point ``x``
  (:meth:`~lipschitz_icl.tasks.family.TaskFamily.features`, and ``reduced_features`` for a rotation-invariant
  class) over as many contexts, must each equal ``C(x, x) + C(q, q) - 2 C(x, q)`` within
  :data:`TRIAL_Z` standard errors (one fixed seed: the same verdict on every run; a correct class is refused
  with probability about ``1e-9`` per comparison), so a kernel off by a factor, or a sampler that draws
  another class, is refused before any use;
* the sampled tasks' values and Lipschitz constants are finite.

A class registered by :func:`~lipschitz_icl.tasks.registry.register_task` is tried when it is registered; a plugin
class when the entry point group is read (the first use of the registry).
"""

from __future__ import annotations

import math
import re

import numpy as np

from lipschitz_icl.tasks.family import QUADRATURE_FORMS, TaskFamily
from lipschitz_icl.validation import ParameterError

__all__ = ["refusal", "facts_refusal", "trial", "TRIAL_TASKS", "TRIAL_Z", "TRIAL_DIMS", "TRIAL_L", "BOOLEAN_FACTS"]

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")  # lower case words joined by '-' (no ':' of mix:/kernel:)
BOOLEAN_FACTS = ("rotation_invariant", "has_intercept", "low_rank", "has_kink")
TRIAL_DIMS = (3, 5)
TRIAL_L = 0.7
TRIAL_RANK = 2
TRIAL_TASKS = 20000
TRIAL_Z = 6.0
TRIAL_T = (0.6, -0.3)
TRIAL_SEED = 20240601


class _Refused(Exception):
    """A reason to refuse a class (one line)."""


def _read(cls, name: str):
    """``cls.<name>``; an attribute that raises is a refusal naming it."""
    try:
        return getattr(cls, name)
    except Exception as exc:
        raise _Refused(f"its attribute {name} raises {type(exc).__name__}: {exc}") from None


def _describe(value) -> str:
    text = type(value).__name__ if isinstance(value, np.ndarray) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_parameters(parameters) -> None:
    if not isinstance(parameters, dict):
        raise _Refused(f"its parameters are {_describe(parameters)}, not a dict {{name: (default, min, max)}}")
    for pname, spec in parameters.items():
        if not isinstance(pname, str) or not pname.isidentifier() or pname in ("d", "L", "B", "rank"):
            raise _Refused(f"its parameter name {_describe(pname)} is not an identifier other than d, L, B, rank")
        numbers = spec if isinstance(spec, (tuple, list)) and len(spec) == 3 else None
        if numbers is None or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in numbers
        ):
            raise _Refused(f"its parameter {pname} is {_describe(spec)}, not (default, minimum, maximum) finite reals")
        default, low, high = numbers
        if not low <= default <= high:
            raise _Refused(f"its parameter {pname} has a default {default!r} outside [{low!r}, {high!r}]")


def facts_refusal(cls) -> str:
    """The reason the class's facts refuse it, or ``""`` (module docstring)."""
    try:
        if not (isinstance(cls, type) and issubclass(cls, TaskFamily)):
            return "not a subclass of lipschitz_icl.tasks.family.TaskFamily"
        name = _read(cls, "name")
        if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > 40:
            return f"its name {_describe(name)} is not lower-case words joined by '-' (at most 40 characters)"
        facts = {fact: _read(cls, fact) for fact in BOOLEAN_FACTS}
        for fact, value in facts.items():
            if not isinstance(value, bool):
                return f"its fact {fact} is {_describe(value)}, not True or False"
        quadrature = _read(cls, "quadrature")
        if quadrature is not None and not (isinstance(quadrature, str) and quadrature in QUADRATURE_FORMS):
            forms = ", ".join(map(repr, QUADRATURE_FORMS))
            return f"its quadrature {_describe(quadrature)} is none of None, {forms}"
        _check_parameters(_read(cls, "parameters"))
        if facts["rotation_invariant"] and facts["low_rank"]:
            return "a low-rank class is not rotation-invariant"
        if facts["rotation_invariant"] and _own(cls, "kernel_form") is None:
            return "a rotation-invariant class must define kernel_form (its kernel as a SymPy expression in t)"
        if _own(cls, "zonal_kernel") is not None:
            return "it overrides zonal_kernel: state the kernel with kernel_form (and kernel_gap) instead"
        if quadrature is not None and not facts["rotation_invariant"]:
            return "a class with a quadrature form is rotation-invariant"
    except _Refused as exc:
        return str(exc)
    return ""


def _own(cls, method: str):
    """The class's own definition of a :class:`TaskFamily` classmethod, or ``None`` when it inherits the base's."""
    found = getattr(cls, method)
    base = getattr(TaskFamily, method)
    return None if getattr(found, "__func__", None) is base.__func__ else found


def _instance(cls, d: int) -> TaskFamily:
    parameters = {name: spec[0] for name, spec in cls.parameters.items()}
    if cls.low_rank:
        return cls(d, TRIAL_L, B=np.eye(d)[:, :TRIAL_RANK], **parameters)
    return cls(d, TRIAL_L, **parameters)


def _pair(t: float, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Points ``x``, ``q`` of ``S^(d-1)`` with ``x.q = t``, in a random orientation."""
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    x = np.zeros(d)
    x[0] = t
    x[1] = math.sqrt(1.0 - t * t)
    return rotation @ x, rotation[:, 0]


def _finite(what: str, values, shape: tuple) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != shape:
        raise _Refused(f"its {what} gives values of shape {values.shape}, not {shape}")
    if not np.all(np.isfinite(values)):
        raise _Refused(f"its {what} gives values that are not finite")
    return values


def _agrees(what: str, samples: np.ndarray, target: float, t: float, d: int) -> None:
    """The mean of ``samples`` equals ``target`` within :data:`TRIAL_Z` standard errors."""
    mean = float(np.mean(samples))
    se = float(np.std(samples) / math.sqrt(samples.size))
    if not abs(mean - target) <= TRIAL_Z * se + 1e-9 * max(abs(target), 1e-300):
        raise _Refused(
            f"its {what} does not match its covariance: at d = {d}, x.q = {t:g}, E (f(x) - f(q))^2 is "
            f"{target:.6g} by the covariance, {mean:.6g} +- {se:.2g} by the {what}"
        )


def _step(what: str, fn, *args):
    """``fn(*args)``: a step of the trial; an exception of the class's code is a refusal naming ``what``."""
    try:
        return fn(*args)
    except (_Refused, MemoryError):
        raise
    except ParameterError as exc:
        raise _Refused(f"its {what} is refused: {exc.requirement if exc.name == 'task' else exc}") from None
    except Exception as exc:
        raise _Refused(f"its {what} raises {type(exc).__name__}: {exc}") from None


def _try(tc: TaskFamily, d: int, rng: np.random.Generator) -> None:
    """The trial of one instance (module docstring)."""
    n = TRIAL_TASKS
    if tc.rotation_invariant:
        _step("kernel", tc.covariance_kernel)
    for t in TRIAL_T:
        x, q = _pair(t, d, rng)
        covariance = [_step("covariance", tc.covariance, a, b) for a, b in ((x, x), (q, q), (x, q))]
        target = float(_finite("covariance", np.asarray(covariance), (3,)) @ np.array([1.0, 1.0, -2.0]))
        tasks = _step("sampler", tc.sample, rng, n)
        fx = _finite("sampler", _step("sampler", tasks, np.broadcast_to(x, (n, d))), (n,))
        fq = _finite("sampler", _step("sampler", tasks, np.broadcast_to(q, (n, d))), (n,))
        _finite("task_lipschitz", _step("task_lipschitz", getattr, tasks, "lipschitz"), (n,))
        _agrees("sampler", (fx - fq) ** 2, target, t, d)
        features = _step("features", tc.features, rng, np.broadcast_to(x, (n, 1, d)), np.broadcast_to(q, (n, d)))
        bias = _step("features", features.bias, np.ones((n, 1)))
        _agrees("features", _finite("features", bias, (n,)), target, t, d)
        if tc.rotation_invariant:
            reduced = _step("reduced_features", tc.reduced_features, rng, np.full((n, 1), t))
            bias = _step("reduced_features", reduced.bias, np.ones((n, 1)))
            _agrees("reduced_features", _finite("reduced_features", bias, (n,)), target, t, d)


def trial(cls) -> str:
    """The reason the trial of the class's code refuses it, or ``""`` (module docstring)."""
    rng = np.random.default_rng(TRIAL_SEED)
    try:
        for d in TRIAL_DIMS:
            _try(_step("constructor", _instance, cls, d), d, rng)
    except _Refused as exc:
        return f"{exc} (trial at d = {d}, L = {TRIAL_L:g})"
    return ""


def refusal(cls) -> str:
    """Why ``cls`` cannot be registered (its facts, then its trial), or ``""``."""
    return facts_refusal(cls) or trial(cls)
