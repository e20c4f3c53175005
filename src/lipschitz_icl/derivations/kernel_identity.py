"""Softmax attention with ``M = w I`` on the sphere is a Gaussian-kernel smoother.

Paper: Lemma B.5 / Eqs. (7)-(8) (registry: thm34.isotropy).  For unit vectors
``x, y`` in R^d,

    ||x - y||^2 = x.x + y.y - 2 x.y = 2 - 2 x.y,     hence
    exp(x^T (w I) y) = exp(w x.y) = exp(w) * exp(-w ||x - y||^2 / 2),

so the attention weight of a context point ``x_i`` seen from the query ``x`` is, after the softmax
normalisation removes the common factor ``exp(w)``,

    p_i = K_h(x_i, x) / sum_j K_h(x_j, x),    K_h(a, b) = exp(-||a - b||^2 / (2 h^2)),  h = 1/sqrt(w):

a Nadaraya-Watson (Gaussian-kernel) smoother with bandwidth ``1/sqrt(w)``.

The derivation below is done with SymPy on explicit coordinates, for every dimension in a given
range, the unit-norm constraints being imposed by substitution (not assumed in the algebra).
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from lipschitz_icl.derivations.writeup import Document, Formula, Step, Table

__all__ = [
    "w",
    "squared_distance_identity",
    "kernel_identity_residual",
    "bandwidth",
    "softmax_weights_residual",
    "verify_kernel_identity",
    "document",
]

DIMS = range(1, 7)  # the dimensions verify_kernel_identity checks by default
N_POINTS = 4

w = sp.Symbol("w", positive=True)


def _vectors(d: int):
    xs = sp.symbols(f"x1:{d + 1}", real=True)
    ys = sp.symbols(f"y1:{d + 1}", real=True)
    return sp.Matrix(xs), sp.Matrix(ys)


def _squared_distance_sides(d: int):
    """``(||x - y||^2, |x|^2 + |y|^2 - 2 x.y)`` in coordinates, unexpanded."""
    x, y = _vectors(d)
    return ((x - y).T * (x - y))[0, 0], (x.T * x)[0, 0] + (y.T * y)[0, 0] - 2 * (x.T * y)[0, 0]


@cache
def squared_distance_identity(d: int) -> sp.Expr:
    """``||x - y||^2 - (|x|^2 + |y|^2 - 2 x.y)`` expanded in coordinates; it is identically 0."""
    dist2, rhs = _squared_distance_sides(d)
    return sp.expand(dist2 - rhs)


def _sphere_constraint(d: int) -> dict:
    """``{x_d^2: 1 - sum_{k<d} x_k^2, y_d^2: ...}``: ``|x| = |y| = 1`` as a substitution."""
    x, y = _vectors(d)
    return {
        x[d - 1] ** 2: 1 - sum(x[k] ** 2 for k in range(d - 1)),
        y[d - 1] ** 2: 1 - sum(y[k] ** 2 for k in range(d - 1)),
    }


@cache
def kernel_identity_residual(d: int, on_sphere: bool = True) -> sp.Expr:
    """``log exp(x^T (wI) y) - log[exp(w) exp(-w ||x - y||^2 / 2)]`` with ``|x| = |y| = 1`` imposed.

    Both sides are exponentials of polynomials in the coordinates, so the identity holds iff this
    exponent gap vanishes.  The constraint is imposed by eliminating the last coordinate of each
    vector: ``x_d^2 = 1 - sum_{k<d} x_k^2`` (and the same for ``y``), which holds on the whole sphere
    whatever the sign of ``x_d``.  Returned expanded; the claim is that it is 0.  With
    ``on_sphere=False`` the constraint is not imposed and the gap is ``w (|x|^2 + |y|^2 - 2) / 2``,
    not 0: the identity is a property of the sphere.
    """
    x, y = _vectors(d)
    M = w * sp.eye(d)
    lhs = (x.T * M * y)[0, 0]
    rhs = w - w * ((x - y).T * (x - y))[0, 0] / 2
    gap = sp.expand(lhs - rhs)
    return sp.expand(gap.subs(_sphere_constraint(d))) if on_sphere else gap


def bandwidth() -> sp.Expr:
    """The bandwidth ``h`` solving ``exp(-w r^2 / 2) = exp(-r^2 / (2 h^2))`` for all ``r``: ``1/sqrt(w)``."""
    h, r = sp.symbols("h r", positive=True)
    solutions = sp.solve(sp.Eq(-w * r**2 / 2, -(r**2) / (2 * h**2)), h)
    (sol,) = [s for s in solutions if s.is_positive]
    return sp.simplify(sol)


@cache
def softmax_weights_residual(n: int) -> sp.Expr:
    """Softmax over ``n`` context points of ``w t_i`` minus the normalised Gaussian kernel weights.

    With ``t_i = x_i . x`` and ``||x_i - x||^2 = 2 - 2 t_i`` (unit vectors), the softmax weight
    ``exp(w t_1) / sum_j exp(w t_j)`` equals ``K(x_1, x) / sum_j K(x_j, x)``: the factor ``exp(w)``
    cancels.  Returned simplified; the claim is that it is 0.
    """
    soft, kernel = _softmax_and_kernel_weight(n)
    return sp.simplify(soft - kernel)


def _softmax_and_kernel_weight(n: int):
    """The weight of point 1 of ``n``: ``exp(w t_1)/sum_j exp(w t_j)`` and ``K_1/sum_j K_j``,
    ``K_j = exp(-w (2 - 2 t_j)/2)``."""
    t = sp.symbols(f"t1:{n + 1}", real=True)
    soft = sp.exp(w * t[0]) / sum(sp.exp(w * ti) for ti in t)
    kern = [sp.exp(-w * (2 - 2 * ti) / 2) for ti in t]
    return soft, kern[0] / sum(kern)


def verify_kernel_identity(dims=DIMS, n_points: int = N_POINTS) -> bool:
    """True when every symbolic residual above vanishes for the given dimensions and ``n_points``,
    and the bandwidth is ``1/sqrt(w)``."""
    ok = all(squared_distance_identity(d) == 0 for d in dims)
    ok = ok and all(kernel_identity_residual(d) == 0 for d in dims)
    ok = ok and softmax_weights_residual(n_points) == 0
    return bool(ok and sp.simplify(bandwidth() - 1 / sp.sqrt(w)) == 0)


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    t, r = sp.Symbol(r"x \cdot y", real=True), sp.Symbol(r"\|x - y\|", positive=True)
    h = bandwidth()
    kernel = sp.exp(-(r**2) / (2 * h**2))
    d_show = 3
    dist2, expanded = _squared_distance_sides(d_show)
    gap = sp.Symbol(r"\Delta_d")
    soft, weight = _softmax_and_kernel_weight(N_POINTS)
    statement = Step(
        "",
        "For unit vectors `x, y` in `R^d` and `w > 0` the attention score `exp(x^T (w I) y)` "
        "is `exp(w)` times a Gaussian kernel in `||x - y||` with bandwidth `h = 1/sqrt(w)`; the "
        "softmax weights of `M = w I` are therefore the Nadaraya-Watson weights of that kernel.",
        (Formula(sp.exp(w * t), sp.Mul(sp.exp(w), kernel, evaluate=False)), Formula(sp.Symbol("h"), h)),
    )
    steps = (
        Step(
            "The squared distance in coordinates",
            f"Written out in coordinates (here `d = {d_show}`), `||x - y||^2` and `|x|^2 + |y|^2 - 2 x.y` "
            "expand to the same polynomial: their difference is identically 0.",
            (Formula(dist2, expanded),),
        ),
        Step(
            "The exponent gap off the sphere",
            f"`Delta_d = x^T (w I) y - (w - w ||x - y||^2 / 2)`, expanded (`d = {d_show}`). Without the "
            "unit-norm constraint it is not 0: the identity is a property of the sphere.",
            (Formula(gap, kernel_identity_residual(d_show, on_sphere=False)),),
        ),
        Step(
            "Imposing the sphere",
            "The constraint is imposed by eliminating the last coordinate of each vector (valid on the whole "
            "sphere, whatever its sign); the gap then expands to 0 in every dimension checked.",
            tuple(Formula(k, v) for k, v in _sphere_constraint(d_show).items()),
            Table(("d", "Delta_d on the sphere"), tuple((d, kernel_identity_residual(d)) for d in DIMS)),
        ),
        Step(
            "The bandwidth",
            "Solving `exp(-w r^2/2) = exp(-r^2/(2 h^2))` for all `r` gives the positive root:",
            (Formula(sp.Symbol("h"), h),),
        ),
        Step(
            "The softmax weights",
            f"With `t_i = x_i . x` and `||x_i - x||^2 = 2 - 2 t_i`, the softmax weight of point 1 among "
            f"`n = {N_POINTS}` equals its normalised kernel weight (the common factor `exp(w)` cancels); "
            "their difference simplifies to 0.",
            (Formula(soft, weight), Formula(soft - weight, softmax_weights_residual(N_POINTS))),
        ),
    )
    results = (
        Step(
            "The identity and the bandwidth",
            f"Verified symbolically for `d` in {DIMS.start}..{DIMS.stop - 1} and `n = {N_POINTS}`: "
            f"`verify_kernel_identity()` returns {verify_kernel_identity()}.",
            (Formula(sp.Symbol("h"), h),),
        ),
    )
    return Document(
        name="kernel_identity",
        title="Softmax attention with M = wI is a Gaussian-kernel smoother",
        summary="`exp(w x.y) = e^w exp(-w ||x-y||^2/2)` on the sphere: softmax weights are Nadaraya-Watson "
        "weights with bandwidth `1/sqrt(w)`",
        paper="Lemma B.5, Eqs. (7)-(8)",
        claims=("thm34.isotropy",),
        used_by=(),
        statement=statement,
        assumptions=(
            "`x`, `y` (and every context point) lie on the unit sphere `S^(d-1)`.",
            "`M = w I` with `w > 0` (the isotropic form; thm34.isotropy checks the optimum has it).",
        ),
        steps=steps,
        results=results,
        exactness="every result is exact (SymPy algebra on explicit coordinates, no numerics).",
    )
