"""The exact loss of M = w I (lipschitz_icl.exact.route): closed-form pieces, convergence, anchors, Monte Carlo.

Statistical rule for every Monte Carlo comparison: the exact value must lie within 4 standard errors
(plus its own stated quadrature error) of the Monte Carlo mean; seeds are derived from the parameters
through a SeedSequence, not chosen.  Each comparison is paired with a deliberately wrong variant that
the same rule must reject.
"""

import math
import zlib

import numpy as np
import pytest
from scipy import integrate, special

from lipschitz_icl import sphere
from lipschitz_icl.exact.route import exact_loss, exact_parts, relu_diagonal, relu_offdiagonal_factor
from lipschitz_icl.problem import make_problem
from lipschitz_icl.tasks.registry import relu_kernel
from lipschitz_icl.validation import ParameterError

Z_RULE = 4.0


def _seed(*key):
    """A Generator determined by the test parameters (crc32 of their text; no seed is tuned)."""
    return np.random.default_rng(np.random.SeedSequence([7, zlib.crc32(repr(key).encode())]))


def _expected_kappa(d):
    """``E[kappa(t)]``, ``kappa(t) = (sqrt(1-t^2) + (pi - arccos t) t) / (2 pi d)``, by adaptive quad."""

    def f(t):
        return (math.sqrt(1 - t * t) + (math.pi - math.acos(t)) * t) / (2 * math.pi * d) * sphere.t_density(t, d)

    return integrate.quad(f, -1, 1, epsabs=0, epsrel=1e-13, limit=200)[0]


# --------------------------------------------------------------------------- argument checks
def test_rejects_other_tasks_and_bad_w():
    with pytest.raises(ParameterError, match="'task'"):
        exact_loss(make_problem("lowrank-linear", 3, 10, 1.0, 0.5, rank=2), 1.0)  # cosine: exact_zonal
    problem = make_problem("affine", 3, 10, 1.0, 0.5)
    for bad in (-1.0, float("nan"), float("inf"), "2"):
        with pytest.raises(ParameterError, match="'w'"):
            exact_loss(problem, bad)


# --------------------------------------------------------------------------- closed-form pieces
@pytest.mark.parametrize("d", [2, 3, 4, 5, 10])
def test_relu_factor_matches_direct_average_over_z(d):
    """``D(c, theta) = E_z[(c t + s_c s_t z)_+] - c_+`` against adaptive quadrature over ``z ~ p_{d-1}``
    (a sum over the two signs for ``d = 2``), at angles that hit every branch of the closed form."""
    rng = np.random.default_rng(d)
    tc = np.concatenate([rng.uniform(0, np.pi, 30), [0.0, np.pi / 2, np.pi]])
    th = np.concatenate([rng.uniform(0, np.pi, 30), [0.3, 0.0, 1e-3]])
    for a, b in zip(tc, th):
        c, sc, t, st = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
        if d == 2:
            direct = 0.5 * (max(c * t + sc * st, 0) + max(c * t - sc * st, 0))
        else:
            # z = cos phi, phi with density sin^(d-3) phi / B(1/2, (d-2)/2) on [0, pi] (smooth)
            norm = special.beta(0.5, 0.5 * (d - 2))

            def f(phi):
                return max(c * t + sc * st * math.cos(phi), 0.0) * math.sin(phi) ** (d - 3) / norm

            zk = -c * t / (sc * st) if sc * st > 0 else 2.0
            pts = [math.acos(zk)] if -1 < zk < 1 else None
            direct = integrate.quad(f, 0, math.pi, points=pts, epsabs=1e-15, epsrel=1e-12, limit=200)[0]
        assert relu_offdiagonal_factor(d, a, b) == pytest.approx(direct - max(c, 0), abs=1e-12)


def test_relu_diagonal_is_the_kernel_on_the_diagonal():
    """``K(x, x) = kappa(x, x) - 2 kappa(x, q) + kappa(q, q)`` with the project's ``relu_kernel``."""
    for d in (2, 5, 9):
        theta = np.array([1e-4, 5e-3, 0.02, 0.7, 2.0, 3.1])
        x = np.stack([np.cos(theta), np.sin(theta)] + [np.zeros_like(theta)] * (d - 2), axis=1)
        q = np.zeros(d)
        q[0] = 1.0
        K = relu_kernel(x, x) - 2 * relu_kernel(x, q) + relu_kernel(q, q)
        np.testing.assert_allclose(relu_diagonal(d, theta), K, rtol=1e-9, atol=1e-16)


