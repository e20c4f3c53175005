"""Zonal (rotation-invariant) task priors, given by their covariance kernel ``K(t)``, ``t = x.y``.

A rotation-invariant task prior on ``S^(d-1)`` has ``E_f[f(x) f(y)] = K(x.y)`` and a constant mean;
the constant cancels in ``sum_i p_i f(x_i) - f(q)`` (softmax weights sum to one), so ``K`` fixes the
ICL loss of softmax attention.  The loss is written with ``D(t) = K(1) - K(t)`` (no cancellation near
``t = 1``), which every kernel here evaluates as a function of ``u = 1 - t = 2 sin^2(theta/2)``
(:class:`~lipschitz_icl.tasks.kernel.ZonalKernel`, with the Gegenbauer expansion and the Schoenberg check).

Kernels (``m`` the dimension of the sphere's ambient space):

==============  ==============================================================================
NAME            the kernel of the rotation-invariant registered class NAME
                (:meth:`~lipschitz_icl.tasks.family.TaskFamily.zonal_kernel`; built-in: affine, relu, cosine)
mix:a=1,b=2     the weighted mean ``sum_c w_c K_c / sum_c w_c`` of the classes' kernels
expression      a user expression in ``t`` (and ``d``, named constants), read by the project's safe
                parser (:func:`lipschitz_icl.expression.parse_expression`); its SymPy form (``t`` free
                of assumptions) is held to the parser's own values at 24 points of ``[-1, 1]``, and
                every SymPy step runs under a budget (:mod:`lipschitz_icl.tasks.symbolic`)
callable        a Python function ``K(t)`` (vectorised over a NumPy array)
==============  ==============================================================================

SymPy, mpmath and the expression parser are imported by the functions that read user expressions (and a
mixture's SymPy form is built on first read, :attr:`ZonalKernel.sympy`): the built-in classes' kernels and
mixtures of them cost NumPy alone, so the command line's numeric methods never import SymPy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from lipschitz_icl.tasks.family import class_kernel
from lipschitz_icl.tasks.kernel import (
    SCHOENBERG_TOL,
    ZonalKernel,
    check_schoenberg,
    gap_coefficients,
    gegenbauer_coefficients,
    gegenbauer_table,
    harmonic_dimension,
    rounding_floor,
)
from lipschitz_icl.tasks.registry import FREQUENCY_RANGE, TASKS, task_names
from lipschitz_icl.validation import ParameterError, check_int, check_real, parse_real

__all__ = [
    "ZonalKernel",
    "BUILTIN_KERNELS",  # noqa: F822 (served by the module __getattr__, read from the task registry)
    "SCHOENBERG_TOL",
    "builtin_kernel",
    "mixture_kernel",
    "expression_kernel",
    "callable_kernel",
    "parse_task",
    "parse_mixture",
    "gegenbauer_table",
    "harmonic_dimension",
    "gegenbauer_coefficients",
    "gap_coefficients",
    "check_schoenberg",
    "rounding_floor",
    "kernel_constants",
    "reserved_names",
    "RESERVED_NAMES",  # noqa: F822 (served by the module __getattr__: it reads the expression parser's names)
    "zonal_task_names",
    "is_mixture",
    "MIXTURE_PREFIX",
]


def zonal_task_names() -> tuple:
    """The registered classes with a zonal kernel (the rotation-invariant ones): the names of ``--task``
    kernels and of the parts of a mixture."""
    return task_names(rotation_invariant=True)


def __getattr__(name):
    """``BUILTIN_KERNELS``: :func:`zonal_task_names`, read from the registry; ``RESERVED_NAMES``:
    :func:`reserved_names`."""
    if name == "BUILTIN_KERNELS":
        return zonal_task_names()
    if name == "RESERVED_NAMES":
        return reserved_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- kernels of the task classes
def builtin_kernel(name: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """The kernel of the rotation-invariant registered class ``name``
    (:meth:`~lipschitz_icl.tasks.family.TaskFamily.zonal_kernel`; ``frequency`` for the classes that take
    one); one object per argument tuple (its Gegenbauer coefficients are cached on it)."""
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    frequency = check_real("frequency", frequency, minimum=FREQUENCY_RANGE[0], maximum=FREQUENCY_RANGE[1])
    names = zonal_task_names()
    if name not in names:
        raise ParameterError("task", "one of " + ", ".join(names) + " or mix:NAME=WEIGHT,...", name)
    cls = TASKS[name]
    parameters = {"frequency": frequency} if "frequency" in cls.parameters else {}
    return class_kernel(cls, d, L, tuple(parameters.items()))


MIXTURE_PREFIX = "mix:"


def is_mixture(task) -> bool:
    """True for a task written ``mix:NAME=WEIGHT,...``."""
    return isinstance(task, str) and task.startswith(MIXTURE_PREFIX)


MAX_MIXTURE_WEIGHT = 1e300


def mixture_kernel(parts, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """``sum_c w_c K_c / sum_c w_c`` for ``parts = [(name, weight), ...]``: each rotation-invariant class at most
    once, weights in ``[0, 1e300]`` (so the total is finite), total ``> 0``; parts of weight 0 are dropped."""
    classes = zonal_task_names()
    if not isinstance(parts, (list, tuple)) or not 1 <= len(parts) <= len(classes):
        raise ParameterError("task", f"a mixture of 1 to {len(classes)} parts", parts)
    names = [name for name, _ in parts]
    if len(set(names)) != len(names) or not set(names) <= set(classes):
        raise ParameterError("task", f"a mixture of distinct classes among {', '.join(classes)}", names)
    weights = [
        check_real(f"weight of {name}", weight, minimum=0.0, maximum=MAX_MIXTURE_WEIGHT) for name, weight in parts
    ]
    total = math.fsum(weights)
    if not total > 0:
        raise ParameterError("task", "a mixture with a positive total weight", parts)
    kept = [(name, w) for name, w in zip(names, weights) if w > 0]
    kernels = [builtin_kernel(name, d, L, frequency) for name, _ in kept]
    ws = [w / total for _, w in kept]

    def gap(u):
        return sum(w * k.gap(u) for w, k in zip(ws, kernels))

    label = MIXTURE_PREFIX + ",".join(f"{k.name}={w:g}" for k, (_, w) in zip(kernels, kept))

    def expr():  # the SymPy form, built on first read
        import sympy as sp

        return sum(sp.Float(w) * k.sympy for w, k in zip(ws, kernels))

    parts = tuple((name, w, L, frequency) for (name, _), w in zip(kept, ws))
    # a positive mixture of checked kernels is a covariance with K(1) > 0: checked
    checked = all(k.checked for k in kernels)
    return ZonalKernel(label, d, sum(w * k.k1 for w, k in zip(ws, kernels)), gap, expr, parts, checked=checked)


def parse_mixture(task: str) -> tuple:
    """``((name, weight), ...)`` of ``mix:NAME=WEIGHT,...``, validated as a whole before anything is built:
    at most one part per rotation-invariant class (so at most that many parts, counted before any
    is read), names exactly as listed, weights read by the one number parser
    (:func:`~lipschitz_icl.validation.parse_real`: ASCII decimal, no ``1_0`` or ``' 5 '``) in
    ``[0, 1e300]``, and a total weight ``> 0``."""
    classes = zonal_task_names()
    requirement = (
        f"mix:NAME=WEIGHT,... with distinct NAME in {', '.join(classes)} and weights in "
        f"[0, {MAX_MIXTURE_WEIGHT:g}] written in ASCII digits, with a positive total"
    )
    if not is_mixture(task):
        raise ParameterError("task", requirement, task)
    items = task[len(MIXTURE_PREFIX) :].split(",", len(classes))
    if len(items) > len(classes):
        raise ParameterError("task", f"{requirement} (at most {len(classes)} parts)", task)
    parts: list[tuple[str, float]] = []
    for item in items:
        name, sep, weight = item.partition("=")
        if not sep or name not in classes or name in (p[0] for p in parts):
            raise ParameterError("task", requirement, task)
        try:
            parts.append((name, parse_real(f"weight of {name}", weight, minimum=0.0, maximum=MAX_MIXTURE_WEIGHT)))
        except ParameterError as exc:
            raise ParameterError("task", f"{requirement} (weight of {name}: {exc.requirement})", task) from None
    if not math.fsum(w for _, w in parts) > 0:
        raise ParameterError("task", f"{requirement} (all weights are 0)", task)
    return tuple(parts)


def parse_task(task: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """A rotation-invariant class's name (:func:`builtin_kernel`) or ``mix:NAME=WEIGHT,...``
    (:func:`parse_mixture`) as a :class:`ZonalKernel`."""
    if not isinstance(task, str):
        raise ParameterError("task", "a task name", task)
    if not is_mixture(task):
        return builtin_kernel(task, d, L, frequency)
    return mixture_kernel(parse_mixture(task), d, L, frequency)


# ----------------------------------------------------------------------------- user kernels
KERNEL_VARIABLES = ("t", "d")


def reserved_names() -> frozenset:
    """``t``, ``d``, ``u`` and the expression parser's constants and functions: never a constant's name
    (also ``RESERVED_NAMES``)."""
    from lipschitz_icl.expression import BUILTIN_CONSTANTS, FUNCTIONS

    return frozenset({"t", "d", "u", *BUILTIN_CONSTANTS, *FUNCTIONS})


def kernel_constants(constants) -> dict:
    """``constants`` checked: identifiers (a letter, then letters, digits, ``_``; at most 31) that are
    not ``t``, ``d``, ``u``, ``pi`` or a function name (shadowing is an error), finite reals with
    ``|x| <= 1e300``."""
    from lipschitz_icl.expression import FUNCTIONS, MAX_CONSTANT

    out, reserved = {}, reserved_names()
    for name, value in dict(constants or {}).items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,30}", name) or name in reserved:
            raise ParameterError(
                f"constant {name!r}",
                "named by an identifier (a letter, then letters, digits or "
                f"_; at most 31) other than t, d, u, pi and the functions {', '.join(FUNCTIONS)}",
                name,
            )
        out[name] = check_real(f"constant {name}", value, minimum=-MAX_CONSTANT, maximum=MAX_CONSTANT)
    return out


def _expression_values(parsed, text: str, env: dict, points: np.ndarray) -> list:
    """``K(t)`` at ``points`` by the expression's own evaluator (mpmath, magnitude budget; independent of
    SymPy); a point where it is undefined or not a finite real refuses the kernel."""
    import mpmath

    from lipschitz_icl.expression import ExpressionError

    values = []
    for t in points:
        try:
            values.append(parsed.evaluate({**env, "t": mpmath.mpf(float(t))}))
        except ExpressionError as exc:
            raise ParameterError(
                "kernel", f"a real, finite function of t on [-1, 1] (at t = {t:.6g}: {exc.reason})", text
            ) from None
    return values


def _sympy_form(parsed, text: str, d: int, constants: dict):
    """``K(t)`` in SymPy (``t`` the symbol :data:`lipschitz_icl.tasks.kernel_form.T`, with no assumptions: no
    identity that needs ``t > 0`` applies, so ``abs(t)`` stays ``|t|``), under the budgets of
    :mod:`lipschitz_icl.tasks.symbolic`."""
    import sympy as sp

    from lipschitz_icl.expression import ExpressionError
    from lipschitz_icl.tasks import kernel_form, symbolic

    values = {"t": kernel_form.T, "d": sp.Integer(d), **{n: sp.Float(v) for n, v in constants.items()}}

    def build():
        try:
            return parsed.to_sympy(values)
        except ExpressionError as exc:
            raise ParameterError("kernel", f"an expression in t, d and named constants ({exc})", text) from None

    return symbolic.within_budget(build, name="kernel", text=text, what="its SymPy form")


def expression_kernel(text: str, d: int, constants: dict | None = None, *, check: bool = True) -> ZonalKernel:
    """A kernel from the expression ``text`` in ``t`` (and ``d``, ``pi`` and the names of ``constants``),
    read by the project's safe parser; ``D(u) = K(1) - K(1 - u)`` is built symbolically and evaluated
    with NumPy (:func:`lipschitz_icl.tasks.kernel_form.numpy_gap` on the parsed tree's SymPy form, never on the
    text).  Before use the NumPy ``D`` is held to the expression's own values (mpmath) at the check points of
    :func:`lipschitz_icl.tasks.kernel_form.check_points`: a SymPy form that differs (beyond
    ``AGREEMENT_RTOL max |D|``) is refused, so no rewriting can change the kernel; every SymPy step runs under a
    time and size budget."""
    from lipschitz_icl.expression import ExpressionError, parse_expression
    from lipschitz_icl.tasks import kernel_form

    d = check_int("d", d, minimum=2)
    constants = kernel_constants(constants)
    try:
        parsed = parse_expression(text, {*KERNEL_VARIABLES, *constants})
    except ExpressionError as exc:
        raise ParameterError("kernel", f"an expression in t, d and named constants ({exc})", text) from None
    points = kernel_form.check_points(text)
    exact = _expression_values(parsed, text, {"d": d, **constants}, points)  # points[0] = 1: K(1)
    k1 = float(exact[0])
    if not all(math.isfinite(float(value)) for value in exact):
        raise ParameterError("kernel", "a function whose values on [-1, 1] a double can hold (|K| <= 1e308)", text)
    k_t = _sympy_form(parsed, text, d, constants)
    gap = kernel_form.numpy_gap(k_t, name="kernel", text=text)
    try:
        got = gap(1.0 - points)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ParameterError("kernel", f"an expression NumPy can evaluate ({type(exc).__name__})", text) from None
    what = "an expression whose symbolic form keeps its values"
    kernel_form.agree(kernel_form.gaps_of(exact), got, points, name="kernel", text=text, what=what)
    # the name keys the on-disk cache (lipschitz_icl.runtime.memo.problem_key): it carries the constants too
    name = text + ("" if not constants else " with " + ", ".join(f"{k}={v!r}" for k, v in sorted(constants.items())))
    kernel = ZonalKernel(name, d, k1, gap, k_t)
    if check:
        check_schoenberg(kernel)
    return replace(kernel, checked=check)


def callable_kernel(fn: Callable, d: int, name: str = "callable", *, check: bool = True) -> ZonalKernel:
    """A kernel from a Python function ``K(t)`` (vectorised); ``D(u) = K(1) - K(1 - u)`` by subtraction
    (relative rounding ``eps K(1)/D(u)`` near ``u = 0``)."""
    d = check_int("d", d, minimum=2)
    k1 = float(np.asarray(fn(np.array([1.0])), dtype=np.float64)[0])
    if not math.isfinite(k1):
        raise ParameterError("kernel", "finite at t = 1", name)

    def gap(u):
        u = np.asarray(u, dtype=np.float64)
        return k1 - np.asarray(fn(1.0 - u), dtype=np.float64)

    kernel = ZonalKernel(name, d, k1, gap)
    if check:
        check_schoenberg(kernel)
    return replace(kernel, checked=check)
