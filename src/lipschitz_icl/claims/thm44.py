"""Theorem 4.4: for low-rank tasks the attention window learns the direction ``col(B)``; for even links on
the sphere ``c* B B^T`` can be a saddle.  Registry: ``claims/thm44.toml`` (``direction``, ``trained``,
``dimension``, ``saddle``: statements, rules, every design number, resolutions, alternatives).

Setting, the signal-matched problems and the reflection-antithetic moves: :mod:`lipschitz_icl.lowrank`
(``P = B B^T``, ``Q = I - P``).  The theorem: the optimal ``M`` is ``c* P``; whether ``c P`` is a minimum
along the outside directions is what the claims measure, and for the quadratic and cosine links the
exact-in-``n`` derivation of :mod:`lipschitz_icl.derivations.saddle` says which.

Measured numbers come from the task-averaged estimator on one draw per decision
(:class:`~lipschitz_icl.fixed_draw.FixedDraw`, :func:`lipschitz_icl.loss.general_terms`) and from the
NumPy trainer (:func:`lipschitz_icl.pretraining.independent_runs`); every random stream is spawned once
from the case's ``SeedSequence``.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from .. import decision, geometry
from ..attention import Attention
from ..decision import any_of
from ..derivations import saddle as theory
from ..estimate import Estimate, difference, log_ratio_of_means
from ..evidence import Outcome, Quantity
from ..fixed_draw import FixedDraw, scale_search
from ..loss import general_terms
from ..lowrank import (
    inside_changes,
    inside_direction,
    limit_terms,
    matched_problem,
    outside_changes,
    outside_directions,
    projectors,
    rotated_basis,
    scale_changes,
)
from ..optimum import wstar
from ..pretraining import independent_runs, noise_floor
from ..problem import make_problem

__all__ = ["direction_optimality", "trained_direction", "dimension_dependence", "saddle", "matched_problem"]


def _scales(exponents, points: int) -> np.ndarray:
    """The scale grid ``logspace(exponents[0], exponents[1], points)`` of a scale search."""
    return np.logspace(exponents[0], exponents[1], points)


def _signs(changes: list[tuple[str, Estimate]], level: float) -> list[decision.Decision]:
    """``sign`` (+1: every move raises the loss) on each change's interval at ``level``."""
    return [decision.sign(*e.confidence_interval(level), +1) for _, e in changes]


def _move_rows(changes, decisions, level: float) -> tuple:
    return tuple(
        Quantity(
            name=f"Delta L along {name}",
            measured=e.value,
            ci_low=lo,
            ci_high=hi,
            verdict=dec.verdict,
            note="must be > 0 on the whole interval",
        )
        for (name, e), dec, (lo, hi) in zip(changes, decisions, (e.confidence_interval(level) for _, e in changes))
    )


# ----------------------------------------------------------------------------- Theorem 4.4: the minimiser
def _full_rank_scale(task: str, problem) -> float:
    """The exact isotropic ``w*`` of the full-rank affine class with the same slope second moment
    (``lowrank-affine``: the same ``L``; ``lowrank-linear``, slope ``L`` exactly: ``sqrt(3) L``)."""
    L = problem.task_class.L * (math.sqrt(3) if task == "lowrank-linear" else 1.0)
    full = make_problem("affine", problem.d, problem.n, L, problem.sigma)
    return wstar(full, "exact").w_star.value


def _moved_base(
    test: FixedDraw,
    c: float,
    P,
    Q,
    directions,
    *,
    step: float,
    scale_step: float,
    level: float,
    shift: float,
    outside: float,
    complement: float,
) -> decision.Decision:
    """The rule of :func:`direction_optimality` at a moved base: ``(1 + shift) c P``; ``c P + outside ||c P|| D``
    for some one of the outside ``D`` (:func:`~lipschitz_icl.decision.any_of`); or ``c (P + complement Q)``."""
    if shift:
        return decision.combined("sign", _signs(scale_changes(test, (1 + shift) * c, P, scale_step), level))
    if outside:
        return any_of("sign", _signs(outside_changes(test, c * P, directions, outside, step), level))
    t = float(complement * np.linalg.norm(Q) / np.linalg.norm(P))
    unit_Q = [("complement identity Q", Q / np.linalg.norm(Q))]
    return decision.combined("sign", _signs(outside_changes(test, c * P, unit_Q, t, step), level))


