"""Theorem 3.5: pretrained attention generalises to unseen ``L``-Lipschitz tasks; a mismatched ``L'``
does worse (paper Section 3.2, Figure 5).  Registry: ``lipschitz_icl/claims/thm35.toml`` (statements,
rules, margins and their sources, grids, seeds).

Attention pretrained on an ``L``-class is ``M = w* I`` with ``w*`` the exact optimum of the affine or relu
class at ``(n, L, sigma)`` (:func:`lipschitz_icl.optimum.wstar`), or the ``M`` found by the trainer.  It
is tested on the probe suite of :mod:`lipschitz_icl.probes` (affine, relu, cosine and triangle waves,
distance to random points; all ``L``-Lipschitz on the sphere, most never seen in pretraining).

Theory side (derived, :mod:`lipschitz_icl.derivations.window_law` and :mod:`lipschitz_icl.derivations.sphere_asymptotics`):

* Lipschitz envelope of the bias.  For a task with per-task Lipschitz constant ``<= L`` and weights
  ``p >= 0`` summing to one, ``|sum_i p_i f(x_i) - f(q)| <= L sum_i p_i ||x_i - q||``, so by Jensen
  ``bias_c <= L^2 sum_i p_i ||x_i - q||^2`` in every context, whose large-``n`` mean is
  ``2 L^2 (1 - A_d(w)) = L^2 (d - 1)/w (1 + O(1/w))``.  With ``w* ~ C rho^alpha`` the envelope falls as
  ``n^-alpha``; the noise part ``sigma^2 R_d(w*)/n`` falls faster, as ``n^(-(1 - alpha (d-1)/2))``.  So the
  ICL error of any ``L``-Lipschitz task falls at least as fast as ``n^-alpha``.
* Noise part: the weights do not depend on the task, so on every probe it is
  ``sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)`` (``R_d`` exact, ``c_q`` the derived ``1/n^2`` coefficient).
* Mismatch: ``w*`` is the optimum of the pretraining class, so any other window does worse on that class;
  with ``bias = b w^-p``, ``noise = c w^beta/n`` the error at ``lambda w*`` is
  ``E* (beta lambda^-p + p lambda^beta)/(beta + p)`` (:func:`mismatch_ratio_theory`); pretraining at
  ``L'`` gives ``lambda = (L'/L)^(2 alpha)`` at leading order.

Measured numbers: :func:`lipschitz_icl.probes.probe_terms` and :func:`~lipschitz_icl.probes.noise_terms`
(Monte Carlo over covariates, queries and tasks, label noise integrated out; all models on common random
numbers, independent draws per ``n``).  Intervals are the Monte Carlo standard errors times a
Bonferroni ``z`` at family-wise level :data:`FAMILY_LEVEL` per claim.
"""

from __future__ import annotations

import math
import time

import numpy as np

from lipschitz_icl.derivations import sphere_asymptotics as sph
from lipschitz_icl.derivations import window_law as law

from .. import decision
from ..attention import Attention
from ..evidence import Evidence, FalseVariant, Quantity
from ..optimum import wstar
from ..pretraining import M_PROTOCOL, independent_runs
from ..probes import noise_terms, probe_suite, probe_terms
from ..problem import make_problem

__all__ = ["generalisation", "envelope", "noise_part", "mismatch", "mismatch_marked", "same_l_classes",
           "trained_mismatch", "log_ratio", "slope", "slope_decision", "envelope_decision", "noise_decision",
           "sign_decision", "factor_decision", "class_decision",
           "mismatch_ratio_theory", "SWEEP_N", "MARKED_FACTOR", "NOISE_MARGIN", "FIGURE5_CLASSES"]

FAMILY_LEVEL = decision.FAMILY_LEVEL  # family-wise error of the Monte Carlo intervals within one claim (Bonferroni)
SWEEP_N = (100, 1000, 10000)
NOISE_MARGIN = 0.02  # registry thm35.noise-part: relative deviation from the derived series
MARKED_FACTOR = 2.0  # registry thm35.same-l-classes / mismatch-marked: "markedly" = a factor of 2
# registry thm35.mismatch-marked (exploratory): the factor is asked only where the derived ratio is at
# least MARKED_MARGIN x MARKED_FACTOR (set after a d = 2 full-profile run, hence exploratory)
MARKED_MARGIN = 1.25
FIGURE5_CLASSES = ("affine", "relu", "cosine-1")  # the paper's Figure 5 classes, tested at L


# ----------------------------------------------------------------------------- estimators
def _mean_se(samples) -> tuple[float, float]:
    samples = np.asarray(samples, dtype=float)
    return float(samples.mean()), float(samples.std(ddof=1) / math.sqrt(samples.size))


