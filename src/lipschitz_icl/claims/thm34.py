"""Theorem 3.4: the optimal window adapts to ``L``, ``sigma`` and ``n``; Lemma B.5 (isotropy); the
bias and noise parts of the loss (Assumption B.4, Lemmas C.3-C.9).  Registry: ``claims/thm34.toml``
(statements, rules, every design number, resolutions, alternatives).  ``M* = w* I``; ``w* = C (n L^2 /
sigma^2)^alpha (1 + k w0^-q + ...)``, the bias part ``~ w^-p`` and the noise part ``~ w^((d-1)/2) / n``, every
constant derived in :mod:`lipschitz_icl.derivations.window_law`.

Each measure function returns an :class:`~lipschitz_icl.gates.evidence.Outcome` whose ``decide`` is the
claim's rule on its measurements: ``w*`` and the loss parts from the exact quadrature
(:mod:`lipschitz_icl.exact.route`, intervals from its stated accuracy), minimiser probes from paired Monte Carlo
on common random numbers (:mod:`lipschitz_icl.estimators.minimiser`), trained matrices from the NumPy trainer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.derivations import window_law
from lipschitz_icl.estimators.law_points import (
    power_slope_points,
    secant_slope_interval,
    two_sided_constants,
    window_law_points,
)
from lipschitz_icl.estimators.loss_direction import part_direction
from lipschitz_icl.estimators.minimiser import MinimiserProbes
from lipschitz_icl.estimators.pretraining import mean_limits, scale_interval
from lipschitz_icl.estimators.trained_scale import scale_equivalence
from lipschitz_icl.gates.evidence import Outcome, Quantity, plot
from lipschitz_icl.loss.asymptotic import QUADRATURE_ACCURACY, asymptotic_terms
from lipschitz_icl.model import geometry
from lipschitz_icl.optimum import wstar, wstar_elasticities
from lipschitz_icl.problem import make_problem
from lipschitz_icl.runtime import sweep
from lipschitz_icl.runtime.trained import independent_runs

__all__ = ["isotropy", "trained_isotropy", "monotonicity", "window_scaling", "bias_noise_powers"]


def other_class(task: str) -> str:
    """The other class of Theorem 3.4 (affine <-> relu): its law is a competing statement."""
    return {"affine": "relu", "relu": "affine"}[task]


def _exact_wstar(task: str, d: int, n, L: float, sigma: float):
    """The exact ``w*`` of ``task`` at ``(d, n, L, sigma)`` (one piece of a sweep)."""
    return wstar(make_problem(task, d, n, L, sigma), "exact")


# ----------------------------------------------------------------------------- Lemma B.5: isotropy
def isotropy(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    directions: int,
    contexts: int,
    anisotropic_step: float,
    scale_step: float,
    scale_contexts: int,
    family_level: float,
) -> Outcome:
    """Lemma B.5: ``M = w* I`` (exact ``w*``) is a minimiser of the ICL loss: every perturbation raises it.

    ``sign`` rule on every paired difference of :class:`~lipschitz_icl.estimators.minimiser.MinimiserProbes`
    (Bonferroni at
    ``family_level``).  ``decide(shift, anisotropy)``: the same at the base ``e^shift w* (I + anisotropy sqrt(d) D_0)``
    (at ``w* I`` the anisotropic probes have no first-order term: the scale probes refute a wrong scale, ``+-D_0`` a
    wrong shape).
    """
    problem = make_problem(task, d, n, L, sigma)
    w = wstar(problem, "exact").w_star.value
    probes = MinimiserProbes.draw(
        problem,
        w,
        seed,
        count=directions,
        step=anisotropic_step,
        contexts=contexts,
        scale_step=scale_step,
        scale_contexts=scale_contexts,
        family_level=family_level,
    )
    decisions, diffs = probes.at(w)
    D0 = probes.directions[0][1]

    def decide(shift: float = 0.0, anisotropy: float = 0.0) -> decision.Decision:
        if anisotropy:
            base = w * (np.eye(d) + anisotropy * math.sqrt(d) * D0)
            return decision.combined("sign", probes.along(base, [D0, -D0])[0])
        return decision.combined("sign", probes.scale(math.exp(shift) * w)[0] if shift else decisions)

    quantities = tuple(
        Quantity.estimated(f"Delta L along {name}", e, probes.level, verdict=dec.verdict, note="must be > 0")
        for name, e, dec in zip(probes.names, diffs, decisions)
    )
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin="0 (every Delta L interval above zero)",
        rule=f"sign rule on paired task-averaged Monte Carlo differences, each interval at level {probes.level:.6g} "
        f"(Bonferroni): {2 * directions} anisotropic probes of size {anisotropic_step:g} ||w* I||_F ({contexts} "
        f"contexts), scale probes w* e^(+-{scale_step:g}) ({scale_contexts} contexts); w* = {w:.6g} exact.",
        extra={"w_star": w},
        figure=_probe_figure(quantities),
        points=len(quantities),  # "a minimiser over all M", evaluated along these probe moves only
    )


def _probe_figure(quantities) -> dict:
    """Each probe's ``Delta L`` with its interval, in probe order."""
    bands = {"y_low": [q.ci_low for q in quantities], "y_high": [q.ci_high for q in quantities]}
    x = list(range(1, len(quantities) + 1))
    return plot("scatter", x, [q.measured for q in quantities], "probe", r"$\Delta L$", **bands)


