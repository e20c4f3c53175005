"""Task classes: samplers, Lipschitz constants, exact covariances and the feature form (*)."""

import numpy as np
import pytest

from lipschitz_icl import make_task_class, sphere
from lipschitz_icl.tasks.registry import TASK_NAMES

CLASSES = [
    ("affine", {}),
    ("relu", {}),
    ("cosine", {"frequency": 3.0}),
    ("lowrank-linear", {"rank": 2}),
    ("lowrank-affine", {"rank": 2}),
    ("lowrank-quadratic", {"rank": 2}),
    ("lowrank-cosine", {"rank": 2, "frequency": 2.0}),
]


def test_every_class_is_covered():
    assert sorted(name for name, _ in CLASSES) == sorted(TASK_NAMES)


@pytest.mark.parametrize("name, kw", CLASSES)
def test_covariance_matches_sampled_tasks(name, kw):
    rng = np.random.default_rng(10)
    d, N = 4, 200000
    tc = make_task_class(name, d, 1.7, **kw)
    a, b = sphere.uniform_sphere(rng, 2, d)
    task = tc.sample(rng, N)
    fa, fb = task(np.broadcast_to(a, (N, d))), task(np.broadcast_to(b, (N, d)))
    prod = fa * fb
    assert abs(prod.mean() - tc.covariance(a, b)) < 5 * prod.std() / np.sqrt(N)
    assert abs(fa.mean()) < 5 * fa.std() / np.sqrt(N)  # E_f[f(a)] = 0


@pytest.mark.parametrize("name, kw", CLASSES)
def test_sampled_tasks_respect_their_lipschitz_constant(name, kw):
    rng = np.random.default_rng(11)
    d, L = 5, 2.0
    tc = make_task_class(name, d, L, **kw)
    task = tc.sample(rng, 300)
    x = sphere.uniform_sphere(rng, (300, 400), d)
    far = sphere.uniform_sphere(rng, (300, 400), d)
    near = x + 1e-5 * rng.normal(size=x.shape)
    near /= np.linalg.norm(near, axis=-1, keepdims=True)
    lip = task.lipschitz
    assert np.all(lip <= L + 1e-12)
    for y in (far, near):
        slopes = np.abs(task(x) - task(y)) / np.linalg.norm(x - y, axis=-1)
        assert np.all(slopes <= lip[:, None] * (1 + 1e-6) + 1e-12)
    # and the constant is attained locally by some task (it is not loose by a factor)
    ratio = slopes / np.maximum(lip[:, None], 1e-12)
    assert np.max(ratio) > 0.9


@pytest.mark.parametrize("name, kw", CLASSES)
def test_feature_form_reproduces_the_task_averaged_bias(name, kw):
    """(*): E_f[(sum p f(x_i) - f(q))^2] from features (directions averaged by MC) equals the
    same expectation from the exact covariance, for a fixed context and fixed weights p."""
    rng = np.random.default_rng(12)
    d, n, reps = 4, 5, 100000
    tc = make_task_class(name, d, 1.3, **kw)
    x = sphere.uniform_sphere(rng, n, d)
    q = sphere.uniform_sphere(rng, (), d)
    p = rng.dirichlet(np.ones(n))
    pts = np.vstack([x, q])
    K = tc.covariance(pts[:, None, :], pts[None, :, :])
    coef = np.append(p, -1.0)
    exact = coef @ K @ coef
    feats = tc.features(rng, np.broadcast_to(x, (reps, n, d)), np.broadcast_to(q, (reps, d)))
    values = feats.bias(np.broadcast_to(p, (reps, n)))
    assert abs(values.mean() - exact) < 5 * values.std() / np.sqrt(reps) + 1e-12 * abs(exact)


@pytest.mark.parametrize("name", ["affine", "relu", "cosine"])
def test_reduced_features_match_general_features(name):
    """The reduced form (only t_i = x_i.q) has the same expectation as the general form."""
    rng = np.random.default_rng(13)
    d, n, N, w = 3, 6, 200000, 4.0
    tc = make_task_class(name, d, 1.0, frequency=2.0) if name == "cosine" else make_task_class(name, d, 1.0)
    x = sphere.uniform_sphere(rng, (N, n), d)
    q = sphere.uniform_sphere(rng, N, d)
    logits = w * np.einsum("cnd,cd->cn", x, q)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    general = tc.features(rng, x, q).bias(p)
    t = np.einsum("cnd,cd->cn", x, q)
    reduced = tc.reduced_features(rng, t, kink_width=0.3 if name == "relu" else None).bias(p)
    se = np.hypot(general.std(), reduced.std()) / np.sqrt(N)
    assert abs(general.mean() - reduced.mean()) < 5 * se


@pytest.mark.parametrize("m", [3, 64, 256, 280, 300, 512])
def test_the_sphere_characteristic_is_finite_and_right_at_every_dimension(m):
    """``Psi_m(r) = 0F1(; m/2; -r^2/4)`` against mpmath to 1e-12 over ``r`` in ``[0, 2000]``: from ``m = 280`` on
    the Bessel form overflowed (``Gamma(m/2) (2/r)^(m/2-1) J = inf * 0``) and the cosine class stopped every
    method with "--kernel: must be finite on [-1, 1]"; the power series takes over there."""
    import mpmath

    from lipschitz_icl.tasks.builtin import sphere_characteristic

    r = np.concatenate([np.linspace(0.0, 3.0, 31), np.geomspace(3.0, 2000.0, 40)])
    value = sphere_characteristic(m, r)
    exact = [float(mpmath.hyp0f1(mpmath.mpf(m) / 2, -(mpmath.mpf(x) ** 2) / 4)) for x in r]
    np.testing.assert_allclose(value, exact, rtol=0, atol=1e-12)


def test_the_cosine_class_computes_at_the_largest_dimension():
    """``d = 512`` (the largest the options allow): the exact loss of the cosine class is finite and between
    its affine neighbour's and twice it (``K(1) = 1/2`` against ``(1 + 1/d)/3``; the same noise part)."""
    from lipschitz_icl import make_problem
    from lipschitz_icl.loss import icl_loss

    cosine = icl_loss(make_problem("cosine", 512, 1000, 1.0, 0.5), 5.0, method="exact").loss.value
    affine = icl_loss(make_problem("affine", 512, 1000, 1.0, 0.5), 5.0, method="exact").loss.value
    assert affine < cosine < 2 * affine
