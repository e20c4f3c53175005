"""The Lemma B.1 / Eq. (4) claim machinery (registry ``lemmaB1``) on constructed layers and on the
random starts of the trainer: the rules hold where the structure is there and refute it where it is not."""

import numpy as np
import pytest

from lipschitz_icl import geometry
from lipschitz_icl.claims import lemmaB1
from lipschitz_icl.pretraining import SHAPE_THRESHOLD
from lipschitz_icl.train import init_params


def _eq4_layer(d, w, rng, leak=0.0, coupling=0.0):
    """A layer in the Eq. (4) form with ``W_K^T W_Q = [[w I, 0], [0, 0]]`` (``W_K`` orthogonal), then a
    value leak and a label coupling of the given sizes added."""
    D = d + 1
    W_K, _ = np.linalg.qr(rng.normal(size=(D, D)))
    A = np.zeros((D, D))
    A[:d, :d] = w * np.eye(d)
    A[d, :d] = coupling * w * rng.normal(size=d) / np.sqrt(d)
    W_Q = W_K @ A  # W_K^T W_Q = A since W_K is orthogonal
    W_V = np.zeros((D, D))
    W_V[d, d] = 1.0
    W_V[d, :d] = leak * rng.normal(size=d) / np.sqrt(d)
    return {"W_K": W_K, "W_Q": W_Q, "W_V": W_V}


def test_block_distance_is_zero_on_the_eq4_form_and_sees_each_violation():
    rng = np.random.default_rng(0)
    p = _eq4_layer(3, 2.5, rng)
    A = lemmaB1.kq_matrix(p)
    assert lemmaB1.block_distance(A) == pytest.approx(0.0, abs=1e-12)
    A_coupled = lemmaB1.kq_matrix(_eq4_layer(3, 2.5, rng, coupling=0.3))
    assert lemmaB1.block_distance(A_coupled) > 0.1
    A_aniso = A.copy()
    A_aniso[0, 1] = 1.0
    assert lemmaB1.block_distance(A_aniso) == pytest.approx(1.0 / np.linalg.norm(A_aniso[:, :3]))
    A_col = A.copy()
    A_col[:, 3] = 5.0  # the column that meets the query's zero label slot is not part of the form
    assert lemmaB1.block_distance(A_col) == pytest.approx(0.0, abs=1e-12)


def test_shape_rule_holds_below_and_refutes_above_the_threshold():
    assert lemmaB1.shape_decision([0.002, 0.003, 0.004, 0.003]).verdict == "holds"
    assert lemmaB1.shape_decision([0.2, 0.25, 0.22, 0.21]).verdict == "fails"
    assert lemmaB1.shape_decision([0.01, 0.09, 0.02, 0.08]).verdict == "inconclusive"


def test_floor_resolution_is_the_upper_limit_and_its_near_miss_is_refuted():
    values = [0.002, 0.003, 0.004, 0.003]
    res = lemmaB1.floor_resolution(values, "leak")
    _, high = lemmaB1.upper_interval(values)
    assert res.resolved and high <= res.value <= 1.11 * high
    variant, = lemmaB1._floor_variant(values, res, "leak")
    assert variant.refuted and variant.distance == 2.0


@pytest.mark.parametrize("d", [2, 3, 5])
def test_the_measures_refute_the_random_starts(d):
    """False version: random starts (scale as in training) carry a value leak and a label coupling
    that the same rule refutes."""
    rng = np.random.default_rng(d)
    starts = [init_params("full", d, "softmax", rng, lemmaB1.INIT_SCALE) for _ in range(4)]
    leaks = [geometry.value_leak(s["W_V"]) for s in starts]
    couplings = [geometry.kq_label_coupling(s["W_K"], s["W_Q"]) for s in starts]
    assert lemmaB1.shape_decision(couplings).verdict == "fails"
    assert min(leaks) > SHAPE_THRESHOLD


def test_constructed_violations_are_refuted_and_the_form_holds():
    rng = np.random.default_rng(1)
    good = [_eq4_layer(2, 3.0, rng) for _ in range(4)]
    leaky = [_eq4_layer(2, 3.0, rng, leak=0.3) for _ in range(4)]
    assert lemmaB1.shape_decision([geometry.value_leak(p["W_V"]) for p in good]).verdict == "holds"
    assert lemmaB1.shape_decision([geometry.value_leak(p["W_V"]) for p in leaky]).verdict == "fails"


def test_trained_layers_are_reproducible_from_the_seed():
    seq = np.random.SeedSequence(123)
    protocol = dict(lemmaB1.FULL_PROTOCOL, steps=20)
    a = lemmaB1.trained_layers("affine", 2, 10, 1.0, 0.3, seq, runs=2, protocol=protocol)
    b = lemmaB1.trained_layers("affine", 2, 10, 1.0, 0.3, np.random.SeedSequence(123), runs=2, protocol=protocol)
    for (_, ra), (_, rb) in zip(a, b):
        assert np.array_equal(ra.params["W_Q"], rb.params["W_Q"])
    assert not np.array_equal(a[0][1].params["W_Q"], a[1][1].params["W_Q"])
