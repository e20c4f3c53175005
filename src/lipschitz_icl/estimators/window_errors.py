"""ICL errors of attention windows compared (the paper's Figures 1 and 6): softmax attention at its optimal
window ``w*`` against linear attention at its optimum ``m*`` along ``n``, and a general ``M`` against ``w I``.

``E_soft(n) = E(w* I)`` with ``w*`` and the error exact (quadrature, :func:`lipschitz_icl.exact.route.exact_loss`,
with its stated error); ``E_lin(n) = E(m* I)`` derived
(:func:`lipschitz_icl.derivations.linear_attention.linear_optimum`); the cost ``E(M) - E(w I)`` paired on
common random numbers (:func:`lipschitz_icl.loss.estimators.general_terms`).
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.estimate import mean_se
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem

__all__ = ["optimal_error_curves", "paired_error_cost"]


def optimal_error_curves(task: str, d: int, L_grid, n_grid, sigma: float) -> tuple[list, list, list]:
    """ICL errors against ``n``, one row per ``L``: ``E_soft`` at the exact ``w*`` (exact quadrature), its stated
    absolute error, and ``E_lin`` at ``m*`` (derived)."""
    soft, soft_abs, linear = [], [], []
    for L in L_grid:
        losses = [
            exact_loss(p, wstar(p, "exact").w_star.value).loss
            for p in (make_problem(task, d, nn, L, sigma) for nn in n_grid)
        ]
        soft.append([e.value for e in losses])
        soft_abs.append([e.abs_error for e in losses])
        linear.append([lin.linear_optimum(task, d, nn, L, sigma)[1] for nn in n_grid])
    return soft, soft_abs, linear


def paired_error_cost(problem, M, w: float, contexts: int, seed) -> tuple[tuple[float, float], float]:
    """``((mean, se), E(w I))``: the mean and standard error of the per-context ICL error of ``M`` minus that of
    ``w I`` on ``contexts`` common contexts (from ``seed``), and the mean error of ``w I``."""
    terms = general_terms(
        problem, [Attention(M), Attention.isotropic(w, problem.d)], contexts, np.random.default_rng(seed)
    )
    return mean_se((terms[0][0] + terms[0][1]) - (terms[1][0] + terms[1][1])), float(np.mean(terms[1][0] + terms[1][1]))
