"""Linear attention's scale by Monte Carlo (lipschitz_icl.estimators.linear_scale): the per-context quadratic optimum
against the derived m*, the loss at m I against the derived E_lin, and the elasticity of two scales."""

import math

import numpy as np
import pytest

from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.estimators.linear_scale import linear_loss, m_hat, scale_elasticity
from lipschitz_icl.problem import make_problem


def test_m_hat_finds_the_derived_optimum():
    problem = make_problem("affine", 3, 30, 1.0, 0.5)
    m_star, e_star = lin.linear_optimum("affine", 3, 30, 1.0, 0.5)
    m, se = m_hat(problem, 4000, np.random.SeedSequence(1))
    assert 0 < se < 0.05 * m_star and abs(m - m_star) <= 4 * se
    # the loss at m* is the derived minimum error, and a scale three times too large is worse beyond both intervals
    e, e_se = linear_loss(problem, m_star, 4000, np.random.SeedSequence(2))
    assert abs(e - e_star) <= 4 * e_se
    worse, worse_se = linear_loss(problem, 3 * m_star, 4000, np.random.SeedSequence(2))
    assert worse - 4 * worse_se > e + 4 * e_se


def test_scale_elasticity_is_the_log_ratio_with_its_delta_method_interval():
    e, (low, high) = scale_elasticity((1.0, 0.01), (2.0, 0.02), math.log(4.0), 3.0)
    assert e == pytest.approx(0.5)  # m doubles while L quadruples
    assert high - e == pytest.approx(e - low) == pytest.approx(3.0 * math.hypot(0.01, 0.01) / math.log(4.0))
    # a scale that does not move has elasticity 0, and its interval narrows with the standard errors
    e0, (low0, high0) = scale_elasticity((3.0, 0.003), (3.0, 0.003), math.log(4.0), 3.0)
    assert e0 == 0.0 and low0 < 0.0 < high0 and high0 - low0 < high - low
