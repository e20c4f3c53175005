"""Linear attention cannot adapt (registry: ``lipschitz_icl/claims/linear.toml``, group ``linear``; the
paper's linear-attention section, Figure 1).

With the identity activation, ``yhat(q) = (1/n) sum_i y_i x_i^T M q`` (value weight absorbed), the optimum
over ``M`` is ``m* I`` with ``m* = a1/a2`` from the quadratic ``E_lin(m) = m^2 a2 - 2 m a1 + a0`` derived in
:mod:`lipschitz_icl.derivations.linear_attention`; as ``n -> inf`` ``m* -> d`` for every ``L`` and ``sigma`` and the
error tends to ``k(1) - d B > 0`` (the part of the task no homogeneous linear function explains).  The
weights ``(m/n) x_i . q`` are a fixed linear profile in ``x_i . q``: changing ``m`` scales them, so no
choice of ``m`` concentrates them near the query, and the optimum does not narrow a window as ``L``
grows (softmax's ``w*`` grows as ``L^(2 alpha)``).

One measure function per registry entry (``optimum``, ``isotropic``, ``cannot_adapt``, ``window``,
``trained``); each decides with one rule of :mod:`lipschitz_icl.decision`, measures its resolution by
bisection on the same measurements, and runs near-miss false variants two resolutions away through the
same rule.  Measured numbers: task-averaged Monte Carlo (:func:`lipschitz_icl.loss.icl_loss`; paired
differences on common random numbers from :func:`lipschitz_icl.loss.general_terms`), the exact ``w*`` of
softmax attention (window widths and figure series) and the NumPy trainer (:func:`lipschitz_icl.train.train`).
Every random stream is spawned once from the case's ``SeedSequence``.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np
from scipy import stats

from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.derivations import window_law as law

from .. import decision, geometry, sphere
from ..attention import Attention
from ..estimate import Estimate
from ..evidence import Evidence, FalseVariant, Quantity
from ..loss import general_terms, icl_loss
from ..optimum import wstar
from ..pretraining import SHAPE_THRESHOLD, noise_floor
from ..problem import make_problem
from ..train import init_params, train

__all__ = ["optimum", "isotropic", "cannot_adapt", "window", "trained", "optimum_decision", "perturbation_decision",
           "error_points", "error_decision", "window_width", "elasticity", "window_decision", "trained_decision",
           "relative_interval", "LINEAR_PROTOCOL", "M_MARGIN", "ERROR_MARGIN", "TRAINED_MARGIN"]

FAMILY_LEVEL = decision.FAMILY_LEVEL  # family-wise error of the Monte Carlo intervals within one claim (Bonferroni)
# Margins (registry: linear.toml, each entry's margin_source gives the reason).
M_MARGIN = 0.05  # relative, on m_hat / m* - 1 (linear.optimum)
ERROR_MARGIN = 0.05  # relative, on E / E_lin - 1 (linear.optimum) and E / (k(1) - d B) - 1 (linear.cannot-adapt)
# Trainer protocol for linear attention (linear.trained, exploratory): Adam (lr 0.05), batch 256, 4000 steps,
# lr x 0.25 once averaging starts, Polyak average over the last 75% of the steps.
LINEAR_PROTOCOL = dict(optimizer="adam", lr=0.05, steps=4000, batch=256, schedule="step",
                       final_lr_fraction=0.25, average_fraction=0.75)
TRAINED_MARGIN = 0.02  # relative, on tr(v M)/d / m* - 1; set after exploratory runs (hence exploratory)
# Sample sizes of linear.cannot-adapt: interval half-width 0.2 T(n).  The asymptotic rule asks the distance
# to follow the next-order term T within 0.5 T; with z se = 0.2 T the centre may stray 0.3 T = 1.5 z se
# (about 4.5 standard errors) before a true law is left undecided (0.3 T left ~5% of true cases so).
FOLLOW_PRECISION = 0.2


@lru_cache(maxsize=None)
def _exact_wstar(task: str, d: int, n: int, L: float, sigma: float) -> tuple[float, bool]:
    """Softmax attention's ``w*`` by the exact quadrature (deterministic: cached across seeds) and whether
    the search stopped at its bound (then ``w*`` is not found)."""
    result = wstar(make_problem(task, d, n, L, sigma), "exact")
    return result.w_star.value, bool(result.info.get("at_search_bound"))


def _frequency_kwargs(task: str) -> dict:
    return {"frequency": 1.0} if task == "cosine" else {}


def relative_interval(value: float, half_width: float, target: float) -> tuple[float, float]:
    """``[value - half, value + half] / target - 1`` (``target > 0``)."""
    return (value - half_width) / target - 1.0, (value + half_width) / target - 1.0


def _sample_size(relative_sd: float, z: float, target: float, bounds: tuple[int, int]) -> int:
    """Contexts for a ``z`` interval of relative half-width ``target``: ``ceil((z relative_sd / target)^2)``
    clipped to ``bounds``; ``relative_sd`` (per-context spread over the mean) comes from an independent
    pilot sample, so the size depends on the spread only, never on where the estimate lies."""
    return int(min(max(math.ceil((z * relative_sd / target) ** 2), bounds[0]), bounds[1]))


def _labelled(label: str, dec: decision.Decision) -> decision.Decision:
    """``dec`` with ``label`` in front of its detail (so a combined detail says which comparison decided)."""
    return decision.Decision(dec.rule, dec.verdict, f"{label}: {dec.detail}")


def _near_misses(label, decide, res: decision.Resolution, signs=(+1, -1)) -> list[FalseVariant]:
    """False variants at ``sign * res.near_miss()`` of the resolution's parameter, decided by
    ``decide(delta)``; ``label(delta)`` names one.  Empty if the resolution was not reached (the gate
    then has no shown power and fails)."""
    if not res.resolved:
        return []
    return [FalseVariant.decided(label(s * res.near_miss()), decide(s * res.near_miss()), decision.NEAR_MISS)
            for s in signs]


# ----------------------------------------------------------------------------- the optimum m* I
def _quadratic_from_terms(terms):
    """Per-context coefficients of ``E_c(m) = a0 - 2 m a1 + m^2 a2`` from the losses at ``m = 0, 1, 2``
    (exact: the per-context loss is a quadratic in ``m``): ``a2 = (l2 - 2 l1 + l0)/2``, ``a1 = (l0 + a2 - l1)/2``."""
    l0, l1, l2 = (b + nz for b, nz in terms)
    a2 = (l2 - 2 * l1 + l0) / 2
    a1 = (l0 + a2 - l1) / 2
    return l0, a1, a2


def _m_hat(problem, contexts: int, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo optimum of the quadratic, ``m_hat = mean(a1_c)/mean(a2_c)`` (common random numbers for
    ``m = 0, 1, 2``), and its delta-method standard error ``sd(a1_c - m_hat a2_c) / (mean(a2_c) sqrt(N))``."""
    d = problem.d
    terms = general_terms(problem, [Attention(mm * np.eye(d), "linear") for mm in (0.0, 1.0, 2.0)], contexts, rng)
    _, a1, a2 = _quadratic_from_terms(terms)
    m_hat = float(a1.mean() / a2.mean())
    se = float(np.std(a1 - m_hat * a2, ddof=1) / (a2.mean() * math.sqrt(contexts)))
    return m_hat, se


