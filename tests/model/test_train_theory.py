"""Trained attention agrees with the paper's structure theorems (registry: thm34.trained-isotropy, thm44;
the full-layer form of Lemma B.1 and Eq. (4) is the registry group lemmaB1).

Each claim is checked on matrices the NumPy trainer learns by online pretraining from a random start,
and each check has a companion showing the same measure and threshold reject a false version.

The training protocol, the scale rule and the shape threshold are those of
:mod:`lipschitz_icl.estimators.pretraining` (shared with the claim gates in ``verify/``).
"""

from __future__ import annotations

import numpy as np
import pytest

from lipschitz_icl import decision
from lipschitz_icl.estimators.pretraining import (
    M_PROTOCOL,
    SHAPE_THRESHOLD,
    independent_runs,
    noise_floor,
    scale_interval,
)
from lipschitz_icl.model import geometry
from lipschitz_icl.optimum import wstar_mc
from lipschitz_icl.problem import make_problem

SIGMA = 0.3
RUNS = 5
LEVEL = 0.99
THRESHOLD = SHAPE_THRESHOLD
_runs = independent_runs


# ----------------------------------------------------------------------------- isotropy and scale
# affine d = 2 here; relu d = 3 (about 30 s of training) is gated by thm34.trained-isotropy in the full profile
SETTINGS = {"affine-d2": ("affine", 2, 20, 101)}


@pytest.fixture(scope="module", params=sorted(SETTINGS))
def isotropic(request):
    task, d, n, entropy = SETTINGS[request.param]
    problem = make_problem(task, d, n, 1.0, SIGMA)
    runs = _runs(problem, entropy, RUNS, **M_PROTOCOL)
    w_star = wstar_mc(problem, rng=entropy, rel_precision=0.002)
    return {
        "problem": problem,
        "starts": [r[0] for r in runs],
        "results": [r[1] for r in runs],
        "w_star": w_star,
        "name": request.param,
    }


_noise_floor = noise_floor


def test_trained_M_is_a_multiple_of_the_identity(isotropic):
    """Lemma B.5: from random anisotropic starts, trained ``M`` has anisotropy
    ``||M - (tr M/d) I||_F / ||M||_F < 0.05`` in every run (rule and threshold: module constants)."""
    Ms = [r.M for r in isotropic["results"]]
    values = [geometry.anisotropy(M) for M in Ms]
    starts = [geometry.anisotropy(M) for M in isotropic["starts"]]
    floor = _noise_floor(Ms)
    print(
        f"\n{isotropic['name']}: anisotropy start {np.round(starts, 3)} -> trained {np.round(values, 4)}"
        f" (noise floor {floor:.4f})"
    )
    assert floor < THRESHOLD / 3, "too noisy for the threshold to mean anything"
    assert max(values) < THRESHOLD, values


def test_anisotropy_flags_matrices_that_are_not_isotropic(isotropic):
    """The same measure and threshold reject the random starts of these very runs (the claim is false
    there), and a trained ``M`` that the theory says is *not* isotropic: a low-rank task's (below)."""
    starts = [geometry.anisotropy(M) for M in isotropic["starts"]]
    assert min(starts) > THRESHOLD, starts


SCALE_MARGIN = 0.01  # relative: the registry's margin for thm34.trained-isotropy


def test_trained_scale_matches_wstar(isotropic):
    """``tr(M)/d`` of the trained ``M`` is ``w*`` (``wstar_mc``, 0.2% relative precision): the 99% Welch
    interval of the difference (:func:`scale_interval`) lies within ``+-1%`` of ``w*`` (equivalence)."""
    w_runs = [r.w_trained for r in isotropic["results"]]
    w_star = isotropic["w_star"]
    low, high = scale_interval(w_runs, w_star)
    margin = SCALE_MARGIN * w_star.w_star.value
    assert decision.equivalence(low, high, margin).verdict == "holds", (low, high, margin)


@pytest.mark.parametrize("factor", [1.03, 0.97])
def test_scale_rule_refutes_a_scale_three_percent_off(isotropic, factor):
    """A near miss: the trained scale is ``factor w*`` (3% off, three margins).  The same equivalence
    rule refutes it."""
    w_star = isotropic["w_star"]
    low, high = scale_interval([r.w_trained for r in isotropic["results"]], w_star, target=factor * w_star.w_star.value)
    assert decision.equivalence(low, high, SCALE_MARGIN * w_star.w_star.value).verdict == "fails", (low, high)


# ----------------------------------------------------------------------------- low rank (Theorem 4.4)
@pytest.fixture(scope="module")
def lowrank():
    problem = make_problem("lowrank-affine", 4, 20, 1.0, SIGMA, rank=2)
    runs = _runs(problem, 303, 2, **M_PROTOCOL)
    return {"problem": problem, "starts": [r[0] for r in runs], "results": [r[1] for r in runs]}


def test_trained_M_concentrates_on_col_B(lowrank):
    """Theorem 4.4: on ``lowrank-affine`` (d = 4, rank 2, n = 20, sigma = 0.3) the trained ``M`` lives
    on ``col(B)``: ``rho(M, B) = ||M - P M P||_F / ||M||_F < 0.05`` (``P = B B^T``) in both runs."""
    B = lowrank["problem"].task_class.B
    values = [geometry.rho(r.M, B) for r in lowrank["results"]]
    starts = [geometry.rho(M, B) for M in lowrank["starts"]]
    print(f"\nlowrank-affine: rho start {np.round(starts, 3)} -> trained {np.round(values, 4)}")
    assert max(values) < THRESHOLD, values


def test_rho_flags_matrices_off_col_B(lowrank, isotropic):
    """False versions rejected by the same measure: the random starts, and the isotropic ``M`` trained
    on a full-rank task, measured against a rank-``k`` ``B`` (``rho = sqrt(1 - k/d)`` for ``M = wI``)."""
    B = lowrank["problem"].task_class.B
    assert min(geometry.rho(M, B) for M in lowrank["starts"]) > THRESHOLD
    d = isotropic["problem"].d
    B_iso = np.eye(d)[:, :1]
    values = [geometry.rho(r.M, B_iso) for r in isotropic["results"]]
    assert min(values) > THRESHOLD, values


def test_anisotropy_flags_the_low_rank_optimum(lowrank):
    """The isotropy measure is not blind: a trained ``M`` that concentrates on a rank-2 subspace of
    ``R^4`` (the low-rank optimum, where Lemma B.5's symmetry does not apply) scores far above 0.05."""
    values = [r.anisotropy for r in lowrank["results"]]
    assert min(values) > THRESHOLD, values
