"""A kernel from its one statement, the SymPy form ``K(t)``: the numeric forms derived from it or checked against it.

A rotation-invariant task class states its kernel once, as a SymPy expression in the symbol ``t``
(:meth:`lipschitz_icl.tasks.family.TaskFamily.kernel_form`).  Everything else the project reads of the kernel
comes from that expression (:func:`class_kernel`):

* ``K(1)``: the form at ``t = 1``, evaluated by mpmath at 30 digits and rounded once to a double;
* ``D(u) = K(1) - K(1 - u)``, the numeric form the exact method and the Schoenberg check evaluate: derived from
  the form (:func:`numpy_gap`: ``sympy.simplify`` of ``K(1) - K(1 - u)``, then ``sympy.lambdify``), or, where a
  class gives its own for accuracy or speed (:meth:`~lipschitz_icl.tasks.family.TaskFamily.kernel_gap`), that one
  held to the form at :data:`CHECK_POINTS` points of ``[-1, 1]`` (:func:`check_gap`): a numeric ``D`` that
  differs from the form's by more than ``AGREEMENT_RTOL max |D|`` is refused, naming the point;
* the kernel a dedicated quadrature implements (:data:`QUADRATURE_KERNELS`): a class that declares one
  (``quadrature = "linear"`` or ``"arc-cosine"``) must have that form's ``D``, checked the same way;
* ``K(1) > 0`` and positive definiteness on the sphere (Schoenberg: every Gegenbauer coefficient
  ``a_l >= 0``, :func:`lipschitz_icl.tasks.kernel.check_schoenberg`) before any use, on the numeric ``D``, whose
  measured error against the form (at the check points) sets the rounding floor of the coefficients;
* an exception raised by a class's own code (its form, its ``D``), then or later, is a
  :class:`~lipschitz_icl.validation.ParameterError` on ``task`` naming the class (the CLI: one line, exit 2).

The user kernels of :mod:`lipschitz_icl.tasks.zonal` (``--kernel EXPR``) use the same derivation of ``D``
and the same check, held to the values of the project's own expression evaluator.  Every SymPy step on a
form runs under the budgets of :mod:`lipschitz_icl.tasks.symbolic`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import replace

import mpmath
import numpy as np
import sympy as sp

from lipschitz_icl.tasks import symbolic
from lipschitz_icl.tasks.kernel import ZonalKernel, check_schoenberg, kernel_label
from lipschitz_icl.validation import ParameterError

__all__ = [
    "T",
    "CHECK_POINTS",
    "AGREEMENT_RTOL",
    "QUADRATURE_KERNELS",
    "quadrature_kernel",
    "check_points",
    "numpy_gap",
    "check_gap",
    "gaps_of",
    "agree",
    "form_values",
    "class_kernel",
]

T = sp.Symbol("t")  # the variable of every kernel form (no assumptions: t ranges over [-1, 1])
CHECK_POINTS = 24  # points of [-1, 1] where a numeric D is held to its reference
AGREEMENT_RTOL = 1e-8  # allowed |D - D_reference| relative to max |D_reference| at the check points
WORKING_DIGITS = 30  # mpmath precision of the reference values


def _linear(d: int, L: float) -> sp.Expr:
    """``(L^2/3)(t/d + 1)``: the affine class's kernel, linear in ``t``."""
    return sp.Rational(1, 3) * sp.Float(L) ** 2 * (T / d + 1)


def _arc_cosine(d: int, L: float) -> sp.Expr:
    """``(2L^2/3) kappa(t) + L^2/3``, ``kappa(t) = (sqrt(1 - t^2) + (pi - arccos t) t)/(2 pi d)``: the relu
    class's kernel (the arc-cosine kernel of degree one)."""
    kappa = (sp.sqrt(1 - T**2) + (sp.pi - sp.acos(T)) * T) / (2 * sp.pi * d)
    return sp.Float(L) ** 2 * (sp.Rational(2, 3) * kappa + sp.Rational(1, 3))


