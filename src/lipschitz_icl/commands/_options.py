"""Typed command-line options: ASCII numbers and exact integers, their ranges checked while parsing (a
failure is argparse's one-line message naming the option)."""

from __future__ import annotations

import argparse

from lipschitz_icl.validation import ParameterError, parse_int, parse_real, shorten

__all__ = ["integer", "real"]


def _typed(parse, name, **bounds):
    """An argparse ``type``: ``parse(name, text, **bounds)``, a failure as one argparse message."""

    def convert(text):
        try:
            return parse(name, text, **bounds)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(f"must be {exc.requirement} (got {shorten(exc.value)})") from None

    convert.__name__ = name
    return convert


def integer(name: str, minimum=None, maximum=None):
    """argparse type: an exact integer in ``[minimum, maximum]`` (``1e14`` accepted when integral)."""
    return _typed(parse_int, name, minimum=minimum, maximum=maximum)


def real(name: str, **bounds):
    """argparse type: a finite real within ``bounds`` (those of :func:`~lipschitz_icl.validation.check_real`)."""
    return _typed(parse_real, name, **bounds)
