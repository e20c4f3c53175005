"""The regularity law: how the roughness of a zonal kernel at ``t = 1`` sets the bias power and ``w*``.

Setting: a zonal task prior with covariance ``K(x.y)`` (:mod:`lipschitz_icl.zonal`), ``M = w I``,
``D(u) = K(1) - K(1 - u)``, ``u = 1 - t``, ``m = (d - 1)/2``.  Not stated in the paper (registry:
regularity.*); derived here, checked by the gates against the exact zonal method.

Large-``n`` bias.  As ``n -> inf`` the softmax average becomes the tilted mean, so
``bias_inf(w) = E_f[(E_rho f(x) - f(q))^2] = 2 E_rho[D(u_x)] - E_(rho x rho)[D(1 - x.y)]``, ``rho`` the
tilted law ``exp(-w u) p_d``.  For large ``w`` the tilted law is Gaussian in the tangent plane:
``u_x ~ Gamma(m, rate w)`` and ``1 - x.y = |x - y|^2/2 ~ Gamma(m, rate w/2)``, so a term ``c u^g`` of ``D``
contributes ``c Gamma(m + g)/Gamma(m) (2 - 2^g) w^(-g)`` (relative corrections ``O(1/w)``), and the
analytic part ``D1 u + D2 u^2 + ...`` contributes exactly ``D1 (1 - A)^2`` (``A = E_rho t = 1 - m/w +
O(w^-2)``) plus ``-2 D2 m (m + 1) w^-2``: together ``b_an w^-2``, ``b_an = D1 m^2 - 2 D2 m (m + 1)``.
(``g = 1`` gives ``2 - 2^g = 0``: the linear term enters only through ``(1 - A)^2``.)

Hence, with ``gamma`` the smallest non-integer power of ``u`` in ``D`` (its coefficient ``c``):

* ``gamma < 2``: ``bias_inf = b w^-gamma (1 + k w^-q + ...)``, ``b = c Gamma(m+gamma)/Gamma(m) (2 - 2^gamma)``
  (positive for a valid kernel), ``beta = gamma``; next order ``q = 2 - gamma``, ``k = b_an/b`` when
  ``gamma > 1``; for ``gamma < 1`` the next order is ``q = 1`` (the curvature of the sphere and the next
  powers of ``D``), its coefficient not derived here;
* ``gamma > 2`` or ``D`` analytic: ``beta = 2``, ``b = b_an``; next order ``q = gamma - 2``,
  ``k = b_gamma/b_an`` when ``2 < gamma < 3``, else ``q = 1`` (coefficient not derived).

So ``beta = min(gamma, 2)``.  With the noise ``sigma^2 c_R w^m / n (1 + r_1/w)``
(:func:`lipschitz_icl.derivations.window_law.noise_leading`) the first-order condition gives
``w* = C (n/sigma^2)^alpha``, ``alpha = 1/(beta + m) = 2/(2 beta + d - 1)``,
``C = (beta b / (m c_R))^alpha``; the bias's next order shifts ``w*`` by the relative amount
``((beta + q)/beta) k w*^-q / (beta + m)`` and the noise's by ``-((m - 1)/m) r_1 / (w* (beta + m))``
(the finite-``n`` part of the bias, ``O(w^(m - beta)/n)``, is of relative order ``w^-beta`` against
the noise and is not included: the rule's margin must cover it).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import window_law

__all__ = ["Regularity", "gap_series", "regularity", "regularity_of_kernel"]

_U = sp.Symbol("u", positive=True)
_T = sp.Symbol("t")
ORDER = 4   # powers of u up to u^ORDER are examined


def gap_series(k_expr) -> dict:
    """``{power: coefficient}`` of ``D(u) = K(1) - K(1 - u)`` at ``u = 0`` (Puiseux series, powers below
    ``ORDER``), from the SymPy form of ``K`` in ``t``."""
    gap = k_expr.subs(_T, 1) - k_expr.subs(_T, 1 - _U)
    series = sp.expand(sp.series(gap, _U, 0, ORDER).removeO())
    out = {}
    for term in sp.Add.make_args(series):
        coeff, power = term.as_coeff_exponent(_U)
        if power != 0 and coeff != 0:
            out[sp.nsimplify(power)] = out.get(sp.nsimplify(power), 0) + coeff
    return {p: sp.nsimplify(c) if c.is_Rational else c for p, c in out.items() if sp.simplify(c) != 0}


@dataclass(frozen=True)
class Regularity:
    """The derived law for one kernel and dimension (floats; exponents exact where rational)."""

    gamma: float | None      # leading non-integer power of D (None: none below ORDER, analytic)
    c: float | None
    beta: float              # bias power: bias_inf ~ b w^-beta
    b: float
    q: float                 # next order of the bias: relative k w^-q
    k: float | None          # None: not derived
    alpha: float             # w* ~ C (n/sigma^2)^alpha
    C: float
    m: float
    c_R: float
    r_1: float

    def wstar_next_order(self, w0: float) -> float | None:
        """Relative next-order shift of ``w*`` at the leading-order ``w0`` (module doc); where the bias's
        next-order coefficient is not derived only the noise's term (its order ``1/w``) is returned."""
        noise = -((self.m - 1) / self.m) * self.r_1 / (w0 * (self.beta + self.m))
        if self.k is None:
            return noise
        return ((self.beta + self.q) / self.beta) * self.k * w0 ** (-self.q) / (self.beta + self.m) + noise

    def bias_slope_next_order(self, w: float) -> float | None:
        """Next-order term of the local slope ``d log bias_inf / d log w + beta``: ``-q k w^-q``."""
        return None if self.k is None else -self.q * self.k * w ** (-self.q)


