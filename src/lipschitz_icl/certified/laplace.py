"""The ICL loss of ``M = w I`` for a zonal kernel as balls: the Laplace-transform quadrature of the exact
method (:mod:`lipschitz_icl.exact.grids`) with every step certified, and its Taylor coefficients in ``w``.

Setting.  ``t = cos theta`` with law ``mu(dtheta) = sin^(d-2) theta dtheta / B(1/2, (d-1)/2)``,
``u = 1 - t = 2 sin^2(theta/2)``, ``V = w u``; ``1/S^2 = int lam e^(-lam S) dlam`` with ``lam = e^s`` gives,
for ``y = e^(s - V)`` and the kernels ``Y_k = y^k e^(-y)``::

    psi(s) = E[e^(-y)],   om = 1 - psi = E[1 - e^(-y)],   A_k[h](s) = E[Y_k h(t)],
    N      = E[sum_i p_i^2]              = n       int ds A_2[1] psi^(n-1)
    Diag   = E[sum_i p_i^2 2 D(t_i)]      = n       int ds A_2[2D] psi^(n-1)
    Off    = sum_{l>=1} a_l E[sum_{i!=j} p_i p_j Q_l(t_i) Q_l(t_j)]
           = n (n-1) int ds psi^(n-2) S(s),     S = sum_{l>=1} a_l A_1[Q_l]^2,

and the unit bias is ``Diag + Off`` (kernel ``D``, coefficients ``a_l``, ``Q_l = 1 - P_l``:
:mod:`lipschitz_icl.certified.kernels`).  For a kernel of finite degree ``m`` the sum ``S`` stops there.
Otherwise, with ``T = sum_{l>m} a_l`` and ``R(t) = sum_{l>m} a_l P_l(t) = T - D(t) + sum_{l<=m} a_l Q_l(t)``,

    S = sum_{l<=m} a_l A_1[Q_l]^2 + T A_1[1]^2 - 2 A_1[1] A_1[R] + sum_{l>m} a_l A_1[P_l]^2,

and the last sum lies in ``[0, T eps^2]`` (``sum_{l>m} |a_l|`` and ``[-1, 1]`` for a user's kernel) where
``|A_1[P_l](s)| <= eps(s)`` for every ``l > m``: by Parseval, ``sum_l N(d, l) A_1[P_l]^2 = E[Y_1^2]``, so
``eps^2 = (E[Y_1^2] - sum_{l<=m} N(d, l) A_1[P_l]^2) / N(d, m+1)`` (``N(d, l)`` is nondecreasing in ``l``).
Also ``Q = E[(sum_i p_i u_i)^2] = n int A_2[u^2] psi^(n-1) + n(n-1) int A_1[u]^2 psi^(n-2)`` (the far-field
bound of :mod:`lipschitz_icl.certified.wstar`: the bias is at least ``a_1 Q``).

Taylor coefficients in ``w``.  With ``w = w0 + eps`` and ``x = s - w0 u``, a kernel ``f(s - w u)`` is
``sum_i f^(i)(x) (-u)^i eps^i / i!`` and ``d/dx Y_k = k Y_k - Y_(k+1)``, ``d/dx (1 - e^(-y)) = Y_1``; so every
Taylor coefficient of every inner integral is a combination of moments ``M_j[h u^i] = E[Y_j h u^i]``,
and the outer integrands are polynomials in those series (``psi^N`` by the binomial series about
``psi_0``, ``N`` a ball: ``n`` may be an interval; the Gauss sums over an interval of ``n`` are then
Taylor models in ``n``, added over the panels before they are collapsed to balls, :func:`_gauss_sum`).
Coefficient ``i`` of a quantity is its ``i``-th ``w``-derivative over ``i!``.  ``w`` may itself be a ball:
then each coefficient holds its value at every ``w`` of the ball.

Certification.

* Inner integrals (over ``theta``): Gauss-Legendre panels with the Bernstein-ellipse bound (the panels
  end at ``pi`` exactly), ``sup |integrand|`` on a panel's rectangle bounded by ``sup |kernel| * sup
  |mu h u^i|`` (separate factors).  On the rectangle ``|y| = e^(s - Re(w u))`` and ``arg y = -Im(w u)``, so
  ``|y^j e^(-c y)| <= r^j e^(-c gamma r)`` over the range of ``r = |y|`` with ``gamma = min cos Im(w u)``.
  Panels are chosen so that ``|Im(w u)| <= 1.2`` where ``y`` can be large (``V <= s_top + 3``).  A row ``s``
  sums only the panels with ``V`` in ``[s - 7, s + top]``: below, ``y >= e^7`` (``1 - e^(-y)`` in
  ``[1 - e^(-e^7), 1]`` times the panels' mass, every ``Y_j`` at most ``r^j e^(-r)``); above, ``y <= e^(s -
  V)``, so every ``Y_j`` is at most ``r^j`` and ``1 - e^(-y) <= r``, times ``sup |h u^i|``.
* Below ``s = -4`` (series zone) ``y <= e^(-4)`` and ``e^(-c y) = sum_(r<I) (-c y)^r/r! + R``,
  ``|R| <= (c y)^I / I!``: every moment is ``sum_r (-c)^r/r! e^((j + r) s) X_(j+r)[h u^i]`` with the
  exponential moments ``X_k[g] = E[e^(-k w u) g]`` (computed once).
* Outer integral (over ``s``): Gauss-Legendre panels with the Bernstein bound.  On the rectangle
  ``x + i y`` (``|y| < pi/2``) ``|Y_k(x + iy - V)| = cos(y)^(-k) Y_k(x + log cos y - V)`` and ``|psi(x + iy)|
  <= psi(x + log cos y)`` (``psi`` nonincreasing), so every Taylor coefficient of every integrand is bounded
  by real moments on the ball ``[x_lo + log cos y, x_hi]`` of ``s`` (majorant series).  For the off-diagonal
  sum, ``|Q_l| <= min(2, P_l'(1) u)`` and ``|R| <= sum_{l>m} |a_l|``.
* Tails in ``s``: below ``s_lo`` every ``Y_j(s - V) <= e^(j (s - s_lo)) Y``-bound at ``s_lo``: the integral
  is at most the majorant at ``s_lo`` over 2 (each product has total degree ``>= 2`` in ``e^s``); above
  ``s_hi`` ``psi <= psi(s_hi)`` and ``int Y_k ds = Gamma(k)``, ``Y_k <= (k/e)^k``, or (for ``n = 2``, no
  power of ``psi``) ``y >= e^(s - 2 w)`` with ``Y_k <= y^k e^(-y)``.

Cost and budget: the direct zone costs about ``N_s N_theta`` ball operations (a row of kernels per ``s``
node, then matrix products in C); :func:`estimate_work` gives it before any work and
:func:`lipschitz_icl.certified.loss.enclose` refuses beyond its budget.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from flint import arb, arb_mat, arb_series, ctx

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.certified.kernels import (
    CertifiedKernel,
    derivative_at_one,
    gegenbauer_bound,
    gegenbauer_table,
    harmonic_dimension,
)
from lipschitz_icl.certified.quadrature import panel
from lipschitz_icl.validation import ParameterError

__all__ = [
    "Counts",
    "Parts",
    "ThetaGrid",
    "theta_grid",
    "integrate",
    "sup_coefficients",
    "estimate_work",
    "window_extent",
    "folds",
    "S_SERIES",
    "PICK_FROM",
]

S_SERIES = -4.0  # below it the kernels are exponential series (no theta work per s node)
SERIES_TERMS = 14  # (2 e^(-4))^14 / 14! < 1e-31
PICK_FROM = 12  # a row type of more columns hands its groups theirs by position, not by selecting products
BELOW = 7.0  # a panel whose V lies more than this below s is left out of the row: y >= e^7 there
IM_MAX = 1.2  # |Im(w u)| on a panel where y can be large: cos(1.2) > 0.36
H_V = 1.5  # width in V (at the largest w) of the theta panels where y can be large
RHOS = (12.0, 8.0, 6.0, 5.0, 4.0, 3.5, 3.0, 2.6)  # a panel allowing none of these is halved
MAX_ANGLE = math.pi / 10  # widest theta panel
HEIGHT = 1.1  # half-height of the outer rectangles (< pi/2)
H_S = 2.0  # width of the outer panels
ONE = arb(0, 1)  # [-1, 1]: x + ONE * r is x widened by |r|
N_ORDER = 4  # order of the Taylor model in n of a Gauss sum over an interval of n (_gauss_sum)


def window_extent(d: int) -> float:
    """How far above ``max(s, 0)`` the kernels matter (the tilted mass of ``t``; as the exact method):
    ``45 + (d - 1)/2 + 12 sqrt(d)``.  Beyond it a row adds a certified bound, not a quadrature."""
    return 45.0 + 0.5 * (d - 1) + 12.0 * math.sqrt(d)


def _widen(value: arb, radius) -> arb:
    return value + ONE * radius


# ----------------------------------------------------------------------------- Taylor series
def _mul(a: list, b: list) -> list:
    return [sum((a[i] * b[k - i] for i in range(k + 1)), arb(0)) for k in range(len(a))]


def _add(a: list, b: list) -> list:
    return [x + y for x, y in zip(a, b)]


def _scale(c, a: list) -> list:
    return [c * x for x in a]


def _power(psi: list, log_psi0: arb | None, N: arb, exact_n: int | None) -> arb_series:
    """``psi^N`` as a Taylor series (python-flint's, :func:`_series_of`): by products for an exact integer ``N``
    at most the order + 1; else the binomial series ``sum_k C(N, k) psi_0^(N-k) delta^k`` (``delta = psi -
    psi_0``; exact as a truncated series) with ``psi_0^(N-k) = exp((N - k) log psi_0)`` or, when ``psi_0`` may be
    0, the ball ``[0, sup psi_0^(N-k)]`` (``N - k > 0``).  The bounds need every true exponent ``N - k >= 0``
    (``n >= 5`` for an interval of ``n`` and ``w``-orders up to 3 keep it so); a ball of ``N`` whose lower end
    rounding puts below its true values only loosens them, so it is not refused."""
    length = len(psi)
    if exact_n is not None and exact_n <= length:
        series = _series_of(psi)
        out = arb_series([arb(1)], prec=length)
        for _ in range(exact_n):
            out = out * series
        return out
    delta = _series_of([arb(0)] + psi[1:])
    out = arb_series([arb(0)], prec=length)
    power = arb_series([arb(1)], prec=length)
    binom = arb(1)
    if log_psi0 is not None:  # psi_0^(N-k) = psi_0^N psi_0^(-k)
        base0, inverse = (N * log_psi0).exp(), (-log_psi0).exp()
    for k in range(length):
        exponent = N - k
        if log_psi0 is not None:
            base = base0 * inverse**k
        else:
            top = arb(psi[0].abs_upper()).min(arb(1))
            if not top.is_finite():  # psi_0 unknown: fail closed, 0 <= psi_0^(N-k) <= 1
                base = arithmetic.interval(0, 1)
            elif top > 0:
                base = arithmetic.interval(0, 1) * (exponent * top.log()).exp()
            else:  # psi_0 = 0 exactly
                base = arb(0)
        out += (binom * base) * power
        power = power * delta
        binom = binom * (N - k) / (k + 1)
    return out


def _power_majorant(psi: list, N: arb, exact_n: int | None) -> list:
    """Upper bounds of ``|(psi^N)_i|`` on a rectangle from ``psi[0] = lam >= log |psi_0|`` (a log bound: ``psi_0``
    may be within ``1e-150`` of 1) and bounds ``psi[i] >= |psi_i|`` (majorant series)."""
    J = len(psi) - 1
    lam = psi[0]
    if exact_n is not None and exact_n <= J + 1:
        series = [lam.exp()] + psi[1:]
        out = [arb(1)] + [arb(0)] * J
        for _ in range(exact_n):
            out = _mul(out, series)
        return out
    delta = [arb(0)] + psi[1:]
    out = [arb(0)] * (J + 1)
    power = [arb(1)] + [arb(0)] * J
    binom = arb(1)
    for k in range(J + 1):
        base = (arb((N - k).lower()) * lam).exp()
        out = _add(out, _scale(arb(abs(binom).abs_upper()) * base, power))
        power = _mul(power, delta)
        binom = binom * (N - k) / (k + 1)
    return out


def _log_psi_bound(om: arb, psi: arb) -> arb:
    """``lam >= log psi`` from enclosures of ``om = 1 - psi`` and ``psi``: ``psi <= e^(-om)`` (so ``lam = -om``,
    exact near ``psi = 1``) and ``log psi`` itself, whichever is smaller; at most 0."""
    lam = -arb(om.lower()).max(arb(0))
    top = arb(psi.upper())
    if top > 0:
        lam = lam.min(top.log())
    return arb(lam.upper()).min(arb(0))


@cache
def _derivative(k: int, i: int) -> tuple:
    """``d^i/dx^i Y_k = sum_j c_j Y_j`` as ``((j, c_j), ...)`` (integers), from ``Y_k' = k Y_k - Y_(k+1)``."""
    out = {k: 1}
    for _ in range(i):
        nxt: dict = {}
        for j, c in out.items():
            nxt[j] = nxt.get(j, 0) + j * c
            nxt[j + 1] = nxt.get(j + 1, 0) - c
        out = nxt
    return tuple((j, c) for j, c in sorted(out.items()) if c != 0)


# ----------------------------------------------------------------------------- the theta grid
@dataclass
class ThetaGrid:
    """The ``theta`` panels for ``w`` in ``[w_lo, w_hi]`` and rows ``s <= s_top``, and everything on them
    that does not depend on ``w``: nodes (``u``), weights (Gauss weight times ``mu``), the column values
    ``h u^i`` times the weights (one ``arb_mat``, nodes x columns), and per panel the bounds ``factor *
    sup |mu h u^i|`` on its rectangle (one ``arb_mat``, panels x columns).  Columns are pairs ``(h, i)``,
    ``h`` one of ``"1"``, ``"2D"``, ``"u2"``, ``("Q", l)``, ``"R"``."""

    kernel: CertifiedKernel
    m: int
    order: int
    w_lo: float
    w_hi: float
    s_top: float
    q: int
    q_s: int
    parseval: bool
    want_q: bool
    coefficients: Any = None  # kernels.Coefficients, set by theta_grid
    columns: list = field(default_factory=list)
    index: dict = field(default_factory=dict)
    panels: list = field(default_factory=list)  # quadrature.Panel per theta panel
    boxes: list = field(default_factory=list)  # per panel: u on its rectangle (acb)
    panel_u: list = field(default_factory=list)  # per panel: (u at its left end, u at its right end)
    starts: list = field(default_factory=list)
    stops: list = field(default_factory=list)
    u: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    panel_mass: list = field(default_factory=list)  # per panel: the Gauss sum of mu
    mass_error: list = field(default_factory=list)  # per panel: factor * sup |mu| on the rectangle
    mass_beyond: arb = field(default_factory=lambda: arb(0))  # P(theta > the last panel)
    u_end: arb = field(default_factory=lambda: arb(2))
    norms: list = field(default_factory=list)  # per column: sup |h u^i| on [0, pi]
    values: Any = None  # arb_mat nodes x columns
    bounds: Any = None  # arb_mat panels x columns
    mass_bounds: Any = None  # arb_mat panels x 1: factor * sup |mu|
    groups: list = field(default_factory=list)  # the Group products of a row
    type_cols: dict = field(default_factory=dict)  # row type -> the columns its groups read
    positions: dict = field(default_factory=dict)  # (group, j) -> where the group's columns lie in its type's
    selectors: dict = field(default_factory=dict)  # the same as 0/1 matrices, for a type of few columns (PICK_FROM)
    majorant_cols: tuple = ()  # the columns a ball row carries
    blocks: dict = field(default_factory=dict)  # columns -> (values, bounds, norms) blocks
    value_rows: dict = field(default_factory=dict)  # columns -> the values block as lists (one per node)

    @property
    def d(self) -> int:
        return self.kernel.d

    @property
    def size(self) -> int:
        return len(self.u)

    def col(self, h, i: int) -> int:
        return self.index[(h, i)]

    @property
    def y_types(self) -> range:
        """The ``j`` of the kernels ``Y_j = y^j e^(-y)`` the rows carry (``A_2`` at order ``J`` needs ``J + 2``)."""
        return range(1, self.order + 3)

    @property
    def z_types(self) -> range:
        """The ``j`` of ``Z_j = y^j e^(-2y)`` (Parseval: ``E[(g^(i))^2]`` needs ``2 .. 2J + 2``)."""
        return range(2, 2 * self.order + 3) if self.parseval else range(0)


def _log_normaliser(d: int) -> arb:
    return -(arb(0.5).lgamma() + (arb(d - 1) / 2).lgamma() - (arb(d) / 2).lgamma())


def _theta_of_u(u: float) -> float:
    return 2.0 * math.asin(math.sqrt(min(max(u, 0.0), 2.0) / 2.0))


def _column_list(kernel: CertifiedKernel, m: int, order: int, parseval: bool, want_q: bool) -> list:
    hs: list = ["1", "2D"] + [("Q", l) for l in range(1, m + 1)]
    if kernel.degree is None:
        hs.append("R")
    if want_q:
        hs.append("u2")
    cols = [(h, i) for h in hs for i in range(order + 1)]
    top = max(2 * order if parseval else 0, order + 1)  # Parseval: u^(2i); the majorants: u^(i+1)
    cols += [("1", i) for i in range(order + 1, top + 1)]
    return cols


def theta_grid(
    kernel: CertifiedKernel,
    *,
    m: int,
    order: int,
    w_lo: float,
    w_hi: float,
    s_top: float,
    q: int,
    q_s: int,
    parseval: bool,
    want_q: bool,
) -> ThetaGrid:
    """The ``theta`` grid (module docstring) for ``w`` in ``[w_lo, w_hi]`` and rows ``s <= s_top`` (``m``
    Gegenbauer terms, ``w``-derivatives up to ``order``, ``q`` Gauss nodes per ``theta`` panel and ``q_s``
    per ``s`` panel): panels
    ``H_V`` wide in ``V`` (at ``w_hi``) up to ``V = s_top + 3`` (at ``w_lo``), growing above it, at most
    ``MAX_ANGLE`` wide, halved where no ``rho`` keeps the rectangle's ``|Im(w u)| <= IM_MAX``; the last one
    ends at ``pi`` exactly or where the window of every row ends."""
    grid = ThetaGrid(kernel, m, order, w_lo, w_hi, s_top, q, q_s, parseval, want_q)
    grid.coefficients = kernel.coefficients(m)
    d = kernel.d
    norm = _log_normaliser(d).exp()
    v_crit = max(s_top, 0.0) + 3.0
    u_crit = min(2.0, v_crit / w_lo)
    u_end = min(2.0, (max(s_top, 0.0) + window_extent(d) + 8.0) / w_lo)
    breaks = [0.0]
    while breaks[-1] < u_end:
        u = breaks[-1]
        step = H_V / w_hi if u < u_crit else max(H_V / w_hi, 0.5 * (u - u_crit) + H_V / w_lo)
        breaks.append(u_end if u_end - (u + step) < 0.25 * step else u + step)
    pi = arb.pi()
    theta_crit = _theta_of_u(u_crit)
    a = arb(0)
    for u in breaks[1:]:
        target = _theta_of_u(u)
        while True:
            b_float = min(target, float(a.mid()) + MAX_ANGLE)
            last = b_float >= target
            b = pi if (last and u >= 2.0) else arb(b_float)
            _add_panels(grid, a, b, float(a.mid()) < theta_crit, norm)
            a = b
            if last:
                break
    grid.stops = grid.starts[1:] + [grid.size]
    grid.panel_mass = [sum(grid.weights[i:j], arb(0)) for i, j in zip(grid.starts, grid.stops)]
    grid.u_end = 2 * (a / 2).sin() ** 2
    if a < pi:  # P(t < cos theta_end) = P(t > -cos theta_end)
        from lipschitz_icl.certified import laws

        grid.mass_beyond = laws.cap_probability(d, -a.cos())
    _build_columns(grid, norm)
    return grid


def _add_panels(grid: ThetaGrid, a: arb, b: arb, critical: bool, norm: arb) -> None:
    """``[a, b]`` as one panel, or halves of it where no ``rho`` of :data:`RHOS` keeps ``|Im(w_hi u)| <=
    IM_MAX`` (a critical panel: ``y`` may be large) or the real part of ``w_lo u`` above ``s_top + 1`` (a
    far one: ``y <= e^(-1)``) on its rectangle."""
    stack = [(a, b)]
    floor = max(grid.s_top, 0.0) + 1.0
    while stack:
        lo, hi = stack.pop()
        chosen = None
        for rho in RHOS:
            p = panel(lo, hi, grid.q, rho)
            u_box = 2 * (p.box() / 2).sin() ** 2
            if critical and arb(abs((grid.w_hi * u_box).imag).abs_upper()) > IM_MAX:
                continue
            if not critical and not arb(u_box.real.lower()) * grid.w_lo > floor:
                continue
            chosen = (p, u_box)
            break
        if chosen is None and float((hi - lo).mid()) > 1e-12:
            mid = (lo + hi) / 2
            stack.extend([(mid, hi), (lo, mid)])
            continue
        if chosen is None:
            p = panel(lo, hi, grid.q, 1.5)
            chosen = (p, 2 * (p.box() / 2).sin() ** 2)
        p, u_box = chosen
        grid.starts.append(len(grid.u))
        for theta, weight in zip(p.nodes, p.weights):
            grid.u.append(2 * (theta / 2).sin() ** 2)
            grid.weights.append(weight * theta.sin() ** (grid.d - 2) * norm)
        grid.panels.append(p)
        grid.boxes.append(u_box)
        grid.panel_u.append((2 * (lo / 2).sin() ** 2, 2 * (hi / 2).sin() ** 2))


def _build_columns(grid: ThetaGrid, norm: arb) -> None:
    kernel, d, m = grid.kernel, grid.d, grid.m
    co = grid.coefficients
    grid.columns = _column_list(kernel, m, grid.order, grid.parseval, grid.want_q)
    grid.index = {c: k for k, c in enumerate(grid.columns)}
    hs = list(dict.fromkeys(h for h, _ in grid.columns))
    top_power = max(i for _, i in grid.columns)
    rows = []
    thetas = [t for p in grid.panels for t in p.nodes]
    for theta, u, weight in zip(thetas, grid.u, grid.weights):
        _, Q = gegenbauer_table(d, u, m) if m > 0 else ([arb(1)], [arb(0)])
        gap = kernel.gap(theta)
        value = {h: _column_value(h, u, gap, Q, co) for h in hs}
        powers = [weight]
        for _ in range(top_power):
            powers.append(powers[-1] * u)
        rows.append([value[h] * powers[i] for h, i in grid.columns])
    grid.values = arb_mat(rows)
    bounds, mass = [], []
    for p, u_box in zip(grid.panels, grid.boxes):
        box = p.box()
        mu = arb(abs(box.sin() ** (d - 2)).abs_upper()) * norm
        mass.append([p.factor * mu])
        gap_box = kernel.gap(box)
        Pb, dPb = gegenbauer_bound(d, arb(abs(box.imag).abs_upper()).cosh(), max(m, 1))
        u_abs = arb(abs(u_box).abs_upper())
        h_bound = {h: _column_bound(h, u_abs, gap_box, Pb, dPb, co) for h in hs}
        bounds.append([p.factor * mu * h_bound[h] * u_abs**i for h, i in grid.columns])
    grid.bounds = arb_mat(bounds)
    grid.mass_bounds = arb_mat(mass)
    grid.mass_error = [row[0] for row in mass]
    h_norm = {h: _column_norm(h, kernel, co) for h in hs}
    grid.norms = [h_norm[h] * 2**i for h, i in grid.columns]
    _prepare(grid)


def _column_value(h, u: arb, gap, Q: list, co) -> arb:
    if h == "1":
        return arb(1)
    if h == "2D":
        return 2 * gap
    if h == "u2":
        return u * u
    if h == "R":  # R = T - D + sum_{l <= m} a_l Q_l  (= sum_{l > m} a_l P_l)
        return co.tail - gap + sum((co.a[l] * Q[l] for l in range(1, len(co.a))), arb(0))
    return Q[h[1]]


def _column_bound(h, u_abs: arb, gap_box, Pb: list, dPb: list, co) -> arb:
    """``sup |h|`` on a rectangle: ``|P_l| <= P_l(x_R)``, ``|Q_l| <= min(1 + P_l(x_R), |u| P_l'(x_R))``."""
    if h == "1":
        return arb(1)
    if h == "2D":
        return 2 * arb(abs(gap_box).abs_upper())
    if h == "u2":
        return u_abs * u_abs
    if h == "R":
        total = arb(co.tail.abs_upper()) + arb(abs(gap_box).abs_upper())
        for l in range(1, len(co.a)):
            total += arb(abs(co.a[l]).abs_upper()) * (1 + Pb[l]).min(u_abs * dPb[l])
        return total
    return (1 + Pb[h[1]]).min(u_abs * dPb[h[1]])


def _column_norm(h, kernel: CertifiedKernel, co) -> arb:
    """``sup |h|`` on ``[0, pi]``."""
    if h == "1":
        return arb(1)
    if h == "2D":
        return 2 * kernel.gap_sup
    if h == "u2":
        return arb(4)
    if h == "R":
        return arb(co.tail_abs.abs_upper())
    return arb(2)


# ----------------------------------------------------------------------------- groups of moments
@dataclass(frozen=True)
class Group:
    """A family of inner integrals computed by one matrix product: ``factor * sum_j coef_j E[K_j h u^i]``
    for the columns ``cols`` (``K_j`` the kernel ``Y_j``, or ``Z_j`` for ``kind == "Z"``).  ``("A", k, i)``:
    coefficient ``i`` of ``A_k[h]`` (``coef = c_j^(i)`` of ``d^i Y_k``, factor ``(-1)^i/i!``); ``("om", i)``:
    coefficient ``i >= 1`` of ``om``; ``("par", i)``: ``E[(g^(i))^2]`` (Parseval); ``("abs", i)``:
    ``sum_j |c_j^(i)| E[Y_j u^i] / i! >= E|g^(i)|``."""

    name: tuple
    kind: str
    recipe: tuple
    factor: arb
    hs: tuple
    cols: tuple


def _groups(grid: ThetaGrid) -> list:
    J = grid.order
    co_hs = ("1",) + tuple(("Q", l) for l in range(1, grid.m + 1)) + (("R",) if grid.kernel.degree is None else ())
    diag_hs = ("1", "2D") + (("u2",) if grid.want_q else ())
    out = []
    for k, hs in ((1, co_hs), (2, diag_hs)):
        for i in range(J + 1):
            factor = arb((-1) ** i) / math.factorial(i)
            out.append(Group(("A", k, i), "Y", _derivative(k, i), factor, hs, tuple(grid.col(h, i) for h in hs)))
    for i in range(1, J + 1):
        factor = arb((-1) ** i) / math.factorial(i)
        out.append(Group(("om", i), "Y", _derivative(1, i - 1), factor, ("1",), (grid.col("1", i),)))
    for i in range(J + 1):
        crude = tuple((j, abs(c)) for j, c in _derivative(1, i))
        out.append(Group(("abs", i), "Y", crude, 1 / arb(math.factorial(i)), ("1",), (grid.col("1", i),)))
        if grid.parseval:
            square: dict = {}
            for j, a in _derivative(1, i):
                for j2, b in _derivative(1, i):
                    square[j + j2] = square.get(j + j2, 0) + a * b
            recipe = tuple(sorted(square.items()))
            out.append(Group(("par", i), "Z", recipe, 1 / arb(math.factorial(i)) ** 2, ("1",), (grid.col("1", 2 * i),)))
    return out


def _majorant_columns(grid: ThetaGrid) -> tuple:
    """The columns the majorants read (``h`` in ``1``, ``2D``, ``u2``): every ball row carries these."""
    return tuple(k for k, (h, _) in enumerate(grid.columns) if h in ("1", "2D", "u2"))


def _submatrix(mat, rows: int, cols: tuple):
    return arb_mat([[mat[r, c] for c in cols] for r in range(rows)])


def _prepare(grid: ThetaGrid) -> None:
    """The groups; per row type (``("Y", j)``, ``("Z", j)``) the union of the columns its groups read, with its
    blocks of values, bounds and norms; per group and term where its columns lie among its type's, and for a
    type of at most :data:`PICK_FROM` columns the 0/1 matrix selecting them (so every row type is multiplied
    once, in C, and the groups combine the columns they read of those products: :func:`_group_products`)."""
    grid.groups = _groups(grid)
    grid.majorant_cols = _majorant_columns(grid)
    n_panels = len(grid.panels)
    used: dict = {}
    for g in grid.groups:
        for j, _ in g.recipe:
            used.setdefault((g.kind, j), set()).update(g.cols)
    grid.type_cols = {t: tuple(sorted(cols)) for t, cols in used.items()}
    blocks = {}
    for cols in set(grid.type_cols.values()) | {grid.majorant_cols, (grid.col("1", 0),)}:
        blocks[cols] = (
            _submatrix(grid.values, grid.size, cols),
            _submatrix(grid.bounds, n_panels, cols),
            arb_mat([[grid.norms[c] for c in cols]]),
        )
    grid.blocks = blocks
    grid.value_rows = {cols: block[0].tolist() for cols, block in blocks.items()}
    grid.positions, grid.selectors = {}, {}
    for g in grid.groups:
        for j, _ in g.recipe:
            cols = grid.type_cols[(g.kind, j)]
            grid.positions[(g.name, j)] = tuple(cols.index(c) for c in g.cols)
            if len(cols) <= PICK_FROM:
                grid.selectors[(g.name, j)] = arb_mat([[1 if a == b else 0 for b in g.cols] for a in cols])


# ----------------------------------------------------------------------------- rows: the inner integrals
@dataclass
class Row:
    """The inner integrals at one ``s`` (a point or a real ball), each a ball holding every value over ``s``
    and ``w``: ``groups[name]`` (a list over the group's columns, factor applied), ``om = E[1 - e^(-y)]``,
    ``psi = E[e^(-y)]``; a ball row also carries ``Y[j]``: ``E[Y_j h u^i]`` for the majorant columns (a dict
    column -> ball)."""

    s: arb
    groups: dict
    om: arb
    psi: arb
    Y: dict = field(default_factory=dict)


def _kernel_sups(r_lo: arb, r_hi: arb, gam: arb, ys: list, zs: list, peaks: dict, places: dict) -> dict:
    """``sup |kernel|`` over ``|y| = r`` in ``[r_lo, r_hi]`` with ``cos(arg y) >= gam``, for ``E = e^(-y)``,
    ``O = 1 - e^(-y)`` (``|1 - e^(-y)| <= |y| max(1, |e^(-y)|)``), ``Y_j = y^j e^(-y)`` and ``Z_j = y^j e^(-2y)``:
    ``r^j e^(-c gam r)`` rises to its peak ``(j/(c gam e))^j`` (``peaks[(c, j)]``) at ``r = j/(c gam)``
    (``places[(c, j)]``) and falls after it (``gam > 0``); for ``gam <= 0`` it is at most ``r_hi^j
    e^(c |gam| r_hi)``.  The powers ``r^j`` are computed once for both kinds."""
    out = {}
    top_j = max(ys[-1] if ys else 0, zs[-1] if zs else 0)
    if gam > 0:
        low, high = (-gam * r_lo).exp(), (-gam * r_hi).exp()
        out[("E", 0)] = low
        out[("O", 0)] = r_hi.min(arb(2))
        powers_lo, powers_hi = [arb(1)], [arb(1)]
        for _ in range(top_j):
            powers_lo.append(powers_lo[-1] * r_lo)
            powers_hi.append(powers_hi[-1] * r_hi)
        for kind, c, js, lo_f, hi_f in (("Y", 1, ys, low, high), ("Z", 2, zs, low * low, high * high)):
            for j in js:
                place = places[(c, j)]
                if r_hi < place:
                    out[(kind, j)] = powers_hi[j] * hi_f
                elif r_lo > place:
                    out[(kind, j)] = powers_lo[j] * lo_f
                else:
                    out[(kind, j)] = peaks[(c, j)]
        return out
    grow = (-gam * r_hi).exp()
    out[("E", 0)] = grow
    out[("O", 0)] = (r_hi * grow).min(1 + grow)
    for kind, factor, js in (("Y", grow, ys), ("Z", grow * grow, zs)):
        power = arb(1)
        for j in range(1, (js[-1] if js else 0) + 1):
            power = power * r_hi
            if j in js:
                out[(kind, j)] = power * factor
    return out


def _panel_ranges(grid: ThetaGrid, w: arb) -> list:
    """Per panel ``(m_lo, m_hi, gam, peaks, places)``: the range of ``|e^(-w u)|`` on its rectangle, a lower bound of
    ``cos Im(w u)`` there (``-1`` when ``|Im(w u)|`` may exceed 1.5) and the peaks of ``r^j e^(-c gam r)`` with their
    places (:func:`_kernel_sups`)."""
    out = []
    top = max(grid.order + 2, 2 * grid.order + 2)
    e1 = arb(1).exp()
    for u_box in grid.boxes:
        e = (-w * u_box).exp()
        im = arb(abs((w * u_box).imag).abs_upper())
        gam = arb(im.cos().lower()) if im < 1.5 else arb(-1)
        peaks, places = {}, {}  # (c, j): the peak of r^j e^(-c gam r), and where it lies
        if gam > 0:
            for c in (1, 2):
                for j in range(1, top + 1):
                    peaks[(c, j)] = (arb(j) / (c * gam * e1)) ** j
                    places[(c, j)] = arb(j) / (c * gam)
        out.append((arb(e.abs_lower()), arb(e.abs_upper()), gam, peaks, places))
    return out


def _windows(grid: ThetaGrid, w: arb, s_lo: arb, s_hi: arb) -> tuple:
    """``(first, stop)``: panels ``first .. stop - 1`` make the row's window; those before lie below
    (``w u <= s - 7``), those after above (``w u >= max(s, 0) + window_extent``)."""
    n = len(grid.panels)
    top = s_hi.max(arb(0)) + window_extent(grid.d)
    first = 0
    while first < n and w * grid.panel_u[first][1] < s_lo - BELOW:
        first += 1
    stop = first
    while stop < n and not (w * grid.panel_u[stop][0] > top):
        stop += 1
    return first, stop


def _group_products(grid: ThetaGrid, values: dict, errors: dict) -> dict:
    """``{group name: rows x columns lists}``: ``factor * sum_j coef_j (values_j + [-1, 1] |coef_j| errors_j)``
    with each type's products ``values[(kind, j)]`` and error bounds ``errors[(kind, j)]`` (rows x the type's
    columns, ``arb_mat``), of which each term reads the group's columns: by a product with a 0/1 selecting matrix
    in C for a type of at most :data:`PICK_FROM` columns, else picked from the rows as lists
    (:data:`ThetaGrid.positions`; ReLU's ~250 Gegenbauer columns made the selecting products cost as much as the
    kernel products themselves)."""
    listed: dict = {}

    def picked(g: Group, j: int, which: int):
        t = (g.kind, j)
        select = grid.selectors.get((g.name, j))
        if select is not None:
            return (values[t] if which == 0 else errors[t]) * select
        if t not in listed:
            listed[t] = (values[t].tolist(), errors[t].tolist())
        return arb_mat([[row[k] for k in grid.positions[(g.name, j)]] for row in listed[t][which]])

    out = {}
    for g in grid.groups:
        (j0, c0), *others = g.recipe
        total, bound = picked(g, j0, 0) * c0, picked(g, j0, 1) * abs(c0)
        for j, c in others:
            total, bound = total + picked(g, j, 0) * c, bound + picked(g, j, 1) * abs(c)
        out[g.name] = ((total + ONE * bound) * g.factor).tolist()
    return out


def _scale_rows(mat, factors: list):
    """``diag(factors) * mat`` (``arb_mat``), one product per entry (the product by a diagonal matrix in C costs
    rows x rows x columns: more, past about 20 rows)."""
    return arb_mat([[x * factor for x in row] for row, factor in zip(mat.tolist(), factors)])


def _weighted(rows: list, powers: list):
    """``diag(powers) * values`` for a column block given by its rows (the theta nodes): each scaled by
    ``e^(-j w u_i)``."""
    return arb_mat([[x * factor for x in row] for row, factor in zip(rows, powers)])


def _padded(windows: list, width: int):
    """Rows given on their windows ``(b0, values)`` as an ``arb_mat``, zero outside them."""
    zero = arb(0)
    return arb_mat([[zero] * b0 + values + [zero] * (width - b0 - len(values)) for b0, values in windows])


def folds(on_windows: int, nodes: int, columns: int, rows: int) -> bool:
    """Whether a row type's node and row factors are folded into its kernel (:func:`_kernel_matrix`: two
    products per node of each row's window, ``on_windows`` in all) rather than applied to its column block and
    to the product (one product per node and column, then one per row and column): the choice of fewer
    products.  Speed only: both give enclosures of the same values."""
    return 2 * on_windows < nodes * columns + rows * columns


def _kernel_matrix(windows: list, node_powers: list, row_powers: list, width: int):
    """The kernel of a row type ``(kind, j)``, rows x nodes: row ``r`` is ``e^(j s_r) K_r(i) e^(-j w u_i)`` on its
    window ``(b0, values)`` (``K_r`` = ``e^(-y)`` or ``e^(-2y)`` at the window's nodes ``b0, b0 + 1, ...``), zero
    elsewhere: two products per node of the window, where scaling the type's column block by ``e^(-j w u_i)`` and
    the product's rows by ``e^(j s_r)`` takes one per node and column and one per row and column (:func:`folds`)."""
    scaled = [
        (b0, [x * node * power for x, node in zip(values, node_powers[b0 : b0 + len(values)])])
        for (b0, values), power in zip(windows, row_powers)
    ]
    return _padded(scaled, width)


def direct_rows(grid: ThetaGrid, w: arb, ss: list, *, ball: bool = False) -> list:
    """The inner integrals at every ``s`` of ``ss`` (points, or real balls when ``ball``) by the panels of their
    windows with every error bound added (module docstring).  With ``y_i = e^s e^(-w u_i)`` the node values are
    ``E = e^(-y)``, ``Y_j = y^j e^(-y)`` and ``Z_j = y^j e^(-2y)``; only ``e^(-y)`` is computed per node: ``Y_j =
    e^(js) E e^(-j w u_i)``, the row factor ``e^(js)`` times ``E`` times the node factor ``e^(-j w u_i)`` on the
    row's window (``Z_j`` from ``e^(-2y) = E^2``; :func:`_kernel_matrix`), so every kernel of every row type is one
    matrix product in C."""
    ew = [(-w * u).exp() for u in grid.u]
    ranges = _panel_ranges(grid, w)
    ys, zs = list(grid.y_types), ([] if ball else list(grid.z_types))
    zero = arb(0)
    N, n_panels = grid.size, len(grid.panels)
    types = [("E", 0)] + [("Y", j) for j in ys] + [("Z", j) for j in zs]
    windows: dict = {"E": [], "Z": []}  # e^(-y) and e^(-2y) per row as (first node, values on the window)
    row_powers: dict = {j: [] for j in set(ys) | set(zs)}  # e^(js) per row
    kb: dict = {t: [] for t in types} | {("O", 0): []}
    outside: dict = {t: [] for t in types}
    meta = []
    for s in ss:
        s_lo, s_hi = arb(arithmetic.low(s)), arb(arithmetic.high(s))
        first, stop = _windows(grid, w, s_lo, s_hi)
        b0 = grid.starts[first] if first < n_panels else N
        b1 = grid.stops[stop - 1] if stop > first else b0
        es = s.exp()
        e = [(-(es * x)).exp() for x in ew[b0:b1]]
        windows["E"].append((b0, e))
        if zs:
            windows["Z"].append((b0, [a * a for a in e]))
        power = arb(1)
        for j in range(1, max(row_powers, default=0) + 1):
            power = power * es
            if j in row_powers:
                row_powers[j].append(power)
        e_lo, e_hi = s_lo.exp(), s_hi.exp()
        rows = {t: [zero] * n_panels for t in kb}
        for p in range(first, stop):
            m_lo, m_hi, gam, peaks, places = ranges[p]
            for key, value in _kernel_sups(e_lo * m_lo, e_hi * m_hi, gam, ys, zs, peaks, places).items():
                rows[key][p] = value
        for t in kb:
            kb[t].append(rows[t])
        window_mass = sum(grid.panel_mass[first:stop], arb(0))
        below_mass = _widen(sum(grid.panel_mass[:first], arb(0)), sum(grid.mass_error[:first], arb(0)))
        above_mass = grid.mass_beyond + sum(grid.panel_mass[stop:], arb(0))
        above_mass = _widen(above_mass, sum(grid.mass_error[stop:], arb(0)))
        r_below = (s_lo - w * grid.panel_u[first - 1][1]).exp() if first > 0 else None  # >= e^7
        has_above = stop < n_panels or grid.mass_beyond != 0
        u_first = grid.panel_u[stop][0] if stop < n_panels else grid.u_end
        r_above = (s_hi - w * u_first).exp() if has_above else None
        for kind, j in types:
            c2 = 2 if kind == "Z" else 1
            bound = arb(0)
            if r_below is not None:  # y >= r_below >= e^7 > j there: y^j e^(-c y) decreases
                bound += r_below**j * (-c2 * r_below).exp()
            if r_above is not None:  # y <= r_above there
                bound += r_above**j
            outside[(kind, j)].append([bound])
        meta.append((window_mass, below_mass, above_mass, r_below, r_above))
    mats = {"E": _padded(windows["E"], N)}
    node_powers = {j: [x**j for x in ew] for j in row_powers}
    on_windows = sum(len(values) for _, values in windows["E"])

    def kernel_products(t, cols):
        """``K_t * values`` for the row type ``t`` and the column block ``cols`` (the docstring above): the node
        and row factors folded into the kernel (:func:`folds`), or the block's values scaled by the node factors
        and the product's rows by the row factors; enclosures of the same values either way (their last bits
        may differ), a choice of speed only."""
        kind, j = t
        base = "E" if kind != "Z" else "Z"
        if kind == "E":
            return mats["E"] * grid.blocks[cols][0]
        if folds(on_windows, N, len(cols), len(ss)):
            if t not in mats:
                mats[t] = _kernel_matrix(windows[base], node_powers[j], row_powers[j], N)
            return mats[t] * grid.blocks[cols][0]
        if base not in mats:
            mats[base] = _padded(windows[base], N)
        weighted = _weighted(grid.value_rows[cols], node_powers[j])
        return _scale_rows(mats[base] * weighted, row_powers[j])

    kbs = {t: arb_mat(kb[t]) for t in kb}
    outs = {t: arb_mat(outside[t]) for t in types}
    weights = grid.blocks[(grid.col("1", 0),)][0]
    e_sum = (mats["E"] * weights).tolist()
    e_err = (kbs[("E", 0)] * grid.mass_bounds).tolist()
    o_err = (kbs[("O", 0)] * grid.mass_bounds).tolist()
    results = {}
    if ball:
        _, bounds, norms = grid.blocks[grid.majorant_cols]
        for j in ys:
            t = ("Y", j)
            results[j] = (kernel_products(t, grid.majorant_cols) + ONE * (kbs[t] * bounds + outs[t] * norms)).tolist()
    else:
        products, errors = {}, {}
        for t, cols in grid.type_cols.items():
            _, bounds, norms = grid.blocks[cols]
            products[t] = kernel_products(t, cols)
            errors[t] = kbs[t] * bounds + outs[t] * norms
        results = _group_products(grid, products, errors)
    out = []
    for r, s in enumerate(ss):
        window_mass, below_mass, above_mass, r_below, r_above = meta[r]
        om = _widen(window_mass - e_sum[r][0], o_err[r][0])
        psi = _widen(e_sum[r][0], e_err[r][0])
        if r_below is not None:
            om += below_mass * (1 - arithmetic.interval(0, 1) * (-r_below).exp())
            psi += below_mass * arithmetic.interval(0, 1) * (-r_below).exp()
        if r_above is not None:
            om += above_mass * arithmetic.interval(0, 1) * r_above
            psi += above_mass * (1 - arithmetic.interval(0, 1) * r_above)
        if ball:
            Y = {j: dict(zip(grid.majorant_cols, results[j][r])) for j in ys}
            out.append(Row(s, {}, om, psi, Y))
        else:
            out.append(Row(s, {name: res[r] for name, res in results.items()}, om, psi))
    return out


# ----------------------------------------------------------------------------- the series zone
@dataclass
class Series:
    """Exponential moments ``X[k][c] = E[e^(-k w u) h u^i]``, ``k = 0 .. K``, every column ``c`` (balls), and
    their column blocks (``arb_mat``) per group."""

    X: list
    blocks: dict = field(default_factory=dict)


def exponential_moments(grid: ThetaGrid, w: arb, K: int) -> Series:
    """``X_k[c]`` by the grid's panels with their error bounds, plus the mass beyond the last panel."""
    ew = [(-w * u).exp() for u in grid.u]
    rows, row = [], [arb(1)] * grid.size
    for _ in range(K + 1):
        rows.append(row)
        row = [a * b for a, b in zip(row, ew)]
    values = arb_mat(rows) * grid.values
    ranges = _panel_ranges(grid, w)
    kb, krow = [], [arb(1)] * len(grid.panels)
    for _ in range(K + 1):
        kb.append(krow)
        krow = [a * rng[1] for a, rng in zip(krow, ranges)]  # |e^(-k w u)| <= m_hi^k
    errors = arb_mat(kb) * grid.bounds
    beyond = (-w * grid.u_end).exp()
    tails = arb_mat([[grid.mass_beyond * beyond**k] for k in range(K + 1)]) * arb_mat([grid.norms])
    X = (values + ONE * (errors + tails)).tolist()
    series = Series(X)
    for cols in grid.blocks:
        series.blocks[cols] = arb_mat([[X[k][c] for c in cols] for k in range(K + 1)])
    return series


def series_rows(grid: ThetaGrid, series: Series, ss: list, *, ball: bool = False) -> list:
    """The inner integrals at real ``s <= S_SERIES``: ``M = sum_(r < I) (-c)^r/r! e^((j+r) s) X_(j+r) + R``
    with ``|R| <= c^I e^((j+I) s) X_(j+I)[1] sup|h u^i| / I!`` (module docstring), as matrix products."""
    I = SERIES_TERMS
    K = len(series.X) - 1
    one = grid.col("1", 0)
    ys, zs = list(grid.y_types), ([] if ball else list(grid.z_types))
    inverse = [1 / arb(math.factorial(r)) for r in range(I + 1)]
    powers_of = []
    for s in ss:
        es = s.exp()
        powers = [arb(1)]
        for _ in range(K + 1):
            powers.append(powers[-1] * es)
        powers_of.append(powers)
    zero = arb(0)
    coefficient: dict = {}
    rest: dict = {}
    for kind, c2, js in (("Y", 1, ys), ("Z", 2, zs)):
        for j in js:
            rows = []
            for powers in powers_of:
                row = [zero] * (K + 1)
                for r in range(I):
                    row[j + r] = (-c2) ** r * inverse[r] * powers[j + r]
                rows.append(row)
            coefficient[(kind, j)] = arb_mat(rows)
            rest[(kind, j)] = arb_mat(
                [[c2**I * inverse[I] * powers[j + I] * series.X[j + I][one]] for powers in powers_of]
            )
    results = {}
    if ball:
        _, _, norms = grid.blocks[grid.majorant_cols]
        X = series.blocks[grid.majorant_cols]
        for j in ys:
            t = ("Y", j)
            results[j] = (coefficient[t] * X + ONE * (rest[t] * norms)).tolist()
    else:
        products, errors = {}, {}
        for t, cols in grid.type_cols.items():
            _, _, norms = grid.blocks[cols]
            products[t] = coefficient[t] * series.blocks[cols]
            errors[t] = rest[t] * norms
        results = _group_products(grid, products, errors)
    out = []
    for r, s in enumerate(ss):
        powers = powers_of[r]
        om = sum((-((-1) ** k) * inverse[k] * powers[k] * series.X[k][one] for k in range(1, I)), arb(0))
        om = _widen(om, inverse[I] * powers[I] * series.X[I][one])
        if ball:
            Y = {j: dict(zip(grid.majorant_cols, results[j][r])) for j in ys}
            out.append(Row(s, {}, om, 1 - om, Y))
        else:
            out.append(Row(s, {name: res[r] for name, res in results.items()}, om, 1 - om))
    return out


# ----------------------------------------------------------------------------- the integrands
@dataclass(frozen=True)
class Counts:
    """``n`` as a ball, with ``exact`` the integer when it is one."""

    n: arb
    exact: int | None

    @property
    def n1(self) -> arb:
        return self.n - 1

    @property
    def n2(self) -> arb:
        return self.n - 2

    def exact_minus(self, k: int) -> int | None:
        return None if self.exact is None else self.exact - k


def _series(grid: ThetaGrid, row: Row, k: int, h) -> list:
    """``A_k[h]`` as a Taylor series in ``w`` (the groups ``("A", k, i)``)."""
    position = _position(grid, k, h)
    return [row.groups[("A", k, i)][position] for i in range(grid.order + 1)]


@cache
def _position_cache(hs: tuple, h) -> int:
    return hs.index(h)


def _position(grid: ThetaGrid, k: int, h) -> int:
    return _position_cache(grid.groups[0 if k == 1 else grid.order + 1].hs, h)


def _series_majorant(grid: ThetaGrid, row: Row, k: int, h, inv_cos: arb, extra: int = 0) -> list:
    """Upper bounds of ``|A_k[h u^extra]_i|`` on a rectangle whose ball row is ``row``
    (``|Y_j(x + iy)| = cos(y)^(-j) Y_j(x + log cos y)``)."""
    out = []
    for i in range(grid.order + 1):
        c = grid.col(h, i + extra)
        total = arb(0)
        for j, coef in _derivative(k, i):
            total += abs(coef) * arb(row.Y[j][c].abs_upper()) * inv_cos**j
        out.append(total / math.factorial(i))
    return out


def _psi_series(grid: ThetaGrid, row: Row) -> tuple:
    """``(psi as a Taylor series, log psi_0 or None)``."""
    psi = [-row.groups[("om", i)][0] for i in range(1, grid.order + 1)]
    psi0 = 1 - row.om
    if psi0.overlaps(row.psi):
        psi0 = psi0.intersection(row.psi)
    if row.om < 0.5:
        log0 = (-row.om).log1p()
    elif psi0 > 0:
        log0 = psi0.log()
    else:
        log0 = None
    return [psi0] + psi, log0


def _psi_majorant(grid: ThetaGrid, row: Row, inv_cos: arb) -> list:
    """``[lam, |psi_1|, ..]``: a log bound of ``|psi_0|`` (``|psi(x + iy)| <= psi(x + log cos y)``) and bounds
    of the higher coefficients on the rectangle."""
    out = [_log_psi_bound(row.om, row.psi)]
    for i in range(1, grid.order + 1):
        c = grid.col("1", i)
        terms = (abs(coef) * arb(row.Y[j][c].abs_upper()) * inv_cos**j for j, coef in _derivative(1, i - 1))
        out.append(sum(terms, arb(0)) / math.factorial(i))
    return out


def _off_sum(grid: ThetaGrid, row: Row) -> list:
    """``S(s)`` as a Taylor series (module docstring)."""
    J = grid.order
    co = grid.coefficients
    blocks = [row.groups[("A", 1, i)] for i in range(J + 1)]  # position 0: h = 1, then Q_1 .. Q_m, then R
    total = [arb(0)] * (J + 1)
    degrees = [l for l in range(1, grid.m + 1) if not co.a[l].is_zero()]  # a ball that may hold 0 stays in
    if degrees:  # sum_l a_l (s_l * s_l)_k = sum_(i + j = k) G_ij, G = S diag(a) S^T: one product in C
        S = arb_mat([[b[l] for l in degrees] for b in blocks])
        G = arb_mat([[b[l] * co.a[l] for l in degrees] for b in blocks]) * S.transpose()
        total = [sum((G[i, k - i] for i in range(k + 1)), arb(0)) for k in range(J + 1)]
    if grid.kernel.degree is not None:
        return total
    one = [b[0] for b in blocks]
    rest = [b[grid.m + 1] for b in blocks]
    total = _add(total, _scale(co.tail, _mul(one, one)))
    total = _add(total, _scale(-2, _mul(one, rest)))
    eps = _parseval(grid, row, blocks)
    for i in range(J + 1):
        spread = co.tail_abs * sum((eps[a] * eps[i - a] for a in range(i + 1)), arb(0))
        if i == 0 and grid.kernel.positive:
            total[0] += arithmetic.interval(0, 1) * spread
        else:
            total[i] = _widen(total[i], spread)
    return total


def _parseval(grid: ThetaGrid, row: Row, blocks: list) -> list:
    """Upper bounds ``eps_i >= |A_1[P_l]_i|`` for every ``l > m``: by Parseval when the grid carries the
    ``Z`` rows, and at most ``E|g^(i)|`` (``g^(i)`` the ``i``-th coefficient's kernel)."""
    d = grid.d
    out = []
    for i in range(grid.order + 1):
        crude = arb(row.groups[("abs", i)][0].abs_upper())
        if not grid.parseval:
            out.append(crude)
            continue
        block = blocks[i]
        one = block[0]
        captured = one * one
        for l in range(1, grid.m + 1):
            value = one - block[l]  # A_1[P_l] = A_1[1] - A_1[Q_l]
            captured += harmonic_dimension(d, l) * value * value
        rest = arb((row.groups[("par", i)][0] - captured).upper()).max(arb(0))
        out.append((rest / harmonic_dimension(d, grid.m + 1)).sqrt().min(crude))
    return out


def _off_majorant(grid: ThetaGrid, row: Row, inv_cos: arb) -> list:
    """Upper bounds of ``|S_i|`` on a rectangle: ``|Q_l| <= min(2, P_l'(1) u)``, ``|R| <= sum_{l>m} |a_l|``."""
    co = grid.coefficients
    one = _series_majorant(grid, row, 1, "1", inv_cos)
    lin = _series_majorant(grid, row, 1, "1", inv_cos, extra=1)
    total = [arb(0)] * (grid.order + 1)
    for l in range(1, grid.m + 1):
        if co.a[l] == 0:
            continue
        slope = arithmetic.exact(derivative_at_one(grid.d, l))
        bound = [(2 * x).min(slope * y) for x, y in zip(one, lin)]
        total = _add(total, _scale(arb(abs(co.a[l]).abs_upper()), _mul(bound, bound)))
    if grid.kernel.degree is None:
        total = _add(total, _scale(arb(co.tail.abs_upper()) + 3 * co.tail_abs, _mul(one, one)))
    return total


def _terms(grid: ThetaGrid, row: Row, names: tuple) -> dict:
    """``{name: [(k, series), ...]}``: each integrand ``sum_k c_k(n) psi^(n-k) series`` with ``c_1 = n`` (the
    diagonal sums, one point) and ``c_2 = n (n - 1)`` (the pairs), the series Taylor series in ``w``."""
    diag = [row.groups[("A", 2, i)] for i in range(grid.order + 1)]  # positions: 1, 2D, u2
    out = {}
    if "noise" in names:
        out["noise"] = [(1, [b[0] for b in diag])]
    if "bias" in names:
        out["bias"] = [(1, [b[1] for b in diag]), (2, _off_sum(grid, row))]
    if "q" in names:
        a1u = [row.groups[("A", 1, i)][1] for i in range(grid.order + 1)]  # Q_1 = u
        out["q"] = [(1, [b[2] for b in diag]), (2, _mul(a1u, a1u))]
    return out


def _count_factor(counts: Counts, k: int) -> arb:
    """``c_k(n)``: ``n`` for ``k = 1``, ``n (n - 1)`` for ``k = 2``."""
    return counts.n if k == 1 else counts.n * counts.n1


def _count_derivative(counts: Counts, k: int, i: int) -> arb | None:
    """``d^i c_k/dn^i``: for ``c_1 = n``: ``n``, ``1``, then 0; for ``c_2 = n (n - 1)``: ``n (n - 1)``, ``2 n - 1``,
    ``2``, then 0.  None for a derivative that is identically 0 (a structural zero, never a ball that might be)."""
    if i == 0:
        return _count_factor(counts, k)
    if i == 1:
        return arb(1) if k == 1 else 2 * counts.n - 1
    if i == 2 and k == 2:
        return arb(2)
    return None


def _integrands(grid: ThetaGrid, row: Row, counts: Counts, names: tuple) -> dict:
    """The Taylor series of the integrands ``noise`` (of ``N``), ``bias``, ``q`` at one point row."""
    psi, log0 = _psi_series(grid, row)
    terms = _terms(grid, row, names)
    powers = {
        k: _power(psi, log0, counts.n - k, counts.exact_minus(k)) for k in {k for t in terms.values() for k, _ in t}
    }
    length = grid.order + 1
    out = {}
    for name, parts in terms.items():
        total = arb_series([arb(0)], prec=length)
        for k, series in parts:
            total += _count_factor(counts, k) * (_series_of(series) * powers[k])
        out[name] = _coefficients(total, length)
    return out


def _log_series(psi: list, log0: arb) -> list:
    """``log psi`` as a Taylor series from ``psi`` and ``log psi_0``: ``psi (log psi)' = psi'``, so
    ``l_k = (k p_k - sum_{0<j<k} j l_j p_(k-j)) / (k p_0)``."""
    out = [log0]
    for k in range(1, len(psi)):
        total = k * psi[k]
        for j in range(1, k):
            total -= j * out[j] * psi[k - j]
        out.append(total / (k * psi[0]))
    return out


def _series_of(coefficients: list) -> arb_series:
    """A Taylor series in ``w`` as python-flint's truncated power series (products in C, ``arb_poly_mullow``;
    python-flint truncates every series at ``ctx.cap`` terms, so a longer one is refused)."""
    if len(coefficients) > ctx.cap:
        raise ValueError(f"a Taylor series of {len(coefficients)} terms exceeds python-flint's ctx.cap = {ctx.cap}")
    return arb_series(coefficients, prec=len(coefficients))


def _coefficients(series: arb_series, length: int) -> list:
    """The ``length`` coefficients of ``series`` (python-flint drops trailing zeros)."""
    out = series.coeffs()
    return out + [arb(0)] * (length - len(out))


def _leibniz_table(centre: Counts, counts: Counts, ks: tuple) -> dict:
    """``{(k, j): ((i, C(j, i) c_k^(i)), ...)}`` for ``j = 0 .. N_ORDER``: the weights of ``(log psi)^(j-i)`` in the
    ``j``-th ``n``-derivative of ``c_k(n) psi^(n-k)`` (:func:`_integrand_models`), at the point ``centre`` for ``j <
    N_ORDER`` and over the ball ``counts`` for ``j = N_ORDER``; the structural zeros of :func:`_count_derivative`
    left out.  The same for every node of a Gauss sum."""
    table = {}
    for k in ks:
        for j in range(N_ORDER + 1):
            at = centre if j < N_ORDER else counts
            weights = ((i, _count_derivative(at, k, i)) for i in range(j + 1))
            table[(k, j)] = tuple((i, math.comb(j, i) * c) for i, c in weights if c is not None)
    return table


def _integrand_models(grid: ThetaGrid, row: Row, ends: tuple, table: dict, names: tuple) -> dict | None:
    """``{j: {name: series}}`` for ``j = 0 .. N_ORDER``: the ``j``-th ``n``-derivative of the integrands of
    :func:`_integrands`, at the point ``ends[0]`` (the ball's centre) for ``j < N_ORDER`` and over the ball
    ``ends[1]`` for ``j = N_ORDER`` (each then holds the derivative at every ``n`` of the ball).  By Leibniz's
    rule with ``d/dn psi^(n-k) = log(psi) psi^(n-k)``, ``d^j/dn^j [c_k psi^(n-k)] = sum_i C(j, i) c_k^(i) (log
    psi)^(j-i) psi^(n-k)`` (the weights ``C(j, i) c_k^(i)``: :func:`_leibniz_table`; ``log psi`` a Taylor series in
    ``w``, and ``psi^(n-k) = exp((n - k) log psi)`` as a series, in C; the series are python-flint's,
    :func:`_series_of`).  None where ``psi_0`` may be 0 (no logarithm)."""
    psi, log0 = _psi_series(grid, row)
    if log0 is None or not log0.is_finite():
        return None
    length = grid.order + 1
    log_psi = _series_of(_log_series(psi, log0))
    logs = [arb_series([arb(1)], prec=length)]  # (log psi)^0, (log psi)^1, ...
    for _ in range(N_ORDER):
        logs.append(logs[-1] * log_psi)
    terms = {name: [(k, _series_of(series)) for k, series in parts] for name, parts in _terms(grid, row, names).items()}
    ks = sorted({k for parts in terms.values() for k, _ in parts})
    factors = {}
    for k in ks:
        for j in range(N_ORDER + 1):
            factor = arb_series([arb(0)], prec=length)
            for i, weight in table[(k, j)]:
                factor += weight * logs[j - i]
            factors[(k, j)] = factor
    powers = {(k, e): ((ends[e].n - k) * log_psi).exp() for k in ks for e in (0, 1)}  # psi^(n-k) = e^((n-k) log psi)
    out: dict = {j: {} for j in range(N_ORDER + 1)}
    for name, parts in terms.items():
        bases = [(k, series * powers[(k, 0)], series * powers[(k, 1)]) for k, series in parts]
        for j in range(N_ORDER + 1):
            total = arb_series([arb(0)], prec=length)
            for k, at_centre, over in bases:
                total += factors[(k, j)] * (at_centre if j < N_ORDER else over)
            out[j][name] = total
    return out


def _constant(value: arb, order: int) -> list:
    """The Taylor series of a constant: ``[value, 0, ..., 0]``."""
    return [value] + [arb(0)] * order


def _majorants(grid: ThetaGrid, row: Row, counts: Counts, names: tuple, inv_cos: arb) -> dict:
    """Upper bounds of ``|integrand_i|`` on a rectangle whose ball row is ``row`` (module docstring)."""
    psi = _psi_majorant(grid, row, inv_cos)
    n = arb(counts.n.abs_upper())
    pairs = arb((counts.n * counts.n1).abs_upper())
    p1 = _power_majorant(psi, counts.n1, counts.exact_minus(1))
    out = {}
    if "noise" in names:
        out["noise"] = _scale(n, _mul(_series_majorant(grid, row, 2, "1", inv_cos), p1))
    if "bias" in names or "q" in names:
        p2 = _power_majorant(psi, counts.n2, counts.exact_minus(2))
    if "bias" in names:
        if grid.kernel.positive:  # D >= 0
            diag = _series_majorant(grid, row, 2, "2D", inv_cos)
        else:
            diag = _scale(2 * grid.kernel.gap_sup, _series_majorant(grid, row, 2, "1", inv_cos))
        out["bias"] = _add(_scale(n, _mul(diag, p1)), _scale(pairs, _mul(p2, _off_majorant(grid, row, inv_cos))))
    if "q" in names:
        a1u = _series_majorant(grid, row, 1, "1", inv_cos, extra=1)
        diag = _scale(n, _mul(_series_majorant(grid, row, 2, "u2", inv_cos), p1))
        out["q"] = _add(diag, _scale(pairs, _mul(p2, _mul(a1u, a1u))))
    return out


# ----------------------------------------------------------------------------- the outer integral
@dataclass
class Parts:
    """Taylor coefficients in ``w`` (``[c_0, ..., c_J]``, ``c_i`` the ``i``-th derivative over ``i!``) of the
    unit quantities ``noise`` (``N = E[sum_i p_i^2]``), ``bias`` (of the unit kernel) and ``q``, as balls."""

    coefficients: dict
    info: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)  # per quantity and coefficient: the step I(n + 1) - I(n) (n_step)


