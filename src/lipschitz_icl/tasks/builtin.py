"""The canonical task classes (``u ~ Unif(S^{d-1})``, scalars ``~ U[-L, L]``, all independent).

=================  =============================================  ==============================
name               f(x)                                           Lipschitz constant
=================  =============================================  ==============================
affine             ``l u.x + b``                                  ``|l| <= L``
relu               ``l1 (u.x)_+ + l2 (-u.x)_+ + b``               ``max(|l1|, |l2|) <= L``
cosine             ``(L/k) cos(k u.x + phi)``, ``phi ~ U[0,2pi]``  ``L``
lowrank-linear     ``L a.(B^T x)``, ``a ~ Unif(S^{r-1})``          ``L``
lowrank-affine     ``l a.(B^T x) + b``                            ``|l| <= L``
lowrank-quadratic  ``l (a.(B^T x))^2 + b``                        ``|l| <= L`` on the sphere
lowrank-cosine     ``(L/k) cos(k a.(B^T x) + phi)``               ``L``
=================  =============================================  ==============================

Lipschitz constants are on the sphere, where the covariates live (the quadratic link has ``2|l|`` on
the ball: its gradient is radial where it is largest).
``B`` (``d x r``, orthonormal columns) defaults to the first ``r`` coordinate axes; ``r`` is the
``k`` of the paper's Theorem 4.4 and is called ``rank`` here to keep ``k`` for the cosine frequency.

Exact covariances (``m`` the dimension after projection, ``A = B^T a``, ``C = B^T b`` for the low-rank
classes): linear ``L^2 a.b/m``; affine ``(L^2/3)(a.b/m + 1)``; relu ``(2L^2/3) kappa(a, b) + L^2/3``
with the arc-cosine kernel :func:`relu_kernel`; cosine ``(L^2/(2k^2)) Psi_m(k ||a - b||)`` with the
sphere's characteristic function :func:`sphere_characteristic`; quadratic
``(L^2/3)(|A|^2|C|^2 + 2 (A.C)^2)/(m(m+2)) + L^2/3``.

Zonal kernels of the rotation-invariant classes (``K(t)``, ``t = x.y``; ``r = sqrt(2 - 2t)``), each stated once
as a SymPy form (:meth:`~lipschitz_icl.tasks.family.TaskFamily.kernel_form`) with a numeric ``D(u) = K(1) - K(1 - u)``
checked against it: affine ``(L^2/3)(t/d + 1)``; relu ``(2L^2/3) kappa(t) + L^2/3``,
``kappa(t) = (sin th + (pi - th) t)/(2 pi d)``, ``th = arccos t``; cosine ``(L^2/(2k^2)) Omega_d(k r)``.  The
covariances of the full-rank classes come from these kernels; ``link_covariance`` serves the low-rank classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lipschitz_icl.tasks.family import Features, TaskFamily

__all__ = ["BUILTIN_TASKS", "FREQUENCY_RANGE", "relu_kernel", "sphere_characteristic"]

# cosine frequency k: below 1e-6 the task (L/k) cos(k u.x + phi) is its linear limit to 1e-12 and its
# values (~ L/k) lose their differences to rounding (relative 4e-16/k); above 1e3 the kernel's
# Gegenbauer series outgrows the exact method's budget
FREQUENCY_RANGE = (1e-6, 1e3)
_FREQUENCY = {"frequency": (1.0, *FREQUENCY_RANGE)}


def relu_kernel(a, b) -> np.ndarray:
    """``kappa(a, b) = E_u[(u.a)_+ (u.b)_+] = |a||b| (sin th + (pi - th) cos th) / (2 pi m)``,
    ``u`` uniform on ``S^{m-1}``, ``th`` the angle between ``a`` and ``b`` (arc-cosine kernel of
    degree one, scaled by ``E||g||^2 = m`` from the Gaussian version)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = a.shape[-1]
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    denom = np.where(na * nb > 0, na * nb, 1.0)
    cos = np.clip(np.sum(a * b, axis=-1) / denom, -1.0, 1.0)
    th = np.arccos(cos)
    return na * nb * (np.sin(th) + (np.pi - th) * cos) / (2.0 * np.pi * m)


SERIES_EXPONENT = 600.0  # log of Gamma(m/2) (2/r)^(m/2-1) beyond which the power series replaces the Bessel form


