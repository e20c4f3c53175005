"""Arithmetic of independent estimates (lipschitz_icl.estimate): differences and log ratios of means."""

import math

import numpy as np
import pytest

from lipschitz_icl.estimate import Estimate, difference, log_ratio_of_means


def test_log_ratio_delta_method():
    rng = np.random.default_rng(0)
    num, den = rng.exponential(2.0, 20000), rng.exponential(1.0, 20000)
    e = log_ratio_of_means(num, den)
    assert abs(e.value - math.log(2.0)) <= 4 * e.standard_error
    assert e.standard_error == pytest.approx(math.hypot(1, 1) / math.sqrt(20000), rel=0.05)  # cv of an exponential is 1


def test_difference_of_independent_estimates_adds_variances():
    e = difference(Estimate(3.0, 0.3), Estimate(1.0, 0.4))
    assert e.value == 2.0 and e.standard_error == pytest.approx(0.5, rel=1e-15)