def _gauss_panel(a: float, b: float, q: int):
    beta = HEIGHT / (0.5 * (b - a))
    return panel(a, b, q, beta + math.sqrt(beta * beta + 1.0))


def _ball_row_range(p) -> arb:
    """``[x_lo + log cos(HEIGHT), x_hi]``, the real ``s`` the shift lemma needs on the panel's rectangle."""
    real, _ = p.rectangle()
    lo = arb(arithmetic.low(real)) + arb(HEIGHT).cos().log()
    return arithmetic.interval(arithmetic.low(lo), arithmetic.high(real))


def _rows(grid: ThetaGrid, w: arb, series: Series, ss: list, ball: bool = False) -> list:
    """Rows at the points (or real balls) ``ss``: by the series where the ball lies below ``S_SERIES``."""
    low = [k for k, s in enumerate(ss) if arithmetic.high(s) <= S_SERIES]
    high = [k for k, s in enumerate(ss) if arithmetic.high(s) > S_SERIES]
    out: list = [None] * len(ss)
    if low:
        for k, row in zip(low, series_rows(grid, series, [ss[k] for k in low], ball=ball)):
            out[k] = row
    if high:
        for k, row in zip(high, direct_rows(grid, w, [ss[k] for k in high], ball=ball)):
            out[k] = row
    return out


