"""A zonal covariance ``K(t)`` on ``S^(d-1)``, ``t = x.y``, and its Gegenbauer (Schoenberg) expansion.

:class:`ZonalKernel` holds ``K`` through ``D(u) = K(1) - K(1 - u)`` (no cancellation near ``t = 1``),
``u = 1 - t = 2 sin^2(theta/2)``, with ``K(1)``, a name and, where known, the SymPy form of ``K`` in ``t``.
The task classes (:mod:`lipschitz_icl.tasks.family`) build their kernels with it; user kernels and
mixtures are in :mod:`lipschitz_icl.tasks.zonal`.

Schoenberg: ``K`` is a covariance on ``S^(d-1)`` iff ``K(t) = sum_l a_l P_l(t)`` with every
``a_l >= 0``, ``P_l`` the Gegenbauer polynomials of dimension ``d`` normalised by ``P_l(1) = 1``
(Legendre for ``d = 3``, Chebyshev for ``d = 2``).  ``a_l = N(d, l) E_t[K(t) P_l(t)]``, ``t ~ p_d``,
``N(d, l)`` the dimension of the degree-``l`` spherical harmonics; computed by composite
Gauss-Legendre quadrature in the polar angle (the built-in and distance-based kernels are analytic in
``theta``), resolving every ``P_l`` used.  ``a_l``, ``l >= 1``, come from ``D = K(1) - K`` alone, so
their scale is ``max |D|`` (:attr:`ZonalKernel.gap_scale`), not ``K(1)``.  The check (degrees
``0 .. 64``) refuses a coefficient below ``-max(SCHOENBERG_TOL s_l, r_l)``, ``s_0 = K(1)``,
``s_l = max |D|``, ``SCHOENBERG_TOL = 1e-10`` and ``r_l`` the quadrature's rounding level
(:func:`rounding_floor`, at most ``3.3e-11 max |D|`` for ``d <= 6``).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from lipschitz_icl import quadrature
from lipschitz_icl.validation import ParameterError, check_int

__all__ = [
    "ZonalKernel",
    "kernel_label",
    "SCHOENBERG_TOL",
    "SCHOENBERG_DEGREE",
    "gegenbauer_table",
    "gegenbauer_blocks",
    "harmonic_dimension",
    "gegenbauer_coefficients",
    "gap_coefficients",
    "check_schoenberg",
    "settled_coefficients",
    "rounding_floor",
    "MAX_RULE_DEGREE",
]

SCHOENBERG_TOL = 1e-10  # a_l < -SCHOENBERG_TOL K(1) refutes a kernel
SCHOENBERG_DEGREE = 64  # degrees checked by the Schoenberg test
MAX_RULE_DEGREE = 2**14  # the finest theta rule of the Schoenberg test (settled_coefficients)


@dataclass(frozen=True)
class ZonalKernel:
    """A covariance ``K(t)`` on ``S^(d-1)``: ``gap(u) = K(1) - K(1 - u)`` (vectorised, ``u`` in
    ``[0, 2]``), ``k1 = K(1)``, a ``name`` and, where known, the SymPy form of ``K`` in ``t``
    (:attr:`sympy`; ``sympy_form`` is the form or a function of no arguments that builds it on first read,
    so that a kernel used numerically never imports SymPy)."""

    name: str
    d: int
    k1: float
    gap: Callable = field(compare=False)
    sympy_form: object = field(default=None, compare=False)
    parts: tuple = field(default=(), compare=False)  # mixtures: ((name, weight, L, frequency), ...)
    checked: bool = field(default=False, compare=False, repr=False)  # K(1) > 0 and Schoenberg passed when built

    @cached_property
    def sympy(self):
        """The SymPy form of ``K`` in ``t`` (``None`` where unknown)."""
        if isinstance(self.sympy_form, types.FunctionType):
            return self.sympy_form()
        return self.sympy_form

    def __call__(self, t) -> np.ndarray:
        """``K(t)``."""
        return self.k1 - self.gap(1.0 - np.asarray(t, dtype=np.float64))

    def gap_theta(self, theta) -> np.ndarray:
        """``D(theta) = K(1) - K(cos theta)`` with ``1 - t = 2 sin^2(theta/2)`` (no cancellation)."""
        theta = np.asarray(theta, dtype=np.float64)
        return self.gap(2.0 * np.sin(0.5 * theta) ** 2)

    def coefficients(self, degree: int) -> np.ndarray:
        """Gegenbauer coefficients ``a_0 .. a_degree`` (see :func:`gegenbauer_coefficients`)."""
        return gegenbauer_coefficients(self, degree)

    @cached_property
    def gap_scale(self) -> float:
        """``max |D|`` over the nodes of the coefficients' ``theta`` rule: the scale of the kernel's
        variation, which sets the rounding of its coefficients ``a_l``, ``l >= 1``."""
        theta, _ = _theta_rule(self.d, SCHOENBERG_DEGREE)
        with np.errstate(all="ignore"):
            scale = float(np.max(np.abs(self.gap_theta(theta))))
        if not math.isfinite(scale):
            raise ParameterError("kernel", "finite on [-1, 1]", self.name)
        return scale


def kernel_label(name: str, parameters: dict) -> str:
    """The name of a class kernel: the class's ``name`` with its parameters, e.g. ``cosine(frequency=1)``."""
    return name + ("(" + ",".join(f"{k}={v:g}" for k, v in parameters.items()) + ")" if parameters else "")


