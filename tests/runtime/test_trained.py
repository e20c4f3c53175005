"""The store of trained layers (lipschitz_icl.runtime.trained): keyed by the training design, read back bit for bit,
shared by every caller that names the same runs, trained once under concurrent requests."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from lipschitz_icl.estimators import pretraining
from lipschitz_icl.problem import make_problem
from lipschitz_icl.runtime import cache, trained

PROTOCOL = {"param": "full", "optimizer": "adam", "lr": 0.05, "steps": 8, "batch": 16, "average_fraction": 0.5}


class CountingTrainer:
    """pretraining.train_all, counting the runs it trains."""

    def __init__(self):
        self.runs = 0
        self.real = pretraining.train_all
        self.lock = threading.Lock()

    def __call__(self, runs, **kwargs):
        runs = list(runs)
        with self.lock:
            self.runs += len(runs)
        return self.real(runs, **kwargs)


@pytest.fixture
def counter(monkeypatch):
    counting = CountingTrainer()
    monkeypatch.setattr(pretraining, "train_all", counting)
    return counting


def _problem():
    return make_problem("affine", 2, 10, 1.0, 0.3)


def _equal(a, b) -> bool:
    (start_a, ra), (start_b, rb) = a, b
    return (
        all(np.array_equal(start_a[k], start_b[k]) for k in start_a)
        and all(np.array_equal(ra.params[k], rb.params[k]) for k in ra.params)
        and all(np.array_equal(ra.last_params[k], rb.last_params[k]) for k in ra.params)
        and np.array_equal(ra.loss_curve, rb.loss_curve)
        and (ra.steps, ra.param, ra.kind, ra.d) == (rb.steps, rb.param, rb.kind, rb.d)
    )


def test_a_stored_run_is_the_trained_run_bit_for_bit_and_is_not_trained_again(cache_root, counter):
    direct = pretraining.independent_runs(_problem(), np.random.SeedSequence(4), 3, init_scale=0.5, **PROTOCOL)
    counter.runs = 0
    first = trained.independent_runs(_problem(), np.random.SeedSequence(4), 3, init_scale=0.5, **PROTOCOL)
    again = trained.independent_runs(_problem(), np.random.SeedSequence(4), 3, init_scale=0.5, **PROTOCOL)
    assert counter.runs == 3  # trained once, read the second time
    assert all(_equal(a, b) and _equal(a, c) for a, b, c in zip(direct, first, again))
    assert len(list((cache_root / trained.NAMESPACE).rglob("*.json"))) == 3


def test_the_key_is_the_whole_training_design(cache_root, counter):
    seed = np.random.SeedSequence(4)
    trained.independent_runs(_problem(), seed, 2, init_scale=0.5, **PROTOCOL)
    # the same runs asked for again (defaults written out, keywords in another order): read
    same = {**{k: PROTOCOL[k] for k in reversed(list(PROTOCOL))}, "schedule": "constant", "attention": "softmax"}
    trained.independent_runs(_problem(), np.random.SeedSequence(4), 2, init_scale=0.5, **same)
    assert counter.runs == 2
    # another stream, problem, start scale or protocol: trained
    trained.independent_runs(_problem(), np.random.SeedSequence(5), 2, init_scale=0.5, **PROTOCOL)
    trained.independent_runs(make_problem("affine", 2, 10, 1.0, 0.4), np.random.SeedSequence(4), 2, **PROTOCOL)
    trained.independent_runs(_problem(), np.random.SeedSequence(4), 2, init_scale=0.6, **PROTOCOL)
    trained.independent_runs(_problem(), np.random.SeedSequence(4), 2, init_scale=0.5, **{**PROTOCOL, "lr": 0.04})
    assert counter.runs == 10
    # a third run of the same setting: the first two are read, only the new one is trained
    trained.independent_runs(_problem(), np.random.SeedSequence(4), 3, init_scale=0.5, **PROTOCOL)
    assert counter.runs == 11


def test_concurrent_requests_train_each_run_once(cache_root, counter):
    """Two workers asking for the same runs at once: one trains, the other waits for its lock and reads."""
    results = [None, None]

    def ask(slot):
        results[slot] = trained.independent_runs(_problem(), np.random.SeedSequence(9), 3, init_scale=0.5, **PROTOCOL)

    workers = [threading.Thread(target=ask, args=(slot,)) for slot in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert counter.runs == 3
    assert all(_equal(a, b) for a, b in zip(*results))


def test_a_stored_run_that_does_not_fit_its_design_is_trained_again(cache_root, counter):
    trained.independent_runs(_problem(), np.random.SeedSequence(4), 1, init_scale=0.5, **PROTOCOL)
    (path,) = (cache_root / trained.NAMESPACE).rglob("*.json")
    entry = json.loads(path.read_text())
    payload = json.loads(entry["payload"])
    payload["params"]["W_K"] = [[1.0, 2.0], [3.0, 4.0]]  # the wrong shape for d = 2 (3 x 3)
    entry["payload"] = json.dumps(payload)  # (checksum and MAC now fail as well: either way, not trusted)
    path.write_text(json.dumps(entry))
    again = trained.independent_runs(_problem(), np.random.SeedSequence(4), 1, init_scale=0.5, **PROTOCOL)
    assert counter.runs == 2 and again[0][1].params["W_K"].shape == (3, 3)


def test_without_the_cache_every_request_trains(cache_root, counter):
    with cache.disabled():
        for _ in range(2):
            trained.independent_runs(_problem(), np.random.SeedSequence(4), 2, init_scale=0.5, **PROTOCOL)
    assert counter.runs == 4
    assert not (cache_root / trained.NAMESPACE).exists()


def test_trained_runs_carries_the_starts_and_results():
    runs = trained.trained_runs(_problem(), np.random.SeedSequence(4), 2, init_scale=0.5, **PROTOCOL)
    assert len(runs.starts) == len(runs.results) == 2 and len(runs.scales) == 2
