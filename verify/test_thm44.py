"""Gates for Theorem 4.4: the attention window learns the direction col(B) of low-rank tasks
(registry: lipschitz_icl/claims/thm44.toml).

One gate per case of the registry (grid point times replicate seed), measured by
:mod:`lipschitz_icl.claims.thm44` (rules, resolutions and near-miss false variants in its docstrings):
``direction`` (confirmatory: c* B B^T is the minimiser for the linear and affine links),
``direction-nonlinear`` (exploratory: the same rule for the quadratic and cosine links), ``trained``
(confirmatory: SGD from random starts ends on col(B)), ``dimension`` (exploratory: the error follows k,
not d).
"""

GROUP = "thm44"


def test_claim(claim_case, record_claim):
    """Every thm44 claim of the registry, one gate per case."""
    record_claim(claim_case)
