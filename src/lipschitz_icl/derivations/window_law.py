"""The window law of Theorem 3.4: leading bias and noise, the optimal ``w`` and the minimal ICL error.

Paper: Theorem 3.4 (``w_KQ`` is a power of ``n L^2 / sigma^2``), built on the bias/variance bounds of
Lemmas C.3-C.9 and Assumption B.4 (registry: thm34.window-law, thm34.bias-noise).  The paper bounds the optimum between
powers; here the project's *exact* definitions give the exponent and the constant, at leading order.

Setting (``M = w I``, query ``q``, ``t_i = x_i . q``, softmax weights ``p_i``, ``n`` context points):

* noise part     ``sigma^2 E sum_i p_i^2 = sigma^2 R_d(w)/n + O(1/n^2)``,  ``R_d = Phi_d(2w)/Phi_d(w)^2``;
* affine bias    ``(L^2/(3d)) E[(sum_i p_i t_i - 1)^2 + sum_i p_i^2 (1 - t_i^2)]``,
                 limit ``n -> inf``: ``bias_inf(w) = (L^2/(3d)) (1 - A_d(w))^2``;
* relu bias      ``(2L^2/3) E_c E[(sum_i p_i h_i)^2]``, ``h_i = (u.x_i)_+ - c_+``, ``c = u.q ~ p_d``,
                 limit ``bias_inf(w) = (2L^2/3) E_c[r(c)^2]``, ``r(c) = E_w[(u.x)_+] - c_+``, where
                 ``u.x = c t + sqrt(1-c^2) sqrt(1-t^2) z``, ``t`` tilted, ``z ~ p_{d-1}``.

Derived here (SymPy; ``a = (d-1)/2`` is the ``1/w`` coefficient of ``1 - A_d``, from
:mod:`lipschitz_icl.derivations.sphere_asymptotics`):

* affine: ``bias_inf(w) = (L^2/(3d)) ((d-1)/(2w))^2 (1 + O(1/w))``  -- power ``-2``.
* relu:   ``bias_inf(w) = C_b(d) L^2 w^(-3/2) (1 + kappa(d) w^(-1/2) + O(1/w))``,
  ``C_b(d) = (2/3) p_d(0) J``, ``J = int_R (gamma Phi(gamma) + phi(gamma) - gamma_+)^2 dgamma
  = (2 - sqrt 2)/(3 sqrt pi)``, ``p_d(0) = Gamma(d/2)/(sqrt(pi) Gamma((d-1)/2))``.
  The kink: for ``c = gamma/sqrt(w)`` the window sees ``u.x = (gamma + g)/sqrt(w) + O(1/w^(3/2))``
  with ``g`` standard normal (the tilted law of ``sqrt(w) sqrt(1-t^2) z`` is Gaussian up to relative
  ``O(1/w)``), so ``r = w^(-1/2) psi(gamma) (1 + O(1/w))``, ``psi = E(gamma+g)_+ - gamma_+``, and this
  region of width ``w^(-1/2)`` in ``c`` gives ``p_d(0) J w^(-3/2)``.  Away from the kink
  (``c >> w^(-1/2)``) ``r = c (A_d - 1)``, which gives the next order
  ``(2/3) a^2 int_0^1 c^2 p_d(c) dc w^(-2) = (d-1)^2/(12 d) w^(-2)`` (the overlap of the two regions
  contributes ``O(w^(-5/2))``).
* noise: ``sigma^2 c_R(d) w^((d-1)/2) / n``, ``c_R(d) = sqrt(pi)/(Gamma(d/2) 2^(d-2))``.
* with ``bias = b L^2 w^(-p)``, the first-order condition of ``bias + noise`` gives
  ``w* = C rho^alpha``, ``rho = n L^2 / sigma^2``, ``alpha = 1/(p + (d-1)/2)``,
  ``C = (2 p b / ((d-1) c_R))^alpha``; the minimal error ``E* = K L^2 rho^(-p alpha)``,
  ``K = b C^(-p) + c_R C^((d-1)/2) = b C^(-p) (1 + 2p/(d-1))``.  Per class (the tests check that these
  readable forms equal the derived expressions):

      affine: alpha = 2/(d+3),  C = ((d-1) 2^(d-2) Gamma(d/2) / (3 d sqrt(pi)))^(2/(d+3)),
              E* ~ K L^2 rho^(-4/(d+3)),  K = (d-1)(d+3)/(12 d) C^(-2)
      relu:   alpha = 2/(d+2),  C = (2 (2 - sqrt 2) 2^(d-2) Gamma(d/2)^2 / (3 pi^(3/2) (d-1) Gamma((d-1)/2)))^(2/(d+2)),
              E* ~ K L^2 rho^(-3/(d+2)),  K = C_b(d) (d+2)/(d-1) C^(-3/2)

  i.e. the error decays as ``n^(-4/(d+3))`` (affine) and ``n^(-3/(d+2))`` (relu) at fixed ``L, sigma``.

Including the next orders in ``1/w`` (but not the finite-``n`` terms), the exact minimiser of
``bias_inf + sigma^2 R_d/n`` is ``w* = w0 (1 + k(d) w0^-q + ...)``, ``w0 = C rho^alpha``, with ``q = 1``
(affine) and ``q = 1/2`` (relu): :func:`wstar_correction_expr`.  The relu window law is therefore
approached slowly: the relative error of ``C rho^alpha`` is ``~ k w0^(-1/2)``.

Dropped terms (reported at ``w*`` by :func:`dropped_terms`):

1. the next order in ``1/w`` of the bias (affine: relative ``O(1/w)``; relu: ``kappa w^(-1/2)``);
2. the next order in ``1/w`` of ``R_d`` (relative ``r_1(d)/w``);
3. the ``O(1/n)`` part of the bias at finite ``n`` (delta method on the ratio ``sum e_i h_i / sum e_i``):
   ``(R_d/n) E_task[E_{2w} h^2 - 4 E_w h E_{2w} h + 3 (E_w h)^2]``, at leading order
   ``(L^2/(3d)) c_R a w^((d-3)/2) / n`` for both classes (the "label spread inside the window");
4. the ``O(1/n^2)`` part of the noise: ``sigma^2 (3 R_d^2 - 2 Phi_d(3w)/Phi_d(w)^3 - R_d)/n^2``.

Terms 3 and 4 are relative ``O(R_d(w*)/n)``, i.e. one over the number of points in the window; they
depend on ``n`` and ``L^2/sigma^2`` separately, not only on ``rho``.

``exact_*`` functions are the unexpanded quantities (mpmath at the working precision, and a float64
vectorised quadrature for the relu class used to solve the first-order condition quickly); the tests
compare every expansion above against them.
"""

from __future__ import annotations

import itertools
from functools import cache

import mpmath
import numpy as np
import sympy as sp
from scipy import special

from lipschitz_icl import quadrature
from lipschitz_icl.derivations import sphere_asymptotics as S
from lipschitz_icl.derivations.writeup import Document, Formula, Step, Table

__all__ = [
    "TASKS",
    "check_task",
    "w",
    "d",
    "L",
    "sigma",
    "n",
    "rho",
    "density_at_zero",
    "half_moment",
    "perp_second_moment",
    "gaussian_hinge_mean",
    "kink_integral",
    "bias_expansion",
    "bias_leading_expr",
    "bias_next_order_expr",
    "noise_leading_expr",
    "optimum_exprs",
    "delta_method_bias_correction",
    "delta_method_noise_correction",
    "bias_finite_n_leading_expr",
    "noise_finite_n_leading_expr",
    "bias_leading",
    "bias_leading_exact",
    "bias_next_order",
    "noise_leading",
    "noise_leading_exact",
    "noise_next_order",
    "window_law",
    "cosine_bias_leading_expr",
    "cosine_bias_leading",
    "min_error_law",
    "theory_table",
    "wstar_correction_expr",
    "wstar_correction",
    "bias_finite_n_leading",
    "noise_finite_n_leading",
    "dropped_terms",
    "z_average",
    "exact_bias_inf",
    "exact_bias_inf_dw",
    "exact_bias_inf_relu_float",
    "exact_foc_wstar",
    "document",
]

TASKS = ("affine", "relu")

