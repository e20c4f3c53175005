"""Gates for "linear attention cannot adapt" (CLAIMS.md section 3; the paper's linear-attention section).

Each gate evaluates one claim with :mod:`lipschitz_icl.claims.linear` (decision rules in its
docstrings) and records the evidence; the plugin fails the gate if the claim fails or if one of its
false variants is not refuted, and reports an inconclusive claim as such.  Default profile: affine
tasks, d = 3; full profile adds relu and cosine, d = 2 and 5, a seed sweep.
"""

import pytest

from lipschitz_icl.claims import linear

CLASSES = ("affine", "relu", "cosine")


@pytest.mark.parametrize("task", CLASSES)
@pytest.mark.parametrize("d", (2, 3, 5))
def test_linear_optimum_is_the_derived_one(record_claim, profile, task, d):
    if profile == "default" and (task != "affine" or d != 3):
        pytest.skip("default profile: affine, d = 3 (full profile: affine, relu, cosine; d = 2, 3, 5)")
    record_claim(linear.optimum(task, d))


@pytest.mark.parametrize("task", CLASSES)
@pytest.mark.parametrize("d", (2, 3, 5))
def test_linear_error_does_not_vanish(record_claim, profile, task, d):
    if profile == "default" and (task != "affine" or d != 3):
        pytest.skip("default profile: affine, d = 3 (full profile: affine, relu, cosine; d = 2, 3, 5)")
    seeds = (0,) if profile == "default" else (0, 1, 2)
    for seed in seeds:
        record_claim(linear.cannot_adapt(task, d, seed=seed))


@pytest.mark.parametrize("d", (2, 3, 5))
def test_linear_window_does_not_narrow_with_L(record_claim, profile, d):
    if profile == "default" and d != 3:
        pytest.skip("default profile: d = 3 (full profile: d = 2, 3, 5)")
    record_claim(linear.window(d))


@pytest.mark.parametrize("task, steps", [("affine", None), ("cosine", None), ("relu", 12000)])
def test_training_finds_the_linear_optimum(record_claim, profile, task, steps):
    if profile == "default" and task != "affine":
        pytest.skip("default profile: affine (full profile adds cosine and relu)")
    record_claim(linear.trained(task, 3, 20, steps=steps))