# --------------------------------------------------------------------------- convergence
GRID = [
    (task, d, n, w)
    for task in ("affine", "relu")
    for d, n, w in [
        (2, 1, 3.0),
        (3, 10, 20.0),
        (5, 100, 10.0),
        (10, 1000, 4.0),
        (2, 10**14, 1e6),
        (5, 10**14, 1e4),
        (10, 10**14, 300.0),
        (3, 10**6, 0.0),
    ]
]


@pytest.mark.parametrize("task, d, n, w", GRID)
def test_refinement_stays_within_stated_error(task, d, n, w):
    """Two levels finer than the returned one, every part moves by less than the stated ``abs_error``,
    which is itself below ``rtol`` times the value."""
    rtol = 1e-6
    result = exact_loss(make_problem(task, d, n, 1.0, 1.0), w, rtol=rtol)
    assert result.info["converged"]
    finer = exact_parts(task, d, w, n, level=result.info["level"] + 2)
    scale = 1.0 / (3 * d) if task == "affine" else 2.0 / 3.0
    bias_finer = scale * (finer.affine if task == "affine" else finer.relu)
    for est, ref in ((result.noise, finer.noise_factor), (result.bias, bias_finer)):
        assert est.standard_error == 0.0
        assert est.abs_error <= rtol * abs(est.value)
        assert abs(est.value - ref) <= est.abs_error + 1e-15 * abs(ref), (est, ref)


# --------------------------------------------------------------------------- anchors
@pytest.mark.parametrize("d", [2, 3, 7])
@pytest.mark.parametrize("w", [0.0, 0.5, 6.0, 40.0])
def test_single_point_context(d, w):
    """n = 1: p_1 = 1, so noise = sigma^2, affine bias = (L^2/(3d)) E[2(1-t)] = 2 L^2/(3d) and relu bias
    = (2 L^2/3) E[K(x, x)] = (2 L^2/3)(1/d - 2 E[kappa(t)]), whatever w."""
    L, sigma = 1.7, 0.3
    aff = exact_loss(make_problem("affine", d, 1, L, sigma), w)
    relu = exact_loss(make_problem("relu", d, 1, L, sigma), w)
    assert aff.noise.value == pytest.approx(sigma**2, rel=1e-9)
    assert aff.bias.value == pytest.approx(2 * L**2 / (3 * d), rel=1e-9)
    assert relu.bias.value == pytest.approx(2 * L**2 / 3 * (1 / d - 2 * _expected_kappa(d)), rel=1e-9)


@pytest.mark.parametrize("d", [2, 5, 30])
def test_single_point_context_far_in_the_few_points_regime(d):
    """n = 1 at w = 3000: the s range reaches V ~ 2w = 6000, the windowed sums and the graded s panels
    must still return sigma^2 and 2 L^2/(3d)."""
    res = exact_loss(make_problem("affine", d, 1, 1.0, 1.0), 3000.0)
    assert res.noise.value == pytest.approx(1.0, rel=1e-9)
    assert res.bias.value == pytest.approx(2 / (3 * d), rel=1e-9)


def test_relu_refuses_a_grid_beyond_its_budget_at_once(monkeypatch):
    """Few points dominating at w = 1e5, n = 1: a ParameterError naming 'w', before any evaluation (the
    budget is checked on the grid; no level is evaluated)."""
    from lipschitz_icl.exact import quadrature

    def evaluated(*args, **kwargs):
        raise AssertionError("a level was evaluated before the budget refused it")

    monkeypatch.setattr(quadrature, "_evaluate", evaluated)
    with pytest.raises(ParameterError, match="'w'"):
        exact_loss(make_problem("relu", 2, 1, 1.0, 0.5), 1e5)