def optimum_decision(m_hats, m_stars, losses, e_stars, z: float, *, m_shift: float = 0.0,
                     e_shift: float = 0.0) -> decision.Decision:
    """Equivalence at every ``n``: ``[m_hat +- z se] / (m* (1 + m_shift)) - 1`` within ``+-M_MARGIN`` and
    ``[E +- z se] / (E_lin (1 + e_shift)) - 1`` within ``+-ERROR_MARGIN``; combined (fails if any fails).
    ``m_hats``, ``losses``: ``(value, se)`` pairs; the shifts move the claimed values (resolution, variants)."""
    decisions, labels = [], []
    for k, ((mh, ms), m_star, (e, es), e_star) in enumerate(zip(m_hats, m_stars, losses, e_stars)):
        decisions.append(decision.equivalence(*relative_interval(mh, z * ms, m_star * (1 + m_shift)), M_MARGIN))
        decisions.append(decision.equivalence(*relative_interval(e, z * es, e_star * (1 + e_shift)), ERROR_MARGIN))
        labels += [f"m #{k}", f"E #{k}"]
    return decision.combined("equivalence", [_labelled(label, dec) for label, dec in zip(labels, decisions)])


def optimum(task: str, d: int, *, seed: np.random.SeedSequence, n_grid=(10, 100, 1000), L: float = 1.0,
            sigma: float = 0.5, pilot: int = 4000, contexts=(4000, 300000)) -> Evidence:
    """Registry ``linear.optimum``: the optimal ``m I`` is the derived ``m*`` and its error the derived
    ``E_lin(n)``.

    At each ``n``: ``m_hat`` (:func:`_m_hat`) on a sample sized (:func:`_sample_size`, within ``contexts``)
    from an independent ``pilot`` so that its interval's half-width is about half of :data:`M_MARGIN`, and
    the Monte Carlo loss at ``m* I`` on as many contexts (independent streams); decided by
    :func:`optimum_decision` with Bonferroni ``z`` over all intervals.  Resolution: the relative change of
    the claimed ``m*`` (both signs) the rule refutes; the same for ``E_lin`` (reported in ``extra``).
    False variants: ``m* (1 +- 2 res)`` and ``E_lin (1 +- 2 res_E)``.
    """
    start = time.perf_counter()
    fk = _frequency_kwargs(task)
    streams = seed.spawn(3 * len(n_grid))
    z = decision.bonferroni_z(2 * len(n_grid))
    m_hats, m_stars, losses, e_stars, sizes = [], [], [], [], []
    for k, n in enumerate(n_grid):
        problem = make_problem(task, d, n, L, sigma, **fk)
        m_star, e_star = lin.linear_optimum(task, d, n, L, sigma, **fk)
        m_pilot, se_pilot = _m_hat(problem, pilot, np.random.default_rng(streams[3 * k]))
        c = _sample_size(se_pilot * math.sqrt(pilot) / abs(m_pilot), z, M_MARGIN / 2, contexts)
        m_hats.append(_m_hat(problem, c, np.random.default_rng(streams[3 * k + 1])))
        est = icl_loss(problem, M=m_star * np.eye(d), attention="linear", contexts=c,
                       rng=np.random.default_rng(streams[3 * k + 2])).loss
        losses.append((est.value, est.standard_error))
        m_stars.append(m_star)
        e_stars.append(e_star)
        sizes.append(c)

    def decide(m_shift=0.0, e_shift=0.0):
        return optimum_decision(m_hats, m_stars, losses, e_stars, z, m_shift=m_shift, e_shift=e_shift)

    main = decide()
    res = decision.two_sided_resolution(lambda x: decide(m_shift=x).refutes, "relative change of m*",
                                        start=1e-3, limit=1.0)
    res_e = decision.two_sided_resolution(lambda x: decide(e_shift=x).refutes, "relative change of E_lin",
                                          start=1e-3, limit=1.0)
    false_variants = (_near_misses(lambda x: f"m* x {1 + x:.4g} at every n", lambda x: decide(m_shift=x), res)
                      + _near_misses(lambda x: f"E_lin x {1 + x:.4g} at every n", lambda x: decide(e_shift=x), res_e))
    quantities = []
    for n, (mh, ms), m_star, (e, es), e_star in zip(n_grid, m_hats, m_stars, losses, e_stars):
        quantities.append(Quantity(f"m_hat / m* - 1 at n={n}", 0.0, mh / m_star - 1,
                                   *relative_interval(mh, z * ms, m_star), None,
                                   f"m* = {m_star:.5g} (derived), m_hat = {mh:.5g}; margin +-{M_MARGIN:g}"))
        quantities.append(Quantity(f"E(m* I) / E_lin - 1 at n={n}", 0.0, e / e_star - 1,
                                   *relative_interval(e, z * es, e_star), None,
                                   f"E_lin = {e_star:.5g} (derived); margin +-{ERROR_MARGIN:g}"))
    m_lim, _ = lin.linear_limit(task, d, L, **fk)
    quantities.append(Quantity("lim m* (n -> inf)", m_lim, None, note="derived; equals d for every L and sigma"))
    return Evidence(
        statement=f"For {task} tasks (d={d}, L={L:g}, sigma={sigma:g}) the optimal linear attention m I has "
                  "m = m* = a1/a2 and error E_lin = a0 - a1^2/a2 (lipschitz_icl.derivations.linear_attention).",
        rule=f"equivalence (TOST) at n = {list(n_grid)}: m_hat/m* - 1 within +-{M_MARGIN:g} and E(m* I)/E_lin - 1 "
             f"within +-{ERROR_MARGIN:g}, intervals +-z se with z = {z:.2f} (Bonferroni, family-wise "
             f"{FAMILY_LEVEL:g}); contexts {sizes} (sized from a {pilot}-context pilot for a half-width of "
             f"{M_MARGIN / 2:g} on m_hat/m* - 1).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence",
        margin=f"+-{M_MARGIN:g} on m_hat/m* - 1, +-{ERROR_MARGIN:g} on E/E_lin - 1", resolution=res.to_dict(),
        extra={"decision": main.detail, "m_star": m_stars, "m_hat": m_hats, "E_lin": e_stars, "E": losses,
               "contexts": sizes,
               "E_resolution": res_e.to_dict()})


