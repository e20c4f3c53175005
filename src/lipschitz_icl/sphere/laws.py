"""The unit sphere ``S^{d-1}``: uniform points, the law of ``t = x . q``, its exponential moments.

For ``x`` uniform on ``S^{d-1}`` and a fixed unit ``q``, the inner product ``t = x . q`` has density

    p_d(t) = (1 - t^2)^((d-3)/2) / B((d-1)/2, (d-1)/2) / 2^(d-2),    t in [-1, 1],

i.e. ``t = 2 b - 1`` with ``b ~ Beta((d-1)/2, (d-1)/2)``.  Softmax attention with ``M = w I``
weighs a context point by ``exp(w t)``, so the moment generating function

    Phi_d(w) = E[exp(w t)] = Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w)

and the *tilted* law ``p_d(t) exp(w t) / Phi_d(w)`` (the von Mises-Fisher law of ``x`` seen through
``t``) carry every exponential moment the loss needs.  All of them are computed in log space with
the exponentially scaled Bessel function ``ive`` so that ``w`` up to ``1e6`` and ``d`` up to 512
stay finite.  ``scipy.special`` is imported by the functions that use it: importing the laws (as the task
registry and the command line's parser do) costs NumPy alone.
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl import quadrature
from lipschitz_icl.validation import check_int, check_real

__all__ = [
    "uniform_sphere",
    "normalise_rows",
    "sample_t",
    "t_density",
    "log_phi",
    "tilted_mean",
    "tilted_second_moment",
    "log_collision_ratio",
    "cap_probability",
    "PolarRule",
    "polar_rule",
]


def uniform_sphere(rng: np.random.Generator, size, d: int) -> np.ndarray:
    """Points uniform on ``S^{d-1}``: ``g / ||g||`` for standard Gaussians ``g``, shape ``(*size, d)``."""
    d = check_int("d", d, minimum=1)
    size = (size,) if np.isscalar(size) else tuple(size)
    return normalise_rows(rng.standard_normal(size + (d,)))


def normalise_rows(g: np.ndarray) -> np.ndarray:
    """``g <- g / ||g||`` along the last axis, in place (``g`` a writeable float64 array); returns ``g``.

    For fewer than 8 coordinates the squares are summed in coordinate order, bit for bit what
    ``np.linalg.norm`` returns (numpy sums fewer than 8 terms in order) at a third of its cost;
    otherwise ``np.linalg.norm``.
    """
    d = g.shape[-1]
    if d >= 8:
        norm = np.linalg.norm(g, axis=-1, keepdims=True)
    else:
        norm = g[..., :1] * g[..., :1]
        for k in range(1, d):
            norm += g[..., k : k + 1] * g[..., k : k + 1]
        np.sqrt(norm, out=norm)
    return np.divide(g, norm, out=g)


def sample_t(rng: np.random.Generator, d: int, size) -> np.ndarray:
    """Draws of ``t = x . q`` for ``x`` uniform on ``S^{d-1}``: ``t = 2 Beta((d-1)/2, (d-1)/2) - 1``.

    ``d = 1`` (the sphere ``S^0 = {-1, +1}``) gives Rademacher signs.
    """
    d = check_int("d", d, minimum=1)
    if d == 1:
        return rng.choice(np.array([-1.0, 1.0]), size=size)
    a = 0.5 * (d - 1)
    return 2.0 * rng.beta(a, a, size=size) - 1.0


def t_density(t, d: int) -> np.ndarray:
    """Density ``p_d(t) = (1 - t^2)^((d-3)/2) / (2^(d-2) B((d-1)/2, (d-1)/2))`` on ``(-1, 1)``."""
    from scipy import special

    d = check_int("d", d, minimum=2)
    t = np.asarray(t, dtype=np.float64)
    a = 0.5 * (d - 1)
    log_norm = (d - 2) * np.log(2.0) + special.betaln(a, a)
    with np.errstate(divide="ignore"):
        inside = np.exp(0.5 * (d - 3) * np.log1p(-t * t) - log_norm)
    return np.where(np.abs(t) < 1.0, inside, 0.0)


def log_phi(d: int, w) -> np.ndarray:
    """``log Phi_d(w) = log E[exp(w t)] = log Gamma(d/2) + nu log(2/|w|) + log ive(nu, |w|) + |w|``,
    ``nu = d/2 - 1`` (``Phi_d`` is even in ``w``; ``Phi_d(0) = 1``)."""
    return _moments(d, w)[0]


def tilted_mean(d: int, w) -> np.ndarray:
    """``A_d(w) = E_w[t] = Phi_d'(w) / Phi_d(w) = I_{d/2}(w) / I_{d/2-1}(w)`` (odd in ``w``)."""
    return _moments(d, w)[1]


