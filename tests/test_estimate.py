"""Arithmetic of estimates (lipschitz_icl.estimate): differences, log ratios of means (independent and
paired samples), local log-log slopes."""

import math

import numpy as np
import pytest

from lipschitz_icl.estimate import Estimate, difference, log_ratio_of_means, log_slope, paired_log_ratio


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
