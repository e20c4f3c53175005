"""lipschitz_icl.loss.isotropic: the reduced form of the loss for M = w I (common random numbers)."""

import math

import numpy as np
import pytest

from lipschitz_icl import make_problem
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.loss.isotropic import draw_isotropic_batch, isotropic_terms, kink_width


def _batch(task="affine", d=3, n=20, contexts=2000, seed=0):
    problem = make_problem(task, d, n, 1.0, 0.5)
    return problem, draw_isotropic_batch(problem.task_class, n, contexts, np.random.default_rng(seed))


def test_weights_are_the_softmax_of_w_t():
    _, batch = _batch()
    p = batch.weights(3.0)
    expected = np.exp(3.0 * batch.t)
    expected /= expected.sum(axis=1, keepdims=True)
    assert np.allclose(p, expected, rtol=1e-12) and np.allclose(p.sum(axis=1), 1.0)


def test_collision_term_is_the_sum_of_squared_weights():
    _, batch = _batch()
    _bias, collision = batch.terms(3.0)
    assert np.allclose(collision, (batch.weights(3.0) ** 2).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("order", [1, 2])
def test_theta_derivatives_match_finite_differences(order):
    """dF/dtheta and d^2F/dtheta^2 (theta = log w) of the batch mean, against central differences on the
    same draws (common random numbers make the difference smooth)."""
    _, batch = _batch(contexts=500)
    theta, h = math.log(3.0), 1e-4

    def mean_bias(th):
        return float(np.mean(batch.terms(math.exp(th))[0]))

    terms = batch.terms(3.0, order)
    derivative = float(np.mean(terms[2 * order]))  # (bias, collision, their first, their second derivatives)
    if order == 1:
        numeric = (mean_bias(theta + h) - mean_bias(theta - h)) / (2 * h)
    else:
        numeric = (mean_bias(theta + h) - 2 * mean_bias(theta) + mean_bias(theta - h)) / h**2
    assert derivative == pytest.approx(numeric, rel=1e-4)


def test_chunked_terms_estimate_the_averaged_loss():
    """The per-context terms averaged over fresh contexts give the loss that icl_loss's averaged method
    reports (same estimator, independent draws): within 4 combined standard errors."""
    problem = make_problem("affine", 3, 20, 1.0, 0.5)
    bias, collision = isotropic_terms(problem.task_class, 20, 3.0, 20000, np.random.default_rng(1), 50_000)
    loss_c = bias + problem.sigma**2 * collision
    mine, se = loss_c.mean(), loss_c.std(ddof=1) / math.sqrt(loss_c.size)
    ref = icl_loss(problem, 3.0, method="averaged", contexts=20000, rng=2).loss
    assert abs(mine - ref.value) < 4 * math.hypot(se, ref.standard_error)


def test_kink_width_only_when_narrower_than_the_spread():
    assert kink_width(8.0, 3) is None and kink_width(12.0, 3) is None
    assert kink_width(100.0, 3) == pytest.approx(0.1)
