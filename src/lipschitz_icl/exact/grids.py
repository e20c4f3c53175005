"""The Laplace-transform grids both exact routes integrate on, and their one kernel window loop.

Setting (query rotated to ``q = e_1``; the derivation is in :mod:`lipschitz_icl.exact.quadrature`):
``t_i = x_i . q = cos theta_i`` i.i.d. with the law ``mu(dtheta) = sin^(d-2) theta dtheta / B(1/2, (d-1)/2)``,
``V_i = w (1 - t_i) = 2 w sin^2(theta_i / 2)``, softmax weights ``p_i = e_i / S``, ``e_i = exp(-V_i)``.
With ``lam = exp(s)``, ``u = s - V`` and the kernels ``k1(u) = exp(u - e^u)``, ``k2(u) = exp(2u - e^u)``::

    psi(s)    = E[exp(-lam e)],   A_k[g](s) = E[k_k(s - V) g(t)]
    E[sum_i p_i^2 g(t_i)]                 = n       int ds A_2[g](s) psi(s)^(n-1)
    E[sum_{i != j} p_i p_j g(t_i) g(t_j)] = n (n-1) int ds A_1[g](s)^2 psi(s)^(n-2)

This module holds what both routes (:mod:`~lipschitz_icl.exact.quadrature` for affine and relu,
:mod:`~lipschitz_icl.exact.zonal` for any zonal prior) share:

* the resolution levels (:class:`Level`, :func:`level`, :data:`MAX_LEVEL`);
* the law of ``t`` and ``V`` (:func:`log_mu_density`, :func:`v_of_theta`, :func:`theta_of_v`,
  :func:`v_quantile`, :func:`upper_tail`);
* the grids (:func:`laplace_grid`): ``s`` from ``-log n - 21`` to ``V_q + 4.5`` (``V_q`` the quantile of
  ``min_i V_i`` beyond which ``n^2 (2w + 10) P(V > V_q)^(n-2) < 1e-20``), Gauss-Legendre panels graded where
  few points dominate ``S``; ``theta`` panels from ``V`` panels of width ``h_V`` up to ``V_q + 12.5``, graded
  beyond, never wider than ``max_angle``;
* the kernel window loop (:func:`window_sums`): for a block of ``s`` nodes only ``V`` in
  ``[s - 7, s + window_extent(d)]`` enters the kernel sums (below, ``1 - psi`` takes the whole weight by a
  prefix sum; above, the kernels are below ``e^-45``), so the cost is ``O(N_s x window)``; ``psi^(n-1)`` is
  ``exp((n-1) log1p(-(1 - psi)))`` with ``1 - psi`` integrated directly, so ``n = 1e150`` loses nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from lipschitz_icl import quadrature
from lipschitz_icl.validation import ParameterError

__all__ = [
    "MAX_LEVEL",
    "S_SPLIT",
    "Level",
    "level",
    "subdivide",
    "graded_breaks",
    "log_mu_density",
    "v_of_theta",
    "theta_of_v",
    "one_minus_t",
    "v_quantile",
    "symmetric_beta_quantile",
    "upper_tail",
    "window_extent",
    "LaplaceGrid",
    "laplace_grid",
    "s_chunks",
    "WindowSums",
    "window_sums",
]

TAIL = 1e-20  # target tail mass dropped by the s and V ranges
U_NEG = 21.0  # e^(2u) < e^-42 below s_lo
U_POS = 4.5  # k2(4.5) = exp(9 - e^4.5) ~ e^-81
V_TAIL = 40.0  # e^-40 tail of k1 beyond the fine zone
MAX_THETA = 2e6  # budget: theta nodes
MAX_LEVEL = 4  # the finest resolution level
S_SPLIT = -8.0  # below it k1(s - V) = sum_m (-1)^m e^((m+1)(s-V)) / m!, 5 terms to e^-40 (V >= 0)


@dataclass(frozen=True)
class Level:
    """Resolution of one level: panel widths (``h_v`` in ``V``, ``h_s`` in ``s``), grading, Gauss orders
    (``q_v`` in ``theta``, ``q_s`` in ``s``, ``q_c`` in ``theta_c``, ``q_k`` of the kink rule), ``max_angle``."""

    h_v: float
    q_v: int
    h_s: float
    q_s: int
    grade: float
    q_c: int
    q_k: int
    max_angle: float


def level(k: int) -> Level:
    """Level ``k``: widths shrink by ``1.25^k`` and every Gauss order grows by ``k``."""
    f = 1.25**k
    return Level(
        h_v=2.0 / f, q_v=11 + k, h_s=2.5 / f, q_s=9 + k, grade=0.3 / f, q_c=7 + k, q_k=9 + k, max_angle=np.pi / 6.5 / f
    )


def subdivide(breaks: np.ndarray, max_width: float) -> np.ndarray:
    """Split every panel wider than ``max_width`` into equal parts (each panel's new break points are those of
    ``numpy.linspace(a, b, k + 1)``, bit for bit, computed for all panels at once: a grid of ``10^5`` panels
    costs milliseconds, not seconds)."""
    breaks = np.asarray(breaks, dtype=np.float64)
    a, b = breaks[:-1], breaks[1:]
    k = np.maximum(1, np.ceil((b - a) / max_width - 1e-12)).astype(np.int64)
    panel = np.repeat(np.arange(a.size), k)
    j = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k) + 1  # 1 .. k within each panel
    step = (b - a) / k
    points = j * step[panel] + a[panel]
    last = j == k[panel]
    points[last] = b[panel[last]]  # linspace's endpoint is the break itself
    return np.concatenate([breaks[:1], points])


def graded_breaks(lo: float, hi: float, width: Callable[[float], float]) -> np.ndarray:
    """Break points from ``lo`` to ``hi`` with local panel width ``width(x)``."""
    b = [lo]
    x = lo
    while x < hi:
        x = min(x + width(x), hi)
        if hi - x < 1e-9 * max(1.0, abs(hi)):
            x = hi
        b.append(x)
    return np.array(b)


# --------------------------------------------------------------------------- the law of t and V
def log_mu_density(d: int, theta: np.ndarray) -> np.ndarray:
    """``log(sin^(d-2) theta / B(1/2, (d-1)/2))``, the density of ``mu`` in ``theta``."""
    with np.errstate(divide="ignore"):
        return (d - 2) * np.log(np.sin(theta)) - special.betaln(0.5, 0.5 * (d - 1))


def v_of_theta(w: float, theta: np.ndarray) -> np.ndarray:
    """``V = w (1 - cos theta) = 2 w sin^2(theta/2)``."""
    return 2.0 * w * np.sin(0.5 * theta) ** 2


def theta_of_v(w: float, v: np.ndarray) -> np.ndarray:
    """The inverse of :func:`v_of_theta` on ``[0, 2w]`` (clipped there)."""
    return 2.0 * np.arcsin(np.sqrt(np.clip(v / (2.0 * w), 0.0, 1.0)))


def one_minus_t(theta):
    """``1 - t = 2 sin^2(theta/2)`` (no cancellation at small ``theta``)."""
    return 2.0 * np.sin(0.5 * theta) ** 2


def symmetric_beta_quantile(a: float, F: float) -> float:
    """``x`` in ``[0, 1]`` with ``I_x(a, a) = F``.  SciPy's ``betaincinv`` is used where it answers; it returns NaN
    for some tiny ``F`` (``a = 3``, ``F = 6e-118``: the law of ``V`` at ``d = 7``, ``n = 1e120``), where a
    bisection in ``log x`` on ``betainc`` (monotone, exact to the last bits at any ``x``) takes over: 200
    halvings of ``[1e-300, 1]`` in ``log x``, far below a double's resolution of ``x``."""
    x = float(special.betaincinv(a, a, F))
    if math.isfinite(x) and 0.0 <= x <= 1.0:
        return x
    lo, hi = math.log(1e-300), 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if special.betainc(a, a, math.exp(mid)) < F:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def v_quantile(d: int, w: float, n: int) -> float:
    """``V_q`` with ``n^2 (2w + 10) P(V > V_q)^max(n-2, 1) = TAIL`` (``2w`` if no such point)."""
    if w == 0.0:
        return 0.0
    m = max(n - 2, 1)
    log_tail = (math.log(TAIL) - 2.0 * math.log(n) - math.log(2.0 * w + 10.0)) / m
    F = -math.expm1(log_tail)  # P(V <= V_q)
    a = 0.5 * (d - 1)
    if F >= 1.0:
        return 2.0 * w
    return 2.0 * w * symmetric_beta_quantile(a, F)


