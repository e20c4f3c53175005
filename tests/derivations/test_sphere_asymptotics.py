"""Tests of lipschitz_icl.derivations.sphere_asymptotics: the large-w expansions of log Phi_d, A_d, E_w[t^2] and
R_d = Phi_d(2w)/Phi_d(w)^2 (the moment estimates behind Lemmas C.3-C.9; registry: thm34.bias-noise).

Symbolic checks: the Hankel coefficients solved from the Bessel ODE equal DLMF 10.40.1; Watson's lemma on
the project's density p_d gives the same series (so the Bessel form of Phi_d is right); two routes to A_d
and to E_w[t^2] agree; c_R(d) has the expected closed form.

Numerical checks (mpmath, 40 digits): for each expansion truncated after the w^-N term, the remainder
times w^(N+1) must converge to the derived next coefficient, monotonically along w = 50, 100, ..., 1600
and to within 2% at the last point (the deviation is the following term, relative O(1/w); at w = 1600
that is 1/1600 times a coefficient of order 10).  The same check must reject a 5% error in c_R(d).
"""

import itertools

import mpmath
import pytest
import sympy as sp

from lipschitz_icl.derivations import sphere_asymptotics as S

W_GRID = (50, 100, 200, 400, 800, 1600)


def _at(expr, d, w):
    return sp.N(expr.subs(S.d, d).subs(S.w, w), 45)


def remainder_converges(ws, remainder, power, next_coeff, rel_tol=0.02):
    """True when ``remainder(w) * w^power -> next_coeff``: distance decreasing along ``ws`` and within
    ``rel_tol`` (relative) at the last point.  For ``next_coeff == 0`` the remainder must be below 1e-25."""
    scaled = [remainder(w) * mpmath.mpf(w) ** power for w in ws]
    if next_coeff == 0:
        return all(abs(remainder(w)) < mpmath.mpf(10) ** -25 for w in ws)
    dist = [abs(s - next_coeff) for s in scaled]
    monotone = all(b < a for a, b in itertools.pairwise(dist))
    return monotone and dist[-1] <= rel_tol * abs(next_coeff)


def test_hankel_recurrence_matches_dlmf():
    coeffs = S.hankel_coefficients(5)
    assert coeffs[0] == 1
    for k in range(6):
        assert sp.expand(coeffs[k] - S.hankel_closed_form(k)) == 0


def test_watson_lemma_on_the_density_matches_hankel():
    """Independent route: expanding p_d near t = 1 (Watson's lemma) gives the Hankel coefficients at
    nu = d/2 - 1, and fixes the Hankel normalisation to 1/sqrt(2 pi) for every d."""
    hank = S.hankel_coefficients(4)
    wat = S.watson_coefficients(4)
    for k in range(5):
        assert sp.expand(hank[k].subs(S.nu, S.d / 2 - 1) - wat[k]) == 0
    assert sp.simplify(S.hankel_normalisation() - 1 / sp.sqrt(2 * sp.pi)) == 0


def test_c_R_closed_form():
    expected = sp.sqrt(sp.pi) / (sp.gamma(S.d / 2) * 2 ** (S.d - 2))
    assert sp.simplify(S.c_R() - expected) == 0
    assert S.c_R_float(3) == pytest.approx(1.0, rel=1e-15)
    assert S.c_R_float(2) == pytest.approx(float(sp.sqrt(sp.pi)), rel=1e-15)


def test_two_routes_to_A_and_second_moment_agree():
    """A_d = (log Phi_d)' equals the ratio of Hankel series I_{d/2}/I_{d/2-1}; E_w t^2 from
    (log Phi)'' + (log Phi)'^2 equals 1 - (d-1) A_d/w (the Bessel recurrence), to the order kept."""
    a1 = S.tilted_mean_series(2)
    a2 = S.tilted_mean_series_from_bessel_ratio(2)
    assert sp.expand(a1 - a2) == 0
    rhs = S.truncate(sp.expand(1 - (S.d - 1) * a1 / S.w), 2)
    assert sp.expand(S.second_moment_series(2) - rhs) == 0


