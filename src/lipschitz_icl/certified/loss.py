"""Certified ICL loss of ``M = w I`` for the affine class, and its derivative in ``w``: balls, not estimates.

The formulas are those of :mod:`lipschitz_icl.exact.route` (module doc there: the Laplace transform
``1/S^2 = int lam exp(-lam S) dlam`` with ``lam = e^s``), here with every step certified.  With
``u = 1 - t = 1 - cos(theta)`` (law ``mu(dtheta) = sin^(d-2) theta dtheta / B(1/2, (d-1)/2)``),
``V = w u``, ``E = exp(s - V)`` and the moments

    M_{k,m}(s) = E_theta[E^k u^m exp(-E)],     psi(s) = E_theta[exp(-E)] = 1 - om(s),

the parts of the loss (``c = L^2/(3d)``) are integrals over ``s`` in ``(-inf, inf)``:

    noise      = sigma^2  n int psi^(n-1) M_{2,0}
    bias       = c [2 n int psi^(n-1) M_{2,1}  +  n (n-1) int psi^(n-2) M_{1,1}^2]
    Q          = n int psi^(n-1) M_{2,2} + n (n-1) int psi^(n-2) M_{1,1}^2      (= E[(sum_i p_i u_i)^2])

and ``d/dw`` of them follows from ``d psi/dw = M_{1,1}`` and ``d M_{k,m}/dw = M_{k+1,m+1} - k M_{k,m+1}``
(each integrand is a sum of monomials ``coef psi^j prod M``, :data:`MONOMIALS`).  ``n = 1`` is exact:
``noise = sigma^2``, ``bias = 2c`` (``E u = 1``), no ``w`` dependence.

Certification, step by step:

* inner integrals (over ``theta``): Gauss-Legendre panels with the Bernstein-ellipse bound
  (:mod:`lipschitz_icl.certified.quadrature`); panels come from ``V`` steps of width ``h_V`` (and at most
  ``pi/8`` in ``theta``), halved until ``|Im(w u)| <= 1.2`` on the panel's rectangle so that
  ``Re E >= 0`` and ``|exp(-E)| <= 1`` there.  Only panels with ``V`` in ``[s - 7, V_top(s)]`` are summed;
  below, ``E >= e^7`` so ``1 - exp(-E)`` lies in ``[1 - exp(-e^7), 1]`` times ``P(V <= V_below)`` (a
  certified cap probability) and ``E^k exp(-E) <= e^(7k) exp(-e^7)``; above, ``E <= e^(s - V_above)``
  bounds every integrand (``1 - exp(-E) <= E``).
* outer integral (over ``s``): panels of width 2 on ``[s_lo, s_hi]``, halved until their certified
  error is below the tolerance.  The bound ``M`` of ``|F(s)|`` on a panel's rectangle uses, for
  ``s = x + i y`` with ``|y| < pi/2`` (``|E| = e^(x - V)``, ``|exp(-E)| = exp(-|E| cos y)``),
  ::

      |M_{k,m}(x + i y)| <= cos(y)^(-k) M_{k,m}(x + log cos y),   |psi(x + i y)| <= psi(x + log cos y),

  (the integrand of ``M_{k,m}`` at ``x + i y`` is ``cos(y)^(-k)`` times the real one at ``x + log cos y``),
  with ``psi`` nonincreasing in ``x``; the real moments are evaluated on a real ball of ``s``.
* tails: below ``s_lo``, ``M_{k,m}(s) <= 2^m e^(k s) E[e^(-k V)]`` with ``E[e^(-kV)] = e^(-kw) Phi_d(kw)``
  (certified) and ``psi <= 1``; above ``s_hi``, ``psi(s) <= psi(s_hi)`` and
  ``int M_{k,m} ds = E[u^m] Gamma(k) <= 2^m Gamma(k)``, ``M_{k,m} <= 2^m (k/e)^k``.

``w`` may be a ball (an interval of windows): the inner values are balls over it, so the results hold
for every ``w`` in it (used for certified derivative signs, :mod:`lipschitz_icl.certified.wstar`).
Covered: the affine class.  Not covered: relu and zonal kernels (their off-diagonal kernel terms need
certified 2-D quadrature with kinks; not done).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flint import arb

from lipschitz_icl.certified import arithmetic, laws
from lipschitz_icl.certified.quadrature import error_bound, panel, widen

__all__ = ["LossEnclosure", "loss_enclosure", "loss_derivatives", "noise_and_q", "differentiate", "MONOMIALS", "TASKS"]

TASKS = ("affine",)
H_V = 1.5  # inner rule: panel width in V (nodes per panel: _orders)
RHOS_INNER = (12.0, 8.0, 6.0, 4.0, 3.0)  # candidate rho of an inner panel (a panel allowing none is halved)
IM_INNER = 1.2
H_S, HEIGHT_OUTER = 1.0, 0.9  # outer rule: half-width, rectangle half-height (< pi/2)
BELOW = 7.0  # V more than this below s: exp(-E) <= exp(-e^7)
# an integrand is a sum of monomials (coef, p, factors): coef(n, sigma^2, c) * psi^(n - p) * prod M_{k,m}
BASE: dict[str, list] = {
    "noise": [(lambda n, s2, c: s2 * n, 1, ((2, 0),))],
    "bias": [(lambda n, s2, c: 2 * c * n, 1, ((2, 1),)), (lambda n, s2, c: c * n * (n - 1), 2, ((1, 1), (1, 1)))],
    "q": [(lambda n, s2, c: n, 1, ((2, 2),)), (lambda n, s2, c: n * (n - 1), 2, ((1, 1), (1, 1)))],
}


def differentiate(terms: list) -> list:
    """``d/dw`` of a sum of monomials: ``d psi^(n-p) = (n-p) psi^(n-p-1) M_{1,1}`` and
    ``d M_{k,m} = M_{k+1,m+1} - k M_{k,m+1}`` (product rule over the factors)."""
    out = []
    for coef, p, factors in terms:
        out.append((lambda n, s2, c, f=coef, p=p: f(n, s2, c) * (n - p), p + 1, factors + ((1, 1),)))
        for i, (k, m) in enumerate(factors):
            rest = factors[:i] + factors[i + 1 :]
            out.append((coef, p, rest + ((k + 1, m + 1),)))
            out.append((lambda n, s2, c, f=coef, k=k: -k * f(n, s2, c), p, rest + ((k, m + 1),)))
    return out


MONOMIALS = dict(BASE)
for _name in ("noise", "bias"):
    MONOMIALS[_name + "_w"] = differentiate(BASE[_name])
    MONOMIALS[_name + "_ww"] = differentiate(MONOMIALS[_name + "_w"])
    MONOMIALS[_name + "_www"] = differentiate(MONOMIALS[_name + "_ww"])


@dataclass(frozen=True)
class LossEnclosure:
    """Balls of the parts (``noise``, ``bias``, ``loss``; or their ``w``-derivatives) and what it cost."""

    noise: arb
    bias: arb
    info: dict = field(default_factory=dict)

    @property
    def loss(self) -> arb:
        return self.noise + self.bias

    def to_dict(self) -> dict:
        """The loss command's keys: ``loss``, ``bias``, ``noise`` (midpoints), ``ci_low``/``ci_high`` (the
        certified interval of the loss), zero standard errors, ``method = "certified"``, and
        ``loss_low``/``loss_high``, ``bias_low``/``bias_high``, ``noise_low``/``noise_high``."""
        out: dict[str, Any] = {"method": "certified"}
        for name, ball in (("loss", self.loss), ("bias", self.bias), ("noise", self.noise)):
            e = arithmetic.Enclosure.of(ball)
            out[name] = float(ball.mid())
            out[f"{name}_low"], out[f"{name}_high"] = e.low, e.high
            out[f"{name}_stderr"] = 0.0
        out["ci_low"], out["ci_high"] = out["loss_low"], out["loss_high"]
        return out


# ----------------------------------------------------------------------------- inner (theta) rule
class _Inner:
    """The ``theta`` panels for one ``(d, w)`` (``w`` a ball): nodes with ``u``, ``u^2``, ``exp(-w u)`` and
    the weights times ``mu``; per panel the same on its rectangle (for the error bound)."""

    q_outer: int  # nodes per panel of the outer (s) rule, set by _inner

    def __init__(self, d: int, w: arb, q: int, h_v: float = H_V):
        self.d, self.w, self.q, self.h_v = d, w, q, h_v
        self.w_mid = float(w.mid())
        self.log_norm = -(arb(0.5).lgamma() + (arb(d - 1) / 2).lgamma() - (arb(d) / 2).lgamma())
        self.panels: list[tuple] = []  # (V_a, V_b, node data, box data)
        self.theta_end = 0.0
        self.v_end = 0.0

    def _mu(self, theta):
        return (theta.sin() ** (self.d - 2)) * self.log_norm.exp()

    def _theta_of_v(self, v: float) -> float:
        return math.pi if v >= 2 * self.w_mid else 2.0 * math.asin(math.sqrt(v / (2 * self.w_mid)))

    def _v_of_theta(self, theta: float) -> float:
        return 2.0 * self.w_mid * math.sin(0.5 * theta) ** 2

    def extend(self, v_needed: float) -> None:
        """Panels up to ``V >= v_needed`` (or ``theta = pi``); a grid beyond :data:`MAX_INNER_PANELS` is
        refused (a :class:`ParameterError` on ``w``: few points dominate the normaliser up to large ``V``)."""
        if self.theta_end < math.pi and min(v_needed, 2 * self.w_mid) / self.h_v > MAX_INNER_PANELS:
            from lipschitz_icl.validation import ParameterError

            raise ParameterError(
                "w",
                f"small enough for the certified grid at d = {self.d} (the normaliser is "
                f"dominated by a few points up to V = {v_needed:.4g})",
                self.w_mid,
            )
        while self.theta_end < math.pi and self.v_end < v_needed:
            a = self.theta_end
            b = min(self._theta_of_v(self.v_end + self.h_v), a + math.pi / 8, math.pi)
            while not self._add(a, b):
                b = a + (b - a) / 2
            self.theta_end = b
            self.v_end = self._v_of_theta(b) if b < math.pi else 2 * self.w_mid

    def _add(self, a: float, b: float) -> bool:
        """Add the panel ``[a, b]`` with the rho of :data:`RHOS_INNER` that keeps ``|Im(w u)| <= IM_INNER``
        on its rectangle and makes the error bound of a small-``E`` integrand (``|mu e^(-w u)|`` on the
        rectangle times ``rho^(2-2q)/(rho^2-1)``) smallest; False when none keeps it (the caller halves it)."""
        best = None
        for rho in RHOS_INNER:
            p = panel(a, b, self.q, rho)
            box = p.box()
            u_box = 1 - box.cos()
            wu = self.w * u_box
            if wu.imag.abs_upper() > IM_INNER:
                continue
            size = float((self._mu(box).abs_upper() * (-wu).exp().abs_upper()).mid())
            crit = size * rho ** (2 - 2 * self.q) / (rho * rho - 1)
            if best is None or crit < best[0]:
                best = (crit, p, box, u_box)
        if best is None:
            if b - a > 1e-9:
                return False
            p = panel(a, b, self.q, RHOS_INNER[-1])
            box = p.box()
            u_box = 1 - box.cos()
        else:
            _, p, box, u_box = best
        nodes = []
        for theta, weight in zip(p.nodes, p.weights):
            u = 1 - theta.cos()
            nodes.append((u, weight * self._mu(theta), (-self.w * u).exp()))
        wu = self.w * u_box
        p_box = (-wu).exp()
        # on the rectangle: |mu|, |u|, |u|^2, cos of the largest |arg E| = |Im(w u)|, and the range of |e^(-wu)|
        data = (
            arb(self._mu(box).abs_upper()),
            arb(u_box.abs_upper()),
            arb(wu.imag.abs_upper()).cos().lower(),
            p_box.abs_lower(),
            p_box.abs_upper(),
        )
        self.panels.append(
            (self._v_of_theta(a), self._v_of_theta(b) if b < math.pi else 2 * self.w_mid, p, nodes, data)
        )
        return True

    def below_probability(self, v: float) -> arb:
        """``P(V <= v)`` over the ball ``w``: ``P(u <= v/w) = P(t >= 1 - v/w)`` at the two ends of ``w``."""
        lo, hi = arithmetic.low(self.w), arithmetic.high(self.w)
        values = [laws.cap_probability(self.d, max(-1.0, 1 - Fraction(v) / Fraction(x))) for x in (lo, hi)]
        return values[0].union(values[1])


def _peak(k: int, gamma: arb, r_lo: arb, r_hi: arb) -> arb:
    """An upper bound of ``|E^k exp(-E)| <= r^k exp(-gamma r)`` over ``|E| = r`` in ``[r_lo, r_hi]``, where
    ``Re E >= gamma |E|``: the function of ``r`` rises to its peak at ``k/gamma`` and falls after it."""
    top = arb(k) / gamma
    if r_hi < top:
        r = r_hi
    elif r_lo > top:
        r = r_lo
    else:
        r = top
    return r**k * (-gamma * r).exp()


def v_top(s: float, d: int, w: float) -> float:
    """``V`` beyond which every inner integrand is below ``e^(s - V_top)``, negligible (module docstring)."""
    return max(s, 0.0) + 36.0 + 0.5 * (d - 1) * (1.0 + math.log1p(w))


def _moments(inner: _Inner, s: arb, wanted: tuple) -> dict:
    """``om`` and the moments ``M_{k,m}`` (``(k, m)`` in ``wanted``, ``k >= 1``) at a real ball ``s``: balls
    holding every value over ``s`` and ``w`` (module docstring, inner integrals)."""
    s_lo, s_hi = arithmetic.low(s), arithmetic.high(s)
    top = v_top(s_hi, inner.d, inner.w_mid)
    inner.extend(top)
    es = s.exp()
    om, err_om = arb(0), arb(0)
    acc = {key: arb(0) for key in wanted}
    err = {key: arb(0) for key in wanted}
    k_max = max(k for k, _ in wanted)
    m_max = max(m for _, m in wanted)
    v_below, v_above = 0.0, None
    for v_a, v_b, p, nodes, box in inner.panels:
        if v_b < s_lo - BELOW:
            v_below = v_b
            continue
        if v_a > top:
            v_above = v_a
            break
        for u, weight, pu in nodes:
            E = es * pu
            eE = (-E).exp()
            om += weight * (-(-E).expm1())
            by_k = [weight * eE]
            for _ in range(k_max):
                by_k.append(by_k[-1] * E)
            by_m = [arb(1)]
            for _ in range(m_max):
                by_m.append(by_m[-1] * u)
            for k, m in wanted:
                acc[(k, m)] += by_k[k] * by_m[m]
        mu_abs, u_abs, gamma, p_lo, p_hi = box
        r_lo, r_hi = (arb(s_lo).exp() * p_lo).lower(), (arb(s_hi).exp() * p_hi).upper()
        err_om += error_bound(p, mu_abs * r_hi.min(arb(2)))
        peaks = {k: mu_abs * _peak(k, gamma, r_lo, r_hi) for k in range(1, k_max + 1)}
        for k, m in wanted:
            err[(k, m)] += error_bound(p, peaks[k] * u_abs**m)
    if v_above is None and inner.theta_end < math.pi:
        v_above = inner.v_end
    if v_below > 0:
        floor = arb(s_lo - v_below).exp()  # E >= floor >= e^7 below
        prob = inner.below_probability(v_below)
        om += prob * (1 - (-floor).exp()).union(arb(1))
        for k, m in wanted:
            acc[(k, m)] += prob * arithmetic.interval(0, 1) * 2**m * floor**k * (-floor).exp()
    if v_above is not None:
        ceiling = arb(s_hi - v_above).exp()  # E <= ceiling above
        om += arithmetic.interval(0, 1) * ceiling
        for k, m in wanted:
            acc[(k, m)] += arithmetic.interval(0, 1) * 2**m * ceiling**k
    out = {key: widen(acc[key], err[key]) for key in wanted}
    out["om"] = widen(om, err_om)
    return out


# ----------------------------------------------------------------------------- outer (s) integral
def _terms(name: str, n: int, sigma2, c) -> list:
    """The monomials of ``name`` with their coefficients at ``(n, sigma^2, c)``: zero ones dropped, equal
    ``(power, factors)`` merged (so every power of ``psi`` left is ``>= 0``)."""
    merged: dict[tuple, Any] = {}
    for coef, power, factors in MONOMIALS[name]:
        key = (n - power, tuple(sorted(factors)))
        merged[key] = merged.get(key, 0) + coef(n, sigma2, c)
    return [(value, power, factors) for (power, factors), value in merged.items() if value != 0]


def _value(terms: list, moments: dict):
    psi = 1 - moments["om"]
    total = arb(0)
    for coef, power, factors in terms:
        term = coef * psi**power
        for key in factors:
            term = term * moments[key]
        total += term
    return total


def _magnitude(terms: list, psi: arb, x_hi: arb, cos_y: arb, g: dict) -> arb:
    """Upper bound of ``|integrand|`` on an outer rectangle ``[x_lo, x_hi] x i[-y, y]``: ``psi`` is
    ``psi(x_lo + log cos y)`` (the shift lemma, ``psi`` nonincreasing), and
    ``|M_{k,m}| <= min(2^m e^(k x_hi) E[e^(-kV)], cos(y)^(-k) 2^m (k/e)^k)`` (module docstring)."""
    psi = arb(psi.abs_upper())
    total = arb(0)
    for coef, power, factors in terms:
        term = abs(coef) * psi**power
        for k, m in factors:
            left = 2**m * (k * x_hi).exp() * g[k]
            peak = 2**m * (arb(k) / arb(1).exp()) ** k / cos_y**k
            term = term * left.min(peak)
        total += term
    return total


def _lower_tail(terms: list, g: dict, s_lo: float) -> arb:
    """``int_{-inf}^{s_lo} |integrand|``: ``M_{k,m} <= 2^m e^(ks) g_k``, ``psi <= 1``."""
    total = arb(0)
    for coef, _, factors in terms:
        exponent = sum(k for k, _ in factors)
        term = abs(coef) * arb(s_lo * exponent).exp() / exponent
        for k, m in factors:
            term = term * 2**m * g[k]
        total += term
    return total


def _upper_tail(terms: list, psi_hi: arb, s_hi: float, w_hi: float) -> arb:
    """``int_{s_hi}^{inf} |integrand|``, per monomial the smaller of two bounds: (a) ``psi <= psi(s_hi)``,
    ``int M_{k,m} <= 2^m Gamma(k)`` and the other factors at most ``2^m (k/e)^k`` (needs a power of
    ``psi``); (b) ``E >= x = e^(s - 2w)`` everywhere, so a product of ``j`` factors is at most
    ``2^(sum m) x^K e^(-j x)`` (``K = sum k``) and its integral at most ``2 x0^(K-1) e^(-j x0) / j`` once
    ``x0 = e^(s_hi - 2w) >= 2K``."""
    x0 = arb(s_hi - 2 * w_hi).exp()
    total = arb(0)
    for coef, power, factors in terms:
        bounds = []
        if power > 0:
            (k0, m0), rest = factors[0], factors[1:]
            term = abs(coef) * psi_hi**power * 2**m0 * arb(k0).gamma()
            for k, m in rest:
                term = term * 2**m * (arb(k) / arb(1).exp()) ** k
            bounds.append(term)
        K, j = sum(k for k, _ in factors), len(factors)
        if x0 >= 2 * K:
            bounds.append(abs(coef) * 2 ** sum(m for _, m in factors) * 2 * x0 ** (K - 1) * (-j * x0).exp() / j)
        if not bounds:
            return arb.pos_inf()
        total += min(bounds, key=lambda b: float(b.upper()))
    return total


def _integrate(inner: _Inner, n: int, sigma: float, L: float, names: tuple, rtol: float, scale: dict) -> dict:
    """Balls of ``int F_name ds`` over the whole line for every ``name`` (module docstring)."""
    d = inner.d
    sigma2, c = arithmetic.exact(sigma) ** 2, arithmetic.exact(L) ** 2 / (3 * d)
    terms = {name: _terms(name, n, sigma2, c) for name in names}
    budget = {name: rtol * scale[name] for name in names}
    wanted = tuple(sorted({f for x in names for _, _, fs in terms[x] for f in fs}))
    g = {k: (-k * inner.w).exp() * laws.phi(d, k * inner.w) for k in sorted({k for k, _ in wanted})}
    # lower end: the tail bound below the budget's 1e-3 part
    s_lo = -math.log(n) + 0.5 * (d - 1) * math.log1p(inner.w_mid) - 10.0
    while any(_lower_tail(terms[x], g, s_lo).abs_upper() > 1e-3 * budget[x] for x in names):
        s_lo -= 2.0
    from lipschitz_icl.exact.grids import v_quantile

    s_hi = max(v_quantile(d, inner.w_mid, n) + 4.5, s_lo + 4.0)
    while True:
        psi_hi = arb((1 - _moments(inner, arb(s_hi), wanted)["om"]).abs_upper())
        tails_hi = {x: _upper_tail(terms[x], psi_hi, s_hi, arithmetic.high(inner.w)) for x in names}
        if (
            all(tails_hi[x].is_finite() and tails_hi[x].abs_upper() <= 1e-3 * budget[x] for x in names)
            or s_hi > 2 * arithmetic.high(inner.w) + 60
        ):
            break
        s_hi += 3.0
    width = s_hi - s_lo
    sums = {x: arb(0) for x in names}
    errors = {x: arb(0) for x in names}
    stack = [(b, min(b + 2 * H_S, s_hi)) for b in _steps(s_lo, s_hi, 2 * H_S)]
    evaluations = 0
    while stack:
        a, b = stack.pop()
        p = panel(a, b, inner.q_outer, _rho_for(b - a, HEIGHT_OUTER))
        real, height = p.rectangle()
        cos_y = height.cos()
        psi = 1 - _moments(inner, arb(arithmetic.low(real) + arithmetic.low(cos_y.log())), wanted)["om"]
        err = {x: error_bound(p, _magnitude(terms[x], psi, real.upper(), cos_y, g)) for x in names}
        evaluations += 1
        if b - a > 1e-3 and any(err[x].abs_upper() > budget[x] * (b - a) / width for x in names):
            mid = a + (b - a) / 2
            stack.extend([(a, mid), (mid, b)])
            continue
        values = {x: arb(0) for x in names}
        for node, weight in zip(p.nodes, p.weights):
            moments = _moments(inner, node, wanted)
            evaluations += 1
            for x in names:
                values[x] += weight * _value(terms[x], moments)
        for x in names:
            sums[x] += values[x]
            errors[x] += err[x]
    lower = {x: _lower_tail(terms[x], g, s_lo) for x in names}
    out = {x: widen(sums[x], errors[x] + lower[x] + tails_hi[x]) for x in names}
    out["info"] = {"s_range": (s_lo, s_hi), "evaluations": evaluations, "inner_panels": len(inner.panels)}
    return out


def _orders(rtol: float) -> tuple:
    """Gauss orders ``(inner, outer)`` for a relative tolerance: the error bounds shrink like ``rho^(-2q)``
    with ``rho >= 3`` inside and ``rho ~ 2.2`` outside, so ``q ~ log(1/rtol) / log(rho^2)`` plus a margin
    for the magnitude bounds (they only cost time when too small: panels are halved)."""
    digits = math.log(1.0 / rtol)
    return (
        min(20, max(8, math.ceil(digits / math.log(9.0)) + 4)),
        min(22, max(8, math.ceil(digits / math.log(5.0)) + 3)),
    )


def _inner(d: int, w: tuple, rtol: float) -> _Inner:
    q_inner, q_outer = _orders(rtol)
    inner = _Inner(d, arithmetic.interval(*w), q_inner)
    inner.q_outer = q_outer
    return inner


def _rho_for(width: float, height: float) -> float:
    """The ellipse parameter whose rectangle has imaginary half-height ``height`` on a panel of ``width``:
    ``h B = height`` with ``B = (rho - 1/rho)/2``, i.e. ``rho = b + sqrt(b^2 + 1)``, ``b = height / h``
    (a narrower panel gets a larger ``rho``, so halving a panel shrinks its error geometrically)."""
    b = height / (0.5 * width)
    return b + math.sqrt(b * b + 1.0)


def _steps(lo: float, hi: float, step: float) -> list:
    out, x = [], lo
    while x < hi - 1e-12:
        out.append(x)
        x += step
    return out


# ----------------------------------------------------------------------------- public functions
def _scales(d: int, n: int, w: float, sigma: float, L: float) -> dict:
    """Magnitudes (float, from the exact quadrature) that set the absolute tolerances, not the result:
    every part is held to ``rtol`` times the loss (``q`` to ``rtol`` times itself), a derivative to ``rtol``
    times ``loss / w``."""
    from lipschitz_icl.exact.quadrature import exact_parts

    parts = exact_parts("affine", d, w, n)
    assert parts.affine is not None  # the affine class's quadrature fills its bias
    loss = sigma * sigma * parts.noise_factor + L * L / (3 * d) * parts.affine
    return {
        "noise": loss,
        "bias": loss,
        "q": parts.affine,
        "noise_w": loss / max(w, 1e-3),
        "bias_w": loss / max(w, 1e-3),
    }


def _check(d, n, w, sigma, L, task) -> tuple[int, int, tuple[float, float], float, float]:
    """Validated ``(d, n, w-ball, sigma, L)``; the certified method covers the affine class only."""
    from lipschitz_icl.problem import L_RANGE, MAX_D, MAX_N, SIGMA_MAX
    from lipschitz_icl.validation import ParameterError, check_int, check_real

    if task not in TASKS:
        raise ParameterError("task", "affine for the certified method (relu and zonal kernels are not certified)", task)
    d = check_int("d", d, minimum=2, maximum=MAX_D)
    n = check_int("n", n, minimum=1, maximum=MAX_N)
    sigma = check_real("sigma", sigma, minimum=0.0, maximum=SIGMA_MAX)
    L = check_real("L", L, minimum=L_RANGE[0], maximum=L_RANGE[1])
    ends = tuple(w) if isinstance(w, (tuple, list)) else (w, w)
    lo, hi = (check_real("w", x, minimum=0.0, maximum=MAX_W) for x in ends)
    if lo > hi:
        raise ParameterError("w", "an interval [lo, hi] with lo <= hi", list(ends))
    return d, n, (lo, hi), sigma, L


MAX_W = 1e8
MAX_INNER_PANELS = 3000  # budget of the inner grid (about V <= 4500): refused beyond, before the work


def loss_enclosure(
    d: int,
    n: int,
    w,
    sigma: float,
    L: float,
    *,
    rtol: float = 1e-10,
    task: str = "affine",
    precision_bits: int = arithmetic.PRECISION,
) -> LossEnclosure:
    """Certified balls of the noise and bias parts of the affine ICL loss at ``M = w I`` (``w`` a number or
    a ``(lo, hi)`` pair: then every ``w`` in it); ``rtol`` sets the quadrature tolerances (the balls are
    certified whatever it is)."""
    d, n, w, sigma, L = _check(d, n, w, sigma, L, task)
    with arithmetic.precision(precision_bits):
        if n == 1:
            return LossEnclosure(
                arithmetic.exact(sigma) ** 2, 2 * arithmetic.exact(L) ** 2 / (3 * d), {"exact": "n = 1"}
            )
        inner = _inner(d, w, rtol)
        names = ("noise", "bias") if sigma > 0 else ("bias",)
        out = _integrate(inner, n, sigma, L, names, rtol, _scales(d, n, inner.w_mid, sigma, L))
    return LossEnclosure(out.get("noise", arb(0)), out["bias"], out["info"])


def loss_derivatives(
    d: int,
    n: int,
    w,
    sigma: float,
    L: float,
    orders: tuple = (1,),
    *,
    rtol: float = 1e-10,
    precision_bits: int = arithmetic.PRECISION,
) -> dict:
    """``{order: ball}``: certified balls of ``d^k L / dw^k`` (``k`` in ``orders``, 1 to 3; 0 is the loss)
    holding every ``w`` of the ball ``w`` (``n >= 2``).  ``rtol`` is relative to ``loss / w^k``."""
    d, n, w, sigma, L = _check(d, n, w, sigma, L, "affine")
    suffix = {0: "", 1: "_w", 2: "_ww", 3: "_www"}
    with arithmetic.precision(precision_bits):
        inner = _inner(d, w, rtol)
        scale = _scales(d, n, inner.w_mid, sigma, L)
        parts = ("noise", "bias") if sigma > 0 else ("bias",)
        names = tuple(p + suffix[k] for k in orders for p in parts)
        tol = {p + suffix[k]: scale["noise"] / max(inner.w_mid, 1e-3) ** k for k in orders for p in parts}
        out = _integrate(inner, n, sigma, L, names, rtol, tol)
    return {k: sum((out[p + suffix[k]] for p in parts), arb(0)) for k in orders} | {"info": out["info"]}


def noise_and_q(
    d: int,
    n: int,
    w: float | tuple,
    sigma: float,
    L: float,
    *,
    rtol: float = 1e-8,
    precision_bits: int = arithmetic.PRECISION,
) -> tuple:
    """Balls of ``sigma^2 E[sum_i p_i^2]`` (nondecreasing in ``w``) and ``c E[(sum_i p_i u_i)^2]``
    (nonincreasing in ``w``, at most the bias), for lower bounds of the loss over an interval of ``w``."""
    d, n, w, sigma, L = _check(d, n, w, sigma, L, "affine")
    with arithmetic.precision(precision_bits):
        inner = _inner(d, w, rtol)
        out = _integrate(inner, n, sigma, L, ("noise", "q"), rtol, _scales(d, n, inner.w_mid, sigma, L))
        return out["noise"], out["q"] * arithmetic.exact(L) ** 2 / (3 * d)
