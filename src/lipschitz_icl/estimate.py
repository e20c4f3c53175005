"""The result types of every estimator: :class:`Estimate` and :class:`LossEstimate`; the arithmetic of
independent estimates (:func:`difference`, :func:`log_ratio_of_means`, :func:`log_slope`) and of paired samples
(:func:`paired_log_ratio`).

An :class:`Estimate` is a value with its standard error and a normal-theory confidence interval
``value +- z_{(1+level)/2} * standard_error`` (``standard_error = 0`` for deterministic methods,
whose ``abs_error`` then states the numerical accuracy instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Estimate",
    "LossEstimate",
    "difference",
    "log_ratio_of_means",
    "mean_se",
    "paired_log_ratio",
    "log_slope",
    "mean_difference",
    "normal_quantile",
    "pilot_sample_size",
    "relative_interval",
]


@dataclass(frozen=True)
class Estimate:
    """``value`` with ``standard_error``; ``confidence_interval(level)`` gives ``(low, high)``."""

    value: float
    standard_error: float = 0.0
    samples: int = 0
    abs_error: float = 0.0

    @staticmethod
    def from_samples(samples: np.ndarray) -> Estimate:
        """Mean of i.i.d. samples and its standard error ``std(ddof=1) / sqrt(N)``."""
        samples = np.asarray(samples, dtype=np.float64).ravel()
        N = samples.size
        # scaled by max |x|, so that samples near the double range (1e304) neither overflow the sum nor
        # the squares
        scale = float(np.max(np.abs(samples))) if N else 0.0
        if not (0.0 < scale < math.inf):
            scale = 1.0
        x = samples / scale
        se = float(scale * (np.std(x, ddof=1) / np.sqrt(N))) if N > 1 else float("inf")
        return Estimate(float(scale * np.mean(x)), se, N)

    def confidence_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Normal interval ``value +- z se`` widened by the stated numerical ``abs_error``."""
        z = normal_quantile(0.5 + 0.5 * level)
        half = z * self.standard_error + self.abs_error
        return (self.value - half, self.value + half)


def normal_quantile(p: float) -> float:
    """``z_p``, the ``p``-quantile of the standard normal law (``scipy.stats.norm.ppf(p)``, by the function
    it calls, ``scipy.special.ndtri``: importing scipy.stats costs seconds, scipy.special a fraction)."""
    from scipy import special

    return float(special.ndtri(p))


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` of independent estimates: standard error ``sqrt(se_a^2 + se_b^2)``."""
    return Estimate(a.value - b.value, math.hypot(a.standard_error, b.standard_error))


def log_ratio_of_means(num, den) -> Estimate:
    """``log(mean(num)/mean(den))`` for independent samples, delta-method standard error
    ``sqrt((se_num/mean_num)^2 + (se_den/mean_den)^2)``."""
    a, b = Estimate.from_samples(num), Estimate.from_samples(den)
    return Estimate(math.log(a.value / b.value), math.hypot(a.standard_error / a.value, b.standard_error / b.value))


def mean_se(samples) -> tuple[float, float]:
    """``(mean, sd / sqrt(N))`` of i.i.d. ``samples`` (plain, unscaled: :meth:`Estimate.from_samples` scales)."""
    samples = np.asarray(samples, dtype=float)
    return float(samples.mean()), float(samples.std(ddof=1) / math.sqrt(samples.size))


def paired_log_ratio(numerator, denominator) -> tuple[float, float]:
    """``log(mean X / mean Y)`` of paired per-context samples and its delta-method standard error
    ``sd(X/mean X - Y/mean Y)/sqrt(N)`` (common random numbers: the pairing enters the variance)."""
    x, y = np.asarray(numerator, float), np.asarray(denominator, float)
    mx, my = x.mean(), y.mean()
    return float(math.log(mx / my)), float(np.std(x / mx - y / my, ddof=1) / math.sqrt(x.size))


def log_slope(n_pair, values, errors) -> tuple[float, float]:
    """Local log-log slope ``s = log(E_2/E_1)/log(n_2/n_1)`` and its delta-method standard error
    ``sqrt((se_1/E_1)^2 + (se_2/E_2)^2)/log(n_2/n_1)`` (independent samples at the two ``n``)."""
    (n1, n2), (v1, v2), (e1, e2) = n_pair, values, errors
    span = math.log(n2 / n1)
    return math.log(v2 / v1) / span, math.hypot(e1 / v1, e2 / v2) / span


def mean_difference(a, b, level: float) -> tuple[float, float]:
    """``(mean(b) - mean(a), half-width)``: the ``level`` t-interval of a difference of two means of
    equally many runs (``2 runs - 2`` degrees of freedom)."""
    a, b = np.asarray(a), np.asarray(b)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    from scipy import special  # scipy.stats.t.ppf is this function; importing scipy.stats costs seconds

    half = special.stdtrit(a.size + b.size - 2, 0.5 + level / 2) * se
    return float(b.mean() - a.mean()), float(half)


def pilot_sample_size(relative_sd: float, z: float, target: float, bounds) -> int:
    """Contexts for a ``z`` interval of relative half-width ``target``: ``ceil((z relative_sd / target)^2)``
    clipped to ``bounds``; ``relative_sd`` comes from an independent pilot sample, so the size depends on the
    spread only, never on where the estimate lies."""
    return int(min(max(math.ceil((z * relative_sd / target) ** 2), bounds[0]), bounds[1]))


def relative_interval(value: float, half_width: float, target: float) -> tuple[float, float]:
    """``[value - half, value + half] / target - 1`` (``target > 0``)."""
    return (value - half_width) / target - 1.0, (value + half_width) / target - 1.0


@dataclass(frozen=True)
class LossEstimate:
    """The ICL loss and its two parts: ``loss = bias + noise`` (each an :class:`Estimate`).

    ``bias = E[(sum_i p_i f(x_i) - f(q))^2]`` (no label noise); ``noise = sigma^2 E[sum_i p_i^2]``.
    """

    loss: Estimate
    bias: Estimate
    noise: Estimate
    method: str
    info: dict = field(default_factory=dict)

    @property
    def inconclusive(self) -> bool:
        """A deterministic method whose resolution levels (or series tail bound) did not reach its
        tolerance: its interval is an estimate, not a certified accuracy (the CLI exits 3)."""
        return self.info.get("converged") is False

    def to_dict(self, level: float = 0.95) -> dict:
        """Flat JSON-ready dict with the CLI contract keys (``converged`` for deterministic methods, ``regime``
        for the asymptotic one)."""
        low, high = self.loss.confidence_interval(level)
        out = {
            "loss": self.loss.value,
            "ci_low": low,
            "ci_high": high,
            "bias": self.bias.value,
            "noise": self.noise.value,
            "loss_stderr": self.loss.standard_error,
            "bias_stderr": self.bias.standard_error,
            "noise_stderr": self.noise.standard_error,
            "method": self.method,
        }
        if "converged" in self.info:
            out["converged"] = bool(self.info["converged"])
        if "regime" in self.info:  # the asymptotic method's regime parameter rho (lipschitz_icl.loss.asymptotic)
            out["regime"] = float(self.info["regime"])
        return out
