"""Linear attention's scale by Monte Carlo (lipschitz_icl.linear_scale): the per-context quadratic optimum
against the derived m*, and the loss at m I against the derived E_lin."""

import numpy as np

from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.linear_scale import linear_loss, m_hat
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
