"""The ICL loss along the complement of ``col(B)``, exact in ``n``: where ``c* B B^T`` is a saddle.

Paper: Theorem 4.4 (the optimal ``M`` lives on ``col(B)``) is proved for linear links; its low-rank
experiment (Figure 9) also uses quadratic and cosine links.  Registry: ``thm44.saddle``.

Setting.  ``x`` and the query ``q`` uniform on ``S^{d-1}``, ``B`` ``d x k`` with orthonormal columns,
``P = B B^T``, ``Q = I - P``, ``z = B^T x``.  Tasks ``f(x) = theta . phi_a(z) (+ b)`` with ``a`` uniform on
``S^{k-1}`` and ``E theta theta^T = v_t I`` (:mod:`lipschitz_icl.tasks.registry`): quadratic ``phi = (a.z)^2``,
``v_t = L^2/3``; cosine ``phi = (cos w a.z, sin w a.z)``, ``v_t = L^2/(2 w^2)``; linear ``phi = a.z``,
``v_t = L^2``; affine ``phi = a.z``, ``v_t = L^2/3``.  Along ``M(s) = c P + s Q`` the logits are

    x_i^T M(s) q = c z_i . z_q + s u_i,     u_i = (Q x_i) . (Q q),

and, with ``e_i = exp(x_i^T M q)``, ``S = sum_i e_i``, ``h_i = phi_a(z_i) - phi_a(z_q)`` (the query's
feature subtracted: the softmax weights sum to one), the loss of one prompt averaged over ``theta`` and
the label noise is

    F = v_t |A/S|^2 + sigma^2 C/S^2,     A = sum_i e_i h_i,   C = sum_i e_i^2.

1. Exact in ``n`` (Laplace).  ``1/S^m = int_0^inf t^(m-1) exp(-t S) dt / (m-1)!``, and for i.i.d. points
   ``E[prod_r (sum_i f_r(x_i)) exp(-t S)] = d^R/(dl_1..dl_R) G(l, t)^n`` at ``l = 0``,
   ``G = E[exp(sum_r l_r f_r(x)) exp(-t e(x))]``; by Faa di Bruno this is the sum over the set
   partitions ``pi`` of ``{1..R}`` of ``n (n-1) ... (n-|pi|+1) g_0^(n-|pi|) prod_(blocks b) g_b``,
   ``g_b(t) = E[prod_(r in b) f_r(x) exp(-t e(x))]`` (:func:`laplace_moment_expr` derives it with ``n``
   symbolic; :func:`check_laplace_moment` confirms it).  So every expected monomial
   ``prod_r (sum_i f_r) / S^m`` is a one-dimensional ``t``-integral of single-point moments, and the loss
   (``|A|^2/S^2``: ``n g[e^2 |h|^2] g_0^(n-1) + n(n-1) |g[e h]|^2 g_0^(n-2)`` under ``int t dt``) is exact
   in ``n`` up to quadrature.
2. The curvature along ``Q`` at ``s = 0``.  The reflection ``x_i -> (P - Q) x_i`` keeps the prompt's law
   and every label and flips ``u_i``, so ``dL/ds = 0`` at ``s = 0``.  Given ``z_i``, ``Q x_i`` is uniform on
   the sphere of radius ``sqrt(1 - |z_i|^2)`` of ``col(B)^perp``, so ``E[u_i | z_i] = 0`` and
   ``E[u_i^2 | z_i] = v(z_i) = (1 - |z_i|^2)(1 - |z_q|^2)/(d - k)``; with ``D_i = e_i d/de_i`` (``d/ds`` of
   ``e_i`` is ``u_i e_i``) the cross terms vanish and

       d^2 L/ds^2 = E[sum_i v(z_i) D_i^2 F],

   which :func:`curvature_power_sums` writes in power sums (``V_j = sum v e^j``, ``W_j = sum v e^j h``,
   ``W_2hh = sum v e^2 |h|^2``), checked against direct differentiation by :func:`check_curvature_identity`:

       bias  / v_t:    2 W_2hh/S^2 + 2 A.W_1/S^2 - 8 A.W_2/S^3 - 2 V_1 |A|^2/S^3 + 6 V_2 |A|^2/S^4
       noise / s^2:    4 V_2/S^2 - 8 V_3/S^3 - 2 V_1 C/S^3 + 6 V_2 C/S^4.

   Its sign decides whether ``c B B^T`` is a minimum or a saddle along ``Q``.  The bias part carries the
   information of the complement: on the sphere ``|z|^2 = 1 - |Q x|^2``, so an even link (the quadratic;
   the even part of the cosine) is partly a function of ``Q x``.
3. The rival at large ``n`` (delta method, :mod:`lipschitz_icl.derivations.ratio_expansion`):
   ``E|A/S|^2 = |r|^2 + sum_c (E[e^2 (h_c - r_c)^2] - 2 r_c E[e^2 (h_c - r_c)])/(n E[e]^2) + O(n^-2)``,
   ``r = E[e h]/E[e]``, and ``E sum p_i^2 = E[e^2]/(n E[e]^2)``: :func:`large_n_loss`.

The Laplace representation is that of :mod:`lipschitz_icl.exact.route` (``M = w I``, two power sums); here it
carries up to three power sums and ``S^-4`` on the low-rank geometry, for moderate ``n`` (tested 1 to 80).

Quadrature (:class:`Grid`): ``z`` by Gauss-Jacobi for its law (``k = 1``: ``(1 - z^2)^((d-3)/2)``; ``k = 2``:
``|z|^2`` with weight ``(1 - |z|^2)^((d-4)/2)`` and the angle by the trapezoid rule), the cosine ``w`` of
``Q x`` against ``Q q`` (``u = sqrt(1 - |z|^2) sqrt(1 - |z_q|^2) w``) by Gauss-Jacobi for ``p_{d-k}``, the
query and task direction likewise, and ``t = exp(tau)/(n E e)`` by the trapezoid rule in ``tau``.  Every
value is returned with the difference to the same value on a finer grid as its stated accuracy.

:func:`derived_case` gives the numbers of one case of ``thm44.saddle``; :func:`document` writes the derivation up
with them for the claim's grid (``derivations/saddle.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from itertools import combinations

import numpy as np
import sympy as sp
from scipy import optimize, special

from lipschitz_icl.derivations import ratio_expansion
from lipschitz_icl.derivations import window_law as law
from lipschitz_icl.derivations.writeup import Approximate, Document, Formula, Step, Table

__all__ = [
    "LINKS",
    "Grid",
    "Setting",
    "Value",
    "laplace_moment_expr",
    "check_laplace_moment",
    "curvature_power_sums",
    "check_curvature_identity",
    "large_n_curvature_exprs",
    "large_n_exprs",
    "power_sum_form",
    "complement_variance_expr",
    "loss",
    "loss_change",
    "curvature",
    "large_n_loss",
    "large_n_curvature",
    "optimal_scale",
    "derived_case",
    "document",
]

LINKS = ("quadratic", "cosine", "linear", "affine")


# ----------------------------------------------------------------------------- 1. Laplace moments
def _set_partitions(items):
    """Every set partition of the list ``items`` (lists of blocks)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1 :]
        yield [[first]] + part