# ----------------------------------------------------------------------------- isotropy of the optimum
def _directions(d: int, rng: np.random.Generator):
    """Unit-Frobenius perturbations: symmetric traceless, antisymmetric, rank-one traceless, and the
    scale directions ``+-I / sqrt(d)``."""
    A = rng.normal(size=(d, d))
    S = A + A.T
    S -= np.trace(S) / d * np.eye(d)
    u = A[:, 0] / np.linalg.norm(A[:, 0])
    R = np.outer(u, u) - np.eye(d) / d
    return [("symmetric traceless", S / np.linalg.norm(S)), ("antisymmetric", (A - A.T) / np.linalg.norm(A - A.T)),
            ("rank-one traceless", R / np.linalg.norm(R)), ("scale up", np.eye(d) / math.sqrt(d)),
            ("scale down", -np.eye(d) / math.sqrt(d))]


def perturbation_decision(diffs, z: float, labels) -> decision.Decision:
    """Sign rule: every paired difference ``L(M + eps D) - L(M)`` (interval ``value +- z se``) is > 0."""
    return decision.combined("sign", [
        _labelled(label, decision.sign(e.value - z * e.standard_error, e.value + z * e.standard_error, +1))
        for label, e in zip(labels, diffs)])


def _shifted_differences(problem, m_star: float, perturbations, contexts: int, rng: np.random.Generator):
    """Per-context paired differences ``L_c(B + P) - L_c(B)`` at ``B = m* I`` and ``B = 2 m* I`` for each
    perturbation ``P``, on common random numbers (:func:`lipschitz_icl.loss.general_terms`).  The per-context
    loss of linear attention is a quadratic in ``M``, so at ``B = (1 + delta) m* I`` the difference is
    exactly ``D0 + delta (D1 - D0)``: every shift of the base point is decided on the same draws.
    Returns ``(D0, D1)``, arrays of shape ``(perturbations, contexts)``."""
    d = problem.d
    models = []
    for scale in (1.0, 2.0):
        base = scale * m_star * np.eye(d)
        models += [Attention(base, "linear")] + [Attention(base + P, "linear") for P in perturbations]
    losses = [b + nz for b, nz in general_terms(problem, models, contexts, rng)]
    k = len(perturbations) + 1
    return tuple(np.array([loss - block[0] for loss in block[1:]]) for block in (losses[:k], losses[k:]))