def _panel_parts(grid, w, series, counts, names, panels) -> list:
    """``(models, errors, direct)`` per outer panel: the Gauss sums of the integrands as Taylor models in ``n``
    (:func:`_gauss_sum`), their Bernstein bounds, and the part of the sums taken directly
    (:func:`_gauss_sum_parts`)."""
    rows = _rows(grid, w, series, [x for p in panels for x in p.nodes])
    balls = _rows(grid, w, series, [_ball_row_range(p) for p in panels], ball=True)
    inv_cos = 1 / arb(HEIGHT).cos()
    out, k = [], 0
    for index, p in enumerate(panels):
        values, direct = _gauss_sum_parts(grid, rows[k : k + len(p.weights)], p.weights, counts, names)
        k += len(p.weights)
        bound = _majorants(grid, balls[index], counts, names, inv_cos)
        out.append((values, {name: [p.factor * x for x in bound[name]] for name in names}, direct))
    return out


def _gauss_sum(grid: ThetaGrid, rows: list, weights: list, counts: Counts, names: tuple) -> dict:
    """``G(n) = sum_j weight_j F(s_j; n)`` for the integrands ``names`` as a Taylor model in ``n``: ``{name:
    [model of coefficient i]}``, each model ``[G(n_c), G'(n_c), ..., G^(K)([n])]`` whose ball
    (:func:`_collapse` with :func:`_spans`) holds every ``n`` of the ball.  The models of several panels, and
    of several integrands with ball factors (the loss ``sigma^2 N + L^2 B``), are added *before* they are
    collapsed (:func:`integrate`): the variation in ``n`` of a sum is then counted once, not once per term.

    A point ``n`` (or an integer) is summed directly (``G^(j) = 0`` for ``j >= 1``).  For an interval of ``n``
    the sum is a Taylor model of order :data:`N_ORDER` in ``n`` (Taylor's theorem with the Lagrange
    remainder): with ``n_c`` the ball's centre, ``r`` its radius and ``K = N_ORDER``,
    ``G(n) in sum_(j<K) G^(j)(n_c) T_j + G^(K)([n]) T_K``, ``T_j`` the range of ``(n - n_c)^j / j!`` over
    ``|n - n_c| <= r`` (``[0, r^j/j!]`` for even ``j``, ``[-r^j/j!, r^j/j!]`` for odd), ``G^(j)`` the Gauss sums
    of the ``n``-derivatives of the integrands (:func:`_integrand_models`): the first ``K`` at the point
    ``n_c``, the last a ball over the whole interval.  The direct ball sum carries each node's spread in ``n``
    separately, and the integrands cancel across ``s`` (a derivative in ``w`` is a small difference of large
    terms): on ``n`` in ``[100, 101]`` the slope of the noise part came out +/- 60%.  A form of order 2 still
    hid the slope of the loss over ``n`` in ``[1000, 1140]`` at ``w = 10.57`` (d = 3: radius 6.3e-5 against
    a true variation of 1.6e-5); each further order scales the remainder by about ``r |log psi|`` where
    ``psi^n`` matters, and adding the models before collapsing them keeps the cancellation of the noise and
    bias slopes, and of the panels' slopes, in ``n``.  Nodes where the
    slope has no logarithm (``psi_0`` may be 0, far in the upper tail, where the integrand is negligible) are
    summed directly."""
    return _gauss_sum_parts(grid, rows, weights, counts, names)[0]


