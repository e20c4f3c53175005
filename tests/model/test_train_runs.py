"""Runs trained side by side (:func:`lipschitz_icl.model.train.train_runs`) are the lone runs, bit for bit.

A stack of runs shares every NumPy operation, but each run keeps its own Generator (start and prompts, in
the order of a lone run) and its arithmetic is the lone run's on its slice of the stack: the results must be
``train``'s exactly, whatever the stack holds (other problems of the same shape, other seeds, given starts),
with or without the worker thread, and when the memory bound splits the runs into several stacks.
"""

from __future__ import annotations

import numpy as np
import pytest

from lipschitz_icl.model import train as train_module
from lipschitz_icl.model.train import init_params, prompt_stream, run_prompt_stream, train, train_runs
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError

PROTOCOLS = {
    "M-softmax-sgd": {"optimizer": "sgd", "lr": 5.0, "schedule": "step", "average_fraction": 0.5},
    "M-linear-adam": {"attention": "linear", "lr": 0.05, "schedule": "cosine", "average_fraction": 0.3},
    "full-softmax-adam": {"param": "full", "lr": 0.05, "schedule": "step", "final_lr_fraction": 0.25},
    "full-linear-adam": {"param": "full", "attention": "linear", "lr": 0.02, "schedule": "inverse"},
}


def _problems():
    """Problems of one shape (d = 3, n = 12) that differ in class, L and sigma."""
    return [
        make_problem("affine", 3, 12, 1.0, 0.3),
        make_problem("affine", 3, 12, 0.1, 0.5),
        make_problem("relu", 3, 12, 2.0, 0.2),
        make_problem("cosine", 3, 12, 1.0, 0.0),
    ]


def _same(a, b) -> bool:
    return np.array_equal(a.loss_curve, b.loss_curve) and all(
        np.array_equal(a.params[k], b.params[k]) and np.array_equal(a.last_params[k], b.last_params[k])
        for k in a.params
    )


@pytest.mark.parametrize("name", list(PROTOCOLS))
@pytest.mark.parametrize("background", [(0, 10**12), (0, 0)], ids=["worker-thread", "serial"])
def test_a_stack_of_runs_is_the_lone_runs_bit_for_bit(name, background, monkeypatch):
    monkeypatch.setattr(train_module, "BACKGROUND_ENTRIES", background)
    protocol = {**PROTOCOLS[name], "steps": 12, "batch": 16, "progress": False}
    problems = _problems()
    seeds = [np.random.SeedSequence(5, spawn_key=(k,)) for k in range(len(problems))]
    stacked = train_runs(problems, seeds, **protocol)
    for problem, seed, result in zip(problems, seeds, stacked):
        alone = train(problem, seed=seed, **protocol)
        assert _same(result, alone)
        assert result.params["M" if "M" in result.params else "W_K"].ndim == 2  # one run's parameters, not a stack


def test_given_starts_and_a_split_into_several_stacks_change_nothing(monkeypatch):
    problems = _problems()
    inits = [init_params("M", 3, "softmax", np.random.default_rng(20 + k)) for k in range(len(problems))]
    protocol = {"steps": 10, "batch": 8, "lr": 0.1, "progress": False}
    whole = train_runs(problems, [1, 2, 3, 4], inits=inits, **protocol)
    monkeypatch.setattr(train_module, "MAX_BATCH_ELEMENTS", 2 * 8 * 12 * 4)  # two runs per stack
    split = train_runs(problems, [1, 2, 3, 4], inits=inits, **protocol)
    for a, b, problem, seed, init in zip(whole, split, problems, [1, 2, 3, 4], inits):
        assert _same(a, b) and _same(a, train(problem, seed=seed, init=init, **protocol))


@pytest.mark.parametrize("background", [True, False])
def test_the_stacked_stream_is_each_run_s_own_stream(background):
    problems = _problems()
    streams = [prompt_stream(p, np.random.default_rng(k), 8, 3, background=False) for k, p in enumerate(problems)]
    rngs = [np.random.default_rng(k) for k in range(len(problems))]
    stacked = run_prompt_stream(problems, rngs, 8, 3, background=background)
    for x, y, q, fq in stacked:
        for r, stream in enumerate(streams):
            _, *alone = next(stream)
            for got, expected in zip((x[r], y[r], q[r], fq[r]), alone):
                assert np.array_equal(got, expected)


