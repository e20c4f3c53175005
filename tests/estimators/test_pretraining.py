"""The pretraining protocol's helpers (lipschitz_icl.estimators.pretraining): t-limits of a mean over runs, the
held-out error curve of pretraining in segments, and runs of several settings trained side by side."""

import numpy as np
import pytest

from lipschitz_icl.estimators.pretraining import (
    mean_interval,
    mean_limits,
    pretraining_curve,
    pretraining_curves,
    setting_runs,
    train_all,
)
from lipschitz_icl.model.train import init_params, train
from lipschitz_icl.problem import make_problem


def test_mean_limits_are_one_sided_t_limits():
    mean, low, high = mean_limits([1.0, 2.0, 3.0, 4.0], 0.99)
    half = 4.540702858698419 * np.std([1.0, 2.0, 3.0, 4.0], ddof=1) / 2  # t_{0.99, 3} sd / sqrt(4)
    assert mean == 2.5 and low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)


def test_mean_interval_is_the_two_sided_t_interval():
    mean, half = mean_interval([1.0, 2.0, 3.0, 4.0], 0.975)
    assert mean == 2.5 and half == pytest.approx(3.182446305284263 * np.std([1.0, 2.0, 3.0, 4.0], ddof=1) / 2)


SGD = {"optimizer": "sgd", "lr": 12.5, "batch": 128, "schedule": "constant"}


def test_pretraining_curve_records_a_falling_error_on_common_test_contexts():
    problem = make_problem("affine", 2, 20, 1.0, 0.3)
    steps, errors, ses, Ms, _ = pretraining_curve(
        problem,
        np.random.SeedSequence(3),
        kind="softmax",
        protocol=SGD,
        init_scale=1.0,
        segments=2,
        segment_steps=40,
        test_contexts=500,
    )
    assert steps == [0, 40, 80] and len(Ms) == 3
    assert errors[-1] + 4 * ses[-1] < errors[0] - 4 * ses[0]


def _same_run(a, b) -> bool:
    (start_a, a), (start_b, b) = a, b
    starts = [start_a] if not isinstance(start_a, dict) else list(start_a.values())
    starts_b = [start_b] if not isinstance(start_b, dict) else list(start_b.values())
    return all(np.array_equal(x, y) for x, y in zip(starts, starts_b)) and all(
        np.array_equal(a.params[k], b.params[k]) and np.array_equal(a.loss_curve, b.loss_curve) for k in a.params
    )


@pytest.mark.parametrize("param", ["M", "full"])
def test_settings_trained_together_are_the_independent_runs_of_each(param):
    """train_all over the runs of several settings (one shape stacked, another apart) equals independent_runs of
    each setting: run k from child k of the setting's seed, start and prompts from its two children."""
    settings = [
        (make_problem("affine", 2, 10, 1.0, 0.3), np.random.SeedSequence(1), 2),
        (make_problem("affine", 2, 10, 0.1, 0.3), np.random.SeedSequence(2), 1),
        (make_problem("relu", 3, 15, 1.0, 0.3), np.random.SeedSequence(3), 2),
    ]
    protocol = {"param": param, "steps": 6, "batch": 8, "lr": 0.05, "progress": False}
    together = train_all([r for p, s, k in settings for r in setting_runs(p, s, k)], init_scale=0.5, **protocol)
    alone = [r for p, s, k in settings for r in _lone_runs(p, s, k, protocol)]
    assert len(together) == len(alone) == 5
    assert all(_same_run(a, b) for a, b in zip(together, alone))
    assert all(r.d == p.d for (_, r), p in zip(together, [settings[0][0]] * 3 + [settings[2][0]] * 2))


def _lone_runs(problem, seed, runs, protocol):
    """The runs as independent_runs made them one by one (start from one grandchild, prompts from the other)."""
    out = []
    for child in np.random.SeedSequence(seed.entropy).spawn(runs):
        init_seq, data_seq = child.spawn(2)
        start = init_params(protocol["param"], problem.d, "softmax", np.random.default_rng(init_seq), 0.5)
        result = train(problem, init={k: v.copy() for k, v in start.items()}, seed=data_seq, **protocol)
        out.append((start["M"] if protocol["param"] == "M" else start, result))
    return out


def test_curves_trained_together_are_each_curve_alone():
    problems = [make_problem(task, 2, 20, 1.0, 0.3) for task in ("affine", "relu", "cosine")]
    schedule = {"kind": "softmax", "protocol": SGD, "init_scale": 1.0, "segments": 2, "segment_steps": 5}
    together = pretraining_curves(problems, [np.random.SeedSequence(k) for k in range(3)], test_contexts=50, **schedule)
    for k, problem in enumerate(problems):
        alone = pretraining_curve(problem, np.random.SeedSequence(k), test_contexts=50, **schedule)
        steps, errors, ses, Ms, final = together[k]
        assert steps == alone[0] and errors == alone[1] and ses == alone[2]
        assert all(np.array_equal(a, b) for a, b in zip(Ms, alone[3]))
        assert np.array_equal(final["M"], alone[4]["M"])
