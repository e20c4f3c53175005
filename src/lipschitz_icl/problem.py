"""An ICL problem: a task class (with ``d`` and ``L``), the context size ``n`` and the noise ``sigma``.

Labels are ``y_i = f(x_i) + eps_i`` with ``eps_i ~ N(0, sigma^2)`` i.i.d.; covariates and the query are
uniform on ``S^{d-1}``.  The loss depends on the noise only through ``sigma^2``.

Constructors: :func:`make_problem` (a registered task class), :func:`zonal_problem`,
:func:`kernel_problem` and :func:`mixture_problem` (a prior given by its covariance kernel, a user
expression or a mixture of the registered classes), :func:`prior` (a named kernel of a claim's design)
and :func:`matched_problem` (a low-rank class with its signal matched across ``d``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from lipschitz_icl.sphere import laws
from lipschitz_icl.tasks.family import TaskPrior
from lipschitz_icl.tasks.kernel import ZonalKernel
from lipschitz_icl.tasks.registry import make_task_class
from lipschitz_icl.validation import ParameterError, check_int, check_real

__all__ = [
    "Problem",
    "PromptBuffers",
    "make_problem",
    "check_problem",
    "zonal_problem",
    "kernel_problem",
    "mixture_problem",
    "prior",
    "matched_problem",
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
        x, y, q = laws.normalise_rows(out.x), out.y, laws.normalise_rows(out.q)
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
        A known task class (:data:`lipschitz_icl.tasks.registry.TASK_NAMES`, e.g. ``"affine"``, ``"relu"``).
    d : int
        Dimension of the sphere ``S^{d-1}`` of covariates and query, ``2 <= d <= 512``.
    n : int or integral float
        Context size, ``1 <= n <= 1e150`` (``1e8`` is accepted: the problem holds ``int(n)``).
    L : float
        Lipschitz constant of the task class, ``1e-6 <= L <= 1e6``.
    sigma : float
        Standard deviation of the label noise, ``0 <= sigma <= 1e6``.
    **task_kwargs
        ``frequency``, ``rank``, ``B``: passed to :func:`~lipschitz_icl.tasks.registry.make_task_class`.

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


# ----------------------------------------------------------------------------- problems of zonal priors
# (lipschitz_icl.tasks.zonal, which reads user expressions with SymPy, is imported by the functions that use
# it: a problem of a registered class never imports SymPy)
def zonal_problem(kernel: ZonalKernel, n, sigma) -> Problem:
    """A :class:`~lipschitz_icl.problem.Problem` for ``kernel``: ``n >= 1``, ``sigma >= 0``; a kernel not built
    by the project's checked constructors (its ``checked`` false) is checked here: ``K(1) > 0`` and Schoenberg
    (:func:`lipschitz_icl.tasks.kernel.check_schoenberg`)."""
    from lipschitz_icl.tasks.kernel import check_schoenberg
    from lipschitz_icl.tasks.zonal_class import ZonalTaskClass

    if not isinstance(kernel, ZonalKernel):
        raise ParameterError("kernel", "a lipschitz_icl.tasks.zonal.ZonalKernel", kernel)
    if not kernel.checked:
        check_schoenberg(kernel)
    return Problem(ZonalTaskClass(kernel), check_int("n", n, minimum=1), check_real("sigma", sigma, minimum=0.0))


def kernel_problem(text: str, d: int, n, sigma, constants: dict | None = None) -> Problem:
    """The problem of the user kernel ``text`` (an expression in ``t``, ``d`` and ``constants``),
    Schoenberg-checked (:func:`lipschitz_icl.tasks.zonal.expression_kernel`)."""
    from lipschitz_icl.tasks.zonal import expression_kernel

    return zonal_problem(expression_kernel(text, d, constants), n, sigma)


def mixture_problem(task: str, d: int, n, L: float, sigma, frequency: float = 1.0) -> Problem:
    """The problem of ``mix:NAME=WEIGHT,...`` (:func:`lipschitz_icl.tasks.zonal.parse_task`)."""
    from lipschitz_icl.tasks.zonal import parse_task

    return zonal_problem(parse_task(task, d, L, frequency), n, sigma)


def prior(name: str, d: int, kernels: dict, L: float):
    """``(kernel, problem_of)`` of the named prior: an expression of ``kernels`` (the registry's table
    ``name -> K(t)``) or else the built-in class ``name`` at scale ``L``; ``problem_of(n, sigma)`` is its
    problem (a built-in class keeps its own exact method)."""
    from lipschitz_icl.tasks.zonal import builtin_kernel

    if name in kernels:
        k = _expression_kernel(kernels[name], d)
        return k, lambda n, sigma: zonal_problem(k, n, sigma)
    return builtin_kernel(name, d, L), lambda n, sigma: make_problem(name, d, n, L, sigma)


@cache
def _expression_kernel(text: str, d: int):
    """One kernel object per (expression, d): its Gegenbauer coefficients are cached on it."""
    from lipschitz_icl.tasks.zonal import expression_kernel

    return expression_kernel(text, d)


# ----------------------------------------------------------------------------- low-rank problems
def matched_problem(task: str, d: int, k: int, *, n: int, L0: float, sigma: float, frequency: float = 1.0):
    """The rank-``k`` problem in ``d`` dimensions with the signal matched across ``d``.

    With ``z = sqrt(d/k) B^T x`` (``E ||z||^2 = 1`` for every ``d``) the task is the same function of ``z``
    at every ``d``: ``L = L0 sqrt(d/k)`` (linear, affine, cosine; the cosine frequency also
    ``x sqrt(d/k)``) and ``L = L0 d/k`` (quadratic).  Without this the label variance of the canonical class
    falls like ``1/d`` and every error falls with ``d`` for a trivial reason.
    """
    link = task.split("-", 1)[1]
    r = d / k
    scale = r if link == "quadratic" else math.sqrt(r)
    kw = {"frequency": frequency * math.sqrt(r)} if link == "cosine" else {}
    return make_problem(task, d, n, L0 * scale, sigma, rank=k, **kw)