def upper_tail(d: int, w: float, v: float) -> float:
    """``P(V > v) = P(t < 1 - v/w) = I_{1 - v/(2w)}(a, a)``, ``a = (d-1)/2``."""
    if w == 0.0 or v >= 2.0 * w:
        return 0.0
    a = 0.5 * (d - 1)
    return float(special.betainc(a, a, 1.0 - v / (2.0 * w)))


def window_extent(d: int) -> float:
    """How far above ``max(s, 0)`` the kernels ``k1(s - V)``, ``k2(s - V)`` matter: ``45 + (d-1)/2 + 12 sqrt(d)``
    (the ``e^-(V-s)`` tails and the tilted mass of ``t``)."""
    return 45.0 + 0.5 * (d - 1) + 12.0 * math.sqrt(d)


# --------------------------------------------------------------------------- the grids
@dataclass(frozen=True)
class LaplaceGrid:
    """The ``s`` rule (``s``, ``ws``), the ``theta`` break points and rule (``theta``, ``wt``: weights include
    ``mu``), the top of ``V`` on the grid (``v_top``), the quantile ``v_q`` and the ``s`` range."""

    s: np.ndarray
    ws: np.ndarray
    theta_breaks: np.ndarray
    theta: np.ndarray
    wt: np.ndarray
    v_top: float
    v_q: float
    s_lo: float
    s_hi: float


