"""Gates for Theorem 3.5 (generalisation to unseen L-Lipschitz tasks, the L mismatch of Figure 5).

Each gate evaluates one claim with :mod:`lipschitz_icl.claims.thm35` (decision rules in its
docstrings) and records the evidence; the plugin fails the gate if the claim fails or if one of its
false variants is not refuted, and reports an inconclusive claim as such.  Default profile: d = 3,
one seed; full profile adds a seed sweep, d = 2 and 5, and the trainer's M.
"""

import pytest

from lipschitz_icl.claims import thm35


@pytest.mark.parametrize("train_task", ("affine", "relu"))
@pytest.mark.parametrize("d", (2, 3, 5))
def test_generalisation_to_lipschitz_probes(record_claim, profile, train_task, d):
    if profile == "default" and (d != 3 or train_task != "affine"):
        pytest.skip("default profile: affine pretraining, d = 3 (full profile: affine and relu, d = 2, 3, 5)")
    seeds = (0,) if profile == "default" else (0, 1, 2)
    for seed in seeds:
        record_claim(thm35.generalisation(train_task, d, seed=seed))


@pytest.mark.parametrize("d", (2, 3, 5))
def test_mismatched_L_is_markedly_worse(record_claim, profile, d):
    if profile == "default" and d != 3:
        pytest.skip("default profile: d = 3 (full profile: d = 2, 3, 5)")
    seeds = (0,) if profile == "default" else (0, 1, 2)
    for seed in seeds:
        record_claim(thm35.mismatch(d, seed=seed))


def test_trained_attention_mismatch(record_claim, profile):
    if profile == "default":
        pytest.skip("full profile only: three trainer runs")
    record_claim(thm35.trained_mismatch(3))