def tilted_second_moment(d: int, w) -> np.ndarray:
    """``E_w[t^2] = Phi_d''(w) / Phi_d(w) = 1 - (d-1) A_d(w) / w`` (even in ``w``; ``1/d`` at 0)."""
    return _moments(d, w)[2]


def _moments(d: int, w):
    """``(log Phi_d(w), E_w[t], E_w[t^2])`` elementwise.

    Bessel form where ``ive`` is representable; where it underflows (large ``d``, ``w`` well below
    ``d``) the same three numbers come from the polar quadrature of :func:`polar_rule`, which is
    exact to rounding there because the density is smooth and covers ``[0, pi]``.
    """
    from scipy import special

    d = check_int("d", d, minimum=2)
    w = np.asarray(w, dtype=np.float64)
    aw = np.abs(w)
    nu = 0.5 * d - 1.0
    small = aw < 1e-4
    ws = np.where(small, 1.0, aw)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        i_nu = special.ive(nu, ws)
        i_nu1 = special.ive(nu + 1.0, ws)
        log_phi_v = special.gammaln(0.5 * d) + nu * np.log(2.0 / ws) + np.log(i_nu) + ws
        mean = i_nu1 / i_nu
        second = 1.0 - (d - 1.0) * mean / ws
    # Series about w = 0, where the Bessel forms cancel: Phi = 1 + w^2/(2d) + ...
    log_phi_v = np.where(small, np.log1p(aw * aw / (2.0 * d)), log_phi_v)
    mean = np.where(small, aw / d - aw**3 / (d * d * (d + 2.0)), mean)
    second = np.where(small, 1.0 / d + aw * aw * (d - 1.0) / (d * d * (d + 2.0)), second)
    bad = ~small & ~((i_nu > 1e-280) & (i_nu1 > 1e-280) & np.isfinite(log_phi_v))
    if np.any(bad):
        shape = np.shape(w)
        log_phi_v, mean, second = (
            np.array(a, dtype=np.float64).reshape(-1) for a in np.broadcast_arrays(log_phi_v, mean, second)
        )
        flat_w = np.broadcast_to(ws, shape).reshape(-1)
        for index in np.flatnonzero(np.broadcast_to(bad, shape)):
            log_phi_v[index], mean[index], second[index] = _quadrature_moments(d, float(flat_w[index]))
        log_phi_v, mean, second = (a.reshape(shape) for a in (log_phi_v, mean, second))
    return log_phi_v, np.sign(w) * mean, second


def _quadrature_moments(d: int, w: float):
    """``(log Phi_d(w), E_w[t], E_w[t^2])`` by the polar rule on ``[0, pi]``;
    ``log Phi_d(w) = log int exp(w cos theta) sin^(d-2) theta dtheta - log B(1/2, (d-1)/2)``."""
    from scipy import special

    theta, log_mass = _polar_nodes(d, w, theta_max=np.pi, panels=12, order=24)
    log_phi_v = special.logsumexp(log_mass) - special.betaln(0.5, 0.5 * (d - 1))
    weights = np.exp(log_mass - special.logsumexp(log_mass))
    t = np.cos(theta)
    return log_phi_v, weights @ t, weights @ (t * t)