def _gauss_sum_parts(grid: ThetaGrid, rows: list, weights: list, counts: Counts, names: tuple) -> tuple:
    """``(model, direct)``: :func:`_gauss_sum`'s Taylor models, and apart the part of their values summed
    directly (``{name: [ball of coefficient i]}``, already in the models' value): its variation in ``n`` is
    inside its balls, not in the models' derivatives (:func:`integrate`'s step in ``n`` counts it so)."""
    J, K = grid.order, N_ORDER
    direct = {name: [arb(0)] * (J + 1) for name in names}
    if counts.exact is not None or counts.n.rad() == 0:
        for row, weight in zip(rows, weights):
            integrand = _integrands(grid, row, counts, names)
            for name in names:
                direct[name] = _add(direct[name], _scale(weight, integrand[name]))
        return {name: [[direct[name][i]] + [arb(0)] * K for i in range(J + 1)] for name in names}, direct
    centre = Counts(arb(counts.n.mid()), None)
    zero = arb_series([arb(0)], prec=J + 1)
    sums = {j: dict.fromkeys(names, zero) for j in range(K + 1)}
    table = _leibniz_table(centre, counts, (1, 2))
    for row, weight in zip(rows, weights):
        derivatives = _integrand_models(grid, row, (centre, counts), table, names)
        if derivatives is None:
            integrand = _integrands(grid, row, counts, names)
            for name in names:
                direct[name] = _add(direct[name], _scale(weight, integrand[name]))
            continue
        for j in range(K + 1):
            for name in names:
                sums[j][name] = sums[j][name] + weight * derivatives[j][name]
    model = {name: [[direct[name][i]] + [arb(0)] * K for i in range(J + 1)] for name in names}
    for j in range(K + 1):
        for name in names:
            coefficients = _coefficients(sums[j][name], J + 1)
            for i in range(J + 1):
                model[name][i][j] += coefficients[i]
    return model, direct