def log_ratio(numerator, denominator) -> tuple[float, float]:
    """``log(mean X / mean Y)`` of paired per-context samples and its delta-method standard error
    ``sd(X/mean X - Y/mean Y)/sqrt(N)`` (common random numbers: the pairing enters the variance)."""
    x, y = np.asarray(numerator, float), np.asarray(denominator, float)
    mx, my = x.mean(), y.mean()
    return float(math.log(mx / my)), float(np.std(x / mx - y / my, ddof=1) / math.sqrt(x.size))


def slope(n_pair, values, errors) -> tuple[float, float]:
    """Local log-log slope ``s = log(E_2/E_1)/log(n_2/n_1)`` and its delta-method standard error
    ``sqrt((se_1/E_1)^2 + (se_2/E_2)^2)/log(n_2/n_1)`` (independent samples at the two ``n``)."""
    (n1, n2), (v1, v2), (e1, e2) = n_pair, values, errors
    span = math.log(n2 / n1)
    return math.log(v2 / v1) / span, math.hypot(e1 / v1, e2 / v2) / span


def _wstar(task: str, d: int, n: int, L: float, sigma: float) -> float:
    """The exact optimum ``w*``; raises if the exact search stopped at its bound (not converged)."""
    result = wstar(make_problem(task, d, n, L, sigma), "exact")
    if result.info.get("at_search_bound"):
        raise RuntimeError(f"exact w* for {task}, d={d}, n={n} stopped at its search bound")
    return result.w_star.value


# ----------------------------------------------------------------------------- decision rules
def _slope_decisions(slopes, bound: float, z: float) -> list:
    return [decision.one_sided(s - z * se, s + z * se, bound, "<=") for s, se in slopes]


def slope_decision(slopes, bound: float, z: float) -> decision.Decision:
    """One-sided rule on every probe's slope interval ``s +- z se``: ``s <= bound`` (the error falls at
    least as fast as ``n^bound``); combined over probes (fails if any fails)."""
    return decision.combined("one-sided", _slope_decisions(slopes, bound, z))


def envelope_decision(ratios, tightening: float = 0.0) -> decision.Decision:
    """One-sided rule on every probe's ``max_c bias_c / (L^2 env_c)`` interval ``[low, high]``: at most
    ``1/(1 + tightening)`` (``tightening = 0``: the Lipschitz envelope itself)."""
    decisions = [decision.one_sided(low, high, 1 / (1 + tightening), "<=") for low, high in ratios]
    return decision.combined("one-sided", decisions)


def noise_decision(rows, margin: float, scale: float = 1.0) -> decision.Decision:
    """Equivalence (TOST) at every ``n``: the interval of ``measured/(scale theory) - 1``, from
    ``(measured, se, theory)`` rows and a ``z`` in each row, lies within ``+-margin``."""
    decisions = [decision.equivalence((m - z * se) / (scale * th) - 1, (m + z * se) / (scale * th) - 1, margin)
                 for m, se, th, z in rows]
    return decision.combined("equivalence", decisions)


def sign_decision(ratios, z: float, shift: float = 0.0) -> decision.Decision:
    """Sign rule on every log error ratio interval ``r +- z se`` (mismatched over matched): ``r > shift``
    (``shift = 0``: the mismatched error is larger)."""
    decisions = [decision.sign(r - z * se - shift, r + z * se - shift, +1) for r, se in ratios]
    return decision.combined("sign", decisions)


def factor_decision(ratios, factors, z: float, shift: float = 0.0) -> decision.Decision:
    """One-sided rule on every log error ratio interval: ``r >= log(factor) + shift``."""
    decisions = [decision.one_sided(r - z * se, r + z * se, math.log(f) + shift, ">=")
                 for (r, se), f in zip(ratios, factors)]
    return decision.combined("one-sided", decisions)


def class_decision(ratios, z: float, margin: float, shift: float = 0.0) -> decision.Decision:
    """Equivalence on every log error ratio interval (other class over matched class at the same ``L``)
    less ``shift``: within ``+-margin``."""
    decisions = [decision.equivalence(r - z * se - shift, r + z * se - shift, margin) for r, se in ratios]
    return decision.combined("equivalence", decisions)


def mismatch_ratio_theory(lam: float, p: float, beta: float) -> float:
    """``E(lambda w*)/E(w*) = (beta lambda^-p + p lambda^beta)/(beta + p)`` for ``E = b w^-p + c w^beta/n``
    (leading order; at ``w*`` the first-order condition gives ``p bias = beta noise``)."""
    return (beta * lam**-p + p * lam**beta) / (beta + p)


