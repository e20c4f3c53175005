"""The optimal linear attention and its ICL error (registry: the linear group, lipschitz_icl/claims/linear.toml;
the paper's linear-attention section and Figure 1).

Predictor: ``yhat(q) = (1/n) sum_i y_i x_i^T M q`` (the value weight absorbed into ``M``), ``y_i = f(x_i) +
eps_i``, ``x_i, q`` uniform on ``S^{d-1}``.  For a rotation-invariant class write
``k(s) = E_f[f(a) f(b)]`` for unit ``a, b`` with ``a.b = s`` (``E_f f = 0`` for every class).

1. Isotropy.  The loss is a convex quadratic in ``M`` and is invariant under ``M -> R M R^T`` for every
   orthogonal ``R`` (the task law, the covariates and the query are ``O(d)``-invariant); its minimisers form
   a convex ``O(d)``-invariant set, which contains the average of ``R M* R^T`` over ``O(d)``, a multiple of
   the identity (Schur).  So the optimum over ``M = m I`` is an optimum over all ``M``.
2. With ``M = m I`` and ``t_i = x_i . q`` the loss is ``m^2 a2 - 2 m a1 + a0`` with (derived below,
   each expectation reduced by the independence of ``q`` from the rest and ``E_q[q q^T] = I/d``)

       a0 = E f(q)^2                         = k(1)
       a1 = E[f(q) f(x) (x.q)]               = E_t[t k(t)]          =: B   (t ~ p_d, the law of x.q)
       a2 = E[((1/n) sum_i y_i t_i)^2]       = (k(1) + sigma^2)/(n d) + (1 - 1/n) B/d

   (diagonal terms ``E[y^2 t^2] = (k(1) + sigma^2)/d``; off-diagonal
   ``E[k(x_i.x_j) (x_i.q)(x_j.q)] = E_s[k(s) s]/d = B/d``).  Hence
   ``m* = a1/a2``, ``E_lin(n) = a0 - a1^2/a2``, and as ``n -> inf``: ``m* -> d`` whatever ``L`` and
   ``sigma``, ``E_lin(inf) = k(1) - d B``.  The limit predictor is ``d E_x[f(x) x] . q``, the ``L^2``
   projection of ``f`` on the homogeneous linear functions (``E[x x^T] = I/d``): linear attention
   averages the whole sphere and cannot narrow a window, and its error tends to the part of ``f``
   that no linear function explains.
3. ``B`` per class, from ``E_t[t k(t)] = E_f ||E_x[f(x) x]||^2`` (``x.q``-symmetric law, ``E_x[x x^T] = I/d``):

       affine   k(s) = (L^2/3)(s/d + 1)           B = L^2/(3 d^2)     E_lin(inf) = L^2/3
       relu     k(s) = (2L^2/3) kappa(s) + L^2/3   B = L^2/(6 d^2)     E_lin(inf) = L^2/3 + L^2/(6d)
                (``E_a[a (u.a)_+] = u E[t^2; t > 0] = u/(2d)``)
       cosine   k(s) = (L^2/(2k^2)) Psi_d(k sqrt(2 - 2s))
                B = (L^2/(2 k^2)) g_d(k)^2,  g_d(k) = E_t[t sin(k t)] = Gamma(d/2) (2/k)^(d/2-1) J_{d/2}(k)
                E_lin(inf) = (L^2/(2k^2)) (1 - d g_d(k)^2)

   (``g_d = -Psi_d'`` with ``Psi_d(k) = E cos(k t) = Gamma(d/2)(2/k)^(d/2-1) J_{d/2-1}(k)`` and
   ``(z^-nu J_nu)' = -z^-nu J_{nu+1}``).  The tests compare each ``B`` with a quadrature of
   ``E_t[t k(t)]`` using the library's covariance kernels, and the loss with Monte Carlo.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from lipschitz_icl.derivations.writeup import Document, Formula, Step, Table

__all__ = [
    "m",
    "d",
    "n",
    "L",
    "sigma",
    "k",
    "CLASSES",
    "quadratic_coefficients",
    "loss_expr",
    "optimum_expr",
    "limit_exprs",
    "class_moments",
    "linear_optimum",
    "linear_limit",
    "zero_predictor_error",
    "cosine_projection_moment",
    "class_limit",
    "document",
]

m = sp.Symbol("m", real=True)
d, n, L, sigma, k = sp.symbols("d n L sigma k", positive=True)
k1, B = sp.symbols("k1 B", positive=True)  # k(1) and E_t[t k(t)]
CLASSES = ("affine", "relu", "cosine")


def quadratic_coefficients():
    """``(a0, a1, a2)`` in terms of ``k1 = k(1)``, ``B = E_t[t k(t)]``, ``sigma``, ``n``, ``d``."""
    a0 = k1
    a1 = B
    a2 = (k1 + sigma**2) / (n * d) + (1 - 1 / n) * B / d
    return a0, a1, a2


def loss_expr():
    """``E_lin(m) = m^2 a2 - 2 m a1 + a0``."""
    a0, a1, a2 = quadratic_coefficients()
    return sp.expand(m**2 * a2 - 2 * m * a1 + a0)


@cache
def optimum_expr():
    """``(m*, E_lin(m*))`` solved from ``dE/dm = 0`` (SymPy), with the second-order check ``a2 > 0``."""
    loss = loss_expr()
    (m_star,) = sp.solve(sp.diff(loss, m), m)
    curvature = sp.diff(loss, m, 2)
    assert sp.simplify(curvature - 2 * quadratic_coefficients()[2]) == 0
    return sp.simplify(m_star), sp.simplify(loss.subs(m, m_star))


@cache
def limit_exprs():
    """``(lim m*, lim E_lin)`` as ``n -> inf``: ``d`` and ``k1 - d B``."""
    m_star, e_star = optimum_expr()
    return sp.simplify(sp.limit(m_star, n, sp.oo)), sp.simplify(sp.limit(e_star, n, sp.oo))


def cosine_projection_moment(dim):
    """``g_d(k) = E_t[t sin(k t)] = Gamma(d/2) (2/k)^(d/2-1) J_{d/2}(k)`` (symbolic in ``k``)."""
    nu = sp.Rational(dim, 2) - 1 if isinstance(dim, int) else dim / 2 - 1
    return sp.gamma(nu + 1) * (2 / k) ** nu * sp.besselj(nu + 1, k)


@cache
def class_moments(task: str):
    """``(k1, B)`` of a class, symbolic in ``L``, ``d`` (and ``k`` for cosine)."""
    if task == "affine":
        return L**2 / 3 * (1 + 1 / d), L**2 / (3 * d**2)
    if task == "relu":
        kappa1 = 1 / (2 * d)  # arc-cosine kernel at s = 1: (sin 0 + pi cos 0)/(2 pi d)
        return 2 * L**2 / 3 * kappa1 + L**2 / 3, 2 * L**2 / 3 * (1 / (2 * d)) ** 2
    if task == "cosine":
        return L**2 / (2 * k**2), L**2 / (2 * k**2) * cosine_projection_moment(d) ** 2
    raise ValueError(f"task must be one of {CLASSES}, got {task!r}")


@cache
def class_limit(task: str) -> sp.Expr:
    """``lim E_lin = k(1) - d B`` of a class, simplified (symbolic in ``L``, ``d``, ``k``)."""
    k1v, Bv = class_moments(task)
    return sp.simplify(limit_exprs()[1].subs({k1: k1v, B: Bv}))


def class_optimum_error(task: str, dim: int, n_value: int, L_value, sigma_value) -> sp.Expr:
    """``E_lin(n) = a0 - a1^2/a2`` of a class at ``(d, n, L, sigma)`` as an exact SymPy expression (``L`` and
    ``sigma`` read as the rationals of their decimals): the closed form of :func:`linear_optimum`'s error."""
    k1v, Bv = class_moments(task)
    subs = {k1: k1v, B: Bv}
    values = {d: dim, n: sp.Integer(n_value), L: sp.nsimplify(L_value), sigma: sp.nsimplify(sigma_value)}
    return sp.simplify(optimum_expr()[1].subs(subs).subs(values))


