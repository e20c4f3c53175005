"""Progress bars for long loops: one ``tqdm`` bar on stderr, shown only when it can help.

A bar is drawn when stderr (or the given stream) is a terminal, unless progress is *silenced*: the CLI
silences it for the whole command under ``--json`` (one JSON object on stdout, nothing else on a
terminal that a script might be capturing).  ``show=True``/``False`` forces a bar on or off for one
loop (the library API's ``progress=`` arguments); silencing wins over ``show=True``.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["enabled", "bar", "silenced", "MIN_INTERVAL"]

MIN_INTERVAL = 0.25  # seconds between redraws

_silent = False


@contextlib.contextmanager
def silenced(active: bool = True):
    """While active, :func:`enabled` is False everywhere (nesting restores the previous state)."""
    global _silent  # noqa: PLW0603 - the one module-wide switch that enabled() reads
    previous = _silent
    _silent = previous or bool(active)
    try:
        yield
    finally:
        _silent = previous


def enabled(show: bool | None = None, stream=None) -> bool:
    """Whether a bar is drawn: never while :func:`silenced`; else ``show`` when given; else whether
    ``stream`` (default ``sys.stderr``) is a terminal."""
    if _silent:
        return False
    if show is not None:
        return bool(show)
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


def bar(
    iterable=None,
    *,
    total: int | None = None,
    desc: str,
    unit: str = "it",
    show: bool | None = None,
    stream=None,
    **kwargs,
) -> tqdm:
    """A ``tqdm`` bar over ``iterable`` (or updated by hand when ``iterable`` is None) on ``stream``
    (default stderr), disabled unless :func:`enabled` (``show``, ``stream``).  Extra ``kwargs`` go to
    ``tqdm`` (e.g. ``postfix``).  ``tqdm`` is imported here, on the first bar: the command line's
    :func:`silenced` costs nothing at start-up."""
    from tqdm import tqdm

    stream = sys.stderr if stream is None else stream
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        file=stream,
        disable=not enabled(show, stream),
        mininterval=MIN_INTERVAL,
        dynamic_ncols=True,
        **kwargs,
    )
