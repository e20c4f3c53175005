"""Gates for the sphere concentration inequalities (CLAIMS.md section 3, "Sphere concentration").

Each gate holds one family of bounds of :mod:`lipschitz_icl.inequalities` against the true tails with
:mod:`lipschitz_icl.claims.concentration` (decision rules in its docstrings: exact laws where known,
Clopper-Pearson upper confidence limits otherwise) and records the evidence; the bound of the same
shape with a too-small constant must be refuted by the same comparison.  The full profile repeats the
Monte Carlo gates over five seeds.
"""

import pytest

from lipschitz_icl.claims import concentration


def test_projection_tails_dasgupta_gupta(record_claim):
    record_claim(concentration.projection_tails())


def test_cap_probability_and_cap_counts(record_claim):
    record_claim(concentration.cap_counts())


def test_lipschitz_functionals_levy(record_claim, profile):
    seeds = (0,) if profile == "default" else (0, 1, 2, 3, 4)
    for seed in seeds:
        record_claim(concentration.lipschitz_functionals(seed=seed))


def test_softmax_normaliser_bernstein(record_claim, profile):
    if profile == "default":
        record_claim(concentration.softmax_normaliser())
        return
    for seed in (0, 1, 2, 3, 4):
        record_claim(concentration.softmax_normaliser(seed=seed, d_grid=(3, 10, 30), n_grid=(10, 100, 300)))
