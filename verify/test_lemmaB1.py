"""Gates for Lemma B.1 and Eq. (4) on trained full layers: one per case of the registry
``lipschitz_icl/claims/lemmaB1.toml`` (rules, margins and grids are there; measure functions in
:mod:`lipschitz_icl.claims.lemmaB1`)."""

GROUP = "lemmaB1"


def test_claim(claim_case, record_claim):
    record_claim(claim_case)
