"""Analytic gradients of the trainer against central finite differences (and torch autograd if present),
and the mechanics of the training loop (determinism, iterate averaging, argument checks, progress).

Property: for random shapes ``(d, n, batch)``, random parameters and random prompts, every partial
derivative of the batch ICL loss returned by :func:`lipschitz_icl.model.train.loss_and_grad` agrees with the
central difference ``(loss(theta + h e) - loss(theta - h e)) / (2 h)``.  The central difference has
truncation error ``O(h^2) ~ 1e-10`` and rounding error ``~ eps * loss / h ~ 1e-10`` at ``h = 1e-5``, so
a tolerance of ``1e-6 (1 + |grad|)`` separates a correct gradient from a wrong one (a missing factor or
term changes entries by ``O(|grad|)``); :func:`test_finite_differences_detect_a_wrong_gradient` shows it.
"""

from __future__ import annotations

import io
import itertools
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lipschitz_icl.model.attention import Attention, AttentionLayer
from lipschitz_icl.model.train import LONG_RUN_PROMPTS, effective_M, init_params, loss_and_grad, predict, train
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError

TASKS = ("affine", "relu", "cosine", "lowrank-linear", "lowrank-affine", "lowrank-quadratic", "lowrank-cosine")
H = 1e-5
RTOL = 1e-6


def _prompts(task, d, n, batch, seed):
    kwargs = {"rank": max(1, d - 1)} if task.startswith("lowrank") else {}
    problem = make_problem(task, d, n, 1.0, 0.5, **kwargs)
    rng = np.random.default_rng(seed)
    return problem.sample_prompts(rng, batch)[1:], rng


def _random_params(param, d, kind, rng, scale):
    params = init_params(param, d, kind, rng, scale)
    if param == "full":
        params["W_V"][d] = scale * rng.standard_normal(d + 1)  # a generic value row, all entries live
    elif kind == "linear":
        params["v"] = np.asarray(rng.normal(1.0, 0.5))
    return params


def _finite_difference(param, params, data, kind):
    out = {}
    for name, value in params.items():
        grad = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][idx] += H
            minus[name][idx] -= H
            grad[idx] = (
                loss_and_grad(param, plus, *data, kind=kind)[0] - loss_and_grad(param, minus, *data, kind=kind)[0]
            ) / (2 * H)
        out[name] = grad
    return out


def _assert_close(analytic, numeric):
    assert set(analytic) == set(numeric)
    for name in numeric:
        a, b = np.asarray(analytic[name]), numeric[name]
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * (1.0 + np.max(np.abs(b))), err_msg=name)


cases = st.tuples(
    st.sampled_from(TASKS),
    st.integers(2, 4),
    st.integers(1, 6),
    st.integers(1, 5),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.3, 1.0, 2.0]),
)


@pytest.mark.parametrize("param", ["M", "full"])
@pytest.mark.parametrize("kind", ["softmax", "linear"])
@settings(max_examples=12, deadline=None)
@given(case=cases)
def test_gradient_matches_central_differences(param, kind, case):
    task, d, n, batch, seed, scale = case
    data, rng = _prompts(task, d, n, batch, seed)
    params = _random_params(param, d, kind, rng, scale)
    loss, grads = loss_and_grad(param, params, *data, kind=kind)
    assert np.isfinite(loss) and loss >= 0
    _assert_close(grads, _finite_difference(param, params, data, kind))


@pytest.mark.parametrize("param", ["M", "full"])
@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_predictions_follow_the_attention_module(param, kind):
    """The trainer's forward pass is the predictor of :mod:`lipschitz_icl.model.attention` (same conventions)."""
    data, rng = _prompts("relu", 3, 7, 4, 11)
    x, y, q, _ = data
    params = _random_params(param, 3, kind, rng, 1.0)
    if param == "M":
        reference = Attention(params["M"], kind, float(params.get("v", 1.0))).predict(x, y, q)
    else:
        reference = AttentionLayer(params["W_K"], params["W_Q"], params["W_V"], kind).predict(x, y, q)
    np.testing.assert_allclose(predict(param, params, x, y, q, kind), reference, rtol=1e-12, atol=1e-12)