def direction_optimality(
    *,
    task: str,
    d: int,
    k: int,
    seed: np.random.SeedSequence,
    n: int,
    L: float,
    sigma: float,
    scale_step: float,
    step: float,
    contexts: int,
    search_contexts: int,
    scale_exponents: list,
    scale_points: int,
    refine: list,
    family_level: float,
) -> Outcome:
    """Theorem 4.4 at one ``(task, d, k)``: ``M0 = c* P`` is a minimiser.

    Streams spawned from ``seed``: the search draw, the random directions, the test draw.  ``c*`` by
    :func:`~lipschitz_icl.fixed_draw.scale_search` on the search draw (:func:`lipschitz_icl.lowrank.matched_problem`,
    ``L0 = L``); a ``c*`` on an edge of the grid leaves the claim inconclusive.  ``sign`` rule on the test
    draw: every move raises the loss -- the scale ``c (1 +- scale_step)``, the traceless direction inside
    ``col(B)`` both ways (``k >= 2``), the five outside directions (:mod:`lipschitz_icl.lowrank`) -- each
    interval at level ``1 - family_level / moves`` (Bonferroni).  ``decide(shift, outside, complement,
    scale)``: the same rule at a moved base (:func:`_moved_base`), or at ``w P`` with ``w`` the full-rank
    class's exact ``w*`` (``scale="full-rank"``, :func:`_full_rank_scale`).
    """
    search_seed, direction_seed, test_seed = seed.spawn(3)
    problem = matched_problem(task, d, k, n=n, L0=L, sigma=sigma)
    B, P, Q = projectors(problem)
    c, loss_c, edge = scale_search(
        FixedDraw(problem, search_contexts, search_seed, basis=[P]),
        P,
        grid=_scales(scale_exponents, scale_points),
        refine=refine,
    )
    rng = np.random.default_rng(direction_seed)
    directions = outside_directions(B, rng)
    inside = [inside_direction(B, rng)] if k >= 2 else []
    test = FixedDraw(problem, contexts, test_seed, basis=[P] + [D for _, D in inside + directions])
    moves = (
        scale_changes(test, c, P, scale_step)
        + inside_changes(test, c * P, inside, step)
        + outside_changes(test, c * P, directions, 0.0, step)
    )
    level = 1 - family_level / len(moves)
    decisions = _signs(moves, level)

    def decide(shift: float = 0.0, outside: float = 0.0, complement: float = 0.0, scale: str = "") -> decision.Decision:
        if scale:
            shift = _full_rank_scale(task, problem) / c - 1
        if shift or outside or complement:
            return _moved_base(
                test,
                c,
                P,
                Q,
                directions,
                step=step,
                scale_step=scale_step,
                level=level,
                shift=shift,
                outside=outside,
                complement=complement,
            )
        return decision.unless(decision.combined("sign", decisions), f"c* on the search edge ({edge})" if edge else "")

    return Outcome(
        decide=decide,
        quantities=_move_rows(moves, decisions, level)
        + (
            Quantity(
                name="best scale c* of c B B^T",
                measured=c,
                symbol="c^*",
                setting={"task": task, "d": d, "k": k},
                note=f"loss {loss_c:.5g} on the search draw" + (f"; search edge: {edge}" if edge else ""),
            ),
        ),
        margin=f"0 (each change's interval wholly > 0); moves of size {scale_step:g} on c, {step:g} ||c* P||_F "
        "elsewhere",
        rule=f"sign rule on each loss change (interval at level {level:.6g}, Bonferroni over {len(moves)} moves), "
        f"task-averaged Monte Carlo on one test draw ({contexts} contexts; c* searched on {search_contexts}); "
        "outside moves by antithetic reflection pairs.",
        extra={"c_star": c},
    )


# ----------------------------------------------------------------------------- what training finds
def _range_decision(values, threshold: float) -> decision.Decision:
    """``one-sided``: ``[min, max]`` of ``values`` over the runs at or below ``threshold``."""
    return decision.one_sided(min(values), max(values), threshold, "<=")


