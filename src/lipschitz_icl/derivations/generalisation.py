"""Theory numbers of Theorem 3.5 (registry group thm35): the error of a window on a test class it was not
pretrained for, the noise part at finite ``n``, the Lipschitz envelope and the cost of a mismatched window.

* Mismatch: with ``E(w) = b w^-p + c w^beta / n`` minimised at ``w*`` (first-order condition
  ``p b w^-p = beta c w^beta / n``), ``E(lambda w*)/E(w*) = (beta lambda^-p + p lambda^beta)/(beta + p)``
  (:func:`mismatch_ratio_expr`, derived symbolically); pretraining at ``L'`` gives ``lambda = (L'/L)^(2 alpha)``
  at leading order.
* Noise part: the weights do not depend on the task, so on every task it is
  ``sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)`` (``R_d`` exact, :mod:`lipschitz_icl.derivations.sphere_asymptotics`;
  ``c_q`` :func:`lipschitz_icl.derivations.window_law.noise_finite_n_leading`) (:func:`noise_series`).
* Lipschitz envelope: for weights ``p >= 0`` summing to one and an ``L``-Lipschitz task,
  ``bias_c <= L^2 sum_i p_i ||x_i - q||^2`` (Jensen), whose large-``n`` mean is ``2 L^2 (1 - A_d(w))``
  (:func:`envelope_bias`).
* Error of a window on a class: exact quadrature for the affine and relu classes (:mod:`lipschitz_icl.exact.route`),
  ``L^2 b_k w^-2 + noise`` for the cosine class (bias at leading order,
  :func:`lipschitz_icl.derivations.window_law.cosine_bias_leading`) (:func:`class_error`).

:func:`document` writes these up with their numbers at the settings of the thm35 claims (``derivations/
generalisation.md``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from lipschitz_icl.derivations import sphere_asymptotics as S
from lipschitz_icl.derivations import window_law as law
from lipschitz_icl.derivations.writeup import Approximate, Document, Formula, Step, Table

__all__ = [
    "mismatch_ratio_expr",
    "mismatch_ratio",
    "window_factor_expr",
    "noise_series",
    "envelope_bias",
    "class_error",
    "class_error_estimate",
    "class_rows",
    "SERIES",
    "DIMS",
    "FACTOR",
    "SAME_L",
    "document",
]

SERIES = ("derived", "first-order")
DIMS = (2, 3, 5)  # the dimensions of the thm35 claims' full grids
FACTOR = 10  # thm35.mismatch, mismatch-marked: pretraining at L' = L/FACTOR and FACTOR L
# thm35.same-l-classes: n (its grid), L and sigma (its design)
SAME_L: dict[str, Any] = {"n": 1000, "L": 1.0, "sigma": 0.5}
_lam, _p, _beta = sp.symbols("lambda p beta", positive=True)


@cache
def _mismatch_derivation() -> dict:
    """The steps of :func:`mismatch_ratio_expr`: ``E(w)``, its minimiser ``w*`` (SymPy's root of ``E'(w) = 0``)
    and ``E(lambda w*)/E(w*)`` simplified."""
    b, c, n, w = sp.symbols("b c n w", positive=True)
    energy = lambda x: b * x**-_p + c * x**_beta / n  # noqa: E731
    w_star = sp.solve(sp.Eq(sp.diff(energy(w), w), 0), w)[0]
    ratio = sp.simplify(
        sp.powsimp(sp.expand_power_base(energy(_lam * w_star) / energy(w_star), force=True), force=True)
    )
    return {"w": w, "energy": energy(w), "w_star": w_star, "ratio": ratio}


@cache
def mismatch_ratio_expr() -> sp.Expr:
    """``E(lambda w*)/E(w*)`` for ``E(w) = b w^-p + c w^beta / n`` at its minimiser ``w*``: substitute the
    first-order condition ``c w*^beta / n = (p/beta) b w*^-p`` and simplify; it is
    ``(beta lambda^-p + p lambda^beta)/(beta + p)`` (checked here symbolically)."""
    ratio = _mismatch_derivation()["ratio"]
    closed = (_beta * _lam**-_p + _p * _lam**_beta) / (_beta + _p)
    if sp.simplify(ratio - closed) != 0:
        raise ArithmeticError(f"mismatch ratio {ratio} is not {closed}")
    return closed


@cache
def window_factor_expr() -> sp.Expr:
    """``lambda = w*(L')/w*(L)`` under the window law ``w* = C (n L^2/sigma^2)^alpha``
    (:mod:`lipschitz_icl.derivations.window_law`): ``(L'/L)^(2 alpha)``, free of ``C``, ``n`` and ``sigma``."""
    C, alpha, L_prime = sp.symbols("C alpha L'", positive=True)
    window = lambda LL: C * (law.n * LL**2 / law.sigma**2) ** alpha  # noqa: E731
    return sp.simplify(sp.powsimp(sp.expand_power_base(window(L_prime) / window(law.L), force=True), force=True))


def mismatch_ratio(lam: float, p: float, beta: float) -> float:
    """:func:`mismatch_ratio_expr` as a float: ``(beta lambda^-p + p lambda^beta)/(beta + p)``."""
    return (beta * lam**-p + p * lam**beta) / (beta + p)


def noise_series(d: int, w: float, n: int, sigma: float, series: str = "derived") -> float:
    """The noise part at window ``w``: ``derived`` ``sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)``, ``first-order``
    ``sigma^2 R_d(w)/n``."""
    if series not in SERIES:
        raise ValueError(f"series must be one of {SERIES}, got {series!r}")
    first = sigma**2 * float(S.exact_collision_ratio(d, w)) / n
    if series == "first-order":
        return first
    pq, cq = law.noise_finite_n_leading(d)
    return first + sigma**2 * cq * w**pq / n**2


def envelope_bias(d: int, w: float, L: float) -> float:
    """Large-``n`` mean of the Lipschitz envelope of the bias, ``2 L^2 (1 - A_d(w))``."""
    return 2 * L**2 * float(1 - S.exact_tilted_mean(d, w))


def class_error(kind: str, d: int, *, n: int, L: float, sigma: float, w: float, frequency: float = 1.0) -> float:
    """The ICL error of the window ``w I`` on the class ``kind`` (``affine``, ``relu`` or ``cosine``) in dimension
    ``d``, with ``n`` context points, Lipschitz constant ``L`` and label noise ``sigma``: exact quadrature for
    ``affine`` and ``relu``; ``L^2 b_k w^-2 + sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)`` for ``cosine`` of frequency
    ``k = frequency``."""
    return class_error_estimate(kind, d, n=n, L=L, sigma=sigma, w=w, frequency=frequency)[0]


def class_error_estimate(
    kind: str, d: int, *, n: int, L: float, sigma: float, w: float, frequency: float = 1.0
) -> tuple[float, float]:
    """:func:`class_error` (same parameters) and its stated accuracy: the exact quadrature's error estimate
    (``affine``, ``relu``); ``0`` for the ``cosine`` formula (a closed form evaluated in doubles)."""
    if kind == "cosine":
        power, b = law.cosine_bias_leading(d, frequency)
        return L**2 * b * w**power + noise_series(d, w, n, sigma), 0.0
    from lipschitz_icl.exact.route import exact_loss
    from lipschitz_icl.problem import make_problem

    loss = exact_loss(make_problem(law.check_task(kind), d, n, L, sigma), w).loss
    return loss.value, loss.abs_error


# ----------------------------------------------------------------------------- the document
def _exact_window(task: str, dim: int) -> Approximate:
    """The exact optimum ``w*`` of ``task`` at :data:`SAME_L`, its accuracy the half-width of the search's interval
    (refused if the search stopped at its bound)."""
    from lipschitz_icl.optimum import wstar
    from lipschitz_icl.problem import make_problem

    result = wstar(make_problem(task, dim, SAME_L["n"], SAME_L["L"], SAME_L["sigma"]), "exact")
    if result.at_search_bound:
        raise ArithmeticError(f"the exact w* search for {task}, d={dim} stopped at its bound")
    return Approximate(result.w_star.value, 0.5 * (result.ci_high - result.ci_low))


def _error_at(kind: str, dim: int, window: Approximate) -> Approximate:
    """:func:`class_error` of the class ``kind`` at the window ``w I`` with its accuracy: the quadrature's error plus
    the window's accuracy carried through ``E(w) = b w^-p + c w^beta/n``, ``|d log E / d log w| <= max(p, beta)``
    (``p`` the class's bias power, ``beta = (d-1)/2`` the noise power)."""
    value, error = class_error_estimate(kind, dim, n=SAME_L["n"], L=SAME_L["L"], sigma=SAME_L["sigma"], w=window.value)
    if kind == "cosine":
        bias_power = law.cosine_bias_leading(dim, 1.0)[0]
    else:
        bias_power = law.bias_leading(kind, dim)[0]
    slope = max(abs(float(bias_power)), float(law.noise_leading(dim)[0]))
    return Approximate(value, error + slope * window.accuracy / window.value * abs(value))


def _mismatch_rows() -> tuple:
    """``(d, L'/L, alpha, lambda exact, lambda, ratio)`` for affine pretraining at ``L/FACTOR`` and ``FACTOR L``:
    :func:`mismatch_ratio_expr` at ``p``, ``beta`` of the affine class and ``lambda = FACTOR^(-+2 alpha)``."""
    alpha, p = law.optimum_exprs("affine")["alpha"], law.bias_leading_expr("affine")[0]
    beta = law.noise_leading_expr()[0]
    rows = []
    for dim in DIMS:
        for label, sign in ((f"1/{FACTOR}", -1), (f"{FACTOR}", +1)):
            lam = window_factor_expr().subs(
                {
                    sp.Symbol("L'", positive=True): sp.Integer(FACTOR) ** sign,
                    law.L: 1,
                    sp.Symbol("alpha", positive=True): alpha.subs(law.d, dim),
                }
            )
            ratio = mismatch_ratio_expr().subs({_lam: lam, _p: p, _beta: beta.subs(law.d, dim)})
            rows.append((dim, label, alpha.subs(law.d, dim), lam, float(sp.N(lam, 20)), float(sp.N(ratio, 20))))
    return tuple(rows)


def class_rows(dim: int) -> tuple:
    """``(d, class, w* affine, w* relu, ratio)`` per Figure 5 class at dimension ``dim``: :func:`class_error` at the
    relu window over that at the affine window, each number an
    :class:`~lipschitz_icl.derivations.writeup.Approximate` with its accuracy (exact quadratures and searches:
    :func:`_exact_window`, :func:`_error_at`)."""
    ws = {task: _exact_window(task, dim) for task in law.TASKS}
    rows = []
    for label, kind in (("affine", "affine"), ("relu", "relu"), ("cosine-1", "cosine")):
        at_affine = _error_at(kind, dim, ws["affine"])
        at_relu = _error_at(kind, dim, ws["relu"])
        ratio = at_relu.value / at_affine.value
        accuracy = abs(ratio) * (at_relu.accuracy / abs(at_relu.value) + at_affine.accuracy / abs(at_affine.value))
        rows.append((dim, label, ws["affine"], ws["relu"], Approximate(ratio, accuracy)))
    return tuple(rows)


def _steps() -> tuple:
    m = _mismatch_derivation()
    w, n, L, sigma = m["w"], law.n, law.L, law.sigma
    E, R_d = sp.Function("E"), sp.Function("R_d")(w)
    q_power, c_q = law.noise_finite_n_leading_expr()
    b_cos = law.cosine_bias_leading_expr()
    noise = sigma**2 * (R_d / n + sp.Symbol("c_q") * w**q_power / n**2)
    envelope = 2 * L**2 * S.by_powers(S.one_minus_tilted_mean_series(2), -1, 2)
    return (
        Step(
            "The optimum of a two-power error",
            "At leading order in `1/w` the error of the window `w I` on its "
            "pretraining class is `E(w) = b w^-p + c w^beta/n` (window_law.md: `p = 2` affine, `3/2` relu; "
            "`beta = (d-1)/2`). SymPy solves `E'(w) = 0`:",
            (Formula(E(w), m["energy"]), Formula(sp.Symbol("w^*"), m["w_star"])),
        ),
        Step(
            "The cost of a mismatched window",
            "`E(lambda w*)/E(w*)` with the first-order condition substituted "
            "and simplified; its difference from the closed form below simplifies to 0 (`mismatch_ratio_expr`). "
            "It is 1 at `lambda = 1` and larger for every other `lambda`, whatever `b`, `c` and `n` (a weighted "
            "arithmetic mean of `lambda^-p` and `lambda^beta`, whose weighted geometric mean is 1):",
            (Formula(E(_lam * sp.Symbol("w^*")) / E(sp.Symbol("w^*")), mismatch_ratio_expr()),),
        ),
        Step(
            "The window of a mismatched pretraining",
            "Pretraining at `L'` instead of `L` gives the window "
            "`w*(L')`; with the window law `w* = C (n L^2/sigma^2)^alpha` the factor is free of `C`, `n` and "
            "`sigma`:",
            (Formula(_lam, window_factor_expr()),),
        ),
        Step(
            "The noise part on any task",
            "The softmax weights do not depend on the task, so the noise part is "
            "the same on every test task: `sigma^2 E sum_i p_i^2` with `R_d = Phi_d(2w)/Phi_d(w)^2` exact "
            "(sphere_asymptotics.md) and the `1/n^2` term of the delta method at leading order (window_law.md); "
            "`first-order` drops the second term:",
            (Formula(sp.Symbol("N(w)"), noise), Formula(sp.Symbol("c_q"), c_q)),
        ),
        Step(
            "The Lipschitz envelope",
            "For weights `p_i >= 0` summing to one and an `L`-Lipschitz task, "
            "`|sum_i p_i f(x_i) - f(q)| <= L sum_i p_i ||x_i - q||`, so by Jensen the bias of a context is at most "
            "`L^2 sum_i p_i ||x_i - q||^2` whatever the task. Its large-`n` mean is "
            "`2 L^2 (1 - A_d(w))` (`||x - q||^2 = 2 - 2t`), of order `L^2 (d-1)/w`: with `w* ~ C rho^alpha` the "
            "error on every `L`-Lipschitz task falls at least as `n^-alpha`, the pretraining class's own rate "
            "`n^-(p alpha)` being faster:",
            (Formula(2 * L**2 * (1 - sp.Function("A_d")(w)), envelope, r"\sim"),),
        ),
        Step(
            "A window on another class",
            "The error of `w I` on a class it was not pretrained for: exact "
            "quadrature for the affine and relu classes (`lipschitz_icl.exact.route`), and for the cosine class of "
            "frequency `k` the leading-order bias (window_law.md) plus the noise part above:",
            (Formula(sp.Function(r"E_{\cos}")(w), L**2 * b_cos[1] * w ** -b_cos[0] + noise),),
        ),
    )


def document() -> Document:
    """The derivation written up (:mod:`lipschitz_icl.derivations.writeup`), every formula computed here."""
    rates = tuple(
        (
            task,
            dim,
            law.optimum_exprs(task)["alpha"].subs(law.d, dim),
            law.window_law(task, dim)[0],
            -law.min_error_law(task, dim)[0],
        )
        for task in law.TASKS
        for dim in DIMS
    )
    q_power, c_q = law.noise_finite_n_leading_expr()
    noise_rows = tuple(
        (
            dim,
            *law.noise_leading(dim)[1:],
            int(q_power.subs(law.d, dim)),
            c_q.subs(law.d, dim),
            law.noise_finite_n_leading(dim)[1],
        )
        for dim in DIMS
    )
    return Document(
        name="generalisation",
        title="Theorem 3.5: a window on tasks it was not pretrained for, and the cost of a mismatched L",
        summary="the cost `(beta lambda^-p + p lambda^beta)/(beta + p)` of a window `lambda` times the optimum, "
        "`lambda = (L'/L)^(2 alpha)` for a mismatched `L'`; the task-free noise part; the Lipschitz envelope; "
        "a window's error on another class",
        paper="Theorem 3.5 and the Section 3.2 text on Figure 5",
        claims=(
            "thm35.generalisation",
            "thm35.envelope",
            "thm35.noise-part",
            "thm35.mismatch",
            "thm35.mismatch-marked",
            "thm35.same-l-classes",
        ),
        used_by=("lipschitz_icl.claims.thm35",),
        statement=Step(
            "",
            "A window `lambda w*` instead of the optimum `w*` of the error `b w^-p + c w^beta/n` costs "
            "the factor below; pretraining at `L'` instead of `L` gives `lambda = (L'/L)^(2 alpha)` at "
            "leading order. The noise part is the same on every task, and on every `L`-Lipschitz task the "
            "bias is at most the Lipschitz envelope.",
            (
                Formula(
                    sp.Function("E")(_lam * sp.Symbol("w^*")) / sp.Function("E")(sp.Symbol("w^*")),
                    mismatch_ratio_expr(),
                ),
                Formula(_lam, window_factor_expr()),
            ),
        ),
        assumptions=(
            "`x_i` and `q` uniform on `S^(d-1)`, `M = w I`, label noise of variance `sigma^2`; the windows "
            "are pretrained on the affine or relu class (window_law.md).",
            "The mismatch ratio is the leading order in `1/w` and `1/n` (the two-power error of "
            "window_law.md); the noise part keeps `R_d` exact and the `1/n^2` term at leading order.",
            "Test tasks are `L`-Lipschitz on the sphere (the probes of `lipschitz_icl.estimators.probes`).",
        ),
        steps=_steps(),
        results=(
            Step(
                "The cost of a mismatched L",
                f"Affine pretraining (`p = 2`, `beta = (d-1)/2`, `alpha = 2/(d+3)`) at "
                f"`L' = L/{FACTOR}` and `{FACTOR} L` (thm35.mismatch: the ratio is above 1, so the mismatched error "
                "is larger; thm35.mismatch-marked asks a factor `marked_factor` where this ratio is at least "
                "`marked_margin x marked_factor`); the ratio does not depend on `n`:",
                (),
                Table(("d", "L'/L", "alpha exact", "lambda exact", "lambda", "E(lambda w*)/E(w*)"), _mismatch_rows()),
            ),
            Step(
                "The envelope rate and the own-class rate",
                "thm35.generalisation bounds the local slope of the "
                "error in `log n` by `-alpha` (the envelope rate); its rival 'the pretraining class's own rate' is "
                "`-p alpha` (window_law.md):",
                (),
                Table(("class", "d", "alpha exact", "alpha", "p alpha"), rates),
            ),
            Step(
                "The noise part",
                "`c_R` (`R_d ~ c_R w^((d-1)/2)`) and the `1/n^2` term `c_q w^(d-1)/n^2` per "
                "dimension (thm35.noise-part evaluates the series at the exact `w*`):",
                (),
                Table(("d", "c_R", "1/n^2 power", "c_q exact", "c_q"), noise_rows),
            ),
            Step(
                "Same L, other class",
                f"thm35.same-l-classes: the error on the Figure 5 classes at the exact relu "
                f"window over that at the exact affine window (`n = {SAME_L['n']}`, `L = {SAME_L['L']:g}`, "
                f"`sigma = {SAME_L['sigma']:g}`):",
                (),
                Table(
                    ("d", "test class", "w* affine", "w* relu", "E(relu window)/E(affine window)"),
                    tuple(row for dim in DIMS for row in class_rows(dim)),
                ),
            ),
        ),
        exactness="the mismatch ratio, the window factor, `alpha`, `p alpha`, `c_R` and `c_q` are exact symbolic "
        "expressions (evaluated with `sympy.N` at 20 digits, printed to 12 significant digits); the last "
        "table comes from exact quadratures and searches of `w*`, each number printed to the digits its stated "
        "accuracy warrants (the search's interval for `w*`, about `3e-6` relative; for the ratio the quadratures' "
        "error estimates plus the windows' accuracy carried through the error's powers of `w`): its last digit can "
        "differ between machines, which `lipschitz-icl derivations --check` allows within that accuracy.",
    )
