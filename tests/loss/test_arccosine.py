"""lipschitz_icl.loss.arccosine: the relu task-averaged estimator with the direction averaged exactly.

The integral over ``c = u.q`` is held to an independent adaptive quadrature (its own error estimate); the
estimator is held to the exact method and to the naive estimator within their own errors
(``|a - b| <= 4 sqrt(se_a^2 + se_b^2)``, fixed seeds), at several settings.
"""

import math

import numpy as np
import pytest
from scipy import integrate

from lipschitz_icl import make_problem
from lipschitz_icl.loss.arccosine import direction_integral
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.sphere import laws


def _by_quadrature(d, t, z, p):
    """``J(t, z) + J(t, -z)`` of one context by adaptive quadrature in ``phi`` (``c = cos phi``; law
    ``sin^(d-2) phi / B(1/2, (d-1)/2)``), with break points at every kink; returns (value, error estimate)."""
    r = np.sqrt(1.0 - t * t)
    norm = math.exp(math.lgamma(0.5) + math.lgamma(0.5 * (d - 1)) - math.lgamma(0.5 * d))
    value, error = 0.0, 0.0
    for sign in (1.0, -1.0):
        b = sign * r * z

        def integrand(phi, b=b):
            c, s = math.cos(phi), math.sin(phi)
            S = float(np.sum(p * np.maximum(t * c + b * s, 0.0)))
            return (S - max(c, 0.0)) ** 2 * s ** (d - 2) / norm

        kinks = np.arctan2(np.abs(t), -np.sign(t) * b)  # where t cos phi + b sin phi = 0 on [0, pi]
        points = sorted({math.pi / 2, *(float(k) for k in kinks if 0.0 < k < math.pi)})
        v, e = integrate.quad(integrand, 0.0, math.pi, points=points, limit=400, epsabs=1e-13, epsrel=1e-12)
        value, error = value + v, error + e
    return value, error


@pytest.mark.parametrize("d", [2, 3, 5, 8, 64])
def test_the_integral_over_the_direction_is_exact(d):
    rng = np.random.default_rng(100 + d)
    n, contexts = 9, 3
    t = laws.sample_t(rng, d, (contexts, n))
    z = laws.sample_t(rng, d - 1, (contexts, n))
    p = rng.dirichlet(np.ones(n), contexts)
    got = direction_integral(d, t, z, p)
    for k in range(contexts):
        expected, error = _by_quadrature(d, t[k], z[k], p[k])
        assert abs(got[k] - expected) <= 10 * error + 1e-12, (k, got[k], expected, error)


def test_the_integral_is_even_in_z_and_covers_points_on_the_axis():
    """``J(t, z) + J(t, -z)`` does not change with the sign of ``z``; points with ``t = 0`` or ``t = +-1``
    (``b = 0``: no sign change inside ``[0, pi]``) and a weight concentrated on one point are exact too."""
    d = 4
    rng = np.random.default_rng(7)
    t = np.array([[0.0, 1.0, -1.0, 0.3, -0.6], [0.9, -0.2, 0.0, 0.5, 0.1]])
    z = laws.sample_t(rng, d - 1, t.shape)
    p = np.array([[0.1, 0.3, 0.2, 0.25, 0.15], [1.0, 0.0, 0.0, 0.0, 0.0]])
    assert np.allclose(direction_integral(d, t, z, p), direction_integral(d, t, -z, p), rtol=1e-13, atol=1e-16)
    for k in range(2):
        expected, error = _by_quadrature(d, t[k], z[k], p[k])
        assert abs(direction_integral(d, t, z, p)[k] - expected) <= 10 * error + 1e-12


def _agree(a, b) -> bool:
    """``|a - b| <= 4 sqrt(se_a^2 + se_b^2)`` plus the stated numerical errors (the exact method's)."""
    return abs(a.value - b.value) <= 4 * math.hypot(a.standard_error, b.standard_error) + a.abs_error + b.abs_error


SETTINGS = [  # (d, n, L, sigma, w, contexts)
    (2, 50, 1.0, 0.3, 8.0, 4000),
    (4, 100, 0.5, 0.5, 2.0, 4000),
    (3, 30, 3.0, 0.0, 40.0, 4000),
    (5, 300, 1.0, 0.5, 6.0, 2000),
    (3, 1, 1.0, 1.0, 0.0, 40),  # below the control variates' minimum: the plain exact-direction average
]


@pytest.mark.parametrize("d, n, L, sigma, w, contexts", SETTINGS)
def test_the_estimator_agrees_with_the_exact_method_in_all_three_parts(d, n, L, sigma, w, contexts):
    problem = make_problem("relu", d, n, L, sigma)
    averaged = icl_loss(problem, w, method="averaged", contexts=contexts, rng=11)
    exact = icl_loss(problem, w, method="exact")
    assert averaged.info["form"] == "reduced, direction exact"
    for part in ("loss", "bias", "noise"):
        assert _agree(getattr(averaged, part), getattr(exact, part)), (
            part,
            getattr(averaged, part),
            getattr(exact, part),
        )


@pytest.mark.parametrize("d, n, L, sigma, w, contexts", SETTINGS[:3])
def test_the_estimator_agrees_with_the_naive_estimator(d, n, L, sigma, w, contexts):
    problem = make_problem("relu", d, n, L, sigma)
    averaged = icl_loss(problem, w, method="averaged", contexts=contexts, rng=12)
    naive = icl_loss(problem, w, method="naive", contexts=30000, rng=13)
    for part in ("loss", "bias", "noise"):
        assert _agree(getattr(averaged, part), getattr(naive, part)), (
            part,
            getattr(averaged, part),
            getattr(naive, part),
        )