def laplace_grid(d: int, w: float, n: int, lev: Level) -> LaplaceGrid:
    """The grids of one resolution level (module doc); a ``theta`` grid past :data:`MAX_THETA` nodes is
    refused (``ParameterError`` on ``w``: the normaliser is dominated by a few points, use Monte Carlo)."""
    v_q = v_quantile(d, w, n)
    s_lo = -math.log(n) - U_NEG
    s_hi = v_q + U_POS
    if not (math.isfinite(v_q) and s_lo < s_hi):  # cannot happen for valid input; refused, never a wrong grid
        raise ParameterError(
            "n", f"a context size the exact grid can be laid out for at d = {d}, w = {w:.4g} (V_q = {v_q!r})", n
        )
    two_w = 2.0 * w

    # few points dominate S for s >> 1: the integrand follows the law of min_i V_i, whose relative
    # width is ~ 2/(d-1) (P(V < v) ~ v^((d-1)/2) near 0), hence the d-dependent grading
    grade = lev.grade * min(1.0, 3.0 / (d - 1))

    def s_width(s):
        return max(lev.h_s, grade * min(max(s - 6.0, 0.0), max(two_w - s, 0.0)))

    s_breaks = graded_breaks(s_lo, s_hi, s_width)
    s_nodes, s_weights = quadrature.panel_rule(s_breaks, lev.q_s)

    v_fine = min(two_w, s_hi + 8.0)
    v_top = min(two_w, max(s_hi, 0.0) + 8.0 + V_TAIL + 0.5 * (d - 1) + 12.0 * math.sqrt(d))
    if w > 0.0 and two_w > lev.h_v:

        def v_width(v):
            if v < v_fine:
                return lev.h_v
            return min(max(lev.h_v, 2.0 * lev.grade * (v - v_fine)), 4.0)

        n_fine = v_fine / lev.h_v
        if n_fine * lev.q_v > MAX_THETA:
            raise ParameterError(
                "w",
                f"small enough for the exact grid at n = {n}, d = {d} (the normaliser is dominated "
                f"by a few points up to V = {v_q:.3g}; use a Monte Carlo method)",
                w,
            )
        v_breaks = graded_breaks(0.0, v_top, v_width)
        theta_breaks = theta_of_v(w, v_breaks)
        theta_breaks[-1] = np.pi if v_top >= two_w else theta_breaks[-1]
    else:
        theta_breaks = np.array([0.0, np.pi])
    theta_breaks = subdivide(np.unique(theta_breaks), lev.max_angle)
    theta, gw = quadrature.panel_rule(theta_breaks, lev.q_v)
    weights = gw * np.exp(log_mu_density(d, theta))
    return LaplaceGrid(
        s=s_nodes,
        ws=s_weights,
        theta_breaks=theta_breaks,
        theta=theta,
        wt=weights,
        v_top=min(v_top, two_w) if w > 0 else 0.0,
        v_q=v_q,
        s_lo=s_lo,
        s_hi=s_hi,
    )