@pytest.mark.parametrize("d", [2, 5])
@pytest.mark.parametrize("n", [1, 7, 10**6, 10**14])
def test_uniform_weights_at_w_zero(d, n):
    """w = 0: p_i = 1/n.  E[sum p_i^2] = 1/n.  affine: (1/n^2)(n E[2(1-t)] + n(n-1) E[1-t]^2)
    = 2/n + (n-1)/n = 1 + 1/n.  relu: E[K(x,x)] = 1/d - 2Ek and E[K(x_i,x_j)] = Ek - 2Ek + 1/(2d) for
    i != j (Ek = E[kappa(t)], E[kappa(x_i, x_j)] = Ek by rotation), so (1/n)(1/d - 2Ek) +
    (1 - 1/n)(1/(2d) - Ek) = (1/(2d) - Ek)(1 + 1/n)."""
    L, sigma = 1.3, 0.8
    aff = exact_loss(make_problem("affine", d, n, L, sigma), 0.0)
    relu = exact_loss(make_problem("relu", d, n, L, sigma), 0.0)
    assert aff.noise.value == pytest.approx(sigma**2 / n, rel=1e-9)
    assert aff.bias.value == pytest.approx(L**2 / (3 * d) * (1 + 1 / n), rel=1e-9)
    assert relu.bias.value == pytest.approx(2 * L**2 / 3 * (1 / (2 * d) - _expected_kappa(d)) * (1 + 1 / n), rel=1e-9)


@pytest.mark.parametrize("d, w", [(2, 30.0), (3, 100.0), (6, 15.0)])
def test_huge_n_limit_from_bessel_moments(d, w):
    """n = 1e14: n E[sum p^2] -> E[e^2]/E[e]^2 = Phi_d(2w)/Phi_d(w)^2 and the affine bias ->
    (L^2/(3d)) (1 - A_d(w))^2 (A_d the tilted mean), both from the Bessel forms of sphere.py; the
    neglected 1/n terms are ~ Phi_d(2w)/(n Phi_d(w)^2) < 1e-11 relative here."""
    n = 10**14
    res = exact_loss(make_problem("affine", d, n, 1.0, 1.0), w)
    collision = math.exp(float(sphere.log_phi(d, 2 * w) - 2 * sphere.log_phi(d, w)))
    assert collision / n < 1e-11
    assert res.noise.value * n == pytest.approx(collision, rel=max(1e-9, 2 * res.noise.abs_error / res.noise.value))
    limit = (1 - float(sphere.tilted_mean(d, w))) ** 2 / (3 * d)
    assert res.bias.value == pytest.approx(limit, rel=max(1e-9, 2 * res.bias.abs_error / res.bias.value))


def test_relu_huge_n_limit_matches_adaptive_quadrature():
    """Relu at n = 1e14: the bias is (2/3) E_c[r(c)^2], r(c) = E_w[D(c, theta)] under the tilted law,
    here by scipy's adaptive quad (break points at the kinks) -- independent of the panel rules."""
    d, w = 3, 5.0
    B = special.beta(0.5, (d - 1) / 2)

    def tilt(th):
        return math.exp(w * (math.cos(th) - 1)) * math.sin(th) ** (d - 2) / B

    Z = integrate.quad(tilt, 0, math.pi, epsabs=0, epsrel=1e-12)[0]

    def r(tc):
        k = abs(math.pi / 2 - tc)
        f = lambda th: tilt(th) * float(relu_offdiagonal_factor(d, tc, th))  # noqa: E731
        return integrate.quad(f, 0, math.pi, points=[k, math.pi - k], epsabs=0, epsrel=1e-10, limit=200)[0] / Z

    b0 = (
        2
        / 3
        * integrate.quad(
            lambda tc: r(tc) ** 2 * math.sin(tc) ** (d - 2) / B,
            0,
            math.pi,
            points=[math.pi / 2],
            epsabs=0,
            epsrel=1e-9,
            limit=200,
        )[0]
    )
    res = exact_loss(make_problem("relu", d, 10**14, 1.0, 0.0), w)
    assert res.bias.value == pytest.approx(b0, rel=1e-7)


