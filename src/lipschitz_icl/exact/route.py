"""Exact ICL loss of softmax attention with ``M = w I`` for any class that has one, any ``n``.

"Exact" means: no Monte Carlo; every expectation is a deterministic quadrature whose accuracy is
estimated by refining all grids, and the cost does not depend on the context size ``n``.  The route is
the task class's (:attr:`lipschitz_icl.tasks.family.TaskFamily.exact_route`):

``quadrature``  a class whose kernel has a form with a dedicated quadrature (affine: linear in ``t``;
                relu: arc-cosine): :mod:`lipschitz_icl.exact.quadrature`;
``zonal``       any other rotation-invariant class, a mixture or a prior given by its kernel: the
                Gegenbauer series of :mod:`lipschitz_icl.exact.zonal` (mixtures class by class).

Both share the grids of :mod:`lipschitz_icl.exact.quadrature`; neither imports this module.
"""

from __future__ import annotations

from lipschitz_icl.estimate import LossEstimate
from lipschitz_icl.exact.quadrature import (
    check_budget,
    exact_parts,
    quadrature_loss,
    relu_diagonal,
    relu_offdiagonal_factor,
)
from lipschitz_icl.exact.zonal import zonal_loss
from lipschitz_icl.problem import Problem
from lipschitz_icl.tasks.registry import TASKS
from lipschitz_icl.validation import ParameterError

__all__ = ["exact_loss", "exact_tasks", "exact_parts", "relu_diagonal", "relu_offdiagonal_factor", "check_budget"]


def exact_tasks() -> tuple:
    """The registered classes with an exact route."""
    return tuple(name for name, cls in TASKS.items() if cls.exact_route is not None)


def exact_loss(problem: Problem, w, *, rtol: float = 1e-6) -> LossEstimate:
    """Exact ICL loss of ``M = w I`` for ``problem`` by its class's route (module doc), any ``n``.

    Returns ``LossEstimate(loss, bias, noise, method="exact")``, each part an estimate with
    ``standard_error = 0`` and ``abs_error`` the estimated numerical error; ``info`` records the levels,
    grids and ``converged`` (accuracy ``rtol`` reached)."""
    if not isinstance(problem, Problem):
        raise ParameterError("problem", "a lipschitz_icl.problem.Problem", problem)
    route = problem.task_class.exact_route
    if route == "quadrature":
        return quadrature_loss(problem, w, rtol=rtol)
    if route == "zonal":
        return zonal_loss(problem, w, rtol=rtol)
    raise ParameterError("task", f"one of {', '.join(map(repr, exact_tasks()))} for the exact method", problem.task)