# ----------------------------------------------------------------------------- Gegenbauer
def harmonic_dimension(d: int, l) -> np.ndarray:
    """``N(d, l) = (2l + d - 2) Gamma(l + d - 2) / (Gamma(d - 1) l!)`` (``1`` at ``l = 0``; ``2`` for
    ``d = 2``, ``l >= 1``)."""
    from scipy import special

    l = np.asarray(l, dtype=np.float64)
    if d == 2:
        return np.where(l == 0, 1.0, 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_n = np.log(2 * l + d - 2) + special.gammaln(l + d - 2) - special.gammaln(d - 1) - special.gammaln(l + 1)
    return np.where(l == 0, 1.0, np.exp(log_n))


def gegenbauer_blocks(d: int, t: np.ndarray, degree: int, block: int = 256):
    """Yield ``(l0, P)`` with ``P[j] = P_(l0 + j)(t)`` (shape ``(size, len(t))``) for ``l0 = 0, block, ...``
    up to ``degree``: normalised Gegenbauer polynomials by the three-term recurrence
    ``(l + 2 lam) P_(l+1) = 2 (l + lam) t P_l - l P_(l-1)``, ``lam = (d - 2)/2``, ``P_0 = 1``, ``P_1 = t``
    (stable on ``[-1, 1]``)."""
    lam = 0.5 * (d - 2)
    t = np.asarray(t, dtype=np.float64)
    prev, cur = np.ones_like(t), t.copy()
    l = 0
    while l <= degree:
        size = min(block, degree - l + 1)
        out = np.empty((size, t.size))
        for j in range(size):
            out[j] = prev
            k = l + j  # prev = P_k, cur = P_(k+1)
            nxt = (2.0 * (k + 1 + lam) / (k + 1 + 2.0 * lam)) * t * cur - ((k + 1) / (k + 1 + 2.0 * lam)) * prev
            prev, cur = cur, nxt
        yield l, out
        l += size


def gegenbauer_table(d: int, t, degree: int) -> np.ndarray:
    """``P_l(t)`` for ``l = 0 .. degree``, shape ``(len(t), degree + 1)``."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    return np.concatenate([P for _, P in gegenbauer_blocks(d, t, degree)], axis=0).T


@lru_cache(maxsize=64)
def _theta_rule(d: int, degree: int):
    """Composite Gauss-Legendre rule in ``theta`` on ``[0, pi]`` for ``E_t[g(t)]``, ``t = cos theta``,
    with about ``8`` nodes per period of ``P_degree`` (``ceil(degree/6 + 8)`` equal panels of ``24`` nodes);
    weights include the density ``sin^(d-2) theta / B(1/2, (d-1)/2)``."""
    from scipy import special

    panels = int(math.ceil(degree / 6.0 + 8))
    theta, g = quadrature.composite_rule(0.0, np.pi, 24, panels=panels)
    return theta, g * np.exp((d - 2) * np.log(np.sin(theta)) - special.betaln(0.5, 0.5 * (d - 1)))


def gegenbauer_coefficients(kernel: ZonalKernel, degree: int, *, rule_degree: int = 0) -> np.ndarray:
    """``a_l = N(d, l) E_t[K(t) P_l(t)]`` for ``l = 0 .. degree`` (``a_0 = K(1) - E[D]``, the others from
    ``-D(theta)``: ``E[P_l] = 0`` for ``l >= 1``, so the constant ``K(1)`` drops out and ``D`` is evaluated
    without cancellation); ``rule_degree`` as in :func:`gap_coefficients`."""
    a = gap_coefficients(kernel, degree, rule_degree=rule_degree)
    a[0] = kernel.k1 - a[0]
    return a


def gap_coefficients(kernel: ZonalKernel, degree: int, *, rule_degree: int = 0) -> np.ndarray:
    """``E_t[D(t)]`` followed by ``a_1 .. a_degree`` (``a_l = -N(d, l) E_t[D(t) P_l(t)]``): the
    coefficients computed from ``D`` alone, so their rounding is relative to :attr:`ZonalKernel.gap_scale`
    whatever ``K(1)`` (``K(1) - sum_(l <= m) a_l = E[D] - sum_(1 <= l <= m) a_l`` without cancellation).  The
    ``theta`` rule resolves ``P_l`` up to ``max(degree, rule_degree, 16)`` (a kernel that oscillates faster
    than ``P_degree`` needs a larger ``rule_degree``)."""
    degree = check_int("degree", degree, minimum=0)
    d = kernel.d
    theta, weight = _theta_rule(d, max(degree, rule_degree, 16))
    gap = kernel.gap_theta(theta)
    if not np.all(np.isfinite(gap)):
        raise ParameterError("kernel", "finite on [-1, 1]", kernel.name)
    wg = weight * gap
    out = np.empty(degree + 1)
    for l0, P in gegenbauer_blocks(d, np.cos(theta), degree):
        out[l0 : l0 + P.shape[0]] = -(P @ wg)
    out *= harmonic_dimension(d, np.arange(degree + 1))
    out[0] = -out[0]  # E[D]
    return out


def rounding_floor(kernel: ZonalKernel, degree: int, relative_error: float = 1e-16) -> np.ndarray:
    """The rounding level of the computed ``a_l``, ``4 e s (l + 1) sqrt(N(d, l))`` for ``l = 0 .. degree``, ``e``
    the ``relative_error`` of the numeric ``D`` (``1e-16``: ``D`` as accurate as doubles allow), ``s`` the
    kernel's :attr:`~ZonalKernel.gap_scale` ``max |D|`` (``a_l``, ``l >= 1``, are sums of ``D`` against ``P_l``;
    ``K(1)`` for ``a_0``).  Measured on the affine kernel, whose ``a_l``, ``l >= 2``, vanish:
    ``|a_l| <= 4e-17 s (l + 1) sqrt(N(d, l))`` up to ``l = 4096``, ``d = 2, 3`` (``l = 1024``, ``d = 6``); on the
    cosine class's numeric ``D`` (``e`` its measured error against the SymPy form, ``4.6e-13`` at ``d = 64``),
    ``|a_l| <= 1e-15 s (l + 1) sqrt(N(d, l))`` for ``d <= 200``."""
    l = np.arange(degree + 1)
    scale = np.where(l == 0, max(kernel.k1, kernel.gap_scale), kernel.gap_scale)
    return 4.0 * max(relative_error, 1e-16) * scale * (l + 1) * np.sqrt(harmonic_dimension(kernel.d, l))


def check_schoenberg(
    kernel: ZonalKernel, degree: int = SCHOENBERG_DEGREE, tol: float = SCHOENBERG_TOL, relative_error: float = 1e-16
) -> np.ndarray:
    """The coefficients ``a_0 .. a_degree``; :class:`ParameterError` naming the first ``l`` with
    ``a_l < -max(tol s_l, r_l)`` (``s_0 = K(1)``, ``s_l = max |D|`` for ``l >= 1``: a near-constant
    kernel is held to the scale of its variation; ``r_l`` the quadrature's :func:`rounding_floor` for a
    numeric ``D`` of ``relative_error``; ``K`` is then not a covariance on ``S^(d-1)``), or if ``K(1) <= 0``.
    The coefficients are those of a ``theta`` rule fine enough for the kernel (:func:`settled_coefficients`)."""
    if not kernel.k1 > 0:
        raise ParameterError("kernel", "a covariance with K(1) > 0", kernel.name)
    scale = np.full(degree + 1, kernel.gap_scale)
    scale[0] = kernel.k1
    threshold = np.maximum(tol * scale, rounding_floor(kernel, degree, relative_error))
    a = settled_coefficients(kernel, degree, threshold)
    bad = np.flatnonzero(a < -threshold)
    if bad.size:
        l = int(bad[0])
        raise ParameterError(
            "kernel",
            f"a valid covariance on S^{kernel.d - 1} (Schoenberg: every Gegenbauer "
            f"coefficient a_l >= -{tol:g} max|K(1) - K(t)|); first negative coefficient "
            f"a_{l} = {a[l]:.3g}",
            kernel.name,
        )
    return a


def settled_coefficients(kernel: ZonalKernel, degree: int, threshold: np.ndarray) -> np.ndarray:
    """``a_0 .. a_degree`` on a ``theta`` rule fine enough for the kernel: the rule of ``degree``, or of twice, four
    times ... that degree, the first whose coefficients each change on the next finer rule by at most their
    ``threshold`` or a hundredth of themselves (their signs settled: a smooth kernel keeps the rule of ``degree``,
    a kernel with a kink, whose coefficients converge algebraically, settles soon after; the cosine class at
    frequency ``1e3``, which oscillates faster than ``P_64``, needs a rule of degree about ``1000``).  A kernel that
    has not settled by a rule of :data:`MAX_RULE_DEGREE` is refused (a :class:`ParameterError` on ``kernel``)."""
    rule = max(degree, 16)
    a = gegenbauer_coefficients(kernel, degree, rule_degree=rule)
    while rule < MAX_RULE_DEGREE:
        rule *= 2
        finer = gegenbauer_coefficients(kernel, degree, rule_degree=rule)
        if np.all(np.abs(finer - a) <= np.maximum(threshold, 0.01 * np.abs(finer))):
            return a
        a = finer
    raise ParameterError(
        "kernel",
        f"a kernel smooth enough for the Schoenberg check (its Gegenbauer coefficients do not settle on a theta "
        f"rule of degree {MAX_RULE_DEGREE})",
        kernel.name,
    )