w, d = S.w, S.d
L, sigma, n, rho = sp.symbols("L sigma n rho", positive=True)
_gam = sp.Symbol("gamma", real=True)
_g = sp.Symbol("g", real=True)
_xp = sp.Symbol("xi", positive=True)


def check_task(task: str) -> str:
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    return task


def _check_dim(dim) -> int:
    if int(dim) != dim or dim < 2:
        raise ValueError(f"d must be an integer >= 2, got {dim!r}")
    return int(dim)


# --- the law of c = u.q and of z ----------------------------------------------------------------------


def _density(var, dim=d):
    """``p_dim(var)``, the project's density of ``x . q`` on ``S^{dim-1}``."""
    a = (dim - 1) / sp.S(2)
    return (1 - var**2) ** ((dim - 3) / sp.S(2)) / (2 ** (dim - 2) * sp.beta(a, a))


@cache
def density_at_zero() -> sp.Expr:
    """``p_d(0) = 1/(2^(d-2) B((d-1)/2, (d-1)/2)) = Gamma(d/2)/(sqrt(pi) Gamma((d-1)/2))``."""
    return sp.simplify(sp.gammasimp(sp.combsimp(_density(0).rewrite(sp.gamma))))


@cache
def half_moment(k: int) -> sp.Expr:
    """``int_0^1 c^k p_d(c) dc``: with ``v = c^2`` it is Euler's Beta integral
    ``(1/2) int_0^1 v^((k-1)/2) (1-v)^((d-3)/2) dv = B((k+1)/2, (d-1)/2)/2``, over ``2^(d-2) B((d-1)/2, (d-1)/2)``."""
    a = (d - 1) / 2
    expr = sp.beta(sp.Rational(k + 1, 2), a) / 2 / (2 ** (d - 2) * sp.beta(a, a))
    return sp.simplify(sp.gammasimp(sp.combsimp(expr.rewrite(sp.gamma))))


@cache
def perp_second_moment() -> sp.Expr:
    """``E z^2`` for ``z ~ p_{d-1}`` (the direction of ``x`` orthogonal to ``q``): the ratio of the Beta
    integrals ``int_{-1}^1 z^2 (1-z^2)^m dz = B(3/2, m+1)`` and ``int_{-1}^1 (1-z^2)^m dz = B(1/2, m+1)``,
    ``m = (d-4)/2``; it is ``1/(d-1)``."""
    m = (d - 4) / 2
    ratio = sp.beta(sp.Rational(3, 2), m + 1) / sp.beta(sp.Rational(1, 2), m + 1)
    return sp.simplify(sp.expand_func(sp.gammasimp(ratio.rewrite(sp.gamma))))


# --- the relu kink ------------------------------------------------------------------------------------


def _normal_pdf(var):
    return sp.exp(-(var**2) / 2) / sp.sqrt(2 * sp.pi)


def _normal_tail(var):
    """``1 - Phi(var)``."""
    return sp.erfc(var / sp.sqrt(2)) / 2


@cache
def gaussian_hinge_mean() -> sp.Expr:
    """``H(gamma) = E (gamma + g)_+ = int_{-gamma}^inf (gamma + g) phi(g) dg = gamma Phi(gamma) + phi(gamma)``."""
    expr = sp.integrate((_gam + _g) * _normal_pdf(_g), (_g, -_gam, sp.oo))
    return sp.simplify(expr.rewrite(sp.erfc))


class DerivationError(ArithmeticError):
    """A step of a symbolic derivation did not simplify to what it must."""


def _require_zero(expr, what: str):
    if sp.simplify(expr) != 0:
        raise DerivationError(f"{what}: residual {expr} is not 0")


@cache
def kink_integral() -> sp.Expr:
    """``J = int_R psi(gamma)^2 dgamma``, ``psi(gamma) = H(gamma) - gamma_+`` (the relu kink profile).

    Steps, each done symbolically: (i) ``psi`` is even: ``H(-xi) = H(xi) - xi`` for ``xi > 0`` (checked),
    so ``J = 2 int_0^inf psi_+^2`` with ``psi_+(xi) = H(-xi) = E (g - xi)_+``; (ii) with ``g, g'`` i.i.d.
    standard normal, ``psi_+(xi)^2 = E (g - xi)_+ (g' - xi)_+`` and by Fubini and the symmetry
    ``g <-> g'``, ``J = 4 E[F(g, g') 1{0 < g' < g}]``, ``F = int_0^{g'} (g - xi)(g' - xi) dxi``;
    (iii) ``F`` is a cubic form, so in polar coordinates (``g = r cos theta``, ``g' = r sin theta``,
    ``0 < theta < pi/4``) the expectation is a Gamma integral in ``r`` times a trigonometric one.
    Result: ``J = (2 - sqrt 2)/(3 sqrt pi)``.
    """
    H = gaussian_hinge_mean()
    _require_zero(H.subs(_gam, -_xp) - (H.subs(_gam, _xp) - _xp), "psi is even")
    g1, g2, r = sp.symbols("g1 g2 r", positive=True)
    th = sp.Symbol("theta", positive=True)
    F = sp.integrate((g1 - _xp) * (g2 - _xp), (_xp, 0, g2))
    F_polar = sp.simplify(F.subs({g1: r * sp.cos(th), g2: r * sp.sin(th)}))
    radial = sp.integrate(F_polar * sp.exp(-(r**2) / 2) / (2 * sp.pi) * r, (r, 0, sp.oo))
    angular = sp.integrate(sp.expand(sp.simplify(radial)), (th, 0, sp.pi / 4))
    return sp.simplify(4 * angular)


# --- expansions of the bias and the noise -------------------------------------------------------------


@cache
def bias_expansion(task: str, order: int = 2) -> sp.Expr:
    """``bias_inf(w)/L^2`` expanded for large ``w``.

    affine: ``(1/(3d)) (1 - A_d)^2`` with the series of ``1 - A_d`` (terms to ``w^-(order+1)``).
    relu: ``(2/3) [p_d(0) J w^(-3/2) + a^2 (int_0^1 c^2 p_d) w^(-2)]`` (kink + smooth part; the
    ``O(w^(-5/2))`` remainder is dropped; ``order`` is ignored).
    """
    check_task(task)
    one_minus_a = S.one_minus_tilted_mean_series(order)
    if task == "affine":
        return S.truncate(sp.expand(one_minus_a**2 / (3 * d)), order + 1)
    a = one_minus_a.subs(w, 1 / S.x).expand().coeff(S.x, 1)
    return sp.Rational(2, 3) * (
        density_at_zero() * kink_integral() * w ** sp.Rational(-3, 2) + a**2 * half_moment(2) * w ** (-2)
    )


def _collect_powers(expr) -> dict:
    """``{power: coefficient(d)}`` for a finite sum of ``coefficient(d) * w**power`` terms."""
    out: dict = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, power = term.as_coeff_exponent(w)
        if coeff.has(w):
            raise DerivationError(f"{term} is not of the form f(d) w^p")
        out[power] = sp.factor(sp.simplify(out.get(power, 0) + coeff))
    return {p: c for p, c in out.items() if c != 0}


@cache
def bias_leading_expr(task: str):
    """``(p, b(d))`` with ``bias_inf(w) ~ b(d) L^2 w^(-p)``: affine ``(2, (d-1)^2/(12 d))``, relu
    ``(3/2, (2/3) p_d(0) J)``."""
    powers = _collect_powers(bias_expansion(task))
    top = max(powers, key=float)
    return -top, powers[top]


@cache
def bias_next_order_expr(task: str):
    """``(p', b'(d))``: the next term ``b'(d) L^2 w^(-p')`` of ``bias_inf``."""
    powers = _collect_powers(bias_expansion(task))
    second = sorted(powers, key=float)[-2]
    return -second, powers[second]


_k = sp.Symbol("k", positive=True)  # frequency of the cosine class


def _one_over_w_coefficient(series) -> sp.Expr:
    """The ``1/w`` coefficient of a series in ``1/w``."""
    return sp.simplify(series.subs(w, 1 / S.x).expand().coeff(S.x, 1))


