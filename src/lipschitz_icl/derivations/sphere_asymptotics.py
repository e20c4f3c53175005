"""Large-``w`` expansions of the exponential moments of ``t = x . q`` on ``S^{d-1}``.

Paper: these are the moment estimates behind the bias/variance bounds of Lemmas C.3-C.9 and
Assumption B.4 (registry: thm34.bias-noise), which Theorem 3.4 balances.  Project definitions
(``src/lipschitz_icl/sphere/laws.py``):

    p_d(t)   = (1 - t^2)^((d-3)/2) / (2^(d-2) B((d-1)/2, (d-1)/2)),       t in [-1, 1]
    Phi_d(w) = E exp(w t) = Gamma(d/2) (2/w)^nu I_nu(w),                  nu = d/2 - 1
    A_d(w)   = E_w[t] = Phi_d'(w)/Phi_d(w) = I_{d/2}(w) / I_{d/2-1}(w)      (tilted law exp(w t) p_d / Phi_d)
    R_d(w)   = Phi_d(2w) / Phi_d(w)^2            (sigma^2 E sum_i p_i^2 = sigma^2 R_d(w)/n + O(1/n^2))

Derivation (all done by SymPy below, nothing typed in but the two starting points):

1. The Hankel series.  ``y(w) = exp(w) w^(-1/2) sum_k c_k w^(-k)`` is put into the modified Bessel
   equation ``w^2 y'' + w y' - (w^2 + nu^2) y = 0``; matching powers of ``w`` gives the recurrence of
   the ``c_k`` (``c_0 = 1``), which is checked against the closed form DLMF 10.40.1
   ``c_k = (-1)^k prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! 8^k)``.  The ODE leaves the overall constant
   free; it is fixed by step 2.  The series is asymptotic (divergent for non half-integer ``nu``);
   the other solution of the ODE enters ``I_nu`` only with weight ``exp(-w)``, i.e. beyond all orders.
2. Watson's lemma applied to the project's density: with ``t = 1 - s``,
   ``Phi_d(w) = exp(w) int_0^2 exp(-w s) (s (2 - s))^((d-3)/2) ds / (2^(d-2) B)``, and expanding
   ``(1 - s/2)^((d-3)/2)`` termwise gives
   ``Phi_d(w) ~ K_d exp(w) w^(-(d-1)/2) sum_k omega_k(d) w^(-k)``,
   ``K_d = 2^((d-3)/2) Gamma((d-1)/2) / (2^(d-2) B((d-1)/2, (d-1)/2))``.
   Its leading term fixes the Hankel normalisation to ``1/sqrt(2 pi)`` (derived, for every ``d``), and
   all its coefficients agree with the Hankel ones at ``nu = d/2 - 1`` (an independent check of the
   Bessel form of ``Phi_d``).
3. From ``log Phi_d(w) = w - ((d-1)/2) log w + log K_d + log(sum_k c_k w^-k)``:
   ``A_d = (log Phi_d)'`` (cross-checked against the ratio of Hankel series ``I_{d/2}/I_{d/2-1}``),
   ``E_w[t^2] = Phi_d''/Phi_d = (log Phi_d)'' + (log Phi_d)'^2``, and
   ``R_d(w) = exp(log Phi_d(2w) - 2 log Phi_d(w)) = c_R(d) w^((d-1)/2) (1 + O(1/w))`` with
   ``c_R(d) = 2^(-(d-1)/2) / K_d = sqrt(pi) / (Gamma(d/2) 2^(d-2))``.

Results (SymPy output, reproduced by the tests, which compare the functions, not these lines):

    log Phi_d(w) = w - ((d-1)/2) log w + log(Gamma(d/2) 2^(d/2-1) / sqrt(2 pi)) - (d-1)(d-3)/(8w) + ...
    1 - A_d(w)   = (d-1)/(2w) - (d-1)(d-3)/(8w^2) + ...          (exact 1/w for d = 3, up to exp(-2w))
    E_w[t^2]     = 1 - (d-1)/w + (d-1)^2/(2w^2) + ...
    R_d(w)       = c_R(d) w^((d-1)/2) (1 + 3(d-1)(d-3)/(16w) + ...),   c_R(d) = sqrt(pi) / (Gamma(d/2) 2^(d-2))

``exact_*`` functions give the unexpanded quantities with mpmath at a chosen precision, for the
numerical spot checks.
"""

