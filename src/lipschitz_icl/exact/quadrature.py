"""Exact ICL loss of softmax attention with ``M = w I`` by a dedicated quadrature, any ``n``: the classes
whose kernel has the form ``"linear"`` (affine) or ``"arc-cosine"`` (relu)
(:attr:`lipschitz_icl.tasks.family.TaskFamily.quadrature`).  The entry point for every class is
:func:`lipschitz_icl.exact.route.exact_loss`, which routes here or to the zonal series.

"Exact" means: no Monte Carlo; every expectation is a deterministic quadrature whose accuracy is
estimated by refining all grids, and the cost does not depend on the context size ``n``.  Supported
``1 <= n <= 1e150`` (:data:`lipschitz_icl.problem.MAX_N`): measured against the independent large-``n``
formula of :mod:`lipschitz_icl.loss.asymptotic` where ``R_d(w)/n`` is small, the two agree to that formula's
own accuracy (5e-10 to 5e-5 relative; d = 2, 5, 64; w = 1 to 1e5) at every n from 1e14 to 1e150, and
at n = 1e200 the factor ``n (n - 1)`` overflows a double.  ``0 <= w <= 1e8``.

Setting (query rotated to ``q = e_1``)
--------------------------------------
``t_i = x_i . q`` are i.i.d. with density ``p_d(t) ~ (1 - t^2)^((d-3)/2)``; in the polar angle
``theta`` (``t = cos theta``) the law is ``mu(dtheta) = sin^(d-2) theta dtheta / B(1/2, (d-1)/2)``.
Softmax weights ``p_i = e_i / S`` with ``e_i = exp(w (t_i - 1)) = exp(-V_i)``,
``V_i = w (1 - t_i) = 2 w sin^2(theta_i / 2)`` in ``[0, 2w]``, and ``S = sum_i e_i``.

The parts of the loss (:class:`~lipschitz_icl.estimate.LossEstimate`):

* noise: ``sigma^2 E[sum_i p_i^2]``;
* affine bias: ``(L^2/(3d)) E[sum_i p_i^2 2(1 - t_i) + sum_{i != j} p_i p_j (1 - t_i)(1 - t_j)]``
  (equal to ``(L^2/(3d)) E[(sum_i p_i t_i - 1)^2 + sum_i p_i^2 (1 - t_i^2)]``);
* relu bias: ``(2L^2/3) E[sum_{i,j} p_i p_j K(x_i, x_j)]``,
  ``K(a, b) = kappa(a, b) - kappa(a, q) - kappa(b, q) + kappa(q, q)``, ``kappa`` the arc-cosine
  kernel of :func:`lipschitz_icl.tasks.registry.relu_kernel`; on the diagonal
  ``K(x, x) = 1/d - 2 kappa(t) = [2 pi sin^2(theta/2) - (sin theta - theta cos theta)] / (pi d)``.

Laplace transform
-----------------
``1/S^2 = int_0^inf lam exp(-lam S) dlam``; with ``lam = exp(s)``, ``u = s - V`` and the kernels
``k1(u) = exp(u - e^u)``, ``k2(u) = exp(2u - e^u)``::

    psi(s)     = E[exp(-lam e)]                     1 - psi(s) = E[-expm1(-e^(s - V))]
    A_k[g](s)  = lam^k E[e^k g(t) exp(-lam e)]      = E[k_k(s - V) g(t)]

    E[sum_i p_i^2 g(t_i)]                 = n       int ds A_2[g](s) psi(s)^(n-1)
    E[sum_{i != j} p_i p_j g(t_i) g(t_j)] = n (n-1) int ds A_1[g](s)^2 psi(s)^(n-2)

``psi^(n-1)`` is ``exp((n-1) log1p(-(1 - psi)))`` with ``1 - psi`` integrated directly, so
``n = 1e14`` loses nothing.  ``g = 1`` gives the noise part, ``g = 2(1 - t)`` and ``g = 1 - t`` the
affine bias, ``g = K(x, x)`` the relu diagonal.

Relu off-diagonal term
----------------------
``K(a, b) = E_u[h(a) h(b)]`` with ``h(x) = (u.x)_+ - (u.q)_+`` and ``u`` uniform on the sphere;
given ``u`` the covariates are independent, so with ``c = u.q = cos theta_c`` (law ``mu``)::

    E[sum_{i != j} p_i p_j K(x_i, x_j)] = n (n-1) int ds E_c[G(c, s)^2] psi(s)^(n-2),
    G(c, s) = E_x[k1(s - V) D(c, theta)],   D(c, theta) = E_z[(c t + sin theta_c sin theta z)_+] - c_+,

``z`` the law of ``t`` one dimension down (``p_{d-1}``; Rademacher for ``d = 2``).  With
``alpha = c t``, ``beta = sin theta_c sin theta`` and ``z0 = -alpha/beta``,
``E_z[(alpha + beta z)_+] = beta J(z0)`` for ``z0 >= 0`` and ``alpha + beta J(-z0)`` for
``z0 < 0``, where ``J(z0) = E[(z - z0)_+]``; with ``z = cos phi`` (density ``sin^(d-3) phi``),
``phi0 = arccos z0`` and ``I_m(phi0) = int_0^phi0 sin^m``::

    J(z0) = [sin^(d-2) phi0 / (d-2) - cos phi0 I_(d-3)(phi0)] / B(1/2, (d-2)/2)      (d >= 3),
    J(z0) = (1 - z0) / 2                                                             (d = 2),

the closed form of the regularised incomplete beta route ``z = 2 Beta(a, a) - 1``, ``a = (d-2)/2``.
``D`` is not smooth where ``cos(theta_c +- theta) = 0`` (``theta = |pi/2 - theta_c|`` and
``pi - |pi/2 - theta_c|``: there it behaves like ``dist^(d/2)``); the panel holding such a kink is
integrated for each ``c`` node with the kink as a break point and the substitution
``theta - kink = h y^2`` (which makes ``dist^(d/2) dtheta`` a polynomial in ``y``), against the
Lagrange interpolant of ``k1(s - V)`` on that panel (product integration).  The ``theta_c`` panels
mirror the ``theta`` panels about ``pi/2``, so ``G`` is smooth on each of them.

Grids and cost
--------------
The grids and the kernel window loop are those of :mod:`lipschitz_icl.exact.grids` (shared with the zonal
series).  ``s`` from ``-log n - 21`` (the ``e^(2u)`` tail) to ``V_q + 4.5`` where ``V_q`` is the quantile of
``min_i V_i`` beyond which ``n^2 (2w + 10) P(V > V_q)^(n-2) < 1e-20``; Gauss-Legendre panels of width
``h_s``, graded (width ``~ grade * s * min(1, 3/(d-1))``) where the integrand follows the slowly
varying law of ``min_i V_i`` (few points dominate ``S``).  ``theta`` panels come from ``V`` panels of
width ``h_V`` on ``[0, V_q + 12.5]`` (every kernel ``k(s - V)`` is resolved there), graded beyond up
to ``45 + (d-1)/2 + 12 sqrt(d)`` past ``V_q`` (the tilted mass and the ``e^-(V-s)`` tails), and never
wider than ``max_angle`` in ``theta``.  For a block of ``s`` nodes only ``V`` in
``[s - 7, s + 45 + (d-1)/2 + 12 sqrt(d)]`` enters the kernel sums (below, ``1 - psi`` takes the whole
weight by a prefix sum); below ``s = -8`` the relu sums use the factorised series of ``k1``.

Cost, independent of ``n``: when ``n E[e] >> 1`` (the normaliser concentrates; every ``n`` near the
optimal ``w``) a few hundred nodes in each of ``s``, ``theta``, ``theta_c``: milliseconds (affine)
to ~0.1 s (relu).  When ``n E[e] <~ 1`` (small ``n`` with large ``w``, or large ``d``) ``V_q`` is of
order ``w`` and the ``theta`` grid has ``O(V_q)`` nodes: affine stays below seconds up to
``w ~ 1e5``; relu needs the ``theta_c x theta`` matrix ``D`` (``O(V_q^2)``), so it is refused with a
:class:`ParameterError` on ``w`` beyond a budget (about ``w ~ 300-1000`` at small ``n``), before
any work is done.

Accuracy: the result at resolution level ``k + 1`` is returned with ``abs_error`` equal to its
difference from level ``k`` (a conservative estimate, the convergence being geometric); levels rise
until that difference is below ``rtol`` times the value (bias and ``E[sum p^2]`` separately).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import special

from lipschitz_icl import quadrature
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.exact import grids
from lipschitz_icl.problem import MAX_W, Problem
from lipschitz_icl.tasks.family import QUADRATURE_FORMS
from lipschitz_icl.tasks.registry import TASKS
from lipschitz_icl.validation import ParameterError, check_choice, check_real

__all__ = ["FORMS", "quadrature_loss", "exact_parts", "relu_diagonal", "relu_offdiagonal_factor", "check_budget"]

FORMS = QUADRATURE_FORMS  # the kernel forms (TaskFamily.quadrature) this quadrature implements
_MAX_RELU = 2e7  # budget: entries of the relu matrix D (N_c/2 x N_theta)
_MAX_RELU_WORK = 5e9  # budget: multiply-adds N_s x N_theta x N_c of one relu evaluation (~1.5 s; d = 128,
# n = 1e20 at w*: 6e8; d = 512, n = 1e150: 3.5e10)


@cache
def _barycentric(q: int) -> np.ndarray:
    """Barycentric weights ``1 / prod_(k != j) (x_j - x_k)`` of the ``q`` Gauss-Legendre nodes."""
    x, _ = quadrature.gauss_legendre(q)
    return np.array([1.0 / np.prod(x[j] - np.delete(x, j)) for j in range(q)])


# --------------------------------------------------------------------------- one-point functions
def relu_diagonal(d: int, theta) -> np.ndarray:
    """``K(x, x) = 1/d - 2 kappa(t) = [2 pi sin^2(theta/2) - (sin theta - theta cos theta)]/(pi d)``
    (series for ``sin theta - theta cos theta`` below ``theta = 0.01``)."""
    theta = np.asarray(theta, dtype=np.float64)
    th2 = theta * theta
    series = theta * th2 * (1.0 / 3.0 - th2 / 30.0 + th2 * th2 / 840.0)
    direct = np.sin(theta) - theta * np.cos(theta)
    odd = np.where(theta < 1e-2, series, direct)
    return (2.0 * np.pi * np.sin(0.5 * theta) ** 2 - odd) / (np.pi * d)


def _relu_J(d: int, z0: np.ndarray) -> np.ndarray:
    """``J(z0) = E[(z - z0)_+]`` for ``z0`` in ``[0, 1]``, ``z ~ p_{d-1}`` (formula in the module doc);
    ``z0 = cos phi0``, ``sin phi0 = sqrt((1 - z0)(1 + z0))``, ``I_1 = 1 - z0``, ``I_0 = phi0``."""
    if d == 2:
        return 0.5 * (1.0 - z0)
    s = np.sqrt((1.0 - z0) * (1.0 + z0))
    s2 = s * s
    m = d - 3
    # I_m by the stable upward recursion I_k = (-sin^(k-1) cos + (k-1) I_{k-2}) / k from I_0 or I_1
    if m % 2 == 0:
        I, k, sp = np.arccos(z0), 0, s  # sp = sin^(k+1): the power the step to k + 2 needs
    else:
        I, k, sp = 1.0 - z0, 1, s2
    while k < m:
        k += 2
        I = (-sp * z0 + (k - 1) * I) / k
        sp = sp * s2
    top = s ** (m + 1) / (m + 1)
    return (top - z0 * I) / math.exp(special.betaln(0.5, 0.5 * (d - 2)))


def relu_offdiagonal_factor(d: int, theta_c, theta) -> np.ndarray:
    """``D(c, theta) = E_z[(c t + sin theta_c sin theta z)_+] - c_+`` (broadcast), ``c = cos theta_c``,
    ``t = cos theta``; ``E_u[h(x_i) h(x_j)] = E_c[D(c, theta_i) D(c, theta_j)]`` given ``z_i, z_j``
    averaged out (see the module doc).  With ``z0 = -alpha/beta`` and ``J(1) = 0`` every branch is
    ``D = beta J(min(|z0|, 1)) + (alpha - c_+ if z0 < 0 else -c_+)``."""
    theta_c = np.asarray(theta_c, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    c, sc = np.cos(theta_c), np.sin(theta_c)
    t, st = np.cos(theta), np.sin(theta)
    # z0 = -(c t)/(sc st) = -cot(theta_c) cot(theta): an outer product of the two factors
    cot_c = np.where(sc > 0.0, c / np.where(sc > 0.0, sc, 1.0), np.copysign(1e300, c))
    cot_t = np.where(st > 0.0, t / np.where(st > 0.0, st, 1.0), np.copysign(1e300, t))
    with np.errstate(over="ignore"):
        z0 = -(cot_c * cot_t)
    # alpha - c_+ where z0 < 0 (c t > 0), -c_+ elsewhere:  c * (-min(1 - t, 1)) for c > 0, c * min(t, 0)
    # for c <= 0
    base = c * np.where(c > 0.0, -np.minimum(grids.one_minus_t(theta), 1.0), np.minimum(t, 0.0))
    out = np.array(np.broadcast_to(base, np.broadcast_shapes(base.shape, z0.shape)), dtype=np.float64)
    zflat = z0.ravel()
    inside = np.flatnonzero(np.abs(zflat) < 1.0)  # elsewhere J = 0 (no truncation)
    if inside.size:
        beta = np.broadcast_to(sc * st, out.shape).ravel()
        out.ravel()[inside] += beta[inside] * _relu_J(d, np.abs(zflat[inside]))
    return out


# --------------------------------------------------------------------------- one evaluation
@dataclass
class _Parts:
    noise_factor: float  # E[sum_i p_i^2]
    affine: float | None  # E[sum p^2 2(1-t) + sum_{i!=j} p p (1-t)(1-t)]
    relu: float | None  # E[sum_{i,j} p_i p_j K(x_i, x_j)]
    info: dict


def _relu_weights(d: int, w: float, grid: grids.LaplaceGrid, lev: grids.Level):
    """``theta_c`` rule on ``[0, pi/2]`` and the matrix ``Wmod[c, k]`` with
    ``G(c, s) = sum_k Wmod[c, k] k1(s - V_k)``.  The half ``theta_c > pi/2`` is the mirror image:
    ``D(-c, theta) = D(c, theta) + c (1 - t)`` (from ``x_+ - (-x)_+ = x`` and ``E z = 0``), so
    ``G(-c, s) = G(c, s) + c A_1[1 - t](s)`` with the mirrored weight."""
    tb = grid.theta_breaks
    theta_top = tb[-1]
    half = 0.5 * np.pi
    cb = np.concatenate([[0.0, half], half - tb, tb - half])
    cb = np.unique(np.clip(cb, 0.0, half))
    cb = cb[np.concatenate([[True], np.diff(cb) > 1e-13])]
    cb = grids.subdivide(cb, lev.max_angle)
    theta_c, gc = quadrature.panel_rule(cb, lev.q_c)
    wc = gc * np.exp(grids.log_mu_density(d, theta_c))

    theta, wt = grid.theta, grid.wt
    wmod = wt[None, :] * relu_offdiagonal_factor(d, theta_c[:, None], theta[None, :])

    # product integration on the panels that hold a kink of D(c, .)
    q = lev.q_v
    x_ref, lam = quadrature.gauss_legendre(q)[0], _barycentric(q)
    y, gy = quadrature.composite_rule(0.0, 1.0, lev.q_k)
    first = np.abs(half - theta_c)
    kinks = np.stack([first, np.pi - first], axis=1)  # (N_c, 2)
    tol = 1e-12
    panel = np.clip(np.searchsorted(tb, kinks, side="right") - 1, 0, tb.size - 2)
    inside = (kinks > tb[panel] + tol) & (kinks < tb[panel + 1] - tol) & (kinks < theta_top - tol)
    shared = inside[:, 0] & inside[:, 1] & (panel[:, 0] == panel[:, 1])
    rows, cols = np.nonzero(inside & ~shared[:, None])
    if rows.size:
        # one kink in its panel: two sub-panels graded toward the kink, all records at once
        kink, p = kinks[rows, cols], panel[rows, cols]
        a, b = tb[p], tb[p + 1]
        yy = y * y
        pts = np.concatenate(
            [kink[:, None] - (kink - a)[:, None] * yy, kink[:, None] + (b - kink)[:, None] * yy], axis=1
        )
        pw = np.concatenate([2.0 * (kink - a)[:, None] * (y * gy), 2.0 * (b - kink)[:, None] * (y * gy)], axis=1)
        dens = np.exp(grids.log_mu_density(d, pts)) * relu_offdiagonal_factor(d, theta_c[rows][:, None], pts)
        xi = (2.0 * pts - (a + b)[:, None]) / (b - a)[:, None]
        ell = _lagrange(xi.ravel(), x_ref, lam).reshape(pts.shape + (q,))
        wmod[rows[:, None], p[:, None] * q + np.arange(q)] = np.einsum("rk,rkj->rj", pw * dens, ell)
    for m in np.flatnonzero(shared):
        # both kinks of this c node in one panel (theta_c near 0 or pi): the general rule
        p = panel[m, 0]
        a, b = tb[p], tb[p + 1]
        pts, pw = _kink_rule(a, b, np.sort(kinks[m]), y, gy)
        dens = np.exp(grids.log_mu_density(d, pts)) * relu_offdiagonal_factor(d, theta_c[m], pts)
        ell = _lagrange((2.0 * pts - a - b) / (b - a), x_ref, lam)
        wmod[m, p * q : (p + 1) * q] = (pw * dens) @ ell
    return theta_c, wc, wmod


def _kink_rule(a: float, b: float, kinks: np.ndarray, y: np.ndarray, gy: np.ndarray):
    """Nodes and weights on ``[a, b]`` with break points at ``kinks``, graded ``theta - k = h y^2``
    toward every kink (an interval with kinks at both ends is halved first)."""
    edges = np.concatenate([[a], kinks, [b]])
    is_kink = np.concatenate([[False], np.ones(kinks.size, bool), [False]])
    pts, wts = [], []
    for i in range(edges.size - 1):
        lo, hi, klo, khi = edges[i], edges[i + 1], is_kink[i], is_kink[i + 1]
        pieces = [(lo, hi, klo, khi)]
        if klo and khi:
            mid = 0.5 * (lo + hi)
            pieces = [(lo, mid, True, False), (mid, hi, False, True)]
        for l, h, kl, kh in pieces:
            if kl:
                pts.append(l + (h - l) * y * y)
                wts.append(2.0 * (h - l) * y * gy)
            elif kh:
                pts.append(h - (h - l) * y * y)
                wts.append(2.0 * (h - l) * y * gy)
            else:
                pts.append(0.5 * (l + h) + 0.5 * (h - l) * (2.0 * y - 1.0))
                wts.append((h - l) * gy)
    return np.concatenate(pts), np.concatenate(wts)


def _lagrange(xi: np.ndarray, nodes: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Barycentric Lagrange basis ``ell_k(xi)`` at the Gauss nodes, shape ``(len(xi), len(nodes))``."""
    diff = xi[:, None] - nodes[None, :]
    hit = np.abs(diff) < 1e-14
    diff = np.where(hit, 1.0, diff)
    terms = lam[None, :] / diff
    ell = terms / terms.sum(axis=1, keepdims=True)
    rows = hit.any(axis=1)
    if np.any(rows):
        ell[rows] = hit[rows].astype(float)
    return ell