# ----------------------------------------------------------------------------- theory helpers
def _noise_theory(d: int, w: float, n: int, sigma: float) -> float:
    """``sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)``."""
    pq, cq = law.noise_finite_n_leading(d)
    return sigma**2 * (float(sph.exact_collision_ratio(d, w)) / n + cq * w**pq / n**2)


def _envelope_theory(d: int, w: float, L: float) -> float:
    """Large-``n`` Lipschitz envelope of the bias ``2 L^2 (1 - A_d(w))``."""
    return 2 * L**2 * float(1 - sph.exact_tilted_mean(d, w))


# ----------------------------------------------------------------------------- generalisation
def generalisation(train_task: str, d: int, *, seed: np.random.SeedSequence, L: float = 1.0,
                   sigma: float = 0.5, n_grid=SWEEP_N, contexts=(2000, 2000, 1000),
                   probe_kwargs: dict | None = None) -> Evidence:
    """The ICL error of the pretrained window ``w*(n) I`` on every probe falls at least as fast as the
    Lipschitz envelope ``n^-alpha`` (``alpha`` the pretraining class's window exponent).

    Rule ``one-sided`` (:func:`slope_decision`) on each probe's local log-log slope (:func:`slope`,
    interval ``s +- z se``, Bonferroni over probes and pairs): between consecutive ``n`` of the grid the
    slope is ``<= 0`` (the error falls), between the two largest ``n`` it is ``<= -alpha``.
    Resolution: the exponent shift ``delta`` (bound ``-(alpha + delta)`` on the last slope) the rule
    refutes.  False variant: the error falls at least as fast as ``n^-(alpha + 2 resolutions)``.
    """
    start = time.perf_counter()
    streams = seed.spawn(len(n_grid))
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    alpha = law.window_law(train_task, d)[0]
    w_grid = [_wstar(train_task, d, n, L, sigma) for n in n_grid]
    loss = {p.name: [] for p in probes}
    bias = {p.name: [] for p in probes}
    for n, w, c, stream in zip(n_grid, w_grid, contexts, streams):
        terms = probe_terms(probes, [Attention(w * np.eye(d))], n, sigma, c, np.random.default_rng(stream))
        for name, ((b, nz),) in terms.items():
            loss[name].append(_mean_se(b + nz))
            bias[name].append(_mean_se(b))
    pairs = list(zip(n_grid[:-1], n_grid[1:]))
    z = decision.bonferroni_z(len(probes) * len(pairs))
    slopes = {name: [slope(pair, [rows[j][0] for j in (k, k + 1)], [rows[j][1] for j in (k, k + 1)])
                     for k, pair in enumerate(pairs)] for name, rows in loss.items()}

    def decide(delta: float = 0.0) -> decision.Decision:
        falls = _slope_decisions([s for name in slopes for s in slopes[name][:-1]], 0.0, z)
        rate = _slope_decisions([slopes[name][-1] for name in slopes], -(alpha + delta), z)
        return decision.combined("one-sided", falls + rate)

    main = decide()
    res = decision.resolution(lambda x: decide(x).refutes, "exponent shift delta: error <= n^-(alpha + delta)",
                              start=1e-3, limit=2.0)
    false_variants = []
    if res.resolved:
        delta = res.near_miss()
        false_variants.append(FalseVariant.decided(f"the error falls at least as fast as n^-(alpha + {delta:.3g})",
                                       decide(delta), delta / res.value))
    quantities = []
    for probe in probes:
        s, se = slopes[probe.name][-1]
        quantities.append(Quantity(
            f"{probe.name}: slope of log error vs log n (n = {pairs[-1][0]}..{pairs[-1][1]})", -alpha, s,
            s - z * se, s + z * se, decision.one_sided(s - z * se, s + z * se, -alpha).verdict,
            "theory: the envelope rate -alpha (a bound); errors " + ", ".join(f"{m:.3g}" for m, _ in loss[probe.name])))
    envelope_curve = [_envelope_theory(d, w, L) + _noise_theory(d, w, n, sigma) for n, w in zip(n_grid, w_grid)]
    quantities.append(Quantity("w* growth exponent over the grid (window law)", alpha,
                               float(np.polyfit(np.log(n_grid), np.log(w_grid), 1)[0]), None, None, None,
                               "w* = " + ", ".join(f"{w:.4g}" for w in w_grid) + " (exact quadrature)"))
    series = [{"label": name, "x": list(map(float, n_grid)), "y": [m for m, _ in rows],
               "y_low": [m - z * e for m, e in rows], "y_high": [m + z * e for m, e in rows]}
              for name, rows in loss.items()]
    series.append({"label": "Lipschitz envelope (theory)", "x": list(map(float, n_grid)), "y": envelope_curve})
    evidence = Evidence(
        statement=f"Attention pretrained on {train_task} tasks (d={d}, L={L:g}, sigma={sigma:g}; M = w*(n) I) has "
                  f"an ICL error on every L-Lipschitz probe ({', '.join(p.name for p in probes)}) that falls with "
                  f"n at least as fast as the Lipschitz envelope n^-{alpha:.4g}.",
        rule=f"one-sided on local log-log slopes (Monte Carlo, z = {z:.2f}, Bonferroni at {FAMILY_LEVEL:g}): <= 0 "
             f"between consecutive n, <= -alpha = {-alpha:.4g} between the two largest; grid n = {list(n_grid)}, "
             f"contexts {list(contexts)}.",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="one-sided",
        margin=f"none (a bound): slope <= -{alpha:.4g} at z = {z:.2f}", resolution=res.to_dict())
    evidence.figure = {"kind": "loglog", "x": list(map(float, n_grid)), "y": envelope_curve, "series": series,
                       "xlabel": "n", "ylabel": "ICL error",
                       "title": f"pretrained on {train_task} (w*(n)), tested on probes"}
    evidence.extra = {"decision": main.detail, "n": list(n_grid), "w_star": w_grid, "alpha": alpha,
                      "envelope": envelope_curve, "bias": {k: [m for m, _ in v] for k, v in bias.items()},
                      "slopes": {k: [s for s, _ in v] for k, v in slopes.items()}}
    return evidence