# the kernel each dedicated quadrature (lipschitz_icl.exact.quadrature) and large-n formula
# (lipschitz_icl.loss.asymptotic) implements, as a function of (d, L); the bias reads D = K(1) - K alone
QUADRATURE_KERNELS: dict[str, Callable[[int, float], sp.Expr]] = {"linear": _linear, "arc-cosine": _arc_cosine}


def quadrature_kernel(form: str, d: int, L: float) -> sp.Expr:
    """The SymPy ``K(t)`` of the quadrature form ``form`` (a key of :data:`QUADRATURE_KERNELS`) at ``d``, ``L``."""
    return QUADRATURE_KERNELS[form](d, L)


def check_points(text: str) -> np.ndarray:
    """``t = 1, -1, 0, +-0.5`` and :data:`CHECK_POINTS` ``- 5`` pseudo-random points of ``[-1, 1]`` (a stream
    fixed by ``text``: the same points on every run)."""
    rng = np.random.default_rng(zlib.crc32(text.encode("utf-8", "replace")))
    return np.concatenate([[1.0, -1.0, 0.0, 0.5, -0.5], rng.uniform(-1.0, 1.0, CHECK_POINTS - 5)])


def numpy_gap(form: sp.Expr, *, name: str, text) -> Callable:
    """``D(u) = K(1) - K(1 - u)`` of the SymPy ``K(t)`` as a vectorised NumPy function: ``simplify`` on the
    symbolic difference (``u`` non-negative, true on ``[0, 2]``), then ``lambdify``; each step under the
    budgets of :mod:`lipschitz_icl.tasks.symbolic` (a hit: :class:`ParameterError` ``name``, ``text`` the input)."""
    u = sp.Symbol("u", nonnegative=True)
    gap_expr = symbolic.within_budget(
        lambda: sp.simplify(form.subs(T, 1) - form.subs(T, 1 - u)), name=name, text=text, what="simplify", start=form
    )
    fn = symbolic.within_budget(
        lambda: sp.lambdify(u, gap_expr, modules="numpy"), name=name, text=text, what="lambdify", start=gap_expr
    )

    def gap(values):
        values = np.asarray(values, dtype=np.float64)
        with np.errstate(all="ignore"):
            out = np.broadcast_to(np.asarray(fn(values), dtype=np.float64), values.shape)
        return np.array(out, dtype=np.float64)

    return gap


def _mpmath_form(form: sp.Expr, *, name: str, text) -> Callable:
    """The SymPy form as a function of one mpmath number (``sympy.lambdify`` under the budgets)."""
    return symbolic.within_budget(
        lambda: sp.lambdify(T, form, modules="mpmath"), name=name, text=text, what="lambdify", start=form
    )


def form_values(form: sp.Expr, points: np.ndarray, *, name: str, text) -> list:
    """``K(t)`` of the SymPy form at ``points`` by mpmath at :data:`WORKING_DIGITS` digits (independent of the
    double evaluation it checks); a value that is not a finite real refuses the kernel."""
    fn = _mpmath_form(form, name=name, text=text)
    values = []
    with mpmath.workdps(WORKING_DIGITS):
        for t in points:
            value = fn(mpmath.mpf(float(t)))
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value) or abs(value) > 1e300:
                raise ParameterError(name, f"a real, finite kernel on [-1, 1] (at t = {t:.6g} it is {value})", text)
            values.append(value)
    return values


def gaps_of(values: list) -> np.ndarray:
    """``K(1) - K(t)`` at the check points from the values ``K`` there (``values[0] = K(1)``), to a double."""
    with mpmath.workdps(WORKING_DIGITS):
        return np.array([float(values[0] - value) for value in values])


def agree(expected: np.ndarray, got: np.ndarray, points: np.ndarray, *, name: str, text, what: str) -> float:
    """Two forms of ``D(1 - t)`` at ``points``: refused (``what`` says which) where they differ by more than
    ``AGREEMENT_RTOL max |D|``, naming the first such point; else their largest difference relative to
    ``max |D|``."""
    scale = float(np.max(np.abs(expected)))
    bad = np.flatnonzero(~(np.abs(got - expected) <= AGREEMENT_RTOL * scale + 1e-300))
    if bad.size:
        j = int(bad[0])
        why = ": an intermediate value of its double form overflows" if np.isinf(got[j]) else ""
        raise ParameterError(
            name, f"{what} (at t = {points[j]:.6g} K(1) - K(t) is {expected[j]:.6g}, not {got[j]:.6g}{why})", text
        )
    return float(np.max(np.abs(got - expected))) / scale if scale > 0 else 0.0


