"""The Theorem 3.5 claim machinery (registry group thm35) decides correctly on constructed inputs and end
to end on a small grid."""

import math

import numpy as np
import pytest

from lipschitz_icl import decision, registry
from lipschitz_icl.claims import thm35
from lipschitz_icl.claims.thm35 import (class_decision, envelope_decision, factor_decision, log_ratio,
                                        mismatch_ratio_theory, noise_decision, sign_decision, slope,
                                        slope_decision)


def test_slope_and_its_standard_error():
    """A law E = n^-0.6 with 1% errors: slope -0.6, se sqrt(2) 0.01 / log 10."""
    values = [1000**-0.6, 10000**-0.6]
    s, se = slope((1000, 10000), values, [0.01 * v for v in values])
    assert s == pytest.approx(-0.6) and se == pytest.approx(math.hypot(0.01, 0.01) / math.log(10))


def test_slope_rule_holds_fails_and_is_inconclusive():
    z = 3.0
    assert slope_decision([(-0.6, 0.01), (-0.5, 0.02)], -1 / 3, z).verdict == "holds"
    assert slope_decision([(-0.6, 0.01), (-0.2, 0.02)], -1 / 3, z).verdict == "fails"  # one probe too slow
    assert slope_decision([(-0.6, 0.01), (-0.35, 0.02)], -1 / 3, z).verdict == "inconclusive"
    # a noisier measurement of the same slopes cannot pass more easily
    assert slope_decision([(-0.6, 0.2)], -1 / 3, z).verdict == "inconclusive"


def test_envelope_rule_and_its_tightening():
    assert envelope_decision([(0.5, 0.5), (0.9, 0.9)]).verdict == "holds"
    assert envelope_decision([(0.5, 0.5), (1.01, 1.01)]).verdict == "fails"
    assert envelope_decision([(0.99, 1.01)]).verdict == "inconclusive"
    # tightened by delta: bound 1/(1 + delta); 0.9 breaks it once delta > 1/0.9 - 1
    assert envelope_decision([(0.9, 0.9)], 0.1).verdict == "holds"
    assert envelope_decision([(0.9, 0.9)], 0.2).verdict == "fails"


def test_noise_equivalence_needs_the_interval_inside_the_margin():
    theory, z = 1.0, 3.0
    assert noise_decision([(1.005, 0.002, theory, z)], 0.02).verdict == "holds"
    assert noise_decision([(1.005, 0.02, theory, z)], 0.02).verdict == "inconclusive"  # noisier: no pass
    assert noise_decision([(1.10, 0.002, theory, z)], 0.02).verdict == "fails"
    # the theory scaled by 1.1 is refuted by the measurement that holds for the theory itself
    assert noise_decision([(1.005, 0.002, theory, z)], 0.02, scale=1.1).verdict == "fails"


def test_sign_rule_on_log_ratios_and_its_shift():
    z = 3.0
    assert sign_decision([(0.7, 0.05), (1.5, 0.1)], z).verdict == "holds"
    assert sign_decision([(0.7, 0.05), (-0.5, 0.1)], z).verdict == "fails"
    assert sign_decision([(0.7, 0.05), (0.1, 0.1)], z).verdict == "inconclusive"
    # shifted: "exceeds exp(s)": refuted once s is above the top of the smallest interval (0.85)
    assert sign_decision([(0.7, 0.05), (1.5, 0.1)], z, 0.5).verdict == "holds"
    assert sign_decision([(0.7, 0.05), (1.5, 0.1)], z, 0.9).verdict == "fails"


def test_factor_and_class_rules():
    z = 3.0
    assert factor_decision([(math.log(3), 0.01)], [2.0], z).verdict == "holds"
    assert factor_decision([(math.log(1.5), 0.01)], [2.0], z).verdict == "fails"
    assert factor_decision([(math.log(1.5), 0.01)], [1.0], z).verdict == "holds"
    margin = math.log(2)
    assert class_decision([(0.02, 0.01), (-0.04, 0.01)], z, margin).verdict == "holds"
    assert class_decision([(1.2, 0.01)], z, margin).verdict == "fails"
    assert class_decision([(0.6, 0.1)], z, margin).verdict == "inconclusive"


def test_log_ratio_is_paired():
    """Common random numbers: the paired se is far below the independent one, and the value is exact."""
    rng = np.random.default_rng(0)
    base = rng.exponential(size=4000)
    other = 2.0 * base * (1 + 0.01 * rng.normal(size=base.size))
    r, se = log_ratio(other, base)
    assert r == pytest.approx(math.log(other.mean() / base.mean()), rel=1e-12)
    independent = math.hypot(other.std() / other.mean(), base.std() / base.mean()) / math.sqrt(base.size)
    assert se < 0.05 * independent