from __future__ import annotations

from functools import cache

import mpmath
import sympy as sp

from lipschitz_icl.derivations.writeup import Document, Formula, Step, Table

__all__ = [
    "w",
    "x",
    "d",
    "truncate",
    "nu",
    "hankel_coefficients",
    "hankel_closed_form",
    "watson_prefactor",
    "watson_coefficients",
    "hankel_normalisation",
    "log_phi_series",
    "tilted_mean_series",
    "tilted_mean_series_from_bessel_ratio",
    "one_minus_tilted_mean_series",
    "second_moment_series",
    "collision_ratio_series",
    "c_R",
    "c_R_float",
    "phi_power_ratio_leading",
    "series_coefficients",
    "by_powers",
    "document",
    "exact_phi",
    "exact_log_phi",
    "exact_tilted_mean",
    "exact_second_moment",
    "exact_collision_ratio",
]

w = sp.Symbol("w", positive=True)
x = sp.Symbol("x", positive=True)  # x = 1/w, the expansion variable
d = sp.Symbol("d", positive=True)
nu = sp.Symbol("nu", real=True)


# --- 1. Hankel series from the modified Bessel equation ---------------------------------------------


@cache
def hankel_coefficients(order: int) -> tuple:
    """``(c_0, ..., c_order)`` of ``I_nu(w) ~ N exp(w) w^(-1/2) sum_k c_k w^(-k)``, ``c_0 = 1``, solved
    order by order from the modified Bessel equation (functions of the symbol ``nu``)."""
    cs = sp.symbols(f"c1:{order + 1}")
    u = 1 + sum(c * w ** (-(k + 1)) for k, c in enumerate(cs))
    y = sp.exp(w) * u / sp.sqrt(w)
    ode = w**2 * sp.diff(y, w, 2) + w * sp.diff(y, w) - (w**2 + nu**2) * y
    reduced = sp.expand(sp.powsimp(sp.expand(ode * sp.exp(-w) * sp.sqrt(w))))
    solved: dict = {}
    for k in range(1, order + 1):
        # the power w^(1-k) is the first one where c_k appears (through 2 w^2 u')
        eq = reduced.coeff(w, 1 - k).subs(solved)
        (sol,) = sp.solve(eq, cs[k - 1])
        solved[cs[k - 1]] = sp.factor(sol)
    return (sp.S.One,) + tuple(solved[c] for c in cs)


def hankel_closed_form(k: int) -> sp.Expr:
    """DLMF 10.40.1: ``(-1)^k prod_{j=1..k} (4 nu^2 - (2j-1)^2) / (k! 8^k)`` (for the cross-check)."""
    return (-1) ** k * sp.prod([4 * nu**2 - (2 * j - 1) ** 2 for j in range(1, k + 1)]) / (sp.factorial(k) * 8**k)


# --- 2. Watson's lemma on the project's density -------------------------------------------------------


@cache
def watson_prefactor() -> sp.Expr:
    """``K_d`` in ``Phi_d(w) ~ K_d exp(w) w^(-(d-1)/2)``, from the density ``p_d`` near ``t = 1``."""
    m = (d - 3) / 2
    a = (d - 1) / 2
    raw = 2**m * sp.gamma(a) / (2 ** (d - 2) * sp.beta(a, a))
    return sp.simplify(sp.gammasimp(sp.combsimp(raw.rewrite(sp.gamma))))


@cache
def watson_coefficients(order: int) -> tuple:
    """``omega_k(d)``, ``k = 0..order``, with ``Phi_d(w) ~ K_d exp(w) w^(-(d-1)/2) sum_k omega_k w^(-k)``.

    ``int_0^inf exp(-w s) s^m (1 - s/2)^m ds``, ``m = (d-3)/2``, expanded termwise (Watson's lemma):
    the ``s^k`` coefficient of ``(1 - s/2)^m`` times ``int_0^inf exp(-w s) s^(m+k) ds``, divided by the
    ``k = 0`` term.
    """
    s = sp.Symbol("s", positive=True)
    m = (d - 3) / 2
    expansion = sp.series((1 - s / 2) ** m, s, 0, order + 1).removeO()
    base = sp.integrate(sp.exp(-w * s) * s**m, (s, 0, sp.oo), conds="none")
    out = []
    for k in range(order + 1):
        moment = sp.integrate(sp.exp(-w * s) * s ** (m + k), (s, 0, sp.oo), conds="none")
        term = expansion.coeff(s, k) * sp.gammasimp(moment / base) * w**k
        out.append(sp.factor(sp.gammasimp(sp.expand_func(term))))
    return tuple(out)