def trained_direction(
    *,
    task: str,
    d: int,
    k: int,
    seed: np.random.SeedSequence,
    n: int,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    shape_threshold: float,
    floor_divisor: float,
    search_contexts: int,
    scale_exponents: list,
    scale_points: int,
    refine: list,
) -> Outcome:
    """Pretraining the M-form from random starts ends on ``col(B)``.

    Streams spawned from ``seed``: the runs (:func:`~lipschitz_icl.pretraining.independent_runs` with
    ``protocol``), the tilt direction, the scale-search draw.  ``one-sided`` rule: the range of
    ``rho(M_k, B)`` over the ``runs`` runs at or below ``shape_threshold``; inconclusive where the
    run-to-run noise floor of ``rho`` (:func:`~lipschitz_icl.pretraining.noise_floor`) is not below
    ``shape_threshold / floor_divisor``.  ``decide(tilt, target)``: "training ends on ``col(B)`` tilted by
    ``tilt`` radians toward a random outside direction" (:func:`~lipschitz_icl.lowrank.rotated_basis`), or (``target =
    "isotropic"``) "training ends at an isotropic ``w I``" (the range of the anisotropy against the same
    threshold).  Reported: the trained scale ``tr(P M P)/k`` beside ``c*`` searched on its own draw.
    """
    run_seed, tilt_seed, search_seed = seed.spawn(3)
    problem = make_problem(task, d, n, L, sigma, rank=k)
    B, P, _ = projectors(problem)
    results = independent_runs(problem, run_seed, runs, **protocol)
    Ms = [r.M for _, r in results]
    rhos = [geometry.rho(M, B) for M in Ms]
    floor = noise_floor(Ms, B)
    v = np.random.default_rng(tilt_seed).normal(size=d)
    u = (v - P @ v) / np.linalg.norm(v - P @ v)

    def decide(tilt: float = 0.0, target: str = "col(B)") -> decision.Decision:
        if target == "isotropic":
            return _range_decision([geometry.anisotropy(M) for M in Ms], shape_threshold)
        if tilt:
            return _range_decision([geometry.rho(M, rotated_basis(B, tilt, u)) for M in Ms], shape_threshold)
        noisy = floor >= shape_threshold / floor_divisor
        return decision.unless(_range_decision(rhos, shape_threshold), f"noise floor {floor:.4f}" if noisy else "")

    scales = [float(np.trace(P @ M @ P) / k) for M in Ms]
    c, _, _ = scale_search(
        FixedDraw(problem, search_contexts, search_seed, basis=[P]),
        P,
        grid=_scales(scale_exponents, scale_points),
        refine=refine,
    )
    starts = [geometry.rho(M0, B) for M0, _ in results]
    quantities = (
        Quantity(
            name="rho(M, B) of the trained M (range over runs)",
            theory=0.0,
            measured=max(rhos),
            ci_low=min(rhos),
            ci_high=max(rhos),
            verdict=decide().verdict,
            note=f"bound {shape_threshold}; runs: {', '.join(f'{x:.4f}' for x in rhos)}; random starts "
            f"{min(starts):.2f}-{max(starts):.2f}; noise floor {floor:.4f} (must be < "
            f"{shape_threshold / floor_divisor:.3g})",
        ),
        Quantity(
            name="trained scale tr(PMP)/k vs searched c*",
            theory=c,
            measured=float(np.mean(scales)),
            ci_low=min(scales),
            ci_high=max(scales),
            note=f"reported only: c* searched on {search_contexts} contexts",
        ),
    )
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin=f"rho <= {shape_threshold} for every run",
        rule=f"one-sided rule on the range of rho over {runs} independent SGD runs ({protocol}) against "
        f"{shape_threshold}; the run-to-run noise floor must be < threshold/{floor_divisor:g}.",
        extra={"rho": rhos, "rho_start": starts, "noise_floor": floor, "scale": scales, "c_star": c},
    )


# ----------------------------------------------------------------------------- dependence on d
def _dimension_rows(task, k, d_grid, n, L0, sigma, contexts, grid, refine, search_seed, eval_seeds) -> list[dict]:
    """Per ``d``: ``c*``, ``w*`` (search draw) and the per-context parts of both (paired evaluation draw)."""
    rows = []
    for d, eval_seed in zip(d_grid, eval_seeds):
        problem = matched_problem(task, d, k, n=n, L0=L0, sigma=sigma)
        _, P, _ = projectors(problem)
        search = FixedDraw(problem, contexts, search_seed, basis=[P, np.eye(d)])
        c, _, edge_c = scale_search(search, P, grid=grid, refine=refine)
        w, _, edge_w = scale_search(search, np.eye(d), grid=grid, refine=refine)
        (bP, nP), (bI, nI) = general_terms(
            problem, [Attention(c * P), Attention(w * np.eye(d))], contexts, np.random.default_rng(eval_seed)
        )
        # c* = 0 or an unbracketed scale leaves the claim undecided; w* = 0 (uniform averaging) is a genuine
        # optimum of the isotropic window (for an even link L(w) = L(-w), so w = 0 is stationary)
        rows.append(
            {
                "d": d,
                "c": c,
                "w": w,
                "edge": bool(edge_c) or edge_w == "top",
                "P": bP + nP,
                "bP": bP,
                "I": bI + nI,
                "bI": bI,
                "nI": nI,
            }
        )
    return rows


