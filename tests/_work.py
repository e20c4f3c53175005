"""Work counted, not timed: the Python function calls a block makes and the memory it allocates at most,
for tests that check a refusal comes before any work (the team's tests assert no wall-clock bound; a count
does not depend on the machine's load).

:func:`work` counts the ``call`` events of :func:`sys.setprofile` in the calling thread (every Python
function, generator step and module body entered) and the peak of :mod:`tracemalloc` (every allocation of
the process while the block runs).  Heavy work inside one C function (a power of a huge integer, a NumPy
operation on a large array) is one call or none but shows in the peak; a loop of small steps (SymPy, a
search, a Monte Carlo loop) shows in the calls.  Lazy imports are work too: a test that means "the refusal
itself" warms them up with a first run and counts the second (:func:`refusal_work`).
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

# A refusal validates its arguments and builds one message: at most a few thousand calls (the longest
# expression the parser screens: about 11500) and a few hundred kilobytes (a problem at d = 512 built inside
# the block: 2 MB).  A request that starts its work first (a SymPy step, a search, a Monte Carlo loop, an
# import of SciPy, an integer of millions of digits, the arrays of a large request) makes tens of thousands to
# millions of calls or allocates tens of megabytes and more.
REFUSAL_CALLS = 20_000
REFUSAL_BYTES = 8 * 1024**2


@dataclass(frozen=True)
class Work:
    """What a block did: its Python ``calls``, the ``peak_bytes`` allocated at once, the ``error`` it raised."""

    calls: int
    peak_bytes: int
    error: BaseException | None

    @property
    def within_refusal(self) -> bool:
        """At most :data:`REFUSAL_CALLS` calls and :data:`REFUSAL_BYTES` bytes: no work began."""
        return self.calls <= REFUSAL_CALLS and self.peak_bytes <= REFUSAL_BYTES


def work(block: Callable[[], object]) -> Work:
    """Run ``block()`` and count its work (an exception it raises is returned, not raised)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call":
            count += 1

    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    previous = sys.getprofile()
    error = None
    sys.setprofile(profile)
    try:
        block()
    except BaseException as exc:  # the caller checks which exception
        error = exc
    finally:
        sys.setprofile(previous)
        peak = tracemalloc.get_traced_memory()[1] - base
        if not tracing:
            tracemalloc.stop()
    return Work(calls=count, peak_bytes=max(0, peak), error=error)


def refusal_work(block: Callable[[], object]) -> Work:
    """:func:`work` of a second run of ``block`` (the first one warms up lazy imports and caches)."""
    work(block)
    return work(block)