def trained_isotropy(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    runs: int,
    margin: float,
    shape_threshold: float,
    level: float,
    protocol: dict,
) -> Outcome:
    """Lemma B.5 on what training finds: from random anisotropic starts the trained ``M`` is isotropic and its scale
    ``tr(M)/d`` is the exact ``w*``.

    ``one-sided``: the ``level`` upper limit of the mean anisotropy over ``runs`` independent runs is below
    ``shape_threshold``; ``equivalence``: the ``level`` interval of ``mean tr(M)/d - w*`` (exact ``w*``,
    :func:`~lipschitz_icl.estimators.pretraining.scale_interval`) lies within ``+-margin w*``.  ``decide(change)``:
    the scale
    claimed to be ``(1 + change) w*``.
    """
    problem = make_problem(task, d, n, L, sigma)
    results = independent_runs(problem, seed, runs, **protocol)
    aniso = np.array([geometry.anisotropy(r.M) for _, r in results])
    _, _, a_high = mean_limits(aniso, level)
    shape = decision.one_sided(float(aniso.min()), a_high, shape_threshold, "<=")
    w_runs = [r.w_trained for _, r in results]
    exact = wstar(problem, "exact")
    w0 = exact.w_star.value

    def decide(change: float = 0.0) -> decision.Decision:
        scale = scale_equivalence(w_runs, exact, w0 * (1 + change), margin * w0, level)
        return decision.Decision(
            "equivalence", decision.combine([shape, scale]), f"shape: {shape.detail}; scale: {scale.detail}"
        )

    setting = {"task": task, "d": d, "n": n, "L": L, "sigma": sigma}
    difference = scale_interval(w_runs, exact, level=level)
    return Outcome(
        decide=decide,
        margin=f"+-{margin:g} w* on tr(M)/d; anisotropy <= {shape_threshold:g}",
        rule=f"{runs} independent trainer runs ({protocol}); one-sided: {level:g} upper limit of the mean anisotropy "
        f"<= {shape_threshold:g}; equivalence: {level:g} Welch interval of tr(M)/d - w* within +-{margin:g} w* "
        "(exact w*).",
        quantities=_trained_rows(
            aniso=aniso,
            a_high=a_high,
            shape=shape,
            threshold=shape_threshold,
            w_runs=w_runs,
            w0=w0,
            difference=difference,
            setting=setting,
        ),
    )