def sphere_characteristic(m: int, r) -> np.ndarray:
    """``Psi_m(r) = E[cos(r u_1)] = Gamma(m/2) (2/r)^(m/2-1) J_{m/2-1}(r) = 0F1(; m/2; -r^2/4)``, ``u`` uniform
    on ``S^{m-1}`` (``cos r`` for ``m = 1``; ``1`` at ``r = 0``).

    Where ``Gamma(m/2) (2/r)^(m/2-1)`` nears the double range (its log above :data:`SERIES_EXPONENT`: large ``m``
    and small ``r``, e.g. every ``r <= 18`` at ``m = 512``) the Bessel form is ``inf * 0``; there the power
    series of ``0F1`` is summed instead (:func:`_hyp0f1_series`; there ``r^2/4 < m/2``, so its terms fall from
    the first and nothing cancels).  Without it the cosine class failed from ``d = 280`` on."""
    r = np.abs(np.asarray(r, dtype=np.float64))
    nu = 0.5 * m - 1.0
    small = r < 1e-8
    rs = np.where(small, 1.0, r)
    from scipy import special

    exponent = special.gammaln(0.5 * m) + nu * np.log(2.0 / rs)
    series = exponent > SERIES_EXPONENT
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        value = np.exp(np.minimum(exponent, SERIES_EXPONENT)) * special.jv(nu, rs)
    if np.any(series):
        value = np.array(value, dtype=np.float64)
        value[series] = _hyp0f1_series(0.5 * m, 0.25 * rs[series] ** 2)
    return np.where(small, 1.0 - r * r / (2.0 * m), value)


def _hyp0f1_series(b: float, x: np.ndarray) -> np.ndarray:
    """``0F1(; b; -x) = sum_j (-x)^j / ((b)_j j!)`` for ``0 <= x < b`` (terms falling from the first: the sum
    to double precision, stopped when every term is below ``1e-18``)."""
    total = np.ones_like(x)
    term = np.ones_like(x)
    for j in range(1, 400):
        term = term * (-x) / ((b + j - 1.0) * j)
        total = total + term
        if not np.any(np.abs(term) > 1e-18):
            break
    return total


# ----------------------------------------------------------------------------- links
class _Link:
    """What a link reads of the task class it is mixed into (fields of :class:`TaskFamily` and its
    subclasses)."""

    L: float
    B: np.ndarray | None
    frequency: float


class _Linear(_Link):
    """``f = L s``: no coefficients; features ``phi = B^T x`` with the direction averaged out exactly."""

    def link(self, s, col):
        return np.multiply(s, self.L, out=s)

    def link_covariance(self, a, b):
        return self.L**2 * np.sum(a * b, axis=-1) / a.shape[-1]

    def features(self, rng, x, q):
        proj_x = x if self.B is None else x @ self.B
        proj_q = q if self.B is None else q @ self.B
        return Features(proj_x, proj_q, self.L**2 / proj_x.shape[-1])


class _Affine(_Link):
    """``f = l s + b``, ``l, b ~ U[-L, L]``."""

    has_intercept = True

    def draw_coefficients(self, rng, size):
        return {"l": rng.uniform(-self.L, self.L, size), "b": rng.uniform(-self.L, self.L, size)}

    def link(self, s, col):
        s *= col["l"]
        s += col["b"]
        return s

    def task_lipschitz(self, params):
        return np.abs(params["l"])

    def link_covariance(self, a, b):
        return (self.L**2 / 3.0) * (np.sum(a * b, axis=-1) / a.shape[-1] + 1.0)

    def scalar_features(self, s_x, s_q):
        return Features(s_x[..., None], s_q[..., None], self.L**2 / 3.0)


class _Quadratic(_Affine):
    """``f = l s^2 + b``."""

    def link(self, s, col):
        value = col["l"] * s
        value *= s
        value += col["b"]
        return value

    def link_covariance(self, a, b):
        m, L2 = a.shape[-1], self.L**2
        dot = np.sum(a * b, axis=-1)
        na, nb = np.sum(a * a, axis=-1), np.sum(b * b, axis=-1)
        return (L2 / 3.0) * (na * nb + 2.0 * dot**2) / (m * (m + 2.0)) + L2 / 3.0

    def scalar_features(self, s_x, s_q):
        return Features(s_x[..., None] ** 2, s_q[..., None] ** 2, self.L**2 / 3.0)


class _Relu(_Link):
    """``f = l1 s_+ + l2 (-s)_+ + b``."""

    has_intercept = True
    has_kink = True

    def draw_coefficients(self, rng, size):
        L = self.L
        return {"l1": rng.uniform(-L, L, size), "l2": rng.uniform(-L, L, size), "b": rng.uniform(-L, L, size)}

    def link(self, s, col):
        return col["l1"] * np.maximum(s, 0.0) + col["l2"] * np.maximum(-s, 0.0) + col["b"]

    def task_lipschitz(self, params):
        return np.maximum(np.abs(params["l1"]), np.abs(params["l2"]))

    def link_covariance(self, a, b):
        L2 = self.L**2
        return (2.0 * L2 / 3.0) * relu_kernel(a, b) + L2 / 3.0

    def scalar_features(self, s_x, s_q):
        phi_x = np.stack([np.maximum(s_x, 0.0), np.maximum(-s_x, 0.0)], axis=-1)
        phi_q = np.stack([np.maximum(s_q, 0.0), np.maximum(-s_q, 0.0)], axis=-1)
        return Features(phi_x, phi_q, self.L**2 / 3.0)