def hankel_normalisation() -> sp.Expr:
    """``N`` in ``I_nu(w) ~ N exp(w) w^(-1/2)``, derived from ``Phi_d = Gamma(d/2) (2/w)^nu I_nu`` and the
    Watson prefactor: ``N = K_d / (Gamma(d/2) 2^(d/2-1))``, simplified (it is free of ``d``)."""
    expr = watson_prefactor() / (sp.gamma(d / 2) * 2 ** (d / 2 - 1))
    return sp.simplify(sp.gammasimp(sp.combsimp(expr.rewrite(sp.gamma))))


# --- 3. Expansions of log Phi, A, E t^2, R -----------------------------------------------------------


def _hankel_sum(nu_value, order: int) -> sp.Expr:
    return sum(c.subs(nu, nu_value) * x**k for k, c in enumerate(hankel_coefficients(order)))


def _truncated_poly(expr, order: int) -> sp.Expr:
    """The polynomial ``expr`` (in ``x``) with powers above ``x^order`` dropped."""
    expr = sp.expand(expr)
    return sum(expr.coeff(x, k) * x**k for k in range(order + 1))


@cache
def _log_phi_tail(order: int) -> sp.Expr:
    """``log(sum_k c_k x^k)`` at ``nu = d/2 - 1`` to ``O(x^(order+1))``, a polynomial in ``x``:
    ``log(1 + z) = sum_j (-1)^(j+1) z^j / j`` with ``z = sum_{k>=1} c_k x^k = O(x)``, truncated."""
    z = _hankel_sum(d / 2 - 1, order) - 1
    tail, power = 0, sp.S.One
    for j in range(1, order + 1):
        power = _truncated_poly(power * z, order)
        tail += sp.Rational((-1) ** (j + 1), j) * power
    return sp.expand(tail)


@cache
def log_phi_series(order: int = 3) -> sp.Expr:
    """``log Phi_d(w) ~ w - ((d-1)/2) log w + log K_d + sum_{k=1..order} l_k(d) w^(-k)``."""
    return w - (d - 1) / 2 * sp.log(w) + sp.log(watson_prefactor()) + _log_phi_tail(order).subs(x, 1 / w)


@cache
def tilted_mean_series(order: int = 3) -> sp.Expr:
    """``A_d(w) = d/dw log Phi_d(w) ~ 1 - (d-1)/(2w) + ...`` to ``O(w^-(order+1))`` (termwise derivative)."""
    return sp.expand(sp.diff(log_phi_series(order), w))


@cache
def tilted_mean_series_from_bessel_ratio(order: int = 3) -> sp.Expr:
    """``A_d(w) = I_{d/2}(w)/I_{d/2-1}(w)`` as the ratio of the two Hankel series, to ``O(w^-(order+1))``
    (the normalisations ``N exp(w) w^(-1/2)`` cancel)."""
    ratio = _hankel_sum(d / 2, order + 1) / _hankel_sum(d / 2 - 1, order + 1)
    return sp.expand(sp.series(ratio, x, 0, order + 2).removeO().subs(x, 1 / w))


@cache
def one_minus_tilted_mean_series(order: int = 3) -> sp.Expr:
    """``1 - A_d(w) ~ (d-1)/(2w) + a_2(d)/w^2 + ...`` to ``O(w^-(order+1))``."""
    return sp.expand(1 - tilted_mean_series(order))


@cache
def second_moment_series(order: int = 3) -> sp.Expr:
    """``E_w[t^2] = Phi_d''/Phi_d = (log Phi_d)'' + ((log Phi_d)')^2`` to ``O(w^-(order+1))``."""
    lp = log_phi_series(order)
    expr = sp.expand(sp.diff(lp, w, 2) + sp.diff(lp, w) ** 2)
    return truncate(expr, order)


def truncate(expr: sp.Expr, order: int) -> sp.Expr:
    """Drop the powers ``w^-k`` with ``k > order`` from a Laurent polynomial in ``w``."""
    poly = sp.expand(expr.subs(w, 1 / x))
    return sp.expand(sum(poly.coeff(x, k) * x**k for k in range(order + 1)).subs(x, 1 / w))


