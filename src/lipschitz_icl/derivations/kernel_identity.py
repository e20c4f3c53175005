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

from functools import lru_cache

import sympy as sp

__all__ = [
    "w",
    "squared_distance_identity",
    "kernel_identity_residual",
    "bandwidth",
    "softmax_weights_residual",
    "verify_kernel_identity",
]

w = sp.Symbol("w", positive=True)


def _vectors(d: int):
    xs = sp.symbols(f"x1:{d + 1}", real=True)
    ys = sp.symbols(f"y1:{d + 1}", real=True)
    return sp.Matrix(xs), sp.Matrix(ys)


@lru_cache(maxsize=None)
def squared_distance_identity(d: int) -> sp.Expr:
    """``||x - y||^2 - (|x|^2 + |y|^2 - 2 x.y)`` expanded in coordinates; it is identically 0."""
    x, y = _vectors(d)
    dist2 = ((x - y).T * (x - y))[0, 0]
    return sp.expand(dist2 - ((x.T * x)[0, 0] + (y.T * y)[0, 0] - 2 * (x.T * y)[0, 0]))


@lru_cache(maxsize=None)
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
    constraint = {
        x[d - 1] ** 2: 1 - sum(x[k] ** 2 for k in range(d - 1)),
        y[d - 1] ** 2: 1 - sum(y[k] ** 2 for k in range(d - 1)),
    }
    gap = sp.expand(lhs - rhs)
    return sp.expand(gap.subs(constraint)) if on_sphere else gap


def bandwidth() -> sp.Expr:
    """The bandwidth ``h`` solving ``exp(-w r^2 / 2) = exp(-r^2 / (2 h^2))`` for all ``r``: ``1/sqrt(w)``."""
    h, r = sp.symbols("h r", positive=True)
    solutions = sp.solve(sp.Eq(-w * r**2 / 2, -(r**2) / (2 * h**2)), h)
    (sol,) = [s for s in solutions if s.is_positive]
    return sp.simplify(sol)


@lru_cache(maxsize=None)
def softmax_weights_residual(n: int) -> sp.Expr:
    """Softmax over ``n`` context points of ``w t_i`` minus the normalised Gaussian kernel weights.

    With ``t_i = x_i . x`` and ``||x_i - x||^2 = 2 - 2 t_i`` (unit vectors), the softmax weight
    ``exp(w t_1) / sum_j exp(w t_j)`` equals ``K(x_1, x) / sum_j K(x_j, x)``: the factor ``exp(w)``
    cancels.  Returned simplified; the claim is that it is 0.
    """
    t = sp.symbols(f"t1:{n + 1}", real=True)
    soft = sp.exp(w * t[0]) / sum(sp.exp(w * ti) for ti in t)
    kern = [sp.exp(-w * (2 - 2 * ti) / 2) for ti in t]
    return sp.simplify(soft - kern[0] / sum(kern))


def verify_kernel_identity(dims=range(1, 7), n_points: int = 4) -> bool:
    """True when every symbolic residual above vanishes for the given dimensions and ``n_points``,
    and the bandwidth is ``1/sqrt(w)``."""
    ok = all(squared_distance_identity(d) == 0 for d in dims)
    ok = ok and all(kernel_identity_residual(d) == 0 for d in dims)
    ok = ok and softmax_weights_residual(n_points) == 0
    return bool(ok and sp.simplify(bandwidth() - 1 / sp.sqrt(w)) == 0)
