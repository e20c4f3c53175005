"""Sphere concentration: the stated bounds of :mod:`lipschitz_icl.inequalities` dominate the true tails.

CLAIMS.md section 3, "Sphere concentration": the proof of Theorem 4.4 rests on concentration
inequalities for points uniform on ``S^{d-1}`` (tails of ``||P x||^2`` for a projector, cap counts,
Lipschitz functionals of a uniform point, the softmax normaliser ``(1/n) sum_i exp(w x_i . q)``).  Each
stated bound must dominate the true tail.

Truth:

* exact where the law is known: ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` (:func:`concentration.projection_tail`
  and ``scipy.special.betainc`` for the lower tail), ``x . q`` (:func:`concentration.cap_tail`), cap counts
  ``~ Binomial(n, cap probability)`` (``scipy.stats.binom``), ``||P x||`` (a 1-Lipschitz functional with
  the Beta law and the exact mean ``E||P x|| = Gamma((k+1)/2) Gamma(d/2) / (Gamma(k/2) Gamma((d+1)/2))``);
* Monte Carlo otherwise (two further Lipschitz functionals; the softmax normaliser), with two-sided
  Clopper-Pearson intervals (``scipy.stats.beta`` quantiles) at family-wise level
  :data:`FAMILY_LEVEL` (Bonferroni over the grid points of one claim).

Decision rules (the same for a claim and for its false variants):

* exact truth: a bound *holds* at a point iff ``bound >= truth (1 - TAIL_RTOL)``
  (:data:`lipschitz_icl.concentration.TAIL_RTOL`, the accuracy of the Beta/Binomial tails); the claim
  holds iff it holds at every grid point, and fails with the worst point as counter-example otherwise.
* Monte Carlo truth: at each point the bound *dominates* iff ``bound >= UCL`` and is *violated* iff
  ``bound < LCL``; the claim fails if any point is violated, holds if every point is dominated, and is
  inconclusive otherwise.  To keep every point resolvable, the tail arguments of the Monte Carlo grids
  are placed where the *valid* bound equals stated levels no smaller than :data:`MC_MIN_BOUND` (a
  theory-side choice made from the bound's formula, never from the samples).

Each claim reports the tightness ``bound / truth`` (min, geometric mean, max) and, for the
``exp(-rate g)`` shapes with exact truth, the largest rate the numerics allow
(``min over the grid of -ln(truth) / g``) beside the stated one.  False variants: the same bounds with
a deliberately too-large rate (too-small constant), which must be refuted by the same comparison.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import special, stats

from .. import inequalities as ineq
from .. import sphere
from ..concentration import TAIL_RTOL, cap_tail, projection_tail
from ..evidence import Evidence, FalseVariant, Quantity, combine_verdicts

__all__ = ["FAMILY_LEVEL", "MC_MIN_BOUND", "clopper_pearson", "exact_rule", "mc_rule", "projection_tails",
           "cap_counts", "lipschitz_functionals", "softmax_normaliser"]

REF = "Sphere concentration"
FAMILY_LEVEL = 1e-3
MC_MIN_BOUND = 2e-3
BOUND_LEVELS = (0.5, 0.2, 0.05, 0.01, MC_MIN_BOUND)  # where the valid bound sits on the Monte Carlo grids


# ----------------------------------------------------------------------------- decision rules
def clopper_pearson(count, total: int, level: float):
    """Two-sided Clopper-Pearson interval ``(low, high)`` for a binomial proportion at ``level``:
    ``low = Beta^{-1}(a/2; c, N - c + 1)``, ``high = Beta^{-1}(1 - a/2; c + 1, N - c)``, ``a = 1 - level``."""
    count = np.asarray(count, dtype=np.float64)
    a = 1.0 - level
    low = np.where(count > 0, stats.beta.ppf(0.5 * a, np.maximum(count, 1e-300), total - count + 1), 0.0)
    high = np.where(count < total, stats.beta.ppf(1 - 0.5 * a, count + 1, np.maximum(total - count, 1e-300)), 1.0)
    return low, high


def exact_rule(bound, truth) -> tuple[str, int]:
    """Exact truth: holds iff ``bound >= truth (1 - TAIL_RTOL)`` everywhere.  Returns the verdict and an
    index: when it fails, the violated point with the largest true tail (the counter-example least
    exposed to floating-point underflow); otherwise the point with the smallest ``bound / truth``."""
    bound = np.asarray(bound, dtype=float).ravel()
    truth = np.asarray(truth, dtype=float).ravel()
    ok = bound >= truth * (1.0 - TAIL_RTOL)
    if not np.all(ok):
        return "fails", int(np.argmax(np.where(ok, -np.inf, truth)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(truth > 0, bound / truth, np.inf)
    return "holds", int(np.argmin(ratio))


def mc_rule(bound, low, high) -> tuple[str, int]:
    """Monte Carlo truth with interval ``[low, high]``: fails if any ``bound < low``, holds if every
    ``bound >= high``, else inconclusive.  Returns the verdict and an index: when it fails, the violated
    point with the smallest ``bound / low``; otherwise the point with the smallest ``bound / high``."""
    bound = np.asarray(bound, dtype=float).ravel()
    low = np.asarray(low, dtype=float).ravel()
    high = np.asarray(high, dtype=float).ravel()
    worst = int(np.argmin(bound / np.maximum(high, 1e-300)))
    violated = bound < low
    if np.any(violated):
        return "fails", int(np.argmin(np.where(violated, bound / np.maximum(low, 1e-300), np.inf)))
    return ("holds" if np.all(bound >= high) else "inconclusive"), worst


def _tightness(bound, truth) -> dict:
    bound = np.asarray(bound, dtype=float).ravel()
    truth = np.asarray(truth, dtype=float).ravel()
    use = (truth > 1e-300) & (bound > 0)
    r = bound[use] / truth[use]
    if r.size == 0:
        return {"min": float("nan"), "geomean": float("nan"), "max": float("nan")}
    return {"min": float(r.min()), "geomean": float(np.exp(np.mean(np.log(r)))), "max": float(r.max())}


def _largest_rate(truth, g) -> float:
    """Largest ``rate`` with ``exp(-rate g) >= truth`` at every point (``g > 0``, ``truth > 0``)."""
    truth = np.asarray(truth, dtype=float).ravel()
    g = np.asarray(g, dtype=float).ravel()
    use = (truth > 1e-300) & (g > 0)
    return float(np.min(-np.log(truth[use]) / g[use]))


def _ratio_quantity(name, bound, truth, verdict, note="") -> Quantity:
    t = _tightness(bound, truth)
    return Quantity(f"tightness bound/true: {name}", 1.0, t["min"], t["min"], t["max"], verdict,
                    (note + "; " if note else "") + f"geometric mean {t['geomean']:.3g}, max {t['max']:.3g}; "
                    "must be >= 1")


# ----------------------------------------------------------------------------- 1. projections
def projection_tails(*, dk_grid=((3, 1), (5, 2), (10, 2), (20, 5), (50, 10)),
                     beta_upper=(1.25, 1.5, 2.0, 3.0, 4.0), beta_lower=(0.8, 0.5, 0.25, 0.1)) -> Evidence:
    """Dasgupta-Gupta tails of ``||P x||^2`` (rank ``k``) against the exact ``Beta(k/2, (d-k)/2)`` law.

    Grid: ``s = beta k / d`` for ``beta`` in ``beta_upper`` (upper tail, points with ``s < 1``) and
    ``beta_lower`` (lower tail), ``(d, k)`` in ``dk_grid``.  Bounds: ``exp(k/2 (1 - beta + ln beta))``
    (:func:`~lipschitz_icl.inequalities.projection_bound`) and the sharper
    :func:`~lipschitz_icl.inequalities.projection_bound_dg` (upper tail).  Rule: :func:`exact_rule`.
    False variant: rate ``1`` (exponent ``k`` instead of ``k/2``).
    """
    start = time.perf_counter()
    rows = []
    for d, k in dk_grid:
        for side, betas in (("upper", beta_upper), ("lower", beta_lower)):
            for beta in betas:
                s = beta * k / d
                if side == "upper" and s >= 1.0:
                    continue
                truth = float(projection_tail(d, k, s)) if side == "upper" else float(
                    special.betainc(0.5 * k, 0.5 * (d - k), s))
                rows.append((d, k, side, beta, s, truth))
    d_, k_, side_, beta_, s_, truth = (np.array(c) for c in zip(*rows))
    bound = np.array([ineq.projection_bound(d, k, s, side=sd) for d, k, sd, s in zip(d_, k_, side_, s_)], float)
    sharp_rows = side_ == "upper"
    sharp = np.array([ineq.projection_bound_dg(d, k, s) for d, k, s in
                      zip(d_[sharp_rows], k_[sharp_rows], s_[sharp_rows])], float)
    wrong = np.array([ineq.projection_bound(d, k, s, side=sd, rate=1.0) for d, k, sd, s in
                      zip(d_, k_, side_, s_)], float)
    v_main, i_main = exact_rule(bound, truth)
    v_sharp, _ = exact_rule(sharp, truth[sharp_rows])
    v_wrong, i_wrong = exact_rule(wrong, truth)
    g = k_ * (beta_ - 1.0 - np.log(beta_))
    rate_max = _largest_rate(truth, g)

    def where(i):
        return f"d={d_[i]}, k={k_[i]}, {side_[i]} tail, s={s_[i]:.4g}: bound {wrong[i]:.3e} < exact {truth[i]:.3e}"

    quantities = [
        _ratio_quantity("exp(k/2 (1 - beta + ln beta))", bound, truth, v_main),
        _ratio_quantity("Dasgupta-Gupta sharp form (upper)", sharp, truth[sharp_rows], v_sharp),
        Quantity("largest valid rate (numerics) vs stated 1/2", 0.5, rate_max, None, None,
                 "holds" if rate_max >= 0.5 * (1 - 1e-9) else "fails",
                 "min over the grid of -ln(exact) / (k (beta - 1 - ln beta))"),
    ]
    ev = Evidence(
        "concentration/projection", REF,
        "For x uniform on S^{d-1} and a rank-k projector P, P(||Px||^2 >= beta k/d) and P(||Px||^2 <= beta k/d) "
        "are at most exp(k/2 (1 - beta + ln beta)) (Dasgupta-Gupta, Lemma 2.2).",
        f"exact Beta(k/2,(d-k)/2) tails; holds iff bound >= exact (1 - {TAIL_RTOL:g}) at all {len(truth)} grid "
        f"points: (d,k) in {list(dk_grid)}, beta upper {list(beta_upper)} (s < 1), lower {list(beta_lower)}.",
        quantities, combine_verdicts([v_main, v_sharp]), time.perf_counter() - start,
        [FalseVariant("rate 1 (exponent k instead of k/2)", v_wrong, where(i_wrong))])
    series = [{"label": f"d={d}, k={k}", "x": s_[m].tolist(), "y": truth[m].tolist(), "theory_y": bound[m].tolist()}
              for d, k in dk_grid for m in [(d_ == d) & (k_ == k) & (side_ == "upper")] if m.any()]
    ev.figure = {"kind": "semilogy", "x": series[0]["x"], "y": series[0]["y"], "theory_y": series[0]["theory_y"],
                 "series": series, "xlabel": "s", "ylabel": "P(||Px||^2 >= s) (dashed: bound)"}
    ev.extra = {"largest_rate": rate_max, "points": len(truth)}
    return ev


# ----------------------------------------------------------------------------- 2. caps and cap counts
def cap_counts(*, cap_grid=((3, 0.5), (10, 0.3), (50, 0.2), (5, 0.0)), n_grid=(100, 1000, 10000),
               delta_upper=(0.1, 0.3, 0.5, 1.0), delta_lower=(0.1, 0.3, 0.5, 0.8),
               ball_d=(3, 5, 10, 20, 50, 100), ball_h=(0.1, 0.2, 0.3, 0.5, 0.7, 0.9)) -> Evidence:
    """Cap probability (Ball's Lemma 2.2) and counts of points in a cap (Chernoff-Hoeffding).

    The count ``N`` of ``n`` uniform points with ``x . q >= h`` is ``Binomial(n, p)``, ``p = cap_tail(d, h)``
    (exact).  Upper thresholds ``a = ceil((1 + delta) n p)``, ``P(N >= a)`` = ``binom.sf(a - 1)``; lower
    ``a = floor((1 - delta) n p)``, ``P(N <= a)`` = ``binom.cdf(a)``.  Bounds: relative-entropy Chernoff
    at ``a`` and the multiplicative forms at ``delta_eff = |a/(n p) - 1|`` (the same event).  Ball:
    ``P(x . q >= h) <= exp(-d h^2/2)`` on ``ball_d x ball_h``.  Rule: :func:`exact_rule`.
    False variants: each bound with its rate doubled.
    """
    start = time.perf_counter()
    rows = []
    for d, h in cap_grid:
        p = float(cap_tail(d, h))
        for n in n_grid:
            mu = n * p
            for side, deltas in (("upper", delta_upper), ("lower", delta_lower)):
                for delta in deltas:
                    if side == "upper":
                        a = math.ceil((1 + delta) * mu)
                        truth = float(stats.binom.sf(a - 1, n, p))
                    else:
                        a = math.floor((1 - delta) * mu)
                        truth = float(stats.binom.cdf(a, n, p))
                    rows.append((d, h, n, p, side, a, abs(a / mu - 1.0), truth))
    results = {}
    verdicts, variants, quantities = [], [], []
    cols = list(zip(*rows))
    d_, h_, n_, p_, side_, a_, de_, truth = (np.array(c) for c in cols)
    def chernoff(n, p, a, de, sd, r):
        return ineq.binomial_chernoff(n, p, a, side=sd, rate=r)

    def multiplicative(n, p, a, de, sd, r):
        return ineq.binomial_multiplicative(n, p, de, side=sd, rate=r)

    for name, fn in (("Chernoff relative entropy", chernoff), ("multiplicative Chernoff", multiplicative)):
        bound = np.array([fn(int(n), p, a, de, sd, 1.0) for n, p, a, de, sd in zip(n_, p_, a_, de_, side_)], float)
        wrong = np.array([fn(int(n), p, a, de, sd, 2.0) for n, p, a, de, sd in zip(n_, p_, a_, de_, side_)], float)
        v, _ = exact_rule(bound, truth)
        vw, iw = exact_rule(wrong, truth)
        verdicts.append(v)
        results[name] = bound
        quantities.append(_ratio_quantity(f"{name} (counts in a cap)", bound, truth, v))
        variants.append(FalseVariant(f"{name} with rate 2", vw,
                                     f"d={d_[iw]}, h={h_[iw]}, n={n_[iw]}, {side_[iw]} tail, a={a_[iw]}: "
                                     f"bound {wrong[iw]:.3e} < exact {truth[iw]:.3e}"))
    g = n_ * ineq.bernoulli_kl(a_ / n_, p_)
    quantities.append(Quantity("largest valid Chernoff rate (numerics) vs stated 1", 1.0, _largest_rate(truth, g),
                               None, None, None, "min over the grid of -ln(exact) / (n D(a/n || p))"))
    # Ball's cap bound
    dd, hh = np.meshgrid(np.array(ball_d), np.array(ball_h), indexing="ij")
    cap_truth = np.array([float(cap_tail(int(d), h)) for d, h in zip(dd.ravel(), hh.ravel())])
    ball = np.array([float(ineq.cap_bound(int(d), h)) for d, h in zip(dd.ravel(), hh.ravel())])
    ball_wrong = np.array([float(ineq.cap_bound(int(d), h, rate=1.0)) for d, h in zip(dd.ravel(), hh.ravel())])
    vb, _ = exact_rule(ball, cap_truth)
    vbw, ibw = exact_rule(ball_wrong, cap_truth)
    verdicts.append(vb)
    quantities.append(_ratio_quantity("Ball cap bound exp(-d h^2/2)", ball, cap_truth, vb))
    quantities.append(Quantity("largest valid Ball rate (numerics) vs stated 1/2", 0.5,
                               _largest_rate(cap_truth, dd.ravel() * hh.ravel() ** 2), None, None, None,
                               "min over the grid of -ln P(x.q >= h) / (d h^2)"))
    variants.append(FalseVariant("Ball cap bound with rate 1 (exp(-d h^2))", vbw,
                                 f"d={dd.ravel()[ibw]}, h={hh.ravel()[ibw]}: bound {ball_wrong[ibw]:.3e} < "
                                 f"exact {cap_truth[ibw]:.3e}"))
    ev = Evidence(
        "concentration/caps", REF,
        "For n uniform points on S^{d-1}, the cap probability P(x.q >= h) is at most exp(-d h^2/2) (Ball, Lemma 2.2) "
        "and the count in a cap obeys the Chernoff-Hoeffding bounds around n P(cap).",
        f"exact Binomial(n, cap probability) tails and exact cap probabilities; holds iff every bound >= exact "
        f"(1 - {TAIL_RTOL:g}) at all {len(truth)} count points ((d,h) in {list(cap_grid)}, n in {list(n_grid)}, "
        f"delta upper {list(delta_upper)}, lower {list(delta_lower)}) and {cap_truth.size} cap points.",
        quantities, combine_verdicts(verdicts), time.perf_counter() - start, variants)
    m = (d_ == cap_grid[1][0]) & (n_ == n_grid[1]) & (side_ == "upper")
    ev.figure = {"kind": "semilogy", "x": a_[m].astype(float).tolist(), "y": truth[m].tolist(),
                 "theory_y": results["Chernoff relative entropy"][m].tolist(),
                 "xlabel": f"a (d={cap_grid[1][0]}, h={cap_grid[1][1]}, n={n_grid[1]})", "ylabel": "P(N >= a)"}
    return ev


# ----------------------------------------------------------------------------- 3. Lipschitz functionals
def _t_for_levels(d: int, levels) -> np.ndarray:
    """``t`` where the valid Levy bound ``exp(-(d-2) t^2/2)`` equals each level."""
    return np.sqrt(2.0 * np.log(1.0 / np.asarray(levels)) / (d - 2))


def _mc_functionals(d: int, rng: np.random.Generator, anchors: int = 4):
    """Two 1-Lipschitz functionals without a closed-form law: the distance to the nearest of
    ``anchors`` fixed uniform points, ``min_j ||x - a_j||``, and ``||x||_1 / sqrt(d)``
    (``|  ||x||_1 - ||y||_1 | <= ||x - y||_1 <= sqrt(d) ||x - y||``)."""
    a = sphere.uniform_sphere(rng, anchors, d)

    def nearest(x):
        return np.min(np.linalg.norm(x[:, None, :] - a[None, :, :], axis=-1), axis=1)

    def l1(x):
        return np.sum(np.abs(x), axis=-1) / np.sqrt(d)

    return {"distance to nearest of 4 points": nearest, "||x||_1/sqrt(d)": l1}


def lipschitz_functionals(*, d_grid=(3, 10, 50), samples: int = 40000, mean_samples: int = 200000,
                          seed: int = 0) -> Evidence:
    """Levy-type concentration ``P(f - E f >= t) <= exp(-(d-2) t^2/2)`` for 1-Lipschitz ``f`` on ``S^{d-1}``.

    Exact functionals: ``f = x . q`` (``E f = 0``, tail :func:`concentration.cap_tail`) and ``f = ||P x||``,
    ``P`` of rank ``k = max(1, d // 4)`` (both tails, from the Beta law and the exact mean).  Monte Carlo
    functionals (:func:`_mc_functionals`): ``E f`` from ``mean_samples`` independent draws with a normal
    interval ``[m_lo, m_hi]`` at level ``1 - FAMILY_LEVEL/2``; the tail at ``t`` lies between the
    proportions of ``f >= m_hi + t`` and ``f >= m_lo + t`` among ``samples`` draws, so the Clopper-Pearson
    lower limit of the first and upper limit of the second bracket it (level ``1 - FAMILY_LEVEL/(2 G)``,
    ``G`` the number of Monte Carlo points).  Grid: ``t`` where the valid bound equals
    :data:`BOUND_LEVELS`.  Rules: :func:`exact_rule`, :func:`mc_rule`.  False variant: rate ``1``
    (``exp(-(d-2) t^2)``).
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    ex_bound, ex_truth, ex_wrong, ex_where = [], [], [], []
    mc = []  # (d, name, t, count_low_event, count_high_event)
    figure_series = []
    for d in d_grid:
        t = _t_for_levels(d, BOUND_LEVELS)
        bound = ineq.levy_bound(d, t)
        wrong = ineq.levy_bound(d, t, rate=1.0)
        k = max(1, d // 4)
        mean_norm = math.exp(special.gammaln(0.5 * (k + 1)) + special.gammaln(0.5 * d)
                             - special.gammaln(0.5 * k) - special.gammaln(0.5 * (d + 1)))
        exact = {"x.q": cap_tail(d, t),
                 f"||Px|| (k={k}), upper": projection_tail(d, k, (mean_norm + t) ** 2),
                 f"||Px|| (k={k}), lower": np.where(mean_norm - t > 0, special.betainc(
                     0.5 * k, 0.5 * (d - k), np.clip(mean_norm - t, 0, None) ** 2), 0.0)}
        for name, truth in exact.items():
            ex_bound.append(bound)
            ex_wrong.append(wrong)
            ex_truth.append(np.asarray(truth, dtype=float))
            ex_where += [f"{name}, d={d}, t={ti:.3g}" for ti in t]
        figure_series.append({"label": f"x.q, d={d}", "x": t.tolist(), "y": np.asarray(exact["x.q"]).tolist(),
                              "theory_y": bound.tolist()})
        for name, f in _mc_functionals(d, rng).items():
            m_values = f(sphere.uniform_sphere(rng, mean_samples, d))
            m, se = float(m_values.mean()), float(m_values.std(ddof=1) / math.sqrt(mean_samples))
            zm = stats.norm.ppf(1 - FAMILY_LEVEL / 4)
            values = f(sphere.uniform_sphere(rng, samples, d))
            for ti, bi, wi in zip(t, bound, wrong):
                mc.append((d, name, ti, bi, wi, int(np.sum(values >= m + zm * se + ti)),
                           int(np.sum(values >= m - zm * se + ti))))
    ex_bound, ex_truth, ex_wrong = (np.concatenate(a) for a in (ex_bound, ex_truth, ex_wrong))
    v_ex, _ = exact_rule(ex_bound, ex_truth)
    vw_ex, iw_ex = exact_rule(ex_wrong, ex_truth)
    G = len(mc)
    level = 1 - FAMILY_LEVEL / (2 * G)
    md, mname, mt, mb, mw, c_lo_event, c_hi_event = (np.array(c, dtype=object) for c in zip(*mc))
    mb, mw = mb.astype(float), mw.astype(float)
    low, _ = clopper_pearson(c_lo_event.astype(float), samples, level)
    _, high = clopper_pearson(c_hi_event.astype(float), samples, level)
    v_mc, _ = mc_rule(mb, low, high)
    vw_mc, iw_mc = mc_rule(mw, low, high)
    g = np.concatenate([(d - 2) * _t_for_levels(d, BOUND_LEVELS) ** 2 for d in d_grid for _ in range(3)])
    quantities = [
        _ratio_quantity("Levy bound, exact functionals (x.q, ||Px||)", ex_bound, ex_truth, v_ex),
        Quantity("largest valid Levy rate, exact functionals (numerics) vs stated 1/2", 0.5,
                 _largest_rate(ex_truth, g), None, None, None, "min over the grid of -ln(tail) / ((d-2) t^2)"),
        Quantity("min bound / UCL, Monte Carlo functionals", 1.0, float(np.min(mb / high)), None, None, v_mc,
                 f"{G} points, {samples} draws each, Clopper-Pearson level {level:.6f}; must be >= 1"),
    ]
    verdict = combine_verdicts([v_ex, v_mc])
    wrong_detail = (f"{ex_where[iw_ex]}: bound {ex_wrong[iw_ex]:.3e} < exact {ex_truth[iw_ex]:.3e}"
                    if vw_ex == "fails" else
                    f"{mname[iw_mc]}, d={md[iw_mc]}, t={mt[iw_mc]:.3g}: bound {mw[iw_mc]:.3e} vs LCL {low[iw_mc]:.3e}")
    ev = Evidence(
        "concentration/lipschitz", REF,
        "For a 1-Lipschitz f on S^{d-1} (d >= 3), P(f - E f >= t) <= exp(-(d-2) t^2 / 2) (log-Sobolev, Ricci "
        "curvature d-2, Herbst).",
        f"d in {list(d_grid)}, t where the bound equals {list(BOUND_LEVELS)}; exact tails for x.q and ||Px|| "
        f"(rule: bound >= exact (1 - {TAIL_RTOL:g})); Monte Carlo for two functionals with Clopper-Pearson "
        f"intervals at family-wise level {FAMILY_LEVEL:g} (rule: holds iff bound >= UCL everywhere, fails if "
        "bound < LCL anywhere).",
        quantities, verdict, time.perf_counter() - start,
        [FalseVariant("Levy bound with rate 1 (exp(-(d-2) t^2))", combine_verdicts([vw_ex, vw_mc]), wrong_detail)])
    ev.figure = {"kind": "semilogy", "x": figure_series[-1]["x"], "y": figure_series[-1]["y"],
                 "theory_y": figure_series[-1]["theory_y"], "series": figure_series,
                 "xlabel": "t", "ylabel": "P(x.q >= t)"}
    ev.extra = {"monte_carlo": [{"d": int(d), "functional": str(nm), "t": float(t), "bound": float(b),
                                 "lcl": float(lo), "ucl": float(hi)}
                                for d, nm, t, b, lo, hi in zip(md, mname, mt, mb, low, high)]}
    return ev


# ----------------------------------------------------------------------------- 4. the softmax normaliser
def _t_for_bernstein(n: int, v: float, b: float, level: float, constant: float = 2.0) -> float:
    """``t`` solving ``exp(-n t^2 / (constant (v + b t/3))) = level`` (positive root of the quadratic)."""
    c = constant * math.log(1.0 / level)
    return (c * b / 3.0 + math.sqrt((c * b / 3.0) ** 2 + 4.0 * n * c * v)) / (2.0 * n)


def softmax_normaliser(*, d_grid=(3, 10), w_grid=(1.0, 4.0), n_grid=(10, 100), replicates: int = 40000,
                       seed: int = 0) -> Evidence:
    """Bernstein bound for ``Z_n = (1/n) sum_i exp(w x_i . q)`` around ``Phi_d(w)``, both tails.

    ``replicates`` independent draws of ``Z_n`` (``t_i = x_i . q`` from its exact law,
    :func:`lipschitz_icl.sphere.sample_t`); ``Phi_d(w)`` and the variance ``Phi_d(2w) - Phi_d(w)^2`` exact
    (:func:`lipschitz_icl.inequalities.normaliser_moments`).  Grid: ``t`` where the valid bound equals
    :data:`BOUND_LEVELS`, per ``(d, w, n, side)``.  Clopper-Pearson at family-wise level
    :data:`FAMILY_LEVEL` (Bonferroni over all points); rule :func:`mc_rule`.
    False variant: ``constant = 1`` (the exponent doubled).
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    rows = []
    series = []
    for d in d_grid:
        for w in w_grid:
            mom = ineq.normaliser_moments(d, w)
            for n in n_grid:
                Z = np.empty(replicates)
                per = max(1, (1 << 20) // n)
                for s0 in range(0, replicates, per):
                    s1 = min(replicates, s0 + per)
                    Z[s0:s1] = np.mean(np.exp(w * sphere.sample_t(rng, d, (s1 - s0, n))), axis=1)
                dev = Z - mom["phi"]
                for side, sign, b in (("upper", 1.0, mom["range_upper"]), ("lower", -1.0, mom["range_lower"])):
                    ts = [_t_for_bernstein(n, mom["variance"], b, lv) for lv in BOUND_LEVELS]
                    for t in ts:
                        rows.append((d, w, n, side, t, float(ineq.bernstein_normaliser(d, w, n, t, side=side)),
                                     float(ineq.bernstein_normaliser(d, w, n, t, side=side, constant=1.0)),
                                     int(np.sum(sign * dev >= t))))
                    if side == "upper" and d == d_grid[0] and n == n_grid[-1]:
                        series.append({"label": f"d={d}, w={w:g}, n={n}", "x": ts,
                                       "y": [float(np.mean(dev >= t)) for t in ts],
                                       "theory_y": [float(ineq.bernstein_normaliser(d, w, n, t)) for t in ts]})
    d_, w_, n_, side_, t_, bound, wrong, count = (np.array(c, dtype=object) for c in zip(*rows))
    bound, wrong, count = bound.astype(float), wrong.astype(float), count.astype(float)
    G = len(rows)
    level = 1 - FAMILY_LEVEL / G
    low, high = clopper_pearson(count, replicates, level)
    v, _ = mc_rule(bound, low, high)
    vw, iw = mc_rule(wrong, low, high)
    truth = count / replicates
    quantities = [
        Quantity("min bound / UCL", 1.0, float(np.min(bound / high)), None, None, v,
                 f"{G} points, {replicates} replicates each, Clopper-Pearson level {level:.6f}; must be >= 1"),
        _ratio_quantity("Bernstein bound / Monte Carlo tail", bound, truth, None,
                        "points with a positive count"),
    ]
    ev = Evidence(
        "concentration/softmax-normaliser", REF,
        "The softmax normaliser (1/n) sum_i exp(w x_i.q) concentrates around Phi_d(w) = E exp(w t): "
        "P(+-(Z_n - Phi_d(w)) >= t) <= exp(-n t^2 / (2 (v + b t/3))), v = Phi_d(2w) - Phi_d(w)^2, b <= e^w.",
        f"Monte Carlo ({replicates} replicates per (d, w, n)), d in {list(d_grid)}, w in {list(w_grid)}, n in "
        f"{list(n_grid)}, both tails, t where the bound equals {list(BOUND_LEVELS)}; Clopper-Pearson at "
        f"family-wise level {FAMILY_LEVEL:g}: holds iff bound >= UCL at every point, fails if bound < LCL anywhere.",
        quantities, v, time.perf_counter() - start,
        [FalseVariant("Bernstein with constant 1 (exponent doubled)", vw,
                      f"d={d_[iw]}, w={w_[iw]:g}, n={n_[iw]}, {side_[iw]} tail, t={t_[iw]:.3g}: bound {wrong[iw]:.3e}"
                      f" vs Monte Carlo [{low[iw]:.3e}, {high[iw]:.3e}]")])
    ev.figure = {"kind": "semilogy", "x": series[0]["x"], "y": series[0]["y"], "theory_y": series[0]["theory_y"],
                 "series": series, "xlabel": "t", "ylabel": "P(Z_n - Phi_d(w) >= t)"}
    return ev
