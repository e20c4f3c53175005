"""Gates for the sphere concentration inequalities (registry: lipschitz_icl/claims/concentration.toml).

One gate per case of the registry (grid point times replicate seed).  The deterministic inequalities
(projection tails, cap probability, cap counts) are decided by proof on their whole domain
(:mod:`lipschitz_icl.prover.search`): the gate passes on ``proved``, its resolution is the certified sharpest
constant and its false variant the bound just beyond it, refuted by a certified counterexample.  The others
hold a stated bound of :mod:`lipschitz_icl.sphere.inequalities` against the true tails (rule one-sided; exact laws
or Clopper-Pearson limits) with the near-miss variant two resolutions beyond the claim.
"""

GROUP = "concentration"


def test_claim(claim_case, record_claim):
    """Every concentration claim of the registry, one gate per case."""
    record_claim(claim_case)
