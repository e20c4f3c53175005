"""A class's kernel from its one statement, the SymPy form (:mod:`lipschitz_icl.tasks.kernel_form`): ``K(1)`` and a
derived ``D`` follow the form, a given numeric ``D`` is held to it, every class kernel passes Schoenberg, and the
class's own code failing is a ParameterError naming the class."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import sympy as sp

from lipschitz_icl.tasks import kernel_form
from lipschitz_icl.tasks.builtin import AffineTask, CosineTask, ReluTask
from lipschitz_icl.tasks.family import QUADRATURE_FORMS
from lipschitz_icl.tasks.registry import TASKS
from lipschitz_icl.tasks.zonal import builtin_kernel
from lipschitz_icl.validation import ParameterError
from tasks.test_registry import CenteredQuadraticTask

t = sp.Symbol("t")


@pytest.mark.parametrize("d", [2, 3, 7, 64])
@pytest.mark.parametrize("L", [0.01, 1.0, 13.0])
@pytest.mark.parametrize("name, frequency", [("affine", 1.0), ("relu", 1.0), ("cosine", 1e-6), ("cosine", 2.5)])
def test_the_built_in_numeric_forms_agree_with_their_sympy_forms(name, frequency, d, L):
    """The check every class kernel passes, over a grid: ``D`` (the classes' own, for accuracy near ``t = 1``)
    within ``1e-10 max |D|`` of the form at 21 points; ``K(1)`` is the form's value."""
    kernel = builtin_kernel(name, d, L, frequency)
    assert kernel.k1 == pytest.approx(float(kernel.sympy.subs(t, 1).evalf(30)), rel=1e-15)
    ts = np.linspace(-1.0, 1.0, 21)
    by_form = np.array([float((kernel.sympy.subs(t, 1) - kernel.sympy.subs(t, x)).evalf(30)) for x in ts])
    assert np.allclose(kernel.gap(1.0 - ts), by_form, rtol=0, atol=1e-10 * np.max(np.abs(by_form)))
    # the error the class states for its Schoenberg check's rounding floor bounds the measured one
    measured = np.max(np.abs(kernel.gap(1.0 - ts) - by_form)) / np.max(np.abs(by_form))
    assert measured <= TASKS[name].numeric_gap_error


@pytest.mark.parametrize("cls, parameters", [(AffineTask, {}), (ReluTask, {}), (CosineTask, {"frequency": 2.5})])
def test_the_built_in_classes_also_pass_the_check_of_a_registered_class(cls, parameters):
    """The project's classes build their kernel without SymPy (``numeric_forms_tested``); the full check a
    registered class passes (``D`` and the quadrature form against the SymPy form, Schoenberg) accepts them
    too, with the same ``K(1)`` and ``D``."""
    assert cls.numeric_forms_tested
    fast = cls.zonal_kernel(5, 1.3, **parameters)
    full = kernel_form.class_kernel(cls, 5, 1.3, parameters)
    assert fast.checked and full.checked and fast.name == full.name
    assert fast.k1 == pytest.approx(full.k1, rel=1e-15)
    u = np.linspace(0.0, 2.0, 33)
    assert np.array_equal(fast.gap(u), full.gap(u))


def test_the_cosine_kernel_at_the_ends_of_its_frequency_range():
    for d in (2, 3, 9):
        for frequency in (1e-6, 1e3):
            kernel = builtin_kernel("cosine", d, 1.0, frequency)
            assert kernel.name == f"cosine(frequency={frequency:g})" and kernel.k1 > 0


def test_a_derived_gap_is_the_form_differenced():
    """The worked example gives no numeric ``D``: the one derived from its form is ``(2L^2/(3d(d+2)))(2u - u^2)``."""
    kernel = CenteredQuadraticTask.zonal_kernel(4, 1.4)
    u = np.linspace(0.0, 2.0, 17)
    assert np.allclose(kernel.gap(u), 2 * 1.4**2 / (3 * 4 * 6) * (2 * u - u * u), rtol=1e-13, atol=1e-300)
    assert kernel.k1 == pytest.approx(1.4**2 / 3 * (3 / 24 - 1 / 16 + 1), rel=1e-15)


def test_the_quadrature_forms_are_the_affine_and_relu_kernels():
    assert AffineTask.kernel_form(3, 1.0) == kernel_form.quadrature_kernel("linear", 3, 1.0)
    assert ReluTask.kernel_form(5, 2.0) == kernel_form.quadrature_kernel("arc-cosine", 5, 2.0)
    assert set(kernel_form.QUADRATURE_KERNELS) == set(QUADRATURE_FORMS)  # every form the quadrature implements


def test_the_sympy_form_of_the_cosine_kernel_is_the_sphere_characteristic():
    """``0F1(; d/2; -r^2/4) = Omega_d(r)``: the form and the numeric ``D`` agree at d = 2, 3, 5 (checked on building)
    and the form at ``t = -1`` is ``Omega_d(2k)`` (``J_0(2k)`` for ``d = 2``)."""
    from scipy import special

    form = CosineTask.kernel_form(2, 1.0, frequency=1.5)
    assert float(form.subs(t, -1).evalf(30)) == pytest.approx(special.j0(3.0) / (2 * 1.5**2), rel=1e-14)


@dataclass(frozen=True)
class _HalfForm(CenteredQuadraticTask):
    """A numeric ``D`` right for the sampler, a SymPy form half of it (the issue's 2x: ``scaling`` would read the
    form and call the theory wrong)."""

    @classmethod
    def kernel_form(cls, d, L):
        return CenteredQuadraticTask.kernel_form.__func__(cls, d, L) / 2

    @classmethod
    def kernel_gap(cls, d, L):
        c = 2.0 * L * L / (3.0 * d * (d + 2.0))
        return lambda u: c * (2.0 * np.asarray(u) - np.asarray(u) ** 2)


def test_a_form_that_disagrees_with_the_numeric_gap_is_refused_naming_a_point():
    with pytest.raises(
        ParameterError, match=r"kernel_gap D\(u\) = K\(1\) - K\(1 - u\) agrees with its kernel_form \(at t"
    ):
        _HalfForm.zonal_kernel(3, 1.0)


def test_an_exception_of_a_class_is_a_parameter_error_on_task():
    def gap(u):
        raise ArithmeticError("no")

    guarded = kernel_form._guarded(gap, "some-class", "kernel_gap")
    with pytest.raises(ParameterError, match=r"kernel_gap can be evaluated \(ArithmeticError: no\)") as info:
        guarded(np.zeros(3))
    assert info.value.name == "task" and info.value.value == "some-class"

    def memory(u):
        raise MemoryError

    with pytest.raises(MemoryError):  # the CLI's own one line: out of memory
        kernel_form._guarded(memory, "some-class", "kernel_gap")(0.0)


def test_check_points_are_fixed_by_the_text():
    a, b = kernel_form.check_points("relu"), kernel_form.check_points("relu")
    assert np.array_equal(a, b) and a.size == kernel_form.CHECK_POINTS and a[0] == 1.0
    assert np.all(np.abs(a) <= 1.0)


def test_a_kernel_faster_than_the_rule_is_checked_on_a_finer_rule():
    """At frequency ``1e3`` (``d = 2``) the rule of degree 64 gives ``a_0 = -1.3e-10``; the kernel is a covariance,
    ``a_0 = (L^2/(2k^2)) J_0(k)^2 > 0``, which the settled rule finds."""
    from scipy import special

    from lipschitz_icl.tasks.kernel import check_schoenberg, gegenbauer_coefficients

    kernel = builtin_kernel("cosine", 2, 1.0, 1e3)
    assert gegenbauer_coefficients(kernel, 64)[0] < 0
    assert check_schoenberg(kernel)[0] == pytest.approx(special.j0(1e3) ** 2 / 2e6, rel=1e-6)


@pytest.mark.parametrize("d", [64, 200])
def test_the_rounding_of_a_numeric_gap_is_no_negative_coefficient(d):
    """The cosine class's numeric ``D`` is accurate to about ``5e-13`` at ``d = 64`` (Bessel functions of order 31);
    its ``a_l``, amplified by ``sqrt N(d, l)``, carry that rounding: the floor of the check comes from the measured
    error, so the kernel is used (as it was before the check), while a kernel with a negative ``a_0`` is refused."""
    assert builtin_kernel("cosine", d, 1.0, 1.0).k1 == 0.5

    @dataclass(frozen=True)
    class Shifted(CenteredQuadraticTask):
        @classmethod
        def kernel_form(cls, d, L):
            return t**2 - sp.Rational(3, 2) / d  # E[t^2] = 1/d: a_0 = -1/(2d) < 0

    with pytest.raises(ParameterError, match="first negative coefficient a_0 = -"):
        Shifted.zonal_kernel(d, 1.0)


def test_a_kernel_built_by_hand_is_checked_before_use():
    """A ZonalKernel made directly (not by the checked constructors) is checked when a problem is made of it."""
    from lipschitz_icl.problem import zonal_problem
    from lipschitz_icl.tasks.kernel import ZonalKernel

    def gap(u):
        return -np.asarray(u, dtype=float)  # K(t) = t - 1 + K(1): a negative linear coefficient

    with pytest.raises(ParameterError, match="first negative coefficient a_1"):
        zonal_problem(ZonalKernel("by-hand", 3, 1.0, gap), 100, 0.5)
    with pytest.raises(ParameterError, match=r"K\(1\) > 0"):
        zonal_problem(ZonalKernel("negative", 3, -1.0, gap), 100, 0.5)
    assert builtin_kernel("relu", 3, 1.0).checked and zonal_problem(builtin_kernel("relu", 3, 1.0), 100, 0.5).n == 100
