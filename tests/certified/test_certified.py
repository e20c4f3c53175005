"""Certified enclosures (python-flint balls): the sphere laws, the affine loss, its derivatives and w*,
each against an independent computation (issue 18, "Shown by")."""

from __future__ import annotations

import json

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lipschitz_icl import certified, cli
from lipschitz_icl.certified.loss import loss_derivatives, loss_enclosure


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _contains(ball, value) -> bool:
    """``value`` (mpmath, 30 digits) lies in the ball, compared at 30 digits."""
    with mpmath.workdps(30):
        lo, hi = mpmath.mpf(ball.lower().str(40, radius=False)), mpmath.mpf(ball.upper().str(40, radius=False))
        slack = mpmath.mpf(10) ** -28 * abs(value)
        return lo - slack <= value <= hi + slack


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 60), st.floats(-0.99, 0.99))
def test_cap_probability_contains_mpmath(d, h):
    with mpmath.workdps(30):
        a = mpmath.mpf(d - 1) / 2
        truth = mpmath.betainc(a, a, 0, (1 - mpmath.mpf(h)) / 2, regularized=True)
    assert _contains(certified.cap_probability(d, h), truth)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 40), st.data())
def test_projection_binomial_and_phi_contain_mpmath(d, data):
    k = data.draw(st.integers(1, d - 1))
    s = data.draw(st.floats(0.0, 1.0))
    n = data.draw(st.integers(1, 200))
    a = data.draw(st.integers(0, n))
    p = data.draw(st.floats(0.0, 1.0))
    w = data.draw(st.floats(-30.0, 30.0))
    with mpmath.workdps(30):
        upper = mpmath.betainc(mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2, mpmath.mpf(s), 1, regularized=True)
        binom = mpmath.fsum(
            mpmath.binomial(n, j) * mpmath.mpf(p) ** j * (1 - mpmath.mpf(p)) ** (n - j) for j in range(a, n + 1)
        )
        phi = mpmath.hyp0f1(mpmath.mpf(d) / 2, mpmath.mpf(w) ** 2 / 4)
        # Phi_d(w) = E exp(w t) by 1-D quadrature of the density of t (an independent route)
        dens = mpmath.quad(lambda t: mpmath.exp(w * t) * (1 - t * t) ** (mpmath.mpf(d - 3) / 2), [-1, 0, 1])
        norm = mpmath.quad(lambda t: (1 - t * t) ** (mpmath.mpf(d - 3) / 2), [-1, 0, 1])
    assert _contains(certified.projection_tail(d, k, s), upper)
    assert _contains(certified.binomial_tail(n, a, p), binom)
    assert _contains(certified.phi(d, w), phi)
    assert abs(dens / norm / phi - 1) < 1e-15