def check_gap(gap: Callable, reference: list, points: np.ndarray, *, name: str, text, what: str) -> float:
    """The numeric ``D(1 - t)`` against ``K(1) - K(t)`` of the ``reference`` values ``K`` at ``points``
    (``points[0] = 1``): :func:`agree` (returns the relative error of the numeric ``D``)."""
    got = np.asarray(gap(1.0 - points), dtype=np.float64)
    return agree(gaps_of(reference), got, points, name=name, text=text, what=what)


def _guarded(fn: Callable, owner: str, what: str) -> Callable:
    """``fn`` with any exception of a class's own code (not ``MemoryError``) turned into a ParameterError on
    ``task`` naming the class ``owner`` and the step ``what``."""

    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ParameterError, MemoryError):
            raise
        except Exception as exc:
            raise ParameterError(
                "task", f"a class whose {what} can be evaluated ({type(exc).__name__}: {exc})", owner
            ) from None

    return call


def _form_of(cls, d: int, L: float, parameters: dict) -> sp.Expr:
    """``cls.kernel_form(d, L, **parameters)``, a SymPy expression with no free symbol but ``t``."""
    form = _guarded(cls.kernel_form, cls.name, "kernel_form")(d, L, **parameters)
    if not isinstance(form, sp.Expr):
        raise ParameterError("task", "a class whose kernel_form returns a SymPy expression in t", cls.name)
    form = form.subs({s: T for s in form.free_symbols if s.name == "t"})
    others = sorted(str(s) for s in form.free_symbols if s != T)
    if others:
        raise ParameterError(
            "task", f"a class whose kernel_form has no free symbol but t (it has {', '.join(others)})", cls.name
        )
    return form


def class_kernel(cls, d: int, L: float, parameters: dict) -> ZonalKernel:
    """The :class:`ZonalKernel` of the rotation-invariant class ``cls`` at ``d``, ``L`` and its extra
    ``parameters``, from its one statement ``cls.kernel_form`` (module docstring: ``K(1)`` and ``D`` derived,
    or ``cls.kernel_gap`` checked; the quadrature form checked; Schoenberg).  Named ``cls.name`` with its
    parameters, e.g. ``cosine(frequency=1)``."""
    label = kernel_label(cls.name, parameters)
    form = _form_of(cls, d, L, parameters)
    points = check_points(cls.name)
    reference = _guarded(form_values, cls.name, "kernel_form")(form, points, name="task", text=cls.name)
    given = _guarded(cls.kernel_gap, cls.name, "kernel_gap")(d, L, **parameters)
    if given is None:
        gap = numpy_gap(form, name="task", text=cls.name)
        what = "a class whose kernel_form SymPy can evaluate in doubles (its simplified D differs from its values)"
    else:
        gap = given
        what = "a class whose kernel_gap D(u) = K(1) - K(1 - u) agrees with its kernel_form"
    gap = _guarded(gap, cls.name, "kernel_gap")
    error = check_gap(gap, reference, points, name="task", text=cls.name, what=what)
    if cls.quadrature is not None:
        implemented = form_values(quadrature_kernel(cls.quadrature, d, L), points, name="task", text=cls.name)
        what = f"a class whose kernel is the {cls.quadrature!r} form its quadrature implements"
        agree(gaps_of(implemented), gaps_of(reference), points, name="task", text=cls.name, what=what)
    kernel = ZonalKernel(label, d, float(reference[0]), gap, form)
    try:  # a_l within the rounding of the numeric D (amplified by sqrt N(d, l)) are no evidence of a negative one
        check_schoenberg(kernel, relative_error=error)
    except ParameterError as exc:
        raise ParameterError("task", f"a class whose kernel, as evaluated, is {exc.requirement}", cls.name) from None
    return replace(kernel, checked=True)
