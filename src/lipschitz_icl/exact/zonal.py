"""Exact ICL loss of ``M = w I`` for any zonal task prior (kernel ``K(x.y)``), any ``n``.

Setting and notation as in :mod:`lipschitz_icl.exact.quadrature` (query ``q = e_1``, ``t_i = x_i.q``,
``V_i = w (1 - t_i)``, the Laplace variable ``s = log lam``, kernels ``k1(u) = exp(u - e^u)``,
``k2(u) = exp(2u - e^u)``, ``psi(s) = E[exp(-e^(s - V))]``, ``A_k[g](s) = E[k_k(s - V) g(t)]``).

Bias.  With ``sum_i p_i = 1`` and ``D(t) = K(1) - K(t)``,

    E_f[(sum_i p_i f(x_i) - f(q))^2] = sum_{i,j} p_i p_j [K(x_i.x_j) - K(t_i) - K(t_j) + K(1)],

diagonal ``2 D(t_i)``.  Off the diagonal, given ``t_i, t_j`` the addition theorem (Funk-Hecke) gives
``E[K(x_i.x_j) | t_i, t_j] = sum_l a_l P_l(t_i) P_l(t_j)`` (``K = sum_l a_l P_l``, ``P_l(1) = 1``), so
the bracket averages to ``sum_l a_l (1 - P_l(t_i)) (1 - P_l(t_j))`` and

    bias = n int ds A_2[2D](s) psi^(n-1) + sum_{l>=1} a_l n(n-1) int ds A_1[1 - P_l](s)^2 psi^(n-2).

Truncation.  ``B_inf = n(n-1) int ds A_1[1]^2 psi^(n-2) = E[sum_{i!=j} p_i p_j]`` and
``c_l = n(n-1) int ds (A_1[1 - P_l]^2 - A_1[1]^2) psi^(n-2)``; the terms ``l > m`` are
``T_m B_inf + sum_{l>m} a_l c_l`` with ``T_m = sum_{l>m} a_l = E[D] - sum_{1<=l<=m} a_l`` (computed from
``D`` alone: no ``K(1)``, so no cancellation for a near-constant kernel or a cosine of small frequency).

* Analytic kernels: when the computed ``a_1 .. a_64`` fall below the quadrature's rounding level
  ``r_l = 4e-16 max|D| (l + 1) sqrt(N(d, l))`` before ``l = 48`` (affine, cosine up to ``k ~ 30``), the
  series is summed whole, to its last coefficient above ``r_l``, and has no tail (the true ``a_l``
  beyond are far below ``r_l``).  (Before issue 22 the sum also stopped at the degree rule below, 9
  terms for ``w = 0.02``, with no tail: cosine ``k = 12`` came out 45% low at small ``w``.)
* Other kernels: terms ``l <= m`` are computed, ``m = ceil(c_k sqrt(w (s_eff + 2))) + 8`` (``c_k = 4 + k``
  at resolution level ``k``, ``s_eff`` the largest ``s`` where the off-diagonal integrand is above
  ``1e-12`` of its total; ``A_1[P_l](s)``, the Gegenbauer coefficient of a weight smooth on the window's
  scale ``1 - t ~ (|s| + 1)/w``, falls like ``exp(-l^2/(2w))``), and summed with their ``a_l`` up to
  the last ``l0 <= m`` above ``r_l``; the rest is ``T_l0 B_inf`` and the tail bound (added to
  ``abs_error``) is ``1e-15 max|D| B_inf + sum_{l0<l<=m} r_l |c_l| + P_m``.  ``P_m`` bounds
  ``|sum_{l>m} a_l c_l|`` by Parseval: ``sum_{l>m} N(d, l) A_1[P_l]^2 = R_m = E[k1(s - V)^2] - sum_{l<=m}
  N(d, l) A_1[P_l]^2`` (computed; never below its rounding level ``2e-14 (E[k1^2] + A_1[1] sum N
  |A_1[P_l]|)``), so ``|A_1[P_l](s)| <= eps(s) = sqrt(R_m(s)/N(d, m + 1))``, ``|c_l| <= n(n-1) int ds
  (eps^2 + 2 A_1[1] eps) psi^(n-2)`` for every ``l > m``, and ``P_m`` is that times ``T_l0 + sum_{l0<l<=m}
  r_l`` (``a_l >= 0``: a covariance).  (Measured: exponential kernel, ``w = 1e5``: ``P_m`` is about 50
  times the change of the bias when ``m`` is quadrupled.)  At levels ``>= 1`` (level 0 enters only
  through its difference from level 1) a ``P_m`` above ``rtol/2`` of the bias doubles ``m`` once; a
  tail bound still above ``rtol/4`` of it leaves the level unconverged (more levels follow, the last
  one unconverged is reported):
  :func:`zonal_loss` then reports ``converged = False`` with its (wide) interval and the CLI exits 3,
  never a tight wrong interval.  For rough kernels (``a_l ~ l^(-1 - 2 gamma)``) ``l0`` is finite (relu,
  ``d = 3``: ``l0 ~ 660``) and ``sum r_l |c_l|`` grows with ``w``: measured converged to ``1e-6``, relu
  ``d = 3`` to ``w = 1e4``, the exponential kernel to ``w = 1e6``; relu at ``w = 1e5`` is inconclusive
  (its interval, 3% wide, holds the value of :mod:`lipschitz_icl.exact.quadrature`).

``P_l`` is resolved on the ``theta`` grid: where the kernels live (``V <= max(s_hi, 0) + 45 + (d-1)/2 +
12 sqrt(d)``) its panels are at most ``3/m`` wide.

Mixtures of the registered classes are summed class by class (the bias is linear in ``K``): a class of
a quadrature form (affine, relu) by :mod:`lipschitz_icl.exact.quadrature`, the others (cosine) by the series.

Grids, cost and accuracy: those of :mod:`lipschitz_icl.exact.quadrature` (``s`` and ``theta`` rules, resolution
levels, ``abs_error`` the difference between the last two levels plus the tail bound), plus
``O(N_s N_theta m)`` for the series.  A series longer than :data:`MAX_DEGREE` is refused
(``ParameterError`` on ``w``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lipschitz_icl import quadrature
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.exact import grids
from lipschitz_icl.exact.quadrature import quadrature_loss
from lipschitz_icl.problem import make_problem
from lipschitz_icl.tasks.kernel import (
    ZonalKernel,
    gap_coefficients,
    gegenbauer_blocks,
    harmonic_dimension,
    rounding_floor,
)
from lipschitz_icl.tasks.registry import parameters_of
from lipschitz_icl.validation import ParameterError, check_real

__all__ = ["MAX_DEGREE", "kernel_of", "zonal_parts", "zonal_loss"]

MAX_DEGREE = 20000
_BLOCK = 128
_C0 = 4.0  # degree rule: Lam = (_C0 + level) sqrt(w (s_eff + 2)) + 8
_S_EFF = 1e-12  # s_eff: the largest s where the off-diagonal integrand exceeds _S_EFF of its total
_THETA_WIDTH = 3.0  # theta panels (of >= 11 Gauss nodes) at most _THETA_WIDTH / degree wide where kernels live
_PARSEVAL_ROUNDING = 2e-14  # rounding of A_1[P_l] relative to A_1[1], and of E[k1^2]
_MAX_DOUBLINGS = 1  # a series the tail bound refuses is doubled at most once (then inconclusive)


def kernel_of(task_class) -> ZonalKernel:
    """The kernel of a rotation-invariant task class (:meth:`~lipschitz_icl.tasks.family.TaskFamily.covariance_kernel`;
    a prior given by its kernel: that kernel)."""
    if not task_class.rotation_invariant:
        raise ParameterError("task", "a rotation-invariant class for the exact zonal method", task_class.name)
    return task_class.covariance_kernel()


@dataclass
class ZonalParts:
    """One resolution level: ``E[sum p_i^2]``, the bias, its tail bound and the series length."""

    noise_factor: float
    bias: float
    tail_bound: float
    degree: int
    info: dict


def _gap_coefficients(kernel: ZonalKernel, degree: int) -> np.ndarray:
    """``E[D], a_1 .. a_degree`` (:func:`lipschitz_icl.tasks.zonal.gap_coefficients`), cached for the last
    :data:`_COEF_CACHE_SIZE` kernels (computed to the next power of two)."""
    cache = _COEF_CACHE.get(id(kernel))
    if cache is None or cache[0] is not kernel or cache[1].size <= degree:
        size = 1 << max(6, int(math.ceil(math.log2(degree + 1))))
        cache = (kernel, gap_coefficients(kernel, size))
        _COEF_CACHE.pop(id(kernel), None)
        while len(_COEF_CACHE) >= _COEF_CACHE_SIZE:
            _COEF_CACHE.pop(next(iter(_COEF_CACHE)))
        _COEF_CACHE[id(kernel)] = cache
    return cache[1][: degree + 1]


_COEF_CACHE: dict = {}
_COEF_CACHE_SIZE = 32


def _theta_rule(d: int, w: float, lev, grid: grids.LaplaceGrid, degree: int, theta_top: float):
    """The ``theta`` rule of :func:`lipschitz_icl.exact.grids.laplace_grid`, its panels below ``theta_top`` split to
    width at most ``_THETA_WIDTH / degree`` (so that ``P_degree`` is resolved where the kernels live);
    returns ``(theta, weights)``, the weights including the law ``mu``."""
    breaks = grid.theta_breaks
    if degree > 0:
        low = breaks[breaks <= theta_top]
        fine = grids.subdivide(
            np.append(low, breaks[low.size]) if low.size < breaks.size else low, _THETA_WIDTH / degree
        )
        breaks = np.unique(np.concatenate([fine, breaks[low.size :]]))
    theta, gw = quadrature.panel_rule(breaks, lev.q_v)
    return theta, gw * np.exp(grids.log_mu_density(d, theta))


def _window_sums(kernel: ZonalKernel, w: float, n: int, *, lev, grid: grids.LaplaceGrid, theta, wt):
    """The sums over ``theta`` for every ``s`` node that do not involve ``P_l``: ``E[sum p_i^2]``, the
    diagonal bias, ``A_1[1]``, ``A_1[1]^2`` weighted (``B_inf``), ``E[k1(s - V)^2]`` (Parseval), the
    weights ``off_w`` of the off-diagonal integral and the per-chunk kernels ``k1 * weight``.

    ``kernel`` the class's zonal kernel, ``w`` the window, ``n`` the context size, ``lev`` the resolution
    (:class:`~lipschitz_icl.exact.grids.Level`; its Gauss order ``q_s`` sets the ``s`` chunks), ``grid`` the
    Laplace grid of ``s`` nodes and weights, ``theta`` and ``wt`` the angle nodes and their weights (the
    law ``mu`` included: :func:`_theta_rule`)."""
    gap = kernel.gap_theta(theta)
    if not np.all(np.isfinite(gap)):
        raise ParameterError("kernel", "finite on [-1, 1]", kernel.name)
    N = grid.s.size
    a1_one, k1_sq = np.empty(N), np.empty(N)
    chunks = []

    def off_diagonal(sl, win, sb, k1):
        kw = k1 * wt[None, win]
        a1_one[sl] = kw.sum(axis=1)
        k1_sq[sl] = (kw * k1).sum(axis=1)
        chunks.append((sl, win, kw))

    sums = grids.window_sums(
        grid.s,
        grid.ws,
        theta,
        wt,
        wt * 2.0 * gap,
        d=kernel.d,
        w=w,
        n=n,
        v_top=grid.v_top,
        q_s=lev.q_s,
        each_chunk=off_diagonal,
    )
    off_w = sums.off_w
    return {
        "noise_factor": sums.noise_factor,
        "diag": sums.diagonal,
        "off_w": off_w,
        "a1_one": a1_one,
        "k1_sq": k1_sq,
        "chunks": chunks,
        "b_inf": float(off_w @ a1_one**2),
        "n_theta": theta.size,
        "theta": theta,
        "window_top": max(win.stop for _, win, _ in chunks) if chunks else 0,
    }


def _series(kernel: ZonalKernel, sums: dict, degree: int):
    """``per_l[l] = n(n-1) int ds A_1[1 - P_l]^2 psi^(n-2)`` for ``l = 0 .. degree`` and the Parseval
    remainder ``R(s) = E[k1(s - V)^2] - sum_(l <= degree) N(d, l) A_1[P_l](s)^2`` (never below its
    rounding level)."""
    d = kernel.d
    off_w, a1_one, chunks = sums["off_w"], sums["a1_one"], sums["chunks"]
    top = sums["window_top"]
    t = np.cos(sums["theta"][:top])
    N = off_w.size
    per_l = np.zeros(degree + 1)
    captured, rounding = np.zeros(N), np.zeros(N)
    for l0, P in gegenbauer_blocks(d, t, degree, _BLOCK):
        size = P.shape[0]
        dims = harmonic_dimension(d, np.arange(l0, l0 + size))
        sq = np.zeros((N, size))
        for sl, win, kw in chunks:
            a1p = kw @ P[:, win].T  # A_1[P_l](s)
            gl = a1_one[sl, None] - a1p  # A_1[1 - P_l](s)
            sq[sl] = gl * gl
            captured[sl] += (a1p * a1p) @ dims
            rounding[sl] += np.abs(a1p) @ dims
        per_l[l0 : l0 + size] = off_w @ sq
    # |A_1[P_l]| carries a rounding error below 1e-15 A_1[1] (|P_l| <= 1); so does R, summed over l
    remainder = np.maximum(sums["k1_sq"] - captured, 0.0) + _PARSEVAL_ROUNDING * (a1_one * rounding + sums["k1_sq"])
    return per_l, remainder


def zonal_parts(kernel: ZonalKernel, w: float, n: int, level: int = 0, rtol: float = 1e-6) -> ZonalParts:
    """``E[sum_i p_i^2]`` and the bias of ``kernel`` at ``M = w I`` at resolution ``level`` (module doc);
    the series grows (doubling its length, to :data:`MAX_DEGREE`) until its tail bound is below
    ``rtol / 4`` of the bias."""
    d = kernel.d
    lev = grids.level(level)
    grid = grids.laplace_grid(d, w, n, lev)
    v_window = min(2.0 * w, max(grid.s_hi, 0.0) + grids.window_extent(d)) if w > 0 else 0.0
    theta_top = float(grids.theta_of_v(w, np.array([v_window]))[0]) if w > 0 else np.pi
    info = {"n_s": int(grid.s.size), "v_quantile": grid.v_q}
    if n < 2:  # no pairs: the bias is the diagonal alone
        theta, wt = _theta_rule(d, w, lev, grid, 0, theta_top)
        sums = _window_sums(kernel, w, n, lev=lev, grid=grid, theta=theta, wt=wt)
        info.update(n_theta=int(theta.size), degree=0, tail=0.0, tail_bound=0.0, b_inf=0.0)
        return ZonalParts(sums["noise_factor"], sums["diag"], 0.0, 0, info)
    probe = _gap_coefficients(kernel, 64)
    floor64 = rounding_floor(kernel, 64)
    above = np.flatnonzero(np.abs(probe[1:]) > floor64[1:]) + 1
    # every coefficient below the rounding level from l = 48 on: the kernel is analytic (affine, cosine
    # of moderate frequency, ...) and the series is summed to its last coefficient above rounding, whole
    fast = not above.size or above.max() < 48
    if fast:
        degree = int(above.max()) if above.size else 0
    else:  # the degree rule of the module doc
        theta, wt = _theta_rule(d, w, lev, grid, 0, theta_top)
        sums = _window_sums(kernel, w, n, lev=lev, grid=grid, theta=theta, wt=wt)
        dens = sums["off_w"] * sums["a1_one"] ** 2
        s_eff = float(grid.s[np.flatnonzero(dens > _S_EFF * sums["b_inf"]).max()])
        degree = int(math.ceil((_C0 + level) * math.sqrt(w * (max(s_eff, 0.0) + 2.0)))) + 8
    previous, doublings = math.inf, 0
    while True:
        if degree > MAX_DEGREE:
            raise ParameterError(
                "w",
                f"small enough for the exact zonal series at n = {n}, d = {d} "
                f"(it needs {degree} > {MAX_DEGREE} Gegenbauer terms)",
                w,
            )
        theta, wt = _theta_rule(d, w, lev, grid, degree, theta_top)
        sums = _window_sums(kernel, w, n, lev=lev, grid=grid, theta=theta, wt=wt)
        parts = _sum_series(kernel, sums, degree, fast)
        bound = parts.info["parseval_part"]
        # done: the tail is certified below rtol/4 of the bias; or what is missing is not the Parseval
        # part (rounding: a longer series would not lower it), or a longer series did not lower it, or
        # the series is at _MAX_DOUBLINGS doublings of the rule or MAX_DEGREE (then the level is not
        # converged: inconclusive)
        # (level 0 only enters through its difference from level 1: its series is never doubled)
        if (
            fast
            or level == 0
            or parts.tail_bound <= 0.25 * rtol * abs(parts.bias)
            or bound <= 0.5 * rtol * abs(parts.bias)
            or bound > 0.5 * previous
            or doublings == _MAX_DOUBLINGS
            or degree == MAX_DEGREE
        ):
            break
        previous, doublings = bound, doublings + 1
        degree = min(2 * degree, MAX_DEGREE)
    parts.info.update(info, n_theta=int(theta.size), b_inf=sums["b_inf"])
    return parts


def _sum_series(kernel: ZonalKernel, sums: dict, degree: int, fast: bool) -> ZonalParts:
    """The bias ``diag + sum_(l <= band) a_l per_l + T B_inf`` and its tail bound (module doc)."""
    b_inf = sums["b_inf"]
    per_l, remainder = _series(kernel, sums, degree)
    b = _gap_coefficients(kernel, degree)  # b_0 = E[D], b_l = a_l (l >= 1)
    floor = rounding_floor(kernel, degree)
    above = np.flatnonzero(np.abs(b[1:]) > floor[1:]) + 1
    band = int(above.max()) if above.size else 0
    dev = np.abs(per_l - b_inf)
    if fast:  # the true a_l beyond band are far below r_l: the series ends there
        tail, tail_bound, parseval = 0.0, 0.0, 0.0
    else:
        # T = sum_(l > band) a_l = E[D] - sum_(1 <= l <= band) a_l (no K(1): no cancellation)
        tail = max(float(b[0] - np.sum(b[1 : band + 1])), 0.0)
        # l > degree: |A_1[P_l](s)| <= eps(s) = sqrt(R(s) / N(d, degree + 1)) (Parseval), hence
        # |per_l - B_inf| <= int off_w (eps^2 + 2 A_1[1] eps) for each of them, whose a_l sum to at most
        # T plus the rounding of the a_l between band and degree
        eps = np.sqrt(remainder / harmonic_dimension(kernel.d, degree + 1))
        beyond = tail + float(np.sum(floor[band + 1 :]))
        parseval = beyond * float(sums["off_w"] @ (eps * eps + 2.0 * sums["a1_one"] * eps))
        below = float(floor[band + 1 :] @ dev[band + 1 :])
        tail_bound = 1e-15 * kernel.gap_scale * b_inf + below + parseval
    second = float(b[1 : band + 1] @ per_l[1 : band + 1]) + tail * b_inf
    bias = sums["diag"] + second
    info = {
        "degree": degree,
        "band": band,
        "tail": tail,
        "tail_bound": tail_bound,
        "parseval_part": parseval,
        "fast": fast,
    }
    return ZonalParts(sums["noise_factor"], bias, tail_bound, degree, info)


def _mixture_loss(kernel: ZonalKernel, problem, w, rtol: float) -> LossEstimate:
    """A mixture's loss: the bias is linear in ``K``, so it is ``sum_c w_c bias_c``, each class by its own
    exact route (a quadrature form: :mod:`lipschitz_icl.exact.quadrature`; else the zonal series); the
    noise part does not depend on the prior.  Errors add (weighted)."""
    parts = []
    for name, weight, L, frequency in kernel.parts:
        sub = make_problem(name, kernel.d, problem.n, L, problem.sigma, **parameters_of(name, frequency=frequency))
        route = quadrature_loss if sub.task_class.exact_route == "quadrature" else zonal_loss
        parts.append((weight, route(sub, w, rtol=rtol)))
    noise = parts[0][1].noise
    bias_value = sum(wt * r.bias.value for wt, r in parts)
    bias = Estimate(bias_value, 0.0, 0, sum(wt * r.bias.abs_error for wt, r in parts))
    loss = Estimate(bias_value + noise.value, 0.0, 0, bias.abs_error + noise.abs_error)
    info = {
        "kernel": kernel.name,
        "converged": all(r.info.get("converged", False) for _, r in parts),
        "level": max(r.info.get("level", 0) for _, r in parts),
        "rtol": rtol,
        "parts": [(name, wt, r.info.get("level")) for (name, wt, _, _), (_, r) in zip(kernel.parts, parts)],
    }
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
    n = problem.n  # checked when the Problem was made
    sigma = problem.sigma
    grids.laplace_grid(kernel.d, w, n, grids.level(1))  # refuse up front if the grid is out of budget
    prev = zonal_parts(kernel, w, n, 0, rtol)
    history = [(prev.noise_factor, prev.bias)]
    converged = False
    for k in range(1, grids.MAX_LEVEL + 1):
        cur = zonal_parts(kernel, w, n, k, rtol)
        err_noise = abs(cur.noise_factor - prev.noise_factor)
        err_bias = abs(cur.bias - prev.bias) + cur.tail_bound
        history.append((cur.noise_factor, cur.bias))
        prev = cur
        if err_noise <= rtol * abs(cur.noise_factor) and err_bias <= rtol * abs(cur.bias):
            converged = True
            break
    if not (math.isfinite(cur.bias) and math.isfinite(cur.noise_factor)):
        raise ParameterError(
            "w", f"a window at which the exact zonal loss is finite (n = {n}, kernel {kernel.name!r})", w
        )
    noise_value = sigma * sigma * cur.noise_factor
    noise = Estimate(noise_value, 0.0, 0, sigma * sigma * err_noise)
    bias = Estimate(cur.bias, 0.0, 0, err_bias)
    loss = Estimate(noise_value + cur.bias, 0.0, 0, noise.abs_error + bias.abs_error)
    info = dict(
        cur.info,
        level=k,
        converged=converged,
        rtol=rtol,
        kernel=kernel.name,
        sum_p2=cur.noise_factor,
        sum_p2_abs_error=err_noise,
        history=history,
    )
    return LossEstimate(loss, bias, noise, method="exact", info=info)
