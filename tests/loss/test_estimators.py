"""The three loss estimators agree, the asymptotic one is the large-n limit, and the loss obeys its laws.

Agreement rule: two estimates agree when ``|a - b| <= 4 sqrt(se_a^2 + se_b^2)`` (two-sided 4-sigma; a
false alarm per comparison has probability 6e-5, so a grid of a few dozen comparisons fails by chance
with probability below 1%; seeds are fixed so CI is deterministic).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lipschitz_icl import Attention, make_problem, sphere
from lipschitz_icl.loss.asymptotic import asymptotic_terms, large_n_model
from lipschitz_icl.loss.estimators import icl_loss, paired_ratio
from lipschitz_icl.validation import ParameterError


def _z(a, b):
    """Difference in units of the combined standard error (0 when both are exact and equal)."""
    diff = abs(a.value - b.value)
    scale = np.hypot(a.standard_error, b.standard_error)
    if scale == 0.0:
        return 0.0 if diff <= 1e-12 * max(abs(a.value), 1e-300) else np.inf
    return diff / scale


GRID = [  # (task, d, n, L, sigma, w)
    ("affine", 2, 20, 1.0, 0.5, 3.0),
    ("affine", 5, 200, 2.0, 0.1, 20.0),
    ("affine", 3, 1, 1.0, 1.0, 0.0),
    ("relu", 2, 50, 1.0, 0.3, 8.0),
    ("relu", 4, 100, 0.5, 0.5, 2.0),
    ("relu", 3, 30, 3.0, 0.0, 40.0),
    ("cosine", 3, 40, 1.0, 0.2, 5.0),
    ("cosine", 2, 10, 2.0, 0.5, 1.0),
]


@pytest.mark.parametrize("task, d, n, L, sigma, w", GRID)
def test_naive_and_averaged_agree_in_all_three_parts(task, d, n, L, sigma, w):
    problem = make_problem(task, d, n, L, sigma)
    naive = icl_loss(problem, w, method="naive", contexts=30000, rng=1)
    averaged = icl_loss(problem, w, method="averaged", contexts=20000, rng=2)
    general = icl_loss(problem, M=w * np.eye(d) + 1e-300, method="averaged", contexts=20000, rng=3)
    assert averaged.info["form"].startswith("reduced") and general.info["form"] == "general"
    for part in ("loss", "bias", "noise"):
        a, b, c = (getattr(e, part) for e in (naive, averaged, general))
        assert _z(a, b) < 4 and _z(b, c) < 4, (part, a, b, c)


@pytest.mark.parametrize(
    "task, kw", [("lowrank-linear", {"rank": 2}), ("lowrank-quadratic", {"rank": 1}), ("lowrank-cosine", {"rank": 2})]
)
def test_general_M_estimators_agree_on_low_rank_and_linear_attention(task, kw):
    problem = make_problem(task, 4, 25, 1.0, 0.3, **kw)
    M = np.diag([6.0, 3.0, 0.5, 0.0])
    for attention in ("softmax", "linear"):
        naive = icl_loss(problem, M=M, attention=attention, method="naive", contexts=40000, rng=4)
        averaged = icl_loss(problem, M=M, attention=attention, method="averaged", contexts=20000, rng=5)
        for part in ("loss", "bias", "noise"):
            assert _z(getattr(naive, part), getattr(averaged, part)) < 4, (attention, part)


def test_linear_attention_keeps_the_intercept_in_the_bias():
    """With weights that do not sum to one the intercept b enters: dropping it is detectably wrong."""
    problem = make_problem("affine", 3, 20, 1.0, 0.1)
    naive = icl_loss(problem, M=np.eye(3), attention="linear", method="naive", contexts=40000, rng=6)
    averaged = icl_loss(problem, M=np.eye(3), attention="linear", method="averaged", contexts=20000, rng=7)
    assert _z(naive.bias, averaged.bias) < 4
    # the intercept's share, E[b^2] E[(sum_i p_i - 1)^2] with E[b^2] = L^2/3, from fresh draws
    rng = np.random.default_rng(8)
    x = sphere.uniform_sphere(rng, (20000, 20), 3)
    q = sphere.uniform_sphere(rng, 20000, 3)
    share = (1.0 / 3.0) * (np.sum(Attention(np.eye(3), "linear").weights(x, q), axis=-1) - 1.0) ** 2
    assert share.mean() > 10 * naive.bias.standard_error


@pytest.mark.parametrize("task", ["affine", "relu"])
@pytest.mark.parametrize("d, w", [(2, 4.0), (3, 10.0), (5, 6.0)])
def test_asymptotic_loss_is_the_large_n_limit(task, d, w):
    """At n = 4000 the asymptotic loss agrees with Monte Carlo; the large-n model's error at n = 20 is
    larger than at n = 4000 (in units of the loss), i.e. it converges as n grows; at n = 20 (fewer than
    20 context points in the window) the method itself refuses, naming n."""
    errors = {}
    for n, contexts in ((20, 20000), (4000, 1500)):
        problem = make_problem(task, d, n, 1.0, 0.5)
        mc = icl_loss(problem, w, method="averaged", contexts=contexts, rng=8)
        model = large_n_model(problem, w)
        errors[n] = abs(model.loss.value - mc.loss.value) / mc.loss.value
        if n == 4000:
            asym = icl_loss(problem, w, method="asymptotic")
            assert asym.loss.value == model.loss.value
            assert _z(asym.loss, mc.loss) < 4 and _z(asym.bias, mc.bias) < 4
        else:
            with pytest.raises(ParameterError, match=r"'n' must be >= .* regime"):
                icl_loss(problem, w, method="asymptotic")
    assert errors[4000] < errors[20]


def test_asymptotic_first_correction_improves_on_the_limit():
    """Including the 1/n term brings the asymptotic loss closer to Monte Carlo at moderate n."""
    d, w, n = 3, 8.0, 400
    problem = make_problem("affine", d, n, 1.0, 0.3)
    mc = icl_loss(problem, w, method="averaged", contexts=20000, rng=9)
    b0, b1, _R = asymptotic_terms("affine", d, w)
    with_correction = b0 + b1 / n
    assert abs(with_correction - mc.bias.value) < 4 * mc.bias.standard_error
    assert abs(b0 - mc.bias.value) > 10 * mc.bias.standard_error


@settings(max_examples=10)
@given(
    st.sampled_from(["affine", "relu", "cosine"]),
    st.integers(2, 6),
    st.integers(1, 80),
    st.floats(0.2, 3.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 60.0),
)
def test_estimators_agree_on_random_problems(task, d, n, L, sigma, w):
    """Property: naive and task-averaged estimates agree (4.5-sigma rule: ~2e-4 family-wise over
    the 10 examples x 3 parts) for any admissible problem."""
    problem = make_problem(task, d, n, L, sigma)
    naive = icl_loss(problem, w, method="naive", contexts=6000, rng=31)
    averaged = icl_loss(problem, w, method="averaged", contexts=3000, rng=32)
    for part in ("loss", "bias", "noise"):
        assert _z(getattr(naive, part), getattr(averaged, part)) < 4.5, part


@given(
    st.sampled_from(["affine", "relu", "cosine"]),
    st.integers(2, 6),
    st.integers(1, 60),
    st.floats(0.1, 5.0),
    st.floats(0.05, 3.0),
    st.floats(0.0, 50.0),
)
def test_scaling_law_loss_L_sigma(task, d, n, L, sigma, w):
    """loss(w; L, sigma) = sigma^2 loss(w; L/sigma, 1): exact for the task-averaged estimator on
    the same draws (bias scales as L^2, noise as sigma^2)."""
    a = icl_loss(make_problem(task, d, n, L, sigma), w, contexts=64, rng=11)
    b = icl_loss(make_problem(task, d, n, L / sigma, 1.0), w, contexts=64, rng=11)
    assert a.loss.value == pytest.approx(sigma**2 * b.loss.value, rel=1e-9)
    assert a.noise.value == pytest.approx(sigma**2 * b.noise.value, rel=1e-9)


@given(st.sampled_from(["affine", "relu", "cosine"]), st.integers(2, 4), st.integers(0, 2**31 - 1))
def test_loss_is_invariant_to_rotating_M(task, d, seed):
    """For a rotation-invariant class L(R M R^T) = L(M) (statistically, independent draws)."""
    rng = np.random.default_rng(seed)
    problem = make_problem(task, d, 15, 1.0, 0.4)
    M = rng.normal(size=(d, d)) * 2.0
    R = np.linalg.qr(rng.normal(size=(d, d)))[0]
    a = icl_loss(problem, M=M, contexts=6000, rng=seed % 1000)
    b = icl_loss(problem, M=R @ M @ R.T, contexts=6000, rng=seed % 1000 + 1)
    assert _z(a.loss, b.loss) < 4.5


def test_extreme_parameters_give_finite_correct_results():
    """w up to 1e6 (nearest-neighbour limit) and d up to 512 stay finite; at w = 1e6 the loss
    equals the nearest-neighbour loss computed directly."""
    for d in (2, 512):
        problem = make_problem("affine", d, 50, 1.0, 0.5)
        est = icl_loss(problem, 1e6, contexts=2000, rng=12)
        assert np.isfinite(est.loss.value) and 0.24 < est.noise.value <= 0.25 * (1 + 1e-12)
    # in d = 512 the top two inner products of 50 points are never within 1e-5: one-hot weights
    assert est.noise.value == pytest.approx(0.25, rel=1e-9)
    problem = make_problem("relu", 512, 30, 1.0, 0.0)
    est = icl_loss(problem, 3.0, method="naive", contexts=500, rng=13)
    assert np.isfinite(est.loss.value) and est.loss.value > 0
    # nearest neighbour: weight 1 on argmax t; bias = (L^2/(3d)) * E[2 (1 - t_max)]
    rng = np.random.default_rng(14)
    from lipschitz_icl import sphere

    t = sphere.sample_t(rng, 3, (20000, 50))
    nn = (1.0 / 9.0) * 2.0 * (1.0 - t.max(axis=1))
    est = icl_loss(make_problem("affine", 3, 50, 1.0, 0.0), 1e6, contexts=20000, rng=15)
    assert abs(est.bias.value - nn.mean()) < 4 * np.hypot(est.bias.standard_error, nn.std() / np.sqrt(nn.size))


def test_estimators_are_reproducible_from_their_seed():
    problem = make_problem("relu", 3, 40, 1.0, 0.2)
    for method in ("naive", "averaged"):
        a = icl_loss(problem, 5.0, method=method, contexts=500, rng=21)
        b = icl_loss(problem, 5.0, method=method, contexts=500, rng=21)
        assert a.loss.value == b.loss.value


def test_paired_ratio_of_a_model_with_itself_is_one_and_sees_a_worse_window():
    problem = make_problem("cosine", 2, 20, 1.0, 0.3)
    stream = np.random.SeedSequence(5)
    same = [Attention.isotropic(4.0, 2), Attention.isotropic(4.0, 2)]
    _errors, ratios, ses = paired_ratio(problem, same, 500, stream)
    assert ratios[0] == pytest.approx(1.0) and ses[0] == pytest.approx(0.0, abs=1e-12)
    _, ratios, ses = paired_ratio(problem, [Attention.isotropic(0.5, 2), Attention.isotropic(4.0, 2)], 500, stream)
    assert ratios[0] - 4 * ses[0] > 1.0  # a window 8x too wide is worse, beyond its interval
