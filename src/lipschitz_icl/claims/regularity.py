"""The regularity law (issue 13; not stated in the paper): the roughness of a zonal task prior's
kernel at ``t = 1`` sets the bias power and the window law.  Registry: ``claims/regularity.toml``
(statements, rules, every design number, resolutions, alternatives).

If ``K(1) - K(1 - u)`` has its leading non-integer power ``c u^gamma``, the large-``n`` bias falls as
``b w^-beta``, ``beta = min(gamma, 2)`` (analytic kernels: 2), and ``w* = C (n/sigma^2)^alpha (1 + next
order)``, ``alpha = 1/(beta + m)``, ``m = (d-1)/2``; ``gamma, c, b, C`` and the next-order terms (where
derived) come from :mod:`lipschitz_icl.derivations.regularity`.  Measured by the exact method
(:func:`lipschitz_icl.exact.route.exact_loss`), far into the asymptotic range; the rules are deterministic,
so the alternatives are decided on the same exact values.  A rival power ``beta'`` (the registry's
alternatives) is decided by the same rule and derived next-order term, for the window law through the
exponent ``1/(beta' + m)`` with the derived ``C``.

Where the derivation gives no next-order coefficient the rule is fed ``0`` for it: it then holds only
if the measured distance is within ``follow * floor * margin`` of zero at the two largest grid points
(stricter); it may still refute, as the *order* of the dropped term is derived (``O(1/w)`` for the bias
power at ``w >= 1e4``: a coefficient above ``~1e3`` would be needed to move a slope by the margin).  For
``w*`` with ``beta < 1`` the dropped term is of relative order ``w*^-beta / sigma^2`` (the finite-``n``
part of the bias), which no reachable ``n`` makes small: there a distance beyond the margin is reported
inconclusive, never a refutation (claim ``regularity.window-law-rough``, exploratory).
"""

from __future__ import annotations

import functools

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.derivations import regularity as law
from lipschitz_icl.estimators.law_points import kernel_law_points, kernel_slope_points, secant_slope_interval
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.gates.evidence import Outcome, Quantity, plot
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import prior, zonal_problem
from lipschitz_icl.runtime import sweep

__all__ = ["bias_power", "window_law", "window_law_rough", "law_outcome", "scaling_grid", "kernel_scaling"]


def _rival(dec: decision.Decision, beta, reg) -> decision.Decision:
    """``dec`` with a note where a rival power ``beta`` is the claim's own for this prior."""
    if beta is None or beta != reg.beta:
        return dec
    return decision.Decision(dec.rule, dec.verdict, dec.detail + f"; beta = {beta:g} is the claim's own power here")


# ----------------------------------------------------------------------------- the bias power
def _bias_quantities(reg, last, values, errors, w, setting, verdict) -> tuple:
    """The bias power ``beta`` from the secant slope at the largest ``w``; the constant ``b = bias w^beta`` there
    (interval: the exact bias's stated error)."""
    b_low, b_high = ((values[-1] - errors[-1]) * w[-1] ** reg.beta, (values[-1] + errors[-1]) * w[-1] ** reg.beta)
    return (
        Quantity.within(
            "bias power beta (secant slope at the largest w)",
            reg.beta - 0.5 * (last.low + last.high),
            (reg.beta - last.high, reg.beta - last.low),
            theory=reg.beta,
            verdict=verdict,
            symbol=r"\beta",
            setting=setting,
            constant=True,
            note=f"gamma = {reg.gamma}, derived next-order term {last.next_order:.3g}"
            + ("" if reg.k is not None else " (coefficient not derived: 0)"),
        ),
        Quantity.within(
            "bias constant b (bias w^beta at the largest w)",
            float(values[-1] * w[-1] ** reg.beta),
            (float(b_low), float(b_high)),
            theory=reg.b,
            symbol="b",
            setting=setting,
            constant=True,
            note=f"c = {reg.c}",
        ),
    )


