"""Second-order delta method for the softmax-weighted average: the large-``n`` loss and its ``1/n`` term.

With ``e_i = exp(w t_i)`` i.i.d. and ``h_i = h(x_i)``, the attention output is a ratio of means,

    sum_i p_i h_i = A / S,   A = (1/n) sum_i e_i h_i,   S = (1/n) sum_i e_i.

Expanding ``A^2 / S^2`` to second order about ``(a, s) = (E[e h], E[e])`` and taking expectations
(``Var A = Var(e h)/n`` etc.) gives, with ``r = a/s``,

    E[(A/S)^2] = r^2 + (Var(eh) - 4 r Cov(eh, e) + 3 r^2 Var(e)) / (n s^2) + O(n^-2)
               = r^2 + (E[e^2 (h - r)^2] - 2 r E[e^2 (h - r)]) / (n s^2) + O(n^-2),

and, with ``B = (1/n) sum_i e_i^2``, ``E[sum_i p_i^2] = E[B/S^2]/n = E[e^2] / (n s^2) + O(n^-2)``.
Since ``E[e^2 g(t)] / s^2 = R_d(w) E_2w[g]`` with ``R_d(w) = Phi_d(2w)/Phi_d(w)^2``, these are the
formulas :mod:`lipschitz_icl.loss.asymptotic` evaluates.  Dropped: terms of order ``1/n^2`` (third and
fourth central moments of ``(A, S)``); they are small once ``n / R_d(w)``, the effective number of
context points in the window, is large.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from lipschitz_icl.derivations.writeup import Document, Formula, Step

__all__ = ["ratio_square_expansion", "ratio_square_by_moments", "collision_expansion", "check_identities", "document"]

# Symbols: means a = E[eh], s = E[e]; raw second moments m_hh = E[e^2 h^2], m_h = E[e^2 h], m_e = E[e^2].
a, s, n = sp.symbols("a s n", positive=True)
m_hh, m_h, m_e = sp.symbols("m_hh m_h m_e", real=True)
dA, dS = sp.symbols("dA dS", real=True)


def _ratio_square_taylor() -> sp.Poly:
    """``(a + dA)^2 / (s + dS)^2`` to second order in ``(dA, dS)``, as a polynomial in ``(dA, dS)``."""
    g = (a + dA) ** 2 / (s + dS) ** 2
    eps = sp.Symbol("eps")
    series = sp.series(g.subs({dA: eps * dA, dS: eps * dS}), eps, 0, 3).removeO().subs(eps, 1)
    return sp.Poly(sp.expand(series), dA, dS)


def _deviation_moments() -> dict:
    """``E[dA^i dS^j]`` for ``i + j <= 2`` (means of i.i.d. averages: the second moments are ``O(1/n)``)."""
    var_A = (m_hh - a**2) / n
    cov = (m_h - a * s) / n
    var_S = (m_e - s**2) / n
    return {(0, 0): 1, (1, 0): 0, (0, 1): 0, (2, 0): var_A, (1, 1): cov, (0, 2): var_S}


@cache
def ratio_square_expansion() -> sp.Expr:
    """``E[(A/S)^2]`` to order ``1/n`` from the Taylor expansion of ``A^2/S^2`` in ``(dA, dS)``."""
    poly, moments = _ratio_square_taylor(), _deviation_moments()
    total = sum(coeff * moments[monom] for monom, coeff in zip(poly.monoms(), poly.coeffs()))
    return sp.simplify(total)


@cache
def ratio_square_by_moments() -> sp.Expr:
    """The form used by the code: ``r^2 + (E[e^2 (h-r)^2] - 2 r E[e^2 (h-r)]) / (n s^2)``, ``r = a/s``."""
    r = a / s
    e2_dev2 = m_hh - 2 * r * m_h + r**2 * m_e
    e2_dev = m_h - r * m_e
    return r**2 + (e2_dev2 - 2 * r * e2_dev) / (n * s**2)


@cache
def collision_expansion() -> sp.Expr:
    """``E[sum_i p_i^2] = E[B/S^2]/n`` to order ``1/n``: ``E[e^2]/(n s^2)`` (the next term is
    ``O(1/n^2)``)."""
    dB = sp.Symbol("dB")
    eps = sp.Symbol("eps")
    g = (m_e + eps * dB) / (s + eps * dS) ** 2
    leading = sp.series(g, eps, 0, 1).removeO()
    return sp.simplify(leading / n)


def check_identities() -> bool:
    """True when the Taylor result and the code's form agree identically (symbolic difference 0)."""
    return sp.simplify(sp.expand(ratio_square_expansion() - ratio_square_by_moments())) == 0


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    expect = sp.Function("E")
    moments = _deviation_moments()
    lhs = expect(sp.Symbol("A") ** 2 / sp.Symbol("S") ** 2)
    i = sp.Symbol("i", integer=True)
    collision = expect(sp.Sum(sp.IndexedBase("p")[i] ** 2, (i, 1, n)))
    moment_formulas = tuple(Formula(expect(dA**i * dS**j), moments[(i, j)]) for (i, j) in sorted(moments) if i + j > 0)
    return Document(
        name="ratio_expansion",
        title="The 1/n term of the softmax average: a second-order delta method",
        summary="`E[(A/S)^2]` and `E[sum_i p_i^2]` to order `1/n` for the softmax-weighted average, the formulas "
        "the `asymptotic` loss method evaluates",
        paper="the large-`n` analysis behind Lemmas C.3-C.9 (not stated there at order `1/n`)",
        claims=(),
        used_by=("lipschitz_icl.loss.asymptotic",),
        statement=Step(
            "",
            "With `e_i = exp(w t_i)` i.i.d. and `h_i = h(x_i)`, the attention output is a ratio of "
            "means `A/S`, `A = (1/n) sum_i e_i h_i`, `S = (1/n) sum_i e_i`, with means `a = E[e h]`, "
            "`s = E[e]` and raw moments `m_hh = E[e^2 h^2]`, `m_h = E[e^2 h]`, `m_e = E[e^2]`. To order "
            "`1/n`:",
            (Formula(lhs, ratio_square_expansion()), Formula(collision, collision_expansion())),
        ),
        assumptions=(
            "The context points are i.i.d., so `(A, S)` are means of `n` i.i.d. pairs.",
            "Terms of order `1/n^2` (third and fourth central moments of `(A, S)`) are dropped; they are "
            "small once `n / R_d(w)`, the effective number of points in the window, is large.",
        ),
        steps=(
            Step(
                "Taylor expansion",
                "`A = a + dA`, `S = s + dS`; `A^2/S^2` to second order in `(dA, dS)`:",
                (Formula(sp.Symbol("A") ** 2 / sp.Symbol("S") ** 2, _ratio_square_taylor().as_expr(), r"\approx"),),
            ),
            Step(
                "The moments of the deviations",
                "The first moments vanish; the second are those of means of `n` i.i.d. terms:",
                moment_formulas,
            ),
            Step(
                "Taking expectations",
                "Each monomial replaced by its moment and the sum simplified:",
                (Formula(lhs, ratio_square_expansion()),),
            ),
            Step(
                "The form the code evaluates",
                "With `r = a/s` the same quantity is written with "
                "`E[e^2 (h - r)^2]` and `E[e^2 (h - r)]` (no cancellation); the difference of the two forms "
                f"simplifies to 0 (`check_identities()` returns {check_identities()}).",
                (Formula(lhs, ratio_square_by_moments()),),
            ),
            Step(
                "The collision term",
                "`E[sum_i p_i^2] = E[B/S^2]/n` with `B = (1/n) sum_i e_i^2`; its leading term:",
                (Formula(collision, collision_expansion()),),
            ),
        ),
        results=(
            Step(
                "The 1/n expansions",
                "Since `E[e^2 g(t)] / s^2 = R_d(w) E_2w[g]` with "
                "`R_d(w) = Phi_d(2w)/Phi_d(w)^2`, these are the formulas `lipschitz_icl.loss.asymptotic` evaluates.",
                (Formula(lhs, ratio_square_by_moments()), Formula(collision, collision_expansion())),
            ),
        ),
        exactness="every result is an exact symbolic expression (no numbers); the truncation at order `1/n` is "
        "the only approximation.",
    )


if __name__ == "__main__":  # pragma: no cover
    print("E[(A/S)^2] =", ratio_square_expansion())
    print("code form  =", ratio_square_by_moments())
    print("identical  :", check_identities())
    print("E[sum p^2] =", collision_expansion())