@cache
def cosine_bias_leading_expr():
    """``(p, b(d, k))`` with ``bias_inf(w) ~ b L^2 w^(-p)`` for the cosine class
    ``f(x) = (L/k) cos(k u.x + phi)`` (a smooth class, so ``p = 2`` as for affine tasks).

    The tilted law of ``x`` (``t = x.q``) moves the mean radially, ``E x - q = -(1 - A_d) q``, and spreads it
    tangentially, ``P E[(x - q)(x - q)^T] P = E[1 - t^2] P/(d-1)`` (``P`` the projection off ``q``), with
    ``1 - A_d = a/w + ...`` and ``E[1 - t^2] = s/w + ...`` (``a``, ``s`` from
    :mod:`lipschitz_icl.derivations.sphere_asymptotics`; ``s = 2a = d - 1``).  Higher Taylor terms are
    ``O(w^-2)`` (odd tangential moments vanish), so for a smooth task
    ``E_w f(x) - f(q) = -(a/w) q.grad f + (s/(2(d-1) w)) tr(P H P) + O(w^-2)`` (``Delta_S f(q)/(2w)``).
    For the cosine task, with ``c = u.q`` and ``theta = k c + phi``: ``q.grad f = -L c sin theta``,
    ``tr(P H P) = -L k (1 - c^2) cos theta``.  The square averaged over ``phi`` (``E sin^2 = E cos^2 = 1/2``,
    ``E sin cos = 0``) and over ``c ~ p_d`` gives
    ``b = (1/2) [a^2 E c^2 + (s k/(2(d-1)))^2 E(1 - c^2)^2] = (d-1)/(8d) [(d-1) + k^2 (d+1)/(d+2)]``.
    """
    a = _one_over_w_coefficient(S.one_minus_tilted_mean_series(1))
    s = _one_over_w_coefficient(sp.expand(1 - S.second_moment_series(1)))
    m2, m4 = 2 * half_moment(2), 2 * half_moment(4)  # E c^2, E c^4 (p_d is even)
    b = (a**2 * m2 + (s * _k / (2 * (d - 1))) ** 2 * (1 - 2 * m2 + m4)) / 2
    return sp.Integer(2), sp.factor(sp.simplify(b))


@cache
def noise_leading_expr():
    """``(beta, c_R(d))`` with ``sigma^2 R_d(w)/n ~ sigma^2 c_R(d) w^beta / n``, ``beta = (d-1)/2``."""
    series = S.collision_ratio_series(1)
    beta = (d - 1) / 2
    coeffs = S.series_coefficients(series, beta, 1)
    return beta, sp.simplify(coeffs[0])


@cache
def _noise_next_relative():
    """``r_1(d)`` in ``R_d = c_R w^((d-1)/2) (1 + r_1/w + ...)``."""
    beta, cr = noise_leading_expr()
    coeffs = S.series_coefficients(S.collision_ratio_series(1), beta, 1)
    return sp.factor(sp.simplify(coeffs[1] / cr))


# --- the optimum ----------------------------------------------------------------------------------------

_p, _b, _beta, _cr = sp.symbols("p b beta c_R", positive=True)


@cache
def _generic_optimum() -> dict:
    """The first-order condition of ``b L^2 w^(-p) + sigma^2 c_R w^beta / n`` for generic positive
    ``p, b, beta, c_R``, solved exactly.

    ``d/dw = -p b L^2 w^(-p-1) + beta sigma^2 c_R w^(beta-1)/n``; the two parts have opposite signs, so the
    root solves ``log(p b L^2) - (p+1) log w = log(beta sigma^2 c_R/n) + (beta-1) log w``, linear in
    ``log w``.  The objective tends to ``+inf`` at both ends, so this single critical point is the minimum.
    Returns ``alpha``, ``C`` (``w* = C rho^alpha``), ``gamma``, ``K`` (``E* = K L^2 rho^(-gamma)``).
    """
    lw = sp.Symbol("lw", real=True)
    bias = _b * L**2 * w ** (-_p)
    noise = sigma**2 * _cr * w**_beta / n
    t_bias, t_noise = sp.diff(bias, w), sp.diff(noise, w)
    eq = sp.expand_log(sp.log(-t_bias), force=True) - sp.expand_log(sp.log(t_noise), force=True)
    (lw_star,) = sp.solve(sp.expand(eq.subs(sp.log(w), lw)), lw)
    w_star = sp.exp(lw_star)
    ratio = sp.powsimp(sp.expand_power_base(sp.expand((-t_bias / t_noise).subs(w, w_star)), force=True), force=True)
    _require_zero(sp.simplify(ratio) - 1, "w* solves the first-order condition")
    log_w_rho = sp.expand(sp.expand_log(sp.log(w_star.subs(n, rho * sigma**2 / L**2)), force=True))
    alpha = sp.simplify(log_w_rho.coeff(sp.log(rho)))
    C = sp.simplify(sp.exp(sp.expand(log_w_rho - alpha * sp.log(rho))))
    e_star = (bias + noise).subs(w, C * rho**alpha).subs(n, rho * sigma**2 / L**2)
    e_over = sp.simplify(sp.powsimp(sp.expand(e_star / L**2), force=True))
    gamma = sp.simplify(-rho * sp.diff(sp.log(e_over), rho))
    K = sp.simplify(sp.powsimp(sp.expand(e_over * rho**gamma), force=True))
    return {"alpha": alpha, "C": C, "gamma": gamma, "K": K, "w_star": w_star}


@cache
def optimum_exprs(task: str) -> dict:
    """The window law of ``task`` as SymPy functions of ``d``: the generic optimum of
    :func:`_generic_optimum` with ``p, b`` from :func:`bias_leading_expr` and ``beta, c_R`` from
    :func:`noise_leading_expr`.  Keys ``alpha, C, gamma, K`` (and the inputs ``p, b, beta, c_R``)."""
    p, b = bias_leading_expr(check_task(task))
    beta, cr = noise_leading_expr()
    sub = {_p: p, _b: b, _beta: beta, _cr: cr}
    generic = _generic_optimum()
    out = {key: sp.simplify(generic[key].subs(sub)) for key in ("alpha", "gamma")}
    out.update({key: generic[key].subs(sub) for key in ("C", "K")})
    out.update({"p": p, "b": b, "beta": beta, "c_R": cr})
    return out


@cache
def envelope_law_exprs() -> dict:
    """A rival derivation: the window law a Lipschitz-envelope analysis gives.  Bounding the bias of any
    ``L``-Lipschitz task by its Jensen envelope ``L^2 E sum_i p_i ||x_i - q||^2 = 2 L^2 (1 - A_d(w))``,
    whose large-``w`` form is ``L^2 (d-1)/w`` (:func:`lipschitz_icl.derivations.sphere_asymptotics.
    one_minus_tilted_mean_series`: ``p = 1``, ``b = d - 1``), and balancing it against the same noise part
    gives ``alpha = 2/(d+1)`` -- the rate the window-law claim's data must tell apart from the classes'
    own laws (affine ``2/(d+3)``, relu ``2/(d+2)``).  Keys as :func:`optimum_exprs`."""
    leading = sp.limit(S.one_minus_tilted_mean_series(1) * w, w, sp.oo)
    p, b = sp.Integer(1), sp.simplify(2 * leading)
    beta, cr = noise_leading_expr()
    sub = {_p: p, _b: b, _beta: beta, _cr: cr}
    generic = _generic_optimum()
    out = {key: sp.simplify(generic[key].subs(sub)) for key in ("alpha", "gamma")}
    out.update({key: generic[key].subs(sub) for key in ("C", "K")})
    out.update({"p": p, "b": b, "beta": beta, "c_R": cr})
    return out