def _bias_figure(w, values, reg) -> dict:
    """Log-log figure of the exact large-``n`` bias against ``w`` beside the law ``b w^-beta``."""
    theory_y = (reg.b * w**-reg.beta).tolist()
    return plot("loglog", w.tolist(), values, "$w$", r"large-$n$ bias part", theory_y=theory_y)


def bias_power(
    *,
    kernel: str,
    d: int,
    kernels: dict,
    L: float,
    sigma: float,
    w_grid: dict,
    n_min: float,
    finite_n_factor: float,
    margin: float,
) -> Outcome:
    """The bias part at large ``n`` falls as ``b w^-beta``, ``beta = min(gamma, 2)`` derived from the kernel.

    ``asymptotic`` rule on the secant slopes of the exact bias on ``w_grid[kernel]`` at
    ``n = max(n_min, finite_n_factor w_max^(m+2))`` (the ``O(1/n)`` part of the bias, of relative size
    ``w^(m+beta)/n``, stays below ``1/finite_n_factor``; the exact method costs the same at any ``n``):
    the distance ``slope + beta`` follows the derived next-order term and lies within ``margin`` at the
    largest ``w``.  ``decide(shift, beta)``: the power ``beta - shift``, or a rival power ``beta``.
    """
    k, problem_of = prior(kernel, d, kernels, L)
    reg = law.regularity_of_kernel(k)
    w = np.array(w_grid[kernel], dtype=float)
    n = int(max(n_min, int(finite_n_factor * w[-1] ** (reg.m + 2))))
    problem = problem_of(n, sigma)
    results = [exact_loss(problem, wi) for wi in w]
    values = [r.bias.value for r in results]
    errors = [r.bias.abs_error for r in results]
    converged = all(r.info.get("converged", False) for r in results)

    def decide(shift: float = 0.0, beta: float | None = None) -> decision.Decision:
        if not converged:
            return decision.Decision("asymptotic", "inconclusive", "an exact quadrature did not converge")
        moved = shift + (0.0 if beta is None else reg.beta - beta)
        return _rival(decision.asymptotic(kernel_slope_points(w, values, errors, reg, moved), margin), beta, reg)

    points = kernel_slope_points(w, values, errors, reg)
    return Outcome(
        decide=decide,
        margin=f"+-{margin:g} on the bias power",
        rule=f"asymptotic rule on secant slopes of the exact bias at n = {n:.0e}, w in {w.tolist()}, margin "
        f"{margin:g}; intervals from the exact method's stated errors.",
        quantities=_bias_quantities(reg, points[-1], values, errors, w, {"kernel": kernel, "d": d}, decide().verdict),
        figure=_bias_figure(w, values, reg),
        extra={"w": w.tolist(), "bias": values, "n": n, "slopes": [0.5 * (p.low + p.high) - reg.beta for p in points]},
    )


# ----------------------------------------------------------------------------- the window law
def _law_point(problem):
    """One piece of :func:`law_outcome`: the exact ``w*`` of ``problem`` and the exact loss there."""
    result = wstar(problem, "exact")
    return result, exact_loss(problem, result.w_star.value)


def _law_quantities(rho, ws, acc, reg, *, slope: float, setting: dict, verdict: str) -> tuple:
    """``w*/(C rho^alpha) - 1`` at the largest ``n`` against the derived next order (the rule's ``verdict``); the
    constants ``alpha`` (the local ``slope``) and ``C``, at ``setting``."""
    last = kernel_law_points(rho, ws, acc, reg)[-1]
    # alpha and C over the exact w* in their stated relative accuracy
    w_low, w_high = ws * (1 - np.asarray(acc)), ws * (1 + np.asarray(acc))
    slope_range = secant_slope_interval(rho[-2], rho[-1], (w_low[-2], w_high[-2]), (w_low[-1], w_high[-1]))
    C_range = (float(w_low[-1] / rho[-1] ** reg.alpha), float(w_high[-1] / rho[-1] ** reg.alpha))
    return (
        Quantity.within(
            "w*/(C rho^alpha) - 1 at the largest n",
            0.5 * (last.low + last.high),
            (last.low, last.high),
            theory=last.next_order,
            verdict=verdict,
            note=(
                "theory: the derived next-order term"
                if reg.k is not None
                else "0 in place of the next-order term, whose coefficient is not derived"
            ),
        ),
        Quantity.within(
            "alpha: local slope d log w*/d log rho (largest two n)",
            slope,
            slope_range,
            theory=reg.alpha,
            symbol=r"\alpha",
            setting=setting,
            constant=True,
        ),
        Quantity.within(
            "C: w*/rho^alpha at the largest n",
            float(ws[-1] / rho[-1] ** reg.alpha),
            C_range,
            theory=reg.C,
            symbol="C",
            setting=setting,
            constant=True,
        ),
    )