def _check_relu_budget(grid: grids.LaplaceGrid, lev: grids.Level, d: int, w: float, n: int) -> None:
    """Refuse a relu grid whose matrix ``D`` (``theta_c`` on ``[0, pi/2]`` x ``theta``) is too large, or
    whose off-diagonal sums (``N_s x N_theta x N_c`` multiply-adds) exceed :data:`_MAX_RELU_WORK`."""
    n_c_estimate = len(grid.theta_breaks) * lev.q_c
    n_text = str(n) if n < 10**7 else f"{n:.3g}"
    if n_c_estimate * grid.theta.size > _MAX_RELU:
        raise ParameterError(
            "w",
            f"small enough for the exact relu grid at n = {n_text}, d = {d} (the "
            f"normaliser is dominated by a few points up to V = {grid.v_q:.3g}; "
            "use a Monte Carlo method)",
            w,
        )
    work = _relu_work(grid, lev)
    if work > _MAX_RELU_WORK:
        raise ParameterError(
            "w",
            f"a window whose exact relu grid fits the work budget at n = {n_text}, d = {d} "
            f"({work:.2g} > {_MAX_RELU_WORK:.0e} multiply-adds per evaluation)",
            w,
        )


def _relu_work(grid: grids.LaplaceGrid, lev: grids.Level) -> int:
    """Multiply-adds ``N_s x N_theta x N_c`` of the off-diagonal sums of one relu evaluation."""
    return grid.s.size * grid.theta.size * 2 * len(grid.theta_breaks) * lev.q_c


