"""The result types of every estimator: :class:`Estimate` and :class:`LossEstimate`.

An :class:`Estimate` is a value with its standard error and a normal-theory confidence interval
``value +- z_{(1+level)/2} * standard_error`` (``standard_error = 0`` for deterministic methods,
whose ``abs_error`` then states the numerical accuracy instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

__all__ = ["Estimate", "LossEstimate"]


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
        z = stats.norm.ppf(0.5 + 0.5 * level)
        half = z * self.standard_error + self.abs_error
        return (self.value - half, self.value + half)


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

    def as_dict(self, level: float = 0.95) -> dict:
        """Flat JSON-ready dict with the CLI contract keys (``converged`` for deterministic methods)."""
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
        return out