def test_runs_of_different_shapes_or_a_missing_seed_are_refused():
    problems = [make_problem("affine", 3, 12, 1.0, 0.3), make_problem("affine", 3, 13, 1.0, 0.3)]
    with pytest.raises(ParameterError) as info:
        train_runs(problems, [0, 1], steps=2, batch=4)
    assert info.value.name == "problems"
    with pytest.raises(ParameterError) as info:
        train_runs(problems[:1], [0, 1], steps=2, batch=4)
    assert info.value.name == "seeds"


def test_a_diverging_run_names_its_step_and_its_place_in_the_stack():
    problems = [make_problem("affine", 2, 10, 1.0, 0.3)] * 3
    inits = [{"M": np.eye(2), "v": 1.0}, {"M": 1e300 * np.eye(2), "v": 1e300}, {"M": np.eye(2), "v": 1.0}]
    with pytest.raises(FloatingPointError, match=r"step 0 \(loss .*, run 1\)"), np.errstate(all="ignore"):
        train_runs(problems, [0, 1, 2], inits=inits, attention="linear", steps=3, batch=4, progress=False)


@pytest.mark.parametrize("background", [True, False])
def test_a_large_batch_is_drawn_in_two_halves_from_two_streams(background, monkeypatch):
    """At ``batch * n * d >= SPLIT_ENTRIES`` run r's first half-batch is ``sample_prompts(rng_r, batch // 2)`` and
    its second ``sample_prompts`` from a Generator seeded by four raw draws of ``rng_r`` (taken before the first
    batch); two lanes draw them, with the same numbers on a worker thread each or in turn."""
    monkeypatch.setattr(train_module, "SPLIT_ENTRIES", 3 * 12 * 5)
    problems = _problems()[:2]
    rngs = [np.random.default_rng(k) for k in range(2)]
    copies = [np.random.default_rng(k) for k in range(2)]
    seconds = [np.random.default_rng(c.bit_generator.random_raw(4)) for c in copies]
    for x, y, q, fq in run_prompt_stream(problems, rngs, 5, 3, background=background):
        for r, p in enumerate(problems):
            first = p.sample_prompts(copies[r], 2)[1:]
            second = p.sample_prompts(seconds[r], 3)[1:]
            for got, a, b in zip((x[r], y[r], q[r], fq[r]), first, second):
                assert np.array_equal(got, np.concatenate([a, b]))


def test_split_runs_in_a_stack_are_the_lone_runs(monkeypatch):
    monkeypatch.setattr(train_module, "SPLIT_ENTRIES", 16 * 12 * 3)
    problems, seeds = _problems(), [5, 6, 7, 8]
    protocol = {"steps": 6, "batch": 16, "lr": 0.1, "progress": False}
    stacked = train_runs(problems, seeds, **protocol)
    for problem, seed, result in zip(problems, seeds, stacked):
        assert _same(result, train(problem, seed=seed, **protocol))
    monkeypatch.setattr(train_module, "SPLIT_ENTRIES", 10**9)  # one stream per run: other numbers
    assert not _same(stacked[0], train(problems[0], seed=5, **protocol))


def test_every_run_is_held_to_the_work_budget_before_any_run_starts(monkeypatch):
    """train_runs validates each run as train does, its work budget included: a budget that one step of the
    stack's runs exceeds refuses them all (naming the batch), before any start is drawn."""
    problems = _problems()
    per_step = 64 * 12 * 4 * train_module.SECONDS_PER_STEP_COORDINATE
    drawn = []
    monkeypatch.setattr(train_module, "init_params", lambda *args: drawn.append(args))
    with pytest.raises(ParameterError, match=r"'steps'.*work budget"):
        train_runs(problems, range(4), steps=100, batch=64, budget=50 * per_step)
    with pytest.raises(ParameterError, match=r"'batch'.*work budget"):
        train_runs(problems, range(4), steps=1, batch=64, budget=0.5 * per_step)
    assert drawn == []
