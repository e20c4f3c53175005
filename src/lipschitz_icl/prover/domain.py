"""The domain of a statement and its boxes: what ``lipschitz-icl prove`` partitions.

A domain gives every parameter of a quantity either a closed real interval ``[lo, hi]`` (``h``, ``s``,
``t``, ``p``, ``L``, ``sigma``, ``w``) or a set of integers (``d``, ``k``, ``n``, ``a``): a list of values or a
range ``{from = a, to = b}``.  It is the union of *root boxes*: the product of the real intervals with
one integer piece per parameter (each listed value is a piece of its own, a range is one piece); at
most :data:`~lipschitz_icl.prover.checker.MAX_ROOTS` of them, counted before any is built.  The
parameters' ranges are those of :data:`lipschitz_icl.prover.trusted.PARAMETERS`.

A :class:`Box` is a product of closed ranges, one per parameter, split in two along one parameter at a
time: a real range ``[lo, hi]`` at a point ``m`` inside it (``[lo, m]`` and ``[m, hi]``; ``m`` a short
dyadic near the middle, so that deeper boxes have exact ball endpoints), an integer range ``{a..b}`` into
``{a..m}`` and ``{m+1..b}`` (``m`` the middle, or the geometric middle ``isqrt(a b)`` when ``b >= 4 a >= 4``:
a range of ``n`` over decades is halved in ratio, so a proof over the whole real interval of a box -- the loss
is analytic in ``n`` -- meets boxes of even relative width).  Its *share* of the domain is its measure over
the domain's (length for a real parameter, number of integers for an integer one; a real parameter fixed to
a point counts 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.prover.checker import MAX_LISTED, MAX_ROOTS
from lipschitz_icl.prover.trusted import PARAMETERS
from lipschitz_icl.validation import ParameterError, check_int, check_real

__all__ = [
    "REAL_PARAMS",
    "INTEGER_PARAMS",
    "check_value",
    "parse_domain",
    "Box",
    "Domain",
    "split_point",
]

REAL_PARAMS = tuple(name for name, p in PARAMETERS.items() if not p.integer)
INTEGER_PARAMS = tuple(name for name, p in PARAMETERS.items() if p.integer)
MIN_WIDTH = 1e-280  # a real range narrower than this is not split (no subnormal doubles)


def check_value(name: str, value):
    """``value`` checked against the range of parameter ``name``
    (:data:`lipschitz_icl.prover.trusted.PARAMETERS`)."""
    parameter = PARAMETERS[name]
    if parameter.integer:
        return check_int(name, value, minimum=parameter.minimum, maximum=parameter.maximum)
    return check_real(
        name, value, minimum=parameter.minimum, maximum=parameter.maximum, strict_minimum=parameter.open_minimum
    )


def _integer_pieces(name: str, raw) -> tuple:
    if isinstance(raw, dict):
        if set(raw) != {"from", "to"}:
            raise ParameterError(name, "an integer, a list of integers or a range {from = a, to = b}", raw)
        a, b = check_value(name, raw["from"]), check_value(name, raw["to"])
        if a > b:
            raise ParameterError(name, "a range with from <= to (an inverted range is empty)", raw)
        return ((a, b),)
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise ParameterError(name, "a non-empty list of integers", raw)
    if len(values) > MAX_LISTED:
        raise ParameterError(name, f"at most {MAX_LISTED} listed integers (use a range {{from, to}})", len(values))
    checked = [check_value(name, v) for v in values]
    if len(set(checked)) != len(checked):
        raise ParameterError(name, "a list without repeated values", raw)
    return tuple((v, v) for v in checked)


def _real_piece(name: str, raw) -> tuple:
    if not isinstance(raw, list):
        v = check_value(name, raw)
        return ((v, v),)
    if len(raw) != 2:
        raise ParameterError(name, "a closed interval [lo, hi] (two numbers)", raw)
    lo, hi = check_value(name, raw[0]), check_value(name, raw[1])
    if lo > hi:
        raise ParameterError(name, "an interval [lo, hi] with lo <= hi (an inverted interval is empty)", raw)
    return ((lo, hi),)


def parse_domain(raw: dict, required: tuple, allowed: tuple | None = None) -> Domain:
    """The :class:`Domain` of the TOML table ``raw`` (module docstring); a missing, unknown or
    out-of-range parameter, an empty or inverted interval raise :class:`ParameterError` naming it."""
    allowed = tuple(required) if allowed is None else tuple(allowed)
    if not isinstance(raw, dict):
        raise ParameterError("domain", "a table of parameter = interval or integers", raw)
    for name in raw:
        if name not in allowed:
            raise ParameterError(name, f"a parameter of the quantity (one of {', '.join(allowed)})", name)
    for name in required:
        if name not in raw:
            raise ParameterError(name, "given in the domain (it is a parameter of the quantity)", "missing")
    pieces = {}
    for name in allowed:
        if name in raw:
            pieces[name] = _integer_pieces(name, raw[name]) if name in INTEGER_PARAMS else _real_piece(name, raw[name])
    roots = math.prod(len(p) for p in pieces.values())  # counted before any box is built
    if roots > MAX_ROOTS:
        requirement = f"at most {MAX_ROOTS} root boxes (the product of the counts of listed values; use ranges)"
        raise ParameterError("domain", requirement, roots)
    return Domain(pieces)


def split_point(lo: float, hi: float) -> float:
    """A double strictly inside ``(lo, hi)`` near the middle: the middle rounded to a multiple of
    ``2^(floor(log2(hi - lo)) - 3)`` (a short dyadic), or the exact middle when that fails."""
    mid = lo + (hi - lo) / 2
    width = hi - lo
    if width > 0 and math.isfinite(width):
        step = 2.0 ** (math.floor(math.log2(width)) - 3)
        rounded = round(mid / step) * step if step > 0 else mid
        if lo < rounded < hi:
            return rounded
    return mid


@dataclass(frozen=True)
class Box:
    """A product of closed ranges: ``ranges`` is a tuple of ``(name, lo, hi)`` in the domain's order
    (ints for integer parameters, doubles for real ones)."""

    ranges: tuple

    def __getitem__(self, name: str) -> tuple:
        for key, lo, hi in self.ranges:
            if key == name:
                return lo, hi
        raise KeyError(name)

    @property
    def names(self) -> tuple:
        return tuple(name for name, _, _ in self.ranges)

    def is_point(self, name: str) -> bool:
        lo, hi = self[name]
        return lo == hi

    def splittable(self, name: str) -> bool:
        lo, hi = self[name]
        if name in INTEGER_PARAMS:
            return hi > lo
        return hi - lo > MIN_WIDTH and lo < split_point(lo, hi) < hi

    def split(self, name: str) -> tuple[float | int, Box, Box]:
        """``(at, lower, upper)``: the two halves along ``name`` (see the module docstring)."""
        lo, hi = self[name]
        if name in INTEGER_PARAMS:
            at = max(lo, min(math.isqrt(lo * hi), hi - 1)) if hi >= 4 * lo >= 4 else (lo + hi) // 2
        else:
            at = split_point(lo, hi)
        upper_lo = at + 1 if name in INTEGER_PARAMS else at
        return at, self.replace(name, lo, at), self.replace(name, upper_lo, hi)

    def replace(self, name: str, lo, hi) -> Box:
        return Box(tuple((key, lo, hi) if key == name else (key, a, b) for key, a, b in self.ranges))

    def corner(self, sides: dict) -> dict:
        """The point taking, for each parameter, its ``lo`` (side -1) or ``hi`` (side +1) end."""
        return {key: (hi if sides.get(key, -1) > 0 else lo) for key, lo, hi in self.ranges}

    def midpoint(self) -> dict:
        """A point of the box: the split point of every real range, the lower middle of an integer one."""
        return {
            key: (lo + hi) // 2 if key in INTEGER_PARAMS else (lo if lo == hi else split_point(lo, hi))
            for key, lo, hi in self.ranges
        }

    def balls(self) -> dict:
        """Name -> ``arb`` ball holding the range (:func:`lipschitz_icl.certified.arithmetic.interval`)."""
        return {key: arithmetic.interval(lo, hi) for key, lo, hi in self.ranges}

    def measure(self) -> Fraction:
        """Length of every non-degenerate real range times the count of every integer range (exact)."""
        out = Fraction(1)
        for key, lo, hi in self.ranges:
            if key in INTEGER_PARAMS:
                out *= hi - lo + 1
            elif hi > lo:
                out *= Fraction(hi) - Fraction(lo)
        return out

    def to_dict(self) -> dict:
        return {key: [lo, hi] for key, lo, hi in self.ranges}

    def describe(self) -> str:
        return ", ".join(
            f"{key}={lo:g}"
            if lo == hi
            else (f"{key} in {{{lo}..{hi}}}" if key in INTEGER_PARAMS else f"{key} in [{lo!r}, {hi!r}]")
            for key, lo, hi in self.ranges
        )


@dataclass(frozen=True)
class Domain:
    """``pieces``: name -> tuple of ``(lo, hi)`` pieces (one for a real interval, one per listed integer or
    one for an integer range), in the file's parameter order."""

    pieces: dict

    def roots(self) -> list[Box]:
        names = list(self.pieces)
        return [
            Box(tuple((name, lo, hi) for name, (lo, hi) in zip(names, combo)))
            for combo in itertools.product(*(self.pieces[name] for name in names))
        ]

    def measure(self) -> Fraction:
        return sum((box.measure() for box in self.roots()), Fraction(0))

    def corner_count(self) -> int:
        """How many points :meth:`corners` lists, counted without building them: the product over the
        parameters of their pieces' ends (1 for a single value, 2 for a range; pieces never share an end)."""
        return math.prod(sum(1 if lo == hi else 2 for lo, hi in pieces) for pieces in self.pieces.values())

    def hull_corners(self) -> list[dict]:
        """The corners of the smallest box holding the domain, once each: every parameter at its smallest
        or its largest value (each a point of the domain: a real interval's end, a listed integer or a
        range's end)."""
        ends = {name: sorted({min(lo for lo, _ in p), max(hi for _, hi in p)}) for name, p in self.pieces.items()}
        return [dict(zip(ends, combo)) for combo in itertools.product(*ends.values())]

    def corners(self) -> list[dict]:
        """Every corner of every root box, once each (the points where the bound is checked to be defined;
        :meth:`corner_count` of them)."""
        out: dict[tuple, dict] = {}
        for box in self.roots():
            for sides in itertools.product((-1, 1), repeat=len(box.ranges)):
                point = box.corner(dict(zip(box.names, sides)))
                out.setdefault(tuple(point.items()), point)
        return list(out.values())

    def to_dict(self) -> dict:
        """JSON form: a real parameter ``[lo, hi]``; an integer one a list of ``[from, to]`` pieces."""
        return {
            name: (list(pieces[0]) if name in REAL_PARAMS else [list(p) for p in pieces])
            for name, pieces in self.pieces.items()
        }

    @classmethod
    def from_dict(cls, data: dict) -> Domain:
        """Inverse of :meth:`to_dict` (no range checks: the caller validates)."""
        pieces: dict[str, tuple[tuple[float, float], ...]] = {}
        for name, value in data.items():
            if name in REAL_PARAMS:
                pieces[name] = ((float(value[0]), float(value[1])),)
            else:
                pieces[name] = tuple((int(a), int(b)) for a, b in value)
        return cls(pieces)
