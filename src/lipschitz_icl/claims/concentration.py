"""Sphere concentration: the stated bounds of :mod:`lipschitz_icl.sphere.inequalities` dominate the true tails.

Registry: ``lipschitz_icl/claims/concentration.toml``.  The proofs rest on concentration inequalities for
points uniform on ``S^{d-1}`` (tails of ``||P x||^2`` for a projector, the cap probability and counts of
points in a cap, Lipschitz functionals of a uniform point, the softmax normaliser
``(1/n) sum_i exp(w x_i . q)``); each stated bound must dominate the true tail.

* Deterministic inequalities with a known law (projections: ``Beta(k/2, (d-k)/2)``; the cap probability;
  cap counts: ``Binomial(n, p)``) are decided by proof on their whole domain
  (:func:`lipschitz_icl.gates.proof_outcome.proof_outcome`, rule ``proof``).
* The others compare tails and bounds at grid points (rule ``one-sided``): with ``r_i = ln(tail_i /
  bound_i)``, the claim is ``max_i r_i <= 0`` on the interval ``[max_i r_i^low, max_i r_i^high]`` of the
  tails' intervals (:func:`lipschitz_icl.sphere.tails.decide`): exact tails with their stated accuracy
  :data:`lipschitz_icl.sphere.concentration.TAIL_RTOL` (a universal statement checked at those points only, and
  said so), or Monte Carlo with Clopper-Pearson intervals at the claim's family-wise level.  ``decide(shift)``
  raises the bound to ``1 + shift`` (the constant ``c`` of ``exp(-g/c)`` divided by ``1 + shift``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.certified import laws as certified_laws
from lipschitz_icl.estimators.projection_lemma import DG_BOUNDS, beta_end_lemma
from lipschitz_icl.gates.evidence import Outcome, Quantity, plot
from lipschitz_icl.gates.proof_outcome import proof_outcome
from lipschitz_icl.prover.pieces import Piece
from lipschitz_icl.sphere import inequalities as ineq
from lipschitz_icl.sphere.concentration import TAIL_RTOL, cap_tail, norm_mean, projection_tail
from lipschitz_icl.sphere.laws import uniform_sphere
from lipschitz_icl.sphere.tails import (
    TailComparison,
    bracketing_counts,
    clopper_pearson,
    decide,
    exact_tails,
    log,
    monte_carlo_functionals,
    normaliser_draws,
)

__all__ = ["projection_tails", "cap_probability", "cap_counts", "levy_exact", "levy_monte_carlo", "softmax_normaliser"]


# ----------------------------------------------------------------------------- the outcome
def _tail_outcome(
    comparison: TailComparison,
    *,
    rule: str,
    rivals: dict,
    figure: dict | None = None,
    extra: dict | None = None,
    points: int | None = None,
) -> Outcome:
    """The outcome of a tail-against-bound comparison: ``decide(shift, rival)`` is
    :func:`lipschitz_icl.sphere.tails.decide` with the
    bound raised to ``1 + shift``, or to ``1 + rivals[rival]`` (a competing rate)."""
    low, point, high = comparison.ratios()
    verdict = decide(comparison).verdict
    finite = -point[np.isfinite(point)]
    return Outcome(
        decide=lambda shift=0.0, rival=None: decide(comparison, rivals[rival] if rival else shift),
        rule=rule,
        margin="none: tail <= bound at every grid point (no slack)",
        figure=figure,
        extra=extra or {},
        points=points,
        quantities=(
            Quantity.within(
                "max over the grid of tail/bound",
                float(np.exp(np.max(point))),
                (float(np.exp(np.max(low))), float(np.exp(np.max(high)))),
                theory=1.0,
                verdict=verdict,
                note=f"must be <= 1 at all {len(low)} points",
            ),
            Quantity(
                name="tightness bound/tail (smallest over the grid)",
                theory=1.0,
                measured=float(np.exp(finite.min())) if finite.size else None,
                note=f"geometric mean {float(np.exp(finite.mean())):.3g} over {finite.size} points"
                if finite.size
                else "no point with a positive tail value",
            ),
        ),
    )


def _figure(x, truth, bound, xlabel: str, ylabel: str) -> dict:
    """A log-scale figure of the true tail (``y``) and the bound (``theory_y``) along ``x``."""
    x, y, theory_y = ([float(v) for v in values] for values in (x, truth, bound))
    return plot("semilogy", x, y, xlabel, ylabel, theory_y=theory_y)


EXACT_RULE = (
    f"one-sided on max ln(tail/bound) <= 0; tails exact with relative accuracy {TAIL_RTOL:g} "
    "(lipschitz_icl.sphere.concentration.TAIL_RTOL)"
)


# ----------------------------------------------------------------------------- 1. projections (decided by proof)
def projection_tails(
    *, d: int, k: int, form: str, end_fraction: float, stated: float, max_boxes: int, seconds: float
) -> Outcome:
    """Dasgupta-Gupta (Lemma 2.2) for ``||P x||^2 ~ Beta(k/2, (d-k)/2)``, ``P`` of rank ``k < d``, decided by
    proof on both sides of the mean: ``P(||Px||^2 >= s)`` for ``s`` in ``[k/d, 1]`` and ``P(||Px||^2 <= s)`` for
    ``s`` in ``[0, k/d]``, against ``exp(C k (1 - beta + ln beta))`` (``form = "exponential"``) or
    Dasgupta-Gupta's form before ``1 + x <= e^x`` raised to ``2C`` (``"sharp"``), ``beta = s d/k``, ``C =
    stated``.  The ends where both sides vanish (within ``end_fraction`` of them) are decided by
    :func:`_beta_end_lemma`."""
    bound = DG_BOUNDS[form]
    mean = k / d
    s_1 = end_fraction * mean
    s_2 = 1 - end_fraction * (1 - mean)
    pieces = [
        Piece("projection_tail", bound, {"d": [d], "k": [k], "s": [mean, s_2 if form == "sharp" else 1.0]}),
        Piece("projection_lower_tail", bound, {"d": [d], "k": [k], "s": [s_1, mean]}),
    ]
    lemmas = [beta_end_lemma(d, k, form, "lower", s_1)] + (
        [beta_end_lemma(d, k, form, "upper", s_2)] if form == "sharp" else []
    )
    s = np.linspace(mean, 0.999, 40)
    if form == "exponential":
        bound_f = ineq.projection_bound(d, k, s)
    else:
        bound_f = ineq.projection_bound_dg(d, k, s)
    return proof_outcome(
        pieces=pieces,
        lemmas=lemmas,
        constant="C",
        stated=stated,
        max_boxes=max_boxes,
        seconds=seconds,
        figure=_figure(s, projection_tail(d, k, s), bound_f, "$s$", r"$P(\|Px\|^2 \geq s)$"),
    )


def cap_probability(*, d: int, stated: float, max_boxes: int, seconds: float) -> Outcome:
    """Ball's cap bound ``P(x . q >= h) <= exp(-C d h^2)``, ``C = stated``, decided by proof on ``h`` in
    ``[0, 1]`` (at ``h = 1`` the cap probability is exactly 0)."""
    h = np.linspace(0.0, 0.99, 45)
    return proof_outcome(
        pieces=[Piece("cap_tail", "exp(-C*d*h**2)", {"d": [d], "h": [0.0, 1.0]})],
        constant="C",
        stated=stated,
        max_boxes=max_boxes,
        seconds=seconds,
        figure=_figure(h, cap_tail(d, h), ineq.cap_bound(d, h), "$h$", r"$P(x\cdot q \geq h)$"),
    )


CHERNOFF_BOUNDS = {  # side -> bound with the rate C (stated 1); D the Bernoulli relative entropy
    ("relative-entropy", "upper"): "exp(-C*n*(a/n*log(a/(n*p)) + (1 - a/n)*log((1 - a/n)/(1 - p))))",
    ("relative-entropy", "lower"): "exp(-C*n*(a/n*log(a/(n*p)) + (1 - a/n)*log((1 - a/n)/(1 - p))))",
    ("multiplicative", "upper"): "exp(-C*(a/(n*p) - 1)**2*n*p/(1 + a/(n*p)))",
    ("multiplicative", "lower"): "exp(-C*(1 - a/(n*p))**2*n*p/2)",
}


def cap_counts(*, d: int, h: float, form: str, n_grid: list, stated: float, max_boxes: int, seconds: float) -> Outcome:
    """Chernoff bounds for the count ``N ~ Binomial(n, p)`` of ``n`` uniform points in the cap ``x . q >= h``,
    decided by proof at every threshold: ``P(N >= a)`` for every integer ``a`` in ``[n p, n - 1]`` and
    ``P(N <= a)`` for every ``a`` in ``[1, n p]``, ``p`` over the certified enclosure of the cap probability
    (``a = 0`` and ``a = n`` are identities: there the bound is the tail itself).  ``form =
    "relative-entropy"``: ``exp(-C n D(a/n || p))``; ``"multiplicative"``: ``exp(-C delta^2 mu / (2 +
    delta))`` above and ``exp(-C delta^2 mu / 2)`` below, ``mu = n p``; ``C = stated``."""
    enclosure = arithmetic.Enclosure.of(certified_laws.cap_probability(d, h))
    p_lo = enclosure.low
    p_hi = enclosure.high
    pieces = []
    for n in n_grid:  # the thresholds a in [first, last] of each tail, where that range is not empty
        above = math.ceil(n * p_hi)
        below = math.floor(n * p_lo)
        ranges = {"upper": ("binomial_tail", above, n - 1), "lower": ("binomial_lower_tail", 1, below)}
        for side, (tail, first, last) in ranges.items():
            box = {"n": [n], "a": {"from": first, "to": last}, "p": [p_lo, p_hi]}
            if first <= last:
                pieces.append(Piece(tail, CHERNOFF_BOUNDS[(form, side)], box))
    return proof_outcome(
        pieces=pieces,
        constant="C",
        stated=stated,
        max_boxes=max_boxes,
        seconds=seconds,
        extra={"cap_probability": [p_lo, p_hi]},
    )


# ----------------------------------------------------------------------------- 3. Lipschitz functionals
def _levy_rivals(d: int) -> dict:
    """The Gaussian rate ``d/2`` for Levy's ``(d-2)/2``: the bound raised to ``d/(d-2)``."""
    return {"gaussian": d / (d - 2) - 1.0}


