"""Which way a part of the exact loss moves along w (lipschitz_icl.estimators.loss_direction)."""

import itertools

from lipschitz_icl import decision, make_problem
from lipschitz_icl.estimators.loss_direction import part_direction
from lipschitz_icl.exact.route import exact_loss

W = [1.0, 2.0, 4.0, 8.0]


def test_the_bias_falls_and_the_noise_rises_as_the_window_narrows():
    """At n = 100 a larger w averages fewer neighbours: the bias part falls and the noise part rises."""
    problem = make_problem("affine", 3, 100, 1.0, 0.5)
    assert part_direction(problem, W, "bias", -1).verdict == "holds"
    assert part_direction(problem, W, "noise", +1).verdict == "holds"


def test_the_opposite_direction_is_refuted():
    problem = make_problem("relu", 2, 100, 1.0, 0.5)
    assert part_direction(problem, W, "bias", +1).verdict == "fails"
    assert part_direction(problem, W, "noise", -1).verdict == "fails"


def test_the_interval_is_the_smallest_change_widened_by_both_errors():
    """Over w = 1, 2, 4 the decision is the sign rule on the smaller of the two expected-direction changes,
    each widened by the stated errors of its two ends."""
    problem = make_problem("affine", 2, 1000, 1.0, 0.5)
    parts = [exact_loss(problem, w).bias for w in W[:3]]
    changes = [
        (a.value - b.value - a.abs_error - b.abs_error, a.value - b.value + a.abs_error + b.abs_error)
        for a, b in itertools.pairwise(parts)
    ]
    assert part_direction(problem, W[:3], "bias", -1) == decision.sign(*min(changes), +1)
