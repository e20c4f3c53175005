"""A stated bound against the true tail at grid points, and the Monte Carlo draws that estimate tails.

With ``r_i = ln(tail_i / bound_i)`` at the grid points ``i`` of one case, a bound dominates the tail iff
``max_i r_i <= 0``; :func:`decide` applies the ``one-sided`` rule to the interval ``[max_i r_i^low,
max_i r_i^high]`` built from each tail's interval (:class:`TailComparison`):

* exact tails with their stated relative accuracy :data:`lipschitz_icl.sphere.concentration.TAIL_RTOL`:
  ``truth (1 +- TAIL_RTOL)`` (:func:`exact_tails`);
* Monte Carlo proportions with two-sided Clopper-Pearson limits (:func:`clopper_pearson`)
  ``low = Beta^{-1}(a/2; c, N - c + 1)``, ``high = Beta^{-1}(1 - a/2; c + 1, N - c)``, ``a = 1 - level``.

The draws: the tail of a Lipschitz functional ``f`` around its mean is bracketed by the counts of ``f >=
m_hi + t`` and ``f >= m_lo + t``, ``[m_lo, m_hi]`` a normal interval of ``E f`` (:func:`bracketing_counts`,
functionals of :func:`monte_carlo_functionals`); the softmax normaliser ``Z_n = (1/n) sum_i exp(w t_i)`` is
drawn from the exact law of ``t_i = x_i . q`` (:func:`normaliser_draws`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

from lipschitz_icl import decision
from lipschitz_icl.sphere import laws
from lipschitz_icl.sphere.concentration import TAIL_RTOL

__all__ = [
    "TailComparison",
    "log",
    "exact_tails",
    "clopper_pearson",
    "decide",
    "monte_carlo_functionals",
    "bracketing_counts",
    "normaliser_draws",
]


@dataclasses.dataclass(frozen=True)
class TailComparison:
    """A stated bound against the true tail at the grid points of one case, in natural logs: per point
    the bound ``log_bound``, the true tail's interval ``[log_low, log_high]`` and value ``log_point``
    (exact value or Monte Carlo proportion), and a label naming the point."""

    labels: tuple
    log_bound: np.ndarray
    log_low: np.ndarray
    log_point: np.ndarray
    log_high: np.ndarray

    def __post_init__(self):
        sizes = {len(self.labels), *(np.shape(a)[0] for a in self.arrays)}
        if len(sizes) != 1 or not self.labels:
            raise ValueError(f"a comparison needs one label, bound and interval per point, got sizes {sizes}")
        if np.any(np.isnan(self.log_bound)) or np.any(self.log_bound == -np.inf):
            raise ValueError("a bound must be positive and finite at every grid point (no underflow)")

    @property
    def arrays(self):
        return self.log_bound, self.log_low, self.log_point, self.log_high

    def ratios(self, delta: float = 0.0):
        """``(low, point, high)`` of ``ln(tail_i / bound_i^(1 + delta))`` per point."""
        log_b = (1.0 + delta) * self.log_bound
        return self.log_low - log_b, self.log_point - log_b, self.log_high - log_b


def log(x) -> np.ndarray:
    """``ln x`` elementwise, ``-inf`` at 0 without a warning."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(x, dtype=float))


def exact_tails(labels, bound, truth) -> TailComparison:
    """Exact tails with their stated relative accuracy: ``truth (1 +- TAIL_RTOL)``."""
    log_t = log(truth)
    return TailComparison(
        tuple(labels), log(bound), log_t + math.log1p(-TAIL_RTOL), log_t, log_t + math.log1p(TAIL_RTOL)
    )


def clopper_pearson(count, total: int, level: float):
    """Two-sided Clopper-Pearson interval ``(low, high)`` for a binomial proportion at ``level``:
    ``low = Beta^{-1}(a/2; c, N - c + 1)``, ``high = Beta^{-1}(1 - a/2; c + 1, N - c)``, ``a = 1 - level``."""
    count = np.asarray(count, dtype=np.float64)
    a = 1.0 - level
    low = np.where(count > 0, stats.beta.ppf(0.5 * a, np.maximum(count, 1e-300), total - count + 1), 0.0)
    high = np.where(count < total, stats.beta.ppf(1 - 0.5 * a, count + 1, np.maximum(total - count, 1e-300)), 1.0)
    return low, high


def decide(comparison: TailComparison, delta: float = 0.0) -> decision.Decision:
    """Rule one-sided on ``max_i ln(tail_i / bound_i^(1 + delta)) <= 0`` with the interval
    ``[max_i low_i, max_i high_i]``: holds iff every tail interval is at or below its bound, fails iff
    one lies wholly above it.  The detail names the deciding point (the one with the largest ``low``
    when it fails, the largest ``high`` otherwise)."""
    low, _, high = comparison.ratios(delta)
    result = decision.one_sided(float(np.max(low)), float(np.max(high)), 0.0, "<=")
    i = int(np.argmax(low if result.refutes else high))
    return decision.Decision(
        result.rule,
        result.verdict,
        f"max ln(tail/bound^{1 + delta:.4g}) in {result.detail}; deciding point {comparison.labels[i]}",
    )


def monte_carlo_functionals(d: int, anchors: np.ndarray) -> dict:
    """Two 1-Lipschitz functionals without a closed-form law: the distance to the nearest anchor,
    ``min_j ||x - a_j||``, and ``||x||_1 / sqrt(d)`` (``| ||x||_1 - ||y||_1 | <= sqrt(d) ||x - y||``)."""

    def nearest(x):
        return np.min(np.linalg.norm(x[:, None, :] - anchors[None, :, :], axis=-1), axis=1)

    def l1(x):
        return np.sum(np.abs(x), axis=-1) / np.sqrt(d)

    return {f"distance to nearest of {len(anchors)} points": nearest, "||x||_1/sqrt(d)": l1}


def bracketing_counts(f, mean_draws, tail_draws, t, z: float) -> tuple:
    """Counts of ``f >= m_hi + t`` and ``f >= m_lo + t``, ``[m_lo, m_hi]`` the normal interval ``+-z se`` of
    ``E f`` from ``mean_draws``: the tail at ``t`` lies between the two proportions."""
    m_values = f(mean_draws)
    m, se = float(m_values.mean()), float(m_values.std(ddof=1) / math.sqrt(len(m_values)))
    values = f(tail_draws)
    return ([int(np.sum(values >= m + z * se + ti)) for ti in t], [int(np.sum(values >= m - z * se + ti)) for ti in t])


def normaliser_draws(rng: np.random.Generator, d: int, w: float, n: int, replicates: int) -> np.ndarray:
    """``replicates`` independent draws of ``Z_n = (1/n) sum_i exp(w t_i)``, ``t_i = x_i . q`` from its
    exact law (:func:`lipschitz_icl.sphere.laws.sample_t`), in blocks of about 2^20 summands."""
    Z = np.empty(replicates)
    per = max(1, (1 << 20) // n)
    for s0 in range(0, replicates, per):
        s1 = min(replicates, s0 + per)
        Z[s0:s1] = np.mean(np.exp(w * laws.sample_t(rng, d, (s1 - s0, n))), axis=1)
    return Z