def _trained_rows(
    *,
    aniso: np.ndarray,
    a_high: float,
    shape: decision.Decision,
    threshold: float,
    w_runs: list[float],
    w0: float,
    difference: tuple[float, float],
    setting: dict,
) -> tuple[Quantity, Quantity]:
    """The rows of :func:`trained_isotropy`: the runs' mean anisotropy with its upper limit ``a_high`` (decision
    ``shape``, against ``threshold``), and ``tr(M)/d`` against ``w0`` with the interval ``difference`` of
    ``mean tr(M)/d - w0`` (a constant at ``setting``)."""
    low, high = difference
    return (
        Quantity(
            name="mean anisotropy of trained M (upper limit)",
            theory=0.0,
            measured=float(aniso.mean()),
            ci_high=a_high,
            verdict=shape.verdict,
            note=f"threshold {threshold}; runs {', '.join(f'{a:.4f}' for a in aniso)}",
        ),
        Quantity.within(
            "tr(M)/d vs w*",
            float(np.mean(w_runs)),
            (w0 + low, w0 + high),
            theory=w0,
            symbol=r"w^*",
            setting=setting,
            constant=True,
            note=f"difference interval [{low:+.4f}, {high:+.4f}]",
        ),
    )


# ----------------------------------------------------------------------------- monotonicity
def monotonicity(*, task: str, d: int, n0: int, L0: float, sigma0: float, factors: list) -> Outcome:
    """``w*`` increases with ``L`` and ``n`` and decreases with ``sigma`` (exact ``w*`` at ``factors`` of ``(n0, L0,
    sigma0)``).  ``sign`` rule on the interval of each local elasticity ``d log w*/d log(.)`` between consecutive
    factors (the exact ``w*``'s stated accuracy) on its predicted side.  ``decide(shift, direction)``: each elasticity
    claimed beyond ``shift`` on its predicted side (``direction = -1``: the opposite direction is claimed).
    """
    alpha, _ = window_law.window_law(task, d)
    parameters = (
        ("L", +1, 2 * alpha, lambda f: (n0, L0 * f, sigma0)),
        ("n", +1, alpha, lambda f: (int(round(n0 * f)), L0, sigma0)),
        ("sigma", -1, -2 * alpha, lambda f: (n0, L0, sigma0 * f)),
    )
    results = {
        name: [wstar(make_problem(task, d, *make(f)), "exact") for f in factors] for name, _, _, make in parameters
    }
    steps = {name: wstar_elasticities(factors, results[name]) for name in results}

    def signs(name: str, side: int, shift: float = 0.0) -> list[decision.Decision]:
        return [decision.sign(lo - side * shift, hi - side * shift, side) for lo, _, hi in steps[name]]

    def decide(shift: float = 0.0, direction: int = +1) -> decision.Decision:
        checks = [check for name, sgn, _, _ in parameters for check in signs(name, sgn * direction, shift)]
        return decision.combined("sign", checks)

    quantities = tuple(
        Quantity.within(
            f"d log w*/d log {name}",
            float(np.mean([m for _, m, _ in steps[name]])),
            (min(lo for lo, _, _ in steps[name]), max(hi for _, _, hi in steps[name])),
            theory=elasticity,
            verdict=decision.combined("sign", signs(name, sgn)).verdict,
            note="theory: leading-order elasticity; w* = " + ", ".join(f"{r.w_star.value:.5g}" for r in results[name]),
        )
        for name, sgn, elasticity, _ in parameters
    )
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin="0 (each elasticity interval on its predicted side)",
        rule=f"sign rule on the interval of each local elasticity of the exact w* at factors {list(factors)} of "
        f"(n, L, sigma) = ({n0}, {L0:g}, {sigma0:g}); intervals from the exact w*'s stated accuracy.",
        figure=_monotonicity_figure(factors, results),
    )


