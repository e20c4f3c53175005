"""Theorem 4.4: for low-rank tasks the attention window learns the direction ``col(B)``.  CLAIMS.md section 3.

Statement checked: when tasks depend on ``x`` only through ``B^T x`` (``B`` ``d x k``, ``k < d``,
orthonormal columns; ``P = B B^T``, ``Q = I - P``), the optimal ``M`` has no component outside ``col(B)``:
``M* = c* P``.  The paper proves it for the linear low-rank class; its low-rank experiment also uses the
affine, quadratic and cosine links, which are checked here with the same rules.

Why a component outside ``col(B)`` cannot help to first order (the symmetry argument): reflecting the
*context* points in ``col(B)^perp`` (``x_i -> (P - Q) x_i``, the query untouched) preserves the law of
the prompt and every label, and maps ``x_i^T M q`` to ``x_i^T (P - Q) M q``; so ``L(c P + D) = L(c P - D)``
for every ``D`` with ``P D P = 0``, and ``c P`` is a stationary point along each such ``D``.  Whether it
is a minimum is a second-order question, measured here.

Measured numbers come from the task-averaged estimator (:func:`lipschitz_icl.loss.general_terms`,
:func:`lipschitz_icl.loss.loss_differences`) on common random numbers and from the NumPy trainer
(:mod:`lipschitz_icl.pretraining` protocol).  The best scale ``c*`` of ``M = c P`` (and ``w*`` of
``M = w I``) comes from :func:`scale_search`.

The conclusion does not extend uniformly to the nonlinear links: on the sphere
``||B^T x||^2 = 1 - ||Q x||^2``, so the complement carries information about the even part of a
nonlinear link, and at some ``(d, k)`` ``c* P`` is a saddle (:func:`nonlinear_scope` records where).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from .. import geometry
from ..attention import Attention, softmax_weights_from_logits
from ..estimate import Estimate
from ..evidence import Evidence, FalseVariant, Quantity, combine_verdicts
from ..loss import general_terms, loss_differences
from ..pretraining import M_PROTOCOL, SHAPE_THRESHOLD, independent_runs
from ..problem import make_problem
from ..tasks import make_task_class
from .thm34 import minimiser_verdict

__all__ = ["LOWRANK_LINKS", "FAMILY_LEVEL", "SCALE_GRID", "scale_search", "outside_directions",
           "second_order", "exponent_rule", "first_size_differences", "direction_optimality", "nonlinear_scope",
           "trained_direction", "matched_problem", "limit_terms", "dimension_dependence"]

REF = "Theorem 4.4"
LOWRANK_LINKS = ("lowrank-linear", "lowrank-affine", "lowrank-quadratic", "lowrank-cosine")
FAMILY_LEVEL = 1e-3  # family-wise error of the Monte Carlo decisions of one claim
SCALE_GRID = np.logspace(-2.0, 2.5, 37)  # scales tried by scale_search (ratio 1.33 between neighbours)


def _z_crit(count: int) -> float:
    return float(stats.norm.ppf(1 - FAMILY_LEVEL / max(count, 1)))


# ----------------------------------------------------------------------------- the best scale
def scale_search(problem, base: np.ndarray, *, contexts: int = 6000, seed: int = 0, grid=SCALE_GRID):
    """Best ``s >= 0`` for ``M = s base`` by sample-average approximation on common random numbers.

    The task-averaged per-context losses of ``s = 0`` (uniform averaging) and of every scale in ``grid``
    are computed on one draw of prompts (seed ``seed``); ``s_grid`` is the minimiser over these; when it
    is interior and its lower neighbour is positive, a parabola in ``log s`` through it and its two
    neighbours gives ``s_par``, evaluated on the same draw, and the smaller of the two losses wins.
    Returns ``(s, loss_at_s, edge)`` with ``edge`` ``"zero"`` (the minimiser is ``s = 0``: uniform
    averaging, no window), ``"top"`` (the largest grid scale: the search did not bracket the optimum) or
    ``None``.
    """
    grid = np.concatenate([[0.0], np.asarray(grid, dtype=float)])
    terms = general_terms(problem, [Attention(s * base) for s in grid], contexts, np.random.default_rng(seed))
    losses = np.array([np.mean(b + n) for b, n in terms])
    i = int(np.argmin(losses))
    if i == 0:
        return 0.0, float(losses[0]), "zero"
    if i == grid.size - 1:
        return float(grid[i]), float(losses[i]), "top"
    if i < 2:
        return float(grid[i]), float(losses[i]), None
    x = np.log(grid[i - 1:i + 2])
    a, b, _ = np.polyfit(x, losses[i - 1:i + 2], 2)
    s_par = float(np.exp(-b / (2 * a))) if a > 0 else float(grid[i])
    (bp, npar), = general_terms(problem, [Attention(s_par * base)], contexts, np.random.default_rng(seed))
    l_par = float(np.mean(bp + npar))
    return (s_par, l_par, None) if l_par < losses[i] else (float(grid[i]), float(losses[i]), None)


# ----------------------------------------------------------------------------- directions
def outside_directions(B: np.ndarray, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """Unit-Frobenius perturbations with a component outside ``col(B)`` (``P D P = 0``):
    the outside block ``Q A Q`` (symmetric), the complement identity ``Q``, the symmetric cross blocks
    ``P A Q + Q A^T P`` and the one-sided cross blocks ``P A Q`` and ``Q A P``; ``A`` standard Gaussian."""
    d = B.shape[0]
    P = B @ B.T
    Q = np.eye(d) - P
    A = rng.normal(size=(d, d))
    dirs = [("outside block QAQ", Q @ (A + A.T) @ Q), ("complement identity Q", Q),
            ("cross blocks PAQ + QA'P", P @ A @ Q + Q @ A.T @ P), ("cross block PAQ", P @ A @ Q),
            ("cross block QAP", Q @ A @ P)]
    return [(name, D / np.linalg.norm(D)) for name, D in dirs]


def _inside_direction(B: np.ndarray, rng: np.random.Generator):
    """A unit traceless symmetric perturbation inside ``col(B)`` (``k >= 2``): tests that ``P M* P`` is
    isotropic within the subspace."""
    k = B.shape[1]
    A = rng.normal(size=(k, k))
    S = A + A.T
    S -= np.trace(S) / k * np.eye(k)
    D = B @ S @ B.T
    return "inside col(B), traceless", D / np.linalg.norm(D)


# ----------------------------------------------------------------------------- second order
def second_order(problem, M0: np.ndarray, directions, *, eps_grid=(0.02, 0.04, 0.08), contexts: int = 6000,
                 seed: int = 0) -> list[dict]:
    """Second-order behaviour of the loss at ``M0`` along each unit ``D`` of ``directions``.

    ``eps = e ||M0||_F`` for ``e`` in ``eps_grid`` (increasing, ``e_2 = 2 e_1``); on one draw of prompts
    (common random numbers) the per-context symmetric second difference
    ``S_c(eps) = (l_c(M0 + eps D) + l_c(M0 - eps D))/2 - l_c(M0)`` has no first-order term, so
    ``S(eps) = a eps^2 + b eps^4 + ...`` with curvature ``a = (1/2) d^2 L / d eps^2``.
    Per context ``(a_c, b_c)`` is the least-squares fit over ``eps_grid``; ``a`` and ``b`` are their means
    (standard errors from the per-context spread).  The local exponent between the two smallest ``eps``,
    ``p = log(S(eps_2)/S(eps_1)) / log(eps_2/eps_1)``, gets a delta-method standard error from the paired
    per-context values; the fitted quartic term moves it by ``(b/a)(eps_2^2 - eps_1^2)/ln(eps_2/eps_1)``.
    Also returned: the bias and noise parts of ``a``.
    """
    eps_grid = np.asarray(eps_grid, dtype=float)
    norm = np.linalg.norm(M0)
    eps = eps_grid * norm
    models = [Attention(M0)]
    for _, D in directions:
        for e in eps:
            models += [Attention(M0 + e * D), Attention(M0 - e * D)]
    terms = general_terms(problem, models, contexts, np.random.default_rng(seed))
    b0, n0 = terms[0]
    design = np.stack([eps**2, eps**4], axis=1)
    pinv = np.linalg.pinv(design)  # (2, m)
    out = []
    for j, (name, _) in enumerate(directions):
        S, Sb, Sn = [], [], []
        for i in range(eps.size):
            (bp, np_), (bm, nm) = terms[1 + 2 * (j * eps.size + i)], terms[2 + 2 * (j * eps.size + i)]
            Sb.append(0.5 * (bp + bm) - b0)
            Sn.append(0.5 * (np_ + nm) - n0)
            S.append(Sb[-1] + Sn[-1])
        S, Sb, Sn = np.array(S), np.array(Sb), np.array(Sn)  # (m, contexts)
        coef = pinv @ S  # (2, contexts)
        a_c, b_c = coef
        N = a_c.size
        a, se_a = float(a_c.mean()), float(a_c.std(ddof=1) / math.sqrt(N))
        b = float(b_c.mean())
        m1, m2 = float(S[0].mean()), float(S[1].mean())
        ratio_log = math.log(eps[1] / eps[0])
        if m1 * m2 > 0:  # same sign (a minimum or a saddle along D): the exponent of |S|
            p = math.log(m2 / m1) / ratio_log
            infl = (S[1] / m2 - S[0] / m1) / ratio_log
            se_p = float(infl.std(ddof=1) / math.sqrt(N))
        else:
            p, se_p = float("nan"), float("inf")
        quartic = abs(b / a) * (eps[1] ** 2 - eps[0] ** 2) / ratio_log if a != 0 else float("inf")
        ab = pinv @ Sb
        an = pinv @ Sn
        out.append({"direction": name, "a": a, "se_a": se_a, "b": b, "p": p, "se_p": se_p,
                    "quartic_shift": quartic, "a_bias": float(ab[0].mean()),
                    "se_a_bias": float(ab[0].std(ddof=1) / math.sqrt(N)), "a_noise": float(an[0].mean()),
                    "se_a_noise": float(an[0].std(ddof=1) / math.sqrt(N)), "S": S.mean(axis=1).tolist(),
                    "eps": eps.tolist()})
    return out


def exponent_rule(res: dict, z_crit: float, exponent: float = 2.0, sign: int = +1) -> str:
    """``S(eps) ~ a eps^exponent`` with ``sign * a > 0``.  Holds iff ``sign * a > z_crit se_a`` and
    ``|p - exponent| <= z_crit se_p + 2 quartic_shift`` (twice the fitted next-order effect); fails if
    ``sign * a < -z_crit se_a`` or ``p`` is outside that band; inconclusive otherwise."""
    tol = z_crit * res["se_p"] + 2.0 * res["quartic_shift"]
    a, se = sign * res["a"], res["se_a"]
    if a < -z_crit * se or (math.isfinite(res["p"]) and abs(res["p"] - exponent) > tol):
        return "fails"
    return "holds" if (a > z_crit * se and math.isfinite(res["p"])) else "inconclusive"


def first_size_differences(problem, M0: np.ndarray, outside, inside, size: float, relative_size: float, *,
                           contexts: int, seed: int) -> list[Estimate]:
    """Loss changes at a finite perturbation size, paired on one draw (common random numbers).

    Outside directions ``D`` (``P D P = 0``): the symmetric difference
    ``(L(M0 + size D) + L(M0 - size D))/2 - L(M0)``, whose mean equals the one-sided
    ``L(M0 + size D) - L(M0)`` by the reflection symmetry of the module docstring and whose per-context
    first-order noise cancels.  Other directions (``inside``, then the scale changes
    ``M0 (1 +- relative_size)``): the one-sided ``L(M) - L(M0)``.
    """
    models = [Attention(M0)]
    for _, D in outside:
        models += [Attention(M0 + size * D), Attention(M0 - size * D)]
    models += [Attention(M0 + size * D) for _, D in inside]
    models += [Attention((1 + relative_size) * M0), Attention((1 - relative_size) * M0)]
    terms = [b + nz for b, nz in general_terms(problem, models, contexts, np.random.default_rng(seed))]
    base = terms[0]
    out = [Estimate.from_samples(0.5 * (terms[1 + 2 * j] + terms[2 + 2 * j]) - base) for j in range(len(outside))]
    out += [Estimate.from_samples(t - base) for t in terms[1 + 2 * len(outside):]]
    return out


# ----------------------------------------------------------------------------- the direction of the window
def direction_optimality(task: str, d: int, k: int, *, n: int = 20, L: float = 1.0, sigma: float = 0.3,
                         relative_size: float = 0.3, eps_grid=(0.02, 0.04, 0.08), contexts: int = 30000,
                         seed: int = 0) -> Evidence:
    """Theorem 4.4 at one ``(task, d, k)``: ``c* P`` is a minimiser and every perturbation with a component
    outside ``col(B)`` raises the loss, to second order in its size.

    The task is :func:`matched_problem` with ``L0 = L`` (the same function of ``sqrt(d/k) B^T x`` at every
    ``d``): in the canonical classes the label variance falls like ``L^2/d`` (``L^2/d^2`` for the quadratic
    link), and at ``(d, k) = (8, 2)`` the canonical quadratic task is so weak against ``sigma = 0.3`` that
    uniform averaging (``c* -> 0``) is optimal and nothing about a direction can be learned.

    1. ``c*`` and the best isotropic ``w*`` by :func:`scale_search` (seed ``seed``).
    1. ``c*`` and the best isotropic ``w*`` by :func:`scale_search` (seed ``seed``); a ``c*`` on the edge of
       the search grid makes a passing verdict inconclusive.
    2. Finite size: along the directions of :func:`outside_directions`, the traceless direction inside
       ``col(B)`` (``k >= 2``) and the scale changes ``c* (1 +- relative_size)``, the loss changes of
       :func:`first_size_differences` at size ``relative_size ||c* P||_F`` (an independent draw, seed
       ``seed + 2``) must all be positive: rule of :func:`lipschitz_icl.claims.thm34.minimiser_verdict`
       (Bonferroni over the directions, family-wise level 1e-3).
    3. Second order (seed ``seed + 3``): along the five outside directions, :func:`second_order` and
       :func:`exponent_rule` at exponent 2 (Bonferroni over the directions).  There is no first-order
       term to measure: it vanishes exactly by the reflection symmetry (module docstring).
    Holds iff 2 and 3 hold.  False variants (same rules): ``w* I`` is the minimiser (step 2 at ``w* I``
    toward ``c* P``, 30% of the way; "c I is optimal for low-rank tasks"); the loss is flat to second
    order along the outside directions (exponent 4, i.e. zero curvature).
    """
    start = time.perf_counter()
    problem = matched_problem(task, d, k, n=n, L0=L, sigma=sigma)
    B = problem.task_class.B
    P = B @ B.T
    c, loss_c, edge_c = scale_search(problem, P, contexts=contexts, seed=seed)
    w, loss_w, edge_w = scale_search(problem, np.eye(d), contexts=contexts, seed=seed)
    M0 = c * P
    rng = np.random.default_rng(seed + 1)
    outs = outside_directions(B, rng)
    first = list(outs) + ([_inside_direction(B, rng)] if k >= 2 else [])
    size = relative_size * np.linalg.norm(M0)
    names = [nm for nm, _ in first] + [f"scale x{1 + relative_size:g}", f"scale x{1 - relative_size:g}"]
    diffs = first_size_differences(problem, M0, outs, first[len(outs):], size, relative_size,
                                   contexts=contexts, seed=seed + 2)
    v_first, z_first = minimiser_verdict(diffs)
    so = second_order(problem, M0, outs, eps_grid=eps_grid, contexts=contexts, seed=seed + 3)
    z_so = _z_crit(len(so))
    v_so = combine_verdicts([exponent_rule(r, z_so) for r in so])
    # false variant: w* I is the minimiser (move 30% of the way toward c* P)
    iso = w * np.eye(d)
    fv_iso = loss_differences(problem, Attention(iso), [Attention(iso + 0.3 * (M0 - iso))], contexts=contexts,
                              rng=seed + 4)
    quantities = [Quantity(f"Delta L along {nm}", None, e.value, *e.confidence_interval(1 - FAMILY_LEVEL),
                           verdict="holds" if e.value > z_first * e.standard_error else "fails", note="must be > 0")
                  for nm, e in zip(names, diffs)]
    for r in so:
        tol = z_so * r["se_p"] + 2 * r["quartic_shift"]
        quantities.append(Quantity(f"curvature a along {r['direction']}", None, r["a"], r["a"] - z_so * r["se_a"],
                                   r["a"] + z_so * r["se_a"], exponent_rule(r, z_so),
                                   f"bias part {r['a_bias']:.3g}, noise part {r['a_noise']:.3g}; must be > 0"))
        quantities.append(Quantity(f"exponent of Delta L in eps along {r['direction']}", 2.0, r["p"], r["p"] - tol,
                                   r["p"] + tol, None, f"tolerance {tol:.3g} (z se + 2x fitted quartic shift)"))
    for name, value, loss, edge in (("best scale c* of c B B^T", c, loss_c, edge_c),
                                    ("best isotropic w*", w, loss_w, edge_w)):
        quantities.append(Quantity(name, None, value, None, None, None, f"loss {loss:.5g} on the search draw"
                                   + (f"; search edge: {edge}" if edge else "")))
    verdict = combine_verdicts([v_first, v_so])
    if edge_c:
        verdict = "inconclusive" if verdict == "holds" else verdict
    false_variants = [
        FalseVariant("w* I is the minimiser (c I optimal for low-rank tasks)", minimiser_verdict(fv_iso)[0],
                     f"Delta L from w* I toward c* P: {fv_iso[0].value:.3e} +- {fv_iso[0].standard_error:.1e}"),
        FalseVariant("flat to second order along outside directions (exponent 4)",
                     combine_verdicts([exponent_rule(r, z_so, 4.0) for r in so])),
    ]
    ev = Evidence(
        f"thm44/direction/{task}/d{d}k{k}", REF,
        f"For {task} tasks of rank k={k} in d={d} (n={n}, L0={L:g} signal-matched, sigma={sigma:g}) the optimum is "
        "c* B B^T: every "
        "perturbation with a component outside col(B) raises the ICL loss, quadratically in its size.",
        f"task-averaged Monte Carlo on common random numbers ({contexts} contexts per draw); c* by grid + parabola "
        f"search; first-order size {relative_size:g} ||c* P||_F: all Delta L > 0 at z > {z_first:.2f} (Bonferroni, "
        f"level {FAMILY_LEVEL:g}); second order at eps/||c* P||_F in {list(eps_grid)}: curvature a > 0 at "
        f"z > {z_so:.2f} and local exponent within 2 +- (z se + 2x fitted quartic shift).",
        quantities, verdict, time.perf_counter() - start, false_variants)
    ev.figure = {"kind": "loglog", "x": so[0]["eps"], "y": so[0]["S"],
                 "series": [{"label": r["direction"], "x": r["eps"], "y": [max(s, 1e-300) for s in r["S"]],
                             "theory_y": [max(r["S"][0], 1e-300) * (e / r["eps"][0]) ** 2 for e in r["eps"]]}
                            for r in so],
                 "xlabel": "eps (Frobenius size of the perturbation)",
                 "ylabel": "symmetric second difference of the loss",
                 "title": "dashed: the eps^2 law through the smallest eps"}
    ev.extra = {"c_star": c, "w_star": w, "second_order": [{k_: v for k_, v in r.items() if k_ not in ("S",)}
                                                           for r in so]}
    return ev


def _curvature_signs(so: list[dict], z_crit: float) -> str:
    """``minimum`` if every curvature is ``> z_crit se``, ``saddle`` if any is ``< -z_crit se``, else
    ``unresolved``."""
    if any(r["a"] < -z_crit * r["se_a"] for r in so):
        return "saddle"
    return "minimum" if all(r["a"] > z_crit * r["se_a"] for r in so) else "unresolved"


def nonlinear_scope(task: str, settings=((3, 1), (5, 2), (8, 2)), *, n: int = 20, L: float = 1.0,
                    sigma: float = 0.3, eps_grid=(0.02, 0.04, 0.08), contexts: int = 12000,
                    seed: int = 0) -> Evidence:
    """The scope of Theorem 4.4's conclusion for the nonlinear links (quadratic, cosine) on the sphere.

    The reflection symmetry makes ``c* P`` a stationary point along every outside direction for *every*
    link, but whether it is a minimum is a second-order question, and on the sphere the complement is
    not uninformative: ``||B^T x||^2 = 1 - ||Q x||^2``.  A linear link is odd in ``B^T x`` and cannot use
    that; an even part (quadratic; the cosine at a larger frequency) can, and then weight on the
    complement can lower the bias part of the loss (its curvature is negative) while the noise part's
    curvature stays positive.  For ``k = 1`` the quadratic task ``l (b . x)^2 + b0 = l (1 - ||Q x||^2) + b0``
    is even a function of the complement alone.

    Claim (a statement of what the measurements show, written after the first measurements, to record
    that the conclusion does not extend uniformly): at every setting of ``settings``
    (:func:`matched_problem`, ``c*`` by :func:`scale_search`), the loss change along each outside
    direction is of order ``eps^2`` (:func:`exponent_rule` with the sign the curvature has), the
    setting is resolved as a minimum or a saddle (:func:`_curvature_signs`, Bonferroni over all
    directions and settings), and both kinds occur.  Holds iff all three.  False variants (the same
    classification): "``c* P`` is a minimum at every setting" (Theorem 4.4's conclusion extends to this
    link) and "a saddle at every setting".
    """
    start = time.perf_counter()
    results = []
    for j, (d, k) in enumerate(settings):
        problem = matched_problem(task, d, k, n=n, L0=L, sigma=sigma)
        B = problem.task_class.B
        P = B @ B.T
        c, _, edge = scale_search(problem, P, contexts=contexts, seed=seed)
        outs = outside_directions(B, np.random.default_rng(seed + 1))
        so = second_order(problem, c * P, outs, eps_grid=eps_grid, contexts=contexts, seed=seed + 3 + j)
        results.append((d, k, c, edge, so))
    z = _z_crit(sum(len(r[4]) for r in results))
    kinds, orders, quantities = [], [], []
    for d, k, c, edge, so in results:
        kind = _curvature_signs(so, z) if not edge else "unresolved"
        kinds.append(kind)
        orders.append(combine_verdicts([exponent_rule(r, z, 2.0, sign=1 if r["a"] > 0 else -1) for r in so]))
        for r in so:
            quantities.append(Quantity(f"d={d}, k={k}: curvature along {r['direction']}", None, r["a"],
                                       r["a"] - z * r["se_a"], r["a"] + z * r["se_a"], None,
                                       f"bias part {r['a_bias']:.3g}, noise part {r['a_noise']:.3g}; "
                                       f"exponent {r['p']:.4f}"))
        quantities.append(Quantity(f"d={d}, k={k}: best scale c*", None, c, None, None, None,
                                   kind + (f"; search edge: {edge}" if edge else "")))
    resolved = all(kd != "unresolved" for kd in kinds)
    second = combine_verdicts(orders)
    both = "minimum" in kinds and "saddle" in kinds
    if not resolved or second == "inconclusive":
        verdict = "inconclusive"
    else:
        verdict = "holds" if (second == "holds" and both) else "fails"

    def uniform(kind):
        if not resolved:
            return "inconclusive"
        return "holds" if all(kd == kind for kd in kinds) else "fails"

    summary = ", ".join(f"(d={d}, k={k}): {kd}" for (d, k, *_), kd in zip(results, kinds))
    ev = Evidence(
        f"thm44/scope/{task}", REF,
        f"For the {task} link on the sphere (signal-matched, n={n}, sigma={sigma:g}) c* B B^T is stationary along "
        "every direction outside col(B), but not always a minimum: the outside curvature is positive at some "
        f"(d, k) and negative (a saddle) at others. Measured: {summary}.",
        f"second differences on common random numbers ({contexts} contexts) at eps/||c* P||_F in {list(eps_grid)}; "
        f"each curvature resolved at z = {z:.2f} (Bonferroni, level {FAMILY_LEVEL:g}); exponent 2 within z se + 2x the "
        "fitted quartic shift; holds iff every setting is resolved and both minima and saddles occur.",
        quantities, verdict, time.perf_counter() - start,
        [FalseVariant("c* B B^T is a minimum at every setting (Theorem 4.4 extends to this link)", uniform("minimum"),
                      summary),
         FalseVariant("c* B B^T is a saddle at every setting", uniform("saddle"), summary)])
    ev.extra = {"kinds": dict(zip([f"d{d}k{k}" for d, k, *_ in results], kinds))}
    return ev


# ----------------------------------------------------------------------------- what training finds
def trained_direction(task: str = "lowrank-linear", d: int = 4, k: int = 2, *, n: int = 20, L: float = 1.0,
                      sigma: float = 0.3, runs: int = 3, entropy: int = 303) -> Evidence:
    """Pretraining the M-form from random starts ends with ``rho(M, B) < SHAPE_THRESHOLD`` (0.05).

    ``runs`` independent runs of the library protocol (:data:`~lipschitz_icl.pretraining.M_PROTOCOL`).
    Rule: holds iff every run's ``rho`` is below the threshold and the run-to-run noise floor (root-mean-
    square outside-``col(B)`` part of ``M_k - mean M``, relative to ``||mean M||_F``) is below a third of
    it; inconclusive if the floor is not; fails otherwise.  Also reported: the trained scale
    ``tr(P M P)/k`` beside the searched ``c*``.  False variants: the random starts already satisfy the
    threshold; the trained ``M`` is isotropic (anisotropy below the threshold).
    """
    start = time.perf_counter()
    problem = make_problem(task, d, n, L, sigma, rank=k)
    B = problem.task_class.B
    P = B @ B.T
    results = independent_runs(problem, entropy, runs, **M_PROTOCOL)
    Ms = [r.M for _, r in results]
    rhos = [geometry.rho(M, B) for M in Ms]
    starts = [geometry.rho(M0, B) for M0, _ in results]
    mean = np.mean(Ms, axis=0)
    dev = np.array([M - mean for M in Ms])
    outside = dev - np.einsum("ij,kjl,lm->kim", P, dev, P)
    floor = float(np.sqrt(np.mean(np.sum(outside**2, axis=(1, 2)))) / np.linalg.norm(mean))
    scales = [float(np.trace(P @ M @ P) / k) for M in Ms]
    c, _, _ = scale_search(problem, P, contexts=6000, seed=entropy)
    aniso = [geometry.anisotropy(M) for M in Ms]
    ok = max(rhos) < SHAPE_THRESHOLD
    verdict = ("holds" if ok and floor < SHAPE_THRESHOLD / 3 else
               "inconclusive" if floor >= SHAPE_THRESHOLD / 3 else "fails")
    quantities = [
        Quantity("max rho(M, B) of trained M", 0.0, max(rhos), 0.0, SHAPE_THRESHOLD, "holds" if ok else "fails",
                 f"runs: {', '.join(f'{x:.4f}' for x in rhos)}; random starts {min(starts):.2f}-{max(starts):.2f}; "
                 f"noise floor {floor:.4f}"),
        Quantity("trained scale tr(PMP)/k vs searched c*", c, float(np.mean(scales)), min(scales), max(scales), None,
                 "Monte Carlo c* from scale_search (6000 contexts)"),
    ]
    false_variants = [
        FalseVariant("random start already in col(B)", "holds" if min(starts) < SHAPE_THRESHOLD else "fails",
                     f"min start rho {min(starts):.3f}"),
        FalseVariant("trained M is isotropic (c I)", "holds" if max(aniso) < SHAPE_THRESHOLD else "fails",
                     f"min anisotropy {min(aniso):.3f}"),
    ]
    ev = Evidence(
        f"thm44/trained/{task}/d{d}k{k}", REF,
        f"Pretraining the M-form on {task} tasks (d={d}, k={k}, n={n}) from random starts ends at M with "
        f"rho(M, B) < {SHAPE_THRESHOLD}: the window lives on col(B).",
        f"{runs} independent SGD runs (protocol {M_PROTOCOL}); every rho < {SHAPE_THRESHOLD} with run-to-run noise "
        "floor < threshold/3.",
        quantities, verdict, time.perf_counter() - start, false_variants)
    ev.extra = {"rho": rhos, "rho_start": starts, "scale": scales, "c_star": c}
    return ev


# ----------------------------------------------------------------------------- dependence on d
def matched_problem(task: str, d: int, k: int, *, n: int, L0: float, sigma: float, frequency: float = 1.0):
    """The rank-``k`` problem in ``d`` dimensions with the signal matched across ``d``.

    With ``z = sqrt(d/k) B^T x`` (``E ||z||^2 = 1`` for every ``d``) the task is the same function of ``z``
    at every ``d``: ``L = L0 sqrt(d/k)`` (linear, affine, cosine; the cosine frequency also
    ``x sqrt(d/k)``) and ``L = L0 d/k`` (quadratic).  Without this the label variance of the canonical class
    falls like ``1/d`` and every error falls with ``d`` for a trivial reason.
    """
    link = task.split("-", 1)[1]
    r = d / k
    scale = r if link == "quadratic" else math.sqrt(r)
    kw = {"frequency": frequency * math.sqrt(r)} if link == "cosine" else {}
    return make_problem(task, d, n, L0 * scale, sigma, rank=k, **kw)


def limit_terms(task: str, k: int, scales, *, n: int, L0: float, sigma: float, frequency: float = 1.0,
                contexts: int = 6000, seed: int = 0):
    """Per-context ``(bias_c, noise_c)`` of ``M = s B B^T`` in the ``d -> infinity`` limit of
    :func:`matched_problem`: ``z = sqrt(d/k) B^T x`` tends to ``N(0, I_k/k)``, so contexts and query are
    Gaussian in ``R^k`` and the kernel is ``exp(s' z_i . z_q)`` (``s' = s k/d`` is the scale that survives
    the limit: ``scales`` here are values of ``s'``).  Task features from the ``k``-dimensional class
    (``B = I_k``), so the task is the same function of ``z`` as in :func:`matched_problem`."""
    rng = np.random.default_rng(seed)
    kw = {"frequency": frequency} if task.endswith("cosine") else {}
    d_class = max(k, 2)  # a class needs d >= 2: for k = 1, z sits in R^2 with a zero second coordinate
    pad = d_class - k
    tc = make_task_class(task, d_class, L0, rank=k, **kw)
    out = [([], []) for _ in scales]
    per = max(1, (1 << 20) // (n * d_class))
    for s0 in range(0, contexts, per):
        size = min(per, contexts - s0)
        z = rng.standard_normal((size, n, k)) / math.sqrt(k)
        zq = rng.standard_normal((size, k)) / math.sqrt(k)
        if pad:
            z = np.concatenate([z, np.zeros((size, n, 1))], axis=-1)
            zq = np.concatenate([zq, np.zeros((size, 1))], axis=-1)
        features = tc.features(rng, z, zq)
        dots = np.einsum("cnk,ck->cn", z, zq)
        for (bias_parts, noise_parts), s in zip(out, scales):
            p = softmax_weights_from_logits(s * dots)
            bias_parts.append(features.bias(p))
            noise_parts.append(sigma**2 * np.sum(p * p, axis=-1))
    return [(np.concatenate(b), np.concatenate(nz)) for b, nz in out]


def _est(x):
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _log_ratio(num, den):
    """``log(mean(num)/mean(den))`` for independent samples and its delta-method standard error."""
    mn, sn = _est(num)
    md, sd = _est(den)
    return math.log(mn / md), math.hypot(sn / mn, sd / md)


def dimension_dependence(task: str, k: int = 2, d_grid=(4, 8, 16), *, n: int = 20, L0: float = 1.0,
                         sigma: float = 0.3, contexts: int = 12000, seed: int = 0) -> Evidence:
    """The ICL error follows ``k``, not ``d``: on :func:`matched_problem` (the same task as a function of
    ``z = sqrt(d/k) B^T x`` at every ``d``) the optimal low-rank error stays below a ``d``-free level
    while the best isotropic error grows with ``d``.

    For each ``d`` in ``d_grid``: ``c*`` (``M = c P``) and ``w*`` (``M = w I``) by :func:`scale_search`
    (seed ``seed``), then loss, bias and noise parts of both on an independent draw (seed ``seed + 1 + j``,
    paired between the two models).  The ``d -> infinity`` limit ``L_P(inf)`` of the low-rank problem (a
    ``k``-dimensional Gaussian problem, :func:`limit_terms`; best scale by the same grid) on its own draws.
    Rule (``z`` the Bonferroni critical value at level 1e-3 over the tests below):

    (A) the isotropic error grows with ``d``: every consecutive difference ``L_I(d_{j+1}) - L_I(d_j) > z se``;
    (B) the low-rank error is bounded by its ``d``-free limit: ``L_P(d) <= L_P(inf) + z se`` for every ``d``.
        (Not required: that ``L_I(d_max)`` exceeds ``L_P(inf)``.  The isotropic error is capped by that of
        uniform averaging, which it approaches as ``w* -> 0``, and for the quadratic link that cap lies
        below the Gaussian limit ``L_P(inf)``; an earlier draft of this rule had the requirement and it
        failed there for this reason, not for one about ``k`` and ``d``.)
    (C) it grows less than the isotropic one: ``log(L_I(d_max)/L_I(d_min)) - log(L_P(d_max)/L_P(d_min)) > z se``;
    (D) the parts against their trends: the isotropic bias part grows faster in ``d`` than the low-rank bias
        part (log growth difference ``> z se``); the isotropic noise part does not grow
        (``log(noise_I(d_max)/noise_I(d_min)) < z se``: its degradation is all bias, the nuisance
        coordinates flatten the weights); the low-rank bias part stays below its limit,
        ``bias_P(d) <= bias_P(inf) + z se`` for every ``d``.
    False variants (same tests): the low-rank error grows like the isotropic one (the difference of (C)
    ``<= 0``); ``c I`` is optimal (``L_I(d) <= L_P(d)`` at ``d_max``, paired).
    """
    start = time.perf_counter()
    rows = []
    for j, d in enumerate(d_grid):
        problem = matched_problem(task, d, k, n=n, L0=L0, sigma=sigma)
        P = problem.task_class.B @ problem.task_class.B.T
        c, _, edge_c = scale_search(problem, P, contexts=contexts, seed=seed)
        w, _, edge_w = scale_search(problem, np.eye(d), contexts=contexts, seed=seed)
        (bP, nP), (bI, nI) = general_terms(problem, [Attention(c * P), Attention(w * np.eye(d))], contexts,
                                           np.random.default_rng(seed + 1 + j))
        # c* = 0 or an unbracketed scale leaves the claim undecided; w* = 0 (uniform averaging) is a genuine
        # optimum of the isotropic window (for an even link L(w) = L(-w), so w = 0 is stationary)
        rows.append({"d": d, "c": c, "w": w, "edge": bool(edge_c) or edge_w == "top", "bP": bP, "nP": nP,
                     "bI": bI, "nI": nI})
    # the d -> infinity limit of the low-rank problem: grid search on one draw, evaluation on another
    lim_search = limit_terms(task, k, SCALE_GRID, n=n, L0=L0, sigma=sigma, contexts=contexts, seed=seed)
    losses = np.array([np.mean(b + nz) for b, nz in lim_search])
    i = int(np.argmin(losses))
    s_lim = float(SCALE_GRID[i])
    (bL, nL), = limit_terms(task, k, [s_lim], n=n, L0=L0, sigma=sigma, contexts=contexts, seed=seed + 100)
    edge_lim = i in (0, SCALE_GRID.size - 1)
    lossL = bL + nL
    first, last = rows[0], rows[-1]
    n_tests = (len(rows) - 1) + len(rows) + 1 + 1 + 1 + len(rows) + 1  # A, B, C, D (three parts), false variant
    z = _z_crit(n_tests)
    checks = {}
    # (A)
    a_ok = []
    for r0, r1 in zip(rows, rows[1:]):
        m0, s0 = _est(r0["bI"] + r0["nI"])
        m1, s1 = _est(r1["bI"] + r1["nI"])
        a_ok.append((m1 - m0) > z * math.hypot(s0, s1))
    checks["A"] = all(a_ok)
    # (B)
    mL, sL = _est(lossL)
    b_ok = []
    for r in rows:
        m, s = _est(r["bP"] + r["nP"])
        b_ok.append(m <= mL + z * math.hypot(s, sL))
    checks["B"] = all(b_ok)
    # (C)
    gP, sgP = _log_ratio(last["bP"] + last["nP"], first["bP"] + first["nP"])
    gI, sgI = _log_ratio(last["bI"] + last["nI"], first["bI"] + first["nI"])
    diff_C, se_C = gI - gP, math.hypot(sgP, sgI)  # conservative: ignores the positive pairing covariance
    checks["C"] = diff_C > z * se_C
    # (D)
    gbP, sgbP = _log_ratio(last["bP"], first["bP"])
    gbI, sgbI = _log_ratio(last["bI"], first["bI"])
    gnI, sgnI = _log_ratio(last["nI"], first["nI"])
    mbL, sbL = _est(bL)
    bias_lim_ok = [(_est(r["bP"])[0] <= mbL + z * math.hypot(_est(r["bP"])[1], sbL)) for r in rows]
    checks["D"] = (gbI - gbP) > z * math.hypot(sgbP, sgbI) and gnI < z * sgnI and all(bias_lim_ok)
    verdict = "holds" if all(checks.values()) else "fails"
    if any(r["edge"] for r in rows) or edge_lim:
        verdict = "inconclusive" if verdict == "holds" else verdict
    # false variants
    fv_growth = "holds" if not (diff_C > z * se_C) else "fails"
    paired = (last["bI"] + last["nI"]) - (last["bP"] + last["nP"])
    mp, sp = _est(paired)
    fv_iso = "fails" if mp > z * sp else ("holds" if mp < -z * sp else "inconclusive")
    quantities = []
    for r in rows:
        mPd, sPd = _est(r["bP"] + r["nP"])
        mId, sId = _est(r["bI"] + r["nI"])
        quantities.append(Quantity(f"L_P(d={r['d']}) optimal c B B^T", mL, mPd, mPd - z * sPd, mPd + z * sPd, None,
                                   f"theory column: the d-free limit L_P(inf); bias {_est(r['bP'])[0]:.4g}, "
                                   f"noise {_est(r['nP'])[0]:.4g}, c* = {r['c']:.4g}"))
        quantities.append(Quantity(f"L_I(d={r['d']}) optimal w I", None, mId, mId - z * sId, mId + z * sId, None,
                                   f"bias {_est(r['bI'])[0]:.4g}, noise {_est(r['nI'])[0]:.4g}, w* = {r['w']:.4g}"))
    quantities += [
        Quantity("L_P(inf), k-dimensional limit", None, mL, mL - z * sL, mL + z * sL, None,
                 f"bias {mbL:.4g}, noise {_est(nL)[0]:.4g}, scale {s_lim:.4g}"),
        Quantity("log growth of L_I minus that of L_P (d_min -> d_max)", None, diff_C, diff_C - z * se_C,
                 diff_C + z * se_C, "holds" if checks["C"] else "fails",
                 f"L_P: {gP:.3f} +- {sgP:.3f}, L_I: {gI:.3f} +- {sgI:.3f}; must be > 0"),
        Quantity("log growth of bias_I minus that of bias_P", None, gbI - gbP, None, None,
                 "holds" if (gbI - gbP) > z * math.hypot(sgbP, sgbI) else "fails", "must be > 0"),
        Quantity("log growth of noise_I (d_min -> d_max)", None, gnI, gnI - z * sgnI, gnI + z * sgnI,
                 "holds" if gnI < z * sgnI else "fails", "must not be > 0"),
    ]
    ev = Evidence(
        f"thm44/dimension/{task}/k{k}", REF,
        f"For {task} tasks of rank k={k} (signal matched across d) the optimal error of c B B^T is bounded by its "
        "d-free k-dimensional limit, while the best isotropic error grows with d: the error follows k, not d.",
        f"d in {list(d_grid)}, n={n}, L0={L0:g}, sigma={sigma:g}, {contexts} contexts per draw; tests (A) L_I "
        "increasing, (B) L_P(d) <= L_P(inf), (C) log-growth of L_I exceeds L_P's, (D) bias_I "
        f"grows faster than bias_P, noise_I does not grow, bias_P(d) <= bias_P(inf); each at z = {z:.2f} "
        f"(Bonferroni over {n_tests} tests, level {FAMILY_LEVEL:g}).",
        quantities, verdict, time.perf_counter() - start,
        [FalseVariant("the low-rank error grows with d like the isotropic one", fv_growth,
                      f"log-growth difference {diff_C:.3f} +- {se_C:.3f}"),
         FalseVariant("c I is optimal for low-rank tasks", fv_iso,
                      f"L_I - L_P at d={last['d']}: {mp:.4g} +- {sp:.2g}")])
    ev.figure = {"kind": "semilogx", "x": [float(r["d"]) for r in rows],
                 "y": [_est(r["bP"] + r["nP"])[0] for r in rows],
                 "series": [{"label": "c* B B^T", "x": [float(r["d"]) for r in rows],
                             "y": [_est(r["bP"] + r["nP"])[0] for r in rows], "theory_y": [mL] * len(rows)},
                            {"label": "w* I", "x": [float(r["d"]) for r in rows],
                             "y": [_est(r["bI"] + r["nI"])[0] for r in rows]}],
                 "xlabel": "d", "ylabel": "optimal ICL error"}
    ev.extra = {"checks": checks, "d": list(d_grid), "limit_scale": s_lim}
    return ev
