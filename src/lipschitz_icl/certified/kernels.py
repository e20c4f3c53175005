"""Certified zonal kernels: the gap ``D(theta) = K(1) - K(cos theta)`` in balls, the Gegenbauer coefficients
``a_l`` and a bound of the coefficients left out.

For ``M = w I`` a task prior enters the ICL loss only through its covariance ``K(x.y)`` (README, "Your own
task prior"): with ``P_l`` the Gegenbauer polynomials of dimension ``d`` normalised by ``P_l(1) = 1`` and
``K = sum_l a_l P_l``, the bias is (:mod:`lipschitz_icl.certified.laplace`)

    bias = E[sum_i p_i^2 2 D(t_i)] + sum_{l >= 1} a_l E[sum_{i != j} p_i p_j Q_l(t_i) Q_l(t_j)],
    Q_l = 1 - P_l,

so a kernel is certified when ``D`` can be evaluated in balls on complex boxes (it is analytic in
``theta`` on a neighbourhood of ``[0, pi]``), its first ``m`` coefficients ``a_l`` can be enclosed, and the
ones left out can be bounded: ``T_m = sum_{l > m} a_l = E[D] - sum_{1 <= l <= m} a_l`` (exact, from
``E[D]``) and ``T_m^abs >= sum_{l > m} |a_l|``.

==================================  =====================================================================
class (``scale`` times the unit)    unit gap ``D(theta)``, ``u = 1 - cos theta``
==================================  =====================================================================
affine, lowrank-affine (``L^2``)    ``u/(3d)``; ``a_1 = 1/(3d)``, no other (degree 1)
lowrank-linear (``L^2``)            ``u/d``; ``a_1 = 1/d`` (degree 1)
lowrank-quadratic (``L^2``)         ``2 sin^2(theta)/(3 d (d+2))``; ``a_2 = 2(d-1)/(3 d^2 (d+2))`` (degree 2)
relu (``L^2``)                      ``(pi u - sin theta + theta cos theta)/(3 pi d)`` (entire in ``theta``)
cosine, lowrank-cosine (``L^2``)    ``(1/(2k^2)) (1 - Omega_d(k r)) = (sin^2(theta/2)/d) 1F2(1; 2, d/2 + 1;
                                    -k^2 sin^2(theta/2))``, ``r = 2 sin(theta/2)`` (entire)
mixtures of these (``L^2``)         the weighted mean of the parts' unit gaps (weights summing to 1)
a user's kernel (scale 1)           ``K(1) - K(cos theta)`` from the SymPy form of ``K(t)``: certified when
                                    ``K`` is analytic in ``t`` on a Bernstein ellipse about ``[-1, 1]``
==================================  =====================================================================

*Low-rank classes.*  For ``M = w I`` the softmax weights depend only on ``x_i . q`` and the law of
``(q, x_1, ..., x_n)`` is invariant under rotations, so the loss of any prior equals that of its
rotation-averaged kernel ``Kbar(x.y) = E_R[K(Rx, Ry)]``.  For ``f(x) = l a.(B^T x) + b`` (``a`` uniform on
``S^{r-1}``, ``B`` orthonormal) ``E_R[(B^T R x).(B^T R y)] = (r/d) x.y``, which gives the affine kernel
(``lowrank-linear``: ``l = L``, ``L^2 t/d``); ``Ba`` is a uniform unit vector after the rotation, so the
low-rank cosine has the cosine kernel and the quadratic ``Kbar(t) = (L^2/3)(1 + 2 t^2)/(d (d + 2)) +
L^2/3`` (``E[(e.x)^2 (e.y)^2] = (1 + 2 t^2)/(d (d + 2))`` for ``e`` uniform).  None depends on the rank.

*Positivity.*  The built-in classes and their mixtures are covariances by construction (``K(x.y) =
E_f[f(x) f(y)]``), so every ``a_l >= 0`` (Schoenberg) and ``T_m^abs = T_m``.  A user's kernel is not
assumed to be one: it is certified only when ``K`` is analytic in ``t`` inside the ellipse ``E_R`` (foci
``+-1``, ``R > 1``), checked by ball evaluation on boxes covering it, with ``|K| <= M_R`` there; its
Chebyshev coefficients are then at most ``2 M_R R^(-k)`` (Trefethen, *Approximation Theory and
Approximation Practice*, Thm 8.1), ``P_l`` is orthogonal to degrees ``< l`` and ``|T_k|, |P_l| <= 1``, so
``|a_l| <= N(d, l) 2 M_R R^(-l) / (1 - 1/R)``.  A kernel with a singularity on ``[-1, 1]`` (e.g. a Matern
kernel, ``sqrt(2 - 2t)`` at ``t = 1``) or given as a Python function is refused: its coefficients are not
bounded by anything computable here.

The coefficients ``a_l = -N(d, l) E[D P_l]`` (``l >= 1``) and ``E[D]`` are enclosed by Gauss-Legendre panels
in ``theta`` with the Bernstein-ellipse bound (:mod:`lipschitz_icl.certified.quadrature`), using
``|P_l(cos theta)| <= P_l(cosh beta)`` on ``|Im theta| <= beta`` (the Gegenbauer polynomial of ``cos theta``
is a nonnegative combination of ``cos(j theta)``; Chebyshev for ``d = 2``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property, lru_cache

from flint import acb, arb, ctx, fmpq

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.certified.quadrature import panel
from lipschitz_icl.validation import ParameterError

__all__ = [
    "CertifiedKernel",
    "Coefficients",
    "certified_kernel",
    "builtin_kernel",
    "sympy_kernel",
    "harmonic_dimension",
    "gegenbauer_table",
    "gegenbauer_values",
    "guard_bits",
    "gegenbauer_bound",
    "CERTIFIED_CLASSES",
]

CERTIFIED_CLASSES = (
    "affine",
    "relu",
    "cosine",
    "lowrank-linear",
    "lowrank-affine",
    "lowrank-quadratic",
    "lowrank-cosine",
)
_COEFFICIENT_NODES = 32  # Gauss nodes per panel of the coefficients' theta rule
_RHOS = (8.0, 5.0, 3.0, 2.0, 1.5, 1.25)
_ELLIPSES = (4.0, 2.0, 1.5, 1.2)  # R of the Bernstein ellipses tried for a user's kernel


# ----------------------------------------------------------------------------- Gegenbauer polynomials
def harmonic_dimension(d: int, l: int) -> int:
    """``N(d, l)``, the dimension of the degree-``l`` spherical harmonics on ``S^(d-1)`` (an exact integer):
    ``1`` at ``l = 0``, ``2`` for ``d = 2``, else ``(2l + d - 2) (l + d - 3)! / ((d - 2)! l!)``."""
    if l == 0:
        return 1
    if d == 2:
        return 2
    return (2 * l + d - 2) * math.comb(l + d - 3, l) // (d - 2)


@cache
def _recurrence(d: int, l: int) -> tuple:
    """``(alpha_l, beta_l)`` with ``P_(l+1) = alpha_l t P_l - beta_l P_(l-1)`` (``l >= 1``; ``alpha - beta = 1``):
    ``(l + 2 lam) P_(l+1) = 2 (l + lam) t P_l - l P_(l-1)``, ``lam = (d - 2)/2``."""
    two_lam = d - 2
    return fmpq(2 * l + two_lam, l + two_lam), fmpq(l, l + two_lam)


def guard_bits(degree: int) -> int:
    """Extra bits for the three-term recurrence up to ``degree`` in ball arithmetic: the radii obey
    ``r_(l+1) <= alpha |t| r_l + beta r_(l-1)``, which grows like ``(1 + sqrt 2)^l`` on ``[-1, 1]``
    (``log2(1 + sqrt 2) < 1.28``), although the values stay in ``[-1, 1]``."""
    return math.ceil(1.28 * degree) + 16


def gegenbauer_table(d: int, u: arb, degree: int) -> tuple:
    """``(P, Q)``: lists ``P_l(t)`` and ``Q_l = 1 - P_l(t)``, ``t = 1 - u``, for ``l = 0 .. degree`` and every
    ``u`` in the real ball ``u`` (in ``[0, 2]``).  The recurrence runs at the midpoint of ``u`` with
    :func:`guard_bits` more bits (a ball recurrence would multiply the input's radius by up to
    ``(1 + sqrt 2)^l``); the radius of ``u`` is then added back through ``|P_l'| <= P_l'(1)`` on ``[-1, 1]``.
    ``Q`` by ``Q_(l+1) = alpha_l (u + t Q_l) - beta_l Q_(l-1)`` (no cancellation near ``t = 1``)."""
    spread = arb(u.rad())
    with arithmetic.precision(ctx.prec + guard_bits(degree)):
        um = arb(u.mid())
        t = 1 - um
        P = [arb(1), t]
        Q = [arb(0), um]
        for l in range(1, degree):
            a, b = _recurrence(d, l)
            P.append(a * t * P[l] - b * P[l - 1])
            Q.append(a * (um + t * Q[l]) - b * Q[l - 1])
    P, Q = P[: degree + 1], Q[: degree + 1]
    if spread != 0:
        for l in range(1, degree + 1):
            slope = spread * _slope_at_one(d, l, ctx.prec)
            P[l], Q[l] = _widen(P[l], slope), _widen(Q[l], slope)
    return P, Q


def gegenbauer_bound(d: int, x: arb, degree: int) -> tuple:
    """``(P_l(x), P_l'(x))`` for ``l = 0 .. degree`` at the upper end of a real ``x >= 1`` (both increase in
    ``x``): ``|P_l(z)| <= P_l(x)`` for every ``z`` in the Bernstein ellipse through ``x`` (module
    docstring), and ``|1 - P_l(z)| <= |1 - z| P_l'(x)`` (``P_l'`` is a nonnegative combination too, of the
    Gegenbauer polynomials of the next order)."""
    with arithmetic.precision(ctx.prec + guard_bits(degree)):
        x = arb(x.upper())
        P, dP = [arb(1), x], [arb(0), arb(1)]
        for l in range(1, degree):
            a, b = _recurrence(d, l)
            P.append(a * x * P[l] - b * P[l - 1])
            dP.append(a * (P[l] + x * dP[l]) - b * dP[l - 1])
    return P[: degree + 1], dP[: degree + 1]


@lru_cache(maxsize=4096)
def _slope_at_one(d: int, l: int, prec: int) -> arb:
    """:func:`derivative_at_one` as a ball at the working precision ``prec`` (the ball it is at that precision,
    computed once)."""
    return arithmetic.exact(derivative_at_one(d, l))


def derivative_at_one(d: int, l: int) -> Fraction:
    """``P_l'(1) = l (l + d - 2)/(d - 1)``: ``|Q_l(t)| <= P_l'(1) (1 - t)`` on ``[-1, 1]``."""
    return Fraction(l * (l + d - 2), d - 1)


# ----------------------------------------------------------------------------- coefficients
@dataclass(frozen=True)
class Coefficients:
    """Balls ``a_1 .. a_m`` of the unit kernel (``a[0]`` is unused and 0), ``mean_gap = E[D]``, ``tail =
    T_m = E[D] - sum_{1 <= l <= m} a_l`` and an upper bound ``tail_abs >= sum_{l > m} |a_l|``."""

    a: tuple
    mean_gap: arb
    tail: arb
    tail_abs: arb

    @property
    def m(self) -> int:
        return len(self.a) - 1


@dataclass(frozen=True)
class CertifiedKernel:
    """A zonal kernel in balls: ``scale`` times the unit kernel whose gap is ``gap(theta)`` (``theta`` an
    ``arb`` or ``acb``; analytic in ``theta``).  ``exact``: the coefficients ``(a_0, a_1, ..., a_degree)``
    of a kernel of finite degree as Fractions (``a_0`` unused), else None; ``positive``: every ``a_l >= 0``
    (a covariance by construction); ``frequency``: how fast ``D`` oscillates in ``theta`` (the panels of the
    coefficients resolve it); ``ellipse``: ``(R, M_R)`` of the analytic bound of a user's kernel; ``key``:
    what identifies the kernel (its coefficients are cached under it)."""

    name: str
    d: int
    scale: arb
    gap: Callable = field(compare=False)
    exact: tuple | None = None
    positive: bool = True
    frequency: float = 0.0
    ellipse: tuple | None = None
    key: tuple = ()

    @property
    def degree(self) -> int | None:
        """The Gegenbauer degree of a kernel that has a finite one, else None."""
        return None if self.exact is None else len(self.exact) - 1

    def coefficients(self, m: int) -> Coefficients:
        """``a_1 .. a_m`` of the unit kernel and the bounds of the rest (module docstring); exact for a
        kernel of finite degree."""
        if self.exact is not None:
            a = [arithmetic.exact(x) for x in self.exact[: m + 1]]
            a += [arb(0)] * (m + 1 - len(a))
            a[0] = arb(0)
            rest = sum((arithmetic.exact(x) for x in self.exact[m + 1 :]), arb(0))
            return Coefficients(tuple(a), sum(a, arb(0)) + rest, rest, arb(rest.abs_upper()))
        key = (self.key, ctx.prec)
        cached = _COEFFICIENT_CACHE.get(key) if self.key else None
        if cached is None or cached.m < m:
            cached = _quadrature_coefficients(self, max(m, 2 * cached.m if cached else m))
            if self.key:
                _COEFFICIENT_CACHE[key] = cached
        first = tuple(cached.a[: m + 1])
        tail = cached.mean_gap - sum(first[1:], arb(0))
        if self.positive:
            tail = tail.nonnegative_part()
        return Coefficients(first, cached.mean_gap, tail, self.tail_bound(tail, m))

    def tail_bound(self, tail: arb, m: int) -> arb:
        """``sum_{l > m} |a_l|``: ``T_m`` for a covariance, the analytic bound for a user's kernel."""
        if self.positive:
            return arb(tail.nonnegative_part().abs_upper())
        if self.ellipse is None:
            raise ValueError(f"{self.name}: a kernel not known to be a covariance needs its analytic ellipse")
        R, M = (arb(x) for x in self.ellipse)
        d = self.d
        first = harmonic_dimension(d, m + 1) * R ** (-(m + 1))
        ratio = arb(harmonic_dimension(d, m + 2)) / harmonic_dimension(d, m + 1) / R  # N(d, l+1)/N(d, l) decreases
        if not ratio < 1:
            return arb.pos_inf()
        return arb((2 * M / (1 - 1 / R) * first / (1 - ratio)).abs_upper())

    @cached_property
    def gap_sup(self) -> arb:
        """An upper bound of ``max |D|`` on ``[0, pi]`` (ball evaluation on 256 pieces)."""
        pieces = 256
        top = arb(0)
        for j in range(pieces):
            theta = arithmetic.interval(math.pi * j / pieces, math.pi * (j + 1) / pieces)
            top = top.max(arb(abs(self.gap(theta)).abs_upper()))
        return top

    def first_coefficient(self) -> arb:
        """``a_1`` of the unit kernel (the far-field lower bound of the bias, ``bias >= a_1 Q``)."""
        return self.coefficients(1).a[1]


