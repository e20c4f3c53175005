"""Scale equivalence over independent trained runs (lipschitz_icl.estimators.trained_scale): each run's anisotropy and
scale are those of its trained M, the Welch and relative scale rules decide as equivalences, and the scale and
shape decisions combine into one."""

import numpy as np
import pytest

from lipschitz_icl import decision
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.estimators.pretraining import independent_runs, scale_interval
from lipschitz_icl.estimators.trained_scale import (
    relative_scale_equivalence,
    scale_and_shape,
    scale_equivalence,
    trained_runs,
)
from lipschitz_icl.model import geometry
from lipschitz_icl.model.train import effective_M
from lipschitz_icl.optimum import WStar
from lipschitz_icl.problem import make_problem

SHORT = {"optimizer": "adam", "lr": 0.05, "steps": 20, "batch": 32}


@pytest.mark.parametrize(
    "attention, protocol", [("linear", SHORT), ("softmax", {**SHORT, "param": "full"})], ids=["M-form", "full"]
)
def test_runs_carry_the_anisotropy_and_scale_of_each_trained_M(attention, protocol):
    problem = make_problem("affine", 2, 10, 1.0, 0.3)
    runs = trained_runs(problem, np.random.SeedSequence(7), 2, attention=attention, init_scale=0.5, **protocol)
    same = independent_runs(problem, np.random.SeedSequence(7), 2, attention=attention, init_scale=0.5, **protocol)
    assert len(runs.results) == len(runs.starts) == 2
    for (start, result), kept, r, a, w in zip(same, runs.starts, runs.results, runs.anisotropy, runs.scales):
        M = effective_M(result.param, result.params, attention)
        assert np.array_equal(r.M, M) and a == geometry.anisotropy(M) and w == geometry.isotropic_scale(M)
        assert (
            all(np.array_equal(kept[k], start[k]) for k in start) if isinstance(start, dict) else (kept == start).all()
        )
    assert runs.scales[0] != runs.scales[1]  # independent runs: different draws, different scales


def _exact(value: float, se: float) -> WStar:
    return WStar(w_star=Estimate(value, se), ci_low=value, ci_high=value, loss=Estimate(0.0, 0.0), method="exact")


def test_scale_equivalence_is_the_welch_interval_within_the_margin():
    w_runs, exact = [2.0, 2.01, 1.99, 2.005], _exact(2.0, 1e-4)
    low, high = scale_interval(w_runs, exact, target=2.0, level=0.99)
    assert scale_equivalence(w_runs, exact, 2.0, 0.1, 0.99).verdict == "holds"
    assert scale_equivalence(w_runs, exact, 2.0, 0.1, 0.99).detail == decision.equivalence(low, high, 0.1).detail
    assert scale_equivalence(w_runs, exact, 2.5, 0.1, 0.99).verdict == "fails"  # a target 25% off
    # the same centre with a spread whose interval reaches past the margin decides nothing
    assert scale_equivalence([1.9, 2.1, 1.95, 2.07], exact, 2.0, 0.1, 0.99).verdict == "inconclusive"


def test_relative_scale_equivalence():
    assert relative_scale_equivalence([1.0, 1.001, 0.999, 1.0005], 1.0, 0.02, 0.99)[0].verdict == "holds"
    assert relative_scale_equivalence([1.2, 1.201, 1.199, 1.2005], 1.0, 0.02, 0.99)[0].verdict == "fails"
    assert relative_scale_equivalence([0.9, 1.1, 0.95, 1.05], 1.0, 0.02, 0.99)[0].verdict == "inconclusive"
    low, high = relative_scale_equivalence([2.0, 2.2, 2.1, 2.1], 2.0, 0.02, 0.99)[1]
    assert low < 0.05 < high  # the interval is relative to the target: mean 2.1 is +5%


def test_scale_and_shape_needs_both():
    holds, fails = decision.equivalence(-0.01, 0.01, 0.1), decision.one_sided(0.2, 0.3, 0.05, "<=")
    both = scale_and_shape(holds, decision.one_sided(0.0, 0.01, 0.05, "<="))
    assert both.verdict == "holds" and both.rule == "equivalence" and both.detail.startswith("scale: ")
    assert (
        scale_and_shape(holds, fails).verdict == "fails"
        and "; shape: [0.2, 0.3]" in scale_and_shape(holds, fails).detail
    )
    assert scale_and_shape(decision.equivalence(-0.2, 0.05, 0.1), holds).verdict == "inconclusive"
