"""ICL errors of attention windows compared (lipschitz_icl.estimators.window_errors)."""

import numpy as np
import pytest

from lipschitz_icl.estimators.window_errors import optimal_error_curves, paired_error_cost
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem


def test_softmax_at_w_star_falls_with_n_below_linear_attention_and_below_a_detuned_window():
    L_grid, n_grid = [0.5, 4.0], [10, 1000]
    soft, soft_abs, linear = optimal_error_curves("affine", 2, L_grid, n_grid, 0.5)
    assert [len(row) for row in (*soft, *soft_abs, *linear)] == [2] * 6
    for L, e_soft, e_abs, e_lin in zip(L_grid, soft, soft_abs, linear):
        assert e_soft[1] < e_soft[0] and e_lin[1] > e_soft[1]  # softmax keeps learning, linear does not
        assert all(0 <= a < 1e-3 * e for a, e in zip(e_abs, e_soft))
        problem = make_problem("affine", 2, 1000, L, 0.5)
        detuned = exact_loss(problem, 1.5 * wstar(problem, "exact").w_star.value).loss.value
        assert e_soft[1] < detuned  # w* is the optimal window


def test_paired_cost_is_exactly_zero_for_w_I_itself_and_positive_for_a_detuned_window():
    problem = make_problem("affine", 2, 20, 1.0, 0.5)
    w = wstar(problem, "exact").w_star.value
    (mean, se), e_iso = paired_error_cost(problem, w * np.eye(2), w, 400, 3)
    assert mean == 0.0 and se == 0.0 and e_iso > 0
    (mean, se), e_iso_again = paired_error_cost(problem, 4 * w * np.eye(2), w, 400, 3)
    assert e_iso_again == pytest.approx(e_iso, rel=1e-12) and mean > 5 * se > 0
