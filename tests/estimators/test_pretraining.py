"""The pretraining protocol's helpers (lipschitz_icl.estimators.pretraining): t-limits of a mean over runs and the
held-out error curve of pretraining in segments."""

import numpy as np
import pytest

from lipschitz_icl.estimators.pretraining import mean_interval, mean_limits, pretraining_curve
from lipschitz_icl.problem import make_problem


def test_mean_limits_are_one_sided_t_limits():
    mean, low, high = mean_limits([1.0, 2.0, 3.0, 4.0], 0.99)
    half = 4.540702858698419 * np.std([1.0, 2.0, 3.0, 4.0], ddof=1) / 2  # t_{0.99, 3} sd / sqrt(4)
    assert mean == 2.5 and low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)


def test_mean_interval_is_the_two_sided_t_interval():
    mean, half = mean_interval([1.0, 2.0, 3.0, 4.0], 0.975)
    assert mean == 2.5 and half == pytest.approx(3.182446305284263 * np.std([1.0, 2.0, 3.0, 4.0], ddof=1) / 2)


SGD = {"optimizer": "sgd", "lr": 12.5, "batch": 128, "schedule": "constant"}


def test_pretraining_curve_records_a_falling_error_on_common_test_contexts():
    problem = make_problem("affine", 2, 20, 1.0, 0.3)
    steps, errors, ses, Ms, _ = pretraining_curve(
        problem,
        np.random.SeedSequence(3),
        kind="softmax",
        protocol=SGD,
        init_scale=1.0,
        segments=2,
        segment_steps=40,
        test_contexts=500,
    )
    assert steps == [0, 40, 80] and len(Ms) == 3
    assert errors[-1] + 4 * ses[-1] < errors[0] - 4 * ses[0]
