"""A measured sequence against a derived law, as :class:`~lipschitz_icl.decision.AsymptoticPoint` s for the
``asymptotic`` rule: at each grid point the distance to the law with its interval and the derived
next-order term of that distance.

* :func:`window_law_points`: ``w*/w0 - 1``, ``w0 = scale C rho^(alpha + shift)``, interval from the exact
  ``w*``'s interval, next order ``k w0^-q`` (Theorem 3.4's classes).
* :func:`kernel_law_points`: the same for a zonal prior's derived regularity ``reg`` (interval from the
  relative accuracy of ``w*``; next order ``reg.wstar_next_order``, 0 where not derived).
* :func:`power_slope_points`: local slopes of ``log values`` against ``log w`` minus a power, interval
  from a relative accuracy, next order from ``values ~ c w^power (1 + next_coef w^-next_q)``.
* :func:`kernel_slope_points`: secant slopes of the bias plus ``reg.beta``, interval from the values'
  errors, next order ``k (w_b^-q - w_a^-q) / log(w_b/w_a)``.
* :func:`secant_slope_interval`: the range of one secant slope ``log(v_b/v_a) / log(x_b/x_a)`` over
  intervals of the two values (a measured exponent's uncertainty from its values' stated accuracy).
* :func:`two_sided_constants`: the min and max over a grid of ``w*/rho^alpha``, each with its interval from
  the ``w*``'s intervals (Theorem 3.4's two-sided constants ``c_lo``, ``c_hi``).
"""

from __future__ import annotations

import math

from lipschitz_icl.decision import AsymptoticPoint

__all__ = [
    "window_law_points",
    "kernel_law_points",
    "power_slope_points",
    "kernel_slope_points",
    "secant_slope_interval",
    "two_sided_constants",
]


def window_law_points(
    rho, ws, *, alpha: float, C: float, q: float, k: float, shift: float = 0.0, scale: float = 1.0
) -> list[AsymptoticPoint]:
    """:class:`~lipschitz_icl.decision.AsymptoticPoint` per grid point for the law
    ``w0 = scale C rho^(alpha + shift)``: distance ``w*/w0 - 1`` with the exact ``w*``'s interval and the
    derived next-order term ``k w0^-q`` (:func:`lipschitz_icl.derivations.window_law.wstar_correction`)."""
    out = []
    for r, w in zip(rho, ws):
        w0 = scale * C * r ** (alpha + shift)
        out.append(AsymptoticPoint(r, w.ci_low / w0 - 1, w.ci_high / w0 - 1, k * w0 ** (-q)))
    return out


def kernel_law_points(rho, ws, accuracy, reg, shift=0.0, scale=1.0):
    """Per grid point: distance ``w*/(scale C rho^(alpha + shift)) - 1`` with the exact ``w*``'s relative
    accuracy and the derived next-order term at ``w0 = C rho^alpha`` (0 where not derived)."""
    out = []
    for r, wv, acc in zip(rho, ws, accuracy):
        w0 = reg.C * r**reg.alpha
        dist = wv / (scale * reg.C * r ** (reg.alpha + shift)) - 1.0
        nxt = reg.wstar_next_order(w0)
        out.append(AsymptoticPoint(r, dist - acc * (1 + dist), dist + acc * (1 + dist), 0.0 if nxt is None else nxt))
    return out


def power_slope_points(
    w, values, *, power: float, next_coef: float, next_q: float, accuracy: float, shift: float = 0.0
) -> list[AsymptoticPoint]:
    """:class:`~lipschitz_icl.decision.AsymptoticPoint` per consecutive pair of ``w``: the local slope of
    ``log values`` minus ``power + shift``, its interval from the relative ``accuracy`` of each value,
    and the derived next-order effect on the slope ``-next_q next_coef w^-next_q`` (``values ~ c w^power
    (1 + next_coef w^-next_q)``), taken at the pair's first point."""
    out = []
    for wa, wb, va, vb in zip(w, w[1:], values, values[1:]):
        span = math.log(wb / wa)
        slope = math.log(vb / va) / span - power - shift
        err = 2 * accuracy / span
        out.append(AsymptoticPoint(wb, slope - err, slope + err, -next_q * next_coef * wa ** (-next_q)))
    return out


def kernel_slope_points(w, values, errors, reg, shift=0.0):
    """Per consecutive pair of ``w``: distance ``slope + beta - shift`` with its interval (relative errors
    of the two values over the span) and the derived next-order term of the secant slope,
    ``k (w_b^-q - w_a^-q) / log(w_b/w_a)`` (0 where ``k`` is not derived)."""
    out = []
    for wa, wb, va, vb, ea, eb in zip(w, w[1:], values, values[1:], errors, errors[1:]):
        span = math.log(wb / wa)
        dist = math.log(vb / va) / span + reg.beta - shift
        err = (ea / va + eb / vb) / span
        nxt = 0.0 if reg.k is None else reg.k * (wb**-reg.q - wa**-reg.q) / span
        out.append(AsymptoticPoint(wb, dist - err, dist + err, nxt))
    return out


def secant_slope_interval(
    x_a: float, x_b: float, a: tuple[float, float], b: tuple[float, float]
) -> tuple[float, float]:
    """The range of the secant slope ``log(v_b/v_a) / log(x_b/x_a)`` over ``v_a`` in ``a = (low, high)`` and
    ``v_b`` in ``b`` (positive values, ``0 < x_a < x_b``): ``(log(b_low/a_high), log(b_high/a_low)) /
    log(x_b/x_a)``."""
    if not (0 < x_a < x_b) or min(a[0], b[0]) <= 0 or a[0] > a[1] or b[0] > b[1]:
        raise ValueError(f"need 0 < x_a < x_b and positive ordered intervals, got {x_a}, {x_b}, {a}, {b}")
    span = math.log(x_b / x_a)
    return math.log(b[0] / a[1]) / span, math.log(b[1] / a[0]) / span


def two_sided_constants(rho, ws, alpha: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """``(c_lo, c_hi)``, each ``(value, low, high)``: the min and the max over the grid of ``w*/rho^alpha``
    (``ws`` results with ``w_star.value``, ``ci_low``, ``ci_high``; ``rho > 0``).  The min (max) of values
    each in its interval ``[lo_i, hi_i]`` lies in ``[min lo_i, min hi_i]`` (``[max lo_i, max hi_i]``), both
    ends reached, so ``c_lo`` is in ``[min_i lo_i/rho_i^alpha, min_i hi_i/rho_i^alpha]`` and ``c_hi`` in
    ``[max_i lo_i/rho_i^alpha, max_i hi_i/rho_i^alpha]``."""
    scale = [r**alpha for r in rho]
    values = [w.w_star.value / s for w, s in zip(ws, scale)]
    lows = [w.ci_low / s for w, s in zip(ws, scale)]
    highs = [w.ci_high / s for w, s in zip(ws, scale)]
    if not values:
        raise ValueError("no grid point")
    c_lo = (float(min(values)), float(min(lows)), float(min(highs)))
    c_hi = (float(max(values)), float(max(lows)), float(max(highs)))
    return c_lo, c_hi
