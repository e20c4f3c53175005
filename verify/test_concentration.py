"""Gates for the sphere concentration inequalities (registry: lipschitz_icl/claims/concentration.toml).

One gate per case of the registry (grid point times replicate seed): each holds a stated bound of
:mod:`lipschitz_icl.inequalities` against the true tails with :mod:`lipschitz_icl.claims.concentration`
(rule one-sided; exact laws where known, Clopper-Pearson limits otherwise) and records the evidence,
its resolution in the bound's rate and the near-miss variant two resolutions beyond it.
"""

GROUP = "concentration"


def test_claim(claim_case, record_claim):
    """Every concentration claim of the registry, one gate per case."""
    record_claim(claim_case)