# ----------------------------------------------------------------------------- the Lipschitz envelope
def envelope(train_task: str, d: int, *, seed: np.random.SeedSequence, n: int = 1000, L: float = 1.0,
             sigma: float = 0.5, contexts: int = 2000, probe_kwargs: dict | None = None) -> Evidence:
    """In every sampled context and on every probe, the bias of the pretrained window is at most the
    Lipschitz envelope: ``bias_c <= L^2 sum_i p_i ||x_i - q||^2``.

    Measured: ``r = max_c bias_c / (L^2 env_c)`` per probe (a counterexample is exact; the interval is
    ``r (1 +- n eps)``, the rounding of the ``n``-term sums).  Rule ``one-sided``
    (:func:`envelope_decision`): ``r <= 1`` on every probe.  Resolution: the relative tightening ``delta``
    of the envelope (bound ``L^2 env/(1 + delta)``) the rule refutes.  False variant: the envelope
    tightened by 2 resolutions.
    """
    start = time.perf_counter()
    (stream,) = seed.spawn(1)
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    w = _wstar(train_task, d, n, L, sigma)
    terms, (env,) = probe_terms(probes, [Attention(w * np.eye(d))], n, sigma, contexts,
                                np.random.default_rng(stream), envelope=True)
    rounding = n * np.finfo(float).eps
    ratios = {name: float(np.max(b / (L**2 * env))) for name, ((b, _),) in terms.items()}
    intervals = [(r * (1 - rounding), r * (1 + rounding)) for r in ratios.values()]
    main = envelope_decision(intervals)
    res = decision.resolution(lambda x: envelope_decision(intervals, x).refutes,
                              "relative tightening delta: bias_c <= L^2 env_c / (1 + delta)", start=1e-3, limit=1e3)
    false_variants = []
    if res.resolved:
        delta = res.near_miss()
        false_variants.append(FalseVariant.decided(f"bias_c <= L^2 env_c / {1 + delta:.4g} in every context",
                                       envelope_decision(intervals, delta), delta / res.value))
    quantities = [Quantity(f"{name}: max over contexts of bias_c / (L^2 sum p |x - q|^2)", 1.0, r, low, high,
                           decision.one_sided(low, high, 1.0).verdict, "must be <= 1 (theory: the bound)")
                  for (name, r), (low, high) in zip(ratios.items(), intervals)]
    evidence = Evidence(
        statement=f"With the window pretrained on {train_task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g}) the "
                  "bias on every L-Lipschitz probe is at most L^2 sum_i p_i ||x_i - q||^2 in every context.",
        rule=f"one-sided: max over {contexts} contexts of bias_c/(L^2 env_c) <= 1 on every probe (interval: "
             f"rounding n eps = {rounding:.1e} relative).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="one-sided", margin="none (a bound): ratio <= 1",
        resolution=res.to_dict())
    evidence.extra = {"decision": main.detail, "w_star": w, "max_ratio": ratios}
    return evidence


