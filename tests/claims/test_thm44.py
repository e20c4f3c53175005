"""The Theorem 4.4 claims (registry: lipschitz_icl/claims/thm44.toml): the rules of the group on constructed
inputs (minimiser moves, the trained range, the dimension tests, the saddle's change rule).  The low-rank
machinery they rest on is tested in test_lowrank.py."""

import math

import numpy as np
import pytest

from lipschitz_icl import decision
from lipschitz_icl.claims import thm44
from lipschitz_icl.estimate import Estimate
from lipschitz_icl.estimators import lowrank
from lipschitz_icl.estimators.pretraining import noise_floor
from lipschitz_icl.model import geometry


def _e(value, se):
    return Estimate(value, se, 1000)


def test_sign_moves_on_constructed_changes():
    changes = [("up", _e(1e-3, 1e-5)), ("down", _e(-1e-3, 1e-5)), ("flat", _e(1e-6, 1e-5))]
    assert [d.verdict for d in thm44._signs(changes, 1 - 1e-3 / 3)] == ["holds", "fails", "inconclusive"]
    # a noisier measurement never passes more easily: the same mean with a wider interval
    assert thm44._signs([("up", _e(1e-3, 1e-3))], 1 - 1e-3)[0].verdict == "inconclusive"


def test_scale_rule_refutes_an_offset_base_on_a_parabola():
    # toy loss per prompt l_c(c) = (c - 1)^2 + g_c (c - 1) with E g = 0: a base off by eps is refuted
    # once eps exceeds s/2 plus the noise; the exact base holds
    g = np.random.default_rng(0).normal(0, 0.02, 40000)

    class Toy:
        def losses(self, Ms):
            return [(M[0, 0] - 1.0) ** 2 + g * (M[0, 0] - 1.0) for M in Ms]

    def rule(eps):
        return [d.verdict for d in thm44._signs(lowrank.scale_changes(Toy(), 1 + eps, np.eye(1), 0.04), 1 - 1e-3 / 2)]

    assert rule(0.0) == ["holds", "holds"]
    assert "fails" in rule(0.05) and "fails" in rule(-0.05)
    assert "fails" not in rule(0.01)


def test_range_decision_and_noise_floor_on_constructed_runs():
    B = np.eye(4)[:, :2]
    P = B @ B.T
    D = np.zeros((4, 4))
    D[2, 3] = D[3, 2] = 1.0
    rhos = lambda sizes: [geometry.rho(P + s * D, B) for s in sizes]  # noqa: E731  rho grows with s
    assert thm44._range_decision(rhos([0.0, 0.01]), 0.05).verdict == "holds"
    assert thm44._range_decision(rhos([0.2, 0.3]), 0.05).verdict == "fails"
    assert thm44._range_decision(rhos([0.01, 0.3]), 0.05).verdict == "inconclusive"
    # the floor of rho counts only the run-to-run spread off col(B): spread inside it is no floor
    inside = np.zeros((4, 4))
    inside[0, 1] = inside[1, 0] = 1.0
    assert noise_floor([P + 0.1 * inside, P - 0.1 * inside], B) == pytest.approx(0.0, abs=1e-15)
    spread = noise_floor([P + 0.1 * D, P - 0.1 * D], B)
    assert spread == pytest.approx(0.1 * math.sqrt(2) / math.sqrt(2), rel=1e-12)


