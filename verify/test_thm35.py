"""Gates for Theorem 3.5 (generalisation to unseen L-Lipschitz tasks, the L mismatch of Figure 5).

One gate per case of the registry group ``thm35`` (``lipschitz_icl/claims/thm35.toml``: rules, margins,
grids and seeds; measure functions in :mod:`lipschitz_icl.claims.thm35`).  The plugin fails a
confirmatory gate that fails or is inconclusive, or whose near-miss false variants are not all refuted;
exploratory claims are recorded and reported only.
"""

GROUP = "thm35"


def test_claim(claim_case, record_claim):
    """Every thm35 claim of the registry, one gate per case (grid point x seed)."""
    record_claim(claim_case)