@cache
def laplace_moment_expr(R: int) -> sp.Expr:
    """``d^R/(dl_1..dl_R) G^n`` at ``l = 0`` with ``n`` symbolic, in the symbols ``g_b`` (``b`` a sorted
    tuple of indices, ``g_()`` = ``g_0``): the expected product of ``R`` power sums under ``exp(-t S)``."""
    n = sp.Symbol("n", positive=True)
    lam = sp.symbols(f"l1:{R + 1}")
    subsets = [b for size in range(R + 1) for b in combinations(range(1, R + 1), size)]
    g = {b: sp.Symbol("g_" + "".join(map(str, b)), positive=True) for b in subsets}
    # the multilinear part of G suffices: each l_r is differentiated once
    G = sum(g[b] * sp.Mul(*[lam[i - 1] for i in b]) for b in subsets)
    expr = G**n
    for symbol in lam:
        expr = sp.diff(expr, symbol)
    return sp.expand(sp.simplify(expr.subs(dict.fromkeys(lam, 0))))


def _falling(n, b: int):
    """``n (n - 1) ... (n - b + 1)``: the ordered choices of ``b`` distinct context points."""
    out = 1
    for j in range(b):
        out = out * (n - j)
    return out


def check_laplace_moment(R: int) -> bool:
    """True when :func:`laplace_moment_expr` equals the set-partition sum used by the numerics."""
    n = sp.Symbol("n", positive=True)
    g = lambda b: sp.Symbol("g_" + "".join(map(str, sorted(b))), positive=True)  # noqa: E731
    total = sum(
        _falling(n, len(p)) * g(()) ** (n - len(p)) * sp.Mul(*[g(b) for b in p])
        for p in _set_partitions(list(range(1, R + 1)))
    )
    difference = sp.expand((laplace_moment_expr(R) - total) / g(()) ** n)
    return sp.simplify(sp.powsimp(difference, force=True)) == 0


# ----------------------------------------------------------------------------- 2. the curvature
# The loss and its curvature as monomials (coefficient, factors, m): E[prod_(factors) (sum_i f(x_i)) / S^m],
# a factor (e power, v power, tag) meaning f = e^(e power) v^(v power) h_c^len(tag), the feature component
# c of the tags summed over once per monomial.  The numerics integrate these tables; the SymPy check below
# is made on the same tables.
_LOSS_BIAS = ((1.0, ((1, 0, "c"), (1, 0, "c")), 2),)
_LOSS_NOISE = ((1.0, ((2, 0, ""),), 2),)
_CURV_BIAS = (
    (2.0, ((2, 1, "cc"),), 2),
    (2.0, ((1, 0, "c"), (1, 1, "c")), 2),
    (-8.0, ((1, 0, "c"), (2, 1, "c")), 3),
    (-2.0, ((1, 1, ""), (1, 0, "c"), (1, 0, "c")), 3),
    (6.0, ((2, 1, ""), (1, 0, "c"), (1, 0, "c")), 4),
)
_CURV_NOISE = (
    (4.0, ((2, 1, ""),), 2),
    (-8.0, ((3, 1, ""),), 3),
    (-2.0, ((1, 1, ""), (2, 0, "")), 3),
    (6.0, ((2, 1, ""), (2, 0, "")), 4),
)


def _prompt_symbols(points: int, m: int):
    e = sp.symbols(f"e1:{points + 1}", positive=True)
    v = sp.symbols(f"v1:{points + 1}", positive=True)
    h = [sp.symbols(f"h{i}_1:{m + 1}", real=True) for i in range(1, points + 1)]
    vt, sig = sp.symbols("v_t sigma", positive=True)
    return e, v, h, vt, sig


def _table_expr(bias, noise, points: int, m: int) -> sp.Expr:
    """``v_t (bias table) + sigma^2 (noise table)`` for ``points`` explicit points with ``m`` centred
    feature components (symbols of :func:`_prompt_symbols`)."""
    e, v, h, vt, sig = _prompt_symbols(points, m)
    S = sum(e)

    def table(monomials, components):
        total = 0
        for coef, factors, power in monomials:
            for c in range(components) if any(f[2] for f in factors) else [0]:
                sums = [
                    sum(e[i] ** ea * v[i] ** vb * h[i][c] ** len(tag) for i in range(points)) for ea, vb, tag in factors
                ]
                total += sp.nsimplify(coef) * sp.Mul(*sums) / S**power
        return total

    return vt * table(bias, m) + sig**2 * table(noise, 1)


def curvature_power_sums(points: int = 3, m: int = 1) -> sp.Expr:
    """``sum_i v_i D_i^2 F`` in power sums (module docstring, item 2), from the table the numerics use."""
    return _table_expr(_CURV_BIAS, _CURV_NOISE, points, m)


def check_curvature_identity(points: int = 3, m: int = 1) -> bool:
    """True when ``sum_i v_i (e_i d/de_i)^2 F`` of the prompt loss ``F`` (its table) equals
    :func:`curvature_power_sums` identically (SymPy)."""
    e, v, *_ = _prompt_symbols(points, m)
    F = _table_expr(_LOSS_BIAS, _LOSS_NOISE, points, m)
    D = lambda i, expr: e[i] * sp.diff(expr, e[i])  # noqa: E731
    direct = sum(v[i] * D(i, D(i, F)) for i in range(points))
    return sp.simplify(sp.together(direct - curvature_power_sums(points, m))) == 0


