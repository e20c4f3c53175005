"""Probe families of Theorem 3.5 (registry group thm35): Lipschitz constants, formulas, and the
shared-context estimator."""

import numpy as np
import pytest

from lipschitz_icl import sphere
from lipschitz_icl.estimators.probes import (
    CosineProbe,
    DistanceProbe,
    TriangleProbe,
    noise_terms,
    probe_errors_along_n,
    probe_log_ratios,
    probe_suite,
    probe_terms,
    triangle_wave,
)
from lipschitz_icl.loss.estimators import naive_loss
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import Problem, make_problem
from lipschitz_icl.validation import ParameterError

D, L = 4, 1.7
SUITE = probe_suite(D, L, cosine_frequencies=(1.0, 5.0), triangle_frequencies=(1.0, 5.0), centres=(1, 4))


def test_suite_names_and_parameters():
    assert [p.name for p in SUITE] == [
        "affine",
        "relu",
        "cosine-1",
        "cosine-5",
        "triangle-1",
        "triangle-5",
        "distance-1",
        "distance-4",
    ]
    assert all(p.d == D and p.L == L for p in SUITE)
    with pytest.raises(ParameterError):
        probe_suite(1, L)
    with pytest.raises(ParameterError):
        probe_suite(3, -1.0)


@pytest.mark.parametrize("probe", SUITE, ids=lambda p: p.name)
def test_probe_tasks_respect_their_lipschitz_constant_and_attain_it(probe):
    rng = np.random.default_rng(21)
    tasks, pairs = 300, 400
    task = probe.sample(rng, tasks)
    lip = np.asarray(task.lipschitz)
    assert lip.shape == (tasks,) and np.all(lip <= L + 1e-12)
    x = sphere.uniform_sphere(rng, (tasks, pairs), D)
    far = sphere.uniform_sphere(rng, (tasks, pairs), D)
    near = x + 1e-5 * rng.normal(size=x.shape)
    near /= np.linalg.norm(near, axis=-1, keepdims=True)
    for y in (far, near):
        slopes = np.abs(task(x) - task(y)) / np.linalg.norm(x - y, axis=-1)
        assert np.all(slopes <= lip[:, None] * (1 + 1e-6) + 1e-12)
    # the constant is attained locally by some task and point (not loose by a factor)
    assert np.max(slopes / np.maximum(lip[:, None], 1e-12)) > 0.9


def test_a_probe_with_a_larger_constant_breaks_the_bound():
    """The Lipschitz test has power: a cosine of amplitude 3L/k exceeds slope L somewhere."""
    rng = np.random.default_rng(22)
    task = CosineProbe(D, 3 * L).sample(rng, 200)
    x = sphere.uniform_sphere(rng, (200, 200), D)
    near = x + 1e-5 * rng.normal(size=x.shape)
    near /= np.linalg.norm(near, axis=-1, keepdims=True)
    slopes = np.abs(task(x) - task(near)) / np.linalg.norm(x - near, axis=-1)
    assert np.max(slopes) > 1.5 * L


def test_triangle_wave_formula():
    s = np.linspace(-20, 20, 40001)
    T = triangle_wave(s)
    assert np.allclose(triangle_wave(s + 2 * np.pi), T, atol=1e-9)  # period 2 pi
    assert T.min() >= -np.pi / 2 - 1e-12 and T.max() <= np.pi / 2 + 1e-12
    assert np.allclose(np.abs(np.diff(T) / np.diff(s))[np.diff(np.floor(s / np.pi)) == 0], 1.0)
    assert triangle_wave(0.0) == pytest.approx(-np.pi / 2) and triangle_wave(np.pi) == pytest.approx(np.pi / 2)


def test_probe_formulas_at_chosen_points():
    rng = np.random.default_rng(23)
    tri = TriangleProbe(3, 2.0, 3.0).sample(rng, 1)
    u, phi = tri.params["u"][0], tri.params["phi"][0]
    x = sphere.uniform_sphere(rng, (1, 5), 3)
    expected = (2.0 / 3.0) * triangle_wave(3.0 * x[0] @ u + phi)
    assert np.allclose(tri(x)[0], expected)
    dist = DistanceProbe(3, 2.0, 2).sample(rng, 1)
    s = dist.params["s"][0]
    expected = 2.0 * (np.min(np.linalg.norm(x[0][:, None, :] - s[None], axis=-1), axis=1) - 1.0)
    assert np.allclose(dist(x)[0], expected)
    assert dist(s[None, :1, :])[0, 0] == pytest.approx(-2.0, abs=1e-6)  # zero distance at a centre


