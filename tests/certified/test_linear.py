"""The certified error of the optimal linear attention (:mod:`lipschitz_icl.certified.linear`): its ball holds the
derivation's closed form, tends to the derived limit, moves with n, sigma and L as the monotonicity theorem says,
and is decided by the prover (a floor proved on a whole domain, a floor above the limit refuted)."""

from __future__ import annotations

import itertools

import pytest
from flint import arb

from lipschitz_icl.certified.linear import class_moments, linear_error
from lipschitz_icl.claims.linear import error_floor
from lipschitz_icl.derivations.linear_attention import linear_limit, linear_optimum
from lipschitz_icl.prover import search


@pytest.mark.parametrize("task,d,n", list(itertools.product(["affine", "relu"], [2, 3, 5], [1, 2, 37, 10**6])))
def test_the_ball_holds_the_closed_form(task, d, n):
    ball = linear_error(task, d, n, 1.3, 0.4)
    value = linear_optimum(task, d, n, 1.3, 0.4)[1]
    assert ball.rad() < 1e-14 and abs(float(ball.mid()) - value) <= 1e-13 * value


@pytest.mark.parametrize("task,d,L", [("affine", 2, 1.0), ("affine", 5, 0.3), ("relu", 3, 1.0), ("relu", 7, 2.5)])
def test_the_moments_are_the_derivation_s(task, d, L):
    """The certified layer writes the class moments itself (it does not import the derivations): equal to
    the derivation's exact expressions."""
    import sympy as sp

    from lipschitz_icl.derivations import linear_attention as derivation

    values = {derivation.d: d, derivation.L: sp.Rational(L)}
    for ball, expr in zip(class_moments(task, d, L), derivation.class_moments(task)):
        exact = sp.Rational(expr.subs(values))
        assert ball.contains(arb(int(exact.p)) / int(exact.q)) and ball.rad() < 1e-15


def test_the_moments_are_exact_and_the_limit_is_the_derived_one():
    k1, B = class_moments("affine", 3, 1.0)
    # (L^2/3)(1 + 1/d) and L^2/(3 d^2): balls of the exact rationals, a rounding wide
    assert k1.contains(arb(4) / 9) and B.contains(arb(1) / 27) and k1.rad() < 1e-15 and B.rad() < 1e-16
    for task in ("affine", "relu"):
        far = float(linear_error(task, 3, 10**15, 1.0, 0.5).mid())
        assert abs(far - linear_limit(task, 3, 1.0)[1]) < 1e-12


def test_the_monotonicity_the_prover_uses():
    """Nonincreasing in n, nondecreasing in sigma and in L, at every step of a grid (both classes)."""
    for task in ("affine", "relu"):
        in_n = [linear_error(task, 3, n, 1.0, 0.5) for n in (1, 2, 3, 10, 100, 10**4)]
        assert all(a > b for a, b in itertools.pairwise(in_n))
        in_sigma = [linear_error(task, 3, 20, 1.0, s) for s in (0.01, 0.1, 0.5, 2.0)]
        assert all(a < b for a, b in itertools.pairwise(in_sigma))
        in_L = [linear_error(task, 3, 20, L, 0.5) for L in (0.1, 0.5, 1.0, 4.0)]
        assert all(a < b for a, b in itertools.pairwise(in_L))


def test_cosine_is_refused():
    with pytest.raises(ValueError, match="affine"):
        linear_error("cosine", 3, 10, 1.0, 0.5)


def test_the_floor_is_proved_and_a_floor_above_the_limit_is_refuted():
    domain = {"d": [3], "n": {"from": 2, "to": 10**12}, "L": 1.0, "sigma": [0.01, 1.0]}
    proved = search.prove("linear_error", "L**2/3", domain, relation=">=", constants={}, task="affine")
    assert proved.verdict.value == "proved" and proved.boxes == 1  # the smallest value: n = 10^12, sigma = 0.01
    above = search.prove("linear_error", "1.001*L**2/3", domain, relation=">=", constants={}, task="affine")
    assert above.verdict.value == "refuted" and above.counterexample["params"]["n"] > 1000


def test_the_claim_s_floor_and_its_alternative():
    outcome = error_floor(task="relu", d=3, L=1.0, n_low=2, n_high=10**12, sigma_low=0.01, sigma_high=1.0, stated=0.5)
    assert outcome.decide().verdict == "proved"
    assert outcome.decide(value=7 / 6).verdict == "proved"  # relu's limit: (L^2/3)(1 + 1/(2d)) = 7/6 L^2/3
    assert outcome.decide(value=4 / 3).verdict == "refuted"  # no learning: k(1) = (L^2/3)(1 + 1/d)