def _spans(counts: Counts) -> list:
    """``T_0 .. T_K`` of :func:`_gauss_sum`: the range of ``(n - n_c)^j / j!`` over the ball ``n`` (``T_0 = 1``;
    a point ``n`` has ``T_j = 0`` beyond)."""
    radius = arb(counts.n.rad())
    spans = [arb(1)]
    for j in range(1, N_ORDER + 1):
        top = radius**j / math.factorial(j)
        spans.append(arithmetic.interval(0.0, 0.0).union(top) if j % 2 == 0 else ONE * top)
    return spans


def _collapse(model: list, spans: list) -> arb:
    """The ball of a Taylor model in ``n`` (``[G(n_c), G'(n_c), ..., G^(K)([n])]``): ``sum_j T_j model_j``."""
    return sum((span * term for span, term in zip(spans, model)), arb(0))


def _pseudo_row(grid: ThetaGrid, series: Series, factors: dict, om: arb, psi: arb) -> Row:
    """A ball row of upper bounds: ``Y[j][c] = factor_j * |X[k_j][c]|`` for ``factors[j] = (k_j, factor_j)``."""
    Y = {
        j: {c: arb((factor * series.X[k][c]).abs_upper()) for c in grid.majorant_cols}
        for j, (k, factor) in factors.items()
    }
    return Row(arb(0), {}, om, psi, Y)