def _monotonicity_figure(factors, results: dict) -> dict:
    """``w*`` over the factors on each parameter, relative to ``w*`` at the base point (the second factor)."""
    series = [
        {"label": name, "x": list(factors), "y": [r.w_star.value / ws[1].w_star.value for r in ws]}
        for name, ws in results.items()
    ]
    return {
        "kind": "loglog",
        "series": series,
        "xlabel": r"factor on $L$, $n$ or $\sigma$",
        "ylabel": r"$w^*$ / $w^*$ at the base point",
    }


# ----------------------------------------------------------------------------- the w* law
def _law(task: str, d: int) -> tuple:
    """``(alpha, C, q, k)``: the derived window law ``w* = C rho^alpha (1 + k w0^-q + ...)`` of ``task``."""
    return (*window_law.window_law(task, d), *window_law.wstar_correction(task, d))


def _laws(task: str, d: int) -> dict:
    """``name -> (alpha, C, q, k)``: the derived law of ``task`` with its next-order term, and the
    competing laws the registry's alternatives name (the other class's, the Lipschitz-envelope law)."""
    envelope = (*window_law.envelope_law(d), 1.0, 0.0)
    return {"derived": _law(task, d), "other-class": _law(other_class(task), d), "envelope": envelope}


def law_grid(
    task: str,
    d: int,
    n_grid,
    L: float,
    sigma: float,
    *,
    margin: float,
    reach: float,
    factor: float,
    n_max: float,
    w_max: float,
):
    """The exact ``w*`` on ``n_grid`` extended by ``factor`` in ``n`` while the derived ``|k w0^-q| >= reach margin``
    (``n <= n_max``, ``w0 <= w_max``): the grid depends only on the derived term, so its points are the pieces of one
    sweep (:func:`lipschitz_icl.runtime.sweep.map_pieces`).  Returns ``(n values, WStar results)``."""
    alpha, C, q, k = _law(task, d)

    def w0(n):
        """The leading-order window ``C (n L^2/sigma^2)^alpha``."""
        return C * (n * L**2 / sigma**2) ** alpha

    def next_order(n):
        """The derived next-order term ``k w0^-q``."""
        return k * w0(n) ** (-q)

    top = min(n_max, (w_max / C) ** (1 / alpha) * sigma**2 / L**2)
    grid = decision.extend_grid(n_grid, next_order, margin, factor=factor, x_max=max(top, *n_grid), reach=reach)
    pieces = [(task, d, n, L, sigma) for n in grid]
    return grid, sweep.map_pieces(_exact_wstar, pieces, desc=f"w* {task} d={d}", unit="n")


