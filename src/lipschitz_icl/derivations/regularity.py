"""The regularity law: how the roughness of a zonal kernel at ``t = 1`` sets the bias power and ``w*``.

Setting: a zonal task prior with covariance ``K(x.y)`` (:mod:`lipschitz_icl.tasks.zonal`), ``M = w I``,
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

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from lipschitz_icl.derivations import window_law
from lipschitz_icl.derivations.writeup import Document, Formula, Step, Table

__all__ = ["Regularity", "gap_series", "regularity", "regularity_of_kernel", "document"]

_U = sp.Symbol("u", positive=True)
_T = sp.Symbol("t")
ORDER = 4  # powers of u up to u^ORDER are examined


def gap_series(k_expr) -> dict:
    """``{power: coefficient}`` of ``D(u) = K(1) - K(1 - u)`` at ``u = 0`` (Puiseux series, powers below
    ``ORDER``), from the SymPy form of ``K`` in ``t``."""
    return dict(_gap_terms(k_expr))


@lru_cache(maxsize=256)
def _gap_terms(k_expr) -> tuple:
    """:func:`gap_series` as ``(power, coefficient)`` pairs in increasing power (cached: a series is slow)."""
    gap = k_expr.subs(_T, 1) - k_expr.subs(_T, 1 - _U)
    series = sp.expand(sp.series(gap, _U, 0, ORDER).removeO())
    out: dict = {}
    for term in sp.Add.make_args(series):
        coeff, power = term.as_coeff_exponent(_U)
        if power != 0 and coeff != 0:
            out[sp.nsimplify(power)] = out.get(sp.nsimplify(power), 0) + coeff
    return tuple((p, sp.nsimplify(c) if c.is_Rational else c) for p, c in sorted(out.items()) if sp.simplify(c) != 0)


@dataclass(frozen=True)
class Regularity:
    """The derived law for one kernel and dimension (floats; exponents exact where rational)."""

    gamma: float | None  # leading non-integer power of D (None: none below ORDER, analytic)
    c: float | None
    beta: float  # bias power: bias_inf ~ b w^-beta
    b: float
    q: float  # next order of the bias: relative k w^-q
    k: float | None  # None: not derived
    alpha: float  # w* ~ C (n/sigma^2)^alpha
    C: float
    m: float
    c_R: float
    r_1: float

    def wstar_next_order(self, w0: float) -> float:
        """Relative next-order shift of ``w*`` at the leading-order ``w0`` (module doc); where the bias's
        next-order coefficient is not derived only the noise's term (its order ``1/w``) is returned."""
        return _wstar_shift(self.beta, self.q, self.k, self.m, self.r_1, w0)

    def bias_slope_next_order(self, w: float) -> float | None:
        """Next-order term of the local slope ``d log bias_inf / d log w + beta``: ``-q k w^-q``."""
        return None if self.k is None else -self.q * self.k * w ** (-self.q)


def _moment_factor(power, m):
    """``Gamma(m + g)/Gamma(m) (2 - 2^g)``: the weight of ``c u^g`` in ``bias_inf w^g``."""
    return sp.gamma(m + power) / sp.gamma(m) * (2 - 2**power)


def _analytic_bias(D1, D2, m):
    """``b_an = D1 m^2 - 2 D2 m (m + 1)``: the ``w^-2`` coefficient of the analytic part of ``D``."""
    return D1 * m**2 - 2 * D2 * m * (m + 1)


def _optimum(beta, b, m, c_R):
    """``(alpha, C)``: the root of ``d/dw [b w^-beta + c_R w^m / rho] = 0`` is ``C rho^alpha``,
    ``alpha = 1/(beta + m)``, ``C = (beta b/(m c_R))^alpha`` (SymPy symbols or floats)."""
    alpha = 1 / (beta + m)
    return alpha, (beta * b / (m * c_R)) ** alpha


def _wstar_shift(beta, q, k, m, r_1, w0):
    """Relative next-order shift of ``w*``: ``((beta + q)/beta) k w0^-q/(beta + m) - ((m - 1)/m) r_1/(w0 (beta + m))``
    (the first term only where ``k`` is derived, i.e. not ``None``)."""
    noise = -((m - 1) / m) * r_1 / (w0 * (beta + m))
    if k is None:
        return noise
    return ((beta + q) / beta) * k * w0 ** (-q) / (beta + m) + noise