def test_certified_affine_loss_at_d3_n2_contains_a_2d_quadrature(capsys):
    r"""For ``d = 3`` (Archimedes) ``t = x . q`` is uniform on ``[-1, 1]``.  With ``M = w I`` the softmax
    weights of two context points are ``p_1 = 1 / (1 + exp(w (t_2 - t_1)))``, ``p_2 = 1 - p_1``: functions of
    ``t_1, t_2`` only.  The affine class is ``f(x) = l u.x + b`` with ``l ~ U[-L, L]`` (``E l^2 = L^2/3``),
    ``u`` uniform; the intercept cancels (the weights sum to one), so the bias given the context is
    ``(L^2/3) E_u[(u.(sum_i p_i x_i - q))^2] = (L^2/(3d)) ||sum_i p_i x_i - q||^2``.  Writing
    ``x_i = t_i q + sqrt(1 - t_i^2) z_i`` with ``z_i`` independent and uniform on the unit sphere of
    ``q``'s complement (``E z_i = 0``), ``E_z ||sum_i p_i x_i - q||^2 = (sum_i p_i t_i - 1)^2 +
    sum_i p_i^2 (1 - t_i^2)``.  The noise part is ``sigma^2 (p_1^2 + p_2^2)``.  So the loss is the double
    integral over ``[-1, 1]^2`` with density ``1/4`` of
    ``sigma^2 (p_1^2 + p_2^2) + (L^2/9) [(p_1 t_1 + p_2 t_2 - 1)^2 + p_1^2 (1 - t_1^2) + p_2^2 (1 - t_2^2)]``,
    evaluated here by mpmath's 2-D tanh-sinh quadrature at 20 digits (its error estimate checked)."""
    w, sigma, L = 1.5, 0.5, 1.0
    with mpmath.workdps(20):

        def integrand(t1, t2):
            p1 = 1 / (1 + mpmath.exp(mpmath.mpf(w) * (t2 - t1)))
            p2 = 1 - p1
            noise = mpmath.mpf(sigma) ** 2 * (p1**2 + p2**2)
            bias = mpmath.mpf(L) ** 2 / 9 * ((p1 * t1 + p2 * t2 - 1) ** 2 + p1**2 * (1 - t1**2) + p2**2 * (1 - t2**2))
            return (noise + bias) / 4

        truth, error = mpmath.quad(integrand, [-1, 1], [-1, 1], error=True)
    assert error < 1e-16
    code, out, _ = run(
        [
            "loss",
            "--task",
            "affine",
            "--d",
            "3",
            "--n",
            "2",
            "--L",
            str(L),
            "--sigma",
            str(sigma),
            "--w",
            str(w),
            "--method",
            "certified",
            "--json",
        ],
        capsys,
    )
    result = json.loads(out)
    assert code == 0 and result["method"] == "certified"
    assert result["loss_low"] <= truth <= result["loss_high"]
    assert result["loss_high"] - result["loss_low"] < 1e-9 * truth
    assert result["ci_low"] == result["loss_low"] and result["bias_low"] <= result["bias"] <= result["bias_high"]


def test_certified_loss_holds_the_exact_method_and_refuses_a_kernel_not_analytic(capsys):
    from lipschitz_icl.exact.route import exact_loss
    from lipschitz_icl.problem import make_problem

    enclosure = certified.Enclosure.of(loss_enclosure(5, 1000, 8.0, 0.5, 1.0).loss)
    exact = exact_loss(make_problem("affine", 5, 1000, 1.0, 0.5), 8.0, rtol=1e-10).loss
    assert enclosure.low <= exact.value + exact.abs_error and exact.value - exact.abs_error <= enclosure.high
    assert enclosure.width < 1e-10 * exact.value
    code, out, err = run(
        [
            "loss",
            "--kernel",
            "exp(-sqrt(2 - 2*t))",
            "--d",
            "3",
            "--n",
            "5",
            "--sigma",
            "0.5",
            "--w",
            "2",
            "--method",
            "certified",
        ],
        capsys,
    )
    assert code == 2 and out == "" and "not certified" in err and len(err.strip().splitlines()) == 1


def test_derivative_balls_agree_with_the_mean_value_theorem():
    """``(L(w + h) - L(w - h)) / 2h`` is a value of ``L'`` on ``[w - h, w + h]`` (mean value theorem), so
    the certified ball of that quotient must meet the certified ball of ``L'`` over the interval; the
    same for ``L'`` and ``L''``."""
    d, n, w, h, sigma, L = 3, 10, 1.0, 1e-3, 1.0, 1.0
    lo, hi = (loss_enclosure(d, n, x, sigma, L).loss for x in (w - h, w + h))
    first = loss_derivatives(d, n, (w - h, w + h), sigma, L, (1, 2))
    assert ((hi - lo) / (2 * h)).overlaps(first[1])
    d_lo, d_hi = (loss_derivatives(d, n, x, sigma, L, (1,))[1] for x in (w - h, w + h))
    assert ((d_hi - d_lo) / (2 * h)).overlaps(first[2])
    assert first[2] > 0


