"""The trainer's fast prompt path draws exactly what the plain path draws, and runs are bit-reproducible.

``Problem.sample_prompts`` (with or without reused buffers), ``Problem.draw_prompts`` followed by
``finish_prompts``, and :func:`lipschitz_icl.model.train.prompt_stream` (serial, or with the next batch drawn
on a worker thread) must all give the values of the original sampling code, bit for bit: the tasks,
``x = g / np.linalg.norm(g)``, ``q`` likewise, ``y = f(x) + sigma eps``, ``f(q)``, drawn in that order from
one Generator.  :func:`_reference_prompts` is that original code, written out here independently of the
package (draws and task formulas), so a change of the random stream or of the rounding fails here.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lipschitz_icl import sphere
from lipschitz_icl.model import train as train_module
from lipschitz_icl.model.train import Adam, init_params, loss_and_grad, prompt_stream, train
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError

CASES = [
    ("affine", 5, 200, 0.5, {}),
    ("affine", 2, 7, 0.0, {}),
    ("relu", 3, 40, 0.3, {}),
    ("cosine", 9, 11, 0.2, {}),
    ("lowrank-quadratic", 6, 13, 0.4, {"rank": 2}),
    ("lowrank-cosine", 4, 9, 0.1, {"rank": 3}),
]


def _reference_sphere(rng, size, d):
    size = (size,) if np.isscalar(size) else tuple(size)
    g = rng.standard_normal(size + (d,))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def _reference_prompts(problem, rng, batch):
    """The sampling code before the fast path: returns ``x, y, q, f(q)``."""
    tc, L = problem.task_class, problem.L
    link = tc.name.split("-", 1)[1] if tc.name.startswith("lowrank") else tc.name
    u = _reference_sphere(rng, batch, tc.rank)
    names = {"affine": ("l", "b"), "quadratic": ("l", "b"), "relu": ("l1", "l2", "b")}.get(link, ())
    c = {name: rng.uniform(-L, L, batch) for name in names}
    if link == "cosine":
        c["phi"] = rng.uniform(0.0, 2.0 * np.pi, batch)
    if tc.B is not None:
        u = u @ tc.B.T

    def f(points):
        s = np.einsum("b...d,bd->b...", points, u)
        col = {key: value.reshape((-1,) + (1,) * (s.ndim - 1)) for key, value in c.items()}
        if link == "affine":
            return col["l"] * s + col["b"]
        if link == "quadratic":
            return col["l"] * s * s + col["b"]
        if link == "relu":
            return col["l1"] * np.maximum(s, 0.0) + col["l2"] * np.maximum(-s, 0.0) + col["b"]
        k = tc.frequency
        return (L / k) * np.cos(k * s + col["phi"])

    x = _reference_sphere(rng, (batch, problem.n), problem.d)
    q = _reference_sphere(rng, batch, problem.d)
    y = f(x) + problem.sigma * rng.standard_normal((batch, problem.n))
    return x, y, q, f(q[:, None, :])[:, 0]


def _problem(task, d, n, sigma, kwargs):
    return make_problem(task, d, n, 1.3, sigma, **kwargs)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 8, 12])
def test_uniform_sphere_is_the_normalised_gaussian_bit_for_bit(d):
    for size in [(), 7, (300, 20), (2, 3, 4)]:
        expected = _reference_sphere(np.random.default_rng(d), size, d)
        got = sphere.uniform_sphere(np.random.default_rng(d), size, d)
        assert got.shape == expected.shape and np.array_equal(got, expected)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_sampling_path_equals_the_original_code(case):
    problem = _problem(*case)
    batch, steps = 16, 3
    rngs = [np.random.default_rng(11) for _ in range(5)]
    buffers = problem.prompt_buffers(batch)
    streams = [
        prompt_stream(problem, rngs[3], batch, steps, background=False),
        prompt_stream(problem, rngs[4], batch, steps, background=True),
    ]
    for _ in range(steps):
        expected = _reference_prompts(problem, rngs[0], batch)
        fresh = problem.sample_prompts(rngs[1], batch)[1:]
        reused = problem.sample_prompts(rngs[2], batch, out=buffers)[1:]
        for got in (fresh, reused, next(streams[0])[1:], next(streams[1])[1:]):
            for a, b in zip(got, expected):
                assert a.shape == b.shape and np.array_equal(a, b)
    for stream in streams:  # exactly `steps` batches, nothing more drawn
        assert next(stream, None) is None
    states = {str(rng.bit_generator.state) for rng in rngs}
    assert len(states) == 1


def test_buffers_of_another_shape_are_refused():
    problem = make_problem("affine", 3, 10, 1.0, 0.5)
    with pytest.raises(ParameterError) as info:
        problem.sample_prompts(np.random.default_rng(0), 4, out=problem.prompt_buffers(5))
    assert info.value.name == "out"


def _reference_train(problem, param, steps, batch, lr, seed):
    """The training loop on the plain path: fresh prompts from ``sample_prompts`` every step, Adam."""
    rng = np.random.default_rng(seed)
    params = init_params(param, problem.d, "softmax", rng, train_module.DEFAULT_INIT_SCALE[param])
    opt, curve = Adam(), []
    for _ in range(steps):
        _, x, y, q, fq = problem.sample_prompts(rng, batch)
        loss, grads = loss_and_grad(param, params, x, y, q, fq)
        curve.append(loss)
        opt.step(params, grads, lr)
    return params, np.array(curve)


@pytest.mark.parametrize("param", ["M", "full"])
@pytest.mark.parametrize("background", [(0, 10**12), (0, 0)], ids=["worker-thread", "serial"])
def test_runs_are_bit_identical_and_equal_the_plain_loop(param, background, monkeypatch):
    monkeypatch.setattr(train_module, "BACKGROUND_ENTRIES", background)
    problem = make_problem("affine", 5, 30, 1.0, 0.5)
    kwargs = {"param": param, "steps": 15, "batch": 32, "lr": 0.02, "seed": 7, "progress": False}
    first, again = train(problem, **kwargs), train(problem, **kwargs)
    params, curve = _reference_train(problem, param, 15, 32, 0.02, 7)
    for result in (first, again):
        np.testing.assert_array_equal(result.loss_curve, curve)
        for name in params:
            np.testing.assert_array_equal(result.params[name], params[name])
    assert not np.array_equal(train(problem, **dict(kwargs, seed=8)).loss_curve, curve)


def test_an_error_in_training_stops_the_worker_thread(monkeypatch):
    """Divergence raises from the loop; the worker (drawing the next batch) is joined, not left behind."""
    calls = []

    def diverging(*args, **kwargs):
        calls.append(1)
        loss, grads = loss_and_grad(*args, **kwargs)
        return (np.nan if len(calls) == 4 else loss), grads

    monkeypatch.setattr(train_module, "BACKGROUND_ENTRIES", (0, 10**12))
    monkeypatch.setattr(train_module, "loss_and_grad", diverging)
    before = threading.active_count()
    with pytest.raises(FloatingPointError, match="step 3"):
        train(make_problem("affine", 5, 20, 1.0, 0.5), steps=50, batch=64, progress=False)
    assert len(calls) == 4 and threading.active_count() == before


def test_an_error_on_the_worker_thread_is_raised_in_the_loop(monkeypatch):
    from lipschitz_icl.problem import Problem

    real, calls = Problem.draw_prompts, []

    def failing(self, rng, batch, out):
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError("no room for batch 2")
        return real(self, rng, batch, out)

    monkeypatch.setattr(train_module, "BACKGROUND_ENTRIES", (0, 10**12))
    monkeypatch.setattr(Problem, "draw_prompts", failing)
    before = threading.active_count()
    with pytest.raises(MemoryError, match="batch 2"):
        train(make_problem("affine", 5, 20, 1.0, 0.5), steps=10, batch=16, progress=False)
    assert len(calls) == 3 and threading.active_count() == before


def test_the_documented_schedules_are_the_code_s():
    """train's docstring lists exactly the schedules the code accepts (it once listed three of four)."""
    import re

    from lipschitz_icl.model import train as train_module

    documented = re.search(r"schedule : \{([^}]*)\}", train_module.train.__doc__).group(1)
    assert sorted(name.strip().strip('"') for name in documented.split(",")) == sorted(train_module.SCHEDULES)
