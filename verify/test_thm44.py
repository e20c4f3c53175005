"""Gates for Theorem 4.4: the attention window learns the direction col(B) of low-rank tasks, and where
it does not (registry: lipschitz_icl/claims/thm44.toml).

One gate per case of the registry (grid point times replicate seed), measured by
:mod:`lipschitz_icl.claims.thm44`: ``direction`` (confirmatory: c* B B^T is the minimiser for the linear
and affine links), ``saddle`` (confirmatory finding: for the quadratic and cosine links the loss along the
complement Q at c* B B^T changes as derived exactly in n -- a saddle where that change is negative),
``trained`` (confirmatory: SGD from random starts ends on col(B)), ``dimension`` (exploratory: the error
follows k, not d).
"""

GROUP = "thm44"


def test_claim(claim_case, record_claim):
    """Every thm44 claim of the registry, one gate per case."""
    record_claim(claim_case)