_COEFFICIENT_CACHE: dict = {}


def _log_normaliser(d: int) -> arb:
    """``-log B(1/2, (d-1)/2)``: the law of ``theta`` is ``sin^(d-2) theta dtheta / B(1/2, (d-1)/2)``."""
    return -(arb(0.5).lgamma() + (arb(d - 1) / 2).lgamma() - (arb(d) / 2).lgamma())


def gegenbauer_values(d: int, u: arb, degree: int) -> list:
    """``P_0(t) .. P_degree(t)``, ``t = 1 - u`` (:func:`gegenbauer_table`)."""
    return gegenbauer_table(d, u, degree)[0]


def _quadrature_coefficients(kernel: CertifiedKernel, m: int) -> Coefficients:
    """``E[D]`` and ``a_l = -N(d, l) E[D P_l]`` by Gauss-Legendre panels on ``[0, pi]`` with certified
    errors; the panels are doubled until every error is below ``1e-26 E[D]`` (at most 4096 panels)."""
    d = kernel.d
    norm = _log_normaliser(d).exp()
    panels = max(8, math.ceil((m + 2.0 * kernel.frequency) / 6.0) + 8)
    while True:
        sums, errors = [arb(0)] * (m + 1), [arb(0)] * (m + 1)
        ends = [arb.pi() * j / panels for j in range(panels + 1)]  # exact multiples of pi: no sliver is lost
        for j in range(panels):
            p, bound = _coefficient_panel(kernel, ends[j], ends[j + 1], m, norm)
            for theta, gauss in zip(p.nodes, p.weights):
                weight = gauss * theta.sin() ** (d - 2) * norm * kernel.gap(theta)
                for l, value in enumerate(gegenbauer_values(d, 2 * _half_angle_square(theta), m)):
                    sums[l] += weight * value
            errors = [e + x for e, x in zip(errors, bound)]
        limit = 1e-24 * float(abs(sums[0]).abs_upper())
        if all(float(e.abs_upper()) <= limit for e in errors) or panels >= 1024:
            break
        panels *= 2
    mean = _widen(sums[0], errors[0])
    a = [arb(0)] + [-harmonic_dimension(d, l) * _widen(sums[l], errors[l]) for l in range(1, m + 1)]
    tail = mean - sum(a[1:], arb(0))
    if kernel.positive:
        tail = tail.nonnegative_part()
    return Coefficients(tuple(a), mean, tail, arb(0))


