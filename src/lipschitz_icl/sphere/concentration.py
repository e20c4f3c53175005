"""Exact tail laws of functionals of a point uniform on the sphere ``S^{d-1}``.

The concentration inequalities of the paper (registry: the concentration group, ``claims/concentration.toml``) bound
tails whose
laws are known in closed form; a stated bound must dominate these exact values.

* Cap: for ``x`` uniform on ``S^{d-1}`` and a fixed unit ``q``, ``t = x . q`` satisfies
  ``(1 + t)/2 ~ Beta((d-1)/2, (d-1)/2)``, so

      P(t >= h) = I_{(1-h)/2}((d-1)/2, (d-1)/2)                (:func:`cap_tail`)

  (the regularised incomplete beta function ``I``), computed by :func:`lipschitz_icl.sphere.laws.cap_probability`.
* Projection: for a rank-``k`` orthogonal projector ``P`` (``1 <= k <= d``), ``||P x||^2 =
  sum_{i<=k} g_i^2 / sum_{i<=d} g_i^2`` with ``g`` standard Gaussian, so
  ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` for ``k < d`` and ``||P x||^2 = 1`` for ``k = d``:

      P(||P x||^2 >= s) = 1 - I_s(k/2, (d-k)/2)                 (:func:`projection_tail`)
      P(||P x||^2 <= s) = I_s(k/2, (d-k)/2)                     (:func:`projection_lower_tail`)

* Cap counts: the number ``N`` of ``n`` i.i.d. points in a cap of probability ``p`` is
  ``Binomial(n, p)``: ``P(N >= a)`` (:func:`binomial_tail`) and ``P(N <= a)`` (:func:`binomial_lower_tail`).
* The mean norm of a projection: ``E||P x|| = Gamma((k+1)/2) Gamma(d/2) / (Gamma(k/2) Gamma((d+1)/2))``
  (:func:`norm_mean`).

Both are accurate to a few ulps relative (``scipy.special.betainc``/``betaincc``); the relative
accuracy :data:`TAIL_RTOL` is what callers should treat as the numerical error of these values.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from lipschitz_icl.sphere import laws
from lipschitz_icl.validation import ParameterError, check_int

__all__ = [
    "cap_tail",
    "projection_tail",
    "projection_lower_tail",
    "binomial_tail",
    "binomial_lower_tail",
    "TAILS",
    "TAIL_RTOL",
    "norm_mean",
]

TAIL_RTOL = 1e-10


def cap_tail(d: int, h) -> np.ndarray:
    """``P(x . q >= h)`` for ``x`` uniform on ``S^{d-1}`` (``d >= 2``); ``h`` is clipped to ``[-1, 1]``."""
    return laws.cap_probability(d, h)


def projection_tail(d: int, k: int, s) -> np.ndarray:
    """``P(||P x||^2 >= s)`` for ``x`` uniform on ``S^{d-1}``, ``P`` a rank-``k`` projector.

    ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` (``1 <= k < d``); for ``k = d`` it is ``1``, so the tail is the
    indicator of ``s <= 1``.  ``s`` outside ``[0, 1]`` gives 1 (``s <= 0``) or 0 (``s > 1``).
    """
    d = check_int("d", d, minimum=1)
    k = check_int("k", k, minimum=1)
    if k > d:
        raise ParameterError("k", f"an integer in [1, d] = [1, {d}]", k)
    s = np.asarray(s, dtype=np.float64)
    if np.any(np.isnan(s)):
        raise ParameterError("s", "a real number (not NaN)", "nan")
    if k == d:
        return np.where(s <= 1.0, 1.0, 0.0)
    clipped = np.clip(s, 0.0, 1.0)
    tail = special.betaincc(0.5 * k, 0.5 * (d - k), clipped)
    return np.where(s <= 0.0, 1.0, np.where(s > 1.0, 0.0, tail))


def projection_lower_tail(d: int, k: int, s) -> np.ndarray:
    """``P(||P x||^2 <= s) = I_s(k/2, (d-k)/2)`` (``1 <= k < d``); for ``k = d`` the indicator of ``s >= 1``."""
    d = check_int("d", d, minimum=1)
    k = check_int("k", k, minimum=1)
    if k > d:
        raise ParameterError("k", f"an integer in [1, d] = [1, {d}]", k)
    s = np.asarray(s, dtype=np.float64)
    if k == d:
        return np.where(s >= 1.0, 1.0, 0.0)
    return special.betainc(0.5 * k, 0.5 * (d - k), np.clip(s, 0.0, 1.0))


def binomial_tail(n: int, a: int, p) -> np.ndarray:
    """``P(N >= a)`` for ``N ~ Binomial(n, p)``."""
    return stats.binom.sf(check_int("a", a) - 1, check_int("n", n, minimum=0), p)


def binomial_lower_tail(n: int, a: int, p) -> np.ndarray:
    """``P(N <= a)`` for ``N ~ Binomial(n, p)``."""
    return stats.binom.cdf(check_int("a", a), check_int("n", n, minimum=0), p)


TAILS: dict[str, Callable[..., np.ndarray]] = {
    "cap_tail": cap_tail,
    "projection_tail": projection_tail,
    "projection_lower_tail": projection_lower_tail,
    "binomial_tail": binomial_tail,
    "binomial_lower_tail": binomial_lower_tail,
}  # name -> f(**params)


def norm_mean(d: int, k: int) -> float:
    """``E||P x|| = Gamma((k+1)/2) Gamma(d/2) / (Gamma(k/2) Gamma((d+1)/2))`` for a rank-``k`` ``P``."""
    return math.exp(
        special.gammaln(0.5 * (k + 1))
        + special.gammaln(0.5 * d)
        - special.gammaln(0.5 * k)
        - special.gammaln(0.5 * (d + 1))
    )