def _moment_factor(power, m):
    """``Gamma(m + g)/Gamma(m) (2 - 2^g)``: the weight of ``c u^g`` in ``bias_inf w^g``."""
    return sp.gamma(m + power) / sp.gamma(m) * (2 - 2**power)


def regularity(k_expr, d: int) -> Regularity:
    """The law of the module doc for the kernel ``k_expr`` (SymPy, in ``t``) on ``S^(d-1)``.  The series
    and the constants ``b``, ``b_an``, ``k`` are SymPy expressions, evaluated to 20 digits; the optimum
    (a power of a product) is then formed in floats."""
    m = sp.Rational(d - 1, 2)
    terms = gap_series(k_expr)
    rough = sorted(p for p in terms if not p.is_integer)
    D1, D2 = terms.get(sp.Integer(1), 0), terms.get(sp.Integer(2), 0)
    b_an = _f(D1 * m**2 - 2 * D2 * m * (m + 1))
    gamma = rough[0] if rough else None
    c = terms[gamma] if rough else None
    b_gamma = _f(c * _moment_factor(gamma, m)) if rough else None
    if gamma is not None and gamma < 2:
        beta, b = gamma, b_gamma
        q, k = (2 - gamma, b_an / b_gamma) if gamma > 1 else (sp.Integer(1), None)
    else:
        beta, b = sp.Integer(2), b_an
        if gamma is not None and gamma < 3:
            q, k = gamma - 2, b_gamma / b_an
        else:
            q, k = sp.Integer(1), None
    if not b > 0:
        raise ValueError(f"derived bias constant b = {b} is not positive: not a valid covariance?")
    _, c_R = window_law.noise_leading(d)
    r_1 = window_law.noise_next_order(d)
    beta, mf = _f(beta), _f(m)
    alpha = 1.0 / (beta + mf)
    C = (beta * b / (mf * c_R)) ** alpha
    return Regularity(None if gamma is None else _f(gamma), None if c is None else _f(c), beta, b, _f(q), k,
                      alpha, C, mf, float(c_R), float(r_1))


def _f(x) -> float:
    return float(sp.N(x, 20))


def regularity_of_kernel(kernel) -> Regularity:
    """:func:`regularity` of a :class:`lipschitz_icl.zonal.ZonalKernel` (its ``sympy`` form)."""
    if kernel.sympy is None:
        raise ValueError(f"kernel {kernel.name!r} has no symbolic form (a Python callable)")
    return regularity(kernel.sympy, kernel.d)
