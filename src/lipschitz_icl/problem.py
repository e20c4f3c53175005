"""An ICL problem: a task class (with ``d`` and ``L``), the context size ``n`` and the noise ``sigma``.

Labels are ``y_i = f(x_i) + eps_i`` with ``eps_i ~ N(0, sigma^2)`` i.i.d.; covariates and the query are
uniform on ``S^{d-1}``.  The loss depends on the noise only through ``sigma^2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sphere
from .tasks import TaskClass, make_task_class
from .validation import check_int, check_real

__all__ = ["Problem", "make_problem"]


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
    """Validated constructor: ``task`` a known class, ``d >= 2``, ``n >= 1``, ``L > 0``, ``sigma >= 0``;
    ``task_kwargs`` (``frequency``, ``rank``, ``B``) go to :func:`~lipschitz_icl.tasks.make_task_class`."""
    task_class = make_task_class(task, d, L, **task_kwargs)
    n = check_int("n", n, minimum=1)
    sigma = check_real("sigma", sigma, minimum=0.0)
    return Problem(task_class, n, sigma)
