"""lipschitz_icl/derivations/saddle.py: the ICL loss along the complement Q, exact in n.

The symbolic steps are checked identically (SymPy); the numbers against closed forms (n = 1), against
Monte Carlo on the library's own estimator, and against each other (the curvature of item 2 against
finite differences of the exact loss of item 1)."""

import math

import numpy as np
import pytest

from lipschitz_icl.derivations import saddle as S
from lipschitz_icl.loss.estimators import general_terms
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import make_problem


@pytest.mark.parametrize("R", [1, 2, 3, 4])
def test_laplace_moment_is_the_set_partition_sum(R):
    assert S.check_laplace_moment(R)


@pytest.mark.parametrize("points, m", [(3, 1), (2, 2)])
def test_curvature_power_sums_equal_direct_differentiation(points, m):
    assert S.check_curvature_identity(points, m)


def test_a_wrong_monomial_table_is_caught(monkeypatch):
    # the identity is checked on the very table the numerics integrate: a changed coefficient fails it
    wrong = (
        (4.0, ((2, 1, ""),), 2),
        (-8.0, ((3, 1, ""),), 3),
        (-2.0, ((1, 1, ""), (2, 0, "")), 3),
        (5.0, ((2, 1, ""), (2, 0, "")), 4),
    )
    monkeypatch.setattr(S, "_CURV_NOISE", wrong)
    assert not S.check_curvature_identity(2, 1)


def test_one_context_point_has_the_closed_form_loss():
    # n = 1: the weight is 1 whatever M, so L = sigma^2 + v_t E|phi(z) - phi(z_q)|^2; quadratic link,
    # d = 3, k = 1: z, z_q i.i.d. uniform on [-1, 1], E (z^2 - z_q^2)^2 = 2 (1/5 - 1/9) = 8/45
    setting = S.Setting("quadratic", 3, 1, 1, 2.0, 0.4)
    for c, s in ((0.0, 0.0), (5.0, 0.0), (5.0, 1.5)):
        value = S.loss(setting, c, s)
        assert value.value == pytest.approx(0.4**2 + (4 / 3) * 8 / 45, rel=1e-9)
    # and no curvature along Q: the five bias and four noise monomials cancel (2 + 2 - 8 - 2 + 6 = 0,
    # 4 - 8 - 2 + 6 = 0), each a t-integral of size about the loss, to the t-quadrature's precision
    kappa = S.curvature(setting, 5.0)
    assert abs(kappa.value) <= 1e-8 * value.value


@pytest.mark.parametrize(
    "task, d, k, c, s", [("lowrank-quadratic", 3, 1, 3.0, 0.8), ("lowrank-cosine", 4, 2, 5.0, -1.2)]
)
def test_exact_loss_matches_the_monte_carlo_estimator(task, d, k, c, s):
    kw = {"frequency": 1.5} if task.endswith("cosine") else {}
    problem = make_problem(task, d, 6, 1.7, 0.3, rank=k, **kw)
    B = problem.task_class.B
    M = c * B @ B.T + s * (np.eye(d) - B @ B.T)
    ((bias, noise),) = general_terms(problem, [Attention(M)], 200000, np.random.default_rng(0))
    derived = S.loss(S.Setting.of(problem), c, s)
    for part, samples in (("bias", bias), ("noise", noise)):
        se = samples.std(ddof=1) / math.sqrt(samples.size)
        assert abs(samples.mean() - getattr(derived, part)) <= 4 * se + derived.accuracy, part


@pytest.mark.parametrize("link, d, k, c", [("quadratic", 3, 1, 3.4), ("cosine", 4, 2, 5.5), ("linear", 3, 1, 4.0)])
def test_curvature_is_the_limit_of_finite_differences_of_the_exact_loss(link, d, k, c):
    setting = S.Setting(link, d, k, 20, 2.0, 0.3, 1.4)
    kappa = S.curvature(setting, c)
    ratios = [S.loss_change(setting, c, s).value / (s * s / 2) for s in (0.02 * c, 0.01 * c)]
    # the quotient approaches kappa at the rate s^2: the smaller step is four times closer
    assert abs(ratios[1] - kappa.value) <= 0.3 * abs(ratios[0] - kappa.value) + 1e-6 * abs(kappa.value)
    assert ratios[1] == pytest.approx(kappa.value, rel=2e-3)


