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
                parser (:func:`lipschitz_icl.expression.parse_expression`); its SymPy form (``t`` free
                of assumptions) is held to the parser's own values at 24 points of ``[-1, 1]``, and
                every SymPy step runs under a budget (:mod:`lipschitz_icl.symbolic`)
callable        a Python function ``K(t)`` (vectorised over a NumPy array)
==============  ==============================================================================

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
import re
import zlib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable

import mpmath
import numpy as np
import sympy as sp
from scipy import special

from . import quadrature
from . import symbolic
from .expression import BUILTIN_CONSTANTS, FUNCTIONS, MAX_CONSTANT, ExpressionError, parse_expression
from .tasks import FREQUENCY_RANGE, sphere_characteristic
from .validation import ParameterError, check_int, check_real, parse_real

__all__ = ["ZonalKernel", "BUILTIN_KERNELS", "SCHOENBERG_TOL", "builtin_kernel", "mixture_kernel",
           "expression_kernel", "callable_kernel", "parse_task", "parse_mixture", "gegenbauer_table",
           "harmonic_dimension", "gegenbauer_coefficients", "gap_coefficients", "check_schoenberg", "rounding_floor",
           "kernel_constants", "RESERVED_NAMES"]

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
    """``a_l = N(d, l) E_t[K(t) P_l(t)]`` for ``l = 0 .. degree`` (``a_0 = K(1) - E[D]``, the others from
    ``-D(theta)``: ``E[P_l] = 0`` for ``l >= 1``, so the constant ``K(1)`` drops out and ``D`` is evaluated
    without cancellation)."""
    a = gap_coefficients(kernel, degree)
    a[0] = kernel.k1 - a[0]
    return a