def levy_exact(*, d: int, levels: list) -> Outcome:
    """Levy-type concentration for 1-Lipschitz functionals with an exact law, at the points ``t`` where the bound
    equals ``levels`` (:func:`~lipschitz_icl.sphere.inequalities.levy_t`) inside each functional's range: ``f = x . q``
    (``E f = 0``, tail the cap probability) and ``f = +-||P x||``, ``P`` of rank ``k = max(1, d // 4)`` (Beta law,
    exact mean :func:`~lipschitz_icl.sphere.concentration.norm_mean`).  A universal statement checked at those points
    only.
    """
    t = ineq.levy_t(d, levels)
    k = max(1, d // 4)
    mean = norm_mean(d, k)
    tails = {
        "x.q": (t < 1.0, lambda u: cap_tail(d, u)),
        f"||Px|| (k={k}), upper": (mean + t < 1.0, lambda u: projection_tail(d, k, (mean + u) ** 2)),
        f"||Px|| (k={k}), lower": (mean - t > 0.0, lambda u: special.betainc(0.5 * k, 0.5 * (d - k), (mean - u) ** 2)),
    }
    rows = [
        (f"{name}, t={ti:.4g}", float(ineq.levy_bound(d, ti)), float(tail(ti)))
        for name, (possible, tail) in tails.items()
        for ti in t[possible]
    ]
    use = t < 1.0
    return _tail_outcome(
        exact_tails(*zip(*rows)),
        rivals=_levy_rivals(d),
        points=len(rows),
        rule=f"{EXACT_RULE}; t where the bound equals {list(levels)} (inside the functional's range)",
        figure=_figure(t[use], cap_tail(d, t[use]), ineq.levy_bound(d, t[use]), "$t$", r"$P(x\cdot q \geq t)$"),
    )


def levy_monte_carlo(
    *,
    d: int,
    levels: list,
    samples: int,
    mean_samples: int,
    anchors: int,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Levy-type concentration for the two functionals of :func:`~lipschitz_icl.sphere.tails.monte_carlo_functionals`,
    by
    Monte Carlo (streams spawned from ``seed``: anchors, ``mean_samples`` draws for ``E f``, ``samples`` draws for
    the tails).  The tail at ``t`` is bracketed by the Clopper-Pearson lower limit of the proportion of ``f >= m_hi
    + t`` and the upper limit of that of ``f >= m_lo + t`` (:func:`~lipschitz_icl.sphere.tails.bracketing_counts`).
    Family-wise ``family_level``: half for the ``M`` mean intervals, half for the ``2G`` Clopper-Pearson intervals.
    """
    anchor_stream, mean_stream, tail_stream = (np.random.default_rng(s) for s in seed.spawn(3))
    functionals = monte_carlo_functionals(d, uniform_sphere(anchor_stream, anchors, d))
    t = ineq.levy_t(d, levels)
    G = len(functionals) * len(t)
    M = len(functionals)
    z = stats.norm.ppf(1.0 - family_level / (4 * M))
    mean_draws = uniform_sphere(mean_stream, mean_samples, d)
    tail_draws = uniform_sphere(tail_stream, samples, d)
    counts = [bracketing_counts(f, mean_draws, tail_draws, t, z) for f in functionals.values()]
    lo_counts, hi_counts = ([x for c in counts for x in c[i]] for i in (0, 1))
    labels = [f"{name}, t={ti:.4g}" for name in functionals for ti in t]
    level = 1.0 - family_level / (4 * G)
    low, _ = clopper_pearson(lo_counts, samples, level)
    _, high = clopper_pearson(hi_counts, samples, level)
    point = 0.5 * (np.asarray(lo_counts) + np.asarray(hi_counts)) / samples
    bound = np.tile(ineq.levy_bound(d, t), M)
    return _tail_outcome(
        TailComparison(tuple(labels), log(bound), log(low), log(point), log(high)),
        rivals=_levy_rivals(d),
        rule=f"one-sided on max ln(tail/bound) <= 0; {samples} draws per tail, E f from {mean_samples} draws, "
        f"Clopper-Pearson at {level:.8f} ({G} points, family-wise {family_level:g}); t where the bound equals "
        f"{list(levels)}",
    )


# ----------------------------------------------------------------------------- 4. the softmax normaliser
def softmax_normaliser(
    *,
    d: int,
    w: float,
    n: int,
    levels: list,
    replicates: int,
    bernstein_constant: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Bernstein's bound ``exp(-n t^2 / (c (v + b t/3)))`` (``c = bernstein_constant``) for ``Z_n = (1/n) sum_i
    exp(w x_i . q)`` around ``Phi_d(w)``, both tails, against ``replicates`` draws of ``Z_n``
    (:func:`~lipschitz_icl.sphere.tails.normaliser_draws`); ``Phi_d(w)``, the summand variance ``v`` and ranges ``b``
    exact
    (:func:`~lipschitz_icl.sphere.inequalities.normaliser_moments`).  Points: ``t`` where the bound equals ``levels``
    on each side; Clopper-Pearson at family-wise ``family_level`` (Bonferroni over the ``G`` points)."""
    (stream,) = seed.spawn(1)
    mom = ineq.normaliser_moments(d, w)
    deviation = normaliser_draws(np.random.default_rng(stream), d, w, n, replicates) - mom["phi"]
    labels = []
    bound = []
    counts = []
    ts = []
    for side, sgn, b in (("upper", 1.0, mom["range_upper"]), ("lower", -1.0, mom["range_lower"])):
        for lev in levels:
            t = ineq.bernstein_t(n, mom["variance"], b, lev, bernstein_constant)
            labels.append(f"{side} tail, t={t:.4g}")
            bound.append(float(ineq.bernstein_normaliser(d, w, n, t, side=side)))
            counts.append(int(np.sum(sgn * deviation >= t)))
            ts.append(t)
    level = 1.0 - family_level / len(labels)
    low, high = clopper_pearson(counts, replicates, level)
    point = np.asarray(counts, dtype=float) / replicates
    up = slice(0, len(levels))
    return _tail_outcome(
        TailComparison(tuple(labels), log(bound), log(low), log(point), log(high)),
        rivals={"constant-one": 1.0},  # the constant 1 instead of 2: the bound squared
        rule=f"one-sided on max ln(tail/bound) <= 0; {replicates} replicates, Clopper-Pearson at {level:.6f} "
        f"({len(labels)} points, family-wise {family_level:g}); t where the bound equals {list(levels)}",
        figure=_figure(ts[up], point[up], bound[up], "$t$", r"$P(Z_n - \Phi_d(w) \geq t)$"),
        extra={"phi": mom["phi"], "variance": mom["variance"]},
    )
