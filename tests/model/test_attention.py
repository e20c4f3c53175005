"""Attention predictors: the M-form, linear attention and the full layer under Eq. (4)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lipschitz_icl import Attention, AttentionLayer, make_problem, sphere
from lipschitz_icl.model.attention import softmax_weights_from_logits


@given(st.integers(2, 6), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_full_layer_reduces_to_M_form_under_eq4(d, n, seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(d, d))
    x = sphere.uniform_sphere(rng, (3, n), d)
    q = sphere.uniform_sphere(rng, 3, d)
    y = rng.normal(size=(3, n))
    for kind in ("softmax", "linear"):
        layer = AttentionLayer.from_M(M, kind)
        model = Attention(M, kind)
        np.testing.assert_allclose(layer.predict(x, y, q), model.predict(x, y, q), rtol=1e-10, atol=1e-12)


def test_full_layer_with_covariate_values_is_not_the_M_form():
    """The reduction needs W_V to read the label only: putting weight on x changes the prediction."""
    rng = np.random.default_rng(0)
    d, n = 3, 8
    layer = AttentionLayer.from_M(np.eye(d))
    W_V = layer.W_V.copy()
    W_V[d, 0] = 0.5
    other = AttentionLayer(layer.W_K, layer.W_Q, W_V)
    x = sphere.uniform_sphere(rng, (2, n), d)
    q = sphere.uniform_sphere(rng, 2, d)
    y = rng.normal(size=(2, n))
    assert np.max(np.abs(other.predict(x, y, q) - layer.predict(x, y, q))) > 1e-3


@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(2, 64), st.integers(0, 2**31 - 1))
def test_softmax_weights_sum_to_one_at_any_scale(w, d, seed):
    rng = np.random.default_rng(seed)
    x = sphere.uniform_sphere(rng, (2, 50), d)
    q = sphere.uniform_sphere(rng, 2, d)
    p = Attention.isotropic(w, d).weights(x, q)
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)


def test_extreme_w_gives_nearest_neighbour_and_uniform_weights():
    rng = np.random.default_rng(1)
    x = sphere.uniform_sphere(rng, (4, 30), 3)
    q = sphere.uniform_sphere(rng, 4, 3)
    p = Attention.isotropic(1e6, 3).weights(x, q)
    nearest = np.argmax(np.einsum("cnd,cd->cn", x, q), axis=1)
    np.testing.assert_allclose(p[np.arange(4), nearest], 1.0)
    np.testing.assert_allclose(Attention.isotropic(0.0, 3).weights(x, q), 1.0 / 30)
    assert np.all(np.isfinite(softmax_weights_from_logits(np.array([1e308, -1e308, 0.0]))))


@given(st.integers(2, 5), st.integers(2, 20), st.integers(0, 2**31 - 1))
def test_prediction_is_invariant_to_permuting_the_context(d, n, seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(d, d))
    x = sphere.uniform_sphere(rng, (1, n), d)
    q = sphere.uniform_sphere(rng, 1, d)
    y = rng.normal(size=(1, n))
    perm = rng.permutation(n)
    for kind in ("softmax", "linear"):
        model = Attention(M, kind)
        np.testing.assert_allclose(
            model.predict(x[:, perm], y[:, perm], q), model.predict(x, y, q), rtol=1e-12, atol=1e-14
        )


@given(st.sampled_from(["affine", "relu", "cosine"]), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_prediction_error_is_invariant_to_rotating_covariates_and_task(name, d, seed):
    """Rotating x, q and the task (u -> R u) with M -> R M R^T leaves every prompt's error unchanged."""
    rng = np.random.default_rng(seed)
    problem = make_problem(name, d, 7, 1.0, 0.3)
    task, x, y, q, fq = problem.sample_prompts(rng, 3)
    R = np.linalg.qr(rng.normal(size=(d, d)))[0]
    M = rng.normal(size=(d, d))
    rotated = type(task)(task.task_class, {**task.params, "u": task.params["u"] @ R.T})
    xr, qr = x @ R.T, q @ R.T
    np.testing.assert_allclose(rotated(xr), task(x), rtol=1e-10, atol=1e-12)
    err = Attention(M).predict(x, y, q) - fq
    err_rot = Attention(R @ M @ R.T).predict(xr, y, qr) - rotated(qr[:, None, :])[:, 0]
    np.testing.assert_allclose(err_rot, err, rtol=1e-9, atol=1e-12)