@cache
def _generic_wstar_shift() -> sp.Expr:
    """First-order shift of the minimiser when the leading terms get relative corrections:
    ``b L^2 w^-p (1 + kb w^-q) + N w^beta (1 + kn w^-1)``.  With ``w = w0 (1 + eps)``, ``w0`` the leading
    root, ``db = kb w0^-q`` and ``dn = kn w0^-1`` small, the first-order condition linearised in
    ``(eps, db, dn)`` gives ``eps = (1/(p + beta)) ((p + q)/p db - (beta - 1)/beta dn)``."""
    eps, db, dn, q, w0, B = sp.symbols("epsilon delta_b delta_n q w0 B", positive=True)
    N = _p * B * w0 ** (-_p - _beta) / _beta  # makes w0 the leading root
    total = B * w ** (-_p) * (1 + db * (w / w0) ** (-q)) + N * w**_beta * (1 + dn * (w / w0) ** (-1))
    foc = sp.diff(total, w).subs(w, w0 * (1 + eps)) * w0 ** (_p + 1) / B
    lin = sum(sp.diff(foc, v).subs({eps: 0, db: 0, dn: 0}) * v for v in (eps, db, dn))
    lin += foc.subs({eps: 0, db: 0, dn: 0})
    (sol,) = sp.solve(sp.expand(sp.simplify(lin)), eps)
    return sp.simplify(sol)


@cache
def wstar_correction_expr(task: str):
    """``(q, k(d))``: the exact-FOC minimiser of the (unexpanded) ``bias_inf + sigma^2 R_d/n`` is
    ``w* = w0 (1 + k w0^-q + ...)``, ``w0 = C rho^alpha`` (affine ``q = 1``, relu ``q = 1/2``), from
    :func:`_generic_wstar_shift` with the next-order bias (:func:`bias_next_order_expr`) and noise
    (``r_1``) coefficients; for relu the noise correction is ``O(w0^-1)``, beyond this order."""
    p, b = bias_leading_expr(check_task(task))
    p2, b2 = bias_next_order_expr(task)
    beta, _ = noise_leading_expr()
    q = p2 - p
    db, dn = sp.symbols("delta_b delta_n", positive=True)
    shift = _generic_wstar_shift().subs({_p: p, _beta: beta, sp.Symbol("q", positive=True): q})
    kb = sp.simplify(b2 / b)
    if q == 1:
        k = shift.subs({db: kb, dn: _noise_next_relative()})
    else:
        k = shift.subs({db: kb, dn: 0})
    return q, sp.factor(sp.simplify(k))


# --- the dropped finite-n terms (delta method) ----------------------------------------------------------


@cache
def delta_method_bias_correction() -> sp.Expr:
    """``n (E[(N/S)^2] - r_1^2)`` at order ``1/n``, ``N = sum_i e_i h_i``, ``S = sum_i e_i``, ``e = exp(w t)``.

    Second-order Taylor expansion of ``(a/b)^2`` about the means of ``a = N/n``, ``b = S/n``:
    ``E a = m1 r1``, ``E b = m1``, ``n Var a = m2 h2 - m1^2 r1^2``, ``n Cov(a, b) = m2 r2 - m1^2 r1``,
    ``n Var b = m2 - m1^2``, with ``m_k = Phi_d(k w)``, ``r_k = E_{kw}[h]``, ``h2 = E_{2w}[h^2]``.
    Result: ``(m2/m1^2) (h2 - 4 r1 r2 + 3 r1^2)`` (so the correction is ``R_d (...)/n``).
    """
    m1, m2, r1, r2, h2, a_, b_ = sp.symbols("m1 m2 r1 r2 h2 a b", positive=True)
    F = (a_ / b_) ** 2
    point = {a_: m1 * r1, b_: m1}
    var_a, cov, var_b = m2 * h2 - m1**2 * r1**2, m2 * r2 - m1**2 * r1, m2 - m1**2
    corr = (sp.diff(F, a_, 2) * var_a + 2 * sp.diff(F, a_, b_) * cov + sp.diff(F, b_, 2) * var_b) / 2
    return sp.factor(sp.simplify(corr.subs(point)))


@cache
def delta_method_noise_correction() -> sp.Expr:
    """``n (n E[sum_i p_i^2] - R_d)`` at order ``1/n``: with ``a = sum e_i^2/n``, ``b = S/n``,
    ``n sum p_i^2 = a/b^2``; ``n Var a = m4 - m2^2``, ``n Cov = m3 - m1 m2``, ``n Var b = m2 - m1^2``.
    Result: ``3 R^2 - 2 m3/m1^3 - R`` with ``R = m2/m1^2``."""
    m1, m2, m3, m4, a_, b_ = sp.symbols("m1 m2 m3 m4 a b", positive=True)
    F = a_ / b_**2
    point = {a_: m2, b_: m1}
    var_a, cov, var_b = m4 - m2**2, m3 - m1 * m2, m2 - m1**2
    corr = (sp.diff(F, a_, 2) * var_a + 2 * sp.diff(F, a_, b_) * cov + sp.diff(F, b_, 2) * var_b) / 2
    return sp.expand(sp.simplify(corr.subs(point)))


@cache
def bias_finite_n_leading_expr(task: str):
    """``(power, const)``: the ``O(1/n)`` bias term is ``const(d) L^2 w^power / n`` at leading order.

    ``R_d/n`` times the task average of ``h2 - 4 r1 r2 + 3 r1^2`` (:func:`delta_method_bias_correction`).
    affine (per ``l^2``, ``E_u (u.a)(u.b) = a.b/d``, ``E_w x = A_d(w) q``):
    ``(1/(3d)) [2 - 2 A(2w) - 4 (1 - A(w))(1 - A(2w)) + 3 (1 - A(w))^2]``.
    relu: away from the kink (``c > 0``) ``h = c (t - 1) + sqrt(1-c^2) sqrt(1-t^2) z`` and the ``r``
    terms are ``O(w^-2)``, so the average is ``(2/3) int_0^1 p_d (1 - c^2) dc E z^2 E_{2w}[1 - t^2]``;
    the kink region adds a relative ``O(w^(-1/2))``.
    """
    check_task(task)
    one_minus_a = S.one_minus_tilted_mean_series(2)
    if task == "affine":
        u1, u2 = one_minus_a, one_minus_a.subs(w, 2 * w)
        prefactor, bracket = 1 / (3 * d), 2 * u2 - 4 * u1 * u2 + 3 * u1**2
    else:
        prefactor = sp.Rational(2, 3) * (half_moment(0) - half_moment(2)) * perp_second_moment()
        bracket = 1 - S.second_moment_series(2).subs(w, 2 * w)
    beta, cr = noise_leading_expr()
    in_x = sp.expand(bracket.subs(w, 1 / S.x))  # a polynomial in x = 1/w with coefficients polynomial in d
    if sp.simplify(in_x.coeff(S.x, 0)) != 0:
        raise DerivationError("the finite-n bias bracket must vanish as w -> inf")
    coeff = sp.simplify(prefactor * in_x.coeff(S.x, 1))
    if coeff == 0:
        raise DerivationError("the finite-n bias bracket has no 1/w term")
    return beta - 1, sp.factor(sp.simplify(cr * coeff))


@cache
def noise_finite_n_leading_expr():
    """``(power, const)``: the ``O(1/n^2)`` noise term is ``sigma^2 const(d) w^power / n^2``, from
    ``3 R^2 - 2 Phi(3w)/Phi(w)^3`` at leading order (``power = d - 1``; ``- R`` is lower order)."""
    lead2 = S.phi_power_ratio_leading(2)
    lead3 = S.phi_power_ratio_leading(3)
    expr = sp.expand(3 * lead2**2 - 2 * lead3)
    power = d - 1
    return power, sp.simplify(sp.powsimp(sp.expand(expr / w**power), force=True))


# --- plain-float interface ----------------------------------------------------------------------------


def _f(expr, dim) -> float:
    return float(sp.N(sp.sympify(expr).subs(d, dim), 20))


@cache
def bias_leading(task: str, dim: int):
    """``(power, constant)``: ``bias_inf(w) ~ constant * L^2 * w**power`` (``power < 0``)."""
    p, b = bias_leading_expr(check_task(task))
    return -float(p), _f(b, _check_dim(dim))


@cache
def bias_leading_exact(task: str, dim: int) -> tuple[str, str]:
    """``(p, b_d)`` of :func:`bias_leading` as exact expressions in the bound language of
    :mod:`lipschitz_icl.expression` (``bias_inf ~ b_d L^2 w^-p``): affine at ``d = 3`` ``("2", "1/9")``,
    relu ``("3/2", "(2 - sqrt(2))/(9*sqrt(pi))")``; for bounds a prover certifies exactly."""
    p, b = bias_leading_expr(check_task(task))
    return str(sp.simplify(p)), str(sp.simplify(b.subs(d, _check_dim(dim))))


