"""Arithmetic of estimates (lipschitz_icl.estimate): differences, log ratios of means (independent and
paired samples), local log-log slopes."""

import math

import numpy as np
import pytest

from lipschitz_icl.estimate import (
    Estimate,
    difference,
    log_ratio_of_means,
    log_slope,
    mean_difference,
    paired_log_ratio,
    pilot_sample_size,
    relative_interval,
)


def test_log_ratio_delta_method():
    rng = np.random.default_rng(0)
    num, den = rng.exponential(2.0, 20000), rng.exponential(1.0, 20000)
    e = log_ratio_of_means(num, den)
    assert abs(e.value - math.log(2.0)) <= 4 * e.standard_error
    assert e.standard_error == pytest.approx(math.hypot(1, 1) / math.sqrt(20000), rel=0.05)  # cv of an exponential is 1


def test_difference_of_independent_estimates_adds_variances():
    e = difference(Estimate(3.0, 0.3), Estimate(1.0, 0.4))
    assert e.value == 2.0 and e.standard_error == pytest.approx(0.5, rel=1e-15)


def test_slope_and_its_standard_error():
    """A law E = n^-0.6 with 1% errors: slope -0.6, se sqrt(2) 0.01 / log 10."""
    values = [1000**-0.6, 10000**-0.6]
    s, se = log_slope((1000, 10000), values, [0.01 * v for v in values])
    assert s == pytest.approx(-0.6) and se == pytest.approx(math.hypot(0.01, 0.01) / math.log(10))


def test_log_ratio_is_paired():
    """Common random numbers: the paired se is far below the independent one, and the value is exact."""
    rng = np.random.default_rng(0)
    base = rng.exponential(size=4000)
    other = 2.0 * base * (1 + 0.01 * rng.normal(size=base.size))
    r, se = paired_log_ratio(other, base)
    assert r == pytest.approx(math.log(other.mean() / base.mean()), rel=1e-12)
    independent = math.hypot(other.std() / other.mean(), base.std() / base.mean()) / math.sqrt(base.size)
    assert se < 0.05 * independent


def test_mean_difference_is_the_pooled_t_interval_of_two_run_means():
    diff, half = mean_difference([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], 0.95)
    se = np.sqrt(1.0 / 3 + 4.0 / 3)
    assert diff == 2.0 and half == pytest.approx(2.7764451051977987 * se)  # t_{0.975, 4}


def test_pilot_sample_size_targets_the_half_width_within_bounds():
    assert pilot_sample_size(0.5, 2.0, 0.01, (10, 10**6)) == 10000  # (2 * 0.5 / 0.01)^2
    assert pilot_sample_size(0.5, 2.0, 0.01, (10, 5000)) == 5000
    assert pilot_sample_size(1e-4, 2.0, 0.01, (10, 5000)) == 10


def test_relative_interval_is_relative_to_the_target():
    assert relative_interval(2.2, 0.2, 2.0) == pytest.approx((0.0, 0.2))
