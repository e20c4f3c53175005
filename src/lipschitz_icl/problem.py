"""An ICL problem: a task class (with ``d`` and ``L``), the context size ``n`` and the noise ``sigma``.

Labels are ``y_i = f(x_i) + eps_i`` with ``eps_i ~ N(0, sigma^2)`` i.i.d.; covariates and the query are
uniform on ``S^{d-1}``.  The loss depends on the noise only through ``sigma^2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sphere
from .task_family import TaskPrior
from .tasks import make_task_class
from .validation import ParameterError, check_int, check_real

__all__ = [
    "Problem",
    "PromptBuffers",
    "make_problem",
    "check_problem",
    "MAX_D",
    "MAX_N",
    "L_RANGE",
    "SIGMA_MAX",
    "MAX_W",
]

# Supported ranges of every problem (each method may narrow them; see its docstring):
MAX_D = 512  # the quadratures and the Monte Carlo reductions are tested up to d = 512
MAX_N = 10**150  # the exact quadrature agrees with the independent large-n formula up to n = 1e150
# (measured; beyond, n^2 overflows a double); Monte Carlo stops at 1e7
L_RANGE = (1e-6, 1e6)  # L^2 and sigma^2 must stay far inside the double range in every loss term
SIGMA_MAX = 1e6
MAX_W = 1e8  # attention scale of M = w I (the w* search range ends here; Bessel forms hold to 1e9)


@dataclass(frozen=True)
class Problem:
    """``task_class`` (carrying ``d`` and ``L``), context size ``n >= 1``, noise level ``sigma >= 0``."""

    task_class: TaskPrior
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

    def sample_prompts(self, rng: np.random.Generator, batch: int, *, out: PromptBuffers | None = None):
        """Fresh prompts: tasks, contexts ``x`` ``(batch, n, d)``, labels ``y``, queries ``q``, ``f(q)``.

        Draws, in this order: the tasks, ``x``, ``q``, the label noise ``eps``; ``y = f(x) + sigma eps``.
        ``out`` (from :meth:`prompt_buffers`): ``x``, ``y``, ``q`` are written into its arrays (the same
        values, without allocating them; the next call with the same ``out`` overwrites them).
        Equal to :meth:`finish_prompts` after :meth:`draw_prompts`.
        """
        out = self.prompt_buffers(batch) if out is None else out
        return self.finish_prompts(self.draw_prompts(rng, batch, out), out)

    def draw_prompts(self, rng: np.random.Generator, batch: int, out: PromptBuffers):
        """The random part of :meth:`sample_prompts`: returns the tasks and leaves the raw Gaussians of
        ``x``, ``q`` and ``eps`` in ``out.x``, ``out.q``, ``out.y`` (no other use of ``rng``)."""
        if out.x.shape != (batch, self.n, self.d):
            raise ParameterError(
                "out", f"buffers for batch {batch}, n = {self.n}, d = {self.d}", f"buffers of shape {out.x.shape}"
            )
        task = self.task_class.sample(rng, batch)
        for raw in (out.x, out.q, out.y):
            rng.standard_normal(out=raw)
        return task

    def finish_prompts(self, task, out: PromptBuffers):
        """The deterministic part of :meth:`sample_prompts` on the draws left in ``out`` by
        :meth:`draw_prompts`: ``x <- x/|x|``, ``q <- q/|q|``, ``y <- f(x) + sigma y``; returns
        ``(task, x, y, q, f(q))``."""
        x, y, q = sphere.normalise_rows(out.x), out.y, sphere.normalise_rows(out.q)
        y *= self.sigma
        y += task(x)
        fq = task(q[:, None, :])[:, 0]
        return task, x, y, q, fq

    def prompt_buffers(self, batch: int) -> PromptBuffers:
        """Arrays for ``batch`` prompts, filled by :meth:`sample_prompts` (``out=``)."""
        batch = check_int("batch", batch, minimum=1)
        return PromptBuffers(np.empty((batch, self.n, self.d)), np.empty((batch, self.n)), np.empty((batch, self.d)))


@dataclass(frozen=True)
class PromptBuffers:
    """Preallocated float64 arrays ``x`` ``(batch, n, d)``, ``y`` ``(batch, n)``, ``q`` ``(batch, d)``."""

    x: np.ndarray
    y: np.ndarray
    q: np.ndarray


def make_problem(task: str, d: int, n: float, L: float, sigma: float, **task_kwargs) -> Problem:
    """Validated constructor of a :class:`Problem`: labels ``y_i = f(x_i) + eps_i``, ``eps_i ~ N(0, sigma^2)``.

    Parameters
    ----------
    task : str
        A known task class (:data:`lipschitz_icl.tasks.TASK_NAMES`, e.g. ``"affine"``, ``"relu"``).
    d : int
        Dimension of the sphere ``S^{d-1}`` of covariates and query, ``2 <= d <= 512``.
    n : int or integral float
        Context size, ``1 <= n <= 1e150`` (``1e8`` is accepted: the problem holds ``int(n)``).
    L : float
        Lipschitz constant of the task class, ``1e-6 <= L <= 1e6``.
    sigma : float
        Standard deviation of the label noise, ``0 <= sigma <= 1e6``.
    **task_kwargs
        ``frequency``, ``rank``, ``B``: passed to :func:`~lipschitz_icl.tasks.make_task_class`.

    Returns
    -------
    Problem
        The frozen problem (``task_class`` carrying ``d`` and ``L``, ``n``, ``sigma``).

    Raises
    ------
    ParameterError
        A parameter outside its range; the message names the parameter and the range.

    Examples
    --------
    >>> import numpy as np
    >>> from lipschitz_icl import make_problem
    >>> problem = make_problem("relu", d=3, n=1000, L=1.0, sigma=0.5)
    >>> task, x, y, q, fq = problem.sample_prompts(np.random.default_rng(0), batch=2)
    >>> x.shape, y.shape, q.shape
    ((2, 1000, 3), (2, 1000), (2, 3))
    >>> bool(np.allclose(np.linalg.norm(x, axis=-1), 1.0))   # covariates on the unit sphere
    True
    >>> make_problem("relu", d=1, n=1000, L=1.0, sigma=0.5)
    Traceback (most recent call last):
        ...
    lipschitz_icl.validation.ParameterError: parameter 'd' must be an integer in [2, 512] (got 1)
    """
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
