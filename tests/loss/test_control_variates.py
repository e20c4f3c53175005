"""lipschitz_icl.loss.control_variates: known means of the weighted moments and the cross-fitted adjustment."""

import math

import numpy as np
import pytest

from lipschitz_icl.loss import control_variates as cv
from lipschitz_icl.sphere import laws


@pytest.mark.parametrize("d, w", [(2, 3.0), (5, 8.25), (9, 0.5)])
def test_the_means_of_the_weighted_moments_are_exact(d, w):
    """Each moment's sample mean over many contexts lies within 4 standard errors of its stated mean."""
    rng = np.random.default_rng(d)
    t = laws.sample_t(rng, d, (20000, 50))
    z = laws.sample_t(rng, d - 1, (20000, 50))
    moments = cv.reduced_moments(t, z, w)
    means = cv.reduced_moment_means(d, w)
    assert moments.shape == (20000, cv.MOMENTS) and means.shape == (cv.MOMENTS,)
    se = moments.std(axis=0, ddof=1) / math.sqrt(moments.shape[0])
    assert np.all(np.abs(moments.mean(axis=0) - means) <= 4 * se), (moments.mean(axis=0), means, se)


def test_the_adjustment_keeps_the_mean_and_removes_the_explained_variance():
    """Values linear in the moments plus independent noise: the adjusted mean stays within its own error of
    the true mean, and the variance left is about the noise's."""
    rng = np.random.default_rng(3)
    d, w, N = 4, 5.0, 4000
    t = laws.sample_t(rng, d, (N, 30))
    z = laws.sample_t(rng, d - 1, (N, 30))
    moments = cv.reduced_moments(t, z, w)
    means = cv.reduced_moment_means(d, w)
    coefficients = rng.normal(size=cv.MOMENTS) / moments.std(axis=0)
    noise = 0.01 * rng.standard_normal(N)
    values = 2.0 + (moments - means) @ coefficients + noise
    (adjusted,) = cv.cross_fitted([values], moments, means)
    se = adjusted.std(ddof=1) / math.sqrt(N)
    assert abs(adjusted.mean() - 2.0) <= 4 * se
    assert adjusted.var() < 1.5 * noise.var() and values.var() > 100 * noise.var()


def test_each_half_is_adjusted_by_coefficients_from_the_other():
    """Changing the values of the even contexts changes the adjustment of the odd ones only through their
    coefficients: the odd contexts' own values enter their adjusted values with weight one."""
    rng = np.random.default_rng(4)
    N = 400
    t = laws.sample_t(rng, 3, (N, 20))
    z = laws.sample_t(rng, 2, (N, 20))
    moments, means = cv.reduced_moments(t, z, 2.0), cv.reduced_moment_means(3, 2.0)
    values = rng.standard_normal(N)
    (base,) = cv.cross_fitted([values], moments, means)
    bumped = values.copy()
    bumped[1::2] += 1.0  # the odd half
    (after,) = cv.cross_fitted([bumped], moments, means)
    assert np.allclose(after[1::2] - base[1::2], 1.0)  # odd: their coefficients come from the even half


def test_too_few_contexts_are_left_unadjusted():
    rng = np.random.default_rng(5)
    N = cv.MIN_CONTEXTS - 1
    t = laws.sample_t(rng, 3, (N, 10))
    z = laws.sample_t(rng, 2, (N, 10))
    values = rng.standard_normal(N)
    (adjusted,) = cv.cross_fitted([values], cv.reduced_moments(t, z, 1.0), cv.reduced_moment_means(3, 1.0))
    assert np.array_equal(adjusted, values)