@pytest.mark.slow(
    reason="the certified w* search in ball arithmetic takes 15-20 s per case at any n; the default "
    "run still certifies the loss and its derivatives above"
)
@pytest.mark.parametrize("d,n,sigma", [(2, 20, 2.0), (3, 10, 1.0)])
def test_certified_wstar_contains_the_exact_minimiser(capsys, d, n, sigma):
    common = ["--task", "affine", "--d", str(d), "--n", str(n), "--L", "1", "--sigma", str(sigma), "--json"]
    code, out, _ = run(["wstar", *common, "--method", "certified"], capsys)
    certified_result = json.loads(out)
    code_exact, out_exact, _ = run(["wstar", *common, "--method", "exact"], capsys)
    exact = json.loads(out_exact)
    assert code == 0 and code_exact == 0 and certified_result["decided"]
    low, high = certified_result["w_star_low"], certified_result["w_star_high"]
    assert low <= exact["w_star"] <= high
    assert (high - low) / low < 2e-6  # six digits
    # the exact method's minimum loss, within its default quadrature tolerance (rtol 1e-6)
    assert certified_result["loss_low"] - 1e-6 * exact["loss"] <= exact["loss"]
    assert exact["loss"] <= certified_result["loss_high"] + 1e-6 * exact["loss"]
    assert certified_result["loss_high"] - certified_result["loss_low"] < 1e-9 * exact["loss"]


@pytest.mark.parametrize("s", [0.0, 2.1504816925328143e-24, 1e-300, 5e-324])
def test_projection_tail_at_a_tiny_s_is_a_narrow_ball_around_1(s):
    """1 - s rounds a tiny s away, and Arb's incomplete beta at that ball was NaN (found by Hypothesis in a
    fresh-clone CI run); the complement I_s(k/2, (d - k)/2) keeps it.  On S^2 the first coordinate is uniform
    on [-1, 1] (Archimedes), so P(x_1^2 >= s) = 1 - sqrt(s)."""
    tail = certified.projection_tail(3, 1, s)
    with mpmath.workdps(40):
        assert _contains(tail, 1 - mpmath.sqrt(mpmath.mpf(s))) and tail.rad() < 1e-10


def test_the_off_diagonal_sum_keeps_a_coefficient_whose_ball_holds_zero():
    """``laplace._off_sum``'s sum over degrees ``l`` of ``a_l (s_l * s_l)`` (truncated Taylor products) as one
    matrix product: equal to the term-by-term sum, and a coefficient ball that may hold 0 (``[+/- 1e-3]``, as
    a quadrature kernel's odd coefficients are) still widens the sum: only an exact 0 is skipped."""
    from types import SimpleNamespace

    from flint import arb

    from lipschitz_icl.certified import laplace

    J, m = 2, 4
    a = [arb(0), arb(0.5), arb(0, 1e-3), arb(0), arb(-0.25)]
    blocks = [[arb(1)] + [arb((i + 1) * 0.125 + l * 0.0625) for l in range(1, m + 1)] + [arb(0)] for i in range(J + 1)]
    grid = SimpleNamespace(
        order=J, m=m, coefficients=SimpleNamespace(a=a), kernel=SimpleNamespace(degree=m)
    )  # a finite degree: no tail term
    row = SimpleNamespace(groups={("A", 1, i): blocks[i] for i in range(J + 1)})
    total = laplace._off_sum(grid, row)
    reference = [arb(0)] * (J + 1)
    for l in range(1, m + 1):
        series = [b[l] for b in blocks]
        square = [sum((series[i] * series[k - i] for i in range(k + 1)), arb(0)) for k in range(J + 1)]
        reference = [r + a[l] * x for r, x in zip(reference, square)]
    for got, want in zip(total, reference):
        assert got.overlaps(want) and abs(float(got.mid()) - float(want.mid())) < 1e-15
        assert float(got.rad()) >= 0.99 * float(want.rad()) > 1e-5  # the [+/- 1e-3] coefficient's spread is kept
