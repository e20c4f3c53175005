"""Gates for the shape of the ICL loss in w (registry: lipschitz_icl/claims/loss_shape.toml), decided by proof
on the certified loss quantities: one gate per case of the registry."""

GROUP = "loss_shape"


def test_claim(claim_case, record_claim):
    """Every loss-shape claim of the registry, one gate per case."""
    record_claim(claim_case)
