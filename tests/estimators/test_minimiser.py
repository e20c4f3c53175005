"""Probes of ``w I`` as a minimiser of the ICL loss (lipschitz_icl.estimators.minimiser): paired differences along
anisotropic directions and along the scale, each decided by the sign rule."""

import numpy as np
import pytest

from lipschitz_icl import make_problem
from lipschitz_icl.estimators.minimiser import MinimiserProbes, anisotropic_probes, minimiser_decisions, scale_decisions
from lipschitz_icl.optimum import wstar

PROBLEM = make_problem("affine", 2, 20, 1.0, 0.5)


@pytest.fixture(scope="module")
def w_star():
    return wstar(PROBLEM, "exact").w_star.value


def test_anisotropic_probes_are_unit_traceless_and_cycle_through_the_kinds():
    probes = anisotropic_probes(3, 4, np.random.default_rng(0))
    assert [kind for kind, _ in probes] == ["symmetric", "antisymmetric", "rank-one", "symmetric"]
    for _, D in probes:
        assert np.linalg.norm(D) == pytest.approx(1.0) and np.trace(D) == pytest.approx(0.0, abs=1e-12)
    assert not np.allclose(probes[0][1], probes[3][1])  # each from a fresh Gaussian A


def test_scale_probes_refute_a_window_far_from_the_optimum(w_star):
    """At w*/4 a wider scale lowers the loss: the 'up' difference is negative (fails), 'down' positive."""
    probes = MinimiserProbes.draw(
        PROBLEM,
        w_star / 4,
        np.random.SeedSequence(1),
        count=1,
        step=0.1,
        contexts=2000,
        scale_step=0.3,
        scale_contexts=20000,
        family_level=1e-3,
    )
    (up, down), (e_up, e_down) = scale_decisions(PROBLEM, probes.batch, w_star / 4, 0.3, probes.level)
    assert e_up.value < 0 < e_down.value
    assert (up.verdict, down.verdict) == ("fails", "holds")


def test_anisotropic_probes_of_a_scaled_identity(w_star):
    """Along I/||I|| (a larger scale) from w*/4 I the loss falls: the rule fails there; the same stream gives
    the same draws on every call."""
    M0 = w_star / 4 * np.eye(2)
    kw = {"step": 0.3, "contexts": 4000, "stream": np.random.SeedSequence(2), "level": 0.99}
    decisions, diffs = minimiser_decisions(PROBLEM, M0, [np.eye(2) / np.sqrt(2)], **kw)
    assert decisions[0].verdict == "fails" and diffs[0].value < 0
    again = minimiser_decisions(PROBLEM, M0, [np.eye(2) / np.sqrt(2)], **kw)[1]
    assert again[0].value == diffs[0].value


def test_every_probe_of_the_optimum_raises_the_loss(w_star):
    """At w* I every probe (two anisotropic directions, both signs, and the scale) raises the loss: each
    difference is 16-200 standard errors above zero, against a Bonferroni z of about 3.8."""
    probes = MinimiserProbes.draw(
        PROBLEM,
        w_star,
        np.random.SeedSequence(3),
        count=2,
        step=0.1,
        contexts=4000,
        scale_step=0.3,
        scale_contexts=20000,
        family_level=1e-3,
    )
    decisions, diffs = probes.at(w_star)
    signed = ["+symmetric #0", "+antisymmetric #1", "-symmetric #0", "-antisymmetric #1"]
    assert probes.names == signed + ["scale up", "scale down"]
    assert probes.level == pytest.approx(1 - 1e-3 / 6)
    assert len(decisions) == len(diffs) == 6
    assert all(d.verdict == "holds" for d in decisions), [d.detail for d in decisions]