def _rows(values_P, values_I, n=4000, seed=0):
    """Constructed dimension rows: per-context parts with the given means and a 10% spread."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, (p, i) in zip((4, 8, 16), zip(values_P, values_I)):
        bP, bI = p * (1 + 0.1 * rng.standard_normal(n)), i * (1 + 0.1 * rng.standard_normal(n))
        nI = np.full(n, 1e-3 / d)
        rows.append({"d": d, "P": bP + 1e-3, "bP": bP, "I": bI + nI, "bI": bI, "nI": nI})
    return rows


def _verdicts(tests, level=1 - 1e-3 / 12):
    verdicts = {test.label: test.decision(level).verdict for test in tests}
    assert verdicts == {
        test.label: decision.one_sided(*test.estimate.confidence_interval(level), test.bound, test.relation).verdict
        for test in tests
    }
    return verdicts


def test_dimension_tests_on_constructed_rows():
    rng = np.random.default_rng(1)
    bL = 0.1 * (1 + 0.1 * rng.standard_normal(4000))
    limit = (bL, np.full(4000, 1e-3))
    good = _verdicts(thm44._dimension_tests(_rows((0.09, 0.095, 0.098), (0.1, 0.2, 0.4)), limit, 0.05))
    assert set(good.values()) == {"holds"}
    worse = _verdicts(thm44._dimension_tests(_rows((0.09, 0.15, 0.2), (0.1, 0.2, 0.4)), limit, 0.05))
    assert worse["B: L_P(d=16)/L_P(inf) - 1 <= bound"] == "fails"
    # the shifted bound gamma only tightens the test
    shifted = _verdicts(thm44._dimension_tests(_rows((0.09, 0.095, 0.098), (0.1, 0.2, 0.4)), limit, 0.05, 0.5))
    assert shifted["B: L_P(d=16)/L_P(inf) - 1 <= bound"] == "fails"


def test_sweep_rule_on_constructed_rows():
    # the claim holds on rows that follow k; a scale search at its edge leaves it undecided (not the shifted
    # bound, which only tightens); the rival "the error follows d" is refuted on the same rows
    rng = np.random.default_rng(1)
    limit = (0.1 * (1 + 0.1 * rng.standard_normal(4000)), np.full(4000, 1e-3))
    rows = _rows((0.09, 0.095, 0.098), (0.1, 0.2, 0.4))
    level = 1 - 1e-3 / len(thm44._dimension_tests(rows, limit, 0.05))
    assert thm44._Sweep(rows, limit, 0.05, level, False).decide().verdict == "holds"
    unsure = thm44._Sweep(rows, limit, 0.05, level, True)
    assert unsure.decide().verdict == "inconclusive" and unsure.decide(gamma=0.5).verdict == "fails"
    assert unsure.decide(rival="follows-d").verdict == "fails"


class _Value:
    def __init__(self, value, bias, noise):
        self.value, self.bias, self.noise = value, bias, noise


def test_saddle_extra_names_every_rival_law_and_the_kind():
    th = {"c": 2.0, "s": 0.08, "change": _Value(-1e-4, -3e-4, 2e-4), "curvature": _Value(-0.03, -0.09, 0.06)}
    th |= {"large_n": -2e-4, "infinite_n": -5e-4, "large_n_curvature": _Value(-0.05, 0.0, 0.0)}
    extra = thm44._saddle_extra(th)
    assert extra["kind"] == "saddle" and extra["c_star"] == 2.0 and extra["s"] == 0.08
    laws = {law: extra["derived"][key] for law, key in thm44._RIVALS.items()}
    assert laws == {"exact": -1e-4, "large-n": -2e-4, "infinite-n": -5e-4, "no-information": 2e-4}
    th["curvature"] = _Value(0.01, -0.05, 0.06)
    assert thm44._saddle_extra(th)["kind"] == "minimum"


def test_the_direction_claim_says_it_is_evaluated_at_its_moves_only():
    """'c* B B^T is a minimiser' is checked along finitely many moves: ``points`` counts them (the scale row
    beside them reports where c* was found, not a move)."""
    import numpy as np

    from lipschitz_icl.claims.thm44 import direction_optimality

    outcome = direction_optimality(
        task="lowrank-linear", d=3, k=1, n=20, seed=np.random.SeedSequence(1), L=1.0, sigma=0.3, scale_step=0.04,
        step=0.04, contexts=500, search_contexts=500, scale_exponents=[-2.0, 2.5], scale_points=7, refine=[0.3],
        family_level=1e-3,
    )  # fmt: skip
    assert outcome.points == len(outcome.quantities) - 1 >= 3