def _law_rows(task: str, d: int, *, grid, rho, results, verdict: str, margin: float) -> tuple:
    """The local slope of ``log w*`` over the two largest ``n`` and the reported rows of :func:`window_scaling`:
    the distance to the law at the largest ``n``, ``alpha``, ``C_d`` and the two-sided constants."""
    alpha, C, q, k = _law(task, d)
    ws = np.array([w.w_star.value for w in results])
    setting = {"task": task, "d": d}
    slope = float(np.log(ws[-1] / ws[-2]) / np.log(rho[-1] / rho[-2]))
    # the slope's range over the two exact w* in their stated intervals
    slope_range = secant_slope_interval(
        rho[-2], rho[-1], (results[-2].ci_low, results[-2].ci_high), (results[-1].ci_low, results[-1].ci_high)
    )
    last = window_law_points(rho[-1:], results[-1:], alpha=alpha, C=C, q=q, k=k)[0]
    C_low = results[-1].ci_low / rho[-1] ** alpha
    C_high = results[-1].ci_high / rho[-1] ** alpha
    c_lo, c_hi = two_sided_constants(rho, results, alpha)  # each (value, low, high), from each w*'s interval
    return slope, (
        Quantity.within(
            "w*/law - 1 at the largest n",
            0.5 * (last.low + last.high),
            (last.low, last.high),
            theory=last.next_order,
            verdict=verdict,
            note=f"theory: derived next-order term k w0^-q; margin +-{margin:g}",
        ),
        Quantity.within(
            "alpha: local slope d log w*/d log rho (largest two n)",
            slope,
            slope_range,
            theory=alpha,
            symbol=r"\alpha",
            setting=setting,
            constant=True,
            note=f"next-order effect {-alpha * q * k * (C * rho[-2] ** alpha) ** (-q):.2g}",
        ),
        Quantity.within(
            "C_d: w*/rho^alpha at the largest n",
            float(ws[-1] / rho[-1] ** alpha),
            (float(C_low), float(C_high)),
            theory=C,
            symbol="C_d",
            setting=setting,
            constant=True,
            note=f"w* = C_d rho^alpha (1 + k w0^-q), n = {grid[-1]:.3g}",
        ),
        Quantity.within(
            "c_lo: min over the grid of w*/rho^alpha",
            c_lo[0],
            c_lo[1:],
            note=f"over n in [{min(grid):.0e}, {max(grid):.0e}]; interval: min of the ends of each w*'s interval",
        ),
        Quantity.within(
            "c_hi: max over the grid of w*/rho^alpha",
            c_hi[0],
            c_hi[1:],
            note=f"over n in [{min(grid):.0e}, {max(grid):.0e}]; interval: max of the ends of each w*'s interval",
        ),
    )


def _law_record(grid, rho, results, slope: float, derived: tuple) -> tuple[dict, dict]:
    """The figure (``w*/(C rho^alpha)`` against ``1 + k w0^-q``) and the further numbers of :func:`window_scaling`."""
    alpha, C, q, k = derived
    ws = np.array([w.w_star.value for w in results])
    ratio = (ws / (C * rho**alpha)).tolist()
    next_order = [k * (C * r**alpha) ** (-q) for r in rho]
    labels = (r"$\rho = nL^2/\sigma^2$", r"$w^*/(C_d\,\rho^\alpha)$")
    figure = plot("semilogx", rho.tolist(), ratio, *labels, theory_y=[1 + t for t in next_order])
    series = {"rho": rho.tolist(), "w_star": ws.tolist(), "ratio": ratio, "next_order": next_order}
    return figure, {"derived": {"alpha": alpha, "C": C}, **series, "n_grid": list(grid), "slope": slope}


def window_scaling(
    *,
    task: str,
    d: int,
    n_grid: list,
    L: float,
    sigma: float,
    asymptotic_from: float,
    margin: float,
    reach: float,
    extension_factor: float,
    n_max: float,
    w_max: float,
) -> Outcome:
    """Theorem 3.4's law ``w* = C (n L^2/sigma^2)^alpha (1 + o(1))`` against the exact ``w*``.

    ``asymptotic`` rule on the points ``n >= asymptotic_from`` of the grid extended by :func:`law_grid`: the distance
    ``w*/w0 - 1`` (interval: the exact ``w*``'s stated accuracy) must follow ``k w0^-q`` and lie within ``+-margin``
    at the largest ``n``; a ``w*`` at its search bound makes it inconclusive.  ``decide(shift, scale_change, law)``:
    the law ``(1 + scale_change) C rho^(alpha + shift)``, or a competing law of :func:`_laws`.
    """
    laws = _laws(task, d)
    grid, results = law_grid(
        task, d, n_grid, L, sigma, margin=margin, reach=reach, factor=extension_factor, n_max=n_max, w_max=w_max
    )
    rho = np.array([n * L**2 / sigma**2 for n in grid])
    use = [i for i, n in enumerate(grid) if n >= asymptotic_from]
    r_use = rho[use]
    w_use = [results[i] for i in use]
    stuck = [n for n, w in zip(grid, results) if w.at_search_bound]

    def decide(shift: float = 0.0, scale_change: float = 0.0, law: str = "derived") -> decision.Decision:
        if stuck:
            return decision.Decision("asymptotic", "inconclusive", f"w* at its search bound for n = {stuck}")
        a, c, qq, kk = laws[law]
        points = window_law_points(r_use, w_use, alpha=a, C=c, q=qq, k=kk, shift=shift, scale=1 + scale_change)
        return decision.asymptotic(points, margin)

    slope, quantities = _law_rows(task, d, grid=grid, rho=rho, results=results, verdict=decide().verdict, margin=margin)
    figure, extra = _law_record(grid, rho, results, slope, laws["derived"])
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin=f"+-{margin:g} on w*/law - 1",
        rule=f"asymptotic rule on w*/(C rho^alpha) - 1 for n >= {asymptotic_from:g}, grid n = "
        f"{[float(f'{n:.3g}') for n in grid]} (extended by x{extension_factor:g} while |k w0^-q| >= "
        f"{reach * margin:g}), L = {L:g}, sigma = {sigma:g}; exact w* (interval: its stated accuracy).",
        figure=figure,
        extra=extra,
    )


