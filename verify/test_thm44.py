"""Gates for Theorem 4.4: the attention window learns the direction col(B) of low-rank tasks
(CLAIMS.md section 3).

Each gate evaluates one claim with :mod:`lipschitz_icl.claims.thm44` (decision rules in its
docstrings) and records the evidence; the plugin fails the gate if the claim fails or if one of its
false variants survives, and reports an inconclusive claim as such.

* ``direction``: the theorem's classes (linear link, and the affine link whose intercept cancels):
  ``c* B B^T`` is a minimum, every perturbation with a component outside ``col(B)`` raises the loss,
  quadratically in its size.
* ``scope``: the nonlinear links of the paper's low-rank experiment (quadratic, cosine): ``c* B B^T`` is
  stationary along every outside direction but a minimum only at some ``(d, k)``; where it is a saddle
  the sphere lets the complement inform the even part of the link (``||B^T x||^2 = 1 - ||Q x||^2``).
* ``trained``: SGD from random starts ends with ``rho(M, B) < 0.05``.
* ``dimension``: with the signal matched across ``d``, the optimal low-rank error stays below its
  ``d``-free ``k``-dimensional limit while the best isotropic error grows with ``d`` (bias and noise
  parts held against their own trends).
"""

import pytest

from lipschitz_icl.claims import thm44

THEOREM_LINKS = ("lowrank-linear", "lowrank-affine")
NONLINEAR_LINKS = ("lowrank-quadratic", "lowrank-cosine")
DEFAULT_DK = ((3, 1), (5, 2), (8, 2))
FULL_DK = ((4, 1), (6, 3), (12, 3))


@pytest.mark.parametrize("task", THEOREM_LINKS)
@pytest.mark.parametrize("d, k", DEFAULT_DK + FULL_DK)
def test_direction_of_the_window(record_claim, profile, task, d, k):
    if profile == "default" and (d, k) not in DEFAULT_DK:
        pytest.skip(f"default profile: (d, k) in {DEFAULT_DK} (full profile adds {FULL_DK} and seeds 0-4)")
    seeds = (0,) if profile == "default" else (0, 1, 2, 3, 4)
    for seed in seeds:
        record_claim(thm44.direction_optimality(task, d, k, seed=seed))


@pytest.mark.parametrize("task", NONLINEAR_LINKS)
def test_nonlinear_links_scope(record_claim, profile, task):
    seeds = (0,) if profile == "default" else (0, 1, 2, 3, 4)
    for seed in seeds:
        record_claim(thm44.nonlinear_scope(task, seed=seed))


@pytest.mark.parametrize("task, d, k, entropy", [("lowrank-linear", 4, 2, 303), ("lowrank-affine", 4, 2, 404)])
def test_training_finds_the_subspace(record_claim, profile, task, d, k, entropy):
    if profile == "default" and task != "lowrank-linear":
        pytest.skip("default profile: lowrank-linear d = 4, k = 2 (full profile adds lowrank-affine)")
    record_claim(thm44.trained_direction(task, d, k, entropy=entropy))


@pytest.mark.parametrize("task", THEOREM_LINKS + NONLINEAR_LINKS)
def test_icl_loss_follows_k_not_d(record_claim, profile, task):
    if profile == "default":
        if task not in ("lowrank-linear", "lowrank-cosine"):
            pytest.skip("default profile: linear and cosine links (full profile: all four links, 20000 contexts)")
        record_claim(thm44.dimension_dependence(task))
        return
    record_claim(thm44.dimension_dependence(task, contexts=20000))