# ----------------------------------------------------------------------------- the noise part
def noise_part(train_task: str, d: int, *, seed: np.random.SeedSequence, L: float = 1.0, sigma: float = 0.5,
               n_grid=SWEEP_N, contexts=(32000, 2000, 600)) -> Evidence:
    """The noise part of the ICL error with the pretrained window (the same on every probe: the weights
    do not depend on the task) follows the derived series ``sigma^2 (R_d(w*)/n + c_q w*^(d-1)/n^2)``.

    Rule ``equivalence`` (:func:`noise_decision`): at every ``n`` the interval of ``measured/theory - 1``
    (Monte Carlo, ``z`` Bonferroni over the grid) lies within ``+-NOISE_MARGIN``.  Resolution: the
    relative change ``c`` of the theory (``(1 + c) theory``, both signs) the rule refutes.  False
    variants: the theory scaled by ``1 +- 2`` resolutions.
    """
    start = time.perf_counter()
    streams = seed.spawn(len(n_grid))
    z = decision.bonferroni_z(len(n_grid))
    rows, w_grid = [], []
    for n, c, stream in zip(n_grid, contexts, streams):
        w = _wstar(train_task, d, n, L, sigma)
        (samples,) = noise_terms([Attention(w * np.eye(d))], d, n, sigma, c, np.random.default_rng(stream))
        rows.append((*_mean_se(samples), _noise_theory(d, w, n, sigma), z))
        w_grid.append(w)
    main = noise_decision(rows, NOISE_MARGIN)
    res = decision.two_sided_resolution(lambda x: noise_decision(rows, NOISE_MARGIN, 1 + x).refutes,
                               "relative change c of the theory: (1 + c) sigma^2 (R_d/n + c_q w^(d-1)/n^2)",
                               start=1e-3, limit=0.9)
    false_variants = []
    if res.resolved:
        for sgn in (+1, -1):
            c = sgn * res.near_miss()
            false_variants.append(FalseVariant.decided(f"noise part = {1 + c:.4g} x the derived series",
                                           noise_decision(rows, NOISE_MARGIN, 1 + c), abs(c) / res.value))
    quantities = [Quantity(f"noise part at n={n} (w*={w:.4g})", th, m, m - zz * se, m + zz * se,
                           decision.equivalence((m - zz * se) / th - 1, (m + zz * se) / th - 1, NOISE_MARGIN).verdict,
                           f"relative margin +-{NOISE_MARGIN:g}")
                  for n, w, (m, se, th, zz) in zip(n_grid, w_grid, rows)]
    evidence = Evidence(
        statement=f"With the window pretrained on {train_task} tasks (d={d}, L={L:g}, sigma={sigma:g}) the noise "
                  "part of the ICL error on any task is sigma^2 (R_d(w*)/n + c_q w*^(d-1)/n^2).",
        rule=f"equivalence on measured/theory - 1 within +-{NOISE_MARGIN:g} at n = {list(n_grid)} (Monte Carlo, "
             f"contexts {list(contexts)}, z = {z:.2f}).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence", margin=f"+-{NOISE_MARGIN:g} relative",
        resolution=res.to_dict())
    evidence.extra = {"decision": main.detail, "n": list(n_grid), "w_star": w_grid}
    return evidence


# ----------------------------------------------------------------------------- the L mismatch (Figure 5)
def _short(name: str) -> str:
    """Compact probe name for figure axes: cosine-4 -> cos4, triangle-1 -> tri1, distance-3 -> dist3."""
    for long, short in (("cosine-", "cos"), ("triangle-", "tri"), ("distance-", "dist")):
        name = name.replace(long, short)
    return name


def _settings(d: int, n: int, L: float, sigma: float, factor: float) -> dict:
    """Exact ``w*`` of the pretraining settings: affine at ``L`` (matched), ``L/factor`` and ``factor L``."""
    spec = {"affine@L": L, f"L'=L/{factor:g}": L / factor, f"L'={factor:g}L": L * factor}
    return {k: _wstar("affine", d, n, LL, sigma) for k, LL in spec.items()}


def _ratios(models: dict, probes, n, sigma, contexts, stream) -> dict:
    """``{probe: {model: (log(E_model/E_ref), se)}}`` against the first model, and the errors, on common
    random numbers."""
    names = list(models)
    terms = probe_terms(probes, [models[k] for k in names], n, sigma, contexts, np.random.default_rng(stream))
    out, errors = {}, {}
    for probe in probes:
        losses = {k: b + nz for k, (b, nz) in zip(names, terms[probe.name])}
        out[probe.name] = {k: log_ratio(losses[k], losses[names[0]]) for k in names[1:]}
        errors[probe.name] = {k: _mean_se(v) for k, v in losses.items()}
    return {"log_ratio": out, "errors": errors}