def _dimension_tests(rows, limit, margin: float, gamma: float = 0.0) -> dict[str, tuple[Estimate, float, str]]:
    """The comparisons of :func:`dimension_dependence` as ``name -> (Estimate, bound, relation)``; ``gamma``
    shifts the bound of (B) and (D3) to ``(1 + margin) (d/d_min)^-gamma - 1``."""
    (bL, nL), d0 = limit, rows[0]["d"]
    bound = lambda d: (1 + margin) * (d / d0) ** (-gamma) - 1  # noqa: E731

    def ratio(a, b) -> Estimate:
        log_ratio = log_ratio_of_means(a, b)
        return Estimate(math.expm1(log_ratio.value), math.exp(log_ratio.value) * log_ratio.standard_error)

    out: dict[str, tuple[Estimate, float, str]] = {}
    for r0, r1 in itertools.pairwise(rows):
        change = difference(Estimate.from_samples(r1["I"]), Estimate.from_samples(r0["I"]))
        out[f"A: L_I(d={r1['d']}) - L_I(d={r0['d']}) >= 0"] = (change, 0.0, ">=")
    for r in rows:
        out[f"B: L_P(d={r['d']})/L_P(inf) - 1 <= bound"] = (ratio(r["P"], bL + nL), bound(r["d"]), "<=")
    first, last = rows[0], rows[-1]

    def growth(iso, low) -> Estimate:
        return difference(log_ratio_of_means(last[iso], first[iso]), log_ratio_of_means(last[low], first[low]))

    out["C: log growth of L_I minus that of L_P >= 0"] = (growth("I", "P"), 0.0, ">=")
    out["D1: log growth of bias_I minus that of bias_P >= 0"] = (growth("bI", "bP"), 0.0, ">=")
    out["D2: log growth of noise_I <= 0"] = (log_ratio_of_means(last["nI"], first["nI"]), 0.0, "<=")
    for r in rows:
        out[f"D3: bias_P(d={r['d']})/bias_P(inf) - 1 <= bound"] = (ratio(r["bP"], bL), bound(r["d"]), "<=")
    return out


def _best_limit(task: str, k: int, grid, problem: dict, search_seed, eval_seed):
    """The ``d -> infinity`` limit (:func:`~lipschitz_icl.lowrank.limit_terms`, ``problem`` its ``n, L0, sigma,
    contexts``) at the best scale of ``grid`` on one draw, its parts on another: ``(index, (bias_c, noise_c))``."""
    search = limit_terms(task, k, grid, seed=search_seed, **problem)
    i = int(np.argmin([np.mean(b + nz) for b, nz in search]))
    return i, limit_terms(task, k, [grid[i]], seed=eval_seed, **problem)[0]


def _dimension_figure(rows, limit) -> dict:
    """The optimal errors of ``c* P`` (against their ``d -> infinity`` limit) and of ``w* I`` along ``d``."""
    xs, lossL = [float(r["d"]) for r in rows], float(np.mean(limit[0] + limit[1]))
    return {
        "kind": "semilogx",
        "x": xs,
        "y": [float(np.mean(r["P"])) for r in rows],
        "series": [
            {
                "label": r"$c^* BB^\top$",
                "x": xs,
                "y": [float(np.mean(r["P"])) for r in rows],
                "theory_y": [lossL] * len(rows),
            },
            {"label": r"$w^* I$", "x": xs, "y": [float(np.mean(r["I"])) for r in rows]},
        ],
        "xlabel": "$d$",
        "ylabel": "optimal ICL error",
    }