def regularity(k_expr, d: int) -> Regularity:
    """The law of the module doc for the kernel ``k_expr`` (SymPy, in ``t``) on ``S^(d-1)``.  The series
    and the constants ``b``, ``b_an``, ``k`` are SymPy expressions, evaluated to 20 digits; the optimum
    (a power of a product) is then formed in floats."""
    m = sp.Rational(d - 1, 2)
    terms = gap_series(k_expr)
    rough = sorted(p for p in terms if not p.is_integer)
    D1, D2 = terms.get(sp.Integer(1), 0), terms.get(sp.Integer(2), 0)
    b_an = _f(_analytic_bias(D1, D2, m))
    gamma = rough[0] if rough else None
    c = terms[gamma] if rough else None
    b_gamma = _f(c * _moment_factor(gamma, m)) if rough else math.nan  # read only when rough
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
        raise ValueError(
            f"its derived bias constant b = {b} is not positive: K(1) - K(t) vanishes (a constant kernel has no bias "
            "part, hence no window law) or is not a covariance's"
        )
    _, c_R = window_law.noise_leading(d)
    r_1 = window_law.noise_next_order(d)
    beta, mf = _f(beta), _f(m)
    alpha, C = _optimum(beta, b, mf, c_R)
    return Regularity(
        None if gamma is None else _f(gamma),
        None if c is None else _f(c),
        beta,
        b,
        _f(q),
        k,
        alpha,
        C,
        mf,
        float(c_R),
        float(r_1),
    )


def _f(x) -> float:
    return float(sp.N(x, 20))


def regularity_of_kernel(kernel) -> Regularity:
    """:func:`regularity` of a :class:`lipschitz_icl.tasks.zonal.ZonalKernel` (its ``sympy`` form)."""
    if kernel.sympy is None:
        raise ValueError(f"kernel {kernel.name!r} has no symbolic form (a Python callable)")
    return regularity(kernel.sympy, kernel.d)


def _series_expr(terms: dict) -> sp.Expr:
    """``sum_p c_p u^p`` from :func:`gap_series`'s ``{p: c_p}``."""
    return sp.Add(*(terms[p] * _U**p for p in sorted(terms)))