def _values(task: str, dim: int, frequency: float):
    k1v, Bv = class_moments(task)
    subs = {d: dim, k: frequency}
    return k1v.subs(subs), Bv.subs(subs)


def linear_optimum(
    task: str, dim: int, n_value, L_value: float, sigma_value: float, frequency: float = 1.0
) -> tuple[float, float]:
    """``(m*, E_lin(m*))`` as floats for a class at ``(d, n, L, sigma)`` (cosine: ``frequency``)."""
    k1v, Bv = _values(task, dim, frequency)
    m_star, e_star = optimum_expr()
    subs = {k1: k1v, B: Bv, d: dim, n: n_value, sigma: sigma_value}
    subs = {key: (val.subs(L, L_value) if isinstance(val, sp.Basic) else val) for key, val in subs.items()}
    return float(sp.N(m_star.subs(subs), 20)), float(sp.N(e_star.subs(subs), 20))


def linear_limit(task: str, dim: int, L_value: float, frequency: float = 1.0) -> tuple[float, float]:
    """``(lim m*, lim E_lin)`` as ``n -> inf``."""
    k1v, Bv = _values(task, dim, frequency)
    m_lim, e_lim = limit_exprs()
    subs = {k1: k1v.subs(L, L_value), B: Bv.subs(L, L_value), d: dim}
    return float(sp.N(m_lim.subs(subs), 20)), float(sp.N(e_lim.subs(subs), 20))


