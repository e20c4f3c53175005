"""Work budgets of the Monte Carlo paths: each path estimates its cost before it runs, and a request past
its budget is refused up front, naming the budget, the estimate and a cheaper setting.

An estimate is in seconds on the project machine (2 cores): the path's count of units of work times the
seconds one unit takes, an upper envelope of the CPU times that ``benchmarks/bench_budget.py`` measures
for the path (on a machine shared with other jobs, so the estimates err long).  The paths and their
units: the loss estimators ``naive`` and ``averaged`` (:mod:`lipschitz_icl.loss.estimators`: context
points times coordinates, or context points of the reduced form), the pairwise form of a kernel prior
(:mod:`lipschitz_icl.loss.pairwise`: pairs of context points times the kernel's parts), the fixed draws
(:mod:`lipschitz_icl.loss.fixed_draw`), the ``w*`` search by Monte Carlo (:mod:`lipschitz_icl.optimum`:
points of its bank) and the trainer (:mod:`lipschitz_icl.model.train`: prompt coordinates per step).

Two budgets: :data:`COMMAND_SECONDS` for a request of the command line (``lipschitz-icl loss``,
``wstar``, ``train``), so that a request within it, at the default settings, finishes within 90 s; and
:data:`ENGINE_SECONDS`, the default of the library's functions (a claim's computation: minutes, never
hours).  A refusal is a :class:`~lipschitz_icl.validation.ParameterError` (exit code 2 on the command
line).
"""

from __future__ import annotations

import math

from lipschitz_icl.validation import ParameterError

__all__ = [
    "COMMAND_SECONDS",
    "ENGINE_SECONDS",
    "MEMORY_BUDGET",
    "MIN_CONTEXTS",
    "check",
    "check_memory",
    "largest_count",
    "fewer_contexts",
]

COMMAND_SECONDS = 60.0  # estimated seconds of one command-line request (measured: within 90 s, bench_budget.py)
ENGINE_SECONDS = 900.0  # estimated seconds of one call of the library (a claim's computation)
MEMORY_BUDGET = 2 * 1024**3  # bytes a Monte Carlo path may hold at once (checked before allocating)
# the fewest sampled prompts of a command-line Monte Carlo estimate (``loss --contexts``): its intervals are normal
# approximations of a mean of skewed per-context values, whose 95% coverage was measured at 0.72 with 2 contexts,
# 0.87 with 5, 0.91 with 10 and 0.935 with 30 (200 seeds, affine d = 3, n = 100); 100 is also the variant files' floor
MIN_CONTEXTS = 100


def largest_count(budget: float, seconds_each: float) -> int:
    """The largest count ``k`` with ``k * seconds_each <= budget`` (0 when not even one fits;
    ``seconds_each > 0``)."""
    return max(0, math.floor(budget / seconds_each))


def fewer_contexts(affordable: int, name: str = "contexts", floor: int = 2) -> str:
    """The cheaper setting a refusal names for a Monte Carlo estimate that affords ``affordable`` contexts:
    ``contexts <= affordable``, or a smaller ``n`` when that is below ``floor``, the fewest the caller accepts
    (the library 2; the command line :data:`MIN_CONTEXTS`, which would refuse fewer in turn)."""
    return f"{name} <= {affordable}" if affordable >= floor else "a smaller n"


def check(seconds: float, budget: float, *, name: str, value, what: str, cheaper: str) -> None:
    """Refuse (a :class:`ParameterError` naming ``name``) a request whose estimate ``seconds`` exceeds
    ``budget``: the message names the budget, ``what`` was estimated and ``cheaper``, a setting within it."""
    if seconds <= budget:
        return
    raise ParameterError(
        name,
        f"within the work budget of {budget:g} s ({what}: about {seconds:.3g} s on the project machine); "
        f"a cheaper setting: {cheaper}",
        value,
    )


def check_memory(nbytes: float, *, name: str, value, what: str, cheaper: str) -> None:
    """Refuse (a :class:`ParameterError` naming ``name``) a request that would hold ``nbytes`` beyond
    :data:`MEMORY_BUDGET`, naming the budget, ``what`` was estimated and ``cheaper``, a setting within it."""
    if nbytes <= MEMORY_BUDGET:
        return
    raise ParameterError(
        name,
        f"within the memory budget of {MEMORY_BUDGET / 1024**3:g} GiB ({what}: about {nbytes / 1024**3:.3g} GiB); "
        f"a cheaper setting: {cheaper}",
        value,
    )
