"""Zonal (rotation-invariant) task priors, given by their covariance kernel ``K(t)``, ``t = x.y``.

A rotation-invariant task prior on ``S^(d-1)`` has ``E_f[f(x) f(y)] = K(x.y)`` and a constant mean;
the constant cancels in ``sum_i p_i f(x_i) - f(q)`` (softmax weights sum to one), so ``K`` fixes the
ICL loss of softmax attention.  The loss is written with ``D(t) = K(1) - K(t)`` (no cancellation near
``t = 1``), which every kernel here evaluates as a function of ``u = 1 - t = 2 sin^2(theta/2)``.

Built-in kernels (``r = sqrt(2 - 2t) = |x - y|``, ``m`` the dimension of the sphere's ambient space):

==============  ==============================================================================
affine          ``(L^2/3)(t/d + 1)``
relu            ``(2L^2/3) kappa(t) + L^2/3``, ``kappa(t) = (sin th + (pi - th) t)/(2 pi d)``, ``th = arccos t``
cosine (k)      ``(L^2/(2k^2)) Omega_d(k r)``, ``Omega_d`` the sphere's characteristic function
mix:a=1,b=2     the weighted mean ``sum_c w_c K_c / sum_c w_c`` of the classes' kernels
expression      a user expression in ``t`` (and ``d``, named constants), read by the project's safe
                parser (:func:`lipschitz_icl.expression.parse_expression`)
callable        a Python function ``K(t)`` (vectorised over a NumPy array)
==============  ==============================================================================

Schoenberg: ``K`` is a covariance on ``S^(d-1)`` iff ``K(t) = sum_l a_l P_l(t)`` with every
``a_l >= 0``, ``P_l`` the Gegenbauer polynomials of dimension ``d`` normalised by ``P_l(1) = 1``
(Legendre for ``d = 3``, Chebyshev for ``d = 2``).  ``a_l = N(d, l) E_t[K(t) P_l(t)]``, ``t ~ p_d``,
``N(d, l)`` the dimension of the degree-``l`` spherical harmonics; computed by composite
Gauss-Legendre quadrature in the polar angle (the built-in and distance-based kernels are analytic in
``theta``), resolving every ``P_l`` used.  The check (degrees ``0 .. 64``) refuses a
coefficient below ``-max(SCHOENBERG_TOL K(1), r_l)``, ``SCHOENBERG_TOL = 1e-10`` and ``r_l`` the
quadrature's rounding level (:func:`rounding_floor`, at most ``3e-11 K(1)`` for ``d <= 6``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np
import sympy as sp
from scipy import special

from . import quadrature
from .expression import ExpressionError, parse_expression
from .tasks import sphere_characteristic
from .validation import ParameterError, check_int, check_real

__all__ = ["ZonalKernel", "BUILTIN_KERNELS", "SCHOENBERG_TOL", "builtin_kernel", "mixture_kernel",
           "expression_kernel", "callable_kernel", "parse_task", "gegenbauer_table", "harmonic_dimension",
           "gegenbauer_coefficients", "check_schoenberg", "rounding_floor"]

BUILTIN_KERNELS = ("affine", "relu", "cosine")
SCHOENBERG_TOL = 1e-10         # a_l < -SCHOENBERG_TOL K(1) refutes a kernel
SCHOENBERG_DEGREE = 64         # degrees checked by the Schoenberg test


@dataclass(frozen=True)
class ZonalKernel:
    """A covariance ``K(t)`` on ``S^(d-1)``: ``gap(u) = K(1) - K(1 - u)`` (vectorised, ``u`` in
    ``[0, 2]``), ``k1 = K(1)``, a ``name`` and, where known, the ``sympy`` form of ``K`` in ``t``."""

    name: str
    d: int
    k1: float
    gap: Callable = field(compare=False)
    sympy: object = field(default=None, compare=False)
    parts: tuple = field(default=(), compare=False)   # mixtures: ((name, weight, L, frequency), ...)

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


# ----------------------------------------------------------------------------- Gegenbauer
def harmonic_dimension(d: int, l) -> np.ndarray:
    """``N(d, l) = (2l + d - 2) Gamma(l + d - 2) / (Gamma(d - 1) l!)`` (``1`` at ``l = 0``; ``2`` for
    ``d = 2``, ``l >= 1``)."""
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
            k = l + j                      # prev = P_k, cur = P_(k+1)
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
    panels = int(math.ceil(degree / 6.0 + 8))
    theta, g = quadrature.composite_rule(0.0, np.pi, 24, panels=panels)
    return theta, g * np.exp((d - 2) * np.log(np.sin(theta)) - special.betaln(0.5, 0.5 * (d - 1)))


def gegenbauer_coefficients(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """``a_l = N(d, l) E_t[K(t) P_l(t)]`` for ``l = 0 .. degree`` (``a_0`` from ``K``, the others from
    ``-D(theta)``: ``E[P_l] = 0`` for ``l >= 1``, so the constant ``K(1)`` drops out and ``D`` is evaluated
    without cancellation)."""
    degree = check_int("degree", degree, minimum=0)
    return _coefficients(kernel, degree)


def _coefficients(kernel: ZonalKernel, degree: int) -> np.ndarray:
    d = kernel.d
    theta, weight = _theta_rule(d, max(degree, 16))
    gap = kernel.gap_theta(theta)
    if not np.all(np.isfinite(gap)):
        raise ParameterError("kernel", "finite on [-1, 1]", kernel.name)
    wg = weight * gap
    out = np.empty(degree + 1)
    for l0, P in gegenbauer_blocks(d, np.cos(theta), degree):
        out[l0:l0 + P.shape[0]] = -(P @ wg)
    out[0] = kernel.k1 + out[0]        # E[K] = K(1) - E[D]
    return out * harmonic_dimension(d, np.arange(degree + 1))


def rounding_floor(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """The rounding level of the computed ``a_l``, ``4e-16 K(1) (l + 1) sqrt(N(d, l))`` for ``l = 0 ..
    degree`` (measured on the affine kernel, whose ``a_l``, ``l >= 2``, vanish:
    ``|a_l| <= 5e-17 K(1) (l + 1) sqrt(N(d, l))`` up to ``l = 4096``, ``d = 2, 3``)."""
    l = np.arange(degree + 1)
    return 4e-16 * kernel.k1 * (l + 1) * np.sqrt(harmonic_dimension(kernel.d, l))


def check_schoenberg(kernel: ZonalKernel, degree: int = SCHOENBERG_DEGREE, tol: float = SCHOENBERG_TOL) -> np.ndarray:
    """The coefficients ``a_0 .. a_degree``; :class:`ParameterError` naming the first ``l`` with
    ``a_l < -max(tol K(1), r_l)``, ``r_l`` the quadrature's :func:`rounding_floor` (``K`` is then not a
    covariance on ``S^(d-1)``), or if ``K(1) <= 0``."""
    if not kernel.k1 > 0:
        raise ParameterError("kernel", "a covariance with K(1) > 0", kernel.name)
    a = _coefficients(kernel, degree)
    bad = np.flatnonzero(a < -np.maximum(tol * kernel.k1, rounding_floor(kernel, degree)))
    if bad.size:
        l = int(bad[0])
        raise ParameterError("kernel", f"a valid covariance on S^{kernel.d - 1} (Schoenberg: every Gegenbauer "
                             f"coefficient a_l >= -{tol:g} K(1)); first negative coefficient a_{l} = {a[l]:.3g}",
                             kernel.name)
    return a


# ----------------------------------------------------------------------------- built-in kernels
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
    scale = L * L / (2.0 * k * k)

    def gap(u):
        r = k * np.sqrt(2.0 * np.asarray(u, dtype=np.float64))
        # 1 - Omega_d(r) = sum_j (-1)^(j+1) Gamma(d/2) (r/2)^(2j) / (j! Gamma(j + d/2)) below r = 0.5
        x = 0.25 * r * r
        series = np.zeros_like(x)
        term = np.ones_like(x)
        for j in range(1, 12):
            term = -term * x / (j * (j - 1 + 0.5 * d))
            series = series - term
        return scale * np.where(r < 0.5, series, 1.0 - sphere_characteristic(d, r))
    return gap


def builtin_kernel(name: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """The kernel of the built-in class ``name`` (table in the module docstring); one object per
    argument tuple (its Gegenbauer coefficients are cached on it)."""
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    frequency = check_real("frequency", frequency, minimum=0.0, strict_minimum=True, maximum=1e3)
    return _builtin_kernel(name, d, L, frequency)


@lru_cache(maxsize=256)
def _builtin_kernel(name: str, d: int, L: float, frequency: float) -> ZonalKernel:
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    t = sp.Symbol("t")
    if name == "affine":
        c = L * L / (3.0 * d)
        return ZonalKernel("affine", d, L * L / 3.0 * (1.0 / d + 1.0), lambda u: c * np.asarray(u, dtype=float),
                           sp.Rational(1, 3) * sp.Float(L) ** 2 * (t / d + 1))
    if name == "relu":
        th = sp.acos(t)
        kappa = (sp.sqrt(1 - t**2) + (sp.pi - th) * t) / (2 * sp.pi * d)
        return ZonalKernel("relu", d, L * L / 3.0 * (1.0 / d + 1.0), _relu_gap(d, L),
                           sp.Float(L) ** 2 * (sp.Rational(2, 3) * kappa + sp.Rational(1, 3)))
    if name == "cosine":
        k = frequency
        # Omega_d(r) = Gamma(d/2) (2/r)^(d/2-1) J_(d/2-1)(r) = 0F1(; d/2; -r^2/4), r^2 = 2 k^2 (1 - t)
        omega = sp.hyper([], [sp.Rational(d, 2)], -sp.Float(k) ** 2 * (1 - t) / 2)
        return ZonalKernel(f"cosine(k={k:g})", d, L * L / (2.0 * k * k), _cosine_gap(d, L, k),
                           sp.Float(L) ** 2 / (2 * sp.Float(k) ** 2) * omega)
    raise ParameterError("task", "one of " + ", ".join(BUILTIN_KERNELS) + " or mix:NAME=WEIGHT,...", name)


def mixture_kernel(parts, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """``sum_c w_c K_c / sum_c w_c`` for ``parts = [(name, weight), ...]`` (weights ``>= 0``, sum ``> 0``)."""
    kernels, weights = [], []
    for name, weight in parts:
        weights.append(check_real(f"weight of {name}", weight, minimum=0.0))
        kernels.append(builtin_kernel(name, d, L, frequency))
    total = sum(weights)
    if not total > 0:
        raise ParameterError("task", "a mixture with a positive total weight", parts)
    ws = [w / total for w in weights]

    def gap(u):
        return sum(w * k.gap(u) for w, k in zip(ws, kernels))

    label = "mix:" + ",".join(f"{k.name}={w:g}" for k, w in zip(kernels, weights))
    expr = sum(sp.Float(w) * k.sympy for w, k in zip(ws, kernels))
    parts = tuple((name, w, L, frequency) for (name, _), w in zip(parts, ws))
    return ZonalKernel(label, d, sum(w * k.k1 for w, k in zip(ws, kernels)), gap, expr, parts)


def parse_task(task: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """``affine``, ``relu``, ``cosine`` or ``mix:NAME=WEIGHT,...`` as a :class:`ZonalKernel`."""
    if not isinstance(task, str):
        raise ParameterError("task", "a task name", task)
    if not task.startswith("mix:"):
        return builtin_kernel(task, d, L, frequency)
    parts = []
    for item in task[4:].split(","):
        name, sep, weight = item.partition("=")
        try:
            value = float(weight) if sep else float("nan")
        except ValueError:
            value = float("nan")
        if name.strip() not in BUILTIN_KERNELS or not math.isfinite(value):
            raise ParameterError("task", "mix:NAME=WEIGHT,... with NAME in " + ", ".join(BUILTIN_KERNELS)
                                 + " and finite weights", task)
        parts.append((name.strip(), value))
    return mixture_kernel(parts, d, L, frequency)


# ----------------------------------------------------------------------------- user kernels
def expression_kernel(text: str, d: int, constants: dict | None = None, *, check: bool = True) -> ZonalKernel:
    """A kernel from the expression ``text`` in ``t`` (and ``d``, ``pi`` and the names of ``constants``),
    read by the project's safe parser; ``D(u) = K(1) - K(1 - u)`` is built symbolically and evaluated
    with NumPy (:func:`sympy.lambdify` on the parsed tree's SymPy form, never on the text)."""
    d = check_int("d", d, minimum=2)
    constants = dict(constants or {})
    for name, value in constants.items():
        if name in ("t", "d", "u"):
            raise ParameterError("constants", "names other than t, d, u", name)
        constants[name] = check_real(f"constant {name}", value)
    try:
        parsed = parse_expression(text, {"t", "d", *constants})
    except ExpressionError as exc:
        raise ParameterError("kernel", f"an expression in t, d and named constants ({exc})", text) from None
    subs = {sp.Symbol(n, positive=True): sp.Float(v) for n, v in constants.items()}
    subs[sp.Symbol("d", positive=True)] = sp.Integer(d)
    t_pos = sp.Symbol("t", positive=True)
    t, u = sp.Symbol("t"), sp.Symbol("u", positive=True)
    k_t = parsed.sympy.subs(subs).subs(t_pos, t)
    k_one = k_t.subs(t, 1)
    try:
        k1 = float(sp.N(k_one, 30))
    except TypeError:
        raise ParameterError("kernel", "finite at t = 1", text) from None
    gap_expr = sp.simplify(k_one - k_t.subs(t, 1 - u))
    fn = sp.lambdify(u, gap_expr, modules="numpy")

    def gap(values):
        values = np.asarray(values, dtype=np.float64)
        with np.errstate(all="ignore"):
            out = np.broadcast_to(np.asarray(fn(values), dtype=np.float64), values.shape)
        return np.array(out, dtype=np.float64)

    # the name keys the on-disk cache (lipschitz_icl.cache.problem_key): it carries the constants too
    name = text + ("" if not constants else " with " + ", ".join(f"{k}={v!r}" for k, v in sorted(constants.items())))
    kernel = ZonalKernel(name, d, k1, gap, k_t)
    if not math.isfinite(k1):
        raise ParameterError("kernel", "finite at t = 1", text)
    if check:
        check_schoenberg(kernel)
    return kernel


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
    return kernel
