"""Gates for Theorem 3.4, Lemma B.5 and the bias/noise parts: one per case of the registry
``lipschitz_icl/claims/thm34.toml`` (rules, margins and grids are there; measure functions in
:mod:`lipschitz_icl.claims.thm34`)."""

GROUP = "thm34"


def test_claim(claim_case, record_claim):
    record_claim(claim_case)