def zero_predictor_error(task: str, dim: int, L_value: float, frequency: float = 1.0) -> float:
    """``a0 = k(1) = E f(q)^2``: the error of ``m = 0`` (the zero predictor, which learns nothing from the
    context), the rival a non-vanishing error must be told apart from."""
    k1v, _ = _values(task, dim, frequency)
    return float(sp.N(k1v.subs(L, L_value), 20))


DIMS = (2, 3, 5)  # the dimensions of the linear claims' grids
FREQUENCY = 1.0  # the cosine class's frequency in the linear claims


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    a0, a1, a2 = quadratic_coefficients()
    m_star, e_star = optimum_expr()
    m_lim, e_lim = limit_exprs()
    ms, el = sp.Symbol("m^*"), sp.Symbol(r"E_{\mathrm{lin}}")
    moments = tuple((task, *class_moments(task), class_limit(task)) for task in CLASSES)
    numbers = tuple((task, dim, *linear_limit(task, dim, 1.0, FREQUENCY)) for task in CLASSES for dim in DIMS)
    return Document(
        name="linear_attention",
        title="The optimal linear attention and its ICL error",
        summary="`m* = a1/a2`, `E_lin(n) = a0 - a1^2/a2`; as `n -> inf`, `m* -> d` and `E_lin -> k(1) - d B > 0` "
        "per class: linear attention cannot narrow its window",
        paper="Section 4 (linear attention) and Figure 1",
        claims=(
            "linear.optimum",
            "linear.isotropic",
            "linear.cannot-adapt",
            "linear.weights",
            "linear.trained",
            "figures.fig1",
        ),
        used_by=("lipschitz_icl.claims.linear", "lipschitz_icl.claims.figures"),
        statement=Step(
            "",
            "The linear attention `yhat(q) = (1/n) sum_i y_i x_i^T M q` has its optimum at "
            "`M = m* I`; its ICL error tends, as `n -> inf`, to the part of the task that no homogeneous "
            "linear function explains, whatever `L` and `sigma`.",
            (Formula(sp.Limit(ms, n, sp.oo), m_lim), Formula(sp.Limit(el, n, sp.oo), e_lim)),
        ),
        assumptions=(
            "`x_i` and `q` uniform on `S^(d-1)`, `y_i = f(x_i) + eps_i` with noise variance `sigma^2`.",
            "A rotation-invariant task class with covariance `k(s) = E_f[f(a) f(b)]`, `a.b = s`, "
            "and `E_f f = 0`; `k1 = k(1)`, `B = E_t[t k(t)]` with `t = x.q`.",
            "The value weight is absorbed into `M`.",
        ),
        steps=(
            Step(
                "Isotropy",
                "The loss is a convex quadratic in `M`, invariant under `M -> R M R^T` for every "
                "orthogonal `R`; the average of `R M* R^T` over `O(d)` is a minimiser and a multiple of the "
                "identity (Schur). So the optimum over `M = m I` is an optimum over all `M`.",
            ),
            Step(
                "The quadratic in m",
                "With `M = m I` the loss is `m^2 a2 - 2 m a1 + a0`, each expectation reduced "
                "by the independence of `q` and `E[q q^T] = I/d`:",
                (
                    Formula(sp.Symbol("a_0"), a0),
                    Formula(sp.Symbol("a_1"), a1),
                    Formula(sp.Symbol("a_2"), a2),
                    Formula(sp.Function(r"E_{\mathrm{lin}}")(m), loss_expr()),
                ),
            ),
            Step(
                "The optimum",
                "`dE/dm = 0` solved by SymPy; the curvature `2 a2` is positive, so it is the minimum.",
                (Formula(ms, m_star), Formula(sp.Function(r"E_{\mathrm{lin}}")(ms), e_star)),
            ),
            Step(
                "The limit n -> inf",
                "The limits of the two expressions above:",
                (Formula(sp.Limit(ms, n, sp.oo), m_lim), Formula(sp.Limit(el, n, sp.oo), e_lim)),
            ),
            Step(
                "The moments per class",
                "`k(1)` and `B = E_t[t k(t)] = E_f ||E_x[f(x) x]||^2` of each class "
                "(cosine: `g_d(k) = E_t[t sin(k t)]` in Bessel form), and the limit `k(1) - d B`:",
                (Formula(sp.Function("g_d")(k), cosine_projection_moment(d)),),
                Table(("class", "k(1)", "B", "k(1) - d B"), moments),
            ),
        ),
        results=(
            Step(
                "The limits per class and dimension",
                f"`L = 1`, cosine frequency `k = {FREQUENCY:g}` "
                f"(the linear claims' settings); `m*` tends to `d` for every class.",
                (),
                Table(("class", "d", "lim m*", "lim E_lin"), numbers),
            ),
        ),
        exactness="the optimum, the limits and the per-class moments are exact symbolic expressions; the table "
        "gives them as doubles (`sympy.N` at 20 digits, printed to 12 significant digits).",
    )