def _lower_tail(grid: ThetaGrid, series: Series, counts: Counts, names: tuple, s_lo: float) -> dict:
    """``int_(-inf)^(s_lo) |integrand_i|``: ``Y_j(s - V) <= e^(j s) e^(-j V)``, so ``M_j <= e^(j s) X_j`` for
    ``s <= s_lo``, and every term has degree ``>= 2`` in ``e^s``: at most the majorant at ``s_lo`` over 2."""
    es = arb(s_lo).exp()
    factors = {j: (j, es**j) for j in grid.y_types}
    row = _pseudo_row(grid, series, factors, arb(0), arb(1))  # psi <= 1
    bound = _majorants(grid, row, counts, names, arb(1))
    return {name: [x / 2 for x in values] for name, values in bound.items()}


def _upper_tail(grid: ThetaGrid, series: Series, counts: Counts, names: tuple, top: Row, radius: arb) -> dict:
    """``int_(s_hi)^inf |integrand_i|``, the smaller of two bounds: (a) ``psi <= psi(s_hi)``, every moment at
    most ``(j/e)^j E|h u^i|`` and one factor of each term integrated (``int Y_j ds = Gamma(j) <= e (j/e)^j``):
    ``e`` times the majorant; (b) when ``R = e^(s_hi - 2w) >= 2 K`` (``K`` the largest degree of a term),
    ``y >= R`` everywhere and ``Y_j <= R^j e^(-R)``: the majorant at ``s_hi`` times ``2/R``."""
    e1 = arb(1).exp()
    peak = {j: (0, (arb(j) / e1) ** j) for j in grid.y_types}
    first = _majorants(grid, _pseudo_row(grid, series, peak, top.om, top.psi), counts, names, arb(1))
    first = {name: [e1 * x for x in values] for name, values in first.items()}
    degree = 4 * grid.order + 8
    if not radius > 2 * degree:
        return first
    far = {j: (0, radius**j * (-radius).exp()) for j in grid.y_types}
    second = _majorants(grid, _pseudo_row(grid, series, far, arb(0), arb(1)), counts, names, arb(1))
    return {name: [x.min(2 * y / radius) for x, y in zip(first[name], second[name])] for name in names}


