"""Tests of lipschitz_icl.derivations.window_law: the window law of Theorem 3.4 (registry: thm34.window-law; Lemmas
C.3-C.9,
Assumption B.4) for the affine and relu classes.

Decision rules (each can fail; each has a false variant that must fail it):

* expansion checks: ``(exact/leading - 1) * w^q`` must approach the derived next-order coefficient ``k``,
  its distance to ``k`` decreasing along the grid and below ``tol * |k|`` at the last point; ``tol`` is
  set from the size of the following order at the last grid point (stated per test);
* exact first-order condition: ``w*_exact / (C rho^alpha) - 1`` scaled by ``(C rho^alpha)^q`` must
  approach the derived shift coefficient the same way;
* finite-n (delta-method) terms: a Monte Carlo estimate, Richardson-extrapolated in ``n`` to remove the
  next order, must lie within 4 standard errors of the derived constant.
"""

import itertools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from lipschitz_icl.derivations import sphere_asymptotics as S
from lipschitz_icl.derivations import window_law as W


def approaches(xs, scaled, k, tol):
    """``scaled[i] -> k`` along ``xs``: monotone distance, last distance <= tol * |k|."""
    dist = [abs(s - k) for s in scaled]
    return all(b < a for a, b in itertools.pairwise(dist)) and dist[-1] <= tol * abs(k)


# --- symbolic results -----------------------------------------------------------------------------------


def test_exponents_are_the_expected_functions_of_d():
    d = S.d
    aff, rel = W.optimum_exprs("affine"), W.optimum_exprs("relu")
    assert sp.simplify(aff["alpha"] - 2 / (d + 3)) == 0
    assert sp.simplify(rel["alpha"] - 2 / (d + 2)) == 0
    assert sp.simplify(aff["gamma"] - 4 / (d + 3)) == 0
    assert sp.simplify(rel["gamma"] - 3 / (d + 2)) == 0
    assert W.bias_leading_expr("affine")[0] == 2
    assert W.bias_leading_expr("relu")[0] == sp.Rational(3, 2)
    assert sp.simplify(W.bias_leading_expr("affine")[1] - (d - 1) ** 2 / (12 * d)) == 0
    assert sp.simplify(W.bias_next_order_expr("relu")[1] - (d - 1) ** 2 / (12 * d)) == 0


def test_generic_optimum_solves_the_first_order_condition_numerically():
    """Plug numbers into the generic solution and check the derivative of the objective vanishes there and
    changes sign (a minimum)."""
    g = W._generic_optimum()
    vals = {W._p: 1.5, W._b: 0.3, W._beta: 2.0, W._cr: 0.7, W.L: 1.3, W.sigma: 0.4, W.n: 500}
    ws = float(g["w_star"].subs(vals))
    f = (
        vals[W._b] * vals[W.L] ** 2 * W.w ** (-vals[W._p])
        + vals[W.sigma] ** 2 * vals[W._cr] * W.w ** vals[W._beta] / vals[W.n]
    )
    fp = sp.lambdify(W.w, sp.diff(f, W.w))
    assert abs(fp(ws)) < 1e-12 * abs(fp(2 * ws))
    assert fp(0.9 * ws) < 0 < fp(1.1 * ws)
    rho_v = vals[W.n] * vals[W.L] ** 2 / vals[W.sigma] ** 2
    alpha = float(g["alpha"].subs(vals))
    assert ws == pytest.approx(float(g["C"].subs(vals)) * rho_v**alpha, rel=1e-12)
    e_star = float(f.subs(W.w, ws))
    assert e_star == pytest.approx(
        float(g["K"].subs(vals)) * vals[W.L] ** 2 * rho_v ** -float(g["gamma"].subs(vals)), rel=1e-12
    )


def test_delta_method_formulas():
    m1, m2, m3, r1, r2, h2 = sp.symbols("m1 m2 m3 r1 r2 h2", positive=True)
    assert sp.simplify(W.delta_method_bias_correction() - m2 / m1**2 * (h2 - 4 * r1 * r2 + 3 * r1**2)) == 0
    R = m2 / m1**2
    assert sp.simplify(W.delta_method_noise_correction() - (3 * R**2 - 2 * m3 / m1**3 - R)) == 0


# --- the relu kink constant ----------------------------------------------------------------------------


