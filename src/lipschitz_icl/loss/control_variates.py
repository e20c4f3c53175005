"""Control variates of the reduced form (``M = w I``): weighted moments of the draws whose means are known
exactly, with coefficients cross-fitted on the other half of the contexts.

A context of the reduced form (:mod:`lipschitz_icl.loss.isotropic`) draws ``t_i = x_i . q`` (law ``p_d``) and
``z_i`` (law ``p_{d-1}``, independent of ``t``), ``i = 1..n``.  Its loss is a smooth function of the
softmax weights' sums over the context, so its fluctuation from context to context follows, to first
order, the fluctuation of the weighted moments (``e_i = exp(w (t_i - 1))``, ``r_i^2 = 1 - t_i^2``)

    m_{k,g} = (1/n) sum_i e_i^k g(t_i, z_i),    k = 1, 2,    g in {1, t, t^2, r^2 z^2},

whose means are exact: ``E[e^k g] = Phi_d(k w) exp(-k w) E_{kw}[g]`` with the tilted moments of
:mod:`lipschitz_icl.sphere.laws` (``E_{kw}[t]``, ``E_{kw}[t^2]``; ``E[z^2] = 1/(d - 1)``).

Cross-fitting: the contexts are split by the parity of their index; the coefficients ``beta`` fitted (least
squares) on one half adjust the other, ``Y_c - (m_c - E m) . beta``.  For a fixed ``beta`` the adjustment has
mean zero, and each half's ``beta`` is independent of the contexts it adjusts: the estimator stays unbiased
for the loss (no ``O(1/N)`` bias of a coefficient fitted on the same draws), and only its variance changes.
Below :data:`MIN_CONTEXTS` contexts no adjustment is made.
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl.sphere import laws

__all__ = ["MOMENTS", "MIN_CONTEXTS", "reduced_moments", "reduced_moment_means", "cross_fitted"]

MOMENTS = 8  # columns of reduced_moments: k = 1, 2 times g = 1, t, t^2, r^2 z^2
MIN_CONTEXTS = 8 * (MOMENTS + 1)  # each half fits MOMENTS coefficients on at least 4 (MOMENTS + 1) contexts


def reduced_moments(t: np.ndarray, z: np.ndarray, w: float) -> np.ndarray:
    """The weighted moments ``m_{k,g}`` of each context (module docstring), shape ``(contexts, MOMENTS)``,
    for draws ``t``, ``z`` of shape ``(contexts, n)``."""
    e1 = np.exp(w * (t - 1.0))
    e2 = e1 * e1
    t2 = t * t
    rz2 = (1.0 - t2) * z * z
    return np.stack([np.mean(e * g, axis=-1) for e in (e1, e2) for g in (1.0, t, t2, rz2)], axis=-1)


def reduced_moment_means(d: int, w: float) -> np.ndarray:
    """``E[m_{k,g}]``, in the order of :func:`reduced_moments`."""
    means = []
    for k in (1.0, 2.0):
        scale = float(np.exp(laws.log_phi(d, k * w) - k * w))
        mean_t, mean_t2 = float(laws.tilted_mean(d, k * w)), float(laws.tilted_second_moment(d, k * w))
        means += [scale, scale * mean_t, scale * mean_t2, scale * (1.0 - mean_t2) / (d - 1)]
    return np.array(means)


def _coefficients(values: np.ndarray, centred: np.ndarray) -> np.ndarray:
    """Least-squares ``beta`` of ``values`` on the columns of ``centred`` (with an intercept); columns that do
    not vary (e.g. underflowed weights) get ``beta = 0``."""
    X = centred - centred.mean(axis=0)
    scale = X.std(axis=0)
    usable = np.isfinite(scale) & (scale > 0)
    beta = np.zeros(centred.shape[1])
    if np.any(usable):
        fitted = np.linalg.lstsq(X[:, usable] / scale[usable], values - values.mean(), rcond=None)[0]
        beta[usable] = fitted / scale[usable]
    return beta


def cross_fitted(values, moments: np.ndarray, means: np.ndarray) -> list[np.ndarray]:
    """Each array of ``values`` (per-context samples, shape ``(contexts,)``) adjusted by the control variates
    ``moments - means`` (shape ``(contexts, MOMENTS)``), coefficients cross-fitted on the other half
    (module docstring); unchanged below :data:`MIN_CONTEXTS` contexts."""
    values = [np.asarray(v, dtype=np.float64) for v in values]
    centred = moments - means
    N = centred.shape[0]
    if N < MIN_CONTEXTS:
        return [v.copy() for v in values]
    even, odd = slice(0, N, 2), slice(1, N, 2)
    out = []
    for v in values:
        adjusted = v.copy()
        for fit, apply in ((even, odd), (odd, even)):
            adjusted[apply] -= centred[apply] @ _coefficients(v[fit], centred[fit])
        out.append(adjusted)
    return out