@cache
def bias_next_order(task: str, dim: int):
    """``(power, constant)`` of the next term of ``bias_inf`` (affine ``w^-3``, relu ``w^-2``)."""
    p, b = bias_next_order_expr(check_task(task))
    return -float(p), _f(b, _check_dim(dim))


@cache
def cosine_bias_leading(dim: int, frequency: float = 1.0):
    """``(power, constant)``: ``bias_inf(w) ~ constant * L^2 * w**power`` for the cosine class of frequency
    ``k`` (:func:`cosine_bias_leading_expr`)."""
    p, b = cosine_bias_leading_expr()
    if not frequency > 0:
        raise ValueError(f"frequency must be > 0, got {frequency!r}")
    return -float(p), float(sp.N(b.subs({d: _check_dim(dim), _k: frequency}), 20))


@cache
def noise_leading(dim: int):
    """``(power, constant)``: ``sigma^2 E sum p_i^2 ~ constant * sigma^2 * w**power / n``."""
    beta, cr = noise_leading_expr()
    dim = _check_dim(dim)
    return _f(beta, dim), _f(cr, dim)


@cache
def noise_leading_exact(dim: int) -> tuple[str, str]:
    """``(beta, c_R)`` of :func:`noise_leading` as exact expressions in the bound language (``d = 2``:
    ``("1/2", "sqrt(pi)")``)."""
    beta, cr = noise_leading_expr()
    dim = _check_dim(dim)
    return str(sp.simplify(beta.subs(d, dim))), str(sp.simplify(cr.subs(d, dim)))


@cache
def noise_next_order(dim: int) -> float:
    """``r_1(d)``: ``R_d(w) = c_R w^((d-1)/2) (1 + r_1/w + O(1/w^2))``."""
    return _f(_noise_next_relative(), _check_dim(dim))


@cache
def envelope_law(dim: int):
    """``(alpha, C)`` of the rival envelope law (:func:`envelope_law_exprs`): ``alpha = 2/(d+1)``."""
    o = envelope_law_exprs()
    dim = _check_dim(dim)
    return _f(o["alpha"], dim), _f(o["C"], dim)


@cache
def window_law(task: str, dim: int):
    """``(alpha, C)``: ``w* ~ C (n L^2 / sigma^2)**alpha`` at leading order."""
    o = optimum_exprs(check_task(task))
    dim = _check_dim(dim)
    return _f(o["alpha"], dim), _f(o["C"], dim)


@cache
def wstar_correction(task: str, dim: int):
    """``(q, k)``: ``w*_exact-FOC = C rho^alpha (1 + k (C rho^alpha)^-q + ...)``."""
    q, k = wstar_correction_expr(check_task(task))
    return float(q), _f(k, _check_dim(dim))


@cache
def min_error_law(task: str, dim: int):
    """``(power_in_n, constant)``: the minimal ICL error ``E* ~ constant * L^2 * (n L^2/sigma^2)**power_in_n``
    (so ``E* ~ n**power_in_n`` at fixed ``L, sigma``; ``power_in_n < 0``)."""
    o = optimum_exprs(check_task(task))
    dim = _check_dim(dim)
    return -_f(o["gamma"], dim), _f(o["K"], dim)


@cache
def bias_finite_n_leading(task: str, dim: int):
    """``(power, constant)``: the ``O(1/n)`` bias term ``~ constant * L^2 * w**power / n``."""
    power, const = bias_finite_n_leading_expr(check_task(task))
    dim = _check_dim(dim)
    return _f(power, dim), _f(const, dim)


@cache
def noise_finite_n_leading(dim: int):
    """``(power, constant)``: the ``O(1/n^2)`` noise term ``~ constant * sigma^2 * w**power / n^2``."""
    power, const = noise_finite_n_leading_expr()
    dim = _check_dim(dim)
    return _f(power, dim), _f(const, dim)


def theory_table(dims=(2, 3, 5)) -> list:
    """One row per (task, d): every plain-float constant of this module, for reports and gates.

    Keys: ``task, d, alpha, C`` (``w* = C rho^alpha``), ``bias_power, bias_constant`` (per ``L^2``),
    ``bias_next_power, bias_next_constant``, ``noise_power, noise_constant`` (per ``sigma^2/n``),
    ``noise_r1``, ``min_error_power, min_error_constant`` (``E* = constant L^2 rho^power``),
    ``wstar_shift_power, wstar_shift_constant`` (``w* = C rho^alpha (1 + k w0^-q)``),
    ``bias_finite_n_power, bias_finite_n_constant``, ``noise_finite_n_power, noise_finite_n_constant``.
    """
    rows = []
    for task in TASKS:
        for dim in dims:
            row = {"task": task, "d": int(dim)}
            row["alpha"], row["C"] = window_law(task, dim)
            row["bias_power"], row["bias_constant"] = bias_leading(task, dim)
            row["bias_next_power"], row["bias_next_constant"] = bias_next_order(task, dim)
            row["noise_power"], row["noise_constant"] = noise_leading(dim)
            row["noise_r1"] = noise_next_order(dim)
            row["min_error_power"], row["min_error_constant"] = min_error_law(task, dim)
            row["wstar_shift_power"], row["wstar_shift_constant"] = wstar_correction(task, dim)
            row["bias_finite_n_power"], row["bias_finite_n_constant"] = bias_finite_n_leading(task, dim)
            row["noise_finite_n_power"], row["noise_finite_n_constant"] = noise_finite_n_leading(dim)
            rows.append(row)
    return rows


def dropped_terms(task: str, dim: int, rho_value: float, n_value: float) -> dict:
    """Relative size, at the leading-order ``w* = C rho^alpha``, of each term the window law drops.

    Each entry is |dropped term| / (leading bias + leading noise) at ``w*``, with ``L^2 = rho sigma^2 / n``
    (the ratios depend on ``rho = n L^2/sigma^2`` and on ``n`` separately through the finite-``n``
    terms).  Keys: ``bias_next_order_in_w``, ``noise_next_order_in_w``, ``bias_finite_n``,
    ``noise_finite_n``, ``max``; also ``w_star`` and ``window_count = n / R_d(w*)`` (the effective number
    of context points in the window; the finite-``n`` terms are relative ``O(1/window_count)``).
    A gate can require ``max`` below its tolerance before comparing numerics with the asymptotics.
    """
    task, dim = check_task(task), _check_dim(dim)
    rho_value, n_value = float(rho_value), float(n_value)
    if not (rho_value > 0 and n_value >= 1):
        raise ValueError("rho must be > 0 and n >= 1")
    alpha, C = window_law(task, dim)
    ws = C * rho_value**alpha
    sig2 = 1.0
    L2 = rho_value * sig2 / n_value
    pb, cb = bias_leading(task, dim)
    pn, cn = noise_leading(dim)
    bias = cb * L2 * ws**pb
    noise = cn * sig2 * ws**pn / n_value
    total = bias + noise
    p2, c2 = bias_next_order(task, dim)
    pf, cf = bias_finite_n_leading(task, dim)
    pq, cq = noise_finite_n_leading(dim)
    out = {
        "bias_next_order_in_w": abs(c2 * L2 * ws**p2) / total,
        "noise_next_order_in_w": abs(noise * noise_next_order(dim) / ws) / total,
        "bias_finite_n": abs(cf * L2 * ws**pf / n_value) / total,
        "noise_finite_n": abs(cq * sig2 * ws**pq / n_value**2) / total,
    }
    out["max"] = max(out.values())
    q, k = wstar_correction(task, dim)
    out["w_star_shift"] = abs(k) * ws ** (-q)  # relative shift of the minimiser from the 1/w terms
    out["w_star"] = ws
    out["window_count"] = n_value / (cn * ws**pn)
    return out


# --- exact references ------------------------------------------------------------------------------------


