"""Argument checks shared by every public function and CLI command.

One place for validation (in the spirit of ``sklearn.utils.validation``): each check either
returns the value in canonical form or raises :class:`ParameterError` whose message names the
parameter, the allowed range and the value received, e.g.

    parameter 'd' must be an integer >= 2 (got 1)

The CLI turns a :class:`ParameterError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal, InvalidOperation

import numpy as np

__all__ = [
    "ParameterError",
    "check_int",
    "check_real",
    "check_choice",
    "check_matrix",
    "check_rng",
    "parse_int",
    "parse_real",
    "shorten",
    "received",
]

MAX_ECHO = 100  # characters of a received value repeated in a message
MAX_NUMBER_TEXT = 200  # characters of a number given as text (the CLI; 1e150 written out has 151)
MAX_INT_DIGITS = 19  # digits of an integer a message repeats in full (9223372036854775807, the seed bound, has 19)
_INT_TEXT = re.compile(r"[+-]?[0-9]+(?:\.0*)?(?:[eE]\+?[0-9]{1,3})?", re.ASCII)
_REAL_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?", re.ASCII)


def received(value: object) -> str:
    """What a message says was received: ``got <value>`` (:func:`shorten`), or ``not given`` for ``None``
    (an option left out)."""
    return "not given" if value is None else f"got {shorten(value)}"


def shorten(value: object) -> str:
    """``repr(value)`` cut to :data:`MAX_ECHO` characters (the rest counted), for messages; an integer of
    more than :data:`MAX_INT_DIGITS` digits in scientific form (``10**150`` as ``1e+150``, its leading digits
    kept: ``1.234568e+150``)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**MAX_INT_DIGITS:
        mantissa = f"{Decimal(int(value)):.6e}"  # never str(): Python refuses integers past 4300 digits there
        head, exponent = mantissa.split("e")
        return f"{head.rstrip('0').rstrip('.')}e{exponent}"
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4300-digit limit inside a container
        return f"a {type(value).__name__} too large to print"
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[: MAX_ECHO - 20]}... ({len(text)} characters)"


class ParameterError(ValueError):
    """A public argument is outside its allowed range."""

    def __init__(self, name: str, requirement: str, value: object):
        self.name = name
        self.requirement = requirement
        self.value = value
        super().__init__(f"parameter '{name}' must be {requirement} ({received(value)})")


def check_int(name: str, value: object, *, minimum: float | None = None, maximum: float | None = None) -> int:
    """Return ``value`` as ``int``; it must be integral and within ``[minimum, maximum]``."""
    bounds = _describe_bounds(minimum, maximum)
    requirement = "an integer" + bounds
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, numbers.Real)):
        raise ParameterError(name, requirement, value)
    fractional = isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
    if fractional and (not math.isfinite(value) or value != int(value)):  # type: ignore[call-overload]  # typeshed: Real lacks __int__
        raise ParameterError(name, requirement, value)
    ivalue = int(value)  # type: ignore[call-overload]  # typeshed: Real lacks __int__
    if (minimum is not None and ivalue < minimum) or (maximum is not None and ivalue > maximum):
        raise ParameterError(name, requirement, value)
    return ivalue


def check_real(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` within the stated bounds.

    ``strict_minimum=True`` requires ``value > minimum`` instead of ``value >= minimum``.
    """
    if minimum is None:
        lower = ""
    else:
        lower = f" {'>' if strict_minimum else '>='} {minimum:g}"
    upper = "" if maximum is None else f" <= {maximum:g}"
    joint = " and" if lower and upper else ""
    requirement = f"a finite real number{lower}{joint}{upper}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, requirement, value)
    fvalue = float(value)
    if not math.isfinite(fvalue):
        raise ParameterError(name, requirement, value)
    if minimum is not None and (fvalue < minimum or (strict_minimum and fvalue == minimum)):
        raise ParameterError(name, requirement, value)
    if maximum is not None and fvalue > maximum:
        raise ParameterError(name, requirement, value)
    return fvalue


def check_choice(name: str, value: object, choices) -> str:
    """Return ``value`` if it is one of ``choices`` (strings)."""
    choices = tuple(choices)
    if value not in choices:
        raise ParameterError(name, "one of " + ", ".join(repr(c) for c in choices), value)
    return value  # type: ignore[return-value]


def check_matrix(name: str, value: object, d: int) -> np.ndarray:
    """Return ``value`` as a finite float64 array of shape ``(d, d)``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(name, f"a finite real matrix of shape ({d}, {d})", value) from None
    if array.shape != (d, d):
        raise ParameterError(name, f"a finite real matrix of shape ({d}, {d})", f"array of shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ParameterError(name, f"a finite real matrix of shape ({d}, {d})", "matrix with non-finite entries")
    return array


def check_rng(rng: object) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a seed, a SeedSequence or a Generator.

    ``None`` is refused: every number in the project must be reproducible from its seed.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise ParameterError("rng", "a non-negative integer seed, a numpy SeedSequence or Generator", rng)


def parse_int(name: str, text: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """The integer written in ``text`` (ASCII digits; ``1e14`` or ``100.0`` when integral), read exactly
    (never through a float: ``9007199254740993`` stays itself), within ``[minimum, maximum]``."""
    requirement = "an integer" + _describe_bounds(minimum, maximum) + " written in ASCII digits"
    if not isinstance(text, str) or len(text) > MAX_NUMBER_TEXT or not _INT_TEXT.fullmatch(text):
        raise ParameterError(name, requirement, text)
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        raise ParameterError(name, requirement, text) from None
    if number != number.to_integral_value():
        raise ParameterError(name, requirement, text)
    return check_int(name, int(number), minimum=minimum, maximum=maximum)


def parse_real(name: str, text: str, **bounds) -> float:
    """The finite real written in ``text`` (ASCII decimal or exponent notation; no ``inf``/``nan``,
    no hex), checked by :func:`check_real` with ``bounds``."""
    requirement = "a finite real number written in ASCII decimal notation"
    if not isinstance(text, str) or len(text) > MAX_NUMBER_TEXT or not _REAL_TEXT.fullmatch(text):
        raise ParameterError(name, requirement, text)
    value = float(text)
    if not math.isfinite(value) or (value == 0 and Decimal(text) != 0):
        raise ParameterError(name, "a finite real number that a double can hold (|x| in [1e-300, 1e300])", text)
    return check_real(name, value, **bounds)


def _describe_bounds(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f" in [{_int_text(minimum)}, {_int_text(maximum)}]"
    if minimum is not None:
        return f" >= {_int_text(minimum)}"
    if maximum is not None:
        return f" <= {_int_text(maximum)}"
    return ""


def _int_text(value: int) -> str:
    """Bounds such as ``10**150`` written short, when that is exact (``1e150``); any other large bound written
    in full (``2**63 - 1`` as ``9223372036854775807``, not a rounded ``9e18`` that the bound exceeds)."""
    if abs(value) < 10**7:
        return str(value)
    short = f"{value:.0e}".replace("+", "")
    mantissa, exponent = short.split("e")
    return short if int(mantissa) * 10 ** int(exponent) == value else str(value)
