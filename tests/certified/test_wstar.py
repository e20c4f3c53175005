"""Certified ``w*`` (:mod:`lipschitz_icl.certified.wstar`): one-sided bounds proved without locating ``w*``
agree with the exact method's ``w*`` (proved on its side, refuted on the other), and the refusals."""

from __future__ import annotations

import pytest

from lipschitz_icl.certified.loss import kernel_of
from lipschitz_icl.certified.wstar import wstar_bound
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError

D, N, SIGMA = 3, 10**6, 0.5


@pytest.fixture(scope="module")
def exact_wstar() -> float:
    return float(wstar(make_problem("affine", D, N, 1.0, SIGMA), "exact").w_star.value)


@pytest.mark.parametrize(
    "side,factor,outcome",
    [
        ("upper", 1.1, "proved"),  # w* <= 1.1 w*_exact
        ("upper", 1 / 1.1, "refuted"),  # w* <= w*_exact / 1.1 is false: w* > it is proved
        pytest.param("lower", 1 / 1.1, "proved", marks=pytest.mark.slow(reason="a third one-sided proof, ~3 s")),
    ],
)
def test_one_sided_bounds_agree_with_the_exact_wstar(exact_wstar, side, factor, outcome):
    kernel = kernel_of("affine", D, 1.0)
    result = wstar_bound(kernel, N, SIGMA, 1.0, factor * exact_wstar, side, seconds=60)
    assert result.outcome == outcome, result.reason
    kinds = {kind for _, _, kind in result.pieces}
    assert "cut" in kinds  # the far side is excluded by a certified floor, not by a search range


def test_the_bound_must_be_inside_the_search_range_and_sigma_positive():
    kernel = kernel_of("affine", D, 1.0)
    with pytest.raises(ParameterError, match="'bound'"):
        wstar_bound(kernel, N, SIGMA, 1.0, 1e9)
    with pytest.raises(ParameterError, match="'sigma'"):
        wstar_bound(kernel, N, 0.0, 1.0, 10.0)
    with pytest.raises(ParameterError, match="'side'"):
        wstar_bound(kernel, N, SIGMA, 1.0, 10.0, "both")


def test_the_cosine_class_starts_from_its_exact_minimiser():
    """``wstar --method certified --task cosine`` was refused with "--task: must be affine or relu for the
    asymptotic loss" (its start was the large-n model's, which covers affine and relu only); the start is
    now the exact float minimiser, and a search out of its budget is undecided, never a refusal."""
    from lipschitz_icl.certified.wstar import certified_wstar

    result = certified_wstar(3, 1000, 0.5, 1.0, task="cosine", rel_width=1e-3, seconds=1.0)
    exact = wstar(make_problem("cosine", 3, 1000, 1.0, 0.5), method="exact").w_star.value
    assert abs(result.guess - exact) <= 1e-6 * exact
    assert result.decided or result.info["reason"].startswith("out of budget")