def _widen(value: arb, radius: arb) -> arb:
    return value + arb(0, 1) * arb(radius.abs_upper())


def _coefficient_panel(kernel: CertifiedKernel, a: arb, b: arb, m: int, norm: arb):
    """The panel ``[a, b]`` with the ``rho`` of :data:`_RHOS` giving the smallest error bound at ``l = m``,
    and the error bound of every ``l``: ``|D mu|`` on the rectangle times ``P_l(cosh beta)``."""
    best = None
    for rho in _RHOS:
        p = panel(a, b, _COEFFICIENT_NODES, rho)
        box = p.box()
        try:
            size = kernel.gap(box) * box.sin() ** (kernel.d - 2)
        except NotCertified:  # this rho's rectangle meets a pole or a cut of a user's kernel: a smaller rho may not
            continue
        if not size.is_finite():
            continue
        magnitude = arb(abs(size).abs_upper()) * norm
        beta = arb(abs(box.imag).abs_upper())
        P, _ = gegenbauer_bound(kernel.d, beta.cosh(), m)
        bounds = [p.factor * magnitude * x for x in P]
        if best is None or bounds[-1] < best[1][-1]:
            best = (p, bounds)
    if best is None:
        raise ParameterError(
            "kernel", f"analytic in theta on [0, pi] for the certified method ({kernel.name} is not)", kernel.name
        )
    return best