def check_budget(problem: Problem, w: float) -> None:
    """Refuse up front (``ParameterError`` on ``method``) a relu problem whose exact grid at ``w`` (the
    start of a ``w*`` search) exceeds the work budget :data:`_MAX_RELU_WORK` (large ``d`` and ``n``, where
    the grid is large at every window near ``w*``: ``--d 512 --n 1e150`` ran past 300 s).  A start in the
    few-points regime (the grid and matrix budgets of :func:`~lipschitz_icl.exact.grids.laplace_grid`,
    :func:`_check_relu_budget`) is not refused: the search walks down to windows it can evaluate."""
    if problem.task_class.quadrature != "arc-cosine":
        return
    lev = grids.level(1)
    try:
        grid = grids.laplace_grid(problem.d, w, problem.n, lev)
    except ParameterError:
        return
    if len(grid.theta_breaks) * lev.q_c * grid.theta.size > _MAX_RELU:
        return
    work = _relu_work(grid, lev)
    if work > _MAX_RELU_WORK:
        raise ParameterError(
            "method",
            f"a method within its work budget for these inputs (exact relu at w = "
            f"{w:.4g}, near w*: {work:.2g} > {_MAX_RELU_WORK:.0e} multiply-adds per evaluation; "
            "use asymptotic or mc where they apply)",
            "exact",
        )