def integrate(
    grid: ThetaGrid,
    w: arb,
    counts: Counts,
    names: tuple,
    rtol: float,
    weights: dict,
    *,
    s_range: tuple,
    scale_w: float,
    max_splits: int = 6,
    combine: dict | None = None,
    n_step: bool = False,
) -> Parts:
    """``int ds`` of the integrands ``names`` over the whole line (module docstring): Gauss panels of width
    :data:`H_S` on ``s_range`` and the two tails.  A panel whose error bound exceeds its share of the target
    is halved (at most ``max_splits`` times); the target of coefficient ``i`` is ``rtol * L0 / scale_w^i``,
    ``L0 = sum_name weights[name] |value_name|`` from the first pass (the loss).  Every ball holds the true
    coefficient whatever ``rtol``.  ``combine``: ``{combined name: {name: factor ball}}`` adds
    ``sum factor * integral`` as a quantity of its own, its Taylor models in ``n`` added before they are
    collapsed (:func:`_gauss_sum`; for an interval of ``n`` tighter than the sum of the separate balls).

    ``n_step`` (an interval of ``n``): ``Parts.steps`` holds, per quantity and coefficient, a ball of the step
    ``I(n + 1) - I(n)`` for every ``n`` with ``n`` and ``n + 1`` in the interval (:func:`_step`)."""
    J = grid.order
    s_lo, s_hi = s_range
    series = exponential_moments(grid, w, 2 * J + 3 + SERIES_TERMS)
    edges = _edges(s_lo, s_hi)
    width = s_hi - s_lo
    pending = list(itertools.pairwise(edges))
    totals = {name: [[arb(0)] * (N_ORDER + 1) for _ in range(J + 1)] for name in names}
    errors = {name: [arb(0)] * (J + 1) for name in names}
    directs = {name: [arb(0)] * (J + 1) for name in names}  # |the directly summed part|, for the step in n
    targets = None
    rows = 0
    for depth in range(max_splits + 1):
        panels = [_gauss_panel(a, b, grid.q_s) for a, b in pending]
        results = _panel_parts(grid, w, series, counts, names, panels)
        rows += sum(len(p.nodes) + 1 for p in panels)
        if targets is None:
            targets = _targets(results, names, rtol, weights, scale_w, J)
        retry = []
        for (a, b), (models, errs, direct) in zip(pending, results):
            share = 0.5 * (b - a) / width
            too_big = any(errs[name][i] > share * targets[name][i] for name in names for i in range(J + 1))
            if too_big and depth < max_splits:
                mid = 0.5 * (a + b)
                retry.extend([(a, mid), (mid, b)])
                continue
            for name in names:
                totals[name] = [_add(total, model) for total, model in zip(totals[name], models[name])]
                errors[name] = _add(errors[name], errs[name])
                directs[name] = _add(directs[name], [arb(x.abs_upper()) for x in direct[name]])
        if not retry:
            break
        pending = retry
    low = _lower_tail(grid, series, counts, names, s_lo)
    top = _rows(grid, w, series, [arb(s_hi)])[0]  # psi is nonincreasing: psi(s) <= psi(s_hi) beyond
    radius = (arb(s_hi) - 2 * arb(arithmetic.high(w))).exp()
    high = _upper_tail(grid, series, counts, names, top, radius)
    spans = _spans(counts)
    slack = {name: [errors[name][i] + low[name][i] + high[name][i] for i in range(J + 1)] for name in names}
    out = {name: [_widen(_collapse(totals[name][i], spans), slack[name][i]) for i in range(J + 1)] for name in names}
    steps: dict = {}
    if n_step:
        if counts.exact is not None or counts.n.rad() == 0:
            raise ParameterError("n", "an interval holding n and n + 1 for a step in n", counts.n)
        loose = {name: [slack[name][i] + directs[name][i] for i in range(J + 1)] for name in names}
        steps = {name: [_step(totals[name][i], spans, loose[name][i]) for i in range(J + 1)] for name in names}
    for combined, factors in (combine or {}).items():
        out[combined] = []
        if n_step:
            steps[combined] = []
        for i in range(J + 1):
            model = [sum((factors[name] * totals[name][i][j] for name in factors), arb(0)) for j in range(N_ORDER + 1)]
            spread = sum((arb(factors[name].abs_upper()) * slack[name][i] for name in factors), arb(0))
            out[combined].append(_widen(_collapse(model, spans), spread))
            if n_step:
                loose_sum = sum((arb(factors[name].abs_upper()) * loose[name][i] for name in factors), arb(0))
                steps[combined].append(_step(model, spans, loose_sum))
    info = {
        "s_range": (s_lo, s_hi),
        "theta_nodes": grid.size,
        "theta_panels": len(grid.panels),
        "rows": rows,
        "tails": {name: (float(low[name][0].mid()), float(high[name][0].mid())) for name in names},
    }
    return Parts(out, info, steps)