# ----------------------------------------------------------------------------- the built-in classes
def _half_angle_square(theta):
    """``sin^2(theta/2)``; ``u = 1 - cos theta = 2 sin^2(theta/2)`` without cancellation."""
    return (theta / 2).sin() ** 2


def _affine_gap(d: int) -> Callable:
    def gap(theta):
        return 2 * _half_angle_square(theta) / (3 * d)

    return gap


def _linear_gap(d: int) -> Callable:
    def gap(theta):
        return 2 * _half_angle_square(theta) / d

    return gap


def _quadratic_gap(d: int) -> Callable:
    def gap(theta):
        return 2 * theta.sin() ** 2 / (3 * d * (d + 2))

    return gap


def _relu_gap(d: int) -> Callable:
    pi = arb.pi()

    def gap(theta):
        u = 2 * _half_angle_square(theta)
        return (pi * u - theta.sin() + theta * theta.cos()) / (3 * pi * d)

    return gap


def _cosine_gap(d: int, k: float) -> Callable:
    k2 = arithmetic.exact(k) ** 2
    top = fmpq(d, 2) + 1

    def gap(theta):
        h = _half_angle_square(theta)
        return h / d * (-k2 * h).hypgeom([1], [2, top])

    return gap


_UNIT = {
    "affine": (lambda d, k: _affine_gap(d), lambda d: (Fraction(0), Fraction(1, 3 * d))),
    "lowrank-affine": (lambda d, k: _affine_gap(d), lambda d: (Fraction(0), Fraction(1, 3 * d))),
    "lowrank-linear": (lambda d, k: _linear_gap(d), lambda d: (Fraction(0), Fraction(1, d))),
    "lowrank-quadratic": (
        lambda d, k: _quadratic_gap(d),
        lambda d: (Fraction(0), Fraction(0), Fraction(2 * (d - 1), 3 * d * d * (d + 2))),
    ),
    "relu": (lambda d, k: _relu_gap(d), None),
    "cosine": (_cosine_gap, None),
    "lowrank-cosine": (_cosine_gap, None),
}