@cache
def c_R() -> sp.Expr:
    """``c_R(d) = 2^(-(d-1)/2) / K_d``, the constant of ``R_d(w) ~ c_R(d) w^((d-1)/2)``, simplified."""
    expr = 2 ** (-(d - 1) / 2) / watson_prefactor()
    return sp.simplify(sp.gammasimp(sp.combsimp(expr.rewrite(sp.gamma))))


@cache
def c_R_float(dim: int) -> float:
    """``c_R(d)`` as a float."""
    return float(c_R().subs(d, dim))


@cache
def collision_ratio_series(order: int = 3) -> sp.Expr:
    """``R_d(w) = Phi_d(2w)/Phi_d(w)^2 ~ c_R(d) w^((d-1)/2) (1 + r_1/w + ... + r_order/w^order)``.

    From ``log R = log Phi(2w) - 2 log Phi(w)``: the ``w`` terms cancel, the logs give the power and
    the constant, and the Hankel tails give the relative corrections.
    """
    tail = _log_phi_tail(order)
    rel_log = sp.expand(tail.subs(x, x / 2) - 2 * tail)
    rel = sp.series(sp.exp(rel_log), x, 0, order + 1).removeO()
    return c_R() * w ** ((d - 1) / 2) * sp.expand(rel.subs(x, 1 / w))


def phi_power_ratio_leading(k: int) -> sp.Expr:
    """Leading term of ``Phi_d(k w) / Phi_d(w)^k ~ k^(-(d-1)/2) K_d^(1-k) w^((k-1)(d-1)/2)``
    (``k = 2`` is ``R_d``; ``k = 3`` enters the ``O(1/n^2)`` noise term)."""
    K = watson_prefactor()
    return sp.simplify(sp.gammasimp(k ** (-(d - 1) / 2) * K ** (1 - k))) * w ** ((k - 1) * (d - 1) / 2)


def series_coefficients(expr: sp.Expr, leading_power, order: int) -> list:
    """``[e_0, ..., e_order]`` with ``expr = w^leading_power sum_k e_k w^-k``."""
    poly = sp.expand(sp.powsimp(sp.expand(expr / w**leading_power)).subs(w, 1 / x))
    return [sp.factor(poly.coeff(x, k)) for k in range(order + 1)]


def by_powers(expr: sp.Expr, leading_power, order: int) -> sp.Expr:
    """``w^leading_power sum_k e_k w^-k`` with each ``e_k`` factored (:func:`series_coefficients`): the same
    Laurent polynomial as ``expr``, written for a reader; checked equal to ``expr``."""
    coeffs = series_coefficients(expr, leading_power, order)
    out = sp.Add(*(c * w ** (leading_power - k) for k, c in enumerate(coeffs)))
    if sp.expand(sp.powsimp(sp.expand(out - expr))) != 0:
        raise ArithmeticError(f"{expr} has powers of w beyond w^({leading_power} - {order})")
    return out


# --- exact references (mpmath) -------------------------------------------------------------------------


def exact_phi(dim, wv):
    """``Phi_d(w) = Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w)`` at the current mpmath precision."""
    dim, wv = mpmath.mpf(dim), mpmath.mpf(wv)
    n_ = dim / 2 - 1
    return mpmath.gamma(dim / 2) * (2 / wv) ** n_ * mpmath.besseli(n_, wv)


def exact_log_phi(dim, wv):
    """``log Phi_d(w)`` (mpmath)."""
    return mpmath.log(exact_phi(dim, wv))


def exact_tilted_mean(dim, wv):
    """``A_d(w) = I_{d/2}(w)/I_{d/2-1}(w)`` (mpmath)."""
    dim, wv = mpmath.mpf(dim), mpmath.mpf(wv)
    return mpmath.besseli(dim / 2, wv) / mpmath.besseli(dim / 2 - 1, wv)