def _law_record(rho, ws, acc, reg, n_grid, slope) -> tuple[dict, dict]:
    """The semilog figure of ``w*/(C rho^alpha)`` against ``rho`` (``1 +`` the derived next order as theory), and the
    law's ``extra`` record."""
    ratio = ws / (reg.C * rho**reg.alpha)
    next_order = [p.next_order for p in kernel_law_points(rho, ws, acc, reg)]
    labels = (r"$\rho = n/\sigma^2$", r"$w^*/(C\,\rho^\alpha)$")
    figure = plot("semilogx", rho.tolist(), ratio.tolist(), *labels, theory_y=[1 + t for t in next_order])
    extra = {
        "rho": rho.tolist(),
        "w_star": ws.tolist(),
        "ratio": ratio.tolist(),
        "next_order": next_order,
        "n_grid": [float(n) for n in n_grid],
        "regularity": reg,
        "slope": slope,
    }
    return figure, extra


def law_outcome(k, reg, problem_of, n_grid, *, label: str, sigma: float, margin: float) -> Outcome:
    """``w* = C (n/sigma^2)^alpha (1 + next order)`` for the kernel ``k`` (named ``label``, its derived law
    ``reg``; ``problem_of(n, sigma)`` its problem) on ``n_grid``: ``asymptotic`` rule on
    ``w*/(C rho^alpha) - 1``, ``rho = n/sigma^2``, exact ``w*`` (interval: its stated accuracy;
    inconclusive if the loss at ``w*`` did not converge or ``w*`` is at its search bound).
    ``decide(shift, scale_change, beta)``: the law ``(1 + scale_change) C rho^(alpha + shift)``, or the
    exponent ``1/(beta + m)`` of a rival power."""
    points = sweep.map_pieces(_law_point, [(problem_of(int(n), sigma),) for n in n_grid], desc=f"w* {label}", unit="n")
    results = [p[0] for p in points]
    at = [p[1] for p in points]
    rho = np.array([n / sigma**2 for n in n_grid])
    ws = np.array([r.w_star.value for r in results])
    acc = [r.w_star.abs_error / r.w_star.value for r in results]
    converged = all(a.info.get("converged", False) for a in at) and not any(r.at_search_bound for r in results)
    # beta < 1 with no derived next order: the finite-n part of the bias shifts w* by a relative
    # O(w*^-beta / sigma^2), not derived here, so a distance beyond the margin is not a refutation
    undetermined = reg.k is None and reg.beta < 1

    def decide(shift: float = 0.0, scale_change: float = 0.0, beta: float | None = None) -> decision.Decision:
        if not converged:
            return decision.Decision("asymptotic", "inconclusive", "the exact loss at w* did not converge")
        moved = shift + (0.0 if beta is None else 1.0 / (beta + reg.m) - reg.alpha)
        dec = decision.asymptotic(kernel_law_points(rho, ws, acc, reg, moved, 1 + scale_change), margin)
        if undetermined and dec.refutes:
            dec = decision.Decision(
                "asymptotic", "inconclusive", dec.detail + "; next order O(w*^-beta) not derived: not a refutation"
            )
        return _rival(dec, beta, reg)

    slope = float(np.log(ws[-1] / ws[-2]) / np.log(rho[-1] / rho[-2]))
    figure, extra = _law_record(rho, ws, acc, reg, n_grid, slope)
    return Outcome(
        decide=decide,
        margin=f"+-{margin:g} on w*/law - 1",
        rule=f"asymptotic rule on w*/(C rho^alpha) - 1, n = {[float(n) for n in n_grid]}, sigma = {sigma:g}; "
        "exact w* (interval: its stated accuracy).",
        quantities=_law_quantities(
            rho, ws, acc, reg, slope=slope, setting={"kernel": label, "d": k.d}, verdict=decide().verdict
        ),
        figure=figure,
        extra=extra,
    )