def dimension_dependence(
    *,
    task: str,
    k: int,
    seed: np.random.SeedSequence,
    d_grid: list,
    n: int,
    L0: float,
    sigma: float,
    contexts: int,
    margin: float,
    family_level: float,
    scale_exponents: list,
    scale_points: int,
    refine: list,
    limit_points: int,
) -> Outcome:
    """The ICL error follows ``k``, not ``d``.

    On :func:`~lipschitz_icl.lowrank.matched_problem` for each ``d`` in ``d_grid``: ``c*`` (``M = c P``) and ``w*``
    (``M = w I``) by :func:`~lipschitz_icl.fixed_draw.scale_search` on one search draw, then bias and noise parts of
    both on an independent draw per ``d`` (paired between the two models); the ``d -> infinity`` limit of the
    low-rank problem (:func:`~lipschitz_icl.lowrank.limit_terms`; best of ``limit_points`` scales on one draw, parts
    on another).  ``one-sided`` rule on Bonferroni intervals (level ``family_level``): (A) ``L_I`` does not fall
    between consecutive ``d``; (B) ``L_P(d)/L_P(inf) - 1 <= margin``; (C) the log growth of ``L_I`` over the grid is
    at least that of ``L_P``; (D1) likewise for the bias parts; (D2) the log growth of the isotropic noise part is
    ``<= 0``; (D3) ``bias_P(d)/bias_P(inf) - 1 <= margin``. ``decide(gamma, rival)``: the bound of (B) and (D3)
    shifted to ``(1 + margin)(d/d_min)^-gamma``; or (``rival = "follows-d"``) "the low-rank error grows with ``d``
    at least as fast as the isotropic one" (the log growth of ``L_P`` minus that of ``L_I`` ``>= 0``).
    """
    search_seed, lim_search_seed, lim_eval_seed, *eval_seeds = seed.spawn(3 + len(d_grid))
    grid = _scales(scale_exponents, scale_points)
    rows = _dimension_rows(task, k, d_grid, n, L0, sigma, contexts, grid, refine, search_seed, eval_seeds)
    lim_grid = _scales(scale_exponents, limit_points)
    i, limit = _best_limit(
        task, k, lim_grid, {"n": n, "L0": L0, "sigma": sigma, "contexts": contexts}, lim_search_seed, lim_eval_seed
    )
    count = len(_dimension_tests(rows, limit, margin))
    level = 1 - family_level / count
    unsure = any(r["edge"] for r in rows) or i in (0, lim_grid.size - 1)

    def decide(gamma: float = 0.0, rival: str = "") -> decision.Decision:
        tests = _dimension_tests(rows, limit, margin, gamma)
        if rival == "follows-d":
            e, _, _ = tests["C: log growth of L_I minus that of L_P >= 0"]
            return decision.one_sided(*Estimate(-e.value, e.standard_error).confidence_interval(level), 0.0, ">=")
        dec = decision.combined(
            "one-sided", [decision.one_sided(*e.confidence_interval(level), b, rel) for e, b, rel in tests.values()]
        )
        return decision.unless(dec, "a scale search at its edge" if unsure and not gamma else "")

    quantities = tuple(
        Quantity(
            name=name,
            measured=e.value,
            ci_low=lo,
            ci_high=hi,
            note=f"{rel} {b:.4g}",
            verdict=decision.one_sided(lo, hi, b, rel).verdict,
        )
        for name, (e, b, rel) in _dimension_tests(rows, limit, margin).items()
        for lo, hi in [e.confidence_interval(level)]
    )
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin=f"L_P(d) <= (1 + {margin:g}) L_P(inf); growth differences >= 0",
        rule=f"one-sided tests (A)-(D3) on Bonferroni intervals over {count} tests (level {family_level:g}); d in "
        f"{list(d_grid)}, n={n}, L0={L0:g}, sigma={sigma:g}, {contexts} contexts per draw.",
        figure=_dimension_figure(rows, limit),
        extra={
            "d": list(d_grid),
            "limit_scale": float(lim_grid[i]),
            "c_star": [r["c"] for r in rows],
            "w_star": [r["w"] for r in rows],
        },
    )


# ----------------------------------------------------------------------------- the saddle (a finding)
@lru_cache(maxsize=32)
def _saddle_theory(setting: theory.Setting, step: float, scale_low: float, scale_high: float) -> dict:
    """The derived numbers of :func:`saddle` (cached: the alternatives' fresh replicates reuse them)."""
    c, at_bound = theory.optimal_scale(setting, low=scale_low, high=scale_high)
    s = step * c
    return {
        "c": c,
        "at_bound": at_bound,
        "s": s,
        "change": theory.loss_change(setting, c, s),
        "curvature": theory.curvature(setting, c),
        "large_n_curvature": theory.large_n_curvature(setting, c),
        "large_n": _large_n_change(setting, c, s, False),
        "infinite_n": _large_n_change(setting, c, s, True),
    }