@cache
def _z_average_expr(dim: int):
    al, be, z, z0 = (
        sp.Symbol("alpha", real=True),
        sp.Symbol("beta", positive=True),
        sp.Symbol("z", real=True),
        sp.Symbol("z0", real=True),
    )
    if dim == 2:  # z is a Rademacher sign
        expr = (al + be) / 2
    else:
        pz = _density(z, dim - 1)
        F = sp.integrate((al + be * z) * pz, z)
        expr = sp.simplify((F.subs(z, 1) - F.subs(z, z0)).subs(z0, -al / be))
    return al, be, sp.simplify(expr.rewrite(sp.gamma))


def z_average(dim: int) -> sp.Expr:
    """``G_d(alpha, beta) = E_z (alpha + beta z)_+`` for ``|alpha| < beta`` (``z ~ p_{d-1}``; Rademacher
    for ``d = 2``); it is ``alpha`` for ``alpha >= beta`` and ``0`` for ``alpha <= -beta``."""
    return _z_average_expr(_check_dim(dim))[2]


@cache
def _z_average_fn(dim: int, module: str):
    al, be, expr = _z_average_expr(dim)
    return sp.lambdify((al, be), expr, modules=module)


# The relu bias at finite w is a nested integral: outer over c = u.q (density p_d), inner over the polar
# angle theta of x about q (tilted density exp(w (cos theta - 1)) sin^(d-2) theta) of the z-average G_d.
# Panels: in c, break at 0 (the kink of c_+) and at a few window widths h = 1/sqrt(w); in theta, break at
# a few widths and at theta_0 = asin|c|, pi - theta_0, where |alpha| = beta and G_d - alpha (or G_d)
# behaves like a power (beta - |alpha|)^(d/2).  On every panel the Gauss-Legendre variable s in [0, 1] is
# mapped through q(s) = 3 s^2 - 2 s^3 (q' = 6 s (1 - s) vanishes at both ends), which turns those
# endpoint powers (and the (1 - c^2)^(-1/2) of p_2) into smooth integrands: the rule then converges
# geometrically in the number of nodes.  The tilted law is truncated at theta_max (mass beyond it below
# 10^-(digits+10) of the total); for |c| > sin theta_max, r(c) = c (A_d - 1) (c > 0) or 0 (c < 0) up to
# that truncation, and that part of the outer integral is done in closed form (incomplete Beta).

_WIDTHS = (0.5, 1, 2, 4, 8)


def _truncation(wv, digits, lib):
    T = (digits + 10) * lib.log(10)
    th_max = lib.pi if T / wv >= 2 else lib.acos(1 - T / wv)
    s = lib.sin(th_max) if th_max < lib.pi / 2 else 1
    return th_max, s


def _c_edges(h, s):
    inner = [k * h for k in _WIDTHS if k * h < s]
    return sorted({-s, 0 * s, s} | set(inner) | {-q for q in inner})


def _theta_edges(h, th0, th_max, lib):
    cand = [0 * th_max] + [k * h for k in _WIDTHS] + [th0, lib.pi - th0, th_max]
    return sorted({min(max(e, 0 * th_max), th_max) for e in cand})


def _mapped_rule(xs, ws, edges):
    """Nodes and weights of ``sum_panels int_a^b`` with ``x = a + (b - a) q(s)``, ``q = 3s^2 - 2s^3``."""
    nodes, weights = [], []
    for a, b in itertools.pairwise(edges):
        if b <= a:
            continue
        for x_, w_ in zip(xs, ws):
            nodes.append(a + (b - a) * (3 * x_**2 - 2 * x_**3))
            weights.append((b - a) * 6 * x_ * (1 - x_) * w_)
    return nodes, weights


@cache
def _gl01_mp(m: int, prec: int):
    with mpmath.workprec(prec):
        X, Wt = mpmath.gauss_quadrature(m, "legendre")
        return [(1 + X[i]) / 2 for i in range(m)], [Wt[i] / 2 for i in range(m)]


def _relu_bias_mp(dim: int, wv, m: int, with_derivative: bool):
    G = _z_average_fn(dim, "mpmath")
    xs, ws = _gl01_mp(m, mpmath.mp.prec)
    th_max, s = _truncation(wv, mpmath.mp.dps, mpmath)
    h = 1 / mpmath.sqrt(wv)
    a_half = mpmath.mpf(dim - 1) / 2
    norm = 2 ** (dim - 2) * mpmath.beta(a_half, a_half)
    val = der = mpmath.mpf(0)
    c_nodes, c_weights = _mapped_rule(xs, ws, _c_edges(h, s))
    for c, wc in zip(c_nodes, c_weights):
        sc = mpmath.sqrt(1 - c * c)
        th0 = mpmath.asin(abs(c))
        t_nodes, t_weights = _mapped_rule(xs, ws, _theta_edges(h, th0, th_max, mpmath))
        Z = sA = m1 = mt = mpmath.mpf(0)
        for th, wt in zip(t_nodes, t_weights):
            ct, st = mpmath.cos(th), mpmath.sin(th)
            mass = wt * mpmath.exp(wv * (ct - 1)) * st ** (dim - 2)
            al, be = c * ct, sc * st
            g = al if al >= be else (mpmath.mpf(0) if al <= -be else G(al, be))
            Z += mass
            sA += mass * ct
            m1 += mass * g
            mt += mass * g * ct
        r = m1 / Z - max(c, 0)
        pc = (1 - c * c) ** ((dim - 3) / mpmath.mpf(2)) / norm
        val += wc * pc * r * r
        if with_derivative:
            der += wc * pc * 2 * r * (mt / Z - (sA / Z) * (m1 / Z))
    tail = mpmath.betainc(mpmath.mpf(3) / 2, a_half, s * s, 1) / (2 * norm) if s < 1 else 0
    A = S.exact_tilted_mean(dim, wv)
    val = (val + (1 - A) ** 2 * tail) * 2 / 3
    if not with_derivative:
        return val
    Ap = 1 - (dim - 1) * A / wv - A * A
    return val, (der - 2 * (1 - A) * Ap * tail) * 2 / 3


def exact_bias_inf(task: str, dim: int, wv, *, m: int = 24, with_derivative: bool = False):
    """``bias_inf(w)/L^2`` (and optionally its ``w``-derivative) at the current mpmath precision.

    affine: ``(1 - A_d(w))^2/(3d)`` with ``A_d = I_{d/2}/I_{d/2-1}``;
    derivative ``-(2/(3d)) (1 - A) A'``, ``A' = E_w t^2 - A^2 = 1 - (d-1) A/w - A^2``.
    relu: ``(2/3) int p_d(c) r(c)^2 dc``, ``r(c) = E_w[G_d(c t, sqrt(1-c^2) sqrt(1-t^2))] - c_+``
    (``G_d`` = :func:`z_average`), by the nested mapped Gauss-Legendre rule described above with ``m``
    nodes per panel; derivative ``(4/3) int p_d r dr/dw``, ``dr/dw = Cov_w(G_d, t)``.  The rule's error
    is checked in the tests by comparing ``m`` with a larger ``m``.
    """
    task, dim = check_task(task), _check_dim(dim)
    wv = mpmath.mpf(wv)
    if task == "relu":
        return _relu_bias_mp(dim, wv, m, with_derivative)
    A = S.exact_tilted_mean(dim, wv)
    val = (1 - A) ** 2 / (3 * dim)
    if not with_derivative:
        return val
    Ap = 1 - (dim - 1) * A / wv - A * A
    return val, -2 * (1 - A) * Ap / (3 * dim)


@cache
def _gl01_np(m: int):
    s_, w_ = quadrature.composite_rule(0.0, 1.0, m)
    return 3 * s_**2 - 2 * s_**3, 6 * s_ * (1 - s_) * w_