def exact_second_moment(dim, wv):
    """``E_w[t^2]`` by direct quadrature of the tilted density in the polar angle (independent of the
    Bessel form): ``int t^2 exp(w (t-1)) sin^(d-2) theta dtheta / int exp(w (t-1)) sin^(d-2) theta dtheta``,
    ``t = cos theta``."""
    dim, wv = int(dim), mpmath.mpf(wv)

    def mass(th):
        return mpmath.exp(wv * (mpmath.cos(th) - 1)) * mpmath.sin(th) ** (dim - 2)

    cut = _theta_cut(wv)
    pts = [0, cut, mpmath.pi] if cut < mpmath.pi else [0, mpmath.pi]
    num = mpmath.quad(lambda th: mass(th) * mpmath.cos(th) ** 2, pts)
    den = mpmath.quad(mass, pts)
    return num / den


def _theta_cut(wv):
    """An interior break point of the polar quadrature at a few window widths ``1/sqrt(w)``."""
    return mpmath.mpf(8) / mpmath.sqrt(wv)


def exact_collision_ratio(dim, wv):
    """``R_d(w) = Phi_d(2w) / Phi_d(w)^2`` (mpmath)."""
    return exact_phi(dim, 2 * mpmath.mpf(wv)) / exact_phi(dim, wv) ** 2


DIMS = (2, 3, 5, 8, 10, 16)  # the dimensions of the window-law claims' grids (thm34, full profile)
ORDER = 3