def builtin_kernel(name: str, d: int, L, frequency: float = 1.0) -> CertifiedKernel:
    """The certified kernel of the built-in class ``name`` (:data:`CERTIFIED_CLASSES`; a low-rank class by
    its rotation average, module docstring) at scale ``L`` (a number or a ball: the scale is ``L^2``)."""
    if name not in _UNIT:
        raise ParameterError("task", f"one of {', '.join(CERTIFIED_CLASSES)} for the certified method", name)
    make_gap, exact = _UNIT[name]
    k = frequency if "cosine" in name else 0.0
    key = ("cosine" if "cosine" in name else name.replace("lowrank-affine", "affine"), d, k)
    return CertifiedKernel(name, d, _square(L), make_gap(d, k), exact(d) if exact else None, True, float(k), None, key)


def _square(L) -> arb:
    ball = L if isinstance(L, arb) else arithmetic.exact(L)
    return ball * ball


def mixture_kernel(parts, d: int, L) -> CertifiedKernel:
    """``sum_c w_c K_c`` for ``parts = ((name, weight, frequency), ...)`` with weights summing to 1 (the
    weights are taken exactly as given), at scale ``L``."""
    kernels = [(Fraction(weight), builtin_kernel(name, d, 1.0, frequency)) for name, weight, frequency in parts]

    def gap(theta):
        return sum(
            (arithmetic.exact(w) * k.gap(theta) for w, k in kernels), arb(0) if isinstance(theta, arb) else acb(0)
        )

    exact = None
    finite = [(w, k.exact) for w, k in kernels if k.exact is not None]
    if len(finite) == len(kernels):
        degree = max(len(a) for _, a in finite)
        exact = tuple(sum((w * (a[i] if i < len(a) else 0) for w, a in finite), Fraction(0)) for i in range(degree))
    name = "mix:" + ",".join(f"{k.name}={float(w):g}" for w, k in kernels)
    key = ("mix", d, tuple((k.key, w) for w, k in kernels))
    frequency = max(k.frequency for _, k in kernels)
    return CertifiedKernel(name, d, _square(L), gap, exact, True, frequency, None, key)


