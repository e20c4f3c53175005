"""Distances to a derived law as asymptotic points (lipschitz_icl.estimators.law_points), on exact power laws."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from lipschitz_icl.estimators.law_points import (
    kernel_law_points,
    kernel_slope_points,
    power_slope_points,
    secant_slope_interval,
)


def test_slope_points_of_an_exact_power_law_are_zero():
    w = np.array([10.0, 100.0, 1000.0])
    points = power_slope_points(w, 3.0 * w**-1.5, power=-1.5, next_coef=2.0, next_q=1.0, accuracy=1e-8)
    for p, wa in zip(points, w):
        assert 0.5 * (p.low + p.high) == pytest.approx(0.0, abs=1e-12)
        assert p.high - p.low == pytest.approx(4e-8 / math.log(10), rel=1e-9)
        assert p.next_order == pytest.approx(-1.0 * 2.0 * wa**-1.0)
    reg = SimpleNamespace(beta=1.5, k=None, q=1.0)
    for p in kernel_slope_points(w, list(3.0 * w**-1.5), [0.0] * 3, reg):
        assert p.low == pytest.approx(0.0, abs=1e-12) and p.next_order == 0.0


def test_kernel_law_points_measure_the_relative_distance_to_the_law():
    reg = SimpleNamespace(C=2.0, alpha=0.25, wstar_next_order=lambda w0: None)
    rho = np.array([1e2, 1e4])
    points = kernel_law_points(rho, 1.01 * 2.0 * rho**0.25, [0.0, 0.0], reg)
    assert [p.low for p in points] == pytest.approx([0.01, 0.01]) and all(p.next_order == 0.0 for p in points)


def test_the_secant_slope_interval_holds_every_slope_of_values_in_their_intervals():
    rng = np.random.default_rng(3)
    x_a, x_b = 1e4, 1e5
    a, b = (2.0, 2.1), (0.5, 0.52)
    low, high = secant_slope_interval(x_a, x_b, a, b)
    slopes = [math.log(rng.uniform(*b) / rng.uniform(*a)) / math.log(x_b / x_a) for _ in range(1000)]
    assert low <= min(slopes) and max(slopes) <= high
    # the ends are attained: the smallest b over the largest a, the largest b over the smallest a
    assert low == pytest.approx(math.log(0.5 / 2.1) / math.log(10))
    assert high == pytest.approx(math.log(0.52 / 2.0) / math.log(10))
    # exact values give a point
    assert secant_slope_interval(1.0, math.e, (1.0, 1.0), (2.0, 2.0)) == pytest.approx((math.log(2), math.log(2)))


@pytest.mark.parametrize(
    "args",
    [(2.0, 1.0, (1, 1), (1, 1)), (0.0, 1.0, (1, 1), (1, 1)), (1.0, 2.0, (0, 1), (1, 1)), (1.0, 2.0, (2, 1), (1, 1))],
)
def test_the_secant_slope_interval_refuses_what_has_no_slope(args):
    with pytest.raises(ValueError):
        secant_slope_interval(*args)
