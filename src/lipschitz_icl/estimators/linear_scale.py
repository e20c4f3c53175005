"""Linear attention's scale by Monte Carlo: ``yhat(q) = (1/n) sum_i y_i x_i^T M q`` has a per-context loss
quadratic in ``M``, so three losses on common random numbers give the whole quadratic of each context.

* :func:`m_hat`: along ``M = m I``, ``E_c(m) = a0 - 2 m a1 + m^2 a2`` with ``a2 = (l2 - 2 l1 + l0)/2`` and
  ``a1 = (l0 + a2 - l1)/2`` from the losses ``l0, l1, l2`` at ``m = 0, 1, 2``; the optimum
  ``m_hat = mean(a1)/mean(a2)`` with the delta-method standard error.
* :func:`base_differences`: paired differences ``L_c(B + P) - L_c(B)`` are affine in the base ``B``, so
  those at a few bases give them exactly at every affine combination of the bases.
* :func:`linear_loss`: the Monte Carlo ICL loss at ``m I``.
* :func:`scale_elasticity`: the elasticity ``log(m_hi/m_lo)/span`` of two independent ``m_hat`` with its
  delta-method interval.
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl.loss.estimators import general_terms, icl_loss
from lipschitz_icl.model.attention import Attention

__all__ = ["m_hat", "base_differences", "linear_loss", "scale_elasticity"]


def m_hat(problem, contexts: int, stream) -> tuple[float, float]:
    """Monte Carlo optimum of the per-context quadratic ``E_c(m) = a0 - 2 m a1 + m^2 a2`` (exact from the
    losses at ``m = 0, 1, 2`` on common random numbers: ``a2 = (l2 - 2 l1 + l0)/2``, ``a1 = (l0 + a2 - l1)/2``):
    ``m_hat = mean(a1)/mean(a2)`` with delta-method standard error ``sd(a1 - m_hat a2) / (mean(a2) sqrt(N))``."""
    models = [Attention(mm * np.eye(problem.d), "linear") for mm in (0.0, 1.0, 2.0)]
    l0, l1, l2 = (b + nz for b, nz in general_terms(problem, models, contexts, np.random.default_rng(stream)))
    a2 = (l2 - 2 * l1 + l0) / 2
    a1 = (l0 + a2 - l1) / 2
    m = float(a1.mean() / a2.mean())
    return m, float(np.std(a1 - m * a2, ddof=1) / (a2.mean() * math.sqrt(contexts)))


def base_differences(problem, bases, perturbations, contexts: int, rng: np.random.Generator):
    """Per-context paired differences ``L_c(B + P) - L_c(B)`` for each base ``B`` and perturbation ``P`` on
    common random numbers.  The per-context loss of linear attention is a quadratic in ``M``, so the difference
    is affine in ``B``: at ``B_0 + sum_j c_j (B_j - B_0)`` it is exactly ``D_0 + sum_j c_j (D_j - D_0)``.
    Returns one array of shape ``(perturbations, contexts)`` per base."""
    models = [Attention(B + P, "linear") for B in bases for P in [np.zeros_like(B), *perturbations]]
    losses = [b + nz for b, nz in general_terms(problem, models, contexts, rng)]
    k = len(perturbations) + 1
    return [np.array([loss - losses[i] for loss in losses[i + 1 : i + k]]) for i in range(0, len(losses), k)]


def linear_loss(problem, m: float, contexts: int, stream) -> tuple[float, float]:
    """``(value, standard error)`` of the Monte Carlo ICL loss of linear attention at ``m I``."""
    est = icl_loss(
        problem, M=m * np.eye(problem.d), attention="linear", contexts=contexts, rng=np.random.default_rng(stream)
    ).loss
    return est.value, est.standard_error


def scale_elasticity(low, high, span: float, z: float) -> tuple[float, tuple[float, float]]:
    """Elasticity ``e = log(m_hi/m_lo)/span`` of two independent :func:`m_hat` results ``low = (m_lo, se_lo)`` and
    ``high = (m_hi, se_hi)`` (``span``: the log-distance of their settings, e.g. ``log(L_hi/L_lo)``), with the
    delta-method interval ``e -+ z sqrt((se_lo/m_lo)^2 + (se_hi/m_hi)^2)/span``."""
    (m_lo, s_lo), (m_hi, s_hi) = low, high
    elasticity, half = math.log(m_hi / m_lo) / span, z * math.hypot(s_lo / m_lo, s_hi / m_hi) / span
    return elasticity, (elasticity - half, elasticity + half)