def power_sum_form(monomials) -> sp.Expr:
    """A monomial table (``_LOSS_*``, ``_CURV_*``) as an expression in power sums over ``n`` points,
    ``sum_(coef, factors, m) coef prod_(factors) (sum_i e_i^a v_i^b h_i^len(tag)) / (sum_i e_i)^m``, for one
    feature component ``h`` (the components are summed over): the form :func:`curvature_power_sums` expands
    on explicit points and the numerics integrate."""
    i, n = sp.Symbol("i", integer=True, positive=True), sp.Symbol("n", integer=True, positive=True)
    e, v, h = (sp.IndexedBase(name) for name in ("e", "v", "h"))
    total = sp.S.Zero
    for coef, factors, power in monomials:
        sums = [sp.Sum(e[i] ** ea * v[i] ** vb * h[i] ** len(tag), (i, 1, n)) for ea, vb, tag in factors]
        total += sp.nsimplify(coef) * sp.Mul(*sums) / sp.Sum(e[i], (i, 1, n)) ** power
    return total


@cache
def complement_variance_expr() -> sp.Expr:
    """``v_i = E[u_i^2 | z_i, z_q] = (1 - r_i^2)(1 - r_q^2) E[w^2]``, ``r_i = |z_i|``, ``r_q = |z_q|``:
    ``u_i = (Q x_i).(Q q)`` with ``Q x_i`` uniform on the sphere of radius ``sqrt(1 - r_i^2)`` of ``col(B)^perp``
    (dimension ``d - k``), so the cosine ``w`` of ``Q x_i`` against ``Q q`` has the law ``p_(d-k)`` and
    ``E w^2 = 1/(d - k)`` (:func:`lipschitz_icl.derivations.window_law.perp_second_moment` at ``d - k + 1``)."""
    k = sp.Symbol("k", positive=True, integer=True)
    r, rq = sp.Symbol("r_i", positive=True), sp.Symbol("r_q", positive=True)  # |z_i|, |z_q|
    return (1 - r**2) * (1 - rq**2) * sp.simplify(law.perp_second_moment().subs(law.d, law.d - k + 1))


# ----------------------------------------------------------------------------- 3. the large-n rival
@cache
def large_n_curvature_exprs():
    """``(loss, curvature)`` per feature component at large ``n`` (delta method), in the moments
    ``a = E[e h]``, ``s = E[e]``, ``m_hh = E[e^2 h^2]``, ``m_h = E[e^2 h]``, ``m_e = E[e^2]`` and their
    ``v``-weighted second ``s``-derivatives ``da, ds, dm_hh, dm_h, dm_e`` (``d^2/ds^2 E[e^j f] =
    j^2 E[v e^j f]`` at ``s = 0``, the first derivatives vanishing): the curvature is
    ``sum_M dF/dM . d^2 M`` (SymPy).  The noise part (per ``sigma^2``) is ``m_e/(n s^2)``."""
    r = ratio_expansion
    bias = r.ratio_square_by_moments()
    noise = r.m_e / (r.n * r.s**2)
    moments = (r.a, r.s, r.m_hh, r.m_h, r.m_e)
    second = sp.symbols("da ds dm_hh dm_h dm_e", real=True)
    curv = lambda F: sp.simplify(sum(sp.diff(F, M) * dM for M, dM in zip(moments, second)))  # noqa: E731
    return bias, noise, curv(bias), curv(noise), moments, second


