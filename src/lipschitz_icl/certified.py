"""Certified enclosures: balls of python-flint (FLINT/Arb) that provably contain the true value.

Every function here returns an ``arb`` ball (midpoint and radius) computed in ball arithmetic: each
elementary operation, and each special function of Arb (regularised incomplete beta, Bessel and
hypergeometric functions, gamma), returns a ball that contains the exact result for every input in the
input balls, so the final ball contains the true value.  Nothing is sampled and no error is estimated:
the radius is a proof.  :class:`Enclosure` turns a ball into two doubles ``[low, high]`` rounded
outward (``low <= true value <= high``), for JSON and messages.

The sphere laws (the same formulas as :mod:`lipschitz_icl.sphere` and
:mod:`lipschitz_icl.concentration`, here certified):

* cap: ``P(x . q >= h) = I_{(1-h)/2}(a, a)``, ``a = (d-1)/2`` (``t = x . q`` has ``(1+t)/2 ~ Beta(a, a)``);
* projections: ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` for a rank-``k`` projector ``P`` (``k < d``):
  ``P(||Px||^2 >= s) = I_{1-s}((d-k)/2, k/2)`` and ``P(||Px||^2 <= s) = I_s(k/2, (d-k)/2)``;
* binomial tails, ``N ~ Binomial(n, p)``: ``P(N >= a) = I_p(a, n - a + 1)`` (``1 <= a <= n``) and
  ``P(N <= a) = I_{1-p}(n - a, a + 1)`` (``0 <= a < n``);
* ``Phi_d(w) = E exp(w t) = Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w) = 0F1(; d/2; w^2/4)`` (the
  hypergeometric form is entire in ``w``, so a ball about ``w = 0`` is fine).

``I`` is the regularised incomplete beta function (Arb's ``arb_hypgeom_beta_lower``).  Working
precision: :data:`PRECISION` bits unless a caller sets another with :func:`precision`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

__all__ = [
    "PRECISION",
    "precision",
    "exact",
    "interval",
    "low",
    "high",
    "Enclosure",
    "cap_probability",
    "projection_tail",
    "projection_lower_tail",
    "binomial_tail",
    "binomial_lower_tail",
    "phi",
]

PRECISION = 128  # bits of the working precision (about 38 digits); the balls' radii carry every rounding


@contextlib.contextmanager
def precision(bits: int = PRECISION):
    """Run the block at ``bits`` of working precision (python-flint's ``ctx.prec``), then restore it."""
    previous = ctx.prec
    ctx.prec = int(bits)
    try:
        yield
    finally:
        ctx.prec = previous


def exact(value) -> arb:
    """``value`` (int, float, :class:`~fractions.Fraction` or ``arb``) as a ball; exact for ints and
    floats (a double is a dyadic rational), a Fraction's quotient is rounded into a tight ball."""
    if isinstance(value, arb):
        return value
    if isinstance(value, Fraction):
        return arb(value.numerator) / value.denominator
    return arb(value)


def interval(lo, hi) -> arb:
    """A ball containing ``[lo, hi]`` (exact point when ``lo == hi``).  A ball's radius has a 30-bit
    mantissa, so the ball may reach slightly beyond the ends; when ``lo >= 0`` (``hi <= 0``) it is cut at 0
    so that its sign stays certain (``sqrt``, ``log`` and powers of a box that starts at 0)."""
    if lo == hi:
        return exact(lo)
    if not lo < hi:
        raise ValueError(f"interval [{lo!r}, {hi!r}] is inverted")
    ball = exact(lo).union(exact(hi))
    if lo >= 0:
        return ball.nonnegative_part()
    if hi <= 0:
        return -((-ball).nonnegative_part())
    return ball


def low(x: arb) -> float:
    """The largest double ``<= `` every point of ``x`` (``-inf`` when unbounded)."""
    if not x.is_finite():
        return -math.inf
    bound = x.lower()
    value = float(bound)
    if arb(value) > bound:
        value = math.nextafter(value, -math.inf)
    return value


def high(x: arb) -> float:
    """The smallest double ``>=`` every point of ``x`` (``inf`` when unbounded)."""
    if not x.is_finite():
        return math.inf
    bound = x.upper()
    value = float(bound)
    if arb(value) < bound:
        value = math.nextafter(value, math.inf)
    return value


@dataclass(frozen=True)
class Enclosure:
    """``[low, high]``: doubles rounded outward from a ball, so the true value lies between them."""

    low: float
    high: float

    @classmethod
    def of(cls, ball: arb) -> Enclosure:
        return cls(low(ball), high(ball))

    @property
    def width(self) -> float:
        return self.high - self.low

    def as_list(self) -> list:
        return [self.low, self.high]


def _beta_regularised(z: arb, a, b) -> arb:
    """``I_z(a, b)``, the regularised lower incomplete beta function, ``z`` in ``[0, 1]``."""
    return exact(z).beta_lower(exact(a), exact(b), regularized=True)


def cap_probability(d: int, h) -> arb:
    """``P(x . q >= h) = I_{(1-h)/2}((d-1)/2, (d-1)/2)`` for ``x`` uniform on ``S^{d-1}``, ``-1 <= h <= 1``."""
    a = Fraction(d - 1, 2)
    return _beta_regularised((1 - exact(h)) / 2, a, a)


def projection_tail(d: int, k: int, s) -> arb:
    """``P(||P x||^2 >= s) = I_{1-s}((d-k)/2, k/2)`` for a rank-``k`` projector (``1 <= k < d``,
    ``0 <= s <= 1``); ``k = d`` gives ``||P x||^2 = 1``, a tail of 1."""
    if k == d:
        return arb(1)
    if s < 0.5:  # 1 - s would round away a tiny s (a NaN ball at s = 2e-24): the complement I_s(k/2, (d-k)/2)
        return 1 - _beta_regularised(exact(s), Fraction(k, 2), Fraction(d - k, 2))
    return _beta_regularised(1 - exact(s), Fraction(d - k, 2), Fraction(k, 2))


def projection_lower_tail(d: int, k: int, s) -> arb:
    """``P(||P x||^2 <= s) = I_s(k/2, (d-k)/2)`` (``1 <= k < d``, ``0 <= s <= 1``); ``k = d``: 1 at
    ``s = 1``, else 0."""
    if k == d:
        return arb(1) if s >= 1 else arb(0)
    return _beta_regularised(exact(s), Fraction(k, 2), Fraction(d - k, 2))


def binomial_tail(n: int, a: int, p) -> arb:
    """``P(N >= a) = I_p(a, n - a + 1)`` for ``N ~ Binomial(n, p)`` (1 for ``a <= 0``, 0 for ``a > n``)."""
    if a <= 0:
        return arb(1)
    if a > n:
        return arb(0)
    return _beta_regularised(exact(p), a, n - a + 1)


def binomial_lower_tail(n: int, a: int, p) -> arb:
    """``P(N <= a) = I_{1-p}(n - a, a + 1)`` for ``N ~ Binomial(n, p)`` (0 for ``a < 0``, 1 for ``a >= n``)."""
    if a < 0:
        return arb(0)
    if a >= n:
        return arb(1)
    return _beta_regularised(1 - exact(p), n - a, a + 1)


def phi(d: int, w) -> arb:
    """``Phi_d(w) = E exp(w t) = 0F1(; d/2; w^2/4)`` (``t = x . q``; equal to
    ``Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w)``, :func:`lipschitz_icl.sphere.log_phi`)."""
    w = exact(w)
    return (w * w / 4).hypgeom_0f1(exact(Fraction(d, 2)))