def scaling_grid(reg, *, sigma: float, scaling_w0: list, scaling_n: list) -> list:
    """The ``n`` at which the derived leading order ``w0 = C (n/sigma^2)^alpha`` takes the values
    ``scaling_w0``, at most ``scaling_n[-1]`` (past ``w ~ 1e5`` the zonal series of rough kernels stops
    converging to ``1e-6``); ``scaling_n`` itself where fewer than two distinct ``n`` remain."""
    grid = sorted(
        {min(scaling_n[-1], max(1.0, round(sigma**2 * (w0 / reg.C) ** (1 / reg.alpha)))) for w0 in scaling_w0}
    )
    return grid if len(grid) >= 2 else list(scaling_n)


def window_law(
    *,
    kernel: str,
    d: int,
    kernels: dict,
    L: float,
    sigma: float,
    n_grid: dict,
    extend: list,
    reach: float,
    extension_factor: float,
    n_max: float,
    scaling_w0: list,
    scaling_n: list,
    margin: float,
) -> Outcome:
    """The window law (:func:`law_outcome`) of the named prior on ``n_grid[kernel]`` (a prior without an
    entry: :func:`scaling_grid`); for the priors in ``extend`` (the exact method reaches any ``n``) the
    grid is extended by ``extension_factor`` while the derived next-order term is at least ``reach *
    margin``, up to ``n_max``."""
    k, problem_of = prior(kernel, d, kernels, L)
    reg = law.regularity_of_kernel(k)

    def next_order(n: float) -> float:  # the derived relative next-order term of w* at n
        return reg.wstar_next_order(reg.C * (n / sigma**2) ** reg.alpha)

    if kernel not in n_grid:
        grid = scaling_grid(reg, sigma=sigma, scaling_w0=scaling_w0, scaling_n=scaling_n)
    elif kernel in extend:
        grid = decision.extend_grid(
            n_grid[kernel], next_order, margin, factor=extension_factor, x_max=n_max, reach=reach
        )
    else:
        grid = list(n_grid[kernel])
    return law_outcome(k, reg, problem_of, grid, label=kernel, sigma=sigma, margin=margin)


def window_law_rough(
    *, kernel: str, d: int, kernels: dict, L: float, sigma: float, n_grid: list, margin: float
) -> Outcome:
    """The window law (:func:`law_outcome`) of a rough prior (``beta < 1``) on ``n_grid``."""
    k, problem_of = prior(kernel, d, kernels, L)
    return law_outcome(k, law.regularity_of_kernel(k), problem_of, n_grid, label=kernel, sigma=sigma, margin=margin)


def kernel_scaling(k, spec):
    """The window-law claim for any zonal kernel ``k`` (``lipschitz-icl scaling --kernel``): the design,
    resolutions and alternatives of the registry entry ``spec`` (``regularity.window-law``), on the grid
    of :func:`scaling_grid`.  Returns ``(outcome, judgement)``."""
    design = spec.design
    reg = law.regularity_of_kernel(k)
    grid = scaling_grid(reg, sigma=design["sigma"], scaling_w0=design["scaling_w0"], scaling_n=design["scaling_n"])
    problem_of = functools.partial(zonal_problem, k)  # (n, sigma) -> the problem
    outcome = law_outcome(k, reg, problem_of, grid, label=k.name, sigma=design["sigma"], margin=design["margin"])
    return outcome, decision.judge(outcome.decide, spec.resolutions, spec.alternatives)