class _Cosine(_Link):
    """``f = (L/k) cos(k s + phi)``, ``phi ~ U[0, 2 pi]``."""

    parameters = _FREQUENCY

    def draw_coefficients(self, rng, size):
        return {"phi": rng.uniform(0.0, 2.0 * np.pi, size)}

    def link(self, s, col):
        k = self.frequency
        s *= k
        s += col["phi"]
        np.cos(s, out=s)
        s *= self.L / k
        return s

    def link_covariance(self, a, b):
        k = self.frequency
        r = np.linalg.norm(a - b, axis=-1)
        return (self.L**2 / (2.0 * k * k)) * sphere_characteristic(a.shape[-1], k * r)

    def scalar_features(self, s_x, s_q):
        k = self.frequency
        phi_x = np.stack([np.cos(k * s_x), np.sin(k * s_x)], axis=-1)
        phi_q = np.stack([np.cos(k * s_q), np.sin(k * s_q)], axis=-1)
        return Features(phi_x, phi_q, self.L**2 / (2.0 * k * k))


# ----------------------------------------------------------------------------- full-rank classes
@dataclass(frozen=True)
class AffineTask(_Affine, TaskFamily):
    name = "affine"
    rotation_invariant = True
    numeric_forms_tested = True  # D and K(1) held to the form by tests/tasks/test_kernel_form.py
    numeric_gap_error = 1e-14  # measured at most 6.3e-15 on the tested grid (a few ulps of max |D|)
    quadrature = "linear"

    def features(self, rng, x, q):
        """The direction averaged out exactly: ``phi(x) = x``, ``v = L^2/(3d)``."""
        return Features(x, q, self.L**2 / (3.0 * x.shape[-1]))

    def reduced_features(self, rng, t, *, kink_width=None):
        """Reduced form with ``u`` and ``v_i`` averaged exactly: ``phi(t) = t``, ``phi(q) = 1``, remainder
        ``1 - t_i^2``, ``v = L^2/(3d)``."""
        t = np.asarray(t, dtype=np.float64)
        return Features(t[..., None], np.ones(t.shape[:-1] + (1,)), self.L**2 / (3.0 * self.d), remainder=1.0 - t * t)

    @classmethod
    def kernel_form(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``(L^2/3)(t/d + 1)``: the ``"linear"`` form of :mod:`lipschitz_icl.tasks.kernel_form`."""
        from lipschitz_icl.tasks.kernel_form import quadrature_kernel

        return quadrature_kernel(cls.quadrature, d, L)

    @classmethod
    def kernel_k1(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``K(1) = (L^2/3)(1/d + 1)``."""
        return L * L / 3.0 * (1.0 / d + 1.0)

    @classmethod
    def kernel_gap(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``D(u) = L^2 u/(3d)``."""
        c = L * L / (3.0 * d)
        return lambda u: c * np.asarray(u, dtype=float)


@dataclass(frozen=True)
class ReluTask(_Relu, TaskFamily):
    name = "relu"
    rotation_invariant = True
    numeric_forms_tested = True  # D and K(1) held to the form by tests/tasks/test_kernel_form.py
    numeric_gap_error = 1e-14  # measured at most 6.3e-15 on the tested grid (a few ulps of max |D|)
    quadrature = "arc-cosine"

    @classmethod
    def kernel_form(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``(2L^2/3) kappa(t) + L^2/3``: the ``"arc-cosine"`` form of :mod:`lipschitz_icl.tasks.kernel_form`."""
        from lipschitz_icl.tasks.kernel_form import quadrature_kernel

        return quadrature_kernel(cls.quadrature, d, L)

    @classmethod
    def kernel_k1(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``K(1) = (2L^2/3) kappa(1) + L^2/3 = (L^2/3)(1/d + 1)`` (``kappa(1) = 1/(2d)``)."""
        return L * L / 3.0 * (1.0 / d + 1.0)

    @classmethod
    def kernel_gap(cls, d, L):  # type: ignore[override]  # the class's own parameters only (TaskFamily.parameters)
        """``D(u)`` with a series below ``theta = 1e-2`` (no cancellation near ``t = 1``): :func:`_relu_gap`."""
        return _relu_gap(d, L)


@dataclass(frozen=True)
class CosineTask(_Cosine, TaskFamily):
    frequency: float = 1.0
    name = "cosine"
    rotation_invariant = True
    numeric_forms_tested = True  # D and K(1) held to the form by tests/tasks/test_kernel_form.py
    numeric_gap_error = 1e-11  # measured at most about 5e-13 (d = 64, Bessel functions of order 31)

    @classmethod
    def kernel_form(cls, d, L, frequency=1.0):  # type: ignore[override]  # the class's own parameters only
        """``(L^2/(2k^2)) Omega_d(k r)``, ``r^2 = 2 - 2t``: ``Omega_d(r) = Gamma(d/2) (2/r)^(d/2-1) J_(d/2-1)(r)``
        written as ``0F1(; d/2; -r^2/4)`` (analytic at ``r = 0``)."""
        import sympy as sp

        t = sp.Symbol("t")
        k = sp.Float(frequency)
        omega = sp.hyper([], [sp.Rational(d, 2)], -(k**2) * (1 - t) / 2)
        return sp.Float(L) ** 2 / (2 * k**2) * omega

    @classmethod
    def kernel_k1(cls, d, L, frequency=1.0):  # type: ignore[override]  # the class's own parameters only
        """``K(1) = L^2/(2k^2)`` (``Omega_d(0) = 1``)."""
        return L * L / (2.0 * frequency * frequency)

    @classmethod
    def kernel_gap(cls, d, L, frequency=1.0):  # type: ignore[override]  # the class's own parameters only
        """``D(u)`` by its power series where ``k sqrt(2u) < 0.5`` (exact in the small-``k`` limit):
        :func:`_cosine_gap`."""
        return _cosine_gap(d, L, frequency)


# ----------------------------------------------------------------------------- low-rank classes
@dataclass(frozen=True)
class LowRankLinearTask(_Linear, TaskFamily):
    B: np.ndarray | None = field(default=None, compare=False)
    name = "lowrank-linear"
    low_rank = True


@dataclass(frozen=True)
class LowRankAffineTask(_Affine, TaskFamily):
    B: np.ndarray | None = field(default=None, compare=False)
    name = "lowrank-affine"
    low_rank = True


@dataclass(frozen=True)
class LowRankQuadraticTask(_Quadratic, TaskFamily):
    B: np.ndarray | None = field(default=None, compare=False)
    name = "lowrank-quadratic"
    low_rank = True


@dataclass(frozen=True)
class LowRankCosineTask(_Cosine, TaskFamily):
    B: np.ndarray | None = field(default=None, compare=False)
    frequency: float = 1.0
    name = "lowrank-cosine"
    low_rank = True


BUILTIN_TASKS = (
    AffineTask,
    ReluTask,
    CosineTask,
    LowRankLinearTask,
    LowRankAffineTask,
    LowRankQuadraticTask,
    LowRankCosineTask,
)


# ----------------------------------------------------------------------------- kernel gaps D(u)
def _relu_gap(d: int, L: float):
    def gap(u):
        theta = 2.0 * np.arcsin(np.sqrt(np.clip(0.5 * u, 0.0, 1.0)))
        th2 = theta * theta
        series = theta * th2 * (1.0 / 3.0 - th2 / 30.0 + th2 * th2 / 840.0)
        odd = np.where(theta < 1e-2, series, np.sin(theta) - theta * np.cos(theta))
        # 2 (kappa(1) - kappa(t)) = [pi u - (sin th - th cos th)] / (pi d)
        return (2.0 * L * L / 3.0) * 0.5 * (np.pi * u - odd) / (np.pi * d)

    return gap


def _cosine_gap(d: int, L: float, k: float):
    """``D(u) = (L^2/(2k^2)) (1 - Omega_d(k sqrt(2u)))``; below ``r = k sqrt(2u) = 0.5`` by the series
    ``(L^2/2) sum_j (-1)^(j+1) Gamma(d/2) (u/2)^j k^(2j-2) / (j! Gamma(j + d/2))`` (no ``1/k^2``: exact in
    the small-``k`` limit ``L^2 u/(2d)``)."""
    scale = L * L / (2.0 * k * k)

    def gap(u):
        u = np.asarray(u, dtype=np.float64)
        r = k * np.sqrt(2.0 * u)
        half_u = 0.5 * u
        series = np.zeros_like(u)
        term = np.full_like(u, -1.0)  # term_j = (-1)^j Gamma(d/2) (u/2)^j k^(2j-2) / (j! Gamma(j+d/2))
        for j in range(1, 12):
            term = -term * half_u * (k * k if j > 1 else 1.0) / (j * (j - 1 + 0.5 * d))
            series = series + term
        with np.errstate(invalid="ignore", over="ignore"):
            far = scale * (1.0 - sphere_characteristic(d, np.where(r < 0.5, 0.5, r)))
        return np.where(r < 0.5, (L * L / 2.0) * series, far)

    return gap