def _evaluate(form: str, d: int, w: float, n: int, lev: grids.Level) -> _Parts:
    """One evaluation at resolution ``lev``.

    The kernel sums run through :func:`lipschitz_icl.exact.grids.window_sums` (only the ``theta`` nodes in the
    window of each block of ``s`` nodes enter them); the off-diagonal ``A_1[g]^2`` (affine) or
    ``E_c[G(c, s)^2]`` (relu) is added block by block.
    """
    grid = grids.laplace_grid(d, w, n, lev)
    theta, wt = grid.theta, grid.wt
    omt = grids.one_minus_t(theta)
    second = np.empty(grid.s.size)  # A_1-squared terms of the off-diagonal integral, per s node

    if form == "linear":
        g2 = wt * 2.0 * omt  # diagonal g = 2(1 - t)
        g1 = wt * omt  # off-diagonal g = 1 - t

        def off_diagonal(sl, win, sb, k1):
            a1 = k1 @ g1[win]
            second[sl] = a1 * a1

    else:
        _check_relu_budget(grid, lev, d, w, n)
        g2 = wt * relu_diagonal(d, theta)
        theta_c, wc, wmod = _relu_weights(d, w, grid, lev)  # theta_c in [0, pi/2]
        wmod = np.vstack([wmod, wt * omt])  # last row: A_1[1 - t]
        cos_c = np.cos(theta_c)
        V = grids.v_of_theta(w, theta)
        moments = np.stack([wmod @ np.exp(-(m + 1) * V) for m in range(5)])  # series below s = -8

        def off_diagonal(sl, win, sb, k1):
            if sb.max() <= grids.S_SPLIT:
                coef = np.stack([((-1) ** m / math.factorial(m)) * np.exp((m + 1) * sb) for m in range(5)], axis=1)
                G = coef @ moments  # (q_s, N_c + 1)
            else:
                G = k1 @ wmod[:, win].T
            a1 = G[:, -1:]
            G = G[:, :-1]
            G_mirror = G + a1 * cos_c[None, :]  # theta_c -> pi - theta_c
            second[sl] = (G * G) @ wc + (G_mirror * G_mirror) @ wc

    sums = grids.window_sums(
        grid.s, grid.ws, theta, wt, g2, d=d, w=w, n=n, v_top=grid.v_top, q_s=lev.q_s, each_chunk=off_diagonal
    )
    noise_factor = sums.noise_factor
    bias = float(sums.diagonal + sums.off_w @ second)
    info = {
        "level": None,
        "n_s": int(grid.s.size),
        "n_theta": int(theta.size),
        "s_range": (grid.s_lo, grid.s_hi),
        "v_top": grid.v_top,
        "v_quantile": grid.v_q,
    }
    if form == "linear":
        return _Parts(noise_factor, bias, None, info)
    info["n_c"] = 2 * int(theta_c.size)
    return _Parts(noise_factor, None, bias, info)


