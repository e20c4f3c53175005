"""An ICL problem: a task class (with ``d`` and ``L``), the context size ``n`` and the noise ``sigma``.

Labels are ``y_i = f(x_i) + eps_i`` with ``eps_i ~ N(0, sigma^2)`` i.i.d.; covariates and the query are
uniform on ``S^{d-1}``.  The loss depends on the noise only through ``sigma^2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sphere
from .tasks import TaskClass, make_task_class
from .validation import ParameterError, check_int, check_real

__all__ = ["Problem", "make_problem", "check_problem", "MAX_D", "MAX_N", "L_RANGE", "SIGMA_MAX", "MAX_W"]

# Supported ranges of every problem (each method may narrow them; see its docstring):
MAX_D = 512            # the quadratures and the Monte Carlo reductions are tested up to d = 512
MAX_N = 10**150        # the exact quadrature agrees with the independent large-n formula up to n = 1e150
                       # (measured; beyond, n^2 overflows a double); Monte Carlo stops at 1e7
L_RANGE = (1e-6, 1e6)  # L^2 and sigma^2 must stay far inside the double range in every loss term
SIGMA_MAX = 1e6
MAX_W = 1e8            # attention scale of M = w I (the w* search range ends here; Bessel forms hold to 1e9)


@dataclass(frozen=True)
class Problem:
    """``task_class`` (carrying ``d`` and ``L``), context size ``n >= 1``, noise level ``sigma >= 0``."""

    task_class: TaskClass
    n: int
    sigma: float

    @property
    def d(self) -> int:
        return self.task_class.d

    @property
    def L(self) -> float:
        return self.task_class.L

    @property
    def task(self) -> str:
        return self.task_class.name

    def sample_prompts(self, rng: np.random.Generator, batch: int):
        """Fresh prompts: tasks, contexts ``x`` ``(batch, n, d)``, labels ``y``, queries ``q``, ``f(q)``."""
        task = self.task_class.sample(rng, batch)
        x = sphere.uniform_sphere(rng, (batch, self.n), self.d)
        q = sphere.uniform_sphere(rng, batch, self.d)
        y = task(x) + self.sigma * rng.standard_normal((batch, self.n))
        fq = task(q[:, None, :])[:, 0]
        return task, x, y, q, fq


def make_problem(task: str, d: int, n: int, L: float, sigma: float, **task_kwargs) -> Problem:
    """Validated constructor: ``task`` a known class, ``2 <= d <= 512``, ``1 <= n <= 1e150``,
    ``1e-6 <= L <= 1e6``, ``0 <= sigma <= 1e6``; ``task_kwargs`` (``frequency``, ``rank``, ``B``) go to
    :func:`~lipschitz_icl.tasks.make_task_class`."""
    d = check_int("d", d, minimum=2, maximum=MAX_D)
    L = check_real("L", L, minimum=L_RANGE[0], maximum=L_RANGE[1])
    if "B" in task_kwargs and task_kwargs["B"] is not None:
        task_kwargs["B"] = _check_B(task_kwargs["B"], d)
    task_class = make_task_class(task, d, L, **task_kwargs)
    n = check_int("n", n, minimum=1, maximum=MAX_N)
    sigma = check_real("sigma", sigma, minimum=0.0, maximum=SIGMA_MAX)
    return Problem(task_class, n, sigma)


def _check_B(B, d: int) -> np.ndarray:
    """``B`` as a real array (shape, finiteness and orthonormality are checked by the task class)."""
    try:
        return np.asarray(B, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("B", f"a finite real matrix of shape ({d}, k)", B) from None


def check_problem(problem) -> Problem:
    """``problem`` if it is a :class:`Problem` (else a :class:`ParameterError` on ``problem``)."""
    if not isinstance(problem, Problem):
        raise ParameterError("problem", "a lipschitz_icl.problem.Problem (see make_problem)", type(problem).__name__)
    return problem