# --------------------------------------------------------------------------- brute-force Monte Carlo
def _brute_force(task, d, n, w, L, sigma, contexts, rng, chunk=400_000):
    """Per-context loss parts from full covariates: x_i, q = e_1, softmax weights p; noise
    sigma^2 sum p_i^2; affine (L^2/(3d)) [(sum p_i t_i - 1)^2 + sum p_i^2 (1 - t_i^2)]; relu one
    direction u per context, (L^2/3) [(sum p_i h+_i)^2 + (sum p_i h-_i)^2] with
    h+-_i = (+-u.x_i)_+ - (+-u.q)_+, whose average over u is (2L^2/3) sum p_i p_j K(x_i, x_j)."""
    bias, noise = [], []
    per = max(1, chunk // (n * d))
    done = 0
    while done < contexts:
        size = min(per, contexts - done)
        done += size
        g = rng.standard_normal((size, n, d))
        x = g / np.linalg.norm(g, axis=-1, keepdims=True)
        t = x[..., 0]
        logits = w * t
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        noise.append(sigma**2 * np.sum(p * p, axis=1))
        if task == "affine":
            bias.append(L**2 / (3 * d) * ((np.sum(p * t, axis=1) - 1) ** 2 + np.sum(p * p * (1 - t * t), axis=1)))
        else:
            u = rng.standard_normal((size, d))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            s = np.einsum("cnd,cd->cn", x, u)
            c = u[:, 0]
            hp = np.maximum(s, 0) - np.maximum(c, 0)[:, None]
            hm = np.maximum(-s, 0) - np.maximum(-c, 0)[:, None]
            bias.append(L**2 / 3 * (np.sum(p * hp, axis=1) ** 2 + np.sum(p * hm, axis=1) ** 2))
    bias, noise = np.concatenate(bias), np.concatenate(noise)
    return (
        (bias.mean(), bias.std(ddof=1) / math.sqrt(contexts)),
        (noise.mean(), noise.std(ddof=1) / math.sqrt(contexts)),
    )


def _agrees(exact_est, mc):
    mean, se = mc
    return abs(exact_est.value - mean) <= Z_RULE * se + exact_est.abs_error + 1e-14


MC_GRID = [
    (task, d, n, w, L, sigma)
    for task in ("affine", "relu")
    for d in (2, 3, 5)
    for n, ws in ((1, (5.0,)), (10, (1.0, 8.0)), (100, (3.0, 25.0)), (1000, (12.0,)))
    for w in ws
    for L, sigma in ((1.0, 0.5),)
] + [
    # few points dominate the normaliser (n E[e] << 1)
    ("affine", 3, 5, 500.0, 1.0, 0.5),
    ("affine", 2, 30, 2000.0, 1.0, 0.5),
    ("relu", 2, 10, 150.0, 1.0, 0.5),
    ("relu", 5, 4, 60.0, 1.0, 0.5),
    # other (L, sigma)
    ("affine", 3, 100, 10.0, 2.0, 0.1),
    ("relu", 3, 100, 10.0, 2.0, 0.1),
    ("affine", 5, 10, 3.0, 0.5, 2.0),
    ("relu", 2, 10, 3.0, 0.5, 2.0),
]


@pytest.mark.parametrize("task, d, n, w, L, sigma", MC_GRID)
def test_agrees_with_brute_force_monte_carlo(task, d, n, w, L, sigma):
    contexts = 4000 if n == 1000 else 20000
    rng = _seed(task, d, n, w, L, sigma)
    mc_bias, mc_noise = _brute_force(task, d, n, w, L, sigma, contexts, rng)
    res = exact_loss(make_problem(task, d, n, L, sigma), w)
    assert _agrees(res.bias, mc_bias), (res.bias, mc_bias)
    assert _agrees(res.noise, mc_noise), (res.noise, mc_noise)


@pytest.mark.parametrize("task, d, n, w", [("affine", 2, 10, 3.0), ("relu", 3, 10, 3.0), ("affine", 5, 1, 2.0)])
def test_wrong_context_size_is_rejected(task, d, n, w):
    """The same rule rejects the exact loss computed with n + 1 in place of n."""
    rng = _seed("wrong-n", task, d, n, w)
    mc_bias, mc_noise = _brute_force(task, d, n, w, 1.0, 0.5, 20000, rng)
    right = exact_loss(make_problem(task, d, n, 1.0, 0.5), w)
    wrong = exact_loss(make_problem(task, d, n + 1, 1.0, 0.5), w)
    assert _agrees(right.noise, mc_noise) and _agrees(right.bias, mc_bias)
    assert not (_agrees(wrong.noise, mc_noise) and _agrees(wrong.bias, mc_bias))


def test_relu_kernel_scaled_by_five_percent_is_rejected():
    """kappa scaled by 1.05 scales K, hence the relu bias, by 1.05: rejected by the same rule, while
    the exact value passes (150000 contexts give ~0.6% standard error)."""
    d, n, w = 3, 30, 6.0
    rng = _seed("kappa", d, n, w)
    mc_bias, _ = _brute_force("relu", d, n, w, 1.0, 0.0, 150000, rng)
    res = exact_loss(make_problem("relu", d, n, 1.0, 0.0), w)
    assert _agrees(res.bias, mc_bias)
    wrong = type(res.bias)(1.05 * res.bias.value, 0.0, 0, 1.05 * res.bias.abs_error)
    assert not _agrees(wrong, mc_bias)


# --------------------------------------------------------------------------- other estimators
@pytest.mark.parametrize("task, d, n, w", [("affine", 2, 50, 6.0), ("relu", 3, 20, 4.0), ("relu", 5, 200, 10.0)])
def test_agrees_with_task_averaged_monte_carlo(task, d, n, w):
    """lipschitz_icl.loss.estimators.icl_loss(method="averaged"): exact within 4 of its standard errors."""
    from lipschitz_icl.loss.estimators import icl_loss

    problem = make_problem(task, d, n, 1.0, 0.5)
    mc = icl_loss(problem, w, method="averaged", contexts=20000, rng=_seed("averaged", task, d, n, w))
    res = exact_loss(problem, w)
    for part in ("bias", "noise", "loss"):
        est, ref = getattr(res, part), getattr(mc, part)
        assert abs(est.value - ref.value) <= Z_RULE * ref.standard_error + est.abs_error, (part, est, ref)


def _increment_ratios(values):
    steps = np.diff(values)
    return steps[1:] / steps[:-1]


@pytest.mark.parametrize("d, w", [(2, 5.0), (5, 10.0)])
def test_affine_converges_to_asymptotic_like_one_over_n_squared(d, w):
    """asymptotic_loss keeps the 1/n term of the bias, so r(n) = n^2 (asym - exact)/exact = C + D/n + ...:
    with n doubling, successive increments of r shrink by 1/2 (accepted: 0.4 to 0.6; a wrong 1/n term
    makes r grow like n, ratio 2).  Its noise part is the leading R/n only: the same holds for
    n (asym - exact)/exact."""
    from lipschitz_icl.loss.asymptotic import asymptotic_loss

    bias_scaled, noise_scaled = [], []
    for n in (1000, 2000, 4000, 8000):
        problem = make_problem("affine", d, n, 1.0, 0.5)
        e, a = exact_loss(problem, w, rtol=1e-10), asymptotic_loss(problem, w)
        bias_scaled.append((a.bias.value / e.bias.value - 1) * n * n)
        noise_scaled.append((a.noise.value / e.noise.value - 1) * n)
    for scaled in (bias_scaled, noise_scaled):
        ratios = _increment_ratios(scaled)
        assert np.all((ratios > 0.4) & (ratios < 0.6)), (scaled, ratios)


def test_relu_converges_to_asymptotic_like_one_over_n_squared():
    """Relu, d = 3, w = 5, same rule as the affine test.  asymptotic_loss is run with refine=8: at its
    default refinement its relu bias is off by ~3e-6 relative (measured against the n = 1e14 exact
    value), which swamps the 1/n^2 term from n ~ 500 on."""
    from lipschitz_icl.loss.asymptotic import asymptotic_loss

    scaled = []
    for n in (250, 500, 1000, 2000):
        problem = make_problem("relu", 3, n, 1.0, 0.0)
        e, a = exact_loss(problem, 5.0, rtol=1e-10), asymptotic_loss(problem, 5.0, refine=8)
        scaled.append((a.bias.value / e.bias.value - 1) * n * n)
    ratios = _increment_ratios(scaled)
    assert np.all((ratios > 0.4) & (ratios < 0.6)), (scaled, ratios)


def test_relu_exact_wstar_beyond_the_work_budget_is_refused_up_front(monkeypatch):
    """wstar --task relu --d 512 --n 1e150 --method exact ran past 300 s (10 s per evaluation, dozens of
    them): the grid at the search's start is checked first and the method named, before any loss is
    evaluated."""
    from lipschitz_icl.exact import route
    from lipschitz_icl.optimum import wstar

    evaluated = []
    with monkeypatch.context() as patch:
        patch.setattr(route, "exact_loss", lambda *args, **kwargs: evaluated.append(args))
        with pytest.raises(ParameterError, match=r"'method'.*work budget"):
            wstar(make_problem("relu", 512, 10**150, 1.0, 0.5), "exact")
    assert evaluated == []
    assert wstar(make_problem("relu", 16, 10**8, 1.0, 0.5), "exact").w_star.value > 0  # within budget