def test_leading_terms_are_as_stated():
    one_minus_a = S.one_minus_tilted_mean_series(2)
    assert sp.simplify(S.series_coefficients(one_minus_a, -1, 0)[0] - (S.d - 1) / 2) == 0
    coeffs = S.series_coefficients(S.collision_ratio_series(1), (S.d - 1) / 2, 1)
    assert sp.simplify(coeffs[0] - S.c_R()) == 0


@pytest.mark.parametrize("d", [2, 3, 5])
def test_log_phi_expansion_numerically(d):
    N = 2
    series, nxt = S.log_phi_series(N), S.log_phi_series(N + 1)
    next_coeff = _at(sp.expand((nxt - series) * S.w ** (N + 1)), d, 1)
    with mpmath.workdps(40):

        def rem(w):
            return S.exact_log_phi(d, w) - _at(series, d, w)

        assert remainder_converges(W_GRID, rem, N + 1, next_coeff)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_tilted_mean_expansion_numerically(d):
    """1 - A_d(w) = (d-1)/(2w) + a_2/w^2 + ... against the Bessel ratio."""
    N = 3
    series, nxt = S.one_minus_tilted_mean_series(N - 1), S.one_minus_tilted_mean_series(N)
    next_coeff = _at(sp.expand((nxt - series) * S.w ** (N + 1)), d, 1)
    with mpmath.workdps(40):

        def rem(w):
            return (1 - S.exact_tilted_mean(d, w)) - _at(series, d, w)

        assert remainder_converges(W_GRID, rem, N + 1, next_coeff)
        # the leading term alone: relative error ~ w^-1 with the derived coefficient
        lead = (d - 1) / mpmath.mpf(2)
        a2 = _at(sp.expand(S.one_minus_tilted_mean_series(1) * S.w**2).coeff(S.w, 0), d, 1)

        def rel(w):
            return (1 - S.exact_tilted_mean(d, w)) / (lead / w) - 1

        assert remainder_converges(W_GRID, rel, 1, a2 / lead)


@pytest.mark.parametrize("d", [2, 5])
def test_second_moment_expansion_numerically(d):
    """E_w t^2 against direct quadrature of the tilted density (not the Bessel form)."""
    N = 2
    series, nxt = S.second_moment_series(N), S.second_moment_series(N + 1)
    next_coeff = _at(sp.expand((nxt - series) * S.w ** (N + 1)), d, 1)
    with mpmath.workdps(40):

        def rem(w):
            return S.exact_second_moment(d, w) - _at(series, d, w)

        assert remainder_converges(W_GRID, rem, N + 1, next_coeff)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_collision_ratio_expansion_numerically(d):
    """R_d(w)/(c_R w^((d-1)/2)) - 1 ~ r_1/w, and the two-term expansion leaves O(w^-2)."""
    beta = (d - 1) / mpmath.mpf(2)
    c1 = S.series_coefficients(S.collision_ratio_series(2), (S.d - 1) / 2, 2)
    cR, r1, r2 = (_at(c, d, 1) for c in c1)
    with mpmath.workdps(40):

        def rel(w):
            return S.exact_collision_ratio(d, w) / (cR * mpmath.mpf(w) ** beta) - 1

        assert remainder_converges(W_GRID, rel, 1, r1 / cR)

        def rel2(w):
            return S.exact_collision_ratio(d, w) / (cR * mpmath.mpf(w) ** beta) - 1 - r1 / cR / w

        assert remainder_converges(W_GRID, rel2, 2, r2 / cR)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_false_c_R_is_rejected(d):
    """False variant: c_R(d) off by 5% fails the same convergence check."""
    beta = (d - 1) / mpmath.mpf(2)
    c1 = S.series_coefficients(S.collision_ratio_series(1), (S.d - 1) / 2, 1)
    cR, r1 = (_at(c, d, 1) for c in c1)
    with mpmath.workdps(40):

        def rel(w):
            return S.exact_collision_ratio(d, w) / (mpmath.mpf("1.05") * cR * mpmath.mpf(w) ** beta) - 1

        assert not remainder_converges(W_GRID, rel, 1, r1 / cR)