def isotropic(task: str, d: int, *, seed: np.random.SeedSequence, n: int = 100, L: float = 1.0,
              sigma: float = 0.5, contexts: int = 20000, relative_size: float = 0.3) -> Evidence:
    """Registry ``linear.isotropic``: ``m* I`` minimises the loss over all ``M``: every perturbation of
    Frobenius size ``eps = relative_size ||m* I||_F`` (:func:`_directions`) raises it.

    Paired differences on common random numbers (:func:`_shifted_differences`), decided by
    :func:`perturbation_decision` with Bonferroni ``z``.  Resolution: the relative shift ``delta`` of the
    base point ``(1 + delta) m* I`` (same directions, same ``eps``, same draws: exact by the quadratic)
    that the rule refutes, both signs.  False variants: ``(1 +- 2 res) m* I`` is the minimiser.
    """
    start = time.perf_counter()
    fk = _frequency_kwargs(task)
    dir_stream, data_stream = seed.spawn(2)
    problem = make_problem(task, d, n, L, sigma, **fk)
    m_star, _ = lin.linear_optimum(task, d, n, L, sigma, **fk)
    dirs = _directions(d, np.random.default_rng(dir_stream))
    labels = [name for name, _ in dirs]
    eps = relative_size * m_star * math.sqrt(d)
    z = decision.bonferroni_z(len(dirs))
    D0, D1 = _shifted_differences(problem, m_star, [eps * D for _, D in dirs], contexts,
                                  np.random.default_rng(data_stream))

    def measure(delta):
        return [Estimate.from_samples(row) for row in D0 + delta * (D1 - D0)]

    def decide(delta):
        return perturbation_decision(measure(delta), z, labels)

    diffs = measure(0.0)
    main = perturbation_decision(diffs, z, labels)
    res = decision.two_sided_resolution(lambda x: decide(x).refutes, "relative shift of the base point m* I",
                                        start=0.01, limit=2.0)
    false_variants = _near_misses(lambda x: f"{1 + x:.3g} m* I is the minimiser", decide, res)
    quantities = []
    for (name, _), e in zip(dirs, diffs):
        low, high = e.value - z * e.standard_error, e.value + z * e.standard_error
        quantities.append(Quantity(f"Delta E_lin along {name} at n={n}", None, e.value, low, high,
                                   decision.sign(low, high, +1).verdict, "must be > 0"))
    return Evidence(
        statement=f"For {task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g}) m* I = {m_star:.5g} I minimises the "
                  "linear-attention loss over all M: every perturbation of it raises the loss.",
        rule=f"sign: every paired Delta E (z = {z:.2f}, Bonferroni over {len(dirs)} directions) > 0; perturbation "
             f"size {relative_size:g} ||m* I||_F; {contexts} contexts, common random numbers.",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="sign", margin="0 (every interval wholly above 0)",
        resolution=res.to_dict(), extra={"decision": main.detail, "m_star": m_star, "eps": eps})