def test_finite_differences_detect_a_wrong_gradient():
    """The comparison can fail: a gradient off by 1% in one entry, or transposed, is rejected."""
    data, rng = _prompts("affine", 3, 5, 4, 3)
    params = _random_params("M", 3, "softmax", rng, 1.0)
    _, grads = loss_and_grad("M", params, *data, kind="softmax")
    numeric = _finite_difference("M", params, data, "softmax")
    _assert_close(grads, numeric)
    scaled = {"M": grads["M"].copy()}
    i = np.unravel_index(np.argmax(np.abs(grads["M"])), grads["M"].shape)
    scaled["M"][i] *= 1.01
    with pytest.raises(AssertionError):
        _assert_close(scaled, numeric)
    with pytest.raises(AssertionError):
        _assert_close({"M": grads["M"].T}, numeric)


def test_last_column_of_W_Q_gets_no_gradient():
    """``z_q = [q; 0]``: ``W_Q[:, d]`` never reaches the prediction, so its gradient is exactly zero
    (why :func:`lipschitz_icl.model.geometry.kq_label_coupling` leaves ``(W_K^T W_Q)[:, d]`` out)."""
    data, rng = _prompts("relu", 3, 6, 5, 8)
    for kind in ("softmax", "linear"):
        params = _random_params("full", 3, kind, rng, 1.0)
        _, grads = loss_and_grad("full", params, *data, kind=kind)
        assert np.all(grads["W_Q"][:, -1] == 0.0)
        assert np.all(grads["W_V"][:-1] == 0.0)
        assert np.any(grads["W_V"][-1] != 0.0)


