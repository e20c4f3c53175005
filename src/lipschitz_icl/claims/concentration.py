"""Sphere concentration: the stated bounds of :mod:`lipschitz_icl.inequalities` dominate the true tails.

Registry: ``lipschitz_icl/claims/concentration.toml`` (group ``concentration``).  The proofs rest on
concentration inequalities for points uniform on ``S^{d-1}`` (tails of ``||P x||^2`` for a projector,
the cap probability and counts of points in a cap, Lipschitz functionals of a uniform point, the softmax
normaliser ``(1/n) sum_i exp(w x_i . q)``); each stated bound must dominate the true tail.

True tails, each with an interval:

* exact where the law is known: ``||P x||^2 ~ Beta(k/2, (d-k)/2)``, ``x . q`` (cap probability), cap
  counts ``~ Binomial(n, cap probability)``, ``||P x||`` with its exact mean; the interval is the stated
  relative accuracy :data:`lipschitz_icl.concentration.TAIL_RTOL` of the incomplete-beta values;
* Monte Carlo otherwise (two further Lipschitz functionals; the softmax normaliser): two-sided
  Clopper-Pearson intervals at family-wise level :data:`FAMILY_LEVEL` per case (Bonferroni over the
  case's grid points).

Rule (registry: ``one-sided``, :func:`lipschitz_icl.decision.one_sided`), the same for a claim and for
its false variants: with ``r_i = ln(tail_i / bound_i)`` at grid point ``i``, the claim is
``max_i r_i <= 0``; the interval of ``max_i r_i`` is ``[max_i r_i^low, max_i r_i^high]`` (the tails'
intervals), so it holds iff every tail interval lies at or below its bound, fails iff some tail interval
lies wholly above its bound, and is inconclusive otherwise (:func:`decide`).  The margin is the bound
itself: no slack beyond the tails' own intervals.

Resolution (:func:`rate_resolution`): the natural parameter is the bound's rate.  Every bound here is
``exp(-g / c)`` for a constant ``c`` (``1/rate`` of Dasgupta-Gupta, Ball, Chernoff and Levy; Bernstein's
``2``); dividing ``c`` by ``1 + delta`` turns the bound into ``bound^(1 + delta)``.  The resolution is the
smallest ``delta`` that the same rule, on the same tails, refutes (bisection,
:func:`lipschitz_icl.decision.resolution`); a loose bound has a large resolution.  The near-miss false
variant is the bound with ``delta`` at :data:`lipschitz_icl.decision.NEAR_MISS` resolutions.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from scipy import optimize, special, stats

from .. import decision
from .. import inequalities as ineq
from .. import sphere
from ..concentration import TAIL_RTOL, cap_tail, projection_tail
from ..evidence import Evidence, FalseVariant, Quantity

__all__ = ["FAMILY_LEVEL", "PARAMETER", "TailComparison", "clopper_pearson", "exact_tails", "decide",
           "rate_resolution", "near_miss", "projection_tails", "cap_probability", "cap_counts",
           "levy_exact", "levy_monte_carlo", "softmax_normaliser"]

FAMILY_LEVEL = decision.FAMILY_LEVEL  # family-wise error of the Monte Carlo intervals within one claim (Bonferroni)
PARAMETER = "rate increase delta (bound -> bound^(1 + delta))"
RESOLUTION_START = 1e-3  # first delta tried by the bisection
RESOLUTION_LIMIT = 1e3  # a bound not refuted at bound^1001 is reported as unresolved
RESOLUTION_RTOL = 0.02  # bisection stops when high/low <= 1.02


# ----------------------------------------------------------------------------- the rule
@dataclasses.dataclass(frozen=True)
class TailComparison:
    """A stated bound against the true tail at the grid points of one case, in natural logs: per point
    the bound ``log_bound``, the true tail's interval ``[log_low, log_high]`` and value ``log_point``
    (exact value or Monte Carlo proportion), and a label naming the point."""

    labels: tuple
    log_bound: np.ndarray
    log_low: np.ndarray
    log_point: np.ndarray
    log_high: np.ndarray

    def __post_init__(self):
        sizes = {len(self.labels), *(np.shape(a)[0] for a in self.arrays)}
        if len(sizes) != 1 or not self.labels:
            raise ValueError(f"a comparison needs one label, bound and interval per point, got sizes {sizes}")
        if np.any(np.isnan(self.log_bound)) or np.any(self.log_bound == -np.inf):
            raise ValueError("a bound must be positive and finite at every grid point (no underflow)")

    @property
    def arrays(self):
        return self.log_bound, self.log_low, self.log_point, self.log_high

    def ratios(self, delta: float = 0.0):
        """``(low, point, high)`` of ``ln(tail_i / bound_i^(1 + delta))`` per point."""
        log_b = (1.0 + delta) * self.log_bound
        return self.log_low - log_b, self.log_point - log_b, self.log_high - log_b


def _log(x) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(x, dtype=float))


def exact_tails(labels, bound, truth) -> TailComparison:
    """Exact tails with their stated relative accuracy: ``truth (1 +- TAIL_RTOL)``."""
    log_t = _log(truth)
    return TailComparison(tuple(labels), _log(bound), log_t + math.log1p(-TAIL_RTOL), log_t,
                          log_t + math.log1p(TAIL_RTOL))


def clopper_pearson(count, total: int, level: float):
    """Two-sided Clopper-Pearson interval ``(low, high)`` for a binomial proportion at ``level``:
    ``low = Beta^{-1}(a/2; c, N - c + 1)``, ``high = Beta^{-1}(1 - a/2; c + 1, N - c)``, ``a = 1 - level``."""
    count = np.asarray(count, dtype=np.float64)
    a = 1.0 - level
    low = np.where(count > 0, stats.beta.ppf(0.5 * a, np.maximum(count, 1e-300), total - count + 1), 0.0)
    high = np.where(count < total, stats.beta.ppf(1 - 0.5 * a, count + 1, np.maximum(total - count, 1e-300)), 1.0)
    return low, high


def decide(comparison: TailComparison, delta: float = 0.0) -> decision.Decision:
    """Rule one-sided on ``max_i ln(tail_i / bound_i^(1 + delta)) <= 0`` with the interval
    ``[max_i low_i, max_i high_i]``: holds iff every tail interval is at or below its bound, fails iff
    one lies wholly above it.  The detail names the deciding point (the one with the largest ``low``
    when it fails, the largest ``high`` otherwise)."""
    low, _, high = comparison.ratios(delta)
    result = decision.one_sided(float(np.max(low)), float(np.max(high)), 0.0, "<=")
    i = int(np.argmax(low if result.refutes else high))
    return decision.Decision(result.rule, result.verdict,
                             f"max ln(tail/bound^{1 + delta:.4g}) in {result.detail}; "
                             f"deciding point {comparison.labels[i]}")


def rate_resolution(comparison: TailComparison) -> decision.Resolution:
    """The smallest ``delta`` (bound raised to ``1 + delta``) that :func:`decide` refutes on the same
    tails, by bisection; ``extra["constant_shrinkage"] = delta / (1 + delta)`` is the same deviation as
    the relative shrinkage of the constant ``c`` of ``exp(-g/c)``."""
    res = decision.resolution(lambda x: decide(comparison, x).refutes, PARAMETER, start=RESOLUTION_START,
                              limit=RESOLUTION_LIMIT, rel_tol=RESOLUTION_RTOL)
    shrinkage = res.value / (1.0 + res.value) if res.resolved else None
    return dataclasses.replace(res, extra={"constant_shrinkage": shrinkage})


def near_miss(comparison: TailComparison, res: decision.Resolution, name: str) -> FalseVariant:
    """The bound raised to ``1 + delta`` with ``delta`` at ``NEAR_MISS`` resolutions, through :func:`decide`."""
    delta = res.near_miss()
    verdict = decide(comparison, delta)
    return FalseVariant(f"{name}, rate x {1 + delta:.4g} (constant / {1 + delta:.4g})", verdict.verdict,
                        verdict.detail, delta / res.value)


def _tightness(comparison: TailComparison) -> Quantity:
    """``bound / tail`` over the points with a positive tail value: smallest and geometric mean."""
    _, point, _ = comparison.ratios()
    finite = -point[np.isfinite(point)]
    if finite.size == 0:
        return Quantity("tightness bound/tail", None, None, note="no point with a positive tail value")
    return Quantity("tightness bound/tail (smallest over the grid)", 1.0, float(np.exp(finite.min())),
                    note=f"geometric mean {float(np.exp(finite.mean())):.3g} over {finite.size} points; "
                         "a loose bound has a large resolution")


def judged(comparison: TailComparison, name: str, *, statement: str, rule: str, figure: dict | None = None,
           extra: dict | None = None, start: float) -> Evidence:
    """The evidence of one case: the rule's verdict, the resolution, the near-miss variant, the
    quantities (worst tail/bound with its interval, tightness)."""
    main = decide(comparison)
    res = rate_resolution(comparison)
    variants = [near_miss(comparison, res, name)] if res.resolved else []
    low, point, high = comparison.ratios()
    quantities = [
        Quantity("max over the grid of tail/bound", 1.0, float(np.exp(np.max(point))), float(np.exp(np.max(low))),
                 float(np.exp(np.max(high))), main.verdict, f"must be <= 1 at all {len(low)} points"),
        _tightness(comparison),
        Quantity("largest rate factor the tails allow (1 + resolution)", 1.0,
                 1.0 + res.value if res.resolved else None, 1.0 + res.low,
                 1.0 + res.high if res.resolved else None, None, "the stated rate is 1 x"),
    ]
    return Evidence(statement=statement, rule=rule, quantities=quantities, verdict=main.verdict,
                    seconds=time.perf_counter() - start, false_variants=variants, figure=figure,
                    extra={"decision": main.detail, "points": len(low), **(extra or {})},
                    rule_name="one-sided", margin="none: tail <= bound at every grid point (no slack)",
                    resolution=res.to_dict())


def _figure(x, truth, bound, xlabel: str, ylabel: str) -> dict:
    return {"kind": "semilogy", "x": [float(v) for v in x], "y": [float(v) for v in truth],
            "theory_y": [float(v) for v in bound], "xlabel": xlabel, "ylabel": ylabel + " (dashed: bound)"}


EXACT_RULE = (f"one-sided on max ln(tail/bound) <= 0; tails exact with relative accuracy {TAIL_RTOL:g} "
              "(lipschitz_icl.concentration.TAIL_RTOL)")


# ----------------------------------------------------------------------------- 1. projections
def projection_tails(d: int, k: int, *, form: str, beta_upper, beta_lower) -> Evidence:
    """Dasgupta-Gupta tails of ``||P x||^2`` (rank ``k``) against the exact ``Beta(k/2, (d-k)/2)`` law.

    Points ``s = beta k / d``: upper tail ``P(||P x||^2 >= s)`` for ``beta`` in ``beta_upper`` with
    ``s < 1``, lower tail ``P(||P x||^2 <= s) = I_s(k/2, (d-k)/2)`` for ``beta`` in ``beta_lower``.
    ``form = "exponential"``: ``exp(k/2 (1 - beta + ln beta))``
    (:func:`~lipschitz_icl.inequalities.projection_bound`); ``form = "sharp"``: Dasgupta-Gupta's form
    before ``1 + x <= e^x`` (:func:`~lipschitz_icl.inequalities.projection_bound_dg`).
    """
    start = time.perf_counter()
    bound_fn = {"exponential": ineq.projection_bound, "sharp": ineq.projection_bound_dg}[form]
    labels, upper, bound, truth = [], [], [], []
    for side, betas in (("upper", beta_upper), ("lower", beta_lower)):
        for beta in betas:
            s = beta * k / d
            if side == "upper" and s >= 1.0:
                continue
            tail = projection_tail(d, k, s) if side == "upper" else special.betainc(0.5 * k, 0.5 * (d - k), s)
            labels.append(f"{side} tail, beta={beta:g} (s={s:.4g})")
            bound.append(float(bound_fn(d, k, s, side=side)))
            truth.append(float(tail))
            if side == "upper":
                upper.append((s, len(truth) - 1))
    comparison = exact_tails(labels, bound, truth)
    shape = "exp(k/2 (1 - beta + ln beta))" if form == "exponential" else \
        "beta^(k/2) (1 + (1 - beta) k/(d - k))^((d-k)/2)"
    return judged(
        comparison, f"Dasgupta-Gupta ({form})",
        statement=f"For x uniform on S^{d - 1} and a rank-{k} projector P, P(||Px||^2 >= beta k/d) (beta > 1) and "
                  f"P(||Px||^2 <= beta k/d) (beta < 1) are at most {shape} (Dasgupta-Gupta, Lemma 2.2).",
        rule=f"{EXACT_RULE}; Beta({k}/2, {d - k}/2) tails at beta upper {list(beta_upper)} (s < 1), lower "
             f"{list(beta_lower)}",
        figure=_figure([s for s, _ in upper], [truth[i] for _, i in upper], [bound[i] for _, i in upper],
                       "s", "P(||Px||^2 >= s)"),
        start=start)


# ----------------------------------------------------------------------------- 2. caps and cap counts
def cap_probability(d: int, *, h_grid) -> Evidence:
    """Ball's cap bound ``P(x . q >= h) <= exp(-d h^2 / 2)`` against the exact cap probability
    ``I_{(1-h)/2}((d-1)/2, (d-1)/2)`` on ``h_grid``."""
    start = time.perf_counter()
    h = np.asarray(h_grid, dtype=float)
    bound, truth = ineq.cap_bound(d, h), cap_tail(d, h)
    comparison = exact_tails([f"h={x:g}" for x in h], bound, truth)
    return judged(
        comparison, "Ball cap bound",
        statement=f"For x uniform on S^{d - 1} and a unit q, P(x.q >= h) <= exp(-{d} h^2/2) for 0 <= h < 1 "
                  "(Ball, Lemma 2.2).",
        rule=f"{EXACT_RULE}; exact cap probabilities at h in {list(h_grid)}",
        figure=_figure(h, truth, bound, "h", "P(x.q >= h)"), start=start)


def chernoff_thresholds(n: int, p: float, levels) -> list[tuple[str, int]]:
    """Counts ``a`` where the relative-entropy Chernoff bound ``exp(-n D(a/n || p))`` equals each level:
    ``a = ceil(n x)`` above the mean and ``floor(n x)`` below it, ``x`` the root of
    ``n D(x || p) = ln(1/level)``.  Counts ``0`` and ``n`` are left out (there the bound is the tail
    itself, ``(1 - p)^n`` and ``p^n``: an identity, not a comparison), as are levels below them."""
    out = []
    for level in levels:
        target = math.log(1.0 / level)
        for side, (lo, hi), rnd in (("upper", (p, 1.0), math.ceil), ("lower", (0.0, p), math.floor)):
            edge = hi if side == "upper" else lo
            if n * ineq.bernoulli_kl(edge, p) <= target:
                continue
            x = optimize.brentq(lambda y: n * float(ineq.bernoulli_kl(y, p)) - target, lo, hi, xtol=1e-14)
            a = int(rnd(n * x))
            if 1 <= a <= n - 1 and (side, a) not in out:
                out.append((side, a))
    return out


def cap_counts(d: int, h: float, *, form: str, n_grid, levels) -> Evidence:
    """Chernoff-Hoeffding bounds for the count ``N ~ Binomial(n, p)`` of ``n`` uniform points in the cap
    ``x . q >= h`` (``p`` the exact cap probability), against the exact Binomial tails.

    Thresholds :func:`chernoff_thresholds` (where the relative-entropy bound equals ``levels``), for
    each ``n`` in ``n_grid``: ``P(N >= a)`` above the mean, ``P(N <= a)`` below it.
    ``form = "relative-entropy"``: :func:`~lipschitz_icl.inequalities.binomial_chernoff` at ``a``;
    ``form = "multiplicative"``: :func:`~lipschitz_icl.inequalities.binomial_multiplicative` at
    ``delta = |a/(n p) - 1|`` (the same event).
    """
    start = time.perf_counter()
    p = float(cap_tail(d, h))
    labels, bound, truth, shown = [], [], [], []
    for n in n_grid:
        for side, a in chernoff_thresholds(n, p, levels):
            if n == n_grid[len(n_grid) // 2] and side == "upper":
                shown.append((a, len(truth)))
            if form == "relative-entropy":
                b = ineq.binomial_chernoff(n, p, a, side=side)
            else:
                b = ineq.binomial_multiplicative(n, p, abs(a / (n * p) - 1.0), side=side)
            tail = stats.binom.sf(a - 1, n, p) if side == "upper" else stats.binom.cdf(a, n, p)
            labels.append(f"n={n}, {side} tail, a={a}")
            bound.append(float(b))
            truth.append(float(tail))
    comparison = exact_tails(labels, bound, truth)
    shape = ("exp(-n D(a/n || p))" if form == "relative-entropy" else
             "exp(-delta^2 mu/(2 + delta)) (upper), exp(-delta^2 mu/2) (lower), mu = n p")
    return judged(
        comparison, f"Chernoff ({form})",
        statement=f"The number N of n uniform points of S^{d - 1} in the cap x.q >= {h:g} (probability p = {p:.4g}) "
                  f"has P(N >= a) and P(N <= a) at most {shape} on the respective side of n p.",
        rule=f"{EXACT_RULE}; exact Binomial(n, p) tails, n in {list(n_grid)}, thresholds where "
             f"exp(-n D(a/n || p)) equals {list(levels)}",
        figure=_figure([a for a, _ in shown], [truth[i] for _, i in shown], [bound[i] for _, i in shown],
                       f"a (n = {n_grid[len(n_grid) // 2]})", "P(N >= a)"),
        extra={"cap_probability": p}, start=start)


# ----------------------------------------------------------------------------- 3. Lipschitz functionals
def levy_t(d: int, levels) -> np.ndarray:
    """``t`` where the Levy bound ``exp(-(d-2) t^2/2)`` equals each level."""
    return np.sqrt(2.0 * np.log(1.0 / np.asarray(levels, dtype=float)) / (d - 2))


def norm_mean(d: int, k: int) -> float:
    """``E||P x|| = Gamma((k+1)/2) Gamma(d/2) / (Gamma(k/2) Gamma((d+1)/2))`` for a rank-``k`` ``P``."""
    return math.exp(special.gammaln(0.5 * (k + 1)) + special.gammaln(0.5 * d)
                    - special.gammaln(0.5 * k) - special.gammaln(0.5 * (d + 1)))


def levy_exact(d: int, *, levels) -> Evidence:
    """Levy-type concentration for 1-Lipschitz functionals with an exact law: ``f = x . q`` (``E f = 0``,
    tail the cap probability) and ``f = ||P x||``, ``P`` of rank ``k = max(1, d // 4)``, both tails
    (Beta law, exact mean :func:`norm_mean`).  Points: ``t`` where the bound equals ``levels``
    (:func:`levy_t`), where ``f - E f >= t`` (or ``<= -t``) is possible: beyond the functional's range the
    tail is 0 and the point says nothing."""
    start = time.perf_counter()
    t = levy_t(d, levels)
    k = max(1, d // 4)
    mean = norm_mean(d, k)
    tails = {
        "x.q": (t < 1.0, lambda u: cap_tail(d, u)),
        f"||Px|| (k={k}), upper": (mean + t < 1.0, lambda u: projection_tail(d, k, (mean + u) ** 2)),
        f"||Px|| (k={k}), lower": (mean - t > 0.0,
                                   lambda u: special.betainc(0.5 * k, 0.5 * (d - k), (mean - u) ** 2)),
    }
    labels, bound, truth = [], [], []
    for name, (possible, tail) in tails.items():
        for ti in t[possible]:
            labels.append(f"{name}, t={ti:.4g}")
            bound.append(float(ineq.levy_bound(d, ti)))
            truth.append(float(tail(ti)))
    comparison = exact_tails(labels, bound, truth)
    use = t < 1.0
    return judged(
        comparison, "Levy bound",
        statement=f"For 1-Lipschitz f on S^{d - 1}, P(f - E f >= t) <= exp(-{d - 2} t^2/2) (log-Sobolev with Ricci "
                  "curvature d-2, Herbst), here for f = x.q and f = +-||Px|| (exact laws).",
        rule=f"{EXACT_RULE}; t where the bound equals {list(levels)} (inside the functional's range)",
        figure=_figure(t[use], cap_tail(d, t[use]), ineq.levy_bound(d, t[use]), "t", "P(x.q >= t)"),
        start=start)


def monte_carlo_functionals(d: int, anchors: np.ndarray) -> dict:
    """Two 1-Lipschitz functionals without a closed-form law: the distance to the nearest anchor,
    ``min_j ||x - a_j||``, and ``||x||_1 / sqrt(d)`` (``| ||x||_1 - ||y||_1 | <= sqrt(d) ||x - y||``)."""

    def nearest(x):
        return np.min(np.linalg.norm(x[:, None, :] - anchors[None, :, :], axis=-1), axis=1)

    def l1(x):
        return np.sum(np.abs(x), axis=-1) / np.sqrt(d)

    return {f"distance to nearest of {len(anchors)} points": nearest, "||x||_1/sqrt(d)": l1}


def levy_monte_carlo(d: int, *, levels, samples: int, mean_samples: int, anchors: int,
                     seed: np.random.SeedSequence) -> Evidence:
    """Levy-type concentration for the two functionals of :func:`monte_carlo_functionals`, by Monte Carlo.

    Streams spawned from ``seed``: anchors, ``mean_samples`` draws for ``E f``, ``samples`` draws for the
    tails.  ``E f`` gets a normal interval ``[m_lo, m_hi]``; the tail at ``t`` then lies between the
    proportions of ``f >= m_hi + t`` and of ``f >= m_lo + t``, bracketed by the Clopper-Pearson lower limit
    of the first and upper limit of the second.  Family-wise level :data:`FAMILY_LEVEL`: half for the
    ``M`` mean intervals (``FAMILY_LEVEL / (2M)`` each), half for the ``2G`` Clopper-Pearson intervals
    (``FAMILY_LEVEL / (4G)`` each, ``G`` grid points).  Points: ``t`` where the bound equals ``levels``.
    """
    start = time.perf_counter()
    anchor_stream, mean_stream, tail_stream = (np.random.default_rng(s) for s in seed.spawn(3))
    functionals = monte_carlo_functionals(d, sphere.uniform_sphere(anchor_stream, anchors, d))
    t = levy_t(d, levels)
    G, M = len(functionals) * len(t), len(functionals)
    z = stats.norm.ppf(1.0 - FAMILY_LEVEL / (4 * M))
    mean_draws = sphere.uniform_sphere(mean_stream, mean_samples, d)
    tail_draws = sphere.uniform_sphere(tail_stream, samples, d)
    labels, hi_counts, lo_counts = [], [], []
    for name, f in functionals.items():
        m_values = f(mean_draws)
        m, se = float(m_values.mean()), float(m_values.std(ddof=1) / math.sqrt(mean_samples))
        values = f(tail_draws)
        for ti in t:
            labels.append(f"{name}, t={ti:.4g}")
            lo_counts.append(int(np.sum(values >= m + z * se + ti)))
            hi_counts.append(int(np.sum(values >= m - z * se + ti)))
    level = 1.0 - FAMILY_LEVEL / (4 * G)
    low, _ = clopper_pearson(lo_counts, samples, level)
    _, high = clopper_pearson(hi_counts, samples, level)
    point = 0.5 * (np.asarray(lo_counts) + np.asarray(hi_counts)) / samples
    bound = np.tile(ineq.levy_bound(d, t), M)
    comparison = TailComparison(tuple(labels), _log(bound), _log(low), _log(point), _log(high))
    return judged(
        comparison, "Levy bound (Monte Carlo functionals)",
        statement=f"For 1-Lipschitz f on S^{d - 1}, P(f - E f >= t) <= exp(-{d - 2} t^2/2), here for the distance "
                  f"to the nearest of {anchors} random points and for ||x||_1/sqrt(d).",
        rule=f"one-sided on max ln(tail/bound) <= 0; {samples} draws per tail, E f from {mean_samples} draws "
             f"(normal interval at {1 - FAMILY_LEVEL / (2 * M):.6g}), Clopper-Pearson at {level:.8f} ({G} points, "
             f"family-wise {FAMILY_LEVEL:g}); t where the bound equals {list(levels)}",
        extra={"monte_carlo": [{"point": lab, "lcl": float(lo), "ucl": float(hi), "bound": float(b)}
                               for lab, lo, hi, b in zip(labels, low, high, bound)]},
        start=start)


# ----------------------------------------------------------------------------- 4. the softmax normaliser
def bernstein_t(n: int, variance: float, b: float, level: float, constant: float = 2.0) -> float:
    """``t`` solving ``exp(-n t^2 / (constant (v + b t/3))) = level`` (positive root of the quadratic)."""
    c = constant * math.log(1.0 / level)
    return (c * b / 3.0 + math.sqrt((c * b / 3.0) ** 2 + 4.0 * n * c * variance)) / (2.0 * n)


def normaliser_draws(rng: np.random.Generator, d: int, w: float, n: int, replicates: int) -> np.ndarray:
    """``replicates`` independent draws of ``Z_n = (1/n) sum_i exp(w t_i)``, ``t_i = x_i . q`` from its
    exact law (:func:`lipschitz_icl.sphere.sample_t`), in blocks of about 2^20 summands."""
    Z = np.empty(replicates)
    per = max(1, (1 << 20) // n)
    for s0 in range(0, replicates, per):
        s1 = min(replicates, s0 + per)
        Z[s0:s1] = np.mean(np.exp(w * sphere.sample_t(rng, d, (s1 - s0, n))), axis=1)
    return Z


def softmax_normaliser(d: int, w: float, n: int, *, levels, replicates: int,
                       seed: np.random.SeedSequence) -> Evidence:
    """Bernstein bound for ``Z_n = (1/n) sum_i exp(w x_i . q)`` around ``Phi_d(w)``, both tails.

    ``replicates`` draws of ``Z_n`` (:func:`normaliser_draws`, one stream spawned from ``seed``);
    ``Phi_d(w)``, the summand variance and ranges exact
    (:func:`~lipschitz_icl.inequalities.normaliser_moments`).  Points: ``t`` where the bound equals
    ``levels`` on each side.  Clopper-Pearson at family-wise level :data:`FAMILY_LEVEL`, Bonferroni over
    the ``G`` points (``FAMILY_LEVEL / G`` each).
    """
    start = time.perf_counter()
    (stream,) = seed.spawn(1)
    mom = ineq.normaliser_moments(d, w)
    deviation = normaliser_draws(np.random.default_rng(stream), d, w, n, replicates) - mom["phi"]
    labels, bound, counts, ts = [], [], [], []
    for side, sgn, b in (("upper", 1.0, mom["range_upper"]), ("lower", -1.0, mom["range_lower"])):
        for level in levels:
            t = bernstein_t(n, mom["variance"], b, level)
            labels.append(f"{side} tail, t={t:.4g}")
            bound.append(float(ineq.bernstein_normaliser(d, w, n, t, side=side)))
            counts.append(int(np.sum(sgn * deviation >= t)))
            ts.append(t)
    level = 1.0 - FAMILY_LEVEL / len(labels)
    low, high = clopper_pearson(counts, replicates, level)
    point = np.asarray(counts, dtype=float) / replicates
    comparison = TailComparison(tuple(labels), _log(bound), _log(low), _log(point), _log(high))
    up = slice(0, len(levels))
    return judged(
        comparison, "Bernstein",
        statement=f"The softmax normaliser Z_n = (1/n) sum_i exp(w x_i.q) (d={d}, w={w:g}, n={n}) has "
                  "P(+-(Z_n - Phi_d(w)) >= t) <= exp(-n t^2 / (2 (v + b t/3))), v = Phi_d(2w) - Phi_d(w)^2, "
                  "b the one-sided range of exp(w x.q) (Bernstein).",
        rule=f"one-sided on max ln(tail/bound) <= 0; {replicates} replicates, Clopper-Pearson at {level:.6f} "
             f"({len(labels)} points, family-wise {FAMILY_LEVEL:g}); t where the bound equals {list(levels)}",
        figure=_figure(ts[up], point[up], bound[up], "t", "P(Z_n - Phi_d(w) >= t)"),
        extra={"phi": mom["phi"], "variance": mom["variance"]}, start=start)