# ----------------------------------------------------------------------------- bias and noise parts
def _collision_accuracy() -> float:
    """The stated relative accuracy of the large-n collision ratio ``R_d(w) = Phi_d(2w)/Phi_d(w)^2``: a closed form
    in Bessel functions, as the linear kernel form (:data:`lipschitz_icl.loss.asymptotic.FORM_ACCURACY`)."""
    from lipschitz_icl.loss.asymptotic import FORM_ACCURACY

    return FORM_ACCURACY["linear"]


def _slope_row(name: str, power: float, points, margin: float, **fields) -> Quantity:
    """A power measured as ``power +`` the last of ``points`` (slope - power at the largest ``w``, with its
    derived next-order effect), its verdict the ``asymptotic`` rule on all of ``points``."""
    last = points[-1]
    return Quantity.within(
        name,
        power + 0.5 * (last.low + last.high),
        (power + last.low, power + last.high),
        theory=power,
        verdict=decision.asymptotic(points, margin).verdict,
        note=f"derived next-order effect {last.next_order:.2g}",
        **fields,
    )


def _power_rows(
    *, task: str, d: int, L: float, w: np.ndarray, bias: np.ndarray, R: np.ndarray, slopes: tuple, margin: float
) -> tuple[Quantity, ...]:
    """The reported rows of :func:`bias_noise_powers`: each power (from its slope points, ``slopes`` of the bias
    and of the noise) and each constant at the largest ``w`` beside the derived one."""
    p_pow, b_const = window_law.bias_leading(task, d)
    beta, c_R = window_law.noise_leading(d)
    fields: dict[str, Any] = {"setting": {"task": task, "d": d}, "constant": True}
    b_name = "bias constant b_d (bias / (L^2 w^-p) at largest w)"
    b_measured = float(bias[-1] / (L**2 * w[-1] ** p_pow))
    b_error = b_measured * QUADRATURE_ACCURACY[task]  # the quadrature's stated relative accuracy
    c_name = "noise constant c_R (n noise / (sigma^2 w^beta))"
    c_measured = float(R[-1] / w[-1] ** beta)
    c_error = c_measured * _collision_accuracy()
    return (
        _slope_row("bias power -p (slope at largest w)", p_pow, slopes[0], margin, symbol="-p", **fields),
        Quantity.within(
            b_name, b_measured, (b_measured - b_error, b_measured + b_error), theory=b_const, symbol="b_d", **fields
        ),
        _slope_row("noise power beta (slope at largest w)", beta, slopes[1], margin, symbol=r"\beta", **fields),
        Quantity.within(
            c_name, c_measured, (c_measured - c_error, c_measured + c_error), theory=c_R, symbol="c_R", **fields
        ),
    )


