"""Gates for "linear attention cannot adapt" (registry: lipschitz_icl/claims/linear.toml; the paper's
linear-attention section, Figure 1).

One gate per case of the registry's ``linear`` group in the chosen ``--profile`` (grid point times
replicate seed); each runs its measure function in :mod:`lipschitz_icl.claims.linear` and records the
evidence.  The plugin fails a confirmatory gate that fails or is inconclusive, or whose near-miss false
variants are not all refuted; the exploratory trainer claim is reported and never fails the run.
"""

GROUP = "linear"


def test_claim(claim_case, record_claim):
    """Every linear claim of the registry (lipschitz_icl/claims/linear.toml), one gate per case."""
    record_claim(claim_case)
