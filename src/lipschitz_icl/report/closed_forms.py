"""Closed forms of the derived constants, printed by SymPy from :mod:`lipschitz_icl.derivations`.

A constants row (:mod:`lipschitz_icl.report.constants`) names its symbol and setting; where
:mod:`lipschitz_icl.derivations` derives that constant symbolically, :func:`closed_form` returns the
expression at the row's setting, simplified by SymPy (``b_d = 1/9`` for the affine class at ``d = 3``,
``c_R = sqrt(pi)`` at ``d = 2``), and :func:`closed_form_latex` its LaTeX -- only when its value equals
the row's theory value (relative :data:`AGREEMENT`), so a closed form is never printed beside a number it
does not produce.  Constants with closed forms: the window law's ``alpha`` and ``C_d``, the bias power
``p`` and constant ``b_d``, the noise power ``beta`` and constant ``c_R`` (Theorem 3.4's derivation,
:func:`lipschitz_icl.derivations.window_law.optimum_exprs`, for the affine and ReLU classes), the
linear-attention limits ``m*_inf = d`` and ``E_lin(inf)`` and the error ``E_lin(n)`` at a context size
(:mod:`lipschitz_icl.derivations.linear_attention`).
"""

from __future__ import annotations

import math
from functools import cache

__all__ = ["closed_form", "closed_form_latex", "AGREEMENT"]

AGREEMENT = 1e-9  # relative: a closed form is printed only when it evaluates to the row's theory value

# (claim key prefix, symbol) -> name in window_law.optimum_exprs (sign: -1 for "-p")
_WINDOW_LAW = {
    r"\alpha": ("alpha", 1),
    "C_d": ("C", 1),
    "C": ("C", 1),
    "-p": ("p", -1),
    "p": ("p", 1),
    "b_d": ("b", 1),
    "b": ("b", 1),
    r"\beta": ("beta", 1),
    "c_R": ("c_R", 1),
}
_NOISE_SYMBOLS = {r"\beta", "c_R"}


def _class_of(setting: dict) -> str | None:
    return next((str(setting[k]) for k in ("task", "kernel") if k in setting), None)


@cache
def _window_law_form(task: str, name: str, sign: int, dim: int):
    import sympy as sp

    from lipschitz_icl.derivations import window_law

    expr = window_law.optimum_exprs(task)[name]
    return sp.nsimplify(sp.simplify(sign * expr.subs(window_law.d, dim)))


@cache
def _linear_form(which: str, task: str, dim: int, L_value: float):
    import sympy as sp

    from lipschitz_icl.derivations import linear_attention

    if which == "m":
        return sp.Integer(dim)
    expr = linear_attention.class_limit(task).subs({linear_attention.d: dim, linear_attention.L: sp.nsimplify(L_value)})
    return sp.simplify(expr)


@cache
def _linear_error_at(task: str, dim: int, n_value: int, L_value: float, sigma_value: float):
    from lipschitz_icl.derivations import linear_attention

    return linear_attention.class_optimum_error(task, dim, n_value, L_value, sigma_value)


def closed_form(key: str, symbol: str, setting: dict):
    """The SymPy expression of the constant ``symbol`` of claim ``key`` at ``setting``, or ``None`` when
    the derivations hold none for it (module docstring)."""
    group = key.split(".")[0]
    task = _class_of(setting)
    try:
        dim = int(setting["d"])
    except (KeyError, TypeError, ValueError):
        return None
    if group in ("thm34", "regularity") and symbol in _WINDOW_LAW:
        if symbol in _NOISE_SYMBOLS and group == "regularity":  # there beta is the bias power
            name, sign = ("p", 1) if symbol == r"\beta" else _WINDOW_LAW[symbol]
        else:
            name, sign = _WINDOW_LAW[symbol]
        if task not in ("affine", "relu"):
            return None
        return _window_law_form(task, name, sign, dim)
    if key == "linear.cannot-adapt" and symbol == r"E_{\mathrm{lin}}(n)" and task in ("affine", "relu"):
        try:
            return _linear_error_at(task, dim, int(setting["n"]), float(setting["L"]), float(setting["sigma"]))
        except (KeyError, TypeError, ValueError):
            return None
    if key == "linear.cannot-adapt" and symbol.startswith("E_") and task in ("affine", "relu", "cosine"):
        if task == "cosine":
            return None  # the cosine limit holds a Bessel function of the frequency: printed numerically
        try:
            return _linear_form("E", task, dim, float(setting.get("L", 1.0)))
        except (TypeError, ValueError):
            return None
    if key == "linear.optimum" and symbol.startswith("m^*_") and "inf" in symbol:
        return _linear_form("m", task or "", dim, 1.0)
    return None


def closed_form_latex(key: str, symbol: str, setting: dict, theory: float | None) -> str | None:
    """LaTeX of :func:`closed_form` when it evaluates to ``theory`` (relative :data:`AGREEMENT`), else
    ``None``."""
    if theory is None or not math.isfinite(theory):
        return None
    expr = closed_form(key, symbol, setting)
    if expr is None:
        return None
    import sympy as sp

    try:
        value = float(sp.N(expr, 30))
    except (TypeError, ValueError):
        return None
    if not math.isclose(value, theory, rel_tol=AGREEMENT, abs_tol=1e-300):
        return None
    if expr.is_Integer or expr.is_Float:
        return None  # nothing beyond the number itself
    return sp.latex(expr)
