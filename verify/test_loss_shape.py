"""Gates for the shape of the ICL loss in w (registry: lipschitz_icl/claims/loss_shape.toml), decided by proof
on the certified loss quantities: one gate per case of the registry.

Under pytest-xdist (``-n``) they run on one worker: a noise claim and a bias claim on the same range of ``w``
(noise-power and bias-power, noise-rises and bias-falls) enclose the same boxes, and one certified evaluation
gives both parts, cached by box in the process (:mod:`lipschitz_icl.prover.trusted`), so each box is
enclosed once."""

import pytest

GROUP = "loss_shape"

pytestmark = pytest.mark.xdist_group("loss_shape")


def test_claim(claim_case, record_claim):
    """Every loss-shape claim of the registry, one gate per case."""
    record_claim(claim_case)