def document(examples) -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here.

    ``examples``: ``(label, K, d)`` triples, ``K`` the SymPy form of a kernel in ``t``, worked through the law."""
    g, c, m, w = sp.symbols("gamma c m w", positive=True)
    D1, D2, beta, b, c_R, q, k, r_1, w0 = sp.symbols("D_1 D_2 beta b c_R q k r_1 w_0", real=True)
    alpha, C = _optimum(beta, b, m, c_R)
    dims = sorted({d for _, _, d in examples})
    series = []
    for label, k_expr, d in examples:
        if d == dims[0]:
            series += [
                Formula(sp.Function(f"K_{label}")(_T), k_expr),
                Formula(sp.Function(f"D_{label}")(_U), _series_expr(gap_series(k_expr)) + sp.O(_U**ORDER)),
            ]
    rows = []
    for label, k_expr, d in examples:
        r = regularity(k_expr, d)
        rows.append((label, d, r.gamma, r.c, r.beta, r.b, r.q, r.k, r.alpha, r.C))
    return Document(
        name="regularity",
        title="The regularity law: the kernel's roughness at t = 1 sets the bias power and the window law",
        summary="`bias_inf ~ b w^-beta`, `beta = min(gamma, 2)` from the leading non-integer power `u^gamma` of "
        "`K(1) - K(1 - u)`; `w* = C (n/sigma^2)^(2/(2 beta + d - 1))`",
        paper="not in the paper: extends Lemmas C.3-C.9 and Theorem 3.4 to every rotation-invariant task prior",
        claims=("regularity.bias-power", "regularity.window-law", "regularity.window-law-rough"),
        used_by=("lipschitz_icl.claims.regularity", "lipschitz-icl scaling --kernel"),
        statement=Step(
            "",
            "For a zonal task prior with covariance `K(x.y)`, `M = w I` and `m = (d - 1)/2`, write "
            "`D(u) = K(1) - K(1 - u)`. If `c u^gamma` is its leading non-integer power, the large-`n` bias "
            "falls as `b w^-beta` with `beta = min(gamma, 2)` (analytic `D`: `beta = 2`), and the optimal "
            "window is `w* = C rho^alpha`, `rho = n/sigma^2`:",
            (Formula(sp.Symbol("alpha"), alpha), Formula(sp.Symbol("C"), C)),
        ),
        assumptions=(
            "The task prior is rotation-invariant on `S^(d-1)` with a SymPy form of `K` in `t` whose "
            "Puiseux series at `t = 1` is examined up to `u^4`.",
            "Large `n` (the softmax average becomes the tilted mean) and large `w` (the tilted law is "
            "Gaussian in the tangent plane, relative corrections `O(1/w)`).",
            "The noise part is `sigma^2 c_R w^m (1 + r_1/w)/n` (window_law.md).",
        ),
        steps=(
            Step(
                "The bias as a functional of D",
                "As `n -> inf`, `bias_inf(w) = 2 E_rho[D(u_x)] - "
                "E_(rho x rho)[D(1 - x.y)]` with `rho` the tilted law `exp(-w u) p_d`. For large `w`, "
                "`u_x ~ Gamma(m, rate w)` and `1 - x.y ~ Gamma(m, rate w/2)`, so a term `c u^gamma` of `D` "
                "contributes:",
                (Formula(c * _moment_factor(g, m) * w ** (-g)),),
            ),
            Step(
                "The analytic part",
                "At `gamma = 1` the factor `2 - 2^gamma` vanishes: the linear term enters only "
                "through `(1 - A)^2`, `A = E_rho t = 1 - m/w + O(w^-2)`. Together with `D2 u^2`, "
                "`D1 u + D2 u^2 + ...` gives `b_an w^-2`:",
                (Formula(sp.Symbol("b_an"), _analytic_bias(D1, D2, m)),),
            ),
            Step(
                "The bias power",
                "The smaller power wins: `gamma < 2` gives `beta = gamma` and `b` from step 1 "
                "(next order `q = 2 - gamma`, `k = b_an/b` when `gamma > 1`; for `gamma < 1`, `q = 1` with its "
                "coefficient not derived); `gamma > 2` or analytic `D` gives `beta = 2`, `b = b_an` (next order "
                "`q = gamma - 2`, `k = b_gamma/b_an` when `gamma < 3`, else `q = 1`, not derived).",
            ),
            Step(
                "The window law",
                "The first-order condition of `b w^-beta + c_R w^m/rho` gives `w0 = C rho^alpha`; "
                "the next orders of the bias (`k w^-q`) and of the noise (`r_1/w`) move the minimiser to "
                "`w* = w0 (1 + epsilon)`:",
                (
                    Formula(sp.Symbol("alpha"), alpha),
                    Formula(sp.Symbol("C"), C),
                    Formula(sp.Symbol("epsilon"), _wstar_shift(beta, q, k, m, r_1, w0)),
                ),
            ),
            Step(
                "The kernels of the claims",
                f"`K(t)` and the series of `D(u)` of each kernel (`d = {dims[0]}`), "
                "from its SymPy form; the built-in classes (`L = 1`, cosine `k = 1`) carry `L` as a float, so their "
                "coefficients print as decimals.",
                tuple(series),
            ),
        ),
        results=(
            Step(
                "The law per kernel and dimension",
                "`regularity(K, d)` for each kernel of the claims "
                "(`k` is not derived where the next order is only known to be `O(1/w)`):",
                (),
                Table(("kernel", "d", "gamma", "c", "beta", "b", "q", "k", "alpha", "C"), tuple(rows)),
            ),
        ),
        exactness="the general law (steps 1-4) is symbolic; the series coefficients are exact for the "
        "expression kernels and decimal for the built-in classes; `b`, `k`, `C` are evaluated to 20 digits "
        "and printed to 12 significant digits; `gamma`, `beta`, `q`, `alpha` are exact rationals shown as "
        "decimals.",
    )