# ----------------------------------------------------------------------------- the error does not vanish
def _linear_error_next_order(task, d, L, sigma, fk):
    """``n -> E_lin(n) / (k(1) - d B) - 1``: the derived distance of the finite-``n`` error to its limit."""
    _, e_lim = lin.linear_limit(task, d, L, **fk)
    return lambda n: lin.linear_optimum(task, d, n, L, sigma, **fk)[1] / e_lim - 1.0


def error_points(n_grid, errors, next_orders, limit: float, z: float, scale: float = 1.0):
    """Asymptotic points ``E(n) / (scale limit) - 1`` (interval ``E +- z se``) with the derived next-order
    term ``E_lin(n)/limit - 1`` (``scale`` multiplies the whole claimed law ``E_lin(n)``: the relative
    next-order term is unchanged)."""
    return [decision.AsymptoticPoint(float(n), *relative_interval(e, z * s, scale * limit), t)
            for n, (e, s), t in zip(n_grid, errors, next_orders)]


def error_decision(n_grid, errors, next_orders, limit: float, z: float, scale: float = 1.0) -> decision.Decision:
    """Asymptotic rule (:func:`lipschitz_icl.decision.asymptotic`, margin :data:`ERROR_MARGIN`) on
    :func:`error_points`."""
    return decision.asymptotic(error_points(n_grid, errors, next_orders, limit, z, scale), ERROR_MARGIN)


def _softmax_series(task, d, n_grid, L, sigma, contexts, stream) -> list | None:
    """Softmax attention's error at its exact ``w*(n)`` (figure series only; not decided here), for the
    classes whose ``w*`` has an exact quadrature (affine, relu); None otherwise."""
    if task not in ("affine", "relu"):
        return None
    out = []
    for n, s in zip(n_grid, stream.spawn(len(n_grid))):
        problem = make_problem(task, d, n, L, sigma)
        w, _ = _exact_wstar(task, d, n, L, sigma)
        out.append(icl_loss(problem, w, contexts=contexts, rng=np.random.default_rng(s)).loss.value)
    return out


def cannot_adapt(task: str, d: int, *, seed: np.random.SeedSequence, n_grid=(10, 20, 40, 80), L: float = 1.0,
                 sigma: float = 0.5, n_max: float = 5000, reach: float = 0.7, pilot: int = 2000,
                 contexts=(2000, 60000)) -> Evidence:
    """Registry ``linear.cannot-adapt``: the optimal linear attention's error does not vanish: it tends
    to the derived ``k(1) - d B > 0`` as ``n`` grows.

    ``n_grid`` extended by doubling (:func:`lipschitz_icl.decision.extend_grid`) until the derived
    next-order term ``T(n) = E_lin(n)/limit - 1`` is below ``reach`` times :data:`ERROR_MARGIN`; at each
    ``n`` the Monte Carlo error at ``m*(n) I`` on a sample sized (:func:`_sample_size`, within ``contexts``)
    from an independent ``pilot`` so that the interval's relative half-width is :data:`FOLLOW_PRECISION`
    ``max(T(n), 0.1 margin)``; decided by :func:`error_decision`.  Resolution: the relative change ``c``
    of the claimed law ``(1 + c) E_lin(n)`` (so of the limit) the rule refutes, both signs.  False
    variants: the limit is ``(1 +- 2 res) (k(1) - d B)``.
    """
    start = time.perf_counter()
    fk = _frequency_kwargs(task)
    next_order = _linear_error_next_order(task, d, L, sigma, fk)
    grid = decision.extend_grid(n_grid, next_order, ERROR_MARGIN, factor=2, x_max=n_max, reach=reach)
    grid = [int(round(n)) for n in grid]
    streams = seed.spawn(2 * len(grid) + 1)
    _, e_lim = lin.linear_limit(task, d, L, **fk)
    z = decision.bonferroni_z(len(grid))
    errors, theory, next_orders, sizes = [], [], [], []
    for k, n in enumerate(grid):
        problem = make_problem(task, d, n, L, sigma, **fk)
        m_star, e_star = lin.linear_optimum(task, d, n, L, sigma, **fk)
        t = e_star / e_lim - 1.0
        first = icl_loss(problem, M=m_star * np.eye(d), attention="linear", contexts=pilot,
                         rng=np.random.default_rng(streams[2 * k])).loss
        c = _sample_size(first.standard_error * math.sqrt(pilot) / e_lim, z,
                         FOLLOW_PRECISION * max(abs(t), 0.1 * ERROR_MARGIN), contexts)
        est = icl_loss(problem, M=m_star * np.eye(d), attention="linear", contexts=c,
                       rng=np.random.default_rng(streams[2 * k + 1])).loss
        errors.append((est.value, est.standard_error))
        theory.append(e_star)
        next_orders.append(t)
        sizes.append(c)

    def decide(c):
        return error_decision(grid, errors, next_orders, e_lim, z, scale=1 + c)

    main = decide(0.0)
    res = decision.two_sided_resolution(lambda c: decide(c).refutes, "relative change of the limit k(1) - d B",
                                        start=1e-3, limit=1.0)
    false_variants = _near_misses(lambda c: f"the limit is {1 + c:.4g} (k(1) - d B)", decide, res)
    last = error_points(grid[-1:], errors[-1:], next_orders[-1:], e_lim, z)[0]
    quantities = [
        Quantity(f"E(n={grid[-1]}) / (k(1) - d B) - 1", last.next_order, 0.5 * (last.low + last.high), last.low,
                 last.high, main.verdict, f"theory: derived next-order term; margin +-{ERROR_MARGIN:g}"),
        Quantity("linear error limit k(1) - d B (n -> inf)", e_lim, errors[-1][0], errors[-1][0] - z * errors[-1][1],
                 errors[-1][0] + z * errors[-1][1], None, f"measured at n={grid[-1]}; E_lin there {theory[-1]:.5g}"),
    ]
    soft = _softmax_series(task, d, grid, L, sigma, pilot, streams[-1])
    series = [{"label": "linear (m*)", "x": list(map(float, grid)), "y": [v for v, _ in errors], "theory_y": theory}]
    if soft is not None:
        series.append({"label": "softmax (w*)", "x": list(map(float, grid)), "y": soft})
    evidence = Evidence(
        statement=f"For {task} tasks (d={d}, L={L:g}, sigma={sigma:g}) the optimal linear attention's ICL error does "
                  f"not vanish as n grows: it tends to k(1) - d B = {e_lim:.5g} > 0 (derived).",
        rule=f"asymptotic rule on E(n)/(k(1) - d B) - 1 over n = {grid} (extended by x2 while the derived "
             f"next-order term >= {reach * ERROR_MARGIN:g}), intervals E +- z se, z = {z:.2f}; contexts {sizes} "
             f"(sized from {pilot}-context pilots).",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="asymptotic", margin=f"+-{ERROR_MARGIN:g} on E/(k(1) - d B) - 1",
        resolution=res.to_dict(),
        extra={"decision": main.detail, "n": grid, "linear": errors, "linear_theory": theory, "linear_limit": e_lim,
               "next_order": next_orders, "contexts": sizes, "softmax": soft})
    evidence.figure = {"kind": "loglog", "x": list(map(float, grid)), "y": [v for v, _ in errors],
                       "theory_y": theory, "series": series, "xlabel": "n", "ylabel": "ICL error",
                       "title": f"{task}: linear vs softmax attention"}
    return evidence