def test_probe_terms_agree_with_the_naive_estimator_and_share_contexts():
    """probe_terms (noise integrated out) and naive_loss (everything sampled) estimate the same loss;
    naive_loss takes a probe as the task class of a Problem."""
    d, n, sigma, w = 3, 30, 0.4, 6.0
    probes = probe_suite(d, 1.0, cosine_frequencies=(2.0,), triangle_frequencies=(2.0,), centres=(3,))
    model = Attention(w * np.eye(d))
    terms = probe_terms(probes, [model, Attention(2 * w * np.eye(d))], n, sigma, 20000, 5)
    for probe in probes:
        (b, nz), (b2, _nz2) = terms[probe.name]
        ours = b + nz
        ref = naive_loss(Problem(probe, n, sigma), model, 20000, np.random.default_rng(6)).loss
        assert abs(ours.mean() - ref.value) < 4.5 * np.hypot(ours.std() / np.sqrt(ours.size), ref.standard_error)
        assert np.all(b2 >= 0) and not np.array_equal(b, b2)  # the second model is evaluated on its own
    noise = [terms[p.name][0][1] for p in probes]
    assert all(np.array_equal(noise[0], other) for other in noise[1:])  # shared covariates and queries
    # the library's own affine class through the same estimator
    ref = naive_loss(make_problem("affine", d, n, 1.0, sigma), model, 20000, np.random.default_rng(7)).loss
    ours = terms["affine"][0][0] + terms["affine"][0][1]
    assert abs(ours.mean() - ref.value) < 4.5 * np.hypot(ours.std() / np.sqrt(ours.size), ref.standard_error)


def test_envelope_bounds_every_context_and_has_power():
    d, n, sigma = 3, 50, 0.3
    models = [Attention(w * np.eye(d)) for w in (2.0, 20.0)]
    terms, env = probe_terms(probe_suite(d, 1.0), models, n, sigma, 3000, 8, envelope=True)
    for parts in terms.values():
        for (bias, _), e in zip(parts, env):
            assert np.all(bias <= e["jensen"] + 1e-12)
    # a 3L-Lipschitz task is not held by the L envelope in every context
    loud, env = probe_terms([CosineProbe(d, 3.0, 4.0)], models, n, sigma, 3000, 9, envelope=True)
    assert np.any(loud["cosine-4"][0][0] > env[0]["jensen"])


def test_centroid_envelope_holds_for_affine_tasks_only():
    """``bias_c <= L^2 ||sum p_i x_i - q||^2`` in every context for affine tasks (|a| <= L), and not for a
    curved L-Lipschitz probe; it is never above the Jensen envelope (the centre of mass is a mean)."""
    d, n, sigma = 3, 50, 0.3
    models = [Attention(w * np.eye(d)) for w in (2.0, 20.0)]
    terms, env = probe_terms(probe_suite(d, 1.0), models, n, sigma, 3000, 8, envelope=True)
    for (bias, _), e in zip(terms["affine"], env):
        assert np.all(bias <= e["centroid"] + 1e-12)
        assert np.all(e["centroid"] <= e["jensen"] + 1e-12)
    assert any(np.any(bias > e["centroid"]) for (bias, _), e in zip(terms["cosine-4"], env))


def test_noise_terms_are_the_noise_part_of_probe_terms():
    """Same generator state and one chunk: the same covariates and queries, so the same noise part."""
    d, n, sigma = 3, 40, 0.5
    models = [Attention(w * np.eye(d)) for w in (3.0, 9.0)]
    terms = probe_terms(probe_suite(d, 1.0), models, n, sigma, 500, np.random.default_rng(11))
    noise = noise_terms(models, d, n, sigma, 500, np.random.default_rng(11))
    for k, samples in enumerate(noise):
        assert np.array_equal(samples, terms["affine"][k][1])
    assert not np.array_equal(noise[0], noise[1])


def test_probe_log_ratios_of_a_model_with_itself_are_zero_and_errors_fall_along_n():
    suite = probe_suite(2, 1.0)
    models = {"a": Attention(4.0 * np.eye(2)), "same": Attention(4.0 * np.eye(2)), "wide": Attention(0.5 * np.eye(2))}
    ratios, errors = probe_log_ratios(models, suite, 20, 0.3, 400, np.random.SeedSequence(1))
    for probe in suite:
        assert ratios[probe.name]["same"] == (0.0, 0.0)
        assert set(errors[probe.name]) == set(models)
    rows = probe_errors_along_n(suite, [1.0, 4.0], [5, 200], 0.1, [400, 400], np.random.SeedSequence(2))
    assert set(rows) == {p.name for p in suite} and all(len(v) == 2 for v in rows.values())