def _part_figures(w, bias, R, bias_theory, noise_theory) -> list[dict]:
    """The large-``n`` bias and ``n E sum_i p_i^2`` over ``w`` against their derived leading terms (log-log)."""
    labels = ("large-$n$ bias part", r"$n\,\mathbb{E}\sum_i p_i^2$")
    return [
        plot("loglog", w.tolist(), v.tolist(), "$w$", label, theory_y=t.tolist())
        for v, t, label in zip((bias, R), (bias_theory, noise_theory), labels)
    ]


def bias_noise_powers(
    *,
    task: str,
    d: int,
    w_grid: list,
    w_small: list,
    n_large: float,
    n_finite: list,
    L: float,
    sigma: float,
    margin: float,
) -> Outcome:
    """The large-``n`` bias part falls as ``b L^2 w^-p`` and the noise part grows as ``sigma^2 c_R w^beta/n``.

    ``asymptotic`` rule on the local slopes of the large-``n`` parts on ``w_grid`` (by quadrature,
    :func:`lipschitz_icl.loss.asymptotic.asymptotic_terms`) against the derived powers and next-order effects;
    ``sign`` rule (:func:`lipschitz_icl.estimators.loss_direction.part_direction`) along ``w_small``: the bias at
    ``n_large``
    falls, the noise at each ``n_finite`` rises.  ``decide(bias_shift, noise_shift, bias_law)``: the powers
    shifted, or the bias power of a competing law (the other class's; ``-1``, the envelope rate ``L^2 (d-1)/w``).
    """
    p_pow, b_const = window_law.bias_leading(task, d)  # bias ~ b L^2 w^p_pow (p_pow < 0)
    p2, b2 = window_law.bias_next_order(task, d)
    beta, c_R = window_law.noise_leading(d)
    w = np.asarray(w_grid, dtype=float)
    terms = [asymptotic_terms(task, d, wi) for wi in w]
    bias = L**2 * np.array([t[0] for t in terms])
    R = np.array([t[2] for t in terms])
    directions = [part_direction(make_problem(task, d, n_large, L, sigma), w_small, "bias", -1)]
    directions += [part_direction(make_problem(task, d, n, L, sigma), w_small, "noise", +1) for n in n_finite]
    claimed = {"derived": p_pow, "other-class": window_law.bias_leading(other_class(task), d)[0], "envelope": -1.0}

    def slopes(bias_shift: float = 0.0, noise_shift: float = 0.0, bias_law: str = "derived") -> tuple:
        shift = bias_shift + claimed[bias_law] - p_pow
        return (
            power_slope_points(
                w,
                bias,
                power=p_pow,
                next_coef=b2 / b_const,
                next_q=p_pow - p2,
                accuracy=QUADRATURE_ACCURACY[task],
                shift=shift,
            ),
            power_slope_points(
                w,
                R,
                power=beta,
                next_coef=window_law.noise_next_order(d),
                next_q=1.0,
                accuracy=_collision_accuracy(),
                shift=noise_shift,
            ),
        )

    def decide(**kw) -> decision.Decision:
        powers = [decision.asymptotic(points, margin) for points in slopes(**kw)]
        return decision.combined("asymptotic", powers if kw else [*powers, *directions])

    return Outcome(
        decide=decide,
        quantities=_power_rows(task=task, d=d, L=L, w=w, bias=bias, R=R, slopes=slopes(), margin=margin),
        margin=f"+-{margin:g} on each power",
        rule=f"asymptotic rule on local slopes of the large-n limits at w in {list(w_grid)} (margin {margin:g}, "
        f"intervals from the quadrature's stated accuracy); sign rule on the large-n bias (n = {n_large:g}) and "
        f"the noise (n in {list(n_finite)}) along w in {list(w_small)} (exact quadrature errors).",
        extra={"derived": {"p": -p_pow, "b": b_const, "beta": beta, "c_R": c_R}},
        figure=_part_figures(w, bias, R, b_const * L**2 * w**p_pow, c_R * w**beta),
    )
