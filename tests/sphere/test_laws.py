"""The sphere: law of t = x.q, exponential moments, caps, the polar quadrature rule."""

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from lipschitz_icl import sphere


def _mp_moments(d, w):
    mp.mp.dps = 40
    nu, w = mp.mpf(d) / 2 - 1, mp.mpf(w)
    log_phi = mp.loggamma(mp.mpf(d) / 2) + nu * mp.log(2 / w) + mp.log(mp.besseli(nu, w))
    A = mp.besseli(nu + 1, w) / mp.besseli(nu, w)
    return float(log_phi), float(A), float(1 - (d - 1) * A / w)


@pytest.mark.parametrize("d", [2, 3, 5, 20, 512])
@pytest.mark.parametrize("w", [1e-5, 0.3, 5.0, 100.0, 1e4, 1e6])
def test_moments_match_high_precision_bessel(d, w):
    log_phi, A, second = _mp_moments(d, w)
    assert sphere.log_phi(d, w) == pytest.approx(log_phi, rel=1e-8, abs=1e-12)
    assert sphere.tilted_mean(d, w) == pytest.approx(A, rel=1e-10)
    assert sphere.tilted_second_moment(d, w) == pytest.approx(second, rel=1e-10)


def test_moments_are_finite_at_extremes_and_odd_even():
    w = np.array([-1e6, -3.0, 0.0, 3.0, 1e6])
    for d in (2, 512):
        assert np.all(np.isfinite(sphere.log_phi(d, w)))
        np.testing.assert_allclose(sphere.tilted_mean(d, w), -sphere.tilted_mean(d, -w), rtol=1e-14)
        np.testing.assert_allclose(sphere.log_phi(d, w), sphere.log_phi(d, -w), rtol=1e-14)
    assert sphere.tilted_mean(5, 0.0) == 0.0 and sphere.tilted_second_moment(5, 0.0) == pytest.approx(0.2)


@pytest.mark.parametrize("d", [2, 3, 7])
def test_t_law_matches_inner_products_of_uniform_points(d):
    rng = np.random.default_rng(1)
    x = sphere.uniform_sphere(rng, 20000, d)
    t_direct = x[:, 0]
    t_beta = sphere.sample_t(rng, d, 20000)
    assert stats.ks_2samp(t_direct, t_beta).pvalue > 1e-3
    # the density integrates to one and has the right variance 1/d
    mass = integrate.quad(lambda t: sphere.t_density(t, d), -1, 1, limit=200)[0]
    second = integrate.quad(lambda t: t * t * sphere.t_density(t, d), -1, 1, limit=200)[0]
    assert mass == pytest.approx(1.0, abs=1e-8)
    assert second == pytest.approx(1.0 / d, abs=1e-8)


def test_mgf_matches_monte_carlo():
    rng = np.random.default_rng(2)
    for d, w in [(3, 2.0), (10, 5.0)]:
        t = sphere.sample_t(rng, d, 400000)
        values = np.exp(w * t)
        mc = values.mean()
        assert abs(mc - np.exp(sphere.log_phi(d, w))) < 5 * values.std() / np.sqrt(t.size)


@pytest.mark.parametrize("d", [2, 4, 9])
def test_cap_probability(d):
    rng = np.random.default_rng(3)
    t = sphere.sample_t(rng, d, 200000)
    for h in (-0.5, 0.0, 0.3, 0.9):
        p = sphere.cap_probability(d, h)
        freq = np.mean(t >= h)
        assert abs(freq - p) < 5 * np.sqrt(p * (1 - p) / t.size) + 1e-12
    assert sphere.cap_probability(d, 1.0) == 0.0 and sphere.cap_probability(d, -1.0) == 1.0


@pytest.mark.parametrize("d", [2, 3, 6])
@pytest.mark.parametrize("w", [0.0, 2.0, 50.0, 1e5])
def test_polar_rule_integrates_tilted_law(d, w):
    rule = sphere.polar_rule(d, w)
    assert rule.weights.sum() == pytest.approx(1.0)
    assert rule.expect(rule.t) == pytest.approx(sphere.tilted_mean(d, w), rel=1e-10, abs=1e-14)
    assert rule.expect(rule.t**2) == pytest.approx(sphere.tilted_second_moment(d, w), rel=1e-10)


def test_collision_ratio_is_the_large_n_limit_of_n_sum_p_squared():
    rng = np.random.default_rng(4)
    d, w, n = 3, 6.0, 4000
    t = sphere.sample_t(rng, d, (200, n))
    e = np.exp(w * (t - 1))
    p = e / e.sum(axis=1, keepdims=True)
    measured = n * np.sum(p * p, axis=1)
    R = np.exp(sphere.log_collision_ratio(d, w))
    assert abs(measured.mean() - R) < 5 * measured.std() / np.sqrt(200) + R * 5.0 / n
