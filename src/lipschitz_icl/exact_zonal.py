"""Exact ICL loss of ``M = w I`` for any zonal task prior (kernel ``K(x.y)``), any ``n``.

Setting and notation as in :mod:`lipschitz_icl.exact` (query ``q = e_1``, ``t_i = x_i.q``,
``V_i = w (1 - t_i)``, the Laplace variable ``s = log lam``, kernels ``k1(u) = exp(u - e^u)``,
``k2(u) = exp(2u - e^u)``, ``psi(s) = E[exp(-e^(s - V))]``, ``A_k[g](s) = E[k_k(s - V) g(t)]``).

Bias.  With ``sum_i p_i = 1`` and ``D(t) = K(1) - K(t)``,

    E_f[(sum_i p_i f(x_i) - f(q))^2] = sum_{i,j} p_i p_j [K(x_i.x_j) - K(t_i) - K(t_j) + K(1)],

diagonal ``2 D(t_i)``.  Off the diagonal, given ``t_i, t_j`` the addition theorem (Funk-Hecke) gives
``E[K(x_i.x_j) | t_i, t_j] = sum_l a_l P_l(t_i) P_l(t_j)`` (``K = sum_l a_l P_l``, ``P_l(1) = 1``), so
the bracket averages to ``sum_l a_l (1 - P_l(t_i)) (1 - P_l(t_j))`` and

    bias = n int ds A_2[2D](s) psi^(n-1) + sum_{l>=1} a_l n(n-1) int ds A_1[1 - P_l](s)^2 psi^(n-2).

Truncation rule.  ``A_1[P_l](s)`` is the Gegenbauer coefficient of a weight smooth on the window's
scale, ``1 - t ~ (|s| + 1)/w``: it falls like ``exp(-l^2 / (2 w))`` (``s <~ 0``) and
``exp(-pi l / (2 sqrt(2 s w)))`` (``s > 0``).  Terms ``l <= Lam`` are summed with
``Lam = ceil(c_k sqrt(w (s_eff + 2))) + 8``, ``c_k = 4 + k`` at resolution level ``k``, ``s_eff`` the
largest ``s`` where the off-diagonal integrand is above ``1e-12`` of its total (at ``s <~ 0`` the first
dropped term is then below ``exp(-8) a_Lam``, and the level-to-level difference and the measured
deviation of the last terms below bound what is left; against the relu quadrature of
:mod:`lipschitz_icl.exact` the series agrees to ``1e-9`` relative, tests/test_zonal.py); beyond ``Lam``,
``A_1[1 - P_l] = A_1[1]`` to that accuracy, so the tail is ``T_Lam B_inf`` with
``T_Lam = K(1) - sum_{l <= Lam} a_l`` and ``B_inf = n(n-1) int ds A_1[1]^2 psi^(n-2) = E[sum_{i!=j} p_i p_j]``.
Tail bound (reported): ``T_Lam max_{Lam - 16 < l <= Lam} |c_l|``, ``c_l = n(n-1) int ds (A_1[1 - P_l]^2 -
A_1[1]^2) psi^(n-2)`` (the measured deviation of the last terms from the tail form, which bounds it
for the terms beyond, ``|c_l|`` falling in ``l``), plus the rounding of the coefficients,
``1e-15 K(1) B_inf``.  The sum ends earlier, at the last ``l0 <= Lam`` whose computed ``a_l`` is above
the quadrature's rounding level ``r_l = 4e-16 K(1) (l + 1) sqrt(N(d, l))`` (polynomial and fast-decaying
kernels: affine, cosine; rough kernels at large ``l``); ``T`` is then ``K(1) - sum_{l <= l0} a_l`` and the
terms ``l0 < l <= Lam`` add ``sum r_l |c_l|`` to the bound, except when the first 64 coefficients
already fall below ``r_l`` before ``l = 48``: the kernel's coefficients then fall faster than any power
(analytic kernels: affine, cosine) and the sum simply ends at ``l0`` (no tail: ``K(1) - sum a_l`` is
then rounding alone).  For rough kernels (``a_l ~ l^(-1 - 2 gamma)``) the rounding level is reached at a
finite ``l0`` (relu, ``d = 3``: ``l0 ~ 500``) and the bound grows with ``w`` once ``Lam > l0``; the
resolution levels then do not converge and ``info['converged']`` is false (measured: relu ``d = 3``
to ``w = 1e4``, the exponential kernel to ``w = 1e5``, within ``1e-6``).

Mixtures of the built-in classes are summed class by class (the bias is linear in ``K``): affine and
relu by :mod:`lipschitz_icl.exact`, cosine by the series.

Grids, cost and accuracy: those of :mod:`lipschitz_icl.exact` (``s`` and ``theta`` rules, resolution
levels, ``abs_error`` the difference between the last two levels), plus ``O(N_s N_theta Lam)`` for the
series.  A series longer than :data:`MAX_DEGREE` is refused (``ParameterError`` on ``w``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import exact as _exact
from .estimate import Estimate, LossEstimate
from .validation import ParameterError, check_int, check_real
from .zonal import ZonalKernel, builtin_kernel, gegenbauer_blocks, rounding_floor

__all__ = ["MAX_DEGREE", "kernel_of", "zonal_parts", "zonal_loss"]

MAX_DEGREE = 20000
_BLOCK = 128
_C0 = 4.0           # degree rule: Lam = (_C0 + level) sqrt(w (s_eff + 2)) + 8
_S_EFF = 1e-12      # s_eff: the largest s where the off-diagonal integrand exceeds _S_EFF of its total


def kernel_of(task_class) -> ZonalKernel:
    """The kernel of a task class: its ``kernel`` attribute (zonal classes) or the built-in kernel of a
    rotation-invariant :class:`~lipschitz_icl.tasks.TaskClass` (affine, relu, cosine)."""
    kernel = getattr(task_class, "kernel", None)
    if kernel is not None:
        return kernel
    if not task_class.rotation_invariant:
        raise ParameterError("task", "a rotation-invariant class for the exact zonal method", task_class.name)
    return builtin_kernel(task_class.name, task_class.d, task_class.L, task_class.frequency)


@dataclass
class ZonalParts:
    """One resolution level: ``E[sum p_i^2]``, the bias, its tail bound and the series length."""

    noise_factor: float
    bias: float
    tail_bound: float
    degree: int
    info: dict


def _coefficients(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """``a_0 .. a_degree``, cached on the kernel object (computed to the next power of two)."""
    cache = _COEF_CACHE.get(id(kernel))
    if cache is None or cache[0] is not kernel or cache[1].size <= degree:
        size = 1 << max(6, int(math.ceil(math.log2(degree + 1))))
        cache = (kernel, kernel.coefficients(size))
        _COEF_CACHE[id(kernel)] = cache
    return cache[1][:degree + 1]


_COEF_CACHE: dict = {}


def zonal_parts(kernel: ZonalKernel, w: float, n: int, level: int = 0) -> ZonalParts:
    """``E[sum_i p_i^2]`` and the bias of ``kernel`` at ``M = w I`` at resolution ``level`` (module doc)."""
    d = kernel.d
    lev = _exact._level(level)
    grid = _exact._grids(d, w, n, lev)
    s, ws, theta, wt = grid["s"], grid["ws"], grid["theta"], grid["wt"]
    V = _exact._v_of_theta(w, theta)
    gap = kernel.gap_theta(theta)
    if not np.all(np.isfinite(gap)):
        raise ParameterError("kernel", "finite on [-1, 1]", kernel.name)
    g2 = wt * 2.0 * gap
    prefix = np.concatenate([[0.0], np.cumsum(wt)])
    upper_extra = 45.0 + 0.5 * (d - 1) + 12.0 * math.sqrt(d)
    upper_tail = _exact._upper_tail(d, w, grid["v_top"])

    N = s.size
    one_minus_psi, psi_direct = np.empty(N), np.empty(N)
    a2_noise, a2_diag, a1_one = np.empty(N), np.empty(N), np.empty(N)
    chunks = []
    for sl in _exact._s_chunks(s, lev.q_s):
        sb = s[sl]
        lo = int(np.searchsorted(V, sb.min() - 7.0, side="left"))
        hi = int(np.searchsorted(V, max(sb.max(), 0.0) + upper_extra, side="right"))
        u = sb[:, None] - V[None, lo:hi]
        e = np.exp(np.minimum(u, 50.0))
        k1 = np.exp(u - e)
        k2 = k1 * e
        win = slice(lo, hi)
        one_minus_psi[sl] = prefix[lo] + (-np.expm1(-e)) @ wt[win]
        psi_direct[sl] = np.exp(-e) @ wt[win] + (prefix[-1] - prefix[hi]) + upper_tail
        a2_noise[sl] = k2 @ wt[win]
        a2_diag[sl] = k2 @ g2[win]
        a1_one[sl] = k1 @ wt[win]
        chunks.append((sl, win, k1 * wt[None, win]))

    with np.errstate(divide="ignore"):
        log_psi = np.where(one_minus_psi < 0.5, np.log1p(-np.minimum(one_minus_psi, 0.5)),
                           np.log(np.maximum(psi_direct, 0.0)))
    diag_w = ws * n * np.exp((n - 1) * log_psi)
    off_w = ws * (float(n) * (n - 1)) * np.exp((n - 2) * log_psi) if n >= 2 else np.zeros_like(ws)
    noise_factor = float(diag_w @ a2_noise)
    diag = float(diag_w @ a2_diag)
    dens = off_w * a1_one**2
    b_inf = float(dens.sum())

    degree, tail, tail_bound, second = 0, 0.0, 0.0, 0.0
    if b_inf > 0.0:
        s_eff = float(s[np.flatnonzero(dens > _S_EFF * b_inf).max()])
        degree = int(math.ceil((_C0 + level) * math.sqrt(w * (max(s_eff, 0.0) + 2.0)))) + 8
        if degree > MAX_DEGREE:
            raise ParameterError("w", f"small enough for the exact zonal series at n = {n}, d = {d} "
                                 f"(it needs {degree} > {MAX_DEGREE} Gegenbauer terms)", w)
        probe = _coefficients(kernel, 64)
        above = np.flatnonzero(np.abs(probe) > rounding_floor(kernel, 64))
        fast = not above.size or above.max() < 48     # below rounding within the first 48: analytic
        if fast:
            degree = min(degree, 64)
            a = probe[:degree + 1]
        else:
            a = _coefficients(kernel, degree)
        # coefficients below the quadrature's rounding level end the sum: the terms beyond enter the
        # tail T (their per-term deviation from B_inf is bounded below)
        floor = rounding_floor(kernel, degree)
        above = np.flatnonzero(np.abs(a) > floor)
        band = int(above.max()) if above.size else 0
        tail = max(kernel.k1 - float(np.sum(a[:band + 1])), 0.0)
        rounding = 1e-15 * kernel.k1 * b_inf
        if fast:                   # the true a_l beyond band are far below r_l
            degree, a, floor = band, a[:band + 1], floor[:band + 1]
            tail, rounding = 0.0, 0.0
        per_l = np.zeros(degree + 1)
        dev = np.zeros(degree + 1)
        t = np.cos(theta)
        for l0, P in gegenbauer_blocks(d, t, degree, _BLOCK):
            sq = np.zeros((N, P.shape[0]))
            for sl, win, kw in chunks:
                a1p = kw @ P[:, win].T                       # A_1[P_l](s)
                gl = a1_one[sl, None] - a1p                  # A_1[1 - P_l](s)
                sq[sl] = gl * gl
            per_l[l0:l0 + P.shape[0]] = off_w @ sq
            dev[l0:l0 + P.shape[0]] = per_l[l0:l0 + P.shape[0]] - b_inf
        second = float(a[1:band + 1] @ per_l[1:band + 1]) + tail * b_inf
        below = float(floor[band + 1:] @ np.abs(dev[band + 1:]))
        tail_bound = rounding + below + (tail * float(np.max(np.abs(dev[max(1, degree - 15):]))) if degree else 0.0)
    bias = diag + second
    info = dict(n_s=int(N), n_theta=int(theta.size), degree=degree, tail=tail, b_inf=b_inf,
                tail_bound=tail_bound, v_quantile=grid["v_q"])
    return ZonalParts(noise_factor, bias, tail_bound, degree, info)


def _mixture_loss(kernel: ZonalKernel, problem, w, rtol: float) -> LossEstimate:
    """A mixture's loss: the bias is linear in ``K``, so it is ``sum_c w_c bias_c``, each class by its own
    exact method (affine and relu: :mod:`lipschitz_icl.exact`; cosine: the zonal series); the noise part
    does not depend on the prior.  Errors add (weighted)."""
    from .exact import exact_loss
    from .problem import make_problem

    parts = []
    for name, weight, L, frequency in kernel.parts:
        kwargs = {"frequency": frequency} if name == "cosine" else {}
        sub = make_problem(name, kernel.d, problem.n, L, problem.sigma, **kwargs)
        parts.append((weight, exact_loss(sub, w, rtol=rtol)))
    noise = parts[0][1].noise
    bias_value = sum(wt * r.bias.value for wt, r in parts)
    bias = Estimate(bias_value, 0.0, 0, sum(wt * r.bias.abs_error for wt, r in parts))
    loss = Estimate(bias_value + noise.value, 0.0, 0, bias.abs_error + noise.abs_error)
    info = dict(kernel=kernel.name, converged=all(r.info.get("converged", False) for _, r in parts),
                level=max(r.info.get("level", 0) for _, r in parts), rtol=rtol,
                parts=[(name, wt, r.info.get("level")) for (name, wt, _, _), (_, r) in zip(kernel.parts, parts)])
    return LossEstimate(loss, bias, noise, method="exact", info=info)


def zonal_loss(problem, w, *, rtol: float = 1e-6) -> LossEstimate:
    """Exact ICL loss of ``M = w I`` for the zonal class of ``problem`` (:func:`kernel_of`), any ``n``.

    ``LossEstimate(loss, bias, noise, method="exact")`` with ``noise = sigma^2 E[sum p_i^2]`` and the
    bias of the module doc; ``abs_error`` is the difference between the last two resolution levels plus
    the series' tail bound.  Levels rise until both differences are below ``rtol`` of their values.
    """
    kernel = kernel_of(problem.task_class)
    if kernel.parts:
        return _mixture_loss(kernel, problem, w, rtol)
    w = check_real("w", w, minimum=0.0)
    rtol = check_real("rtol", rtol, minimum=1e-13, maximum=0.1)
    n = check_int("n", problem.n, minimum=1)
    sigma = problem.sigma
    _exact._grids(kernel.d, w, n, _exact._level(1))       # refuse up front if the grid is out of budget
    prev = zonal_parts(kernel, w, n, 0)
    history = [(prev.noise_factor, prev.bias)]
    converged = False
    for k in range(1, _exact._MAX_LEVEL + 1):
        cur = zonal_parts(kernel, w, n, k)
        err_noise = abs(cur.noise_factor - prev.noise_factor)
        err_bias = abs(cur.bias - prev.bias) + cur.tail_bound
        history.append((cur.noise_factor, cur.bias))
        prev = cur
        if err_noise <= rtol * abs(cur.noise_factor) and err_bias <= rtol * abs(cur.bias):
            converged = True
            break
    if not (math.isfinite(cur.bias) and math.isfinite(cur.noise_factor)):
        raise ParameterError("w", f"a window at which the exact zonal loss is finite (n = {n}, kernel "
                             f"{kernel.name!r})", w)
    noise_value = sigma * sigma * cur.noise_factor
    noise = Estimate(noise_value, 0.0, 0, sigma * sigma * err_noise)
    bias = Estimate(cur.bias, 0.0, 0, err_bias)
    loss = Estimate(noise_value + cur.bias, 0.0, 0, noise.abs_error + bias.abs_error)
    info = dict(cur.info, level=k, converged=converged, rtol=rtol, kernel=kernel.name,
                sum_p2=cur.noise_factor, sum_p2_abs_error=err_noise, history=history)
    return LossEstimate(loss, bias, noise, method="exact", info=info)
