"""Window-law bounds over a range of ``n`` (:mod:`lipschitz_icl.certified.window`): a bound that holds with room
is proved on the whole range at once, a false one refuted at an integer ``n`` (a certified counterexample),
and bad input refused."""

from __future__ import annotations

import pytest

from lipschitz_icl.certified.loss import kernel_of
from lipschitz_icl.certified.window import window_bound
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError

ALPHA = 1 / 3  # 2/(d + 3), the affine class at d = 3
SIGMA = 0.5


def _exact(n: int) -> float:
    return float(wstar(make_problem("affine", 3, n, 1.0, SIGMA), "exact").w_star.value)


def _law(n: int) -> float:
    return (n / SIGMA**2) ** ALPHA


def test_a_bound_with_room_is_proved_and_a_false_one_refuted():
    kernel = kernel_of("affine", 3, 1.0)
    true_constant = 2 * _exact(1010) / _law(1000)  # w* grows with n: twice its largest value over the range
    proved = window_bound(
        kernel, (1000, 1010), sigma=SIGMA, L=1.0, C=true_constant, alpha=ALPHA, side="upper", seconds=60
    )
    assert proved.outcome == "proved" and not proved.open
    false_constant = 0.5 * _exact(1000) / _law(1010)  # half its smallest value
    refuted = window_bound(
        kernel, (1000, 1010), sigma=SIGMA, L=1.0, C=false_constant, alpha=ALPHA, side="upper", seconds=60
    )
    assert refuted.outcome == "refuted"
    n = refuted.counterexample["n"]
    assert 1000 <= n <= 1010 and refuted.counterexample["bound"] < _exact(n)


def test_bad_input_is_refused():
    kernel = kernel_of("affine", 3, 1.0)
    with pytest.raises(ParameterError, match="'n_range'"):
        window_bound(kernel, (3, 10), sigma=SIGMA, L=1.0, C=1.0, alpha=ALPHA)
    with pytest.raises(ParameterError, match="'side'"):
        window_bound(kernel, (10, 20), sigma=SIGMA, L=1.0, C=1.0, alpha=ALPHA, side="both")