def exact_parts(task: str, d: int, w: float, n: int, level: int = 0) -> _Parts:
    """The task-free expectations at one resolution ``level`` (0 = coarsest) for the registered class
    ``task`` of a quadrature form: ``E[sum p_i^2]`` and the linear-form (affine; ``L^2/(3d)`` omitted) or
    arc-cosine (relu; ``2L^2/3`` omitted) bias expectation."""
    return _evaluate(_form(task), d, float(w), int(n), grids.level(level))


def _form(task: str) -> str:
    """The quadrature form of the registered class ``task``."""
    form = TASKS[check_choice("task", task, tuple(TASKS))].quadrature
    if form not in FORMS:
        names = [name for name in TASKS if TASKS[name].quadrature in FORMS]
        raise ParameterError("task", f"one of {', '.join(names)} for the quadrature", task)
    return form


def bias_scale(form: str, d: int, L: float) -> float:
    """The factor of the task-free bias expectation: ``L^2/(3d)`` (linear form), ``2L^2/3`` (arc-cosine)."""
    return L * L / (3.0 * d) if form == "linear" else 2.0 * L * L / 3.0


def quadrature_loss(problem: Problem, w, *, rtol: float = 1e-6) -> LossEstimate:
    """Exact ICL loss of ``M = w I`` for a class of a quadrature form (affine, relu), any ``n``.

    Returns ``LossEstimate(loss, bias, noise, method="exact")``: ``bias = (L^2/(3d)) E_aff`` (linear form)
    or ``(2L^2/3) E_relu`` (arc-cosine), ``noise = sigma^2 E[sum_i p_i^2]`` (formulas in the module doc),
    each an :class:`Estimate` with ``standard_error = 0`` and ``abs_error`` the estimated quadrature error
    (difference between the last two resolution levels).  ``info`` records the levels and grids.
    """
    if not isinstance(problem, Problem):
        raise ParameterError("problem", "a lipschitz_icl.problem.Problem", problem)
    form = problem.task_class.quadrature
    if form not in FORMS:
        raise ParameterError("task", "a class of a quadrature form for the exact quadrature", problem.task)
    w = check_real("w", w, minimum=0.0, maximum=MAX_W)
    rtol = check_real("rtol", rtol, minimum=1e-13, maximum=0.1)
    d, n, L, sigma = problem.d, problem.n, problem.L, problem.sigma  # a Problem's n was checked when it was made
    scale = bias_scale(form, d, L)

    def bias_of(parts):
        return parts.affine if form == "linear" else parts.relu

    # refuse up front (not after the coarse level) when the second level cannot be afforded
    grid = grids.laplace_grid(d, w, n, grids.level(1))
    if form == "arc-cosine":
        _check_relu_budget(grid, grids.level(1), d, w, n)
    prev = _evaluate(form, d, w, n, grids.level(0))
    history = [(prev.noise_factor, bias_of(prev))]
    converged = False
    for k in range(1, grids.MAX_LEVEL + 1):
        cur = _evaluate(form, d, w, n, grids.level(k))
        err_noise = abs(cur.noise_factor - prev.noise_factor)
        err_bias = abs(bias_of(cur) - bias_of(prev))
        history.append((cur.noise_factor, bias_of(cur)))
        prev = cur
        if err_noise <= rtol * abs(cur.noise_factor) and err_bias <= rtol * abs(bias_of(cur)):
            converged = True
            break
    level = k
    noise_value = sigma * sigma * cur.noise_factor
    bias_value = scale * bias_of(cur)
    noise = Estimate(noise_value, 0.0, 0, sigma * sigma * err_noise)
    bias = Estimate(bias_value, 0.0, 0, scale * err_bias)
    loss = Estimate(noise_value + bias_value, 0.0, 0, noise.abs_error + bias.abs_error)
    info = dict(
        cur.info,
        level=level,
        converged=converged,
        rtol=rtol,
        sum_p2=cur.noise_factor,
        sum_p2_abs_error=err_noise,
        history=history,
    )
    return LossEstimate(loss, bias, noise, method="exact", info=info)