def _large_n_change(setting, c: float, s: float, limit: bool) -> float:
    return (
        theory.large_n_loss(setting, c, s, limit=limit).value - theory.large_n_loss(setting, c, 0.0, limit=limit).value
    )


def _saddle_changes(
    problem, c: float, P, s: float, Q, scale_step: float, count: int, seed
) -> tuple[Estimate, list[Estimate]]:
    """On one draw of ``count`` contexts (common random numbers): ``L(c P +- s Q) - L(c P)`` by the antithetic
    pair and the changes along the scale moves ``c (1 +- scale_step) P``, per-context estimates."""
    models = [
        Attention(M) for M in (c * P, c * P + s * Q, c * P - s * Q, (1 + scale_step) * c * P, (1 - scale_step) * c * P)
    ]
    terms = general_terms(problem, models, count, np.random.default_rng(seed))
    base, plus, minus, up, down = (b + nz for b, nz in terms)
    return (
        Estimate.from_samples(0.5 * (plus + minus) - base),
        [Estimate.from_samples(up - base), Estimate.from_samples(down - base)],
    )


def saddle(
    *,
    task: str,
    d: int,
    k: int,
    seed: np.random.SeedSequence,
    n: int,
    L0: float,
    sigma: float,
    step: float,
    scale_step: float,
    contexts: dict,
    margin: float,
    family_level: float,
    scale_bounds: list,
) -> Outcome:
    """The change of the loss along the complement ``Q`` at ``c* B B^T`` against its exact derivation.

    Derived (:mod:`lipschitz_icl.derivations.saddle`, exact in ``n`` up to the quadrature's stated accuracy): ``c*``
    minimising the loss of ``c P`` (:func:`~lipschitz_icl.lowrank.matched_problem`, ``L0``), the change ``Delta =
    L(c* P +- s Q) - L(c* P)`` at ``s = step c*`` (even in ``s``) and the curvature ``d^2 L/ds^2`` at ``s = 0``
    (negative: a saddle).  Measured on one draw of ``contexts[f"d{d}k{k}"]`` contexts (common random numbers):
    ``Delta`` by the antithetic pair, and the scale moves ``c* (1 +- scale_step)``.  ``equivalence`` rule, every
    interval at level ``1 - family_level / 3``: the interval of measured minus derived ``Delta`` (widened by the
    quadrature's accuracy) within ``+- margin |Delta|`` (so the sign and the size), and ``sign`` on the scale moves
    (``c*`` is the minimiser along the scale).  ``decide(shift, law)``: the derived change taken as ``(1 + shift)
    Delta``, or a rival's ``Delta``: ``"large-n"`` (the delta method to ``O(1/n)``), ``"infinite-n"`` (its ``n ->
    infinity`` limit), ``"no-information"`` (the noise part of ``Delta`` alone: the bias part, the information the
    complement carries, set to zero).
    """
    problem = matched_problem(task, d, k, n=n, L0=L0, sigma=sigma)
    _, P, Q = projectors(problem)
    th = _saddle_theory(theory.Setting.of(problem), step, *scale_bounds)
    c, s, change = th["c"], th["s"], th["change"]
    count = contexts[f"d{d}k{k}"]
    measured, scale = _saddle_changes(problem, c, P, s, Q, scale_step, count, seed)
    level = 1 - family_level / 3
    scale_decisions = [decision.sign(*e.confidence_interval(level), +1) for e in scale]
    rivals = {
        "exact": change.value,
        "large-n": th["large_n"],
        "infinite-n": th["infinite_n"],
        "no-information": change.noise,
    }

    def decide(shift: float = 0.0, law: str = "exact") -> decision.Decision:
        if th["at_bound"]:
            return decision.Decision("equivalence", "inconclusive", f"c* at the end of {scale_bounds}")
        size = decision.shifted_equivalence(
            measured.confidence_interval(level), (1 + shift) * rivals[law], change.accuracy, margin * abs(change.value)
        )
        return decision.Decision(
            "equivalence",
            decision.combine([size, *scale_decisions]),
            f"change along Q: {size.detail}; scale moves: " + ", ".join(dec.verdict for dec in scale_decisions),
        )

    return Outcome(
        decide=decide,
        quantities=_saddle_rows(task, d, k, th, measured, scale, scale_decisions, level),
        margin=f"+-{margin:g} |Delta| on the change along Q; scale moves > 0",
        rule=f"equivalence on Delta = L(c* P +- {step:g} c* Q) - L(c* P) (antithetic pair, {count} "
        f"contexts, interval at level {level:.6g}) against the exact-in-n derivation; sign on the "
        f"scale moves c* (1 +- {scale_step:g}); c* derived (n={n}, L0={L0:g} signal-matched, "
        f"sigma={sigma:g}).",
        figure=_saddle_figure(th, measured, level),
        extra={
            "c_star": c,
            "s": s,
            "kind": "saddle" if th["curvature"].value < 0 else "minimum",
            "derived": {
                "change": change.value,
                "change_bias": change.bias,
                "change_noise": change.noise,
                "curvature": th["curvature"].value,
                "curvature_bias": th["curvature"].bias,
                "curvature_noise": th["curvature"].noise,
                "large_n_change": th["large_n"],
                "infinite_n_change": th["infinite_n"],
                "large_n_curvature": th["large_n_curvature"].value,
            },
        },
    )