def s_chunks(s: np.ndarray, q: int, span: float = 30.0):
    """Slices of whole ``s`` panels (``q`` nodes each), a chunk spanning at most ``span`` in ``s`` and
    never mixing panels below and above :data:`S_SPLIT` (fewer, larger products; narrow windows)."""
    start = 0
    for end in range(q, s.size + q, q):
        if end >= s.size:
            yield slice(start, s.size)
            return
        nxt = s[end : end + q]
        if nxt.max() - s[start] > span or ((s[end - 1] <= S_SPLIT) != (nxt.max() <= S_SPLIT)):
            yield slice(start, end)
            start = end


# --------------------------------------------------------------------------- the kernel window loop
@dataclass(frozen=True)
class WindowSums:
    """``noise_factor = E[sum_i p_i^2]``, ``diagonal = E[sum_i p_i^2 g(t_i)]`` and the weights ``off_w`` of the
    off-diagonal integral (``n (n-1) psi(s)^(n-2)`` times the ``s`` weights) at every ``s`` node."""

    noise_factor: float
    diagonal: float
    off_w: np.ndarray


def window_sums(
    s: np.ndarray,
    ws: np.ndarray,
    theta: np.ndarray,
    wt: np.ndarray,
    g2: np.ndarray,
    *,
    d: int,
    w: float,
    n: int,
    v_top: float,
    q_s: int,
    each_chunk: Callable[[slice, slice, np.ndarray, np.ndarray], None],
) -> WindowSums:
    """The kernel sums over ``theta`` (rule ``theta``, weights ``wt``), chunk by chunk of ``s`` nodes (module
    doc): ``1 - psi``, ``psi``, ``A_2[1]`` and ``A_2[g]`` (``g2 = wt g`` on the nodes), then ``psi^(n-1)`` and
    ``psi^(n-2)`` in log space.  ``each_chunk(sl, win, sb, k1)`` is called once per chunk (``sl`` its ``s``
    slice, ``sb = s[sl]``, ``win`` the ``theta`` window, ``k1 = k1(sb - V[win])``) for a route's own
    off-diagonal sums."""
    V = v_of_theta(w, theta)
    prefix = np.concatenate([[0.0], np.cumsum(wt)])
    extent = window_extent(d)
    tail = upper_tail(d, w, v_top)
    N = s.size
    one_minus_psi, psi_direct = np.empty(N), np.empty(N)
    a2_noise, a2_diag = np.empty(N), np.empty(N)
    for sl in s_chunks(s, q_s):
        sb = s[sl]
        lo = int(np.searchsorted(V, sb.min() - 7.0, side="left"))
        hi = int(np.searchsorted(V, max(sb.max(), 0.0) + extent, side="right"))
        u = sb[:, None] - V[None, lo:hi]
        e = np.exp(np.minimum(u, 50.0))
        k1 = np.exp(u - e)
        k2 = k1 * e  # exp(2u - e^u); k1 = 0 beyond u = 6
        win = slice(lo, hi)
        one_minus_psi[sl] = prefix[lo] + (-np.expm1(-e)) @ wt[win]
        psi_direct[sl] = np.exp(-e) @ wt[win] + (prefix[-1] - prefix[hi]) + tail
        a2_noise[sl] = k2 @ wt[win]
        a2_diag[sl] = k2 @ g2[win]
        each_chunk(sl, win, sb, k1)

    with np.errstate(divide="ignore"):
        log_psi = np.where(
            one_minus_psi < 0.5, np.log1p(-np.minimum(one_minus_psi, 0.5)), np.log(np.maximum(psi_direct, 0.0))
        )

    def power(k):
        if k == 0:
            return np.ones_like(log_psi)
        return np.exp(k * log_psi)

    diag_w = ws * n * power(n - 1)
    off_w = ws * (float(n) * (n - 1)) * power(n - 2) if n >= 2 else np.zeros_like(ws)
    return WindowSums(float(diag_w @ a2_noise), float(diag_w @ a2_diag), off_w)
