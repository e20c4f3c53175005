"""The composite Gauss-Legendre rule (lipschitz_icl.quadrature)."""

import itertools
import math

import numpy as np
import pytest

from lipschitz_icl.quadrature import composite_edges, composite_rule, gauss_legendre, panel_rule
from lipschitz_icl.validation import ParameterError


def monomial_integral(k: int) -> float:
    """``int_(-1)^1 x^k dx``."""
    return 0.0 if k % 2 else 2.0 / (k + 1)


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 16, 24])
def test_the_reference_rule_is_exact_to_degree_2m_minus_1_and_not_beyond(m):
    x, g = gauss_legendre(m)
    for k in range(2 * m):
        assert g @ x**k == pytest.approx(monomial_integral(k), abs=1e-14)
    # degree 2m: the error is (2^(2m+1) (m!)^4 / ((2m+1) ((2m)!)^3)) (2m)! > 0 (checked above rounding)
    error = 2.0 ** (2 * m + 1) * math.factorial(m) ** 4 / ((2 * m + 1) * math.factorial(2 * m) ** 2)
    if error > 1e-10:
        assert monomial_integral(2 * m) - g @ x ** (2 * m) == pytest.approx(error, rel=1e-9)


def test_reference_rules_are_cached_and_read_only():
    x, g = gauss_legendre(12)
    assert gauss_legendre(12)[0] is x
    with pytest.raises(ValueError):
        x[0] = 0.0
    assert np.all(np.diff(x) > 0) and g.sum() == pytest.approx(2.0, rel=1e-15)


@pytest.mark.parametrize("m", [2, 4, 7])
def test_panels_are_exact_for_piecewise_polynomials_of_degree_2m_minus_1(m):
    """``|x - 1.1|^(2m-1)`` on ``[0, 2]``: exact when 1.1 is an edge, not otherwise."""
    p = 2 * m - 1
    exact = (1.1 ** (p + 1) + 0.9 ** (p + 1)) / (p + 1)
    nodes, weights = panel_rule([0.0, 0.3, 1.1, 2.0], m)
    assert weights @ np.abs(nodes - 1.1) ** p == pytest.approx(exact, rel=1e-14)
    assert nodes.shape == weights.shape == (3 * m,)
    nodes, weights = panel_rule([0.0, 0.3, 2.0], m)
    assert abs(weights @ np.abs(nodes - 1.1) ** p / exact - 1) > 1e-6


@pytest.mark.parametrize("m", [2, 3])
def test_composite_rule_converges_like_h_to_the_2m_on_a_smooth_function(m):
    """``int_0^2 e^x dx``: halving the panels divides the error by ``2^(2m)`` in the limit (the error is
    ``c_m h^(2m) int f^(2m)`` plus higher orders)."""
    errors = []
    for panels in (1, 2, 4, 8, 16):
        nodes, weights = composite_rule(0.0, 2.0, m, panels=panels)
        errors.append(abs(weights @ np.exp(nodes) - math.expm1(2.0)))
    ratios = [a / b / 2 ** (2 * m) for a, b in itertools.pairwise(errors)]
    assert all(0.9 < r < 1.0 for r in ratios) and np.all(np.diff(ratios) > 0), ratios
    assert ratios[-1] == pytest.approx(1.0, abs=0.005)


def test_breakpoints_are_edges_and_each_piece_gets_its_panels():
    edges = composite_edges(0.0, math.pi, panels=(4, 6, 4), breakpoints=(1.0, 2.0))
    assert edges.size == 4 + 6 + 4 + 1
    assert 1.0 in edges and 2.0 in edges and edges[0] == 0.0 and edges[-1] == math.pi
    widths = np.diff(edges)
    assert (
        np.allclose(widths[:4], 0.25)
        and np.allclose(widths[4:10], 1 / 6)
        and np.allclose(widths[10:], (math.pi - 2) / 4)
    )
    nodes, weights = composite_rule(0.0, math.pi, 5, panels=(4, 6, 4), breakpoints=(1.0, 2.0))
    assert weights.sum() == pytest.approx(math.pi, rel=1e-15)
    # a kink at a breakpoint is integrated exactly: |x - 1| on [0, pi]
    assert weights @ np.abs(nodes - 1.0) == pytest.approx(0.5 + (math.pi - 1) ** 2 / 2, rel=1e-14)


def test_empty_pieces_and_repeated_breakpoints_are_dropped():
    edges = composite_edges(0.0, 2.0, panels=3, breakpoints=(0.0, 1.0, 1.0, 2.0))
    assert np.array_equal(edges, np.unique(np.concatenate([np.linspace(0, 1, 4), np.linspace(1, 2, 4)])))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gauss_legendre(0), "order"),
        (lambda: gauss_legendre(2.5), "order"),
        (lambda: gauss_legendre("8"), "order"),
        (lambda: gauss_legendre(10**6), "order"),
        (lambda: panel_rule([0.0], 4), "edges"),
        (lambda: panel_rule([0.0, 1.0, 1.0], 4), "edges"),
        (lambda: panel_rule([1.0, 0.0], 4), "edges"),
        (lambda: panel_rule([0.0, np.nan], 4), "edges"),
        (lambda: panel_rule([[0.0, 1.0]], 4), "edges"),
        (lambda: panel_rule(["a", "b"], 4), "edges"),
        (lambda: composite_rule(1.0, 1.0, 4), "b"),
        (lambda: composite_rule(2.0, 1.0, 4), "b"),
        (lambda: composite_rule(0.0, np.inf, 4), "b"),
        (lambda: composite_rule(0.0, 1.0, 4, panels=0), "panels"),
        (lambda: composite_rule(0.0, 1.0, 4, panels=(2, 2)), "panels"),
        (lambda: composite_rule(0.0, 1.0, 4, breakpoints=(1.5,)), "breakpoints"),
        (lambda: composite_rule(0.0, 1.0, 4, breakpoints=(0.7, 0.2)), "breakpoints"),
        (lambda: composite_rule(0.0, 1.0, 4, breakpoints=(np.nan,)), "breakpoints"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(call, name):
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.name == name
