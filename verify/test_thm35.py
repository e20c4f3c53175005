"""Gates for Theorem 3.5 (generalisation to unseen L-Lipschitz tasks, the L mismatch of Figure 5).

One gate per case of the registry group ``thm35`` (``lipschitz_icl/claims/thm35.toml``: statements, rules,
every design number, resolutions and pre-specified alternatives; measure functions in
:mod:`lipschitz_icl.claims.thm35`).  The plugin fails a confirmatory gate whose design differs from its
lock, that does not hold, or whose resolution is not resolved; the alternatives' verdicts are recorded
whatever they are; exploratory claims are recorded and reported only.
"""

GROUP = "thm35"


def test_claim(claim_case, record_claim):
    """Every thm35 claim of the registry, one gate per case (grid point x seed)."""
    record_claim(claim_case)
