"""Balls of python-flint (FLINT/Arb) that provably contain the true value, and their outward-rounded ends.

Every elementary operation of ball arithmetic, and each special function of Arb (regularised incomplete
beta, Bessel and hypergeometric functions, gamma), returns a ball (midpoint and radius) that contains the
exact result for every input in the input balls, so a computation's final ball contains the true value.
Nothing is sampled and no error is estimated: the radius is a proof.  This module holds what every
certified computation shares: the working precision (:data:`PRECISION` bits unless a caller sets another
with :func:`precision`), exact balls of doubles and fractions (:func:`exact`), the ball of an interval
(:func:`interval`), and the doubles rounded outward from a ball (:func:`low`, :func:`high`,
:class:`Enclosure`: ``low <= true value <= high``), for JSON and messages.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

__all__ = ["PRECISION", "precision", "exact", "interval", "low", "high", "Enclosure"]

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
