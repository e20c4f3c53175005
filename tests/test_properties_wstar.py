"""Property tests (Theorem 3.4): for random admissible problems the optimal window moves as the
bounds predict.  w* comes from the exact quadrature (affine) or the asymptotic loss (relu, faster);
both are deterministic; comparisons allow the accuracy each result states (``w_star.abs_error``)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from lipschitz_icl import make_problem
from lipschitz_icl.derivations import window_law as law
from lipschitz_icl.optimum import wstar

SLACK = 1e-5
problems = st.tuples(
    st.sampled_from(["affine", "relu"]),
    st.sampled_from([2, 3, 5]),
    st.integers(1000, 10**12),
    st.floats(0.2, 5.0),
    st.floats(0.1, 2.0),
)


def _wstar(task, d, n, L, sigma):
    method = "exact" if task == "affine" else "asymptotic"
    return wstar(make_problem(task, d, n, L, sigma), method).w_star


def _w(task, d, n, L, sigma):
    return _wstar(task, d, n, L, sigma).value


@settings(max_examples=12)
@given(problems)
def test_wstar_is_monotone_in_each_argument(problem):
    task, d, n, L, sigma = problem
    w = _w(task, d, n, L, sigma)
    assert _w(task, d, n, 1.5 * L, sigma) > w * (1 + SLACK)
    assert _w(task, d, 3 * n, L, sigma) > w * (1 + SLACK)
    assert _w(task, d, n, L, 1.5 * sigma) < w * (1 - SLACK)


@settings(max_examples=12)
@given(problems, st.floats(0.1, 10.0))
def test_wstar_is_invariant_under_joint_scaling_of_L_and_sigma(problem, c):
    task, d, n, L, sigma = problem
    a, b = _wstar(task, d, n, c * L, c * sigma), _wstar(task, d, n, L, sigma)
    assert abs(a.value - b.value) <= a.abs_error + b.abs_error


@settings(max_examples=12)
@given(problems)
def test_wstar_lies_in_the_derived_envelope(problem):
    """|w*/(C rho^alpha) - 1| <= 2 (|first-order w* shift| + largest dropped term), both derived in
    lipschitz_icl/derivations/window_law.py for this (d, rho, n)."""
    task, d, n, L, sigma = problem
    alpha, C = law.window_law(task, d)
    rho = n * L**2 / sigma**2
    dropped = law.dropped_terms(task, d, rho, n)
    ratio = _w(task, d, n, L, sigma) / (C * rho**alpha)
    assert abs(ratio - 1) <= 2 * (abs(dropped["w_star_shift"]) + dropped["max"]) + SLACK