def _mismatch_figure(errors: dict, probes, z: float, title: str) -> dict:
    names = list(next(iter(errors.values())))
    series = [{"label": k, "x": list(range(len(probes))), "y": [errors[p.name][k][0] for p in probes],
               "y_low": [errors[p.name][k][0] - z * errors[p.name][k][1] for p in probes],
               "y_high": [errors[p.name][k][0] + z * errors[p.name][k][1] for p in probes]} for k in names]
    return {"kind": "scatter", "x": series[0]["x"], "y": series[0]["y"], "series": series,
            "xlabel": "test task: " + ", ".join(f"{i} {_short(p.name)}" for i, p in enumerate(probes)),
            "ylabel": "ICL error", "title": title}


def _ratio_quantities(measured: dict, keys, z: float, gated, verdict_of, theory: dict | None = None) -> list:
    """One quantity per probe and model key: the error ratio ``exp(r)`` with its interval."""
    out = []
    for probe, row in measured.items():
        for k in keys:
            r, se = row[k]
            gate = probe in gated
            out.append(Quantity(f"{probe}: error ratio {k} / matched", (theory or {}).get((probe, k)), math.exp(r),
                                math.exp(r - z * se), math.exp(r + z * se), verdict_of(r, se) if gate else None,
                                "gated" if gate else "reported only (not a Figure 5 class)"))
    return out


def _sign_claim(measured: dict, keys, z: float, description: str, rule: str, start: float) -> Evidence:
    """The sign rule of :func:`mismatch` and :func:`trained_mismatch` on the Figure 5 classes, with its
    resolution (shift ``s`` of the log ratio) and near-miss false variant."""
    gated = [measured[p][k] for p in FIGURE5_CLASSES for k in keys]
    main = sign_decision(gated, z)
    res = decision.resolution(lambda s: sign_decision(gated, z, s).refutes,
                              "log error ratio s: the mismatched error exceeds exp(s) x the matched", start=1e-3,
                              limit=10.0)
    false_variants = []
    if res.resolved:
        s = res.near_miss()
        false_variants.append(FalseVariant.decided(f"the mismatched error exceeds {math.exp(s):.3g} x the matched one",
                                       sign_decision(gated, z, s), s / res.value))
    quantities = _ratio_quantities(measured, keys, z, FIGURE5_CLASSES,
                                   lambda r, se: decision.sign(r - z * se, r + z * se, +1).verdict)
    return Evidence(statement=description, rule=rule, quantities=quantities, verdict=main.verdict,
                    seconds=time.perf_counter() - start, false_variants=false_variants, rule_name="sign",
                    margin="none (a direction): log(E'/E) > 0", resolution=res.to_dict(),
                    extra={"decision": main.detail})


def _mismatch_measure(d, n, L, sigma, contexts, seed, factor, probe_kwargs):
    (stream,) = seed.spawn(1)
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    ws = _settings(d, n, L, sigma, factor)
    models = {k: Attention(w * np.eye(d)) for k, w in ws.items()}
    return probes, ws, _ratios(models, probes, n, sigma, contexts, stream)


def mismatch(d: int, *, seed: np.random.SeedSequence, n: int = 1000, L: float = 1.0, sigma: float = 0.5,
             contexts: int = 2000, factor: float = 10.0, probe_kwargs: dict | None = None) -> Evidence:
    """Figure 5 with ``M = w* I``: attention pretrained on affine tasks at ``L' = L/factor`` or
    ``factor L`` has a larger ICL error on ``L``-tasks of the Figure 5 classes than the one pretrained
    at ``L``.

    Rule ``sign`` (:func:`sign_decision`) on every paired log error ratio ``log(E_{L'}/E_L)``
    (:func:`log_ratio`, interval ``+- z se``, Bonferroni over the gated comparisons) of the Figure 5
    classes: ``> 0``.  The other probes' ratios are reported, not gated.  Resolution: the shift ``s`` of
    the log ratio (variant ``log(E'/E) > s``) the rule refutes.  False variant: ``s`` at 2 resolutions.
    """
    start = time.perf_counter()
    probes, ws, measured = _mismatch_measure(d, n, L, sigma, contexts, seed, factor, probe_kwargs)
    keys = [f"L'=L/{factor:g}", f"L'={factor:g}L"]
    z = decision.bonferroni_z(len(FIGURE5_CLASSES) * len(keys))
    evidence = _sign_claim(
        measured["log_ratio"], keys, z,
        f"Pretrained on affine tasks with L' = L/{factor:g} or {factor:g} L the attention has a larger ICL error on "
        f"L-tasks of the Figure 5 classes than pretrained at L={L:g} (d={d}, n={n}, sigma={sigma:g}).",
        f"sign of log(E_L'/E_L) on {', '.join(FIGURE5_CLASSES)} ({contexts} contexts, common random numbers, "
        f"z = {z:.2f}, Bonferroni at {FAMILY_LEVEL:g}).", start)
    evidence.figure = _mismatch_figure(measured["errors"], probes, z, "Figure 5: pretraining setting vs test task")
    evidence.extra.update({"w_star": ws, "errors": {p: {k: v[0] for k, v in row.items()}
                                                    for p, row in measured["errors"].items()}})
    return evidence