def log_collision_ratio(d: int, w) -> np.ndarray:
    """``log R_d(w)``, ``R_d(w) = Phi_d(2w) / Phi_d(w)^2 = n E[sum_i p_i^2] + O(1/n)``.

    ``R_d(w)`` is the inverse effective fraction of the context inside the attention window; it grows
    like ``w^((d-1)/2)`` for large ``w``.

    Computed without cancellation at any ``w``: with ``nu = d/2 - 1`` and the exponentially scaled
    Bessel function ``ive``, the ``exp(2|w|)`` factors of numerator and denominator cancel
    analytically, ``log R = -log Gamma(d/2) + nu log(|w|/4) + log ive(nu, 2|w|) - 2 log ive(nu, |w|)``
    (the difference ``log Phi_d(2w) - 2 log Phi_d(w)`` loses all digits once ``|w|`` is far above
    ``1/eps``).  Where ``ive`` underflows (large ``d``, ``|w|`` well below ``d``) or near ``w = 0`` the
    difference of :func:`log_phi` is used; it has no cancellation there (both terms are small).
    """
    from scipy import special

    d = check_int("d", d, minimum=2)
    w = np.abs(np.asarray(w, dtype=np.float64))
    nu = 0.5 * d - 1.0
    safe = np.where(w > 1.0, w, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        i1, i2 = special.ive(nu, safe), special.ive(nu, 2.0 * safe)
        scaled = -special.gammaln(0.5 * d) + nu * np.log(safe / 4.0) + np.log(i2) - 2.0 * np.log(i1)
    good = (w > 1.0) & (i1 > 1e-280) & (i2 > 1e-280) & np.isfinite(scaled)
    if np.all(good):
        return scaled
    direct = log_phi(d, 2.0 * np.where(good, 1.0, w)) - 2.0 * log_phi(d, np.where(good, 1.0, w))
    return np.where(good, scaled, direct)


def cap_probability(d: int, h) -> np.ndarray:
    """``P(t >= h)`` for ``t = x . q``, ``x`` uniform on ``S^{d-1}``: ``I_{(1-h)/2}((d-1)/2, (d-1)/2)``."""
    from scipy import special

    d = check_int("d", d, minimum=2)
    h = np.clip(np.asarray(h, dtype=np.float64), -1.0, 1.0)
    a = 0.5 * (d - 1)
    return special.betainc(a, a, 0.5 * (1.0 - h))


class PolarRule:
    """A quadrature rule for the tilted law of ``t``: ``sum_k weights[k] g(t[k]) ~ E_w[g(t)]``.

    Built in the polar angle ``theta`` (``t = cos theta``), where the density
    ``exp(w cos theta) sin^(d-2) theta`` is smooth at both ends for every ``d >= 2``.
    """

    def __init__(self, t: np.ndarray, weights: np.ndarray):
        self.t = t
        self.weights = weights

    def expect(self, values) -> np.ndarray:
        """``sum_k weights[k] values[..., k]``."""
        return np.asarray(values) @ self.weights


def polar_rule(d: int, w: float, *, panels: int = 12, order: int = 24) -> PolarRule:
    """Gauss-Legendre panels in ``theta`` for the law ``exp(w t) p_d(t) / Phi_d(w)``.

    The panels cover ``[0, theta_max]`` with ``theta_max = min(pi, (sqrt(d) + 12) / sqrt(w))``: past it
    the tilted density is below ``exp(-60)`` of its peak, since ``sqrt(w) theta`` is then more than 12
    beyond the mean of its (approximately chi, ``d-1`` degrees of freedom) law.  Weights are normalised
    to sum to one.
    """
    from scipy import special

    d = check_int("d", d, minimum=2)
    w = check_real("w", w, minimum=0.0)
    panels = check_int("panels", panels, minimum=1)
    order = check_int("order", order, minimum=2)
    theta_max = np.pi if w <= 0 else min(np.pi, (np.sqrt(d) + 12.0) / np.sqrt(w))
    theta, log_mass = _polar_nodes(d, w, theta_max=theta_max, panels=panels, order=order)
    weights = np.exp(log_mass - special.logsumexp(log_mass))
    return PolarRule(np.cos(theta), weights)


def _polar_nodes(d: int, w: float, *, theta_max: float, panels: int, order: int):
    """Nodes ``theta_k`` on ``[0, theta_max]`` and ``log(g_k exp(w cos theta_k) sin^(d-2) theta_k)``,
    ``g_k`` the composite Gauss-Legendre weights of ``panels`` equal panels of ``order`` nodes."""
    theta, base = quadrature.composite_rule(0.0, theta_max, order, panels=panels)
    log_mass = np.log(base) + w * np.cos(theta) + (d - 2) * np.log(np.sin(theta))
    return theta, log_mass