def test_kink_integral_against_quadrature():
    """J = int (gamma Phi(gamma) + phi(gamma) - gamma_+)^2 dgamma by mpmath quadrature, 30 digits; and the
    hinge mean E(gamma + g)_+ against direct quadrature."""
    J = W.kink_integral()
    with mpmath.workdps(30):

        def psi(g):
            return g * mpmath.ncdf(g) + mpmath.npdf(g) - max(g, 0)

        num = mpmath.quad(lambda g: psi(g) ** 2, [-mpmath.inf, 0, mpmath.inf])
        assert abs(num / sp.N(J, 30) - 1) < mpmath.mpf(10) ** -25
        H = W.gaussian_hinge_mean()
        for gv in ("-1.3", "0.2", "2.5"):
            gv = mpmath.mpf(gv)
            direct = mpmath.quad(lambda z: (gv + z) * mpmath.npdf(z), [-gv, mpmath.inf])
            assert abs(direct - sp.N(H.subs(W._gam, gv), 30)) < mpmath.mpf(10) ** -25


def test_density_helpers_against_quadrature():
    with mpmath.workdps(30):
        for d in (2, 3, 5):
            a = mpmath.mpf(d - 1) / 2
            norm = 2 ** (d - 2) * mpmath.beta(a, a)

            def p(c):
                return (1 - c * c) ** ((d - 3) / mpmath.mpf(2)) / norm

            assert abs(sp.N(W.density_at_zero().subs(S.d, d), 30) - p(0)) < mpmath.mpf(10) ** -25
            for k in (0, 2):  # c = sin(theta): smooth integrand also for d = 2
                num = mpmath.quad(lambda th: mpmath.sin(th) ** k * mpmath.cos(th) ** (d - 2) / norm, [0, mpmath.pi / 2])
                assert abs(sp.N(W.half_moment(k).subs(S.d, d), 30) - num) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("d", [3, 5])
def test_z_average_against_quadrature(d):
    G = W.z_average(d)
    al, be = sp.Symbol("alpha", real=True), sp.Symbol("beta", positive=True)
    with mpmath.workdps(30):
        a = mpmath.mpf(d - 2) / 2
        norm = 2 ** (d - 3) * mpmath.beta(a, a)
        for av, bv in (("0.3", "0.5"), ("-0.2", "0.7")):
            av, bv = mpmath.mpf(av), mpmath.mpf(bv)
            # z = sin(theta): (alpha + beta sin) cos^(d-3) / norm, smooth on [asin(-alpha/beta), pi/2]
            num = mpmath.quad(
                lambda th: (av + bv * mpmath.sin(th)) * mpmath.cos(th) ** (d - 3) / norm,
                [mpmath.asin(-av / bv), mpmath.pi / 2],
            )
            assert abs(sp.N(G.subs({al: av, be: bv}), 30) - num) < mpmath.mpf(10) ** -20


# --- exact references ----------------------------------------------------------------------------------


def test_relu_quadrature_mpmath_vs_float():
    """The 30-digit mpmath rule (12 nodes per panel, error ~5e-9) and the float64 rule (32 nodes, error
    ~1e-15) agree; and the float rule is converged in its node count."""
    with mpmath.workdps(30):
        hi = W.exact_bias_inf("relu", 3, 400, m=12)
    f32 = W.exact_bias_inf_relu_float(3, 400.0, m=32)
    f24 = W.exact_bias_inf_relu_float(3, 400.0, m=24)
    assert abs(float(hi) / f32 - 1) < 3e-8
    assert abs(f24 / f32 - 1) < 1e-13


@pytest.mark.parametrize("d", [2, 3, 5])
def test_relu_small_w_limit(d):
    """Independent closed form as w -> 0 (x uniform): (2/3)(E c_+^2 - (E t_+)^2), E c_+^2 = 1/(2d)."""
    with mpmath.workdps(30):
        a = mpmath.mpf(d - 1) / 2
        norm = 2 ** (d - 2) * mpmath.beta(a, a)
        mean_pos = mpmath.quad(lambda t: t * (1 - t * t) ** ((d - 3) / mpmath.mpf(2)) / norm, [0, 1])
        limit = float(mpmath.mpf(2) / 3 * (mpmath.mpf(1) / (2 * d) - mean_pos**2))
    assert W.exact_bias_inf_relu_float(d, 1e-7) == pytest.approx(limit, rel=1e-6)