def exact_bias_inf_relu_float(dim: int, wv: float, *, m: int = 24, with_derivative: bool = False):
    """The relu ``bias_inf(w)/L^2`` (and ``d/dw``) in float64: the same rule as :func:`exact_bias_inf`
    (same panels, same map), vectorised over ``(c, theta)``; used to solve the first-order condition
    quickly.  Its agreement with the mpmath version is tested."""
    dim = _check_dim(dim)
    wv = float(wv)
    G = _z_average_fn(dim, "numpy")
    q, wq = _gl01_np(m)
    th_max, s = _truncation(wv, 16, np)
    h = 1 / np.sqrt(wv)
    ce = np.array(_c_edges(h, s))
    c = (ce[:-1, None] + (ce[1:] - ce[:-1])[:, None] * q).ravel()
    wc = ((ce[1:] - ce[:-1])[:, None] * wq).ravel()
    a_half = 0.5 * (dim - 1)
    log_norm = (dim - 2) * np.log(2.0) + special.betaln(a_half, a_half)
    pc = np.exp(0.5 * (dim - 3) * np.log1p(-c * c) - log_norm)
    th0 = np.arcsin(np.abs(c))
    cand = np.stack(
        [np.zeros_like(c)] + [np.full_like(c, k * h) for k in _WIDTHS] + [th0, np.pi - th0, np.full_like(c, th_max)], -1
    )
    te = np.sort(np.clip(cand, 0.0, th_max), axis=-1)
    lo, width = te[:, :-1, None], (te[:, 1:] - te[:, :-1])[:, :, None]
    th = (lo + width * q).reshape(len(c), -1)
    wt = (width * wq).reshape(len(c), -1)
    cc = c[:, None]
    al = cc * np.cos(th)
    be = np.sqrt(1 - cc * cc) * np.sin(th)
    inside = np.abs(al) < be
    with np.errstate(invalid="ignore", divide="ignore"):
        g_mid = G(al, np.where(inside, be, 1.0))
    g = np.where(al >= be, al, np.where(al <= -be, 0.0, g_mid))
    mass = wt * np.exp(wv * (np.cos(th) - 1)) * np.sin(th) ** (dim - 2)
    Z = mass.sum(-1)
    A_c = (mass * np.cos(th)).sum(-1) / Z
    m1 = (mass * g).sum(-1) / Z
    r = m1 - np.maximum(c, 0.0)
    val = np.sum(wc * pc * r * r)
    A = float(special.ive(0.5 * dim, wv) / special.ive(0.5 * dim - 1, wv))
    tail = 0.0
    if s < 1:  # int_s^1 c^2 p_d(c) dc
        tail = special.beta(1.5, a_half) * special.betaincc(1.5, a_half, s * s) / (2 * np.exp(log_norm))
    val = (2.0 / 3.0) * (val + (1 - A) ** 2 * tail)
    if not with_derivative:
        return float(val)
    rp = (mass * g * np.cos(th)).sum(-1) / Z - A_c * m1
    Ap = 1 - (dim - 1) * A / wv - A * A
    der = np.sum(wc * pc * 2 * r * rp) - 2 * (1 - A) * Ap * tail
    return float(val), float((2.0 / 3.0) * der)


def exact_bias_inf_dw(task: str, dim: int, wv) -> float:
    """``d bias_inf / dw`` per ``L^2`` as a float (affine: mpmath Bessel form; relu: float64 quadrature)."""
    if check_task(task) == "affine":
        return float(exact_bias_inf("affine", dim, wv, with_derivative=True)[1])
    return float(exact_bias_inf_relu_float(dim, wv, with_derivative=True)[1])


def exact_foc_wstar(task: str, dim: int, rho_value: float) -> float:
    """The root ``w`` of ``rho d/dw bias_inf(w)/L^2 + d/dw R_d(w) = 0``: the exact minimiser of
    ``bias_inf(w) + sigma^2 R_d(w)/n`` (the two ``n -> inf`` leading parts, unexpanded in ``w``), with
    ``R_d' = R_d (2 A_d(2w) - 2 A_d(w))``.  Bracketed around the leading-order ``C rho^alpha`` and solved
    by Brent's method in ``log w``."""
    from scipy.optimize import brentq

    task, dim = check_task(task), _check_dim(dim)
    alpha, C = window_law(task, dim)
    guess = C * float(rho_value) ** alpha

    def foc(lw):
        wv = float(np.exp(lw))
        with mpmath.workdps(30):  # A' = 1 - (d-1)A/w - A^2 cancels ~ log10(w^2) digits
            R = S.exact_collision_ratio(dim, wv)
            Rp = R * 2 * (S.exact_tilted_mean(dim, 2 * wv) - S.exact_tilted_mean(dim, wv))
            return float(rho_value) * exact_bias_inf_dw(task, dim, wv) + float(Rp)

    lo, hi = np.log(guess) - 1.0, np.log(guess) + 1.0
    while foc(lo) > 0:
        lo -= 1.0
    while foc(hi) < 0:
        hi += 1.0
    return float(np.exp(brentq(foc, lo, hi, xtol=1e-12, rtol=1e-12)))


# --- the derivation as a document ------------------------------------------------------------------------

DIMS = (2, 3, 5, 8, 10, 16)  # the dimensions of the window-law claims' grids (thm34, full profile)


def _by_powers(expr) -> sp.Expr:
    """``expr`` (a finite sum of ``f(d) w^p``) with each ``f(d)`` factored, for a reader."""
    return sp.Add(*(c * w**p for p, c in _collect_powers(expr).items()))


def _rows(keys, table) -> tuple:
    return tuple(tuple(row[k] for k in keys) for row in table)


def _law_steps() -> tuple:
    """Steps 1-5: the pieces of the bias and the noise."""
    gam, J = sp.Symbol("gamma", real=True), sp.Symbol("J")
    H = sp.Function("H")(gam)
    lead = tuple((task, *bias_leading_expr(task), *bias_next_order_expr(task)) for task in TASKS)
    beta, c_r = noise_leading_expr()
    return (
        Step(
            "The law of c = u.q and of z",
            "The density of `c = u.q` at 0, its half moment "
            "`int_0^1 c^2 p_d(c) dc` (Euler's Beta integral) and `E z^2` for the direction `z ~ p_(d-1)` "
            "orthogonal to `q`:",
            (
                Formula(sp.Function("p_d")(0), density_at_zero()),
                Formula(
                    sp.Integral(sp.Symbol("c") ** 2 * sp.Function("p_d")(sp.Symbol("c")), (sp.Symbol("c"), 0, 1)),
                    half_moment(2),
                ),
                Formula(sp.Function("E")(sp.Symbol("z") ** 2), perp_second_moment()),
            ),
        ),
        Step(
            "The relu kink",
            "`H(gamma) = E (gamma + g)_+` for standard normal `g`; the kink profile "
            "`psi = H(gamma) - gamma_+` is even, and `J = int psi^2` is done in polar coordinates (a Gamma "
            "integral in the radius times a trigonometric one):",
            (Formula(H, gaussian_hinge_mean()), Formula(J, kink_integral())),
        ),
        Step(
            "The large-n bias",
            "As `n -> inf` the softmax average becomes the tilted mean. Affine: "
            "`bias_inf = (L^2/(3d)) (1 - A_d)^2` with the series of `1 - A_d` (sphere_asymptotics.md). Relu: the "
            "kink region of width `w^(-1/2)` in `c` gives `(2/3) p_d(0) J w^(-3/2)`, the smooth part "
            "`r = c (A_d - 1)` gives the next order (the overlap is `O(w^(-5/2))`). Per `L^2`:",
            tuple(
                Formula(sp.Function(f"bias_{task}")(w) / sp.Symbol("L") ** 2, _by_powers(bias_expansion(task)), r"\sim")
                for task in TASKS
            ),
        ),
        Step(
            "Leading and next-order bias",
            "`bias_inf ~ b L^2 w^(-p) + b' L^2 w^(-p')`:",
            (),
            Table(("class", "p", "b(d)", "p'", "b'(d)"), lead),
        ),
        Step(
            "The noise",
            "`sigma^2 E sum_i p_i^2 = sigma^2 R_d(w)/n + O(1/n^2)` with "
            "`R_d ~ c_R w^beta (1 + r_1/w)` (sphere_asymptotics.md):",
            (
                Formula(sp.Symbol("beta"), beta),
                Formula(sp.Symbol("c_R"), c_r),
                Formula(sp.Symbol("r_1"), _noise_next_relative()),
            ),
        ),
    )


