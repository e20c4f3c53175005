"""Budgets for SymPy steps on user input (a kernel's ``simplify``, ``series``, ``limit``, ``lambdify``).

A short expression can make SymPy work for minutes or exhaust memory (``(t+1)**1000`` under
``simplify``).  :func:`within_budget` runs one step with

* a time budget of :data:`SECONDS` seconds of the calling thread's CPU time (so the verdict on an input does not
  depend on the machine's load; where the platform has no per-thread CPU clock, wall clock), and a wall-clock
  cap of :data:`WALL_FACTOR` times that for a step that waits: a watchdog thread raises :class:`_Timeout` (a
  ``BaseException``, so SymPy's ``except Exception`` clauses cannot swallow it) in the calling thread with
  ``PyThreadState_SetAsyncExc`` at the deadline and again at every poll until the step ends (one delivered
  inside a weakref callback or ``__del__`` is swallowed by CPython), unless the step has returned (checked
  under a lock; an exception scheduled but not delivered when the step returns is taken there, so it never
  fires later; a step that returns after its deadline is refused all the same); works in any thread and
  leaves signal handlers and interval timers alone; a step blocked inside one C call is interrupted when that
  call returns;
* a size budget: the expression a step starts from and the one it returns have at most
  :data:`MAX_NODES` nodes (counted by a bounded walk);

and turns a budget hit (or a ``MemoryError``/``RecursionError`` inside SymPy) into a
:class:`~lipschitz_icl.validation.ParameterError` naming the input, so the CLI prints one line and exits 2.
"""

from __future__ import annotations

import ctypes
import threading
import time

import sympy as sp

from lipschitz_icl.validation import ParameterError

__all__ = ["SECONDS", "MAX_NODES", "within_budget", "node_count"]

SECONDS = 10.0
MAX_NODES = 5000
WALL_FACTOR = 10.0  # a step that waits rather than computes is stopped after this many budgets of wall clock
POLL = 0.02  # seconds between the watchdog's readings of the step's CPU clock


class _Timeout(BaseException):
    """Raised asynchronously in the thread whose step ran past its budget."""


def node_count(expr, limit: int = MAX_NODES) -> int:
    """Nodes of ``expr`` (a SymPy object, or a tuple/list of them), counted up to ``limit + 1``."""
    count = 0
    items = expr if isinstance(expr, (tuple, list)) else (expr,)
    for item in items:
        if not isinstance(item, sp.Basic):
            count += 1
            continue
        for _ in sp.preorder_traversal(item):
            count += 1
            if count > limit:
                return count
    return count


def _raise_in(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(_Timeout))


# loop steps that take a scheduled timeout at the step's end (the eval loop delivers it at its next check); it is
# not cleared with PyThreadState_SetAsyncExc(thread, NULL), which leaves CPython 3.11's pending flag set for good
# (every later sys.setprofile or sys.settrace of the process then hung)
_TAKE_STEPS = 100_000


def _check_size(expr, name: str, text, what: str) -> None:
    if expr is not None and node_count(expr) > MAX_NODES:
        raise ParameterError(
            name, f"an expression SymPy can handle within its size budget ({what}: more than {MAX_NODES} nodes)", text
        )


def _over_budget(name: str, text, what: str, limit: float) -> ParameterError:
    return ParameterError(
        name, f"an expression SymPy can handle within its time budget ({what} took more than {limit:g} CPU s)", text
    )


def _thread_clock(thread_id: int) -> int | None:
    """The CPU-time clock of the thread ``thread_id`` (``None`` where the platform has none)."""
    try:
        return time.pthread_getcpuclockid(thread_id)
    except (AttributeError, OSError):
        return None


def within_budget(step, *, name: str, text, what: str, start=None, seconds: float | None = None):
    """``step()`` under the CPU-time budget ``seconds`` (default :data:`SECONDS`) and the size budget on
    ``start`` (the expression it works on) and on its result; a hit raises :class:`ParameterError`
    ``name`` (``text`` the user's input, ``what`` the step, e.g. ``"simplify"``)."""
    _check_size(start, name, text, what)
    limit = SECONDS if seconds is None else seconds
    target = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()
    fired = []

    clock = _thread_clock(target)

    def spent() -> float:
        return time.clock_gettime(clock) if clock is not None else time.perf_counter()

    def watchdog():
        begun, wall_end = spent(), time.perf_counter() + WALL_FACTOR * limit
        while not done.wait(POLL):
            if spent() - begun > limit or time.perf_counter() > wall_end:
                # raised again at every poll until the step ends: a timeout delivered inside a weakref callback
                # or a __del__ is printed and swallowed by CPython, and the step would run on
                with lock:
                    if not done.is_set():
                        fired.append(True)
                        _raise_in(target)

    timer = threading.Thread(target=watchdog, name="lipschitz-icl-symbolic-budget", daemon=True)
    delivered = False
    try:
        try:
            timer.start()
            result = step()
        except _Timeout:
            delivered = True
            raise
        finally:
            try:
                with lock:
                    done.set()
                    pending = bool(fired) and not delivered
                for _ in range(_TAKE_STEPS if pending else 0):  # scheduled, not delivered: taken here, never later
                    pass
            except _Timeout:
                pass
    except _Timeout:
        raise _over_budget(name, text, what, limit) from None
    except (MemoryError, RecursionError):
        raise ParameterError(
            name,
            f"an expression SymPy can handle within its memory budget ({what} ran out of memory or recursion depth)",
            text,
        ) from None
    if fired:  # past its budget, though every timeout was swallowed on the way: refused all the same
        raise _over_budget(name, text, what, limit)
    _check_size(result, name, text, what)
    return result
