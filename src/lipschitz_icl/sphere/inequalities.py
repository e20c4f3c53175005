"""Concentration inequalities on the sphere ``S^{d-1}``: the stated bounds the proofs rest on.

Registry: ``lipschitz_icl/claims/concentration.toml`` (group ``concentration``): the proof of Theorem 4.4
(and the window analysis of Theorem 3.4) controls four kinds of random quantity for points uniform on
the sphere.  Each bound below is a documented function of its parameters;
:mod:`lipschitz_icl.claims.concentration` holds them against the true tails (exact laws where known,
:mod:`lipschitz_icl.sphere.concentration`; Monte Carlo with Clopper-Pearson limits otherwise).  Every bound takes its
constant as a keyword
(``rate``, ``constant``) so that a *bound variant* of the same shape with a different constant goes
through the same code; the defaults are the valid constants of the cited statements.

1. Projection (rank-``k`` projector ``P``, ``1 <= k < d``; exact law ``||P x||^2 ~ Beta(k/2, (d-k)/2)``,
   mean ``k/d``).  Dasgupta and Gupta (2003), "An elementary proof of a theorem of Johnson and
   Lindenstrauss", Lemma 2.2: with ``beta = s d / k``,

       P(||P x||^2 >= s) <= exp(rate k (1 - beta + ln beta))          (beta >= 1)
       P(||P x||^2 <= s) <= exp(rate k (1 - beta + ln beta))          (beta <= 1)

   with ``rate = 1/2``; their sharper intermediate form
   ``beta^(k/2) (1 + (1 - beta) k/(d - k))^((d-k)/2)`` is :func:`projection_bound_dg`.
2. Cap probability and cap counts.  Ball (1997), "An elementary introduction to modern convex geometry",
   Lemma 2.2: ``P(x . q >= h) <= exp(-rate d h^2)``, ``rate = 1/2``, ``0 <= h < 1``
   (:func:`cap_bound`).  The number ``N`` of ``n`` i.i.d. uniform points in a cap of probability ``p``
   is ``Binomial(n, p)``; the Chernoff-Hoeffding bounds (Hoeffding 1963, Theorem 1) are
   ``P(N >= a) <= exp(-rate n D(a/n || p))`` for ``a >= n p`` and ``P(N <= a) <= exp(-rate n D(a/n || p))``
   for ``a <= n p``, ``rate = 1``, ``D`` the Bernoulli relative entropy (:func:`binomial_chernoff`);
   the multiplicative forms ``exp(-delta^2 mu / (2 + delta))`` (from the Chernoff bound
   ``(e^delta / (1 + delta)^(1 + delta))^mu`` and ``ln(1 + delta) >= 2 delta / (2 + delta)``) and
   ``exp(-delta^2 mu / 2)`` (lower tail; ``mu = n p``; Mitzenmacher and Upfal 2005, section 4.2) are
   :func:`binomial_multiplicative`.
3. Lipschitz functionals.  For ``f`` ``L``-Lipschitz on ``S^{d-1}`` (``d >= 3``), the sphere has Ricci
   curvature ``d - 2``, so by Bakry-Emery it satisfies a logarithmic Sobolev inequality with constant
   ``1/(d-2)`` and Herbst's argument gives (Ledoux 2001, The Concentration of Measure Phenomenon,
   chapter 5)

       P(f(x) - E f(x) >= t) <= exp(-rate (d - 2) t^2 / L^2),     rate = 1/2       (:func:`levy_bound`).

4. Softmax normaliser.  ``Z_n(w) = (1/n) sum_i exp(w x_i . q)`` has mean ``Phi_d(w) = E exp(w t)``
   (:func:`lipschitz_icl.sphere.laws.log_phi`) and summand variance ``v = Phi_d(2w) - Phi_d(w)^2``; a summand
   exceeds its mean by at most ``b_+ = e^w - Phi_d(w)`` and falls below it by at most
   ``b_- = Phi_d(w) - e^{-w}`` (both ``<= e^w``).  Bernstein's inequality (Boucheron, Lugosi and Massart
   2013, Corollary 2.11):

       P(+-(Z_n - Phi_d(w)) >= t) <= exp(-n t^2 / (constant (v + b_+- t / 3))),   constant = 2
                                                                                   (:func:`bernstein_normaliser`).

All functions are vectorised over their tail argument and return ``min(1, bound)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from lipschitz_icl.sphere import laws
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real

__all__ = [
    "projection_bound",
    "projection_bound_dg",
    "cap_bound",
    "bernoulli_kl",
    "binomial_chernoff",
    "binomial_multiplicative",
    "levy_bound",
    "levy_t",
    "normaliser_moments",
    "bernstein_normaliser",
    "bernstein_t",
    "SIDES",
]

SIDES = ("upper", "lower")


def _dk(d, k):
    d = check_int("d", d, minimum=2)
    k = check_int("k", k, minimum=1)
    if k >= d:
        raise ParameterError("k", f"an integer in [1, d - 1] = [1, {d - 1}]", k)
    return d, k


def projection_bound(d: int, k: int, s, *, side: str = "upper", rate: float = 0.5) -> np.ndarray:
    """Dasgupta-Gupta (Lemma 2.2) tail bound for ``||P x||^2``, ``P`` a rank-``k`` projector.

    ``beta = s d / k``; upper side (``P(||P x||^2 >= s)``, meaningful for ``beta >= 1``) and lower side
    (``P(||P x||^2 <= s)``, ``beta <= 1``): ``exp(rate k (1 - beta + ln beta))``; ``1`` on the other
    side of the mean.  The valid constant is ``rate = 1/2``.
    """
    d, k = _dk(d, k)
    side = check_choice("side", side, SIDES)
    rate = check_real("rate", rate, minimum=0.0, strict_minimum=True)
    s = np.asarray(s, dtype=np.float64)
    beta = np.clip(s, 1e-300, None) * d / k
    exponent = rate * k * (1.0 - beta + np.log(beta))
    trivial = beta <= 1.0 if side == "upper" else beta >= 1.0
    bound = np.where(trivial, 1.0, np.exp(np.minimum(exponent, 0.0)))
    if side == "lower":
        bound = np.where(s <= 0.0, 0.0, bound)
    return np.minimum(bound, 1.0)


def projection_bound_dg(d: int, k: int, s, *, side: str = "upper") -> np.ndarray:
    """Dasgupta-Gupta's sharper form ``beta^(k/2) (1 + (1 - beta) k / (d - k))^((d-k)/2)``, ``beta = s d/k``
    (Lemma 2.2 before their last step ``1 + x <= e^x``); ``0`` for ``s >= 1`` on the upper side."""
    d, k = _dk(d, k)
    side = check_choice("side", side, SIDES)
    s = np.asarray(s, dtype=np.float64)
    beta = np.clip(s, 1e-300, None) * d / k
    inner = 1.0 + (1.0 - beta) * k / (d - k)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_bound = 0.5 * k * np.log(beta) + 0.5 * (d - k) * np.log(np.clip(inner, 0.0, None))
    bound = np.exp(np.minimum(log_bound, 0.0))
    trivial = beta <= 1.0 if side == "upper" else beta >= 1.0
    bound = np.where(trivial, 1.0, bound)
    if side == "upper":
        bound = np.where(s >= 1.0, 0.0, bound)
    else:
        bound = np.where(s <= 0.0, 0.0, bound)
    return np.minimum(bound, 1.0)


def cap_bound(d: int, h, *, rate: float = 0.5) -> np.ndarray:
    """Ball's cap bound ``P(x . q >= h) <= exp(-rate d h^2)`` for ``0 <= h < 1`` (valid ``rate = 1/2``);
    ``1`` for ``h <= 0``."""
    d = check_int("d", d, minimum=2)
    rate = check_real("rate", rate, minimum=0.0, strict_minimum=True)
    h = np.asarray(h, dtype=np.float64)
    return np.where(h <= 0.0, 1.0, np.exp(-rate * d * np.clip(h, 0.0, None) ** 2))


def bernoulli_kl(a, p) -> np.ndarray:
    """``D(a || p) = a ln(a/p) + (1 - a) ln((1 - a)/(1 - p))`` (nats), ``a, p`` in ``[0, 1]``."""
    a = np.asarray(a, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    return special.rel_entr(a, p) + special.rel_entr(1.0 - a, 1.0 - p)


def _check_np(n, p):
    n = check_int("n", n, minimum=1)
    p = np.asarray(p, dtype=np.float64)
    if np.any((p <= 0.0) | (p >= 1.0)) or np.any(np.isnan(p)):
        raise ParameterError("p", "a probability in (0, 1)", p)
    return n, p


def binomial_chernoff(n: int, p, a, *, side: str = "upper", rate: float = 1.0) -> np.ndarray:
    """Chernoff-Hoeffding bound for ``N ~ Binomial(n, p)``: ``exp(-rate n D(a/n || p))`` for
    ``P(N >= a)`` (``a >= n p``, side upper) or ``P(N <= a)`` (``a <= n p``, side lower); ``1`` on the
    other side of the mean.  Valid constant ``rate = 1``."""
    n, p = _check_np(n, p)
    side = check_choice("side", side, SIDES)
    rate = check_real("rate", rate, minimum=0.0, strict_minimum=True)
    a = np.asarray(a, dtype=np.float64)
    frac = np.clip(a / n, 0.0, 1.0)
    bound = np.exp(-rate * n * bernoulli_kl(frac, p))
    trivial = a <= n * p if side == "upper" else a >= n * p
    bound = np.where(trivial, 1.0, bound)
    if side == "upper":
        bound = np.where(a > n, 0.0, bound)
    else:
        bound = np.where(a < 0, 0.0, bound)
    return np.minimum(bound, 1.0)


def binomial_multiplicative(n: int, p, delta, *, side: str = "upper", rate: float = 1.0) -> np.ndarray:
    """Multiplicative Chernoff bounds, ``mu = n p``, ``delta > 0``:
    ``P(N >= (1 + delta) mu) <= exp(-rate delta^2 mu / (2 + delta))`` (upper) and
    ``P(N <= (1 - delta) mu) <= exp(-rate delta^2 mu / 2)`` (lower, ``0 < delta < 1``).
    Valid constant ``rate = 1``."""
    n, p = _check_np(n, p)
    side = check_choice("side", side, SIDES)
    rate = check_real("rate", rate, minimum=0.0, strict_minimum=True)
    delta = np.asarray(delta, dtype=np.float64)
    mu = n * p
    if side == "upper":
        bound = np.exp(-rate * delta**2 * mu / (2.0 + delta))
    else:
        bound = np.exp(-rate * delta**2 * mu / 2.0)
    return np.where(delta <= 0.0, 1.0, np.minimum(bound, 1.0))


def levy_bound(d: int, t, *, L: float = 1.0, rate: float = 0.5) -> np.ndarray:
    """Gaussian concentration of an ``L``-Lipschitz ``f`` on ``S^{d-1}`` (``d >= 3``):
    ``P(f - E f >= t) <= exp(-rate (d - 2) t^2 / L^2)`` (valid ``rate = 1/2``: Bakry-Emery with
    Ricci curvature ``d - 2`` and Herbst's argument); ``1`` for ``t <= 0``."""
    d = check_int("d", d, minimum=3)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    rate = check_real("rate", rate, minimum=0.0, strict_minimum=True)
    t = np.asarray(t, dtype=np.float64)
    return np.where(t <= 0.0, 1.0, np.exp(-rate * (d - 2) * np.clip(t, 0.0, None) ** 2 / L**2))


def levy_t(d: int, levels) -> np.ndarray:
    """``t`` where the Levy bound ``exp(-(d-2) t^2/2)`` equals each level."""
    return np.sqrt(2.0 * np.log(1.0 / np.asarray(levels, dtype=float)) / (d - 2))


def normaliser_moments(d: int, w: float) -> dict:
    """Mean ``Phi_d(w)``, summand variance ``v = Phi_d(2w) - Phi_d(w)^2`` and one-sided ranges
    ``b_+ = e^w - Phi_d(w)``, ``b_- = Phi_d(w) - e^{-w}`` of ``exp(w x . q)``, ``w >= 0``."""
    d = check_int("d", d, minimum=2)
    w = check_real("w", w, minimum=0.0)
    phi = float(np.exp(laws.log_phi(d, w)))
    phi2 = float(np.exp(laws.log_phi(d, 2.0 * w)))
    return {
        "phi": phi,
        "variance": phi2 - phi * phi,
        "range_upper": float(np.exp(w)) - phi,
        "range_lower": phi - float(np.exp(-w)),
    }


def bernstein_normaliser(d: int, w: float, n: int, t, *, side: str = "upper", constant: float = 2.0) -> np.ndarray:
    """Bernstein bound for the softmax normaliser ``Z_n = (1/n) sum_i exp(w x_i . q)`` around ``Phi_d(w)``:
    ``P(+-(Z_n - Phi_d(w)) >= t) <= exp(-n t^2 / (constant (v + b t / 3)))`` with ``v``, ``b = b_+-``
    from :func:`normaliser_moments`; valid ``constant = 2``; ``1`` for ``t <= 0``."""
    n = check_int("n", n, minimum=1)
    side = check_choice("side", side, SIDES)
    constant = check_real("constant", constant, minimum=0.0, strict_minimum=True)
    m = normaliser_moments(d, w)
    b = m["range_upper"] if side == "upper" else m["range_lower"]
    t = np.asarray(t, dtype=np.float64)
    tc = np.clip(t, 0.0, None)
    bound = np.exp(-n * tc**2 / (constant * (m["variance"] + b * tc / 3.0)))
    return np.where(t <= 0.0, 1.0, np.minimum(bound, 1.0))


def bernstein_t(n: int, variance: float, b: float, level: float, constant: float) -> float:
    """``t`` solving ``exp(-n t^2 / (constant (v + b t/3))) = level`` (positive root of the quadratic)."""
    c = constant * math.log(1.0 / level)
    return (c * b / 3.0 + math.sqrt((c * b / 3.0) ** 2 + 4.0 * n * c * variance)) / (2.0 * n)
