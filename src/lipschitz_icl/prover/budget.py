"""The prover's wall-clock budget, enforced inside a box's evaluation too: :func:`deadline`.

A single box can take long: a certified ``w*`` at each corner costs tens of seconds.  Checking the clock
between boxes only would let ``prove --seconds 5`` run for minutes, so the search (and the recheck) run
under :func:`deadline`: a watchdog thread raises :class:`OutOfTime` in the calling thread at the
deadline (``PyThreadState_SetAsyncExc``; a ``BaseException``, so no ``except Exception`` of a library
swallows it), unless the block has ended first (checked under a lock; an exception scheduled but not
delivered when the block ends is taken at the block's end, so it never fires later -- not cleared by
``PyThreadState_SetAsyncExc(thread, NULL)``, which leaves CPython 3.11's pending flag set for good: every later
``sys.setprofile`` or ``sys.settrace`` of the process then hung).  It works in any thread and leaves
signal handlers and interval timers alone; a block inside one long C call is interrupted when that
call returns (each python-flint operation of the prover takes well under a second).

The caller decides what the interruption means: the search marks the boxes it had not decided as
undecided ("budget exhausted"), the recheck reports that it did not finish.

The default budgets of one search (:data:`MAX_BOXES`, :data:`SECONDS`, :data:`SHARPEST_RTOL`) live here, not in
:mod:`lipschitz_icl.prover.search`, so the command line can state them without loading the search.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time

__all__ = ["OutOfTime", "deadline", "MAX_BOXES", "SECONDS", "SHARPEST_RTOL"]

MAX_BOXES = 20000  # default budget: boxes evaluated by one search
SECONDS = 120.0  # default budget: wall-clock seconds of one command
SHARPEST_RTOL = 1e-4  # default relative width of a sharpest-constant interval


class OutOfTime(BaseException):
    """The wall-clock budget ended inside a :func:`deadline` block."""


def _raise_in(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(OutOfTime))


_TAKE_STEPS = 100_000  # loop steps that take a scheduled OutOfTime (the eval loop delivers it at its next check)


@contextlib.contextmanager
def deadline(at: float):
    """Run the block until ``time.perf_counter()`` reaches ``at``; then raise :class:`OutOfTime` in it
    (at once when ``at`` has passed already)."""
    remaining = at - time.perf_counter()
    if remaining <= 0:
        raise OutOfTime
    target = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()
    fired = []

    def watchdog():
        if not done.wait(remaining):
            with lock:
                if not done.is_set():
                    fired.append(True)
                    _raise_in(target)

    threading.Thread(target=watchdog, name="lipschitz-icl-prove-budget", daemon=True).start()
    delivered = False
    try:
        yield
    except OutOfTime:
        delivered = True
        raise
    finally:
        try:
            with lock:
                done.set()
                pending = bool(fired) and not delivered
            for _ in range(_TAKE_STEPS if pending else 0):  # scheduled, not delivered: take it here, not later
                pass
        except OutOfTime:
            pass