@pytest.mark.parametrize("param", ["M", "full"])
@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_gradient_matches_torch_autograd(param, kind):
    torch = pytest.importorskip("torch")
    data, rng = _prompts("lowrank-affine", 3, 6, 5, 21)
    params = _random_params(param, 3, kind, rng, 1.0)
    _, grads = loss_and_grad(param, params, *data, kind=kind)
    x, y, q, fq = (torch.tensor(a, dtype=torch.float64) for a in data)
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    if param == "M":
        s = torch.einsum("bnd,de,be->bn", x, tp["M"], q)
        if kind == "softmax":
            yhat = (torch.softmax(s, dim=-1) * y).sum(-1)
        else:
            yhat = tp["v"] * (s * y).sum(-1) / x.shape[1]
    else:
        z = torch.cat([x, y[..., None]], dim=-1)
        zq = torch.cat([q, torch.zeros(q.shape[0], 1, dtype=torch.float64)], dim=-1)
        s = torch.einsum("bnk,jk,jl,bl->bn", z, tp["W_K"], tp["W_Q"], zq)
        a = torch.softmax(s, dim=-1) if kind == "softmax" else s / x.shape[1]
        yhat = (a * (z @ tp["W_V"][-1])).sum(-1)
    ((yhat - fq) ** 2).mean().backward()
    for name in params:
        np.testing.assert_allclose(grads[name], tp[name].grad.numpy(), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- trainer mechanics
# (the loop around the gradients: determinism, iterate averaging, argument checks, progress line)

SMALL = {"steps": 12, "batch": 8, "lr": 0.05}


def _small_problem():
    return make_problem("relu", 3, 6, 1.0, 0.3)


@pytest.mark.parametrize("param", ["M", "full"])
def test_training_is_reproducible_from_its_seed(param):
    problem = _small_problem()
    a = train(problem, param=param, seed=5, **SMALL)
    b = train(problem, param=param, seed=np.random.SeedSequence(5), **SMALL)
    c = train(problem, param=param, seed=6, **SMALL)
    np.testing.assert_array_equal(a.loss_curve, b.loss_curve)
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert not np.array_equal(a.loss_curve, c.loss_curve)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_params_average_the_last_iterates(optimizer):
    """With a constant rate a run of ``t`` steps is a prefix of a longer one (same seed, same batches),
    so the averaged ``params`` must equal the mean of the final iterates of runs of ``T-m+1 .. T`` steps."""
    problem = _small_problem()
    T, fraction = 10, 0.3  # m = ceil(0.3 * 10) = 3 iterates
    result = train(problem, optimizer=optimizer, steps=T, batch=8, lr=0.05, average_fraction=fraction, seed=2)
    iterates = [
        train(problem, optimizer=optimizer, steps=t, batch=8, lr=0.05, seed=2).last_params["M"] for t in (8, 9, 10)
    ]
    np.testing.assert_allclose(result.params["M"], np.mean(iterates, axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(result.last_params["M"], iterates[-1])
    assert result.steps == T and result.loss_curve.shape == (T,) and result.seconds > 0


def test_effective_M_folds_the_value_weight_only_for_linear_attention():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 3))
    assert np.array_equal(effective_M("M", {"M": M}, "softmax"), M)
    np.testing.assert_allclose(effective_M("M", {"M": M, "v": np.asarray(2.0)}, "linear"), 2.0 * M)
    layer = init_params("full", 3, "softmax", rng)
    A_xx = (layer["W_K"].T @ layer["W_Q"])[:3, :3]
    np.testing.assert_allclose(effective_M("full", layer, "softmax"), A_xx)
    np.testing.assert_allclose(effective_M("full", layer, "linear"), layer["W_V"][3, 3] * A_xx)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"param": "W"}, "param"),
        ({"attention": "relu"}, "attention"),
        ({"optimizer": "lbfgs"}, "optimizer"),
        ({"steps": 0}, "steps"),
        ({"batch": 0}, "batch"),
        ({"lr": 0.0}, "lr"),
        ({"average_fraction": 1.0}, "average_fraction"),
        ({"schedule": "linear"}, "schedule"),
        ({"seed": -1}, "rng"),
        ({"init": {"M": np.zeros((2, 2))}}, "init['M']"),
        ({"init": {"W": 1}}, "init"),
        ({"betas": (0.9,)}, "betas"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    args = dict(SMALL, **kwargs)
    with pytest.raises(ParameterError) as info:
        train(_small_problem(), **args)
    assert info.value.name == name


def test_progress_bar_only_when_asked_or_on_a_terminal_for_a_long_run(capsys, monkeypatch):
    problem = _small_problem()
    train(problem, progress=True, **SMALL)
    err = capsys.readouterr().err
    assert "train" in err and "12/12" in err and "loss=" in err and err.endswith("\n")
    train(problem, **SMALL)  # stderr is captured: not a terminal
    assert capsys.readouterr().err == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    train(problem, **SMALL)  # a terminal, but a short run
    assert terminal.getvalue() == ""
    train(make_problem("affine", 2, 1, 1.0, 0.3), steps=2, batch=LONG_RUN_PROMPTS // 2, lr=0.05)
    assert "2/2" in terminal.getvalue()  # a terminal and steps * batch >= 200_000


def test_learning_rate_schedules_reach_their_stated_end_points():
    from lipschitz_icl.model.train import _learning_rate

    lr, T, f, switch = 0.1, 100, 0.2, 60
    assert _learning_rate(lr, "constant", 99, T, f, switch) == lr
    assert _learning_rate(lr, "cosine", 0, T, f, switch) == pytest.approx(lr)
    assert _learning_rate(lr, "cosine", T, T, f, switch) == pytest.approx(f * lr)
    assert _learning_rate(lr, "step", switch - 1, T, f, switch) == lr
    assert _learning_rate(lr, "step", switch, T, f, switch) == pytest.approx(f * lr)
    assert _learning_rate(lr, "inverse", 0, T, f, switch) == pytest.approx(lr)
    assert _learning_rate(lr, "inverse", T, T, f, switch) == pytest.approx(f * lr)
    values = [_learning_rate(lr, "inverse", t, T, f, switch) for t in range(T)]
    assert all(a > b for a, b in itertools.pairwise(values))
