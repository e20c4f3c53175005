"""Gates for Theorem 3.4, Lemma B.5 and the bias/noise parts (CLAIMS.md section 3).

Each gate evaluates one claim with :mod:`lipschitz_icl.claims.thm34` (decision rules in its
docstrings) and records the evidence; the plugin fails the gate if the claim fails or if one of its
false variants is not refuted, and reports an inconclusive claim as such.
"""

import pytest

from lipschitz_icl.claims import thm34

CLASSES = ("affine", "relu")
DIMS = (2, 3, 5)


GROUP = "thm34"


def test_claim(claim_case, record_claim):
    """Every thm34 claim of the registry (lipschitz_icl/claims/thm34.toml), one gate per case."""
    record_claim(claim_case.run())


@pytest.mark.parametrize("task", CLASSES)
@pytest.mark.parametrize("d", DIMS)
def test_bias_and_noise_powers(record_claim, task, d):
    record_claim(thm34.bias_noise_powers(task, d))


@pytest.mark.parametrize("task", CLASSES)
@pytest.mark.parametrize("d", DIMS)
def test_wstar_monotone_in_L_n_sigma(record_claim, profile, task, d):
    if profile == "default" and d != 3:
        pytest.skip("default profile: monotonicity at d = 3 (full profile: d = 2, 3, 5)")
    record_claim(thm34.monotonicity(task, d))


@pytest.mark.parametrize("task", CLASSES)
@pytest.mark.parametrize("d", DIMS)
def test_isotropy_of_the_optimum(record_claim, profile, task, d):
    seeds = (0,) if profile == "default" else (0, 1, 2, 3, 4)
    for seed in seeds:
        record_claim(thm34.isotropy(task, d, 50, seed=seed))


@pytest.mark.parametrize("task, d, n, entropy", [("affine", 2, 20, 101), ("relu", 3, 30, 202)])
def test_training_finds_the_isotropic_optimum(record_claim, profile, task, d, n, entropy):
    if profile == "default" and task != "affine":
        pytest.skip("default profile: affine d = 2 (full profile adds relu d = 3)")
    record_claim(thm34.trained_isotropy(task, d, n, entropy=entropy))