def _step(model: list, spans: list, loose: arb) -> arb:
    """A ball of ``I(n + 1) - I(n)`` for every ``n`` with ``n``, ``n + 1`` in the ball, where ``I = G + E``: ``G``
    the Taylor model ``[G(n_c), ..., G^(K)([n])]`` of the sums with logarithms (:func:`_gauss_sum`) and ``|E| <=
    loose`` at every ``n`` of the ball (the quadrature's error bound, the tails and the directly summed part).
    ``G(n + 1) - G(n)`` is ``G'`` at some ``t`` between, and ``G'(t) = sum_(1 <= j < K) G^(j)(n_c) (t - n_c)^(j-1)
    / (j-1)! + G^(K)(xi) (t - n_c)^(K-1) / (K-1)!`` (Taylor's theorem for ``G'``): the model shifted by one, over
    the spans ``T_0 .. T_(K-1)``; ``E(n + 1) - E(n)`` lies in ``[-2 loose, 2 loose]``."""
    slope = sum((span * term for span, term in zip(spans, model[1:])), arb(0))
    return _widen(slope, 2 * loose)


def sup_coefficients(
    grid: ThetaGrid, w: arb, counts: Counts, names: tuple, *, s_range: tuple, width: float = 0.5
) -> dict:
    """Upper bounds of ``sup |c_i(w)|`` over the ball ``w`` (and ``n``) for every coefficient ``i``: ``|int F_i ds|
    <= sum_panels width * sup_panel |F_i| + tails``, each ``sup`` the majorant on the ball row of the panel
    (real ``s`` and ``w`` balls, no rectangle: ``cos = 1``).  A Riemann upper sum: a bound, not a value (used for
    the remainders of the mean value theorem in :mod:`lipschitz_icl.certified.wstar`)."""
    J = grid.order
    s_lo, s_hi = s_range
    series = exponential_moments(grid, w, 2 * J + 3 + SERIES_TERMS)
    count = max(1, math.ceil((s_hi - s_lo) / width))
    edges = [s_lo + (s_hi - s_lo) * k / count for k in range(count + 1)]
    step = arb(s_hi - s_lo) / count
    balls = [arithmetic.interval(a, b) for a, b in itertools.pairwise(edges)]
    rows = _rows(grid, w, series, balls, ball=True)
    totals = {name: [arb(0)] * (J + 1) for name in names}
    for row in rows:
        bound = _majorants(grid, row, counts, names, arb(1))
        for name in names:
            totals[name] = _add(totals[name], _scale(step, bound[name]))
    low = _lower_tail(grid, series, counts, names, s_lo)
    top = _rows(grid, w, series, [arb(s_hi)])[0]  # psi is nonincreasing: psi(s) <= psi(s_hi) beyond
    radius = (arb(s_hi) - 2 * arb(arithmetic.high(w))).exp()
    high = _upper_tail(grid, series, counts, names, top, radius)
    return {
        name: [arb((totals[name][i] + low[name][i] + high[name][i]).upper()) for i in range(J + 1)] for name in names
    }


def _targets(results: list, names: tuple, rtol: float, weights: dict, scale_w: float, J: int) -> dict:
    """Absolute targets per name and coefficient from the first pass (they set the work, not the balls)."""
    totals = {name: sum((models[name][0][0] for models, *_ in results), arb(0)) for name in names}
    loss = sum((weights.get(name, 0.0) * abs(float(totals[name].mid())) for name in names), 0.0)
    out = {}
    for name in names:
        own = abs(float(totals[name].mid()))
        weight = weights.get(name, 0.0)
        base = loss / weight if weight > 0 and loss > 0 else own
        base = base if base > 0 else 1e-300
        out[name] = [rtol * base / scale_w**i for i in range(J + 1)]
    return out


def _edges(s_lo: float, s_hi: float) -> list:
    """Panel ends from ``s_lo`` to ``s_hi``, about ``H_S`` apart, with ``S_SERIES`` among them when inside."""
    edges: list = []
    for lo, hi in ((s_lo, min(S_SERIES, s_hi)), (max(S_SERIES, s_lo), s_hi)):
        if hi <= lo:
            continue
        count = max(1, math.ceil((hi - lo) / H_S - 1e-9))
        part = [lo + (hi - lo) * k / count for k in range(count + 1)]
        edges = part if not edges else edges + part[1:]
    return edges


def estimate_work(d: int, w: float, s_top: float, q: int, q_s: int) -> float:
    """Ball operations of the direct zone, before any is done: the ``s`` nodes from ``S_SERIES`` to ``s_top``
    times the ``theta`` nodes of a window (``V`` from ``s - 7`` to ``s + window_extent(d)``, ``H_V`` panels
    of ``q`` nodes where ``y`` may be large, fewer above)."""
    if s_top <= S_SERIES:
        return 0.0
    s_nodes = (s_top - S_SERIES) / H_S * (q_s + 1)
    v_window = min(2.0 * w, max(s_top, 0.0) + 10.0)
    theta_nodes = (v_window / H_V + 12.0) * q
    return s_nodes * theta_nodes