# ----------------------------------------------------------------------------- a user's kernel (SymPy form)
class NotCertified(ValueError):
    """A kernel whose ball evaluation is not certified on a box (a branch cut, a pole, a non-analytic
    function); the message says which."""


def _sympy_evaluator(expr, name: str) -> Callable:
    """``K`` as a function of a ball ``t`` (``arb`` or ``acb``) from its SymPy form, walked node by node:
    numbers exactly (a SymPy Float is a binary fraction), ``+ * **``, ``exp``, and ``log``/``sqrt``/non-integer
    powers only where the argument's real part is certainly positive (the principal branch is analytic
    there); ``Abs``, ``Min``, ``Max`` and any other function raise :class:`NotCertified`."""
    import sympy as sp

    def number(node):
        if isinstance(node, sp.Integer):
            return arb(int(node))
        if isinstance(node, sp.Rational):
            return arb(int(node.p)) / int(node.q)
        if isinstance(node, sp.Float):
            sign, man, exp, _ = node._mpf_
            return (-1 if sign else 1) * arb(int(man)) * arb(2) ** int(exp)
        if node == sp.pi:
            return arb.pi()
        if node == sp.E:
            return arb(1).exp()
        raise NotCertified(f"the constant {node} has no ball value")

    def positive_real(z):
        real = z.real if isinstance(z, acb) else z
        if not real > 0:
            raise NotCertified(f"{name}: a logarithm, square root or fractional power meets a branch point or cut")
        return acb(z) if not isinstance(z, acb) else z

    def walk(node, t):
        if node.is_Symbol:
            return t
        if node.is_Number or node in (sp.pi, sp.E):
            return number(node)
        args = node.args
        if isinstance(node, sp.Add):
            out = walk(args[0], t)
            for a in args[1:]:
                out = out + walk(a, t)
            return out
        if isinstance(node, sp.Mul):
            out = walk(args[0], t)
            for a in args[1:]:
                out = out * walk(a, t)
            return out
        if isinstance(node, sp.Pow):
            base, power = args
            if power.is_Integer:
                value = walk(base, t)
                m = int(power)
                if m < 0 and not (abs(value).abs_lower() > 0):
                    raise NotCertified(f"{name}: a division by a value that may be 0")
                return value**m
            z = positive_real(walk(base, t))
            value = (walk(power, t) * z.log()).exp()
            return value if isinstance(t, acb) else value.real
        if isinstance(node, sp.exp):
            return walk(args[0], t).exp()
        if isinstance(node, sp.log):
            z = positive_real(walk(args[0], t))
            return z.log() if isinstance(t, acb) else z.log().real
        raise NotCertified(
            f"{name}: {type(node).__name__} has no certified ball evaluation (not analytic or not supported)"
        )

    return walk