def _table_row(dim: int) -> tuple:
    a = series_coefficients(one_minus_tilted_mean_series(ORDER), -1, 1)
    rel = series_coefficients(collision_ratio_series(1), (d - 1) / 2, 1)
    r_1 = sp.simplify(rel[1] / rel[0])
    exact = sp.simplify(c_R().subs(d, dim))
    return (dim, exact, float(exact), float(r_1.subs(d, dim)), float(a[0].subs(d, dim)), float(a[1].subs(d, dim)))


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    c = sp.IndexedBase("c")
    omega = sp.IndexedBase("omega")
    hank, watson = hankel_coefficients(ORDER), watson_coefficients(ORDER)
    half = (d - 1) / 2
    phi, a_d, r_d = (sp.Function(r"\Phi_d")(w), sp.Function("A_d")(w), sp.Function("R_d")(w))
    k_d, c_r = sp.Symbol("K_d"), sp.Symbol("c_R")
    tail = by_powers(_log_phi_tail(ORDER).subs(x, 1 / w), 0, ORDER)
    log_phi = w - half * sp.log(w) + sp.log(k_d) + tail
    if sp.expand(log_phi.subs(k_d, watson_prefactor()) - log_phi_series(ORDER)) != 0:
        raise ArithmeticError("the readable log Phi_d differs from log_phi_series")
    rel = by_powers(sp.expand(collision_ratio_series(ORDER) / (c_R() * w**half)), 0, ORDER)
    one_minus_a = by_powers(one_minus_tilted_mean_series(ORDER), -1, ORDER)
    dlmf = Table(
        ("k", "c_k from the ODE", "c_k - DLMF 10.40.1", "omega_k - c_k(d/2 - 1)"),
        tuple(
            (
                k,
                hank[k],
                sp.simplify(hank[k] - hankel_closed_form(k)),
                sp.simplify(watson[k] - hank[k].subs(nu, d / 2 - 1)),
            )
            for k in range(ORDER + 1)
        ),
    )
    ratio_gap = sp.simplify(tilted_mean_series(ORDER) - tilted_mean_series_from_bessel_ratio(ORDER))
    return Document(
        name="sphere_asymptotics",
        title="Large-w expansions of the exponential moments of t = x.q on the sphere",
        summary="`log Phi_d`, `1 - A_d`, `E_w[t^2]` and `R_d = Phi_d(2w)/Phi_d(w)^2 ~ c_R w^((d-1)/2) (1 + r_1/w)` "
        "from the Bessel equation and Watson's lemma",
        paper="the moment estimates behind Lemmas C.3-C.9 and Assumption B.4 (Theorem 3.4)",
        claims=("thm34.window-law", "thm34.bias-noise", "thm35.generalisation", "thm35.noise-part"),
        used_by=("lipschitz_icl.derivations.window_law", "lipschitz_icl.claims.thm35"),
        statement=Step(
            "",
            "For `t = x.q` with density `p_d(t) = (1 - t^2)^((d-3)/2) / (2^(d-2) B((d-1)/2, (d-1)/2))` "
            "on `[-1, 1]`, `Phi_d(w) = E exp(w t) = Gamma(d/2) (2/w)^nu I_nu(w)` (`nu = d/2 - 1`), "
            "the tilted mean `A_d = Phi_d'/Phi_d` and the collision ratio `R_d` have, for large `w`:",
            (
                Formula(sp.log(phi), log_phi, r"\sim"),
                Formula(k_d, watson_prefactor()),
                Formula(1 - a_d, one_minus_a, r"\sim"),
                Formula(r_d, c_r * w**half * rel, r"\sim"),
                Formula(c_r, c_R()),
            ),
        ),
        assumptions=(
            "`x` uniform on `S^(d-1)`, `q` a fixed unit vector, `d >= 2`.",
            "The expansions are asymptotic (divergent for non half-integer `nu`), truncated three orders "
            "in `1/w` after the leading term; the other solution of the Bessel equation enters `I_nu` only "
            "with weight `exp(-w)`, beyond all orders.",
        ),
        steps=(
            Step(
                "The Hankel series from the modified Bessel equation",
                "`y(w) = exp(w) w^(-1/2) sum_k c_k w^(-k)` with `c_0 = 1` is put into "
                "`w^2 y'' + w y' - (w^2 + nu^2) y = 0`; matching powers of `w` gives the `c_k`, which equal the "
                "closed form DLMF 10.40.1 (the difference is 0). The ODE leaves the overall constant free.",
                tuple(Formula(c[k], hank[k]) for k in range(1, ORDER + 1)),
                dlmf,
            ),
            Step(
                "Watson's lemma on the density",
                "With `t = 1 - s`, expanding `(1 - s/2)^((d-3)/2)` termwise in "
                "`Phi_d(w) = exp(w) int_0^2 exp(-w s) (s (2 - s))^((d-3)/2) ds / (2^(d-2) B)` gives "
                "`Phi_d ~ K_d exp(w) w^(-(d-1)/2) sum_k omega_k w^(-k)`. Its leading term fixes the Hankel "
                "normalisation `N` (free of `d`), and every `omega_k` equals `c_k` at `nu = d/2 - 1` (table above): "
                "an independent check of the Bessel form of `Phi_d`.",
                (
                    Formula(k_d, watson_prefactor()),
                    *(Formula(omega[k], watson[k]) for k in range(1, ORDER + 1)),
                    Formula(sp.Symbol("N"), hankel_normalisation()),
                ),
            ),
            Step(
                "log Phi_d and the tilted mean",
                "`log Phi_d = w - ((d-1)/2) log w + log K_d + log(sum_k c_k w^-k)`, the last logarithm expanded; "
                "`A_d = (log Phi_d)'` termwise. The ratio of the two Hankel series `I_(d/2)/I_(d/2-1)` gives "
                f"the same `A_d` (difference `{ratio_gap}`).",
                (Formula(sp.log(phi), log_phi, r"\sim"), Formula(1 - a_d, one_minus_a, r"\sim")),
            ),
            Step(
                "The second moment",
                "`E_w[t^2] = Phi_d''/Phi_d = (log Phi_d)'' + ((log Phi_d)')^2`:",
                (
                    Formula(
                        sp.Function("E_w")(sp.Symbol("t") ** 2),
                        by_powers(second_moment_series(ORDER), 0, ORDER),
                        r"\sim",
                    ),
                ),
            ),
            Step(
                "The collision ratio",
                "`log R_d = log Phi_d(2w) - 2 log Phi_d(w)`: the `w` terms cancel, the "
                "logarithms give the power and the constant `c_R = 2^(-(d-1)/2)/K_d`, the Hankel tails the "
                "relative corrections:",
                (Formula(c_r, c_R()), Formula(r_d, c_r * w**half * rel, r"\sim")),
            ),
        ),
        results=(
            Step(
                "The constants per dimension",
                "`c_R(d)` (exact and as a double), `r_1(d)` (the relative "
                "`1/w` term of `R_d`) and the first two coefficients `a_1, a_2` of "
                "`1 - A_d = a_1/w + a_2/w^2 + ...`:",
                (),
                Table(("d", "c_R exact", "c_R", "r_1", "a_1", "a_2"), tuple(_table_row(k) for k in DIMS)),
            ),
        ),
        exactness="every expansion coefficient is an exact function of `d`; the table evaluates them at each `d` "
        "(exact `c_R` shown symbolically, all columns as doubles to 12 significant digits).",
    )