def test_relu_bias_monte_carlo_d3():
    """Independent check of the geometry (u.x decomposition and z-average) at w = 4, d = 3: explicit
    vectors u, x, x' (x, x' i.i.d. from the tilted law about q = e_1), the unbiased product estimator
    E[((u.x)_+ - c_+)((u.x')_+ - c_+)] of E_c r(c)^2; within 4 standard errors."""
    rng = np.random.default_rng(7)
    wv, M = 4.0, 400_000

    def tilted(size):
        U = rng.uniform(size=size)
        t = 1 + np.log1p(-U * (1 - np.exp(-2 * wv))) / wv  # inverse CDF of w e^{wt}/(2 sinh w), d = 3
        phi = rng.uniform(0, 2 * np.pi, size)
        s = np.sqrt(1 - t * t)
        return np.stack([t, s * np.cos(phi), s * np.sin(phi)], -1)

    u = rng.standard_normal((M, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    c = u[:, 0]
    h1 = np.maximum(np.sum(u * tilted(M), 1), 0) - np.maximum(c, 0)
    h2 = np.maximum(np.sum(u * tilted(M), 1), 0) - np.maximum(c, 0)
    prod = (2.0 / 3.0) * h1 * h2
    est, se = prod.mean(), prod.std() / math.sqrt(M)
    exact = W.exact_bias_inf_relu_float(3, wv)
    assert abs(est - exact) < 4 * se
    assert se < 0.05 * exact  # the check has power


def test_relu_derivative_against_finite_difference():
    wv, h = 300.0, 0.03
    _val, der = W.exact_bias_inf_relu_float(5, wv, with_derivative=True)
    fd = (W.exact_bias_inf_relu_float(5, wv + h) - W.exact_bias_inf_relu_float(5, wv - h)) / (2 * h)
    assert der == pytest.approx(fd, rel=1e-7)
    with mpmath.workdps(30):
        _v, dv = W.exact_bias_inf("affine", 5, wv, with_derivative=True)
        fda = (W.exact_bias_inf("affine", 5, wv + h) - W.exact_bias_inf("affine", 5, wv - h)) / (2 * h)
        assert abs(dv / fda - 1) < 1e-7


# --- expansions against the exact functions -------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 5])
def test_affine_bias_expansion(d):
    """bias_inf/lead - 1 ~ k/w, k = next/lead; 30 digits, w = 50..3200 (following order 1/w: tol 2%)."""
    p, b = W.bias_leading_expr("affine")
    _p2, b2 = W.bias_next_order_expr("affine")
    ws = [50 * 4**j for j in range(4)]
    with mpmath.workdps(30):
        cb = mpmath.mpf(str(sp.N(b.subs(S.d, d), 40)))
        k = mpmath.mpf(str(sp.N((b2 / b).subs(S.d, d), 40)))
        rel = [W.exact_bias_inf("affine", d, wv) / (cb * mpmath.mpf(wv) ** -int(p)) - 1 for wv in ws]
    if k == 0:  # d = 3: 1 - A_3 = 1/w up to exp(-2w)
        assert all(abs(r) < 1e-25 for r in rel)
    else:
        assert approaches(ws, [r * wv for r, wv in zip(rel, ws)], k, 0.02)


def _relu_rel(d, ws, const_factor=1.0, power_factor=1.0):
    pb, cb = W.bias_leading("relu", d)
    return [W.exact_bias_inf_relu_float(d, wv) / (const_factor * cb * wv ** (power_factor * pb)) - 1 for wv in ws]


@pytest.mark.parametrize("d", [2, 3, 5])
def test_relu_bias_expansion(d):
    """relu bias_inf = C_b w^(-3/2) (1 + kappa w^(-1/2) + O(1/w)): (exact/lead - 1) w^(1/2) -> kappa, the
    distance shrinking like w^(-1/2); at w = 1e6 it is below 1% of kappa."""
    ws = [1e2, 1e3, 1e4, 1e5, 1e6]
    _pb, cb = W.bias_leading("relu", d)
    _p2, c2 = W.bias_next_order("relu", d)
    kappa = c2 / cb
    scaled = [r * wv**0.5 for r, wv in zip(_relu_rel(d, ws), ws)]
    assert approaches(ws, scaled, kappa, 0.01)
    dist = [abs(s - kappa) for s in scaled]
    ratios = [b / a for a, b in itertools.pairwise(dist)]
    assert all(0.2 < q < 0.5 for q in ratios)  # 10^(-1/2) = 0.316 per decade


@pytest.mark.parametrize("factor", [(1.05, 1.0), (0.95, 1.0), (1.0, 1.05)])
def test_false_relu_constant_or_power_is_rejected(factor):
    """False variants: C_b(d) off by +-5%, or the power -3/2 off by 5%, fail the same check."""
    d, ws = 3, [1e2, 1e3, 1e4, 1e5, 1e6]
    _pb, cb = W.bias_leading("relu", d)
    _p2, c2 = W.bias_next_order("relu", d)
    scaled = [r * wv**0.5 for r, wv in zip(_relu_rel(d, ws, *factor), ws)]
    assert not approaches(ws, scaled, c2 / cb, 0.01)


def test_noise_leading_matches_sphere_module():
    for d in (2, 3, 5):
        power, const = W.noise_leading(d)
        assert power == (d - 1) / 2
        assert const == pytest.approx(S.c_R_float(d), rel=1e-15)


# --- the window law: exact first-order condition ----------------------------------------------------------

FOC_GRID = {"affine": [1e4, 1e6, 1e8, 1e10], "relu": [1e6, 1e8, 1e10, 1e12, 1e14]}


def _foc_scaled(task, d, alpha_factor=1.0, C_factor=1.0):
    alpha, C = W.window_law(task, d)
    q, k = W.wstar_correction(task, d)
    rhos = FOC_GRID[task]
    out = []
    for rho_v in rhos:
        w0 = C_factor * C * rho_v ** (alpha * alpha_factor)
        out.append((W.exact_foc_wstar(task, d, rho_v) / w0 - 1, w0))
    return rhos, out, q, k


@pytest.mark.parametrize("task", ["affine", "relu"])
@pytest.mark.parametrize("d", [2, 3, 5])
def test_exact_foc_approaches_window_law(task, d):
    """w*_exact-FOC / (C rho^alpha) -> 1, with the derived first correction k w0^(-q): the scaled
    deviation approaches k, to 10% at the last grid point (its own correction is O(w0^(-1/2)) for relu,
    O(1/w0) for affine).  For affine d = 3 the law is exact up to exp(-2w): deviation < 1e-6."""
    rhos, out, q, k = _foc_scaled(task, d)
    devs = [abs(e) for e, _ in out]
    assert all(b < a for a, b in itertools.pairwise(devs)) or max(devs) < 1e-6
    if k == 0:
        assert max(devs) < 1e-6
    else:
        assert approaches(rhos, [e * w0**q for e, w0 in out], k, 0.1)


@pytest.mark.parametrize("variant", [(1.05, 1.0), (0.95, 1.0), (1.0, 1.05)])
@pytest.mark.parametrize("task", ["affine", "relu"])
def test_false_window_law_is_rejected(task, variant):
    """False variants: alpha off by +-5% or C off by 5% fail the same check (d = 5)."""
    rhos, out, q, k = _foc_scaled(task, 5, *variant)
    assert not approaches(rhos, [e * w0**q for e, w0 in out], k, 0.1)


# --- finite-n (delta-method) terms, Monte Carlo ------------------------------------------------------------


def _mc_finite_n(seed):
    """d = 3 (t uniform on [-1, 1]), w = 2: Richardson-extrapolated n (n E sum p^2 - R) and
    n (E bias_affine*3d/L^2 - (1-A)^2) from n = 32 and 64, with standard errors."""
    rng = np.random.default_rng(seed)
    wv = 2.0
    A1 = 1 / math.tanh(wv) - 1 / wv
    R = float(S.exact_collision_ratio(3, wv))
    res = {}
    for n_ in (32, 64):
        M = int(8e6 / n_)
        s2, b = [], []
        for _ in range(10):
            t = rng.uniform(-1, 1, (M // 10, n_))
            e = np.exp(wv * (t - 1))
            p = e / e.sum(1, keepdims=True)
            s2.append((p * p).sum(1))
            b.append(((p * t).sum(1) - 1) ** 2 + (p * p * (1 - t * t)).sum(1))
        s2, b = np.concatenate(s2), np.concatenate(b)
        res[n_] = (
            (n_ * s2.mean() - R) * n_,
            n_ * n_ * s2.std() / math.sqrt(M),
            (b.mean() - (1 - A1) ** 2) * n_,
            n_ * b.std() / math.sqrt(M),
        )
    noise = (2 * res[64][0] - res[32][0], math.hypot(2 * res[64][1], res[32][1]))
    bias = (2 * res[64][2] - res[32][2], math.hypot(2 * res[64][3], res[32][3]))
    return noise, bias


def test_finite_n_terms_monte_carlo():
    """The O(1/n^2) noise and O(1/n) affine-bias constants of the delta method, at d = 3, w = 2, against
    Monte Carlo (within 4 SE); the false variants (no noise correction; the bias correction without the
    ratio-estimator bias, i.e. variance only) are off by more than 4 SE."""
    with mpmath.workdps(30):
        R = S.exact_collision_ratio(3, 2)
        c3 = S.exact_phi(3, 6) / S.exact_phi(3, 2) ** 3
        A1, A2 = S.exact_tilted_mean(3, 2), S.exact_tilted_mean(3, 4)
        m1, m2, m3, _r1, _r2, _h2 = sp.symbols("m1 m2 m3 r1 r2 h2", positive=True)
        noise_k = float(
            sp.N(
                W.delta_method_noise_correction().subs({m1: 1, m2: sp.Float(str(R), 30), m3: sp.Float(str(c3), 30)}), 20
            )
        )
        # affine, per L^2/(3d) and with E_u folded in: h2 - 4 r1 r2 + 3 r1^2 -> 2 - 2A2 - 4(1-A1)(1-A2) + 3(1-A1)^2
        bracket = 2 - 2 * A2 - 4 * (1 - A1) * (1 - A2) + 3 * (1 - A1) ** 2
        bias_k = float(R * bracket)
        bias_false = float(R * (1 - 2 * A1 * A2 + A1**2))
    (noise_est, noise_se), (bias_est, bias_se) = _mc_finite_n(11)
    assert abs(noise_est - noise_k) < 4 * noise_se
    assert abs(noise_est) > 4 * noise_se
    assert abs(bias_est - bias_k) < 4 * bias_se
    assert abs(bias_est - bias_false) > 4 * bias_se


def test_finite_n_leading_expansion_matches_exact_bracket():
    """bias_finite_n_leading (affine) is the large-w limit of (R/n) * bracket/(3d): ratio -> 1 like 1/w."""
    d = 5
    power, const = W.bias_finite_n_leading("affine", d)
    ws = [100, 400, 1600]
    rel = []
    with mpmath.workdps(30):
        for wv in ws:
            A1, A2 = S.exact_tilted_mean(d, wv), S.exact_tilted_mean(d, 2 * wv)
            exact = (
                S.exact_collision_ratio(d, wv) * (2 - 2 * A2 - 4 * (1 - A1) * (1 - A2) + 3 * (1 - A1) ** 2) / (3 * d)
            )
            rel.append(float(exact / (const * mpmath.mpf(wv) ** power)) - 1)
    assert all(abs(b) < abs(a) / 3 for a, b in itertools.pairwise(rel))  # ~ 1/w: factor 4 per step
    assert abs(rel[-1]) < 0.01


# --- dropped-term report ------------------------------------------------------------------------------------


def test_dropped_terms_report():
    """At fixed L^2/sigma^2 = 1 every dropped term shrinks as n grows; the next-order-in-w entry agrees
    with the exact affine bias at w* (to its own O(1/w*) correction)."""
    prev = None
    for n_ in (1e3, 1e5, 1e7):
        rep = W.dropped_terms("relu", 3, n_, n_)
        if prev is not None:
            for key in ("bias_next_order_in_w", "bias_finite_n", "noise_finite_n", "max"):
                assert rep[key] < prev[key]
        prev = rep
    d, rho_v, n_ = 5, 1e8, 1e6
    rep = W.dropped_terms("affine", d, rho_v, n_)
    ws = rep["w_star"]
    L2 = rho_v / n_
    pb, cb = W.bias_leading("affine", d)
    pn, cn = W.noise_leading(d)
    total = cb * L2 * ws**pb + cn * ws**pn / n_
    with mpmath.workdps(30):
        exact_gap = abs(float(W.exact_bias_inf("affine", d, ws)) - cb * ws**pb) * L2 / total
    assert rep["bias_next_order_in_w"] == pytest.approx(exact_gap, rel=3 / ws)
    assert rep["max"] == max(
        rep[k] for k in ("bias_next_order_in_w", "noise_next_order_in_w", "bias_finite_n", "noise_finite_n")
    )
    with pytest.raises(ValueError):
        W.dropped_terms("quadratic", 3, 1e4, 1e3)


def test_readable_closed_forms_in_the_docstring_equal_the_derivation():
    """The per-class forms written in the module docstring are the derived expressions (so the docs
    cannot drift from the derivation)."""
    d = S.d
    aff, rel = W.optimum_exprs("affine"), W.optimum_exprs("relu")
    C_aff = ((d - 1) * 2 ** (d - 2) * sp.gamma(d / 2) / (3 * d * sp.sqrt(sp.pi))) ** (2 / (d + 3))
    C_rel = (
        2
        * (2 - sp.sqrt(2))
        * 2 ** (d - 2)
        * sp.gamma(d / 2) ** 2
        / (3 * sp.pi ** sp.Rational(3, 2) * (d - 1) * sp.gamma((d - 1) / 2))
    ) ** (2 / (d + 2))
    K_aff = (d - 1) * (d + 3) / (12 * d) * C_aff**-2
    K_rel = rel["b"] * (d + 2) / (d - 1) * C_rel ** sp.Rational(-3, 2)
    for dim in (2, 3, 4, 5, 8):
        for derived, readable in ((aff["C"], C_aff), (rel["C"], C_rel), (aff["K"], K_aff), (rel["K"], K_rel)):
            assert abs(sp.N((derived / readable).subs(d, dim), 30) - 1) < 1e-25


def test_theory_table_rows():
    rows = W.theory_table((2, 3, 5))
    assert len(rows) == 6
    for row in rows:
        assert (row["alpha"], row["C"]) == W.window_law(row["task"], row["d"])
        # E* = bias + noise at w* = C rho^alpha, per L^2: K = b C^-p + c_R C^beta
        K = (
            row["bias_constant"] * row["C"] ** row["bias_power"]
            + row["noise_constant"] * row["C"] ** row["noise_power"]
        )
        assert row["min_error_constant"] == pytest.approx(K, rel=1e-12)
        assert row["min_error_power"] == pytest.approx(row["bias_power"] * row["alpha"], rel=1e-12)


# --- the cosine class (a smooth class, used by thm35.same-l-classes) -------------------------------------


def _cosine_bias_d3(w: float, k: float) -> float:
    """Large-n bias of the cosine class at d = 3 by quadrature: ``(L^2/(2k^2)) E_c |chi(c) - e^(ikc)|^2``,
    ``chi(c) = E_w[e^(ik u.x)] = E_t[e^(ikct) J0(k sqrt(1-c^2) sqrt(1-t^2))]`` (``c`` uniform on [-1, 1], ``t``
    tilted: ``w(1 - t)`` exponential truncated at ``2w``), L = 1."""
    from scipy import special

    gc, wc = np.polynomial.legendre.leggauss(200)
    gs, ws = np.polynomial.laguerre.laggauss(60)
    keep = gs <= 2 * w
    t, wt = 1 - gs[keep] / w, ws[keep] / (1 - math.exp(-2 * w))
    c = gc[:, None]
    chi = np.sum(wt * np.exp(1j * k * c * t) * special.j0(k * np.sqrt(1 - c**2) * np.sqrt(1 - t**2)), axis=1)
    return float(np.sum(wc / 2 * np.abs(chi - np.exp(1j * k * gc)) ** 2) / (2 * k**2))


@pytest.mark.parametrize("k", [1.0, 4.0])
def test_cosine_bias_leading_against_quadrature(k):
    """``w^2 bias_inf(w) -> b(3, k)`` with a ``1/w`` next order: ``(w^2 bias - b) w`` settles (changes by
    < 5% from w = 400 to 1600) and ``w^2 bias`` is within 1% of ``b`` at w = 1600; the affine constant and
    the cosine constant without its curvature term (k^2 part) are refuted by the same data."""
    power, b = W.cosine_bias_leading(3, k)
    assert power == -2.0
    ws = [400.0, 1600.0]
    scaled = [w**2 * _cosine_bias_d3(w, k) for w in ws]
    next_order = [(s - b) * w for s, w in zip(scaled, ws)]
    assert abs(next_order[1] / next_order[0] - 1) < 0.05
    assert abs(scaled[1] / b - 1) < 0.01
    for wrong in (W.bias_leading("affine", 3)[1], (3 - 1) ** 2 / (8 * 3)):
        assert abs(scaled[1] / wrong - 1) > 0.05


def test_cosine_route_gives_the_affine_constant():
    """The same tilted-mean route (drift ``a/w``) for affine tasks (``E (a.q)^2 = 1/(3d)`` at L = 1, no
    curvature) gives the affine constant derived from the series of ``1 - A_d``."""
    a = W._one_over_w_coefficient(S.one_minus_tilted_mean_series(1))
    assert sp.simplify(a**2 / (3 * S.d) - W.bias_leading_expr("affine")[1]) == 0
    p, b = W.cosine_bias_leading_expr()
    assert p == 2 and sp.simplify(b - (S.d - 1) / (8 * S.d) * ((S.d - 1) + W._k**2 * (S.d + 1) / (S.d + 2))) == 0
