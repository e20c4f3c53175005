"""Theorem 3.4: the optimal window adapts to ``L``, ``sigma`` and ``n``; Lemma B.5 (isotropy); the
bias and noise parts of the loss (Assumption B.4, Lemmas C.3-C.9).  Registry: ``claims/thm34.toml``.

Statements (the registry holds them in full): for the affine and relu classes ``M* = w* I``
(isotropy, also for what training finds); ``w*`` increases with ``L`` and ``n`` and decreases with
``sigma``; ``w* = C (n L^2 / sigma^2)^alpha (1 + k w0^-q + ...)`` with ``alpha``, ``C``, ``q``, ``k`` derived
in ``lipschitz_icl/derivations/window_law.py`` (affine ``alpha = 2/(d+3)``, relu ``2/(d+2)``); the bias part falls as
``w^-p`` (affine ``p = 2``, relu ``3/2``) and the noise part grows as ``w^((d-1)/2) / n``.

Every measure function returns an :class:`~lipschitz_icl.evidence.Evidence` decided by a rule of
:mod:`lipschitz_icl.decision`, with its resolution (bisection on the same machinery) and near-miss
false variants two resolutions away.  Measured numbers come from the estimators: ``w*`` and the loss
parts from the exact quadrature (:mod:`lipschitz_icl.exact`, intervals from its stated accuracy),
perturbation effects from paired task-averaged Monte Carlo on common random numbers
(:func:`lipschitz_icl.loss.loss_differences`), trained matrices from the NumPy trainer.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from lipschitz_icl.derivations import window_law as law

from .. import decision, geometry, sweep
from ..asymptotic import asymptotic_terms
from ..attention import Attention
from ..estimate import Estimate
from ..evidence import Evidence, FalseVariant, Quantity
from ..exact import exact_loss
from ..isotropic import draw_isotropic_batch
from ..loss import loss_differences
from ..optimum import wstar, wstar_mc
from ..pretraining import M_PROTOCOL, SHAPE_THRESHOLD, independent_runs, scale_interval
from ..problem import make_problem

__all__ = ["isotropy", "trained_isotropy", "monotonicity", "window_scaling", "bias_noise_powers",
           "minimiser_decisions", "law_grid"]



def _exact_wstar(task, d, n, L, sigma) -> float:
    return wstar(make_problem(task, d, n, L, sigma), "exact").w_star.value


# ----------------------------------------------------------------------------- Lemma B.5: isotropy
FAMILY_LEVEL = decision.FAMILY_LEVEL  # family-wise error of the Monte Carlo intervals within one claim (Bonferroni)
ANISOTROPIC_STEP = 0.1  # size of the anisotropic probes, relative to ||w* I||_F (registry thm34.isotropy)
SCALE_STEP = 0.03  # size of the scale probes, in log w (registry thm34.isotropy)
SCALE_CONTEXTS = 100_000  # contexts of the reduced-form scale probes (registry thm34.isotropy)


def _anisotropic_directions(d: int, count: int, rng: np.random.Generator):
    """Unit-Frobenius perturbations orthogonal to ``I``: symmetric traceless, antisymmetric and
    rank-one traceless ones, in turn."""
    out = []
    for k in range(count):
        kind = ("symmetric", "antisymmetric", "rank-one")[k % 3]
        A = rng.normal(size=(d, d))
        if kind == "symmetric":
            D = A + A.T
            D -= np.trace(D) / d * np.eye(d)
        elif kind == "antisymmetric":
            D = A - A.T
        else:
            u = A[:, 0] / np.linalg.norm(A[:, 0])
            D = np.outer(u, u) - np.eye(d) / d
        out.append((kind, D / np.linalg.norm(D)))
    return out


def minimiser_decisions(problem, M0: np.ndarray, directions, *, step: float, contexts: int,
                        stream: np.random.SeedSequence, tests: int | None = None):
    """Is ``M0`` a minimiser along each unit direction ``D``?  Paired differences
    ``L(M0 + step ||M0||_F D) - L(M0)`` on common random numbers drawn from ``stream`` (the same draws on
    every call), each decided by the ``sign`` rule (+1) on its interval at family-wise level
    :data:`FAMILY_LEVEL` (Bonferroni over ``tests``, default the number of directions).
    Returns ``(decisions, estimates)``."""
    size = step * np.linalg.norm(M0)
    others = [Attention(M0 + size * D) for D in directions]
    diffs = loss_differences(problem, Attention(M0), others, contexts=contexts, rng=np.random.default_rng(stream))
    level = 1 - FAMILY_LEVEL / (tests or len(directions))
    return [decision.sign(*e.confidence_interval(level), +1) for e in diffs], diffs


def scale_decisions(problem, batch, w_base: float, step: float, tests: int) -> list:
    """Is ``w_base I`` a minimiser along the scale directions?  Paired per-context differences
    ``loss_c(w_base e^(+-step)) - loss_c(w_base)`` on the fixed draws of ``batch`` (an
    :class:`~lipschitz_icl.isotropic.IsotropicBatch`: the reduced form for ``M = w I``, common random
    numbers at every ``w``), each decided by the ``sign`` rule (+1) at level ``1 - FAMILY_LEVEL/tests``."""
    def loss_c(w):
        bias_c, collision_c = batch.terms(w)
        return bias_c + problem.sigma**2 * collision_c

    base = loss_c(w_base)
    level = 1 - FAMILY_LEVEL / tests
    out = []
    for factor in (math.exp(step), math.exp(-step)):
        e = Estimate.from_samples(loss_c(w_base * factor) - base)
        out.append((decision.sign(*e.confidence_interval(level), +1), e))
    return out


def _scale_refutes(problem, batch, w: float, log_factor: float, tests: int) -> decision.Decision:
    """The scale part of the minimiser rule at base ``e^log_factor w I`` (at a multiple of ``I`` the
    anisotropic directions have no first-order term, by symmetry, so only the scale directions can
    refute a wrong scale)."""
    decisions = [dec for dec, _ in scale_decisions(problem, batch, math.exp(log_factor) * w, SCALE_STEP, tests)]
    return decision.Decision("sign", decision.combine(decisions), f"base {math.exp(log_factor):.4g} w* I")


def _anisotropy_refutes(problem, w: float, size: float, D: np.ndarray, **kw) -> decision.Decision:
    """The minimiser rule at base ``w (I + size sqrt(d) D)`` (anisotropic part ``size ||w I||_F``) along
    ``+-D``."""
    d = problem.d
    base = w * (np.eye(d) + size * math.sqrt(d) * D)
    decisions, _ = minimiser_decisions(problem, base, [D, -D], **kw)
    return decision.Decision("sign", decision.combine(decisions), f"base w*(I + {size:.3g} sqrt(d) D)")


def isotropy(task: str, d: int, n: int, *, seed: np.random.SeedSequence, L: float = 1.0, sigma: float = 0.5,
             directions: int = 3, contexts: int = 20000) -> Evidence:
    """Lemma B.5: ``M = w* I`` is a minimiser of the ICL loss: every perturbation raises it.

    Rule ``sign`` on paired differences on common random numbers: along ``+-D`` for ``directions``
    random anisotropic ``D`` (:func:`minimiser_decisions`, size :data:`ANISOTROPIC_STEP` ``||w* I||_F``,
    ``contexts`` contexts of the general task-averaged form) and along the scale, ``w* e^(+-SCALE_STEP)``
    (:func:`scale_decisions`, :data:`SCALE_CONTEXTS` contexts of the reduced form for ``M = w I``);
    Bonferroni over all of them at family-wise level :data:`FAMILY_LEVEL`; ``w*`` exact.  Resolution:
    the scale factor ``e^eps`` on the base ``e^eps w* I`` that the same rule refutes (bisection, both
    signs, the same draws); the anisotropic resolution (size of an anisotropic part of the base that is
    refuted) is reported beside it.  Near-miss false variants: ``e^(+-2 res) w* I`` and ``w* I`` plus
    twice the anisotropic resolution are minimisers; and the base ``1.05 w* I``.
    """
    start = time.perf_counter()
    problem = make_problem(task, d, n, L, sigma)
    w = wstar(problem, "exact").w_star.value
    s_dirs, s_mc, s_scale = seed.spawn(3)
    dirs = _anisotropic_directions(d, directions, np.random.default_rng(s_dirs))
    probes = [D for _, D in dirs] + [-D for _, D in dirs]
    names = [f"+{k} #{i}" for i, (k, _) in enumerate(dirs)] + [f"-{k} #{i}" for i, (k, _) in enumerate(dirs)]
    tests = len(probes) + 2
    kw = dict(step=ANISOTROPIC_STEP, contexts=contexts, stream=s_mc, tests=tests)
    decisions, diffs = minimiser_decisions(problem, w * np.eye(d), probes, **kw)
    batch = draw_isotropic_batch(problem.task_class, n, SCALE_CONTEXTS, np.random.default_rng(s_scale), w_hint=w)
    scale = scale_decisions(problem, batch, w, SCALE_STEP, tests)
    decisions += [dec for dec, _ in scale]
    diffs += [e for _, e in scale]
    names += ["scale up", "scale down"]
    verdict = decision.combine(decisions)
    res = decision.two_sided_resolution(lambda x: _scale_refutes(problem, batch, w, x, tests).refutes,
                                        "log scale factor eps on the base e^eps w* I", start=1e-3, limit=1.0)
    D0 = dirs[0][1]
    res_a = decision.resolution(lambda x: _anisotropy_refutes(problem, w, x, D0, **kw).refutes,
                                "anisotropic part of the base, relative to ||w* I||_F", start=1e-3, limit=1.0)
    false_variants = [FalseVariant.decided("1.05 w* I is a minimiser", _scale_refutes(problem, batch, w, math.log(1.05), tests),
                                       math.log(1.05) / res.value if res.resolved else None)]
    if res.resolved:
        for sgn in (+1, -1):
            eps = sgn * res.near_miss()
            false_variants.append(FalseVariant.decided(f"{math.exp(eps):.4g} w* I is a minimiser",
                                                   _scale_refutes(problem, batch, w, eps, tests), decision.NEAR_MISS))
    if res_a.resolved:
        false_variants.append(FalseVariant.decided(
            f"w* (I + {res_a.near_miss():.3g} sqrt(d) D) is a minimiser",
            _anisotropy_refutes(problem, w, res_a.near_miss(), D0, **kw), decision.NEAR_MISS))
    level = 1 - FAMILY_LEVEL / tests
    quantities = [Quantity(f"Delta L along {name}", None, e.value, *e.confidence_interval(level), dec.verdict,
                           "must be > 0") for name, e, dec in zip(names, diffs, decisions)]
    return Evidence(
        statement=f"For {task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g}) the optimum is isotropic: every "
                  "perturbation of w* I raises the ICL loss.",
        rule=f"sign rule on paired task-averaged Monte Carlo differences on common random numbers, each interval "
             f"at level 1 - {FAMILY_LEVEL:g}/{tests} (Bonferroni): {2 * directions} anisotropic probes of size "
             f"{ANISOTROPIC_STEP:g} ||w* I||_F ({contexts} contexts), scale probes w* e^(+-{SCALE_STEP:g}) "
             f"({SCALE_CONTEXTS} contexts, reduced form); w* = {w:.6g} exact.",
        quantities=quantities, verdict=verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="sign", margin="0 (every Delta L interval above zero)",
        resolution=res.to_dict(),
        extra={"decision": "; ".join(f"{nm}: {dec.verdict}" for nm, dec in zip(names, decisions)),
               "anisotropic_resolution": res_a.to_dict(), "w_star": w},
        figure={"kind": "scatter", "x": list(range(1, len(diffs) + 1)), "y": [e.value for e in diffs],
                "y_low": [q.ci_low for q in quantities], "y_high": [q.ci_high for q in quantities],
                "xlabel": f"probe (1-{directions}: +D, {directions + 1}-{2 * directions}: -D, then scale up, down)",
                "ylabel": "Delta L = L(w* I + probe) - L(w* I)"})


def trained_isotropy(task: str, d: int, n: int, *, seed: np.random.SeedSequence, L: float = 1.0,
                     sigma: float = 0.3, runs: int = 8, margin: float = 0.01) -> Evidence:
    """Lemma B.5 on what training finds: from random anisotropic starts the trained ``M`` is isotropic
    and its scale ``tr(M)/d`` is ``w*``.

    Rules: ``one-sided``: the 99% upper limit of the mean anisotropy over the runs is below
    :data:`~lipschitz_icl.pretraining.SHAPE_THRESHOLD`; ``equivalence``: the 99% interval of
    ``mean tr(M)/d - w*`` (Welch-combined, :func:`~lipschitz_icl.pretraining.scale_interval`) lies within
    ``+-margin w*``.  Resolution: the relative change of ``w*`` the equivalence refutes (bisection on the
    same interval).  Near misses: ``(1 +- 2 res) w*``.
    """
    start = time.perf_counter()
    problem = make_problem(task, d, n, L, sigma)
    s_runs, s_mc = seed.spawn(2)
    results = independent_runs(problem, s_runs, runs, **M_PROTOCOL)
    aniso = np.array([geometry.anisotropy(r.M) for _, r in results])
    a_high = float(aniso.mean() + stats.t.ppf(0.99, runs - 1) * aniso.std(ddof=1) / math.sqrt(runs))
    shape = decision.one_sided(float(aniso.min()), a_high, SHAPE_THRESHOLD, "<=")
    w_runs = [r.w_trained for _, r in results]
    ws = wstar_mc(problem, rng=np.random.default_rng(s_mc), rel_precision=0.002)
    w0 = ws.w_star.value

    def scale_decision(change: float) -> decision.Decision:
        low, high = scale_interval(w_runs, ws, target=w0 * (1 + change))
        return decision.equivalence(low, high, margin * w0)

    scale = scale_decision(0.0)
    res = decision.two_sided_resolution(lambda x: scale_decision(x).refutes, "relative change of w*", start=1e-3, limit=1.0)
    false_variants = [FalseVariant.decided(f"trained scale is {1 + sgn * res.near_miss():.4g} w*",
                                       scale_decision(sgn * res.near_miss()), decision.NEAR_MISS)
                      for sgn in (+1, -1)] if res.resolved else []
    low, high = scale_interval(w_runs, ws, target=w0)
    w_mean = float(np.mean(w_runs))
    quantities = [
        Quantity("mean anisotropy of trained M (99% upper limit)", 0.0, float(aniso.mean()), None, a_high,
                 shape.verdict, f"threshold {SHAPE_THRESHOLD}; runs {', '.join(f'{a:.4f}' for a in aniso)}"),
        Quantity("tr(M)/d vs w*", w0, w_mean, w0 + low, w0 + high, scale.verdict,
                 f"difference interval [{low:+.4f}, {high:+.4f}], margin +-{margin * w0:.4f}"),
    ]
    return Evidence(
        statement=f"Pretraining the M-form on {task} tasks (d={d}, n={n}) from random anisotropic starts ends at a "
                  "multiple of the identity whose scale is w*.",
        rule=f"{runs} independent SGD runs (protocol {M_PROTOCOL}); one-sided: 99% upper limit of the mean "
             f"anisotropy <= {SHAPE_THRESHOLD}; equivalence: 99% Welch interval of tr(M)/d - w* within "
             f"+-{margin:g} w* (Monte Carlo w*).",
        quantities=quantities, verdict=decision.combine([shape, scale]), seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence", margin=f"+-{margin:g} w* on tr(M)/d",
        resolution=res.to_dict(), extra={"decision": f"shape: {shape.detail}; scale: {scale.detail}"})


# ----------------------------------------------------------------------------- monotonicity
def _elasticities(factors, results) -> list[tuple[float, float, float]]:
    """``(low, mid, high)`` of the elasticity ``log(w*_b/w*_a)/log(f_b/f_a)`` between consecutive grid
    points, the interval from the exact ``w*`` intervals."""
    out = []
    for (fa, a), (fb, b) in zip(zip(factors, results), list(zip(factors, results))[1:]):
        span = math.log(fb / fa)
        out.append((math.log(b.ci_low / a.ci_high) / span, math.log(b.w_star.value / a.w_star.value) / span,
                    math.log(b.ci_high / a.ci_low) / span))
    return out


def monotonicity(task: str, d: int, *, n0: int = 1000, L0: float = 1.0, sigma0: float = 0.5,
                 factors=(0.5, 1.0, 2.0)) -> Evidence:
    """``w*`` increases with ``L`` and ``n`` and decreases with ``sigma`` (exact ``w*`` at ``factors`` of
    ``(n0, L0, sigma0)``).

    Rule ``sign`` on the interval of each local elasticity ``d log w*/d log(.)`` between consecutive
    grid points (from the exact ``w*``'s stated accuracy), with the predicted sign.  Resolution, by
    bisection: how far beyond zero, on the wrong side, an elasticity must lie for the rule to refute
    it (the quantity ``w* x^(-(e + delta))``, ``e`` the measured elasticity, has elasticity ``-delta``);
    the least-resolved parameter sets the claim's resolution.  Near misses: for each parameter, a
    window whose elasticity is two resolutions on the wrong side of zero must be refuted.
    """
    start = time.perf_counter()
    alpha, _ = law.window_law(task, d)
    decisions, quantities, variants, resolutions, series = [], [], [], [], []
    for name, sgn, elasticity, make in (
            ("L", +1, 2 * alpha, lambda f: (n0, L0 * f, sigma0)),
            ("n", +1, alpha, lambda f: (int(round(n0 * f)), L0, sigma0)),
            ("sigma", -1, -2 * alpha, lambda f: (n0, L0, sigma0 * f))):
        results = [wstar(make_problem(task, d, *make(f)), "exact") for f in factors]
        steps = _elasticities(factors, results)
        series.append({"label": name, "x": list(factors), "y": [r.w_star.value / results[1].w_star.value for r in results]})

        def rule(shift, steps=steps, sgn=sgn, to_boundary=False):
            """sign rule on every step, each moved by ``shift`` toward the wrong side (first to elasticity
            zero when ``to_boundary``)."""
            moved = [(lo, hi, sgn * shift + (mid if to_boundary else 0.0)) for lo, mid, hi in steps]
            return decision.Decision("sign", decision.combine([decision.sign(lo - m, hi - m, sgn)
                                                               for lo, hi, m in moved]),
                                     f"{name}: " + ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, _, hi in steps))

        dec = rule(0.0)
        decisions.append(dec)
        res = decision.resolution(lambda x: rule(x, to_boundary=True).refutes,
                                  f"elasticity beyond zero on the wrong side ({name})", start=1e-8, limit=1.0)
        resolutions.append(res)
        if res.resolved:
            variants.append(FalseVariant.decided(
                f"a window with elasticity {-sgn * res.near_miss():+.2g} in {name} (the wrong way by 2 resolutions)",
                rule(res.near_miss(), to_boundary=True), decision.NEAR_MISS))
        low, mid, high = min(x[0] for x in steps), float(np.mean([x[1] for x in steps])), max(x[2] for x in steps)
        quantities.append(Quantity(f"d log w*/d log {name}", elasticity, mid, low, high, dec.verdict,
                                   "theory: leading-order elasticity; w* = " +
                                   ", ".join(f"{r.w_star.value:.5g}" for r in results)))
    worst = max(resolutions, key=lambda r: r.value)
    return Evidence(
        statement=f"For {task} tasks (d={d}) the optimal window w* increases with L and n and decreases with sigma "
                  "(the attention window shrinks with L and n, widens with sigma).",
        rule=f"sign rule on the interval of each local elasticity of the exact w* at factors {factors} of "
             f"(n, L, sigma) = ({n0}, {L0:g}, {sigma0:g}); intervals from the exact w*'s stated accuracy.",
        quantities=quantities, verdict=decision.combine(decisions), seconds=time.perf_counter() - start,
        false_variants=variants, rule_name="sign", margin="0 (each elasticity interval on its predicted side)",
        resolution=worst.to_dict(), extra={"decision": "; ".join(d.detail for d in decisions),
                                           "resolutions": [r.to_dict() for r in resolutions]},
        figure={"kind": "loglog", "series": series, "xlabel": "factor on L, n or sigma",
                "ylabel": "w* / w* at the base point"})


# ----------------------------------------------------------------------------- the w* law
LAW_MARGIN = 0.01  # registry thm34.window-law: w*/law - 1 within +-1% at the end of the grid
LAW_N_MAX = 1e120  # furthest n the grid is extended to (the exact method's cost does not grow with n)
LAW_W_MAX = 1e7  # extension stops where w* nears the search's upper bound (1e8)


def _law_points(rho, ws, alpha: float, C: float, q: float, k: float, shift: float = 0.0, scale: float = 1.0):
    """:class:`~lipschitz_icl.decision.AsymptoticPoint` per grid point for the law
    ``w0 = scale C rho^(alpha + shift)``: distance ``w*/w0 - 1`` with the exact ``w*``'s interval and the
    derived next-order term ``k w0^-q`` (:func:`lipschitz_icl.derivations.window_law.wstar_correction`)."""
    out = []
    for r, w in zip(rho, ws):
        w0 = scale * C * r ** (alpha + shift)
        out.append(decision.AsymptoticPoint(r, w.ci_low / w0 - 1, w.ci_high / w0 - 1, k * w0 ** (-q)))
    return out


def _law_decision(rho, ws, alpha, C, q, k, shift=0.0, scale=1.0) -> decision.Decision:
    return decision.asymptotic(_law_points(rho, ws, alpha, C, q, k, shift, scale), LAW_MARGIN)


def law_grid(task: str, d: int, n_grid, L: float, sigma: float):
    """The exact ``w*`` on ``n_grid`` extended (factor 1e4 in ``n``) while the derived next-order term
    ``|k w0^-q|`` is at least half of :data:`LAW_MARGIN`, up to ``n <= LAW_N_MAX`` and
    ``w0 <= LAW_W_MAX``.  The extension depends only on the derived term, so the whole grid is known
    first; its points are the pieces of one sweep (:func:`lipschitz_icl.sweep.map_pieces`).  Returns
    ``(n values, WStar results)``."""
    alpha, C = law.window_law(task, d)
    q, k = law.wstar_correction(task, d)
    w0 = lambda n: C * (n * L**2 / sigma**2) ** alpha  # noqa: E731
    n_max = min(LAW_N_MAX, (LAW_W_MAX / C) ** (1 / alpha) * sigma**2 / L**2)
    grid = decision.extend_grid(n_grid, lambda n: k * w0(n) ** (-q), LAW_MARGIN, factor=1e4,
                                x_max=max(n_max, max(n_grid)))
    pieces = [(task, d, n, L, sigma) for n in grid]
    return grid, sweep.map_pieces(_exact_wstar, pieces, desc=f"w* {task} d={d}", unit="n")


def _exact_wstar(task: str, d: int, n, L: float, sigma: float):
    """The exact ``w*`` of ``task`` at ``(d, n, L, sigma)`` (one piece of :func:`law_grid`)."""
    return wstar(make_problem(task, d, n, L, sigma), "exact")


def window_scaling(task: str, d: int, *, n_grid=(1e2, 1e4, 1e6, 1e8, 1e10, 1e12, 1e14), L: float = 1.0,
                   sigma: float = 0.5, asymptotic_from: float = 1e6) -> Evidence:
    """Theorem 3.4's law ``w* = C (n L^2/sigma^2)^alpha (1 + o(1))`` against the exact ``w*``.

    Rule ``asymptotic`` (:func:`lipschitz_icl.decision.asymptotic`) on the points ``n >= asymptotic_from``
    of the grid, extended by :func:`law_grid` until the derived next-order term ``k w0^-q`` is below
    half the margin: the distance ``w*/w0 - 1`` (interval: the exact ``w*``'s stated accuracy) must
    follow ``k w0^-q`` and lie within ``+-LAW_MARGIN`` at the largest ``n``.  Resolution: the exponent
    shift ``delta`` (law ``C rho^(alpha + delta)``) the same rule refutes, by bisection, both signs;
    the constant's resolution (law ``(1 + c) C rho^alpha``) is reported beside it.  False variants: the
    exponent shifted by ``+-2`` resolutions, the constant changed by ``+-2`` of its resolutions.
    """
    start = time.perf_counter()
    alpha, C = law.window_law(task, d)
    q, k = law.wstar_correction(task, d)
    grid, results = law_grid(task, d, n_grid, L, sigma)
    rho = np.array([n * L**2 / sigma**2 for n in grid])
    use = np.array([n >= asymptotic_from for n in grid])
    r_use = rho[use]
    w_use = [w for w, u in zip(results, use) if u]
    stuck = [n for n, w in zip(grid, results) if w.info.get("at_search_bound")]
    main = _law_decision(r_use, w_use, alpha, C, q, k)
    if stuck:
        main = decision.Decision("asymptotic", "inconclusive", f"w* at its search bound for n = {stuck}")

    def refutes_shift(x):
        return _law_decision(r_use, w_use, alpha, C, q, k, shift=x).refutes

    def refutes_scale(x):
        return _law_decision(r_use, w_use, alpha, C, q, k, scale=1 + x).refutes

    res = decision.two_sided_resolution(refutes_shift, "exponent shift delta", start=1e-5, limit=0.5)
    res_c = decision.two_sided_resolution(refutes_scale, "relative change of C", start=1e-4, limit=0.5)
    false_variants = []
    if res.resolved and res_c.resolved:
        for sgn in (+1, -1):
            delta = sgn * res.near_miss()
            false_variants.append(FalseVariant.decided(f"alpha {'+' if sgn > 0 else '-'} {abs(delta):.2g}",
                                                   _law_decision(r_use, w_use, alpha, C, q, k, shift=delta),
                                                   abs(delta) / res.value))
            c = sgn * res_c.near_miss()
            false_variants.append(FalseVariant.decided(f"C x {1 + c:.4g}",
                                                   _law_decision(r_use, w_use, alpha, C, q, k, scale=1 + c),
                                                   abs(c) / res_c.value))
    ws = np.array([w.w_star.value for w in results])
    band = ws / rho**alpha
    slope = float(np.log(ws[-1] / ws[-2]) / np.log(rho[-1] / rho[-2]))
    last = _law_points(r_use[-1:], w_use[-1:], alpha, C, q, k)[0]
    quantities = [
        Quantity("w*/law - 1 at the largest n", last.next_order, 0.5 * (last.low + last.high), last.low, last.high,
                 main.verdict, f"theory: derived next-order term k w0^-q; margin +-{LAW_MARGIN:g}"),
        Quantity("local slope d log w*/d log rho (largest two n)", alpha, slope, None, None, None,
                 f"next-order effect {-alpha * q * k * (C * rho[-2] ** alpha) ** (-q):.2g}"),
        Quantity("C: w*/rho^alpha at the largest n", C, float(band[-1]), float(results[-1].ci_low / rho[-1] ** alpha),
                 float(results[-1].ci_high / rho[-1] ** alpha), None),
        Quantity("two-sided lower constant min w*/rho^alpha", None, float(band.min()), None, None, None,
                 f"over n in [{min(grid):.0e}, {max(grid):.0e}]"),
        Quantity("two-sided upper constant max w*/rho^alpha", None, float(band.max()), None, None, None,
                 f"over n in [{min(grid):.0e}, {max(grid):.0e}]"),
    ]
    evidence = Evidence(
        statement=f"For {task} tasks (d={d}) w* = C (n L^2/sigma^2)^alpha (1 + o(1)) with alpha = {alpha:.6g}, "
                  f"C = {C:.6g} (derived), so c_lo rho^alpha <= w* <= c_hi rho^alpha over the grid.",
        rule=f"asymptotic rule on w*/(C rho^alpha) - 1 for n >= {asymptotic_from:g}, grid n = "
             f"{[float(f'{n:.3g}') for n in grid]} (extended from {max(n_grid):.0e} while |k w0^-q| >= "
             f"{LAW_MARGIN / 2:g}), L = {L:g}, sigma = {sigma:g}; exact w* (interval: its stated accuracy).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="asymptotic", margin=f"+-{LAW_MARGIN:g} on w*/law - 1",
        resolution=res.to_dict())
    evidence.figure = {"kind": "semilogx", "x": rho.tolist(), "y": (ws / (C * rho**alpha)).tolist(),
                       "theory_y": [1 + k * (C * r**alpha) ** (-q) for r in rho],
                       "xlabel": "n L^2 / sigma^2", "ylabel": "w* / (C rho^alpha) (dashed: 1 + k w0^-q)"}
    evidence.extra = {"decision": main.detail, "derived": {"alpha": alpha, "C": C}, "rho": rho.tolist(),
                      "w_star": ws.tolist(),
                      "ratio": (ws / (C * rho**alpha)).tolist(),
                      "next_order": [k * (C * r**alpha) ** (-q) for r in rho], "n_grid": list(grid),
                      "constant_resolution": res_c.to_dict(), "slope": slope}
    return evidence


# ----------------------------------------------------------------------------- bias and noise parts
POWER_MARGIN = 0.01  # registry thm34.bias-noise: local slopes within +-0.01 of the derived powers
QUADRATURE_ACCURACY = {"affine": 1e-12, "relu": 1e-4}  # relative, lipschitz_icl.asymptotic's stated accuracy


def _slope_points(w, values, power: float, next_coef: float, next_q: float, accuracy: float, shift: float = 0.0):
    """:class:`~lipschitz_icl.decision.AsymptoticPoint` per consecutive pair of ``w``: the local slope of
    ``log values`` minus ``power + shift``, its interval from the relative ``accuracy`` of each value,
    and the derived next-order effect on the slope ``-next_q next_coef w^-next_q`` (``values ~ c w^power
    (1 + next_coef w^-next_q)``), taken at the pair's first point."""
    out = []
    for wa, wb, va, vb in zip(w, w[1:], values, values[1:]):
        span = math.log(wb / wa)
        slope = math.log(vb / va) / span - power - shift
        err = 2 * accuracy / span
        out.append(decision.AsymptoticPoint(wb, slope - err, slope + err, -next_q * next_coef * wa ** (-next_q)))
    return out


def _direction(estimates, part: str, expected: int) -> decision.Decision:
    """``sign`` on the smallest consecutive change of the ``part`` (bias or noise) of exact-loss
    ``estimates``, each with its stated ``abs_error``; inconclusive if any quadrature did not converge."""
    if not all(e.info.get("converged", False) for e in estimates):
        return decision.Decision("sign", "inconclusive", f"{part}: an exact quadrature did not converge")
    values = [getattr(e, part).value for e in estimates]
    errors = [getattr(e, part).abs_error for e in estimates]
    changes = [(expected * (b - a) - ea - eb, expected * (b - a) + ea + eb)
               for a, b, ea, eb in zip(values, values[1:], errors, errors[1:])]
    low, high = min(changes)
    return decision.sign(low, high, +1)


def bias_noise_powers(task: str, d: int, *, w_grid=(1e3, 1e4, 1e5, 1e6), n_large: float = 1e14,
                      n_finite=(100, 1000), L: float = 1.0, sigma: float = 0.5) -> Evidence:
    """The bias part falls as ``b L^2 w^-p`` and the noise part grows as ``sigma^2 c_R w^beta / n``
    (derived ``p, b, beta, c_R`` and next-order terms, :mod:`lipschitz_icl.derivations.window_law`): a wider window
    (smaller ``w``) raises the bias and lowers the noise.

    Rule ``asymptotic`` on the local slopes of the large-``n`` limits of the two parts on ``w_grid`` (by
    quadrature, :func:`lipschitz_icl.asymptotic.asymptotic_terms`, independently of the symbolic
    expansion): the distance slope - power must follow the derived next-order effect and lie within
    :data:`POWER_MARGIN` at the largest ``w``; intervals from the quadrature's stated accuracy.  Directions
    (``sign``): along ``w = 0.5 ... 32`` the large-``n`` bias falls and the noise at each ``n`` in
    ``n_finite`` rises, beyond the exact quadrature's error.  (At finite ``n`` the bias itself is not
    monotone: its ``O(1/n)`` part grows with ``w``; the claim is about the large-``n`` bias.)
    Resolution: the shift of the bias power the asymptotic rule refutes (bisection; the noise power's
    is reported beside it).  Near misses: bias power and noise power shifted by ``+-2`` resolutions.
    """
    start = time.perf_counter()
    p_pow, _ = law.bias_leading(task, d)  # bias ~ b L^2 w^p_pow (p_pow < 0)
    p2, b2 = law.bias_next_order(task, d)
    _, b_const = law.bias_leading(task, d)
    beta, c_R = law.noise_leading(d)
    r1 = law.noise_next_order(d)
    w = np.asarray(w_grid, dtype=float)
    terms = [asymptotic_terms(task, d, wi) for wi in w]
    bias = L**2 * np.array([t[0] for t in terms])
    R = np.array([t[2] for t in terms])
    acc = QUADRATURE_ACCURACY[task]

    def powers(shift_b=0.0, shift_n=0.0):
        db = decision.asymptotic(_slope_points(w, bias, p_pow, b2 / b_const, p_pow - p2, acc, shift_b), POWER_MARGIN)
        dn = decision.asymptotic(_slope_points(w, R, beta, r1, 1.0, 1e-12, shift_n), POWER_MARGIN)
        return db, dn

    db, dn = powers()
    w_small = [0.5, 1, 2, 4, 8, 16, 32]
    large = [exact_loss(make_problem(task, d, n_large, L, sigma), wi) for wi in w_small]
    directions = [_direction(large, "bias", -1)]
    for n in n_finite:
        fin = [exact_loss(make_problem(task, d, n, L, sigma), wi) for wi in w_small]
        directions.append(_direction(fin, "noise", +1))
    res = decision.two_sided_resolution(lambda x: powers(shift_b=x)[0].refutes, "bias power shift", start=1e-4, limit=1.0)
    res_n = decision.two_sided_resolution(lambda x: powers(shift_n=x)[1].refutes, "noise power shift", start=1e-4, limit=1.0)
    false_variants = []
    for r, which in ((res, "bias"), (res_n, "noise")):
        if not r.resolved:
            continue
        for sgn in (+1, -1):
            shift = sgn * r.near_miss()
            dec = powers(shift_b=shift)[0] if which == "bias" else powers(shift_n=shift)[1]
            base = p_pow if which == "bias" else beta
            false_variants.append(FalseVariant.decided(f"{which} power {base + shift:+.4f}", dec, decision.NEAR_MISS))
    pb, pn = _slope_points(w, bias, p_pow, b2 / b_const, p_pow - p2, acc)[-1], _slope_points(w, R, beta, r1, 1.0, 1e-12)[-1]
    quantities = [
        Quantity("bias power (slope at largest w)", p_pow, p_pow + 0.5 * (pb.low + pb.high), p_pow + pb.low,
                 p_pow + pb.high, db.verdict, f"derived next-order effect {pb.next_order:.2g}"),
        Quantity("bias constant b (bias / (L^2 w^p) at largest w)", b_const, float(bias[-1] / (L**2 * w[-1] ** p_pow)),
                 None, None, None),
        Quantity("noise power (slope at largest w)", beta, beta + 0.5 * (pn.low + pn.high), beta + pn.low,
                 beta + pn.high, dn.verdict, f"derived next-order effect {pn.next_order:.2g}"),
        Quantity("noise constant c_R (n noise / (sigma^2 w^beta))", c_R, float(R[-1] / w[-1] ** beta), None, None, None),
    ]
    all_decisions = [db, dn, *directions]
    return Evidence(
        statement=f"For {task} tasks (d={d}) the bias part of the ICL loss decays as w^{p_pow:g} and the noise part "
                  f"grows as w^{beta:g}/n: a wider window (smaller w) raises the bias and lowers the noise.",
        rule=f"asymptotic rule on local slopes of the large-n limits at w in {list(w_grid)} (margin "
             f"{POWER_MARGIN:g}, intervals from the quadrature's stated accuracy); sign rule on the large-n bias "
             f"(n = {n_large:g}) and the noise (n in {list(n_finite)}) along w in {w_small} (exact quadrature errors).",
        quantities=quantities, verdict=decision.combine(all_decisions), seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="asymptotic", margin=f"+-{POWER_MARGIN:g} on each power",
        resolution=res.to_dict(),
        extra={"decision": "; ".join(x.detail for x in all_decisions), "noise_resolution": res_n.to_dict(),
               "derived": {"p": -p_pow, "b": b_const, "beta": beta, "c_R": c_R}},
        figure=[{"kind": "loglog", "x": w.tolist(), "y": bias.tolist(), "theory_y": (b_const * L**2 * w**p_pow).tolist(),
                 "xlabel": "w", "ylabel": "large-n bias part (dashed: b L^2 w^-p)"},
                {"kind": "loglog", "x": w.tolist(), "y": R.tolist(), "theory_y": (c_R * w**beta).tolist(),
                 "xlabel": "w", "ylabel": "n E sum p_i^2 (dashed: c_R w^beta)"}])