def test_large_n_curvature_is_the_second_derivative_of_the_large_n_loss():
    setting = S.Setting("quadratic", 3, 1, 20, 3.0, 0.3)
    for limit in (False, True):
        kappa = S.large_n_curvature(setting, 3.4, limit=limit).value
        s = 0.01 * 3.4
        diff = S.large_n_loss(setting, 3.4, s, limit=limit).value - S.large_n_loss(setting, 3.4, 0.0, limit=limit).value
        assert diff / (s * s / 2) == pytest.approx(kappa, rel=2e-3)


@pytest.mark.parametrize("link", ["linear", "affine"])
def test_linear_links_have_positive_curvature_along_q(link):
    # Theorem 4.4's setting: the complement carries no information about an odd link, so c B B^T is a
    # minimum along Q -- its bias part alone already curves upwards
    for d, k in ((3, 1), (4, 2)):
        kappa = S.curvature(S.Setting(link, d, k, 20, 1.5, 0.3), 4.0)
        assert kappa.value > 0 and kappa.bias > 0


def test_quadratic_d3k1_is_a_saddle_and_larger_n_approaches_the_delta_method():
    setting = S.Setting("quadratic", 3, 1, 20, 3.0, 0.3)
    c, at_bound = S.optimal_scale(setting, low=0.5, high=50.0)
    assert not at_bound and 3.0 < c < 4.0
    kappa = S.curvature(setting, c)
    assert kappa.value < 0 and kappa.bias < 0 < kappa.noise
    # the O(1/n) rival's relative error shrinks as n grows (at a fixed c)
    errors = []
    for n in (20, 80):
        big = S.Setting("quadratic", 3, 1, n, 3.0, 0.3)
        errors.append(abs(S.large_n_curvature(big, c).value / S.curvature(big, c).value - 1))
    assert errors[1] < 0.5 * errors[0]


def test_figure9_setting_is_a_minimum_along_q():
    # the registry's statement on Figure 9 (d = 4, k = 2, n = 20, L = 1, sigma = 0.3, not signal-matched):
    # positive curvature for every link, the quadratic's bias part negative and outweighed by its noise part
    for link in ("quadratic", "cosine", "affine"):
        setting = S.Setting(link, 4, 2, 20, 1.0, 0.3)
        c, at_bound = S.optimal_scale(setting, low=0.5, high=50.0)
        kappa = S.curvature(setting, c)
        assert not at_bound and kappa.value > 0, link
        if link == "quadratic":
            assert kappa.bias < 0 < kappa.noise
            assert kappa.value == pytest.approx(5.8e-4, rel=0.02)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="link"):
        S.Setting("relu", 3, 1, 20, 1.0, 0.3)
    with pytest.raises(ValueError, match="k in"):
        S.Setting("quadratic", 5, 3, 20, 1.0, 0.3)


@pytest.mark.slow(reason="two derived cases of the saddle (about 10 s each)")
def test_the_numbers_derived_at_c_star_move_with_it_at_most_as_stated():
    """The document's accuracy of a number derived at the searched ``c*`` carries ``c*``'s own accuracy times
    ``C_SENSITIVITY``, a bound on ``|d log X / d log c|``: measured here by a finite difference on a claim case."""
    from lipschitz_icl.derivations import documents

    (_, setting), *_ = documents.saddle_cases()
    c, _ = S.optimal_scale(setting, low=0.5, high=50.0)
    delta = 1e-3

    def numbers(scale):
        s = 0.04 * scale
        change = S.loss_change(setting, scale, s)
        kappa = S.curvature(setting, scale)
        large_n = S.large_n_loss(setting, scale, s).value - S.large_n_loss(setting, scale, 0.0).value
        return np.array([change.value, change.bias, change.noise, kappa.value, kappa.bias, kappa.noise, large_n])

    slopes = np.abs(np.log(numbers(c * (1 + delta)) / numbers(c))) / delta
    assert np.all(slopes <= S.C_SENSITIVITY), slopes