# ----------------------------------------------------------------------------- quadrature
@dataclass(frozen=True)
class Setting:
    """A low-rank problem: ``link`` of :data:`LINKS`, ``d``, rank ``k`` (1 or 2), ``n``, ``L``,
    ``sigma``, cosine ``frequency``."""

    link: str
    d: int
    k: int
    n: int
    L: float
    sigma: float
    frequency: float = 1.0

    def __post_init__(self):
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {self.link!r}")
        if self.k not in (1, 2) or self.d <= self.k:
            raise ValueError(f"need k in (1, 2) and d > k, got d={self.d}, k={self.k}")

    @classmethod
    def of(cls, problem) -> Setting:
        """The setting of a low-rank :class:`~lipschitz_icl.problem.Problem`."""
        tc = problem.task_class
        return cls(tc.name.split("-", 1)[1], tc.d, tc.rank, problem.n, tc.L, problem.sigma, tc.frequency)

    @property
    def task_variance(self) -> float:
        L2 = self.L**2
        return {"quadratic": L2 / 3, "cosine": L2 / (2 * self.frequency**2), "linear": L2, "affine": L2 / 3}[self.link]

    def features(self, a: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``phi_a(z)`` with a trailing feature axis (``z``: ``(..., k)``)."""
        s = z @ a
        if self.link == "quadratic":
            return (s * s)[..., None]
        if self.link == "cosine":
            return np.stack([np.cos(self.frequency * s), np.sin(self.frequency * s)], axis=-1)
        return s[..., None]


@dataclass(frozen=True)
class Grid:
    """Node counts of the quadrature (module docstring); :meth:`coarser` is the grid of the accuracy check
    (every count divided by 1.5): a value's stated accuracy is its change from the coarser grid.  For
    ``k = 1`` the ``z`` and ``z_q`` rules take twice ``radial`` and ``query`` nodes (one dimension each)."""

    radial: int = 16  # z (k = 1) or |z|^2 (k = 2)
    angular: int = 32  # angle of z (k = 2, trapezoid)
    complement: int = 6  # w (only at s != 0)
    query: int = 12  # z_q (k = 1) or |z_q|^2 (k = 2)
    direction: int = 6  # task direction angle (k = 2, trapezoid on [0, pi))
    tau_step: float = 0.4
    tau_low: float = -14.0
    tau_margin: float = 6.0

    def coarser(self) -> Grid:
        down = lambda x: max(2, int(x / 1.5))  # noqa: E731
        return replace(
            self,
            radial=down(self.radial),
            angular=down(self.angular),
            complement=down(self.complement),
            query=down(self.query),
            direction=down(self.direction),
            tau_step=1.5 * self.tau_step,
        )


def _jacobi(count: int, alpha: float, beta: float):
    """Gauss-Jacobi nodes on ``[-1, 1]`` for the weight ``(1-x)^alpha (1+x)^beta``, weights summing to 1."""
    x, w = special.roots_jacobi(count, alpha, beta)
    return x, w / w.sum()


@lru_cache(maxsize=64)
def _law_of_z(k: int, d: int, count: int, angular: int):
    """Nodes ``z`` (``(N, k)``) and probability weights for ``B^T x``, ``x`` uniform on ``S^{d-1}``."""
    if k == 1:
        x, w = _jacobi(count, (d - 3) / 2, (d - 3) / 2)
        return x[:, None], w
    x, w = _jacobi(count, (d - 4) / 2, 0.0)
    r = np.sqrt((1 + x) / 2)
    phi = 2 * np.pi * np.arange(angular) / angular
    z = np.stack([np.outer(r, np.cos(phi)), np.outer(r, np.sin(phi))], axis=-1).reshape(-1, 2)
    return z, np.repeat(w, angular) / angular


@lru_cache(maxsize=64)
def _law_of_w(m: int, count: int):
    """The cosine ``w`` between a uniform direction of ``R^m`` and a fixed one (law ``p_m``)."""
    if m == 1:
        return np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    return _jacobi(count, (m - 3) / 2, (m - 3) / 2)


def _outer_nodes(setting: Setting, grid: Grid):
    """``(z_q, a, weight)`` triples: the query's ``B^T q`` and the task direction ``a``."""
    if setting.k == 1:
        zq, wq = _law_of_z(1, setting.d, 2 * grid.query, 1)
        return [(z, np.array([1.0]), w) for z, w in zip(zq, wq)]
    x, wq = _jacobi(grid.query, (setting.d - 4) / 2, 0.0)
    rho = np.sqrt((1 + x) / 2)
    alphas = np.pi * np.arange(grid.direction) / grid.direction
    return [
        (np.array([r, 0.0]), np.array([math.cos(al), math.sin(al)]), w / grid.direction)
        for r, w in zip(rho, wq)
        for al in alphas
    ]


class _Prompt:
    """Single-point quantities at one outer node: ``e``, ``v``, centred features ``h`` and weights on the
    nodes of ``x`` (``z`` times ``w``), for ``M = c P + s Q``."""

    def __init__(self, setting: Setting, grid: Grid, zq, a, c: float, s: float):
        z, wz = _law_of_z(setting.k, setting.d, grid.radial * (3 - setting.k), grid.angular)
        if s != 0.0:
            w, ww = _law_of_w(setting.d - setting.k, grid.complement)
        else:
            w, ww = np.zeros(1), np.ones(1)
        z2, zq2 = np.sum(z * z, axis=1), float(zq @ zq)
        u = np.sqrt(np.clip(1 - z2, 0, None) * max(1 - zq2, 0.0))[:, None] * w[None, :]
        self.log_e = (c * (z @ zq))[:, None] + s * u
        self.weight = (wz[:, None] * ww[None, :]).ravel()
        self.log_e = self.log_e.ravel()
        self.v = np.repeat((1 - z2) * (1 - zq2) / (setting.d - setting.k), w.size)
        h = setting.features(a, z) - setting.features(a, zq[None, :])[0]
        self.h = np.repeat(h, w.size, axis=0)

    def factor(self, ea: int, vb: int, comps: tuple) -> np.ndarray:
        """``e^ea v^vb prod_(c in comps) h_c`` on the nodes (``e`` relative to its largest value)."""
        out = np.exp(ea * (self.log_e - self.log_e.max()))
        if vb:
            out = out * self.v**vb
        for c in comps:
            out = out * self.h[:, c]
        return out

    def mean(self, ea: int, vb: int, comps: tuple = ()) -> float:
        """``sum_nodes weight * e^ea v^vb prod_(c in comps) h_c``: :meth:`factor` averaged over the nodes."""
        return float(self.weight @ self.factor(ea, vb, comps))


def _expand(monomials, m: int):
    """The monomials with the feature component ``c`` summed out: ``(coef, blocks by partition, power)``;
    a factor is ``(ea, vb, comps)``, ``comps`` a tuple of component indices."""
    out = []
    for coef, factors, power in monomials:
        comps = range(m) if any("c" in f[2] for f in factors) else [None]
        for c in comps:
            expanded = [(ea, vb, (c,) * len(tag)) for ea, vb, tag in factors]
            partitions = [
                [_product([expanded[i] for i in block]) for block in part]
                for part in _set_partitions(list(range(len(expanded))))
            ]
            out.append((coef / math.factorial(power - 1), partitions, power))
    return out


def _product(factors) -> tuple:
    ea = sum(f[0] for f in factors)
    vb = sum(f[1] for f in factors)
    comps = tuple(sorted(c for f in factors for c in f[2]))
    return ea, vb, comps


def _prompt_expectations(prompt: _Prompt, groups, n: int, grid: Grid) -> list[float]:
    """For each group of expanded monomials, ``E[sum coef prod_r (sum_i f_r(x_i)) / S^m]`` over the ``n``
    context points at one outer node: ``int_0^inf t^(m-1)/(m-1)! sum_(partitions) n (n-1)..(n-|pi|+1)
    g_0^(n-|pi|) prod_b g_b dt`` on ``t = exp(tau)/(n E e)``.  ``e`` is rescaled by its largest node value:
    every monomial here is homogeneous of degree 0 in ``e``."""
    e = prompt.factor(1, 0, ())
    mean = float(prompt.weight @ e)
    tau_high = math.log(n * mean / e.min()) + grid.tau_margin
    t = np.exp(np.arange(grid.tau_low, tau_high + grid.tau_step, grid.tau_step)) / (n * mean)
    decay = np.exp(-np.outer(t, e)) * prompt.weight  # (T, X)
    # log g_0 = log(1 - E[1 - exp(-t e)]) with the complement summed directly (no cancellation at small t)
    log_g0 = np.log1p(-np.minimum(-np.expm1(-np.outer(t, e)) @ prompt.weight, 1 - np.finfo(float).eps))
    moments = {}

    def g(key):
        if key not in moments:
            moments[key] = decay @ prompt.factor(*key)
        return moments[key]

    out = []
    for monomials in groups:
        total = np.zeros_like(t)
        for coef, partitions, power in monomials:
            for blocks in partitions:
                if len(blocks) > n:  # needs more distinct context points than there are
                    continue
                rest = n - len(blocks)  # the points outside every block, each contributing g_0
                term = _falling(n, len(blocks)) * (np.exp(rest * log_g0) if rest else 1.0)
                for key in blocks:
                    term = term * g(key)
                total += coef * t**power * term  # t^(power - 1) times the Jacobian dt = t dtau
        out.append(float(np.sum(total) * grid.tau_step))
    return out


@dataclass(frozen=True)
class Value:
    """A derived number with its stated quadrature accuracy (its change from :meth:`Grid.coarser`) and
    its ``bias`` and ``noise`` parts."""

    value: float
    accuracy: float
    bias: float
    noise: float


def _feature_count(setting: Setting) -> int:
    return setting.features(np.ones(setting.k), np.zeros((1, setting.k))).shape[-1]


def _integrate(setting: Setting, grid: Grid, c: float, s: float, bias_monomials, noise_monomials) -> tuple:
    """``(bias, noise)``: the monomial sums over the context points, averaged over the query and the task."""
    groups = (_expand(bias_monomials, _feature_count(setting)), _expand(noise_monomials, 1))
    bias = noise = 0.0
    for zq, a, weight in _outer_nodes(setting, grid):
        b, nz = _prompt_expectations(_Prompt(setting, grid, zq, a, c, s), groups, setting.n, grid)
        bias, noise = bias + weight * b, noise + weight * nz
    return setting.task_variance * bias, setting.sigma**2 * noise


def _checked(compute, grid: Grid) -> Value:
    """``compute(grid)`` with the change from ``compute(grid.coarser())`` as its stated accuracy."""
    (b, nz), (bc, nc) = compute(grid), compute(grid.coarser())
    if not all(math.isfinite(x) for x in (b, nz, bc, nc)):
        raise ArithmeticError(f"the quadrature gave a non-finite value ({b}, {nz}; coarser {bc}, {nc})")
    return Value(value=b + nz, accuracy=abs(b + nz - bc - nc), bias=b, noise=nz)


def loss(setting: Setting, c: float, s: float = 0.0, grid: Grid = Grid()) -> Value:
    """The ICL loss of softmax attention ``M = c P + s Q``, exact in ``n`` (bias and noise parts)."""
    return _checked(lambda g: _integrate(setting, g, c, s, _LOSS_BIAS, _LOSS_NOISE), grid)


def loss_change(setting: Setting, c: float, s: float, grid: Grid = Grid()) -> Value:
    """``L(c P + s Q) - L(c P)``, exact in ``n``, on one grid (the difference of two quadratures on the same
    nodes is the quadrature of the difference)."""

    def compute(g):
        (b1, n1), (b0, n0) = (_integrate(setting, g, c, x, _LOSS_BIAS, _LOSS_NOISE) for x in (s, 0.0))
        return b1 - b0, n1 - n0

    return _checked(compute, grid)


def curvature(setting: Setting, c: float, grid: Grid = Grid()) -> Value:
    """``d^2 L / ds^2`` of ``L(c P + s Q)`` at ``s = 0``, exact in ``n`` (module docstring, item 2)."""
    return _checked(lambda g: _integrate(setting, g, c, 0.0, _CURV_BIAS, _CURV_NOISE), grid)


# ----------------------------------------------------------------------------- large n
@cache
def large_n_exprs(limit: bool) -> tuple:
    """``(bias, noise, bias curvature, noise curvature)`` of :func:`large_n_curvature_exprs`, or with
    ``limit`` their ``n -> infinity`` limits (the bias's ``r^2`` alone, no noise)."""
    r = ratio_expansion
    bias, noise, bias_curv, noise_curv, _, _ = large_n_curvature_exprs()
    if limit:
        bias, noise = sp.limit(bias, r.n, sp.oo), sp.S.Zero
        bias_curv, noise_curv = sp.limit(bias_curv, r.n, sp.oo), sp.S.Zero
    return bias, noise, bias_curv, noise_curv


@cache
def _large_n_functions(limit: bool):
    """Lambdified :func:`large_n_exprs`, arguments ``(n, moments, second derivatives)``."""
    moments, second = large_n_curvature_exprs()[4:]
    args = (ratio_expansion.n, *moments, *second)
    return tuple(sp.lambdify(args, expr, "numpy") for expr in large_n_exprs(limit))


def _large_n_parts(setting: Setting, grid: Grid, c: float, s: float, curvature_of: bool, limit: bool) -> tuple:
    """``(bias, noise)`` of the large-``n`` loss (or its curvature at ``s = 0``), averaged over query and task."""
    fb, fn = _large_n_functions(limit)[2:] if curvature_of else _large_n_functions(limit)[:2]
    bias = noise = 0.0
    for zq, a, weight in _outer_nodes(setting, grid):
        p = _Prompt(setting, grid, zq, a, c, s)
        E = p.mean
        base = (E(1, 0), E(2, 0), E(1, 1), 4 * E(2, 1))  # s, m_e, ds, dm_e
        for comp in range(_feature_count(setting)):
            one, two = (comp,), (comp, comp)
            bias += weight * fb(
                setting.n,
                E(1, 0, one),
                base[0],
                E(2, 0, two),
                E(2, 0, one),
                base[1],
                E(1, 1, one),
                base[2],
                4 * E(2, 1, two),
                4 * E(2, 1, one),
                base[3],
            )
        noise += weight * fn(setting.n, 0.0, base[0], 0.0, 0.0, base[1], 0.0, base[2], 0.0, 0.0, base[3])
    return setting.task_variance * bias, setting.sigma**2 * noise


def large_n_loss(setting: Setting, c: float, s: float = 0.0, *, limit: bool = False, grid: Grid = Grid()) -> Value:
    """The loss of ``M = c P + s Q`` to ``O(1/n)`` (delta method), or its ``n -> infinity`` limit."""
    return _checked(lambda g: _large_n_parts(setting, g, c, s, False, limit), grid)


def large_n_curvature(setting: Setting, c: float, *, limit: bool = False, grid: Grid = Grid()) -> Value:
    """``d^2 L/ds^2`` at ``s = 0`` of the large-``n`` loss (:func:`large_n_curvature_exprs`), or of its
    ``n -> infinity`` limit."""
    return _checked(lambda g: _large_n_parts(setting, g, c, 0.0, True, limit), grid)


SEARCH_RTOL = 1e-4  # the accuracy of c* relative to itself: optimal_scale's tolerance in log c


def optimal_scale(setting: Setting, *, low: float, high: float, rel_tol: float = SEARCH_RTOL, grid: Grid = Grid()):
    """``c*`` minimising the exact loss of ``c P`` on ``[low, high]`` (bounded Brent search in ``log c``
    on ``grid``); returns ``(c*, at_bound)`` with ``at_bound`` true when ``c*`` sits at an end."""
    f = lambda lc: sum(_integrate(setting, grid, math.exp(lc), 0.0, _LOSS_BIAS, _LOSS_NOISE))  # noqa: E731
    res = optimize.minimize_scalar(
        f, bounds=(math.log(low), math.log(high)), method="bounded", options={"xatol": rel_tol}
    )
    c = math.exp(res.x)
    return c, bool(c <= low * (1 + 10 * rel_tol) or c >= high * (1 - 10 * rel_tol))


def derived_case(setting: Setting, *, step: float, low: float, high: float, grid: Grid = Grid()) -> dict:
    """The derived numbers of one case of the claim ``thm44.saddle``: ``c*`` (:func:`optimal_scale` on
    ``[low, high]``, with ``at_bound``), ``s = step c*``, the change ``Delta = L(c* P + s Q) - L(c* P)``
    (:func:`loss_change`) and the curvature at ``s = 0`` (:func:`curvature`), exact in ``n``; the rivals'
    change and curvature: ``large_n`` (delta method to ``O(1/n)``) and ``infinite_n`` (its limit)."""
    c, at_bound = optimal_scale(setting, low=low, high=high, grid=grid)
    s = step * c
    out = {
        "c": c,
        "at_bound": at_bound,
        "s": s,
        "change": loss_change(setting, c, s, grid),
        "curvature": curvature(setting, c, grid),
    }
    for name, limit in (("large_n", False), ("infinite_n", True)):
        out[name] = (
            large_n_loss(setting, c, s, limit=limit, grid=grid).value
            - large_n_loss(setting, c, 0.0, limit=limit, grid=grid).value
        )
        out[f"{name}_curvature"] = large_n_curvature(setting, c, limit=limit, grid=grid)
    return out


# ----------------------------------------------------------------------------- the document
# |d log X / d log c| of the numbers derived at c* (the change, its parts, the curvature, the rivals): at most 2.7 on
# the claim's cases (tests/derivations/test_saddle.py measures it); the change goes as s^2 with s = step c
C_SENSITIVITY = 4.0


def _at_c_star(value, accuracy=0.0) -> Approximate:
    """A number derived at the searched ``c*``: its stated quadrature ``accuracy`` plus what ``c*``'s own accuracy
    (:data:`SEARCH_RTOL`) carries into it (:data:`C_SENSITIVITY`); printed to the digits these warrant."""
    value = float(value)
    return Approximate(value, float(accuracy) + C_SENSITIVITY * SEARCH_RTOL * abs(value))


def _partition_form(expr) -> sp.Expr:
    """:func:`laplace_moment_expr` for reading: ``g_0`` named, the terms collected per set partition."""
    g0 = sp.Symbol("g_0", positive=True)
    x = sp.powsimp(sp.expand(expr.subs(sp.Symbol("g_", positive=True), g0)), force=True)
    blocks = {
        sp.Mul(*[f for f in sp.Mul.make_args(term) if f.is_Symbol and f.name.startswith("g_") and f != g0])
        for term in sp.Add.make_args(x)
    }
    return sp.collect(x, sorted(blocks, key=str), sp.factor)


_KAPPA = (sp.Symbol(r"\kappa_{\mathrm{bias}}"), sp.Symbol(r"\kappa_{\mathrm{noise}}"))


def _derivation_steps() -> tuple:
    s, R = sp.Symbol("s", real=True), 2
    lam = sp.symbols(f"l_1:{R + 1}")
    laplace = sp.Derivative(sp.Function("G")(*lam) ** sp.Symbol("n", positive=True), *lam)
    checked = range(1, 5)
    if not all(check_laplace_moment(R_) for R_ in checked):
        raise ArithmeticError("the Laplace moment differs from the set-partition sum")
    if not all(check_curvature_identity(points, m) for points, m in ((3, 1), (2, 2))):
        raise ArithmeticError("the curvature tables differ from sum_i v_i D_i^2 of the loss tables")
    kb, kn = _KAPPA
    bias, noise, bias_curv, noise_curv = large_n_exprs(False)
    limit_bias, _, limit_curv, _ = large_n_exprs(True)
    r = ratio_expansion
    return (
        Step(
            "The prompt loss",
            "The logits along `M(s)` are `x_i^T M(s) q = c z_i.z_q + s u_i`, "
            "`u_i = (Q x_i).(Q q)`. With `e_i = exp(x_i^T M q)` and `h_i = phi_a(z_i) - phi_a(z_q)` (the query's "
            "feature subtracted: the weights sum to one), the loss of one prompt averaged over `theta` and the label "
            "noise is `F = v_t F_bias + sigma^2 F_noise`, written per feature component `h` (the components are "
            "summed over) as the monomial tables the numerics integrate:",
            (
                Formula(sp.Symbol(r"F_{\mathrm{bias}}"), power_sum_form(_LOSS_BIAS)),
                Formula(sp.Symbol(r"F_{\mathrm{noise}}"), power_sum_form(_LOSS_NOISE)),
            ),
        ),
        Step(
            "Exact in n: the Laplace representation",
            "`1/S^m = int_0^inf t^(m-1) exp(-t S) dt/(m-1)!`, and for "
            "i.i.d. points the expected product of `R` power sums under `exp(-t S)` is a derivative of "
            "`G(l, t)^n`, `G = E[exp(sum_r l_r f_r(x)) exp(-t e(x))]`, at `l = 0`; by Faa di Bruno it is a sum "
            "over the set partitions of `{1..R}` with `g_b(t) = E[prod_(r in b) f_r(x) exp(-t e(x))]` "
            "(`g_0`: the empty block). SymPy differentiates `G^n` with `n` symbolic (`R = 2` shown) and the "
            "result equals the set-partition sum the numerics use (checked for "
            f"`R = {', '.join(map(str, checked))}`: `check_laplace_moment`). Every expected monomial is thus "
            "a one-dimensional `t`-integral of single-point moments: the loss is exact in `n` up to quadrature.",
            (Formula(sp.Subs(laplace, lam, (0,) * R), _partition_form(laplace_moment_expr(R))),),
        ),
        Step(
            "The complement at s = 0",
            "The reflection `x_i -> (P - Q) x_i` keeps the prompt's law and every "
            "label and flips every `u_i`, so `dL/ds = 0` at `s = 0`. Given `z_i`, `Q x_i` is uniform on the sphere "
            "of radius `sqrt(1 - r_i^2)` of `col(B)^perp` (`r_i = |z_i|`, `r_q = |z_q|`; dimension `d - k`, where "
            "the cosine of `Q x_i` against `Q q` has `E w^2 = 1/(d - k)`), so `E[u_i | z_i] = 0` and its second "
            "moment is:",
            (Formula(sp.Symbol("v_i"), complement_variance_expr()),),
        ),
        Step(
            "The curvature in power sums",
            "`d/ds` of `e_i` is `u_i e_i`; with `D_i = e_i d/de_i` the cross terms "
            "vanish and `d^2L/ds^2 = E[sum_i v_i D_i^2 F] = E[v_t kappa_bias + sigma^2 kappa_noise]` at `s = 0`. "
            "The tables of `kappa` equal `sum_i v_i D_i^2` of the tables of `F` identically (checked by SymPy on 3 "
            "points with one feature component and on 2 points with two: `check_curvature_identity`). "
            "Its sign decides whether `c B B^T` is a minimum or a saddle along `Q`; on the sphere "
            "`|z|^2 = 1 - |Q x|^2`, so an even link is partly a function of `Q x` and the bias part can be "
            "negative.",
            (
                Formula(kb, power_sum_form(_CURV_BIAS)),
                Formula(kn, power_sum_form(_CURV_NOISE)),
                Formula(
                    sp.Subs(sp.Derivative(sp.Function("L")(s), (s, 2)), s, 0),
                    sp.Function(r"\mathbb{E}")(sp.Symbol("v_t") * kb + sp.Symbol("sigma") ** 2 * kn),
                ),
            ),
        ),
        Step(
            "The rivals at large n",
            "The delta method (ratio_expansion.md) gives the loss to `O(1/n)` in the "
            "moments `a = E[e h]`, `s = E[e]` (in these formulas `s` is this moment, not the shift), "
            "`m_hh = E[e^2 h^2]`, `m_h = E[e^2 h]`, `m_e = E[e^2]`. At zero shift the first derivatives of the "
            "moments along `Q` vanish and the second are `j^2 E[v e^j f]` for `E[e^j f]` (`da`, `ds`, `dm_hh`, "
            "`dm_h`, `dm_e`), so the curvature is `sum_M dF/dM d^2M`. "
            "Per feature component (bias, per `v_t`) and per `sigma^2` (noise), and the `n -> inf` limit "
            "(the window's population average, no noise):",
            (
                Formula(sp.Symbol(r"F_{\mathrm{bias}}"), bias, r"\approx"),
                Formula(sp.Symbol(r"F_{\mathrm{noise}}"), noise, r"\approx"),
                Formula(kb, bias_curv, r"\approx"),
                Formula(kn, noise_curv, r"\approx"),
                Formula(sp.Limit(sp.Symbol(r"F_{\mathrm{bias}}"), r.n, sp.oo), limit_bias),
                Formula(sp.Limit(kb, r.n, sp.oo), limit_curv),
            ),
        ),
        Step(
            "Quadrature",
            "`z` by Gauss-Jacobi for its law (`k = 1`: weight `(1 - z^2)^((d-3)/2)`; `k = 2`: `|z|^2` "
            "with weight `(1 - |z|^2)^((d-4)/2)` and the angle by the trapezoid rule), the cosine of `Q x` against "
            "`Q q` by Gauss-Jacobi for `p_(d-k)`, the query and the task direction likewise, and "
            "`t = exp(tau)/(n E e)` by the trapezoid rule in `tau` (`Grid`). Each value's stated accuracy is its "
            "change from a grid 1.5 times coarser in every count. `c*` minimises the exact loss of `c P` "
            "(bounded Brent search in `log c`, tolerance `1e-4`).",
        ),
    )


def _case_rows(cases, numbers) -> tuple:
    """The three result tables' rows: ``c*`` and the change, the curvature, the rivals (numbers as
    :class:`~lipschitz_icl.derivations.writeup.Approximate`: :func:`_at_c_star`)."""
    change, curv, rivals = [], [], []
    for (task, setting), th in zip(cases, numbers):
        key = (task, setting.d, setting.k)
        ch = th["change"]
        kappa = th["curvature"]
        searched = Approximate(float(th["c"]), SEARCH_RTOL * float(th["c"]))
        c_star: Approximate | str = searched.text() + " (at a bound)" if th["at_bound"] else searched
        omega = float(setting.frequency) if setting.link == "cosine" else None
        change.append(
            (
                *key,
                float(setting.L),
                omega,
                c_star,
                Approximate(float(th["s"]), SEARCH_RTOL * float(th["s"])),
                _at_c_star(ch.value, ch.accuracy),
                _at_c_star(ch.bias, ch.accuracy),
                _at_c_star(ch.noise, ch.accuracy),
                _at_c_star(ch.accuracy),
            )
        )
        curv.append(
            (
                *key,
                _at_c_star(kappa.value, kappa.accuracy),
                _at_c_star(kappa.bias, kappa.accuracy),
                _at_c_star(kappa.noise, kappa.accuracy),
                _at_c_star(kappa.accuracy),
                "saddle" if kappa.value < 0 else "minimum",
            )
        )
        rivals.append(
            (
                *key,
                _at_c_star(ch.value, ch.accuracy),
                _at_c_star(th["large_n"]),
                _at_c_star(th["infinite_n"]),
                _at_c_star(ch.noise, ch.accuracy),
                _at_c_star(kappa.value, kappa.accuracy),
                _at_c_star(th["large_n_curvature"].value, th["large_n_curvature"].accuracy),
                _at_c_star(th["infinite_n_curvature"].value, th["infinite_n_curvature"].accuracy),
            )
        )
    return tuple(change), tuple(curv), tuple(rivals)


def document(cases, *, step: float, scale_bounds) -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here;
    ``cases``: ``(task, Setting)`` pairs (the claim's grid, from :mod:`lipschitz_icl.derivations.documents`),
    evaluated by :func:`derived_case` with the claim's ``step`` and ``scale_bounds``."""
    numbers = [derived_case(setting, step=step, low=scale_bounds[0], high=scale_bounds[1]) for _, setting in cases]
    change, curv, rivals = _case_rows(cases, numbers)
    s = sp.Symbol("s", real=True)
    L_of = sp.Function("L")
    n0 = cases[0][1]
    return Document(
        name="saddle",
        title="The ICL loss of low-rank tasks along the complement of col(B), exact in n",
        summary="the loss along `M(s) = c B B^T + s Q` exact in `n` (Laplace), its curvature along `Q` at the optimal "
        "scale `c*` and the rivals `O(1/n)` and `n -> inf`: `c* B B^T` is a saddle for even links where "
        "`d - k` is small",
        paper="Theorem 4.4 (proved for linear links) and its scope: the quadratic and cosine links of the low-rank "
        "experiment (Figure 9)",
        claims=("thm44.saddle",),
        used_by=("lipschitz_icl.claims.thm44",),
        statement=Step(
            "",
            "Along `M(s) = c P + s Q` (`P = B B^T`, `Q = I - P`) the ICL loss `L(s)` of softmax "
            "attention is the expectation over prompts of `F = v_t F_bias + sigma^2 F_noise` (below), "
            "derived exactly in `n` up to a quadrature with a stated accuracy. At the optimal scale `c*` "
            "of `c P` its curvature along `Q` is the expectation of power sums `kappa_bias`, "
            "`kappa_noise` (step 4) weighted by the complement's second moment `v_i`; its sign says "
            "whether `c* B B^T` is a minimum or a saddle:",
            (
                Formula(
                    sp.Symbol("F"),
                    sp.Symbol("v_t") * power_sum_form(_LOSS_BIAS)
                    + sp.Symbol("sigma") ** 2 * power_sum_form(_LOSS_NOISE),
                ),
                Formula(
                    sp.Subs(sp.Derivative(L_of(s), (s, 2)), s, 0),
                    sp.Function(r"\mathbb{E}")(sp.Symbol("v_t") * _KAPPA[0] + sp.Symbol("sigma") ** 2 * _KAPPA[1]),
                ),
                Formula(sp.Symbol("v_i"), complement_variance_expr()),
            ),
        ),
        assumptions=(
            "`x_i` and the query `q` uniform on `S^(d-1)`, `B` a `d x k` matrix with orthonormal columns "
            "(`k = 1, 2`), `z = B^T x`; `n` context points and label noise of variance `sigma^2`.",
            "Tasks `f(x) = theta . phi_a(z)` with `a` uniform on `S^(k-1)` and `E theta theta^T = v_t I` "
            "(`lipschitz_icl.tasks.registry`): quadratic `phi = (a.z)^2`, `v_t = L^2/3`; cosine "
            "`phi = (cos(omega a.z), sin(omega a.z))`, `v_t = L^2/(2 omega^2)`; linear `phi = a.z`, "
            "`v_t = L^2`; affine `phi = a.z` (plus an intercept, which cancels), `v_t = L^2/3`.",
            "The claim's problems are signal-matched (`lipschitz_icl.claims.thm44.matched_problem`): the same "
            "function of `sqrt(d/k) B^T x` at every `d`, so `L = L0 d/k` (quadratic) or `L0 sqrt(d/k)` "
            "(cosine, whose frequency is also `sqrt(d/k)`).",
        ),
        steps=_derivation_steps(),
        results=(
            Step(
                "The optimal scale and the change along Q",
                f"Per case of the claim's grid (`n = {n0.n}`, "
                f"`sigma = {n0.sigma:g}`, `L` and `omega` signal-matched): `c*` searched on `[{scale_bounds[0]:g}, "
                f"{scale_bounds[1]:g}]`, the shift `s = {step:g} c*` and the change `Delta = L(c* P + s Q) - L(c* P)` "
                "(even in `s`) with its bias and noise parts and its stated accuracy:",
                (),
                Table(
                    ("task", "d", "k", "L", "omega", "c*", "s", "Delta", "bias part", "noise part", "accuracy"), change
                ),
            ),
            Step(
                "The curvature along Q",
                "`d^2L/ds^2` at `s = 0` and `c = c*` (negative: `c* B B^T` is a saddle, where Theorem 4.4's "
                "conclusion does not extend to the even links; positive: a minimum along `Q`):",
                (),
                Table(("task", "d", "k", "curvature", "bias part", "noise part", "accuracy", "c* B B^T is"), curv),
            ),
            Step(
                "The rivals",
                "The claim's alternatives evaluated at the same `c*` and `s`: the change and the "
                "curvature of the delta-method loss to `O(1/n)` and of its `n -> inf` limit, and 'no information in "
                "the complement' (the bias part of `Delta` set to zero, its noise part alone):",
                (),
                Table(
                    (
                        "task",
                        "d",
                        "k",
                        "Delta exact",
                        "Delta O(1/n)",
                        "Delta n -> inf",
                        "Delta no information",
                        "curvature exact",
                        "curvature O(1/n)",
                        "curvature n -> inf",
                    ),
                    rivals,
                ),
            ),
        ),
        exactness="the Laplace moments and the curvature identity are exact symbolic identities, checked by SymPy; "
        "the numbers are quadratures of those formulas (`derived_case`, the functions the claim calls) with their "
        "stated accuracy (the change from a grid 1.5 times coarser) beside; `c*` is the bounded Brent minimiser "
        f"(tolerance `{SEARCH_RTOL:g}` in `log c`), and every number derived at `c*` also carries what that "
        f"tolerance moves it (at most {C_SENSITIVITY:g} times as much, relatively); each is printed to the digits "
        "its accuracy warrants, so its last digit can differ between machines, which `lipschitz-icl derivations "
        "--check` allows within that accuracy.",
    )
