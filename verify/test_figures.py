"""Gates for the paper's figures: one per case of the registry
``lipschitz_icl/claims/figures.toml`` (rules, margins and grids are there; measure functions in
:mod:`lipschitz_icl.claims.figures`)."""

GROUP = "figures"


def test_claim(claim_case, record_claim):
    record_claim(claim_case)
