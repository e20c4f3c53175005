"""Gauss-Legendre quadrature with a certified error bound, in python-flint ball arithmetic.

For ``f`` analytic inside the Bernstein ellipse ``E_rho`` of ``[a, b]`` (foci ``a`` and ``b``, semi-axes
``h A`` and ``h B``, ``h = (b - a)/2``, ``A = (rho + 1/rho)/2``, ``B = (rho - 1/rho)/2``) with ``|f| <= M``
there, the ``q``-point Gauss-Legendre rule satisfies (Trefethen, "Is Gauss quadrature better than
Clenshaw-Curtis?", SIAM Review 2008, Theorem 4.5, the bound Arb's integrator uses)

    | int_a^b f  -  h sum_j w_j f(c + h x_j) |  <=  h (64/15) M rho^(2 - 2q) / (rho^2 - 1),   c = (a + b)/2

(stated there as ``rho^(-2n)`` for ``n + 1`` points; the exponent ``2 - 2q`` is weaker by ``rho^2``, so the
bound holds whichever count the statement uses).  ``M`` is bounded by evaluating ``f`` on the rectangle
``[c - h A, c + h A] x i [-h B, h B]``, which contains the ellipse; the nodes ``x_j`` and weights
``w_j`` are Arb's certified Legendre roots (``arb.legendre_p_root``).  The rule is used on panels by
:mod:`lipschitz_icl.certified.loss`; everything returned is a ball.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from flint import acb, arb, ctx

__all__ = ["rule", "Panel", "panel", "error_bound", "widen"]


@cache
def _rule(q: int, prec: int) -> tuple:
    roots = [arb.legendre_p_root(q, k, weight=True) for k in range(q)]
    return tuple(x for x, _ in roots), tuple(w for _, w in roots)


def rule(q: int) -> tuple:
    """``(nodes, weights)`` of the ``q``-point Gauss-Legendre rule on ``[-1, 1]`` (balls at ``ctx.prec``)."""
    return _rule(int(q), ctx.prec)


@dataclass(frozen=True)
class Panel:
    """One panel ``[a, b]``: mapped nodes, weights ``h w_j``, and the rectangle holding ``E_rho``."""

    a: arb
    b: arb
    q: int
    rho: float
    nodes: tuple
    weights: tuple
    half: arb
    factor: arb  # h (64/15) rho^(2-2q) / (rho^2 - 1): the error bound per unit of M

    def rectangle(self) -> tuple:
        """``(real ball [c - hA, c + hA], imaginary half-height hB)`` of the rectangle holding ``E_rho``."""
        c = (self.a + self.b) / 2
        rho = arb(self.rho)
        return c + arb(0, 1) * self.half * (rho + 1 / rho) / 2, self.half * (rho - 1 / rho) / 2

    def box(self) -> acb:
        real, height = self.rectangle()
        return acb(real, arb(0, 1) * height)


def panel(a, b, q: int, rho: float) -> Panel:
    """The ``q``-point rule on ``[a, b]`` (``a < b``: doubles, taken exactly, or exact balls such as a
    multiple of ``pi``: a panel ending at ``pi`` must end there exactly, not at the double nearest it) with
    ellipse parameter ``rho``."""
    x, w = rule(q)
    a, b = arb(a), arb(b)
    half = (b - a) / 2
    centre = (a + b) / 2
    r = arb(rho)
    factor = half * 64 / 15 * r ** (2 - 2 * q) / (r * r - 1)
    return Panel(a, b, q, rho, tuple(centre + half * xj for xj in x), tuple(half * wj for wj in w), half, factor)


def error_bound(p: Panel, magnitude: arb) -> arb:
    """``h (64/15) M rho^(2-2q) / (rho^2 - 1)`` with ``M`` the upper end of ``magnitude`` (a bound of
    ``|f|`` on the rectangle); an upper bound of the rule's error on ``p`` (module docstring)."""
    return (p.factor * arb(magnitude.abs_upper())).upper()


def widen(value, radius: arb):
    """``value`` with ``[-radius, radius]`` added (``radius >= 0``; a ball or a complex ball)."""
    return value + arb(0, 1) * arb(radius.abs_upper())
