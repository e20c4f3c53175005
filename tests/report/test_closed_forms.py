"""Closed forms of the derived constants, printed by SymPy only where they give the theory value."""

from __future__ import annotations

import math

import pytest

from lipschitz_icl.derivations import window_law
from lipschitz_icl.report.closed_forms import closed_form, closed_form_latex


@pytest.mark.parametrize(
    "symbol, task, d, latex",
    [
        ("b_d", "affine", 2, r"\frac{1}{24}"),
        ("b_d", "affine", 3, r"\frac{1}{9}"),
        ("b_d", "affine", 5, r"\frac{4}{15}"),
        ("c_R", "affine", 2, r"\sqrt{\pi}"),
        ("c_R", "relu", 5, r"\frac{1}{6}"),
        ("C_d", "affine", 3, r"\frac{\sqrt[3]{6}}{3}"),
    ],
)
def test_the_window_law_constants_have_their_closed_forms(symbol, task, d, latex):
    name = {"b_d": "bias_constant", "c_R": "noise_constant", "C_d": "C"}[symbol]
    row = next(r for r in window_law.theory_table((d,)) if r["task"] == task)
    assert (
        closed_form_latex(
            "thm34.bias-noise" if symbol != "C_d" else "thm34.window-law", symbol, {"task": task, "d": d}, row[name]
        )
        == latex
    )


def test_a_closed_form_that_does_not_give_the_theory_value_is_not_printed():
    assert closed_form_latex("thm34.bias-noise", "b_d", {"task": "affine", "d": 3}, 0.12) is None
    assert closed_form_latex("thm34.bias-noise", "c_R", {"task": "affine", "d": 3}, 1.0) is None  # just "1"
    assert closed_form("thm34.bias-noise", "b_d", {"task": "cosine", "d": 3}) is None  # not derived here
    assert closed_form("thm34.bias-noise", "b_d", {"task": "affine"}) is None  # no d


def test_the_linear_limit_is_its_derived_value():
    expr = closed_form("linear.cannot-adapt", r"E_{\mathrm{lin}}(\infty)", {"task": "affine", "d": 3, "L": 1.0})
    assert math.isclose(float(expr), 1 / 3)


def test_the_linear_error_at_a_context_size_is_the_exact_rational_its_float_derivation_gives():
    """The cannot-adapt claim compares the error at its largest n with the derived E_lin(n) there (a row named
    for what it measures); its closed form is exact in n, L and sigma (affine, d = 3, n = 160: 2204/6399)."""
    from lipschitz_icl.derivations.linear_attention import linear_optimum

    setting = {"task": "affine", "d": 3, "n": 160, "L": 1.0, "sigma": 0.5}
    expr = closed_form("linear.cannot-adapt", r"E_{\mathrm{lin}}(n)", setting)
    assert str(expr) == "2204/6399"
    assert math.isclose(float(expr), linear_optimum("affine", 3, 160, 1.0, 0.5)[1], rel_tol=1e-15)
    assert closed_form("linear.cannot-adapt", r"E_{\mathrm{lin}}(n)", {**setting, "task": "cosine"}) is None
    assert closed_form("linear.cannot-adapt", r"E_{\mathrm{lin}}(n)", {"task": "affine", "d": 3}) is None  # no n
