"""Gates for the regularity law of zonal task priors: one per case of the registry
``lipschitz_icl/claims/regularity.toml`` (rules, margins and grids are there; measure functions in
:mod:`lipschitz_icl.claims.regularity`, derivation in :mod:`lipschitz_icl.derivations.regularity`)."""

GROUP = "regularity"


def test_claim(claim_case, record_claim):
    record_claim(claim_case)