# ----------------------------------------------------------------------------- no window
def window_width(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per context ``sum_i |p_i| (1 - t_i) / sum_i |p_i|``, ``t_i = x_i . q``: the weight-averaged
    ``||x_i - q||^2 / 2``, the width of the region the attention reads.  Scale-free in ``p``; for softmax
    at large ``w`` it is ``(d - 1)/(2 w)`` (``1 - t`` is Gamma((d-1)/2, 1/w) under the weights)."""
    a = np.abs(p)
    return np.sum(a * (1.0 - t), axis=-1) / np.sum(a, axis=-1)


def elasticity(lo: np.ndarray, hi: np.ndarray, L_lo: float, L_hi: float, z: float) -> tuple[float, float, float]:
    """``e = log(mean hi / mean lo) / log(L_hi / L_lo)`` of paired per-context widths, with interval
    ``e +- z se``, ``se = sd(hi/mean hi - lo/mean lo) / (sqrt(N) log(L_hi/L_lo))`` (delta method).
    Returns ``(e, low, high)``."""
    span = math.log(L_hi / L_lo)
    mlo, mhi = float(lo.mean()), float(hi.mean())
    e = math.log(mhi / mlo) / span
    se = float(np.std(hi / mhi - lo / mlo, ddof=1) / (math.sqrt(lo.size) * span))
    return e, e - z * se, e + z * se


def window_decision(linear, softmax, alpha: float, shift: float = 0.0) -> decision.Decision:
    """Equivalence within ``+-alpha``: the linear width's ``L``-elasticity (interval ``linear``) with
    ``shift`` (the claim: 0), and softmax's (interval ``softmax``) with its derived ``-2 alpha``."""
    return decision.combined("equivalence", [
        _labelled("linear", decision.equivalence(linear[1] - shift, linear[2] - shift, alpha)),
        _labelled("softmax", decision.equivalence(softmax[1] + 2 * alpha, softmax[2] + 2 * alpha, alpha))])


def window(d: int, *, seed: np.random.SeedSequence, task: str = "affine", n: int = 1000, L_grid=(0.1, 1.0, 10.0),
           sigma: float = 0.5, contexts: int = 2000) -> Evidence:
    """Registry ``linear.window``: the optimal linear attention does not narrow its window as ``L`` grows.

    On common contexts (``x_i``, ``q`` uniform), :func:`window_width` of the optimal linear attention
    ``m*(L) I`` and of softmax attention at its exact ``w*(L)``, at the smallest and largest ``L``; their
    ``L``-elasticities (:func:`elasticity`) must be 0 (linear) and the derived ``-2 alpha`` of softmax's
    width ``~ 1/w*`` (``w* ~ L^(2 alpha)``, :func:`lipschitz_icl.derivations.window_law.window_law`), each within
    ``+-alpha`` (:func:`window_decision`).  Resolution: the claimed linear elasticity shifted by
    ``epsilon`` (both signs) that the rule refutes; false variants: the linear window width scales as
    ``L^(+-2 res)`` (a window narrowing about as softmax's does).
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed.spawn(1)[0])
    L_grid = list(L_grid)
    alpha = law.window_law(task, d)[0]
    found = [_exact_wstar(task, d, n, LL, sigma) for LL in L_grid]
    ws = [w for w, _ in found]
    ms = [lin.linear_optimum(task, d, n, LL, sigma)[0] for LL in L_grid]
    x = sphere.uniform_sphere(rng, (contexts, n), d)
    q = sphere.uniform_sphere(rng, contexts, d)
    t = np.einsum("cnd,cd->cn", x, q)
    linear = [window_width(Attention(mm * np.eye(d), "linear").weights(x, q), t) for mm in ms]
    soft = [window_width(Attention(w * np.eye(d)).weights(x, q), t) for w in ws]
    z = decision.bonferroni_z(2)
    e_lin = elasticity(linear[0], linear[-1], L_grid[0], L_grid[-1], z)
    e_soft = elasticity(soft[0], soft[-1], L_grid[0], L_grid[-1], z)
    main = window_decision(e_lin, e_soft, alpha)
    stuck = [LL for LL, (_, at_bound) in zip(L_grid, found) if at_bound]
    if stuck:
        main = decision.Decision("equivalence", "inconclusive", f"softmax w* at its search bound for L = {stuck}")
    res = decision.two_sided_resolution(lambda x: window_decision(e_lin, e_soft, alpha, x).refutes,
                                        "elasticity of the linear window width in L", start=1e-3, limit=4.0)
    false_variants = _near_misses(lambda x: f"the linear window width scales as L^({x:+.3g})",
                                  lambda x: window_decision(e_lin, e_soft, alpha, x), res)
    quantities = [
        Quantity("d log width / d log L (linear, m*)", 0.0, e_lin[0], e_lin[1], e_lin[2], None,
                 f"L from {L_grid[0]:g} to {L_grid[-1]:g}; margin +-alpha = {alpha:.4g}"),
        Quantity("d log width / d log L (softmax, w*)", -2 * alpha, e_soft[0], e_soft[1], e_soft[2], None,
                 f"theory: width ~ 1/w*, w* ~ L^(2 alpha) (large-n law); margin +-alpha = {alpha:.4g}"),
        Quantity("d log m* / d log L (linear)", 0.0,
                 float(np.polyfit(np.log(L_grid), np.log(ms), 1)[0]), None, None, None,
                 f"derived m* -> d = {d} for every L as n -> inf; finite-n drift through sigma^2/L^2"),
    ]
    evidence = Evidence(
        statement=f"Optimal linear attention ({task}, d={d}, n={n}) does not narrow its window as L grows: the "
                  "L-elasticity of its window width is 0, while softmax's is -2 alpha.",
        rule=f"equivalence of the linear width's elasticity with 0 and of softmax's with -2 alpha, within +-alpha = "
             f"{alpha:.4g}; intervals e +- z se (z = {z:.2f}); L = {L_grid}, {contexts} contexts.",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence", margin=f"+-{alpha:.4g} on the elasticity",
        resolution=res.to_dict(),
        extra={"decision": main.detail, "L": L_grid, "w_star": ws, "m_star": ms,
               "softmax_width": [float(s.mean()) for s in soft], "linear_width": [float(v.mean()) for v in linear]})
    evidence.figure = {"kind": "semilogx", "x": L_grid, "y": [float(s.mean()) for s in soft], "series": [
        {"label": "softmax (w*)", "x": L_grid, "y": [float(s.mean()) for s in soft]},
        {"label": "linear (m*)", "x": L_grid, "y": [float(v.mean()) for v in linear]}],
        "xlabel": "L", "ylabel": "window width (weight-averaged |x - q|^2 / 2)", "title": "window vs L"}
    return evidence


# ----------------------------------------------------------------------------- the trainer
def trained_decision(scales, target: float, margin: float = TRAINED_MARGIN, level: float = 0.99):
    """Equivalence of the mean trained scale with ``target``: the ``level`` t-interval of the mean of
    ``scales`` (independent runs), relative to ``target``, within ``+-margin``.  Returns
    ``(Decision, (low, high))``."""
    values = np.asarray(scales, dtype=float)
    K = values.size
    half = float(stats.t.ppf(0.5 + 0.5 * level, K - 1) * values.std(ddof=1) / math.sqrt(K))
    interval = relative_interval(float(values.mean()), half, target)
    return decision.equivalence(*interval, margin), interval


def trained(task: str, d: int, n: int, *, seed: np.random.SeedSequence, L: float = 1.0, sigma: float = 0.5,
            runs: int = 6, steps: int | None = None) -> Evidence:
    """Registry ``linear.trained`` (exploratory): training linear attention (M-form, :data:`LINEAR_PROTOCOL`)
    from random anisotropic starts ends at ``m* I``.

    Scale: :func:`trained_decision` of ``tr(v M)/d`` over ``runs`` independent runs against the derived
    ``m*`` (margin :data:`TRAINED_MARGIN`).  Shape: the anisotropy of every trained ``v M`` below
    :data:`~lipschitz_icl.pretraining.SHAPE_THRESHOLD` (one-sided), inconclusive if the run-to-run noise
    floor is not below a third of it.  Run ``k`` draws its start and its data from child ``k`` of the
    case's ``SeedSequence``; ``steps`` overrides the protocol's.  Resolution: the relative change of the
    claimed ``m*`` the scale rule refutes (both signs); false variants ``m* (1 +- 2 res)``.
    """
    start = time.perf_counter()
    fk = _frequency_kwargs(task)
    problem = make_problem(task, d, n, L, sigma, **fk)
    m_star, _ = lin.linear_optimum(task, d, n, L, sigma, **fk)
    protocol = dict(LINEAR_PROTOCOL, **({} if steps is None else {"steps": steps}))
    Ms, starts = [], []
    for child in seed.spawn(runs):
        init_seq, data_seq = child.spawn(2)
        init = init_params("M", d, "linear", np.random.default_rng(init_seq), 1.0)
        starts.append(geometry.anisotropy(init["M"]))
        Ms.append(train(problem, attention="linear", init=init, seed=data_seq, **protocol).M)
    scales = [geometry.isotropic_scale(M) for M in Ms]
    aniso = [geometry.anisotropy(M) for M in Ms]
    floor = noise_floor(Ms)
    scale_dec, interval = trained_decision(scales, m_star)
    shape_dec = decision.one_sided(0.0, max(aniso), SHAPE_THRESHOLD, "<=")
    if floor >= SHAPE_THRESHOLD / 3:
        shape_dec = decision.Decision("one-sided", "inconclusive", f"noise floor {floor:.4f} >= threshold/3")
    main = decision.combined("equivalence", [_labelled("scale", scale_dec), _labelled("shape", shape_dec)])

    def decide(x):
        return trained_decision(scales, m_star * (1 + x))[0]

    res = decision.two_sided_resolution(lambda x: decide(x).refutes, "relative change of m*",
                                        start=1e-3, limit=1.0)
    false_variants = _near_misses(lambda x: f"the trained scale is m* x {1 + x:.4g}", decide, res)
    quantities = [
        Quantity("tr(v M)/d / m* - 1", 0.0, float(np.mean(scales)) / m_star - 1, *interval, scale_dec.verdict,
                 f"{runs} runs; m* = {m_star:.5g}; margin +-{TRAINED_MARGIN:g}"),
        Quantity("max anisotropy of trained v M", 0.0, max(aniso), 0.0, SHAPE_THRESHOLD, shape_dec.verdict,
                 f"random starts {min(starts):.2f}-{max(starts):.2f}; noise floor {floor:.4f}"),
    ]
    return Evidence(
        statement=f"Training linear attention on {task} tasks (d={d}, n={n}, L={L:g}, sigma={sigma:g}) from random "
                  f"starts ends at m* I, m* = {m_star:.5g} (derived).",
        rule=f"equivalence of the mean tr(v M)/d over {runs} runs (99% t-interval) with m* within "
             f"+-{TRAINED_MARGIN:g} relative; every anisotropy < {SHAPE_THRESHOLD:g}. Protocol: {protocol}.",
        quantities=quantities, verdict=main.verdict, seconds=time.perf_counter() - start,
        false_variants=false_variants, rule_name="equivalence", margin=f"+-{TRAINED_MARGIN:g} on tr(v M)/d / m* - 1",
        resolution=res.to_dict(), extra={"decision": main.detail, "scales": scales, "anisotropy": aniso,
                                         "noise_floor": floor})
