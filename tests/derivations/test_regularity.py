"""lipschitz_icl.derivations.regularity: the bias power and the window law from a kernel's roughness.

The exponents are checked against what follows by hand from D(u) = K(1) - K(1 - u): an analytic D gives
beta = 2 (the affine class's law, alpha = 2/(d + 3)); a leading u^(1/2) (the exponential kernel
exp(-|x - y|)) gives beta = 1/2; a leading u^(3/2) (Matern 3/2) gives beta = 3/2 (alpha = 2/(d + 2),
the ReLU class's exponent)."""

import pytest
import sympy as sp

from lipschitz_icl.derivations.regularity import gap_series, regularity

t = sp.Symbol("t")
R = sp.sqrt(2 - 2 * t)  # |x - y| on the sphere
EXPONENTIAL = sp.exp(-R)
MATERN32 = (1 + sp.sqrt(3) * R) * sp.exp(-sp.sqrt(3) * R)


def test_gap_series_of_the_exponential_kernel_starts_with_sqrt_2u():
    terms = gap_series(EXPONENTIAL)
    assert sp.simplify(terms[sp.Rational(1, 2)] - sp.sqrt(2)) == 0 and terms[sp.Integer(1)] == -1


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("kernel, beta", [(t, 2.0), (EXPONENTIAL, 0.5), (MATERN32, 1.5)])
def test_bias_power_and_window_exponent(kernel, beta, d):
    law = regularity(kernel, d)
    m = (d - 1) / 2
    assert law.beta == pytest.approx(beta) and law.m == pytest.approx(m)
    assert law.alpha == pytest.approx(1 / (beta + m))


def test_linear_kernel_bias_constant_is_m_squared():
    """D(u) = u: bias_inf = D1 (1 - A)^2 with 1 - A = m/w + O(w^-2), so b = m^2."""
    for d in (2, 3, 5):
        assert regularity(t, d).b == pytest.approx(((d - 1) / 2) ** 2, rel=1e-12)


def test_a_kernel_that_is_not_a_covariance_is_refused():
    with pytest.raises(ValueError, match="not positive"):
        regularity(-t, 3)
