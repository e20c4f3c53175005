"""Theorem 3.5: pretrained attention generalises to unseen ``L``-Lipschitz tasks; a mismatched ``L'``
does markedly worse (paper Section 3.2, Figure 5; CLAIMS.md section 3).

Statement checked.  Attention pretrained on an ``L``-class (``M = w* I`` with ``w*`` the exact optimum of
the affine or relu class at ``(n, L, sigma)``, :func:`lipschitz_icl.optimum.wstar`; in the full profile
also the ``M`` found by the trainer) is tested on the probe suite of :mod:`lipschitz_icl.probes`
(affine, relu, cosine and triangle waves at several frequencies, distance to random points; all
``L``-Lipschitz on the sphere, most never seen in pretraining).

Theory side (derived, :mod:`derivations.window_law` and :mod:`derivations.sphere_asymptotics`):

* Lipschitz envelope of the bias.  For any task with per-task Lipschitz constant ``<= L`` and weights
  ``p`` summing to one, ``|sum_i p_i f(x_i) - f(q)| <= L sum_i p_i ||x_i - q||``, so by Jensen
  ``bias <= L^2 E sum_i p_i ||x_i - q||^2 = 2 L^2 E sum_i p_i (1 - t_i)``, whose large-``n`` limit is
  ``2 L^2 (1 - A_d(w)) = L^2 (d - 1)/w (1 + O(1/w))``.  With ``w* ~ C rho^alpha`` the envelope falls
  as ``n^-alpha``; the noise part ``sigma^2 R_d(w*)/n`` falls as ``n^-(1 - alpha (d-1)/2) = n^(-p alpha)``,
  faster.  So the ICL error of any ``L``-Lipschitz task falls at least as fast as ``n^-alpha``
  (``alpha`` the pretraining class's window exponent).
* For a probe whose bias is ``~ w^-p_probe`` (derived: affine ``p = 2``, relu ``p = 3/2``), the error
  with the pretrained window falls as ``n^(-alpha min(p_probe, p_train))``; reported, not gated (the
  approach to this power is slow, see the relu correction in :mod:`derivations.window_law`).
* Noise part: the weights do not depend on the task, so the noise part is the same on every probe:
  ``sigma^2 (R_d(w)/n + c_q w^(d-1)/n^2)`` (``R_d`` exact, ``c_q`` the derived ``1/n^2`` coefficient).
* Mismatch: with ``bias = b w^-p`` and ``noise = c w^beta/n`` balanced at ``w*`` (first-order
  condition ``p bias = beta noise``), the error at ``lambda w*`` is
  ``E*(beta lambda^-p + p lambda^beta)/(beta + p)``; pretraining at ``L'`` gives
  ``lambda = (L'/L)^(2 alpha)`` at leading order.

Measured numbers: :func:`lipschitz_icl.probes.probe_terms` (Monte Carlo over covariates, queries and
tasks, label noise integrated out; all models on common random numbers, independent draws per ``n``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from derivations import sphere_asymptotics as sph
from derivations import window_law as law

from ..attention import Attention
from ..evidence import Evidence, FalseVariant, Quantity, combine_verdicts
from ..optimum import wstar
from ..probes import probe_suite, probe_terms
from ..problem import make_problem

__all__ = ["generalisation", "mismatch", "trained_mismatch", "slope_verdict", "decrease_verdict",
           "marked_verdict", "mismatch_ratio_theory", "SWEEP_N", "MARKED_FACTOR", "FIGURE5_CLASSES"]

REF_35 = "Theorem 3.5, Figure 5"
FAMILY_LEVEL = 1e-3  # family-wise error of the Monte Carlo decisions within one claim (Bonferroni)
SWEEP_N = (100, 1000, 10000)
MARKED_FACTOR = 2.0  # "markedly larger": at least twice the error of the matched pretraining
# The factor is required of a mismatch only where the derived leading-order ratio for the pretraining
# class (:func:`mismatch_ratio_theory`) is at least MARKED_MARGIN x MARKED_FACTOR: the other Figure 5
# classes measured up to ~20% below the affine prediction (1/(1 - 0.2) = 1.25).  Elsewhere (d = 2,
# L' = 10 L: derived ratio 2.01) theory predicts a worse but not a marked error, and the rule asks for
# a significantly larger error (factor 1).
MARKED_MARGIN = 1.25
FIGURE5_CLASSES = ("affine", "relu", "cosine-1")  # the paper's Figure 5 classes, tested at L


def _z_crit(tests: int) -> float:
    return float(stats.norm.ppf(1 - FAMILY_LEVEL / max(tests, 1)))


def _mean_se(samples) -> tuple[float, float]:
    samples = np.asarray(samples, dtype=float)
    return float(samples.mean()), float(samples.std(ddof=1) / math.sqrt(samples.size))


# ----------------------------------------------------------------------------- decision rules
def decrease_verdict(values, errors, z_crit: float) -> str:
    """Strictly decreasing along the grid: every consecutive ``(E_k - E_{k+1}) / sqrt(se_k^2 + se_{k+1}^2)``
    (independent samples) is ``> z_crit``: holds; any ``< -z_crit``: fails; otherwise inconclusive."""
    v, e = np.asarray(values, float), np.asarray(errors, float)
    z = (v[:-1] - v[1:]) / np.hypot(e[:-1], e[1:])
    if np.all(z > z_crit):
        return "holds"
    if np.any(z < -z_crit):
        return "fails"
    return "inconclusive"


def slope_verdict(n_pair, values, errors, threshold: float, z_crit: float) -> tuple[str, float, float]:
    """"The error falls at least as fast as ``n^threshold``" from the local log-log slope between two grid
    points ``s = log(E_2/E_1)/log(n_2/n_1)``, ``se(s) = sqrt((se_1/E_1)^2 + (se_2/E_2)^2)/log(n_2/n_1)``
    (delta method, independent samples).  Holds iff ``s + z_crit se < threshold``; fails iff
    ``s - z_crit se > threshold``; otherwise inconclusive.  Returns ``(verdict, s, se)``."""
    (n1, n2), (v1, v2), (e1, e2) = n_pair, values, errors
    span = math.log(n2 / n1)
    s = math.log(v2 / v1) / span
    se = math.hypot(e1 / v1, e2 / v2) / span
    if s + z_crit * se < threshold:
        return "holds", s, se
    if s - z_crit * se > threshold:
        return "fails", s, se
    return "inconclusive", s, se


def marked_verdict(diff, ratio: float, z_crit: float, factor: float = MARKED_FACTOR) -> str:
    """"``E'`` is markedly larger than ``E``": the paired difference ``E' - E`` (common random numbers)
    has ``z > z_crit`` and the ratio ``E'/E > factor``: holds; ``z < z_crit`` or ``ratio <= factor``
    (not significantly larger, or less than ``factor`` times larger): fails."""
    value, se = diff
    z = value / se if se > 0 else math.copysign(math.inf, value)
    return "holds" if (z > z_crit and ratio > factor) else "fails"


def mismatch_ratio_theory(lam: float, p: float, beta: float) -> float:
    """``E(lambda w*)/E(w*) = (beta lambda^-p + p lambda^beta)/(beta + p)`` for ``E = b w^-p + c w^beta/n``
    (leading order; at ``w*`` the first-order condition gives ``p bias = beta noise``)."""
    return (beta * lam**-p + p * lam**beta) / (beta + p)


# ----------------------------------------------------------------------------- theory helpers
def _noise_theory(d: int, w: float, n: int, sigma: float) -> tuple[float, float]:
    """``sigma^2 (R_d(w)/n + c_q w^pq/n^2)`` and its last included term (the tolerance of the series)."""
    pq, cq = law.noise_finite_n_leading(d)
    last = sigma**2 * cq * w**pq / n**2
    return sigma**2 * float(sph.exact_collision_ratio(d, w)) / n + last, abs(last)


def _envelope_theory(d: int, w: float, L: float) -> float:
    """Large-``n`` Lipschitz envelope of the bias ``2 L^2 (1 - A_d(w))``."""
    return 2 * L**2 * float(1 - sph.exact_tilted_mean(d, w))


def _estimates(terms, L: float):
    """Per probe and model: loss/bias/noise ``(mean, se)``, and ``max_c(bias_c - L^2 env_c)``."""
    out = {}
    for name, parts in terms["probes"].items():
        rows = []
        for (bias_c, noise_c), env_c in zip(parts, terms["envelope"]):
            rows.append({"loss": _mean_se(bias_c + noise_c), "bias": _mean_se(bias_c),
                         "noise": _mean_se(noise_c), "excess": float(np.max(bias_c - L**2 * env_c))})
        out[name] = rows
    return out


def _run(probes, models, n, sigma, contexts, seed):
    bias_noise, envelope = probe_terms(probes, models, n, sigma, contexts, seed, envelope=True)
    return {"probes": bias_noise, "envelope": envelope}


# ----------------------------------------------------------------------------- (a) generalisation
def generalisation(train_task: str, d: int, *, L: float = 1.0, sigma: float = 0.5, n_grid=SWEEP_N,
                   contexts=(2000, 2000, 600), seed: int = 0, probe_kwargs: dict | None = None) -> Evidence:
    """Theorem 3.5 (a): with the window pretrained on ``train_task`` at ``(n, L, sigma)`` the ICL error on
    every probe falls with ``n``, at least as fast as the Lipschitz envelope ``n^-alpha``, with each part
    held against its derived bound.

    Rule (family-wise level :data:`FAMILY_LEVEL`, Bonferroni over all decisions of the claim), per probe:
    (i) the error decreases along ``n_grid`` (:func:`decrease_verdict`); (ii) the local slope between the
    two largest ``n`` is below ``-alpha_train`` (:func:`slope_verdict`); (iii) bias part: decreasing in
    ``n`` and, in every sampled context, at most ``L^2 sum_i p_i ||x_i - q||^2`` (the envelope; a
    deterministic inequality, slack 1e-12); (iv) noise part (the same on every probe): within
    ``z_crit se + |last term|`` of ``sigma^2 (R_d(w*)/n + c_q w*^(d-1)/n^2)`` at every ``n``.
    False variants (same rules): a window frozen at ``w*(n_min)`` falls at the envelope rate; the error
    falls as fast as ``n^-1``; the noise part grows as ``w^((d+1)/2)/n`` (``beta + 1/2``).
    """
    start = time.perf_counter()
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    alpha, C = law.window_law(train_task, d)
    p_train = -law.bias_leading(train_task, d)[0]
    beta = law.noise_leading(d)[0]
    seeds = np.random.SeedSequence(seed).spawn(len(n_grid))
    w_grid = [wstar(make_problem(train_task, d, n, L, sigma), "exact").w_star.value for n in n_grid]
    frozen = w_grid[0]
    per_n = []
    for n, w, c, ss in zip(n_grid, w_grid, contexts, seeds):
        models = [Attention(w * np.eye(d)), Attention(frozen * np.eye(d))]
        per_n.append(_estimates(_run(probes, models, n, sigma, c, np.random.default_rng(ss)), L))
    k = len(probes)
    z = _z_crit(k * (2 * (len(n_grid) - 1) + 1 + 2) + len(n_grid))
    quantities, verdicts = [], []
    fv_frozen, fv_parametric = [], []
    series = []
    excesses = {}
    for probe in probes:
        rows = [per_n[j][probe.name] for j in range(len(n_grid))]
        loss = [r[0]["loss"] for r in rows]
        bias = [r[0]["bias"] for r in rows]
        v_dec = decrease_verdict([m for m, _ in loss], [s for _, s in loss], z)
        pair = (n_grid[-2], n_grid[-1])
        v_slope, s, se = slope_verdict(pair, [m for m, _ in loss[-2:]], [e for _, e in loss[-2:]], -alpha, z)
        v_bias = decrease_verdict([m for m, _ in bias], [e for _, e in bias], z)
        excess = max(r[0]["excess"] for r in rows)
        excesses[probe.name] = excess
        v_env = "holds" if excess <= 1e-12 * L**2 else "fails"
        verdicts += [v_dec, v_slope, v_bias, v_env]
        p_probe = -law.bias_leading(probe.name, d)[0] if probe.name in law.TASKS else None
        predicted = -alpha * min(p_probe, p_train) if p_probe else None
        quantities.append(Quantity(
            f"{probe.name}: slope of log error vs log n", predicted, s, s - z * se, s + z * se,
            combine_verdicts([v_dec, v_slope]),
            f"must be < -alpha = {-alpha:.4g} (envelope rate); errors " + ", ".join(f"{m:.3g}" for m, _ in loss)
            + ("" if predicted is None else f"; theory is -alpha min(p_probe, p_train)")))
        quantities.append(Quantity(
            f"{probe.name}: bias at n={n_grid[-1]} / Lipschitz envelope 2L^2(1-A_d(w*))", None,
            bias[-1][0] / _envelope_theory(d, w_grid[-1], L), None, None, combine_verdicts([v_bias, v_env]),
            f"bias decreasing in n; per-context excess over L^2 sum p|x-q|^2 = {excess:.2e} (must be <= 0)"))
        frozen_loss = [r[1]["loss"] for r in rows]
        fv_frozen.append(slope_verdict(pair, [m for m, _ in frozen_loss[-2:]], [e for _, e in frozen_loss[-2:]],
                                       -alpha, z)[0])
        fv_parametric.append(slope_verdict(pair, [m for m, _ in loss[-2:]], [e for _, e in loss[-2:]], -1.0, z)[0])
        series.append({"label": probe.name, "x": list(map(float, n_grid)), "y": [m for m, _ in loss],
                       "y_low": [m - z * e for m, e in loss], "y_high": [m + z * e for m, e in loss]})
    # noise part (identical on every probe: take the first)
    noise_v, noise_wrong = [], []
    for j, (n, w) in enumerate(zip(n_grid, w_grid)):
        m, e = per_n[j][probes[0].name][0]["noise"]
        theory, last = _noise_theory(d, w, n, sigma)
        noise_v.append("holds" if abs(m - theory) <= z * e + last else "fails")
        wrong = theory * w**0.5  # noise part with power beta + 1/2
        noise_wrong.append("holds" if abs(m - wrong) <= z * e + last else "fails")
        quantities.append(Quantity(f"noise part at n={n} (w*={w:.4g})", theory, m, m - z * e, m + z * e,
                                   noise_v[-1], f"tolerance z se + last term {last:.2g}"))
    verdicts += noise_v
    envelope = [_envelope_theory(d, w, L) + _noise_theory(d, w, n, sigma)[0] for n, w in zip(n_grid, w_grid)]
    quantities.append(Quantity("w* growth exponent over the grid (window law)", alpha,
                               float(np.polyfit(np.log(n_grid), np.log(w_grid), 1)[0]), None, None, None,
                               "w* = " + ", ".join(f"{w:.4g}" for w in w_grid) + " (exact quadrature)"))
    false_variants = [
        FalseVariant(f"a window frozen at w*(n={n_grid[0]}) = {frozen:.3g} falls at the envelope rate",
                     combine_verdicts(fv_frozen) if "fails" not in fv_frozen else "fails"),
        FalseVariant("the error falls as fast as n^-1 (parametric rate)",
                     "fails" if "fails" in fv_parametric else combine_verdicts(fv_parametric)),
        FalseVariant(f"the noise part grows as w^{beta + 0.5:g}/n",
                     "fails" if "fails" in noise_wrong else "holds"),
    ]
    evidence = Evidence(
        f"thm35/generalisation/{train_task}/d{d}", REF_35,
        f"Attention pretrained on {train_task} tasks (d={d}, L={L:g}, sigma={sigma:g}; M = w*(n) I) has an ICL "
        f"error on every L-Lipschitz probe ({', '.join(p.name for p in probes)}) that falls with n at least "
        f"as fast as the Lipschitz envelope n^-{alpha:.4g}; its bias stays under the envelope and its noise "
        "part follows sigma^2 R_d(w*)/n.",
        generalisation.__doc__.split("\n\n", 1)[1].strip().replace("\n    ", " ")
        + f" Grid n = {list(n_grid)}, contexts {list(contexts)}, z_crit = {z:.2f}.",
        quantities, combine_verdicts(verdicts), time.perf_counter() - start, false_variants)
    series.append({"label": "Lipschitz envelope (theory)", "x": list(map(float, n_grid)), "y": envelope})
    evidence.figure = {"kind": "loglog", "x": list(map(float, n_grid)), "y": envelope, "series": series,
                       "xlabel": "n", "ylabel": "ICL error", "title": f"pretrained on {train_task} (w*(n)), tested on probes"}
    evidence.extra = {"n": list(n_grid), "w_star": w_grid, "alpha": alpha, "C": C, "envelope": envelope,
                      "bias": {p.name: [per_n[j][p.name][0]["bias"][0] for j in range(len(n_grid))] for p in probes},
                      "noise": [per_n[j][probes[0].name][0]["noise"][0] for j in range(len(n_grid))],
                      "envelope_excess": excesses}
    return evidence


# ----------------------------------------------------------------------------- (b) mismatch, Figure 5
def _short(name: str) -> str:
    """Compact probe name for figure axes: cosine-4 -> cos4, triangle-1 -> tri1, distance-3 -> dist3."""
    for long, short in (("cosine-", "cos"), ("triangle-", "tri"), ("distance-", "dist")):
        name = name.replace(long, short)
    return name


def _mismatch_evidence(claim_id, description, models: dict, d, n, L, sigma, contexts, seed, probes,
                       theory_lambda: dict, start) -> Evidence:
    """Shared rule of :func:`mismatch` and :func:`trained_mismatch` (see :func:`mismatch`)."""
    names = list(models)
    terms = _run(probes, [models[k] for k in names], n, sigma, contexts, np.random.default_rng(seed))
    ref = names[0]
    mismatched = [k for k in names if k.startswith("L'")]
    same_L = [k for k in names[1:] if not k.startswith("L'")]
    decisions = len(FIGURE5_CLASSES) * (len(mismatched) + 2 * len(same_L) + len(mismatched))
    z = _z_crit(decisions)
    quantities, verdicts, fv_swapped, fv_cross = [], [], [], []
    table = {}
    beta = law.noise_leading(d)[0]
    p_aff = -law.bias_leading("affine", d)[0]
    derived = {k: mismatch_ratio_theory(lam, p_aff, beta) for k, lam in theory_lambda.items()}
    factor = {k: MARKED_FACTOR if derived.get(k, 0.0) >= MARKED_MARGIN * MARKED_FACTOR else 1.0 for k in mismatched}
    for probe in probes:
        parts = terms["probes"][probe.name]
        losses = {k: b + nz for k, (b, nz) in zip(names, parts)}
        base = losses[ref]
        table[probe.name] = {k: _mean_se(v) for k, v in losses.items()}
        for k in names[1:]:
            diff = _mean_se(losses[k] - base)
            ratio = losses[k].mean() / base.mean()
            gated = probe.name in FIGURE5_CLASSES
            if k in mismatched:
                v = marked_verdict(diff, ratio, z, factor[k]) if gated else None
                if gated:
                    verdicts.append(v)
                    fv_swapped.append(marked_verdict((-diff[0], diff[1]), 1 / ratio, z, factor[k]))
                theory = derived.get(k) if probe.name == "affine" else None  # the pretraining class itself
                quantities.append(Quantity(
                    f"{probe.name}: error ratio {k} / {ref}", theory, ratio, None, None, v,
                    f"paired difference {diff[0]:.3g} +- {diff[1]:.1g}; "
                    + ("gated: must be > " + f"{factor[k]:g} and significant" if gated else
                       "reported only (not a Figure 5 class)")
                    + ("" if theory is None else "; theory: leading-order mismatch formula")))
            elif gated:
                # same L, other pretraining class: not markedly worse, in either direction
                v1 = marked_verdict(diff, ratio, z)
                v2 = marked_verdict((-diff[0], diff[1]), 1 / ratio, z)
                verdicts.append("holds" if (v1 == "fails" and v2 == "fails") else "fails")
                fv_cross.append(v1)
                quantities.append(Quantity(f"{probe.name}: error ratio {k} / {ref}", 1.0, ratio, None, None,
                                           verdicts[-1], f"must not differ by a factor > {MARKED_FACTOR:g}; "
                                           f"paired difference {diff[0]:.3g} +- {diff[1]:.1g}"))
    false_variants = [
        FalseVariant("the matched pretraining is markedly worse than the mismatched one",
                     "fails" if "fails" in fv_swapped else "holds"),
        FalseVariant(f"pretraining at the same L on another class ({', '.join(same_L)}) is markedly worse",
                     "fails" if "fails" in fv_cross else "holds") if same_L else None,
    ]
    series = [{"label": k, "x": list(range(len(probes))), "y": [table[p.name][k][0] for p in probes],
               "y_low": [table[p.name][k][0] - z * table[p.name][k][1] for p in probes],
               "y_high": [table[p.name][k][0] + z * table[p.name][k][1] for p in probes]} for k in names]
    evidence = Evidence(
        claim_id, REF_35, description,
        f"{contexts} contexts at n={n}, all models on common random numbers; {mismatch.__doc__.split(chr(10) * 2, 2)[1].strip()}"
        f" z_crit = {z:.2f} (Bonferroni over {decisions} decisions, family-wise level {FAMILY_LEVEL:g}).",
        quantities, combine_verdicts(verdicts), time.perf_counter() - start,
        [fv for fv in false_variants if fv is not None])
    evidence.figure = {"kind": "scatter", "x": series[0]["x"], "y": series[0]["y"], "series": series,
                       "xlabel": "test task: " + ", ".join(f"{i} {_short(p.name)}" for i, p in enumerate(probes)),
                       "ylabel": "ICL error", "title": "Figure 5: pretraining setting vs test task (same L)"}
    evidence.extra = {"probes": [p.name for p in probes], "errors": {p: {k: v[0] for k, v in row.items()}
                                                                     for p, row in table.items()},
                      "derived_ratio": derived, "required_factor": factor}
    return evidence


def mismatch(d: int, *, n: int = 1000, L: float = 1.0, sigma: float = 0.5, contexts: int = 2000,
             seed: int = 0, factor: float = 10.0, probe_kwargs: dict | None = None) -> Evidence:
    """Theorem 3.5 (b), the paper's Figure 5 with ``M = w* I``: attention pretrained on affine tasks at
    ``L``, on relu tasks at ``L``, and on affine tasks at ``L' = L/factor`` and ``L' = factor L``,
    all tested on ``L``-tasks.

    Rule, on each Figure 5 class (affine, relu, cosine-1 at ``L``): every mismatched pretraining is
    markedly worse than the matched one (:func:`marked_verdict`: paired difference significant and ratio
    ``> MARKED_FACTOR``; only significantly worse, ratio ``> 1``, where the derived ratio for the
    pretraining class is below ``MARKED_MARGIN x MARKED_FACTOR``), and pretraining at the same ``L`` on the other class is not markedly worse
    nor markedly better.  The other probes' ratios are reported, not gated: a narrower window can help
    an ``L``-Lipschitz task rougher than the pretraining class (no theorem says otherwise).  False
    variants (same rule): the matched pretraining is markedly worse than the mismatched one; the
    same-``L`` other class is markedly worse.
    """
    start = time.perf_counter()
    probes = probe_suite(d, L, **(probe_kwargs or {}))
    alpha = law.window_law("affine", d)[0]
    settings = {"affine@L": ("affine", L), "relu@L": ("relu", L),
                f"L'=L/{factor:g} (affine)": ("affine", L / factor), f"L'={factor:g}L (affine)": ("affine", L * factor)}
    ws = {k: wstar(make_problem(task, d, n, LL, sigma), "exact").w_star.value for k, (task, LL) in settings.items()}
    models = {k: Attention(w * np.eye(d)) for k, w in ws.items()}
    lam = {f"L'=L/{factor:g} (affine)": factor ** (-2 * alpha), f"L'={factor:g}L (affine)": factor ** (2 * alpha)}
    ev = _mismatch_evidence(f"thm35/mismatch/d{d}/n{n}", (
        f"Pretrained at the same L={L:g} (affine or relu class) the attention has a low error on L-tasks of the "
        f"Figure 5 classes; pretrained with L' = L/{factor:g} or {factor:g} L it does markedly worse (d={d}, n={n}, "
        f"sigma={sigma:g})."), models, d, n, L, sigma, contexts, seed, probes, lam, start)
    ev.extra["w_star"] = ws
    return ev


def trained_mismatch(d: int, *, n: int = 50, L: float = 1.0, sigma: float = 0.5, contexts: int = 4000,
                     seed: int = 0, factor: float = 10.0, entropy: int = 350) -> Evidence:
    """Figure 5 with trained attention: the M-form pretrained by the trainer
    (:data:`lipschitz_icl.pretraining.M_PROTOCOL`) on affine tasks at ``L``, ``L/factor`` and
    ``factor L`` (one run each, children of ``SeedSequence(entropy)``), tested with the rule of
    :func:`mismatch` (no same-``L`` other class here)."""
    from ..pretraining import M_PROTOCOL, independent_runs

    start = time.perf_counter()
    probes = probe_suite(d, L)
    models, ws = {}, {}
    for k, (key, LL) in enumerate((("trained affine@L", L), (f"L'=L/{factor:g} (trained)", L / factor),
                                   (f"L'={factor:g}L (trained)", L * factor))):
        (_, result), = independent_runs(make_problem("affine", d, n, LL, sigma), entropy + k, 1, **M_PROTOCOL)
        models[key] = Attention(result.M)
        ws[key] = result.w_trained
    alpha = law.window_law("affine", d)[0]
    lam = {f"L'=L/{factor:g} (trained)": factor ** (-2 * alpha), f"L'={factor:g}L (trained)": factor ** (2 * alpha)}
    ev = _mismatch_evidence(f"thm35/mismatch-trained/d{d}/n{n}", (
        f"Trained attention (M-form, affine tasks) pretrained at L={L:g} has a low error on L-tasks; pretrained "
        f"at L/{factor:g} or {factor:g} L it does markedly worse (d={d}, n={n}, sigma={sigma:g})."),
        models, d, n, L, sigma, contexts, seed, probes, lam, start)
    ev.extra["w_trained"] = ws
    return ev