def mismatch_marked(d: int, *, seed: np.random.SeedSequence, n: int = 1000, L: float = 1.0, sigma: float = 0.5,
                    contexts: int = 2000, factor: float = 10.0, probe_kwargs: dict | None = None) -> Evidence:
    """Exploratory (registry thm35.mismatch-marked): the mismatched error is *markedly* larger, at least
    ``MARKED_FACTOR`` times the matched one, where the derived leading-order ratio
    (:func:`mismatch_ratio_theory` with ``lambda = factor^(+-2 alpha)``) is at least
    ``MARKED_MARGIN x MARKED_FACTOR``; elsewhere only larger (factor 1).

    Rule ``one-sided`` (:func:`factor_decision`) on the log ratio intervals of the Figure 5 classes.
    Resolution: the shift ``s`` of the required log factor the rule refutes; false variant at 2 resolutions.
    """
    start = time.perf_counter()
    probes, ws, measured = _mismatch_measure(d, n, L, sigma, contexts, seed, factor, probe_kwargs)
    alpha = law.window_law("affine", d)[0]
    beta, p_aff = law.noise_leading(d)[0], -law.bias_leading("affine", d)[0]
    lam = {f"L'=L/{factor:g}": factor ** (-2 * alpha), f"L'={factor:g}L": factor ** (2 * alpha)}
    derived = {k: mismatch_ratio_theory(v, p_aff, beta) for k, v in lam.items()}
    required = {k: MARKED_FACTOR if derived[k] >= MARKED_MARGIN * MARKED_FACTOR else 1.0 for k in lam}
    z = decision.bonferroni_z(len(FIGURE5_CLASSES) * len(lam))
    log_r = measured["log_ratio"]
    pairs = [(log_r[p][k], required[k]) for p in FIGURE5_CLASSES for k in lam]

    def decide(shift=0.0):
        return factor_decision([r for r, _ in pairs], [f for _, f in pairs], z, shift)

    main = decide()
    res = decision.resolution(lambda s: decide(s).refutes, "shift s of the required log factor", start=1e-3,
                              limit=10.0)
    false_variants = []
    if res.resolved:
        s = res.near_miss()
        false_variants.append(FalseVariant.decided(f"the required factors times {math.exp(s):.3g}", decide(s), s / res.value))
    quantities = []
    for probe, row in log_r.items():
        for k in lam:
            r, se = row[k]
            gate = probe in FIGURE5_CLASSES
            verdict = decision.one_sided(r - z * se, r + z * se, math.log(required[k]), ">=").verdict if gate else None
            quantities.append(Quantity(f"{probe}: error ratio {k} / matched", derived[k] if probe == "affine" else None,
                                       math.exp(r), math.exp(r - z * se), math.exp(r + z * se), verdict,
                                       f"required factor {required[k]:g} (derived ratio {derived[k]:.3g})"
                                       if gate else "reported only (not a Figure 5 class)"))
    evidence = Evidence(
        statement=f"Pretrained at L' = L/{factor:g} or {factor:g} L the error on L-tasks of the Figure 5 classes is at "
                  f"least {MARKED_FACTOR:g} x the matched one where the derived ratio is >= "
                  f"{MARKED_MARGIN * MARKED_FACTOR:g}, else larger (d={d}, n={n}).",
        rule=f"one-sided: log(E'/E) >= log(required factor) (z = {z:.2f}); required factors {required}.",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="one-sided", margin=f"required factors {required}",
        resolution=res.to_dict())
    evidence.extra = {"decision": main.detail, "w_star": ws, "derived_ratio": derived, "required_factor": required}
    return evidence