def test_two_sided_resolution_takes_the_worse_side():
    """A rule refuting shifts beyond +0.1 and below -0.3: resolution 0.3 (to the bisection's 10%)."""
    res = decision.two_sided_resolution(lambda x: x > 0.1 or x < -0.3, "shift", start=1e-3, limit=1.0)
    assert 0.3 <= res.value <= 0.3 * 1.1 and 0.1 <= res.extra["plus"] <= 0.11


def test_mismatch_ratio_formula_matches_a_direct_computation():
    """E(w) = b w^-p + c w^beta / n minimised at w*; the formula gives E(lambda w*)/E(w*)."""
    p, beta, b, c, n = 2.0, 1.0, 0.11, 1.0, 1000.0
    w_star = (p * b * n / (beta * c)) ** (1 / (p + beta))

    def E(w):
        return b * w**-p + c * w**beta / n

    for lam in (0.2, 1.0, 4.6):
        assert mismatch_ratio_theory(lam, p, beta) == pytest.approx(E(lam * w_star) / E(w_star), rel=1e-12)
    assert mismatch_ratio_theory(1.0, p, beta) == 1.0


def test_registry_entries_match_their_measures():
    specs = registry.specs("thm35")
    assert {s.name for s in specs} >= {"generalisation", "envelope", "noise-part", "mismatch", "same-l-classes"}
    for spec in specs:
        assert spec.stochastic and spec.seeds == {"default": 1, "full": 10}
        assert callable(getattr(thm35, spec.measure))
    assert registry.find("thm35.mismatch-marked").status == "exploratory"


SMALL = {"cosine_frequencies": (1.0,), "triangle_frequencies": (1.0,)}


def test_generalisation_end_to_end_on_a_small_grid():
    ev = thm35.generalisation("affine", 2, seed=np.random.SeedSequence(3), n_grid=(30, 300), contexts=(600, 600),
                              probe_kwargs=SMALL)
    names = ["affine", "relu", "cosine-1", "triangle-1", "distance-3"]
    assert [s["label"] for s in ev.figure["series"]] == names + ["Lipschitz envelope (theory)"]
    envelope = ev.figure["series"][-1]["y"]
    assert all(s["y"][j] < envelope[j] for s in ev.figure["series"][:-1] for j in range(2))
    assert ev.rule_name == "one-sided" and ev.resolution["value"] > 0
    assert [fv.verdict for fv in ev.false_variants] == ["fails"]
    assert ev.false_variants[0].distance == pytest.approx(2.0)
    assert ev.extra["w_star"][1] > ev.extra["w_star"][0]  # the pretrained window narrows with n


def test_same_seed_same_evidence_and_spawned_streams_differ():
    a = thm35.noise_part("affine", 2, seed=np.random.SeedSequence(5), n_grid=(30, 300), contexts=(300, 300))
    b = thm35.noise_part("affine", 2, seed=np.random.SeedSequence(5), n_grid=(30, 300), contexts=(300, 300))
    c = thm35.noise_part("affine", 2, seed=np.random.SeedSequence(6), n_grid=(30, 300), contexts=(300, 300))
    assert [q.measured for q in a.quantities] == [q.measured for q in b.quantities]
    assert [q.measured for q in a.quantities] != [q.measured for q in c.quantities]


def test_mismatch_end_to_end_is_paired_and_refutes_its_near_miss():
    ev = thm35.mismatch(2, seed=np.random.SeedSequence(4), n=100, contexts=800,
                        probe_kwargs={"cosine_frequencies": (1.0,), "triangle_frequencies": (), "centres": ()})
    assert ev.verdict == "holds" and ev.rule_name == "sign"
    assert [fv.verdict for fv in ev.false_variants] == ["fails"]
    errors = ev.extra["errors"]
    assert set(errors) == {"affine", "relu", "cosine-1"}
    for row in errors.values():
        assert row["L'=L/10"] > row["affine@L"] and row["L'=10L"] > row["affine@L"]
    # the resolution s is refuted: some gated ratio's interval lies wholly below exp(s); not so at its low end
    s, low = ev.resolution["value"], ev.resolution["low"]
    tops = [q.ci_high for q in ev.quantities if q.verdict is not None]
    assert min(tops) < math.exp(s) and min(tops) >= math.exp(low)


def test_mismatch_marked_asks_the_factor_only_where_derived():
    ev = thm35.mismatch_marked(2, seed=np.random.SeedSequence(4), n=100, contexts=400,
                               probe_kwargs={"cosine_frequencies": (1.0,), "triangle_frequencies": (), "centres": ()})
    # d = 2: the derived ratio for L' = 10 L is ~2.01 < 1.25 x 2, so only "larger" is asked there
    assert ev.extra["derived_ratio"]["L'=10L"] == pytest.approx(2.0145, abs=1e-3)
    assert ev.extra["required_factor"] == {"L'=L/10": 2.0, "L'=10L": 1.0}
