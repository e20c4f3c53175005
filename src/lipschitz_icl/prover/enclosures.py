"""Certified enclosures of a tail quantity over a box of parameters, by proved monotonicity.

Over a box the quantity lies between its values at two corners, because it is monotone in every
parameter that varies on the box; each monotonicity below is a theorem (its proof is the one line given),
used as such by the prover (:mod:`lipschitz_icl.prover.search`).  A parameter in which no monotonicity is
used must be a single value on the box: :func:`enclose` raises :class:`NeedsSplit` naming it.

Proofs (couplings: ``x = g / |g|`` with ``g`` standard Gaussian in ``R^d``; rotation invariance lets a
rank-``k`` projector be the coordinate projector onto the first ``k`` coordinates; ``N = #{i <= n: U_i <=
p}`` with ``U_i`` i.i.d. uniform on ``[0, 1]``):

* cap ``P(t >= h)``, ``t = x . q = g_1 / |g|``: a tail probability, so nonincreasing in ``h``; ``|g|``
  grows with ``d`` (more coordinates), so ``|t|`` is pointwise nonincreasing in ``d``; for ``h >= 0``,
  ``P(t >= h) = P(|t| >= h) / 2`` is nonincreasing in ``d``, for ``h <= 0``,
  ``P(t >= h) = 1 - P(|t| > -h) / 2`` is nondecreasing in ``d`` (``t`` is symmetric).
* projection ``||P x||^2 = sum_{i <= k} g_i^2 / sum_{i <= d} g_i^2``: pointwise nondecreasing in ``k``
  and nonincreasing in ``d``; the upper tail ``P(||Px||^2 >= s)`` is nonincreasing in ``s``, the lower
  tail ``P(||Px||^2 <= s)`` nondecreasing in ``s`` (the mirror in ``k`` and ``d``).
* binomial ``N``: pointwise nondecreasing in ``p`` and in ``n``; ``P(N >= a)`` is nonincreasing in ``a``,
  ``P(N <= a)`` nondecreasing in ``a`` (the mirror in ``p`` and ``n``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flint import arb

from lipschitz_icl.certified import laws
from lipschitz_icl.prover.domain import Box

__all__ = ["TailLaw", "NeedsSplit", "LAWS", "enclose", "point_value"]


class NeedsSplit(Exception):
    """The quantity has no enclosure on this box until ``param`` is narrowed (no monotonicity used);
    ``param`` None: no narrowing helps (the box is final)."""

    def __init__(self, param: str | None, reason: str = ""):
        super().__init__(param)
        self.param, self.reason = param, reason


@dataclass(frozen=True)
class TailLaw:
    """A quantity with its certified value at a point and its monotone directions on a box
    (name -> +1 nondecreasing, -1 nonincreasing, 0 none used)."""

    name: str
    params: tuple
    value: Callable[[dict], arb]
    directions: Callable[[Box], dict]
    limits: dict  # parameter -> (minimum, maximum) of the quantity's range


def _cap_directions(box: Box) -> dict:
    h_lo, h_hi = box["h"]
    return {"h": -1, "d": -1 if h_lo >= 0 else (1 if h_hi <= 0 else 0)}


def _mirror(directions: Callable[[Box], dict]) -> Callable[[Box], dict]:
    return lambda box: {k: -v for k, v in directions(box).items()}


def _projection_directions(box: Box) -> dict:
    return {"s": -1, "k": 1, "d": -1}


def _binomial_directions(box: Box) -> dict:
    return {"p": 1, "n": 1, "a": -1}


_TAIL_LIMITS = {
    "d": (2, 512),
    "h": (-1.0, 1.0),
    "k": (1, 512),
    "s": (0.0, 1.0),
    "n": (1, 10**15),
    "a": (0, 10**15),
    "p": (0.0, 1.0),
}

LAWS = {
    "cap_tail": TailLaw(
        "cap_tail", ("d", "h"), lambda q: laws.cap_probability(q["d"], q["h"]), _cap_directions, _TAIL_LIMITS
    ),
    "projection_tail": TailLaw(
        "projection_tail",
        ("d", "k", "s"),
        lambda q: laws.projection_tail(q["d"], q["k"], q["s"]),
        _projection_directions,
        _TAIL_LIMITS,
    ),
    "projection_lower_tail": TailLaw(
        "projection_lower_tail",
        ("d", "k", "s"),
        lambda q: laws.projection_lower_tail(q["d"], q["k"], q["s"]),
        _mirror(_projection_directions),
        _TAIL_LIMITS,
    ),
    "binomial_tail": TailLaw(
        "binomial_tail",
        ("n", "a", "p"),
        lambda q: laws.binomial_tail(q["n"], q["a"], q["p"]),
        _binomial_directions,
        _TAIL_LIMITS,
    ),
    "binomial_lower_tail": TailLaw(
        "binomial_lower_tail",
        ("n", "a", "p"),
        lambda q: laws.binomial_lower_tail(q["n"], q["a"], q["p"]),
        _mirror(_binomial_directions),
        _TAIL_LIMITS,
    ),
}


def point_value(law: TailLaw, point: dict) -> arb:
    """The certified value at one point of the domain."""
    return law.value(point)


def enclose(law: TailLaw, box: Box) -> arb:
    """A ball holding the quantity at every point of ``box``: the union of its values at the corner where
    it is smallest and the corner where it is largest (module docstring: monotone in every parameter
    that varies); raises :class:`NeedsSplit` for a varying parameter without a monotonicity."""
    directions = law.directions(box)
    for name, lo, hi in box.ranges:
        if lo != hi and not directions.get(name, 0):
            raise NeedsSplit(name, f"no monotonicity in {name} is used here")
    smallest = box.corner({name: -directions.get(name, 0) or -1 for name in box.names})
    largest = box.corner({name: directions.get(name, 0) or 1 for name in box.names})
    if smallest == largest:
        return law.value(smallest)
    return law.value(smallest).union(law.value(largest))