def same_l_classes(d: int, *, seed: np.random.SeedSequence, n: int = 1000, L: float = 1.0, sigma: float = 0.5,
                   contexts: int = 2000, probe_kwargs: dict | None = None) -> Evidence:
    """Figure 5, right panel: pretrained at the same ``L`` on relu instead of affine tasks, the attention's
    ICL error on the Figure 5 classes is not markedly different (within a factor ``MARKED_FACTOR``).

    Rule ``equivalence`` (:func:`class_decision`) on the paired log ratios ``log(E_relu@L/E_affine@L)``:
    within ``+-log MARKED_FACTOR``.  Resolution: the shift ``s`` of the claimed log ratio (both signs)
    the rule refutes; false variants: the ratio claimed to be ``exp(+-2 resolutions)``.
    """
    start = time.perf_counter()
    (stream,) = seed.spawn(1)
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    ws = {k: _wstar(k.split("@")[0], d, n, L, sigma) for k in ("affine@L", "relu@L")}
    models = {k: Attention(w * np.eye(d)) for k, w in ws.items()}
    measured = _ratios(models, probes, n, sigma, contexts, stream)
    z = decision.bonferroni_z(len(FIGURE5_CLASSES))
    margin = math.log(MARKED_FACTOR)
    gated = [measured["log_ratio"][p]["relu@L"] for p in FIGURE5_CLASSES]
    main = class_decision(gated, z, margin)
    res = decision.two_sided_resolution(lambda s: class_decision(gated, z, margin, s).refutes,
                               "shift s of the claimed log error ratio (relu@L over affine@L)", start=1e-3, limit=10.0)
    false_variants = []
    if res.resolved:
        for sgn in (+1, -1):
            s = sgn * res.near_miss()
            false_variants.append(FalseVariant.decided(f"E(relu@L) = {math.exp(s):.3g} x E(affine@L)",
                                           class_decision(gated, z, margin, s), abs(s) / res.value))
    quantities = _ratio_quantities(measured["log_ratio"], ["relu@L"], z, FIGURE5_CLASSES,
                                   lambda r, se: decision.equivalence(r - z * se, r + z * se, margin).verdict,
                                   {(p, "relu@L"): 1.0 for p in FIGURE5_CLASSES})
    evidence = Evidence(
        statement=f"Pretrained on relu or on affine tasks at the same L={L:g}, the attention's ICL errors on L-tasks "
                  f"of the Figure 5 classes agree within a factor {MARKED_FACTOR:g} (d={d}, n={n}).",
        rule=f"equivalence of log(E_relu@L/E_affine@L) within +-log {MARKED_FACTOR:g} ({contexts} contexts, common "
             f"random numbers, z = {z:.2f}).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence", margin=f"+-log {MARKED_FACTOR:g} on the log ratio",
        resolution=res.to_dict())
    evidence.figure = _mismatch_figure(measured["errors"], probes, z, "Figure 5 (right): same L, other class")
    evidence.extra = {"decision": main.detail, "w_star": ws}
    return evidence


def trained_mismatch(d: int, *, seed: np.random.SeedSequence, n: int = 50, L: float = 1.0, sigma: float = 0.5,
                     contexts: int = 4000, factor: float = 10.0) -> Evidence:
    """Figure 5 with trained attention: the M-form pretrained by the trainer
    (:data:`lipschitz_icl.pretraining.M_PROTOCOL`, one run each, own streams) on affine tasks at ``L``,
    ``L/factor`` and ``factor L``, tested with the rule of :func:`mismatch`."""
    start = time.perf_counter()
    streams = seed.spawn(4)
    probes = probe_suite(d, L)
    keys = ["trained@L", f"L'=L/{factor:g} (trained)", f"L'={factor:g}L (trained)"]
    models, ws = {}, {}
    for key, LL, stream in zip(keys, (L, L / factor, L * factor), streams):
        ((_, result),) = independent_runs(make_problem("affine", d, n, LL, sigma), stream, 1, **M_PROTOCOL)
        models[key] = Attention(result.M)
        ws[key] = result.w_trained
    measured = _ratios(models, probes, n, sigma, contexts, streams[3])
    z = decision.bonferroni_z(len(FIGURE5_CLASSES) * 2)
    evidence = _sign_claim(
        measured["log_ratio"], keys[1:], z,
        f"Trained attention (M-form, affine tasks) pretrained at L' = L/{factor:g} or {factor:g} L has a larger ICL "
        f"error on L-tasks of the Figure 5 classes than pretrained at L={L:g} (d={d}, n={n}, sigma={sigma:g}).",
        f"sign of log(E_L'/E_L) on {', '.join(FIGURE5_CLASSES)} ({contexts} contexts, common random numbers, "
        f"z = {z:.2f}); one trainer run per setting ({M_PROTOCOL}).", start)
    evidence.figure = _mismatch_figure(measured["errors"], probes, z, "Figure 5 with trained attention")
    evidence.extra["w_trained"] = ws
    return evidence