def _optimum_steps() -> tuple:
    """Steps 6-9: the generic optimum, the per-class law, its next order and the dropped finite-n terms."""
    g = _generic_optimum()
    per_class = tuple((task, o["alpha"], o["C"], o["gamma"]) for task, o in ((t, optimum_exprs(t)) for t in TASKS))
    shifts = tuple((task, *wstar_correction_expr(task)) for task in TASKS)
    finite = tuple((task, *bias_finite_n_leading_expr(task)) for task in TASKS)
    ws = sp.Symbol("w^*")
    return (
        Step(
            "The optimum of b L^2 w^-p + sigma^2 c_R w^beta / n",
            "The two parts of the derivative have "
            "opposite signs, so the first-order condition is linear in `log w`; the objective tends to `+inf` at "
            "both ends, so its single root is the minimum. With `rho = n L^2/sigma^2`, "
            "`w* = C rho^alpha` and the minimal error `E* = K L^2 rho^(-gamma)`:",
            (
                Formula(ws, g["w_star"]),
                Formula(sp.Symbol("alpha"), g["alpha"]),
                Formula(sp.Symbol("C"), g["C"]),
                Formula(sp.Symbol("gamma"), g["gamma"]),
                Formula(sp.Symbol("K"), g["K"]),
            ),
        ),
        Step(
            "The law per class",
            "The generic optimum with `p, b` of step 4 and `beta, c_R` of step 5:",
            (),
            Table(("class", "alpha", "C", "gamma (E* ~ rho^-gamma)"), per_class),
        ),
        Step(
            "The next order of w*",
            "With relative corrections `delta_b = k_b w0^-q` of the bias and "
            "`delta_n = k_n/w0` of the noise, the first-order condition linearised at `w = w0 (1 + epsilon)` "
            "gives `epsilon`; per class `w* = w0 (1 + k w0^-q + ...)` (relu: the noise's `1/w0` is beyond this "
            "order):",
            (Formula(sp.Symbol("epsilon"), _generic_wstar_shift()),),
            Table(("class", "q", "k(d)"), shifts),
        ),
        Step(
            "The dropped finite-n terms",
            "The second-order delta method on the ratio `sum e_i h_i / sum e_i` "
            "(`m_k = Phi_d(k w)`, `r_k = E_(kw)[h]`, `h2 = E_(2w)[h^2]`) gives the `O(1/n)` bias term "
            "`R_d (...)/n`; on `n sum p_i^2` the `O(1/n^2)` noise term. At leading order the bias term is "
            "`const(d) L^2 w^power / n` and the noise term `sigma^2 c_q(d) w^(d-1) / n^2`:",
            (
                Formula(sp.Symbol(r"n \Delta_{\mathrm{bias}}"), delta_method_bias_correction()),
                Formula(sp.Symbol(r"n \Delta_{\mathrm{noise}}"), delta_method_noise_correction()),
                Formula(sp.Symbol("c_q"), noise_finite_n_leading_expr()[1]),
            ),
            Table(("class", "power", "const(d)"), finite),
        ),
    )


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    table = theory_table(DIMS)
    exact_alpha = tuple(
        (
            row["task"],
            row["d"],
            optimum_exprs(row["task"])["alpha"].subs(d, row["d"]),
            row["alpha"],
            row["C"],
            row["wstar_shift_power"],
            row["wstar_shift_constant"],
        )
        for row in table
    )
    return Document(
        name="window_law",
        title="The window law of Theorem 3.4: bias, noise, the optimal w and the minimal ICL error",
        summary="`w* = C_d (n L^2/sigma^2)^alpha`, affine `alpha = 2/(d+3)`, relu `2/(d+2)`, with `C_d`, the "
        "bias and noise constants `b_d, c_R, r_1`, the minimal error and the next-order terms",
        paper="Theorem 3.4, on the bias/variance bounds of Lemmas C.3-C.9 and Assumption B.4",
        claims=(
            "thm34.window-law",
            "thm34.bias-noise",
            "thm34.monotonicity",
            "thm35.generalisation",
            "thm35.noise-part",
            "thm35.mismatch-marked",
            "linear.weights",
            "linear.cannot-adapt",
            "lemmaB1.block-scale",
            "regularity.window-law",
        ),
        used_by=(
            "lipschitz_icl.claims.thm34",
            "lipschitz_icl.claims.thm35",
            "lipschitz_icl.claims.linear",
            "lipschitz_icl.claims.lemmaB1",
            "lipschitz_icl.derivations.regularity",
            "lipschitz-icl scaling",
        ),
        statement=Step(
            "",
            "For softmax attention with `M = w I` on the affine and relu classes, the large-`n` "
            "ICL loss is `bias_inf(w) + sigma^2 R_d(w)/n`; at leading order in `1/w` its minimiser is "
            "`w* = C_d rho^alpha`, `rho = n L^2/sigma^2`, and the minimal error `E* = K L^2 rho^(-gamma)`:",
            tuple(Formula(sp.Symbol(f"alpha_{task}"), optimum_exprs(task)["alpha"]) for task in TASKS)
            + tuple(Formula(sp.Symbol(f"gamma_{task}"), optimum_exprs(task)["gamma"]) for task in TASKS),
        ),
        assumptions=(
            "`x_i` and `q` uniform on `S^(d-1)`, `d >= 2`; `M = w I` (kernel_identity.md).",
            "Affine: `f(x) = l.x + c`; relu: `f(x) = l (u.x)_+ + c` with `u` uniform, scaled to Lipschitz "
            "constant `L` (the project's task classes); label noise of variance `sigma^2`.",
            "Leading order in `1/w` and in `1/n`: the next orders in `1/w` are derived (steps 4, 5, 8), the "
            "finite-`n` terms are derived at leading order (step 9) and are relative `O(R_d(w*)/n)`, one over "
            "the number of points in the window.",
        ),
        steps=_law_steps() + _optimum_steps(),
        results=(
            Step(
                "The window law",
                "`w* = C rho^alpha (1 + k w0^-q + ...)`; `alpha` exact and as a double:",
                (),
                Table(("class", "d", "alpha exact", "alpha", "C", "q", "k"), exact_alpha),
            ),
            Step(
                "Bias and noise constants",
                "`bias_inf ~ b L^2 w^(bias power) + b' L^2 w^(next power)`; noise "
                "`sigma^2 c_R w^(noise power) (1 + r_1/w)/n`:",
                (),
                Table(
                    ("class", "d", "bias power", "b", "next power", "b'", "noise power", "c_R", "r_1"),
                    _rows(
                        (
                            "task",
                            "d",
                            "bias_power",
                            "bias_constant",
                            "bias_next_power",
                            "bias_next_constant",
                            "noise_power",
                            "noise_constant",
                            "noise_r1",
                        ),
                        table,
                    ),
                ),
            ),
            Step(
                "The minimal error and the finite-n terms",
                "`E* ~ K L^2 rho^power`; the `O(1/n)` bias term "
                "`const L^2 w^power / n` and the `O(1/n^2)` noise term `c_q sigma^2 w^power / n^2`:",
                (),
                Table(
                    ("class", "d", "E* power", "K", "bias 1/n power", "const", "noise 1/n^2 power", "c_q"),
                    _rows(
                        (
                            "task",
                            "d",
                            "min_error_power",
                            "min_error_constant",
                            "bias_finite_n_power",
                            "bias_finite_n_constant",
                            "noise_finite_n_power",
                            "noise_finite_n_constant",
                        ),
                        table,
                    ),
                ),
            ),
            Step(
                "A rival law: the Lipschitz envelope",
                "Bounding the bias of any `L`-Lipschitz task by its Jensen "
                "envelope `2 L^2 (1 - A_d(w)) ~ L^2 (d-1)/w` (bias power 1) and balancing it against the same noise "
                "gives another exponent; the window-law claim's data must tell it apart from the classes' laws "
                "(`envelope_law_exprs`):",
                (
                    Formula(sp.Symbol("alpha_envelope"), envelope_law_exprs()["alpha"]),
                    Formula(sp.Symbol("C_envelope"), sp.simplify(envelope_law_exprs()["C"])),
                ),
                Table(("d", "alpha", "C"), tuple((k, *envelope_law(k)) for k in DIMS)),
            ),
        ),
        exactness="every expression above is exact in `d`; the result tables evaluate them at each `d` with "
        "`sympy.N` at 20 digits (`theory_table`), printed to 12 significant digits; `alpha` is also "
        "given exactly.",
    )
