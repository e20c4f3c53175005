"""The Theorem 3.5 claim machinery decides correctly on synthetic inputs and end to end on a small grid."""

import math

import numpy as np
import pytest

from lipschitz_icl.claims import thm35
from lipschitz_icl.claims.thm35 import decrease_verdict, marked_verdict, mismatch_ratio_theory, slope_verdict


def test_slope_rule_decides_each_side_of_the_threshold():
    n = (1000, 10000)
    z = 3.0
    # a law E = n^-0.6 with 1% errors: falls faster than n^-1/3, slower than n^-1
    values = [1000**-0.6, 10000**-0.6]
    errors = [0.01 * v for v in values]
    verdict, s, se = slope_verdict(n, values, errors, -1 / 3, z)
    assert verdict == "holds" and s == pytest.approx(-0.6) and se == pytest.approx(math.hypot(0.01, 0.01) / math.log(10))
    assert slope_verdict(n, values, errors, -1.0, z)[0] == "fails"
    # too noisy to tell -0.6 from -0.55
    assert slope_verdict(n, values, [0.2 * v for v in values], -0.55, z)[0] == "inconclusive"


def test_decrease_rule():
    assert decrease_verdict([3.0, 2.0, 1.0], [0.1, 0.1, 0.1], 3.0) == "holds"
    assert decrease_verdict([3.0, 2.0, 2.9], [0.1, 0.1, 0.1], 3.0) == "fails"
    assert decrease_verdict([3.0, 2.9, 2.8], [0.1, 0.1, 0.1], 3.0) == "inconclusive"


def test_marked_rule_needs_both_significance_and_the_factor():
    assert marked_verdict((1.0, 0.1), 3.0, 3.0) == "holds"
    assert marked_verdict((1.0, 0.1), 1.5, 3.0) == "fails"  # significant but less than twice
    assert marked_verdict((1.0, 0.5), 3.0, 3.0) == "fails"  # large but not significant
    assert marked_verdict((-1.0, 0.1), 0.3, 3.0) == "fails"


def test_mismatch_ratio_formula_matches_a_direct_computation():
    """E(w) = b w^-p + c w^beta / n minimised at w*; the formula gives E(lambda w*)/E(w*)."""
    p, beta, b, c, n = 2.0, 1.0, 0.11, 1.0, 1000.0
    w_star = (p * b * n / (beta * c)) ** (1 / (p + beta))

    def E(w):
        return b * w**-p + c * w**beta / n

    for lam in (0.2, 1.0, 4.6):
        assert mismatch_ratio_theory(lam, p, beta) == pytest.approx(E(lam * w_star) / E(w_star), rel=1e-12)
    assert mismatch_ratio_theory(1.0, p, beta) == 1.0


def test_generalisation_end_to_end_on_a_small_grid():
    ev = thm35.generalisation("affine", 2, n_grid=(30, 300), contexts=(600, 600), seed=3,
                              probe_kwargs={"cosine_frequencies": (1.0,), "triangle_frequencies": (1.0,)})
    names = ["affine", "relu", "cosine-1", "triangle-1", "distance-3"]
    assert [s["label"] for s in ev.figure["series"]] == names + ["Lipschitz envelope (theory)"]
    envelope = ev.figure["series"][-1]["y"]
    assert all(s["y"][j] < envelope[j] for s in ev.figure["series"][:-1] for j in range(2))
    assert ev.figure["kind"] == "loglog" and len(ev.figure["y"]) == 2
    # the envelope inequality is deterministic: it holds in every context whatever the sample size
    assert set(ev.extra["envelope_excess"]) == set(names)
    assert all(excess <= 0 for excess in ev.extra["envelope_excess"].values())
    assert [fv.name for fv in ev.false_variants][1] == "the error falls as fast as n^-1 (parametric rate)"
    assert ev.false_variants[1].verdict == "fails"
    assert ev.extra["w_star"][1] > ev.extra["w_star"][0]  # the pretrained window narrows with n


def test_mismatch_end_to_end_is_paired_and_refutes_the_swapped_roles():
    ev = thm35.mismatch(2, n=100, contexts=800, seed=4,
                        probe_kwargs={"cosine_frequencies": (1.0,), "triangle_frequencies": (), "centres": ()})
    assert ev.verdict == "holds"
    assert all(fv.verdict == "fails" for fv in ev.false_variants)
    errors = ev.extra["errors"]
    assert set(errors) == {"affine", "relu", "cosine-1"}
    for row in errors.values():
        assert row["L'=L/10 (affine)"] > 2 * row["affine@L"] and row["L'=10L (affine)"] > 2 * row["affine@L"]
    assert np.isfinite(ev.figure["series"][0]["y"]).all()
    # d = 2: the derived ratio for L' = 10 L is ~2.01 < 1.25 x 2, so only "significantly worse" is asked there
    assert ev.extra["derived_ratio"]["L'=10L (affine)"] == pytest.approx(2.0145, abs=1e-3)
    assert ev.extra["required_factor"] == {"L'=L/10 (affine)": 2.0, "L'=10L (affine)": 1.0}