def gap_coefficients(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """``E_t[D(t)]`` followed by ``a_1 .. a_degree`` (``a_l = -N(d, l) E_t[D(t) P_l(t)]``): the
    coefficients computed from ``D`` alone, so their rounding is relative to :attr:`ZonalKernel.gap_scale`
    whatever ``K(1)`` (``K(1) - sum_(l <= m) a_l = E[D] - sum_(1 <= l <= m) a_l`` without cancellation)."""
    degree = check_int("degree", degree, minimum=0)
    d = kernel.d
    theta, weight = _theta_rule(d, max(degree, 16))
    gap = kernel.gap_theta(theta)
    if not np.all(np.isfinite(gap)):
        raise ParameterError("kernel", "finite on [-1, 1]", kernel.name)
    wg = weight * gap
    out = np.empty(degree + 1)
    for l0, P in gegenbauer_blocks(d, np.cos(theta), degree):
        out[l0:l0 + P.shape[0]] = -(P @ wg)
    out *= harmonic_dimension(d, np.arange(degree + 1))
    out[0] = -out[0]                   # E[D]
    return out


def rounding_floor(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """The rounding level of the computed ``a_l``, ``4e-16 s (l + 1) sqrt(N(d, l))`` for ``l = 0 ..
    degree``, ``s`` the kernel's :attr:`~ZonalKernel.gap_scale` ``max |D|`` (``a_l``, ``l >= 1``, are sums
    of ``D`` against ``P_l``; ``K(1)`` for ``a_0``).  Measured on the affine kernel, whose ``a_l``,
    ``l >= 2``, vanish: ``|a_l| <= 4e-17 s (l + 1) sqrt(N(d, l))`` up to ``l = 4096``, ``d = 2, 3``
    (``l = 1024``, ``d = 6``)."""
    l = np.arange(degree + 1)
    scale = np.where(l == 0, max(kernel.k1, kernel.gap_scale), kernel.gap_scale)
    return 4e-16 * scale * (l + 1) * np.sqrt(harmonic_dimension(kernel.d, l))


def check_schoenberg(kernel: ZonalKernel, degree: int = SCHOENBERG_DEGREE, tol: float = SCHOENBERG_TOL) -> np.ndarray:
    """The coefficients ``a_0 .. a_degree``; :class:`ParameterError` naming the first ``l`` with
    ``a_l < -max(tol s_l, r_l)`` (``s_0 = K(1)``, ``s_l = max |D|`` for ``l >= 1``: a near-constant
    kernel is held to the scale of its variation; ``r_l`` the quadrature's :func:`rounding_floor`; ``K``
    is then not a covariance on ``S^(d-1)``), or if ``K(1) <= 0``."""
    if not kernel.k1 > 0:
        raise ParameterError("kernel", "a covariance with K(1) > 0", kernel.name)
    a = gegenbauer_coefficients(kernel, degree)
    scale = np.full(degree + 1, kernel.gap_scale)
    scale[0] = kernel.k1
    bad = np.flatnonzero(a < -np.maximum(tol * scale, rounding_floor(kernel, degree)))
    if bad.size:
        l = int(bad[0])
        raise ParameterError("kernel", f"a valid covariance on S^{kernel.d - 1} (Schoenberg: every Gegenbauer "
                             f"coefficient a_l >= -{tol:g} max|K(1) - K(t)|); first negative coefficient "
                             f"a_{l} = {a[l]:.3g}", kernel.name)
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
    """``D(u) = (L^2/(2k^2)) (1 - Omega_d(k sqrt(2u)))``; below ``r = k sqrt(2u) = 0.5`` by the series
    ``(L^2/2) sum_j (-1)^(j+1) Gamma(d/2) (u/2)^j k^(2j-2) / (j! Gamma(j + d/2))`` (no ``1/k^2``: exact in
    the small-``k`` limit ``L^2 u/(2d)``)."""
    scale = L * L / (2.0 * k * k)

    def gap(u):
        u = np.asarray(u, dtype=np.float64)
        r = k * np.sqrt(2.0 * u)
        half_u = 0.5 * u
        series = np.zeros_like(u)
        term = np.full_like(u, -1.0)           # term_j = (-1)^j Gamma(d/2) (u/2)^j k^(2j-2) / (j! Gamma(j+d/2))
        for j in range(1, 12):
            term = -term * half_u * (k * k if j > 1 else 1.0) / (j * (j - 1 + 0.5 * d))
            series = series + term
        with np.errstate(invalid="ignore", over="ignore"):
            far = scale * (1.0 - sphere_characteristic(d, np.where(r < 0.5, 0.5, r)))
        return np.where(r < 0.5, (L * L / 2.0) * series, far)
    return gap


def builtin_kernel(name: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """The kernel of the built-in class ``name`` (table in the module docstring); one object per
    argument tuple (its Gegenbauer coefficients are cached on it)."""
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    frequency = check_real("frequency", frequency, minimum=FREQUENCY_RANGE[0], maximum=FREQUENCY_RANGE[1])
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


MAX_MIXTURE_WEIGHT = 1e300


def mixture_kernel(parts, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """``sum_c w_c K_c / sum_c w_c`` for ``parts = [(name, weight), ...]``: each built-in class at most
    once, weights in ``[0, 1e300]`` (so the total is finite), total ``> 0``; parts of weight 0 are dropped."""
    if not isinstance(parts, (list, tuple)) or not 1 <= len(parts) <= len(BUILTIN_KERNELS):
        raise ParameterError("task", f"a mixture of 1 to {len(BUILTIN_KERNELS)} parts", parts)
    names = [name for name, _ in parts]
    if len(set(names)) != len(names) or not set(names) <= set(BUILTIN_KERNELS):
        raise ParameterError("task", f"a mixture of distinct classes among {', '.join(BUILTIN_KERNELS)}", names)
    weights = [check_real(f"weight of {name}", weight, minimum=0.0, maximum=MAX_MIXTURE_WEIGHT)
               for name, weight in parts]
    total = math.fsum(weights)
    if not total > 0:
        raise ParameterError("task", "a mixture with a positive total weight", parts)
    kept = [(name, w) for name, w in zip(names, weights) if w > 0]
    kernels = [builtin_kernel(name, d, L, frequency) for name, _ in kept]
    ws = [w / total for _, w in kept]

    def gap(u):
        return sum(w * k.gap(u) for w, k in zip(ws, kernels))

    label = "mix:" + ",".join(f"{k.name}={w:g}" for k, (_, w) in zip(kernels, kept))
    expr = sum(sp.Float(w) * k.sympy for w, k in zip(ws, kernels))
    parts = tuple((name, w, L, frequency) for (name, _), w in zip(kept, ws))
    return ZonalKernel(label, d, sum(w * k.k1 for w, k in zip(ws, kernels)), gap, expr, parts)


def parse_mixture(task: str) -> tuple:
    """``((name, weight), ...)`` of ``mix:NAME=WEIGHT,...``, validated as a whole before anything is built:
    at most one part per built-in class (so at most ``len(BUILTIN_KERNELS)`` parts, counted before any
    is read), names exactly as listed, weights read by the one number parser
    (:func:`~lipschitz_icl.validation.parse_real`: ASCII decimal, no ``1_0`` or ``' 5 '``) in
    ``[0, 1e300]``, and a total weight ``> 0``."""
    requirement = (f"mix:NAME=WEIGHT,... with distinct NAME in {', '.join(BUILTIN_KERNELS)} and weights in "
                   f"[0, {MAX_MIXTURE_WEIGHT:g}] written in ASCII digits, with a positive total")
    if not isinstance(task, str) or not task.startswith("mix:"):
        raise ParameterError("task", requirement, task)
    items = task[4:].split(",", len(BUILTIN_KERNELS))
    if len(items) > len(BUILTIN_KERNELS):
        raise ParameterError("task", f"{requirement} (at most {len(BUILTIN_KERNELS)} parts)", task)
    parts = []
    for item in items:
        name, sep, weight = item.partition("=")
        if not sep or name not in BUILTIN_KERNELS or name in (p[0] for p in parts):
            raise ParameterError("task", requirement, task)
        try:
            parts.append((name, parse_real(f"weight of {name}", weight, minimum=0.0, maximum=MAX_MIXTURE_WEIGHT)))
        except ParameterError as exc:
            raise ParameterError("task", f"{requirement} (weight of {name}: {exc.requirement})", task) from None
    if not math.fsum(w for _, w in parts) > 0:
        raise ParameterError("task", f"{requirement} (all weights are 0)", task)
    return tuple(parts)


def parse_task(task: str, d: int, L: float = 1.0, frequency: float = 1.0) -> ZonalKernel:
    """``affine``, ``relu``, ``cosine`` or ``mix:NAME=WEIGHT,...`` (:func:`parse_mixture`) as a
    :class:`ZonalKernel`."""
    if not isinstance(task, str):
        raise ParameterError("task", "a task name", task)
    if not task.startswith("mix:"):
        return builtin_kernel(task, d, L, frequency)
    return mixture_kernel(parse_mixture(task), d, L, frequency)


# ----------------------------------------------------------------------------- user kernels
KERNEL_VARIABLES = ("t", "d")
RESERVED_NAMES = frozenset({"t", "d", "u", *BUILTIN_CONSTANTS, *FUNCTIONS})   # never a constant's name
CHECK_POINTS = 24          # points of [-1, 1] where the SymPy form is held to the expression's value
AGREEMENT_RTOL = 1e-8      # allowed |D_sympy - D_expression| relative to max |D| at the check points


def kernel_constants(constants) -> dict:
    """``constants`` checked: identifiers (a letter, then letters, digits, ``_``; at most 31) that are
    not ``t``, ``d``, ``u``, ``pi`` or a function name (shadowing is an error), finite reals with
    ``|x| <= 1e300``."""
    out = {}
    for name, value in dict(constants or {}).items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,30}", name) \
                or name in RESERVED_NAMES:
            raise ParameterError(f"constant {name!r}", "named by an identifier (a letter, then letters, digits or "
                                 f"_; at most 31) other than t, d, u, pi and the functions {', '.join(FUNCTIONS)}",
                                 name)
        out[name] = check_real(f"constant {name}", value, minimum=-MAX_CONSTANT, maximum=MAX_CONSTANT)
    return out


def _check_points(text: str) -> np.ndarray:
    """``t = 1, -1, 0, +-0.5`` and pseudo-random points of ``[-1, 1]`` (a stream fixed by the text)."""
    rng = np.random.default_rng(zlib.crc32(text.encode("utf-8", "replace")))
    return np.concatenate([[1.0, -1.0, 0.0, 0.5, -0.5], rng.uniform(-1.0, 1.0, CHECK_POINTS - 5)])


def _expression_values(parsed, text: str, env: dict, points: np.ndarray) -> list:
    """``K(t)`` at ``points`` by the expression's own evaluator (mpmath, magnitude budget; independent of
    SymPy); a point where it is undefined or not a finite real refuses the kernel."""
    values = []
    for t in points:
        try:
            values.append(parsed.evaluate({**env, "t": mpmath.mpf(float(t))}))
        except ExpressionError as exc:
            raise ParameterError("kernel", f"a real, finite function of t on [-1, 1] (at t = {t:.6g}: "
                                 f"{exc.reason})", text) from None
    return values


def _symbolic_gap(parsed, text: str, d: int, constants: dict):
    """``(K(t), D(u))`` in SymPy, under the budgets of :mod:`lipschitz_icl.symbolic`: ``t`` a symbol
    with no assumptions and ``u = 1 - t`` non-negative (both true on ``[-1, 1]``: no identity that
    needs ``t > 0`` applies, so ``abs(t)`` stays ``|t|``); ``D`` simplified."""
    t, u = sp.Symbol("t"), sp.Symbol("u", nonnegative=True)
    values = {"t": t, "d": sp.Integer(d), **{n: sp.Float(v) for n, v in constants.items()}}

    def build():
        try:
            return parsed.to_sympy(values)
        except ExpressionError as exc:
            raise ParameterError("kernel", f"an expression in t, d and named constants ({exc})", text) from None

    k_t = symbolic.within_budget(build, name="kernel", text=text, what="its SymPy form")
    gap = symbolic.within_budget(lambda: sp.simplify(k_t.subs(t, 1) - k_t.subs(t, 1 - u)), name="kernel",
                                 text=text, what="simplify", start=k_t)
    return k_t, gap, u


def expression_kernel(text: str, d: int, constants: dict | None = None, *, check: bool = True) -> ZonalKernel:
    """A kernel from the expression ``text`` in ``t`` (and ``d``, ``pi`` and the names of ``constants``),
    read by the project's safe parser; ``D(u) = K(1) - K(1 - u)`` is built symbolically and evaluated
    with NumPy (:func:`sympy.lambdify` on the parsed tree's SymPy form, never on the text).  Before use
    the NumPy ``D`` is held to the expression's own values (mpmath) at :data:`CHECK_POINTS` points of
    ``[-1, 1]``: a SymPy form that differs (beyond ``AGREEMENT_RTOL max |D|``) is refused, so no
    rewriting can change the kernel; every SymPy step runs under a time and size budget."""
    d = check_int("d", d, minimum=2)
    constants = kernel_constants(constants)
    try:
        parsed = parse_expression(text, {*KERNEL_VARIABLES, *constants})
    except ExpressionError as exc:
        raise ParameterError("kernel", f"an expression in t, d and named constants ({exc})", text) from None
    points = _check_points(text)
    exact = _expression_values(parsed, text, {"d": d, **constants}, points)  # points[0] = 1: K(1)
    k1 = float(exact[0])
    if not all(math.isfinite(float(value)) for value in exact):
        raise ParameterError("kernel", "a function whose values on [-1, 1] a double can hold (|K| <= 1e308)", text)
    k_t, gap_expr, u = _symbolic_gap(parsed, text, d, constants)
    fn = symbolic.within_budget(lambda: sp.lambdify(u, gap_expr, modules="numpy"), name="kernel", text=text,
                                what="lambdify", start=gap_expr)

    def gap(values):
        values = np.asarray(values, dtype=np.float64)
        with np.errstate(all="ignore"):
            out = np.broadcast_to(np.asarray(fn(values), dtype=np.float64), values.shape)
        return np.array(out, dtype=np.float64)

    _check_agreement(gap, exact, points, text)
    # the name keys the on-disk cache (lipschitz_icl.cache.problem_key): it carries the constants too
    name = text + ("" if not constants else " with " + ", ".join(f"{k}={v!r}" for k, v in sorted(constants.items())))
    kernel = ZonalKernel(name, d, k1, gap, k_t)
    if check:
        check_schoenberg(kernel)
    return kernel


def _check_agreement(gap, exact: list, points: np.ndarray, text: str) -> None:
    """The NumPy ``D(1 - t)`` against ``K(1) - K(t)`` of the expression's evaluator at ``points``."""
    with mpmath.workdps(30):
        reference = np.array([float(exact[0] - value) for value in exact])
    try:
        got = gap(1.0 - points)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ParameterError("kernel", f"an expression NumPy can evaluate ({type(exc).__name__})", text) from None
    scale = float(np.max(np.abs(reference)))
    bad = np.flatnonzero(~(np.abs(got - reference) <= AGREEMENT_RTOL * scale + 1e-300))
    if bad.size:
        j = int(bad[0])
        raise ParameterError("kernel", f"an expression whose symbolic form keeps its values (at t = {points[j]:.6g} "
                             f"K(1) - K(t) is {reference[j]:.6g}, its SymPy form gives {got[j]:.6g})", text)


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