def sympy_kernel(expr, d: int, name: str) -> CertifiedKernel:
    """The certified kernel of ``K(t)`` given by its SymPy form ``expr`` (a user's expression kernel or a
    registered class's SymPy form), scale 1: refused (:class:`ParameterError` on ``kernel``) unless it is
    analytic on one of the ellipses :data:`_ELLIPSES` (module docstring)."""
    import sympy as sp

    free = {str(s) for s in expr.free_symbols}
    if not free <= {"t"}:
        raise ParameterError(
            "kernel", f"an expression in t alone for the certified method (free: {sorted(free)})", name
        )
    symbol = sp.Symbol("t") if not expr.free_symbols else next(iter(expr.free_symbols))
    walk = _sympy_evaluator(expr, name)
    expr = expr.subs(symbol, sp.Symbol("t"))

    def K(t):
        return walk(expr, t)

    reason = "no ellipse about [-1, 1] on which it is analytic"
    ellipse = None
    for R in _ELLIPSES:
        try:
            ellipse = (R, _ellipse_sup(K, R))
            break
        except NotCertified as exc:
            reason = str(exc)
    if ellipse is None:
        raise ParameterError(
            "kernel", f"analytic in t on [-1, 1] for the certified method (not certified: {reason})", name
        )
    k1 = K(arb(1))

    def gap(theta):
        """``K(1) - K(cos theta)``; a box where the ball evaluation is not certified (a complex rectangle of a
        quadrature panel reaching a pole or a cut) gives an unbounded ball, which no proof can use and no
        interval reports as finite (it escaped as a :class:`NotCertified` traceback)."""
        try:
            return k1 - K(theta.cos())
        except NotCertified:
            unbounded = arb(0, math.inf)
            return acb(unbounded, unbounded) if isinstance(theta, acb) else unbounded

    return CertifiedKernel(name, d, arb(1), gap, None, False, 0.0, ellipse, ("sympy", d, sp.srepr(expr)))


def _ellipse_sup(K: Callable, R: float, pieces: int = 24) -> float:
    """``max |K|`` over boxes covering the filled Bernstein ellipse ``E_R`` (``K`` finite and analytic on
    each box, else :class:`NotCertified`)."""
    A, B = (R + 1 / R) / 2, (R - 1 / R) / 2
    rows = max(2, math.ceil(pieces * B / A))
    top = arb(0)
    for i in range(pieces):
        for j in range(rows):
            re = arithmetic.interval(-A + 2 * A * i / pieces, -A + 2 * A * (i + 1) / pieces)
            im = arithmetic.interval(-B + 2 * B * j / rows, -B + 2 * B * (j + 1) / rows)
            value = K(acb(re, im))
            if not value.is_finite():
                raise NotCertified("not finite (a pole or an overflow) near [-1, 1]")
            top = top.max(arb(abs(value).abs_upper()))
    return float(top.upper()) * (1 + 1e-12)


# ----------------------------------------------------------------------------- a problem's kernel
def certified_kernel(task_class) -> CertifiedKernel:
    """The certified kernel of a problem's task class (built-in classes, their mixtures, low-rank classes by
    rotation average, a user's expression kernel or a registered class with a SymPy kernel), or a
    :class:`ParameterError` naming what is not certified (on ``task`` or ``kernel``)."""
    from lipschitz_icl.tasks import builtin

    d = task_class.d
    for cls in builtin.BUILTIN_TASKS:
        if type(task_class) is cls:
            return builtin_kernel(cls.name, d, task_class.L, getattr(task_class, "frequency", 1.0))
    kernel = task_class.covariance_kernel() if hasattr(task_class, "covariance_kernel") else None
    if kernel is not None and kernel.parts:
        L = {part[2] for part in kernel.parts}
        if len(L) != 1:
            raise ParameterError("task", "a mixture with one L for the certified method", kernel.name)
        return mixture_kernel([(name, w, f) for name, w, _, f in kernel.parts], d, L.pop())
    if kernel is None or kernel.sympy is None:
        name = getattr(task_class, "name", "kernel")
        raise ParameterError(
            "kernel",
            "a kernel with a SymPy form for the certified method (a kernel given as a Python function has no "
            "ball evaluation: not certified)",
            name,
        )
    return sympy_kernel(kernel.sympy, d, kernel.name)