def _scale_rows(scale, scale_decisions, level: float) -> tuple:
    """The rows of the two scale moves ``c* (1 +- step)`` of :func:`saddle`: each loss change, must be > 0."""
    return tuple(
        Quantity(
            name=f"Delta L along scale x{f}",
            measured=e.value,
            ci_low=e.confidence_interval(level)[0],
            ci_high=e.confidence_interval(level)[1],
            verdict=dec.verdict,
            note="must be > 0",
        )
        for f, e, dec in zip(("(1 + step)", "(1 - step)"), scale, scale_decisions)
    )


def _saddle_rows(task, d, k, th, measured: Estimate, scale, scale_decisions, level: float) -> tuple:
    """The reported rows of :func:`saddle`: the change along ``Q``, the curvature, ``c*`` and the scale moves."""
    setting = {"task": task, "d": d, "k": k}
    change, curv, s = th["change"], th["curvature"], th["s"]
    low, high = measured.confidence_interval(level)
    return (
        Quantity(
            name="Delta L along +-s Q at c* B B^T",
            theory=change.value,
            measured=measured.value,
            ci_low=low,
            ci_high=high,
            symbol=r"\Delta_Q",
            setting=setting,
            constant=True,
            note=f"s = {s:.4g}; derived bias part {change.bias:.3g}, noise part {change.noise:.3g}; quadrature "
            f"accuracy {change.accuracy:.2g}; rivals: O(1/n) {th['large_n']:.3g}, "
            f"n -> inf {th['infinite_n']:.3g}",
        ),
        Quantity(
            name="curvature d^2L/ds^2 along Q at c* B B^T",
            theory=curv.value,
            measured=2 * measured.value / s**2,
            ci_low=2 * low / s**2,
            ci_high=2 * high / s**2,
            symbol=r"\kappa_Q",
            setting=setting,
            constant=True,
            note=f"measured: 2 Delta / s^2 (finite difference); derived bias part {curv.bias:.3g}, noise part "
            f"{curv.noise:.3g}; O(1/n) rival {th['large_n_curvature'].value:.3g}; "
            + ("a saddle" if curv.value < 0 else "a minimum along Q"),
        ),
        Quantity(
            name="optimal scale c* of c B B^T (derived)",
            theory=th["c"],
            symbol="c^*",
            setting=setting,
            note="exact loss minimised over c" + ("; at the end of the search range" if th["at_bound"] else ""),
        ),
        *_scale_rows(scale, scale_decisions, level),
    )


def _saddle_figure(th, measured: Estimate, level: float) -> dict:
    """Measured against derived curvature along ``Q`` (one point per case; on the diagonal if they agree)."""
    s2 = th["s"] ** 2 / 2
    low, high = measured.confidence_interval(level)
    kappa = th["curvature"].value
    return {
        "kind": "scatter",
        "x": [kappa],
        "y": [measured.value / s2],
        "y_low": [low / s2],
        "y_high": [high / s2],
        "theory_y": [kappa],
        "xlabel": r"derived $\partial_s^2 L$ along $Q$",
        "ylabel": r"measured $2\Delta_Q / s^2$",
    }
