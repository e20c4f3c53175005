"""Theorem 4.4: for low-rank tasks the attention window learns the direction ``col(B)``; for even links on
the sphere ``c* B B^T`` can be a saddle.  Registry: ``claims/thm44.toml`` (``direction``, ``trained``,
``dimension``, ``saddle``: statements, rules, every design number, resolutions, alternatives).

Setting, the signal-matched problems and the reflection-antithetic moves: :mod:`lipschitz_icl.estimators.lowrank`
(``P = B B^T``, ``Q = I - P``).  The theorem: the optimal ``M`` is ``c* P``; whether ``c P`` is a minimum
along the outside directions is what the claims measure, and for the quadratic and cosine links the
exact-in-``n`` derivation of :mod:`lipschitz_icl.derivations.saddle` says which.

Measured numbers come from the task-averaged estimator on one draw per decision
(:class:`~lipschitz_icl.loss.fixed_draw.FixedDraw`, :func:`lipschitz_icl.loss.estimators.general_terms`) and from the
NumPy trainer (:func:`lipschitz_icl.estimators.pretraining.independent_runs`); every random stream is spawned once
from the case's ``SeedSequence``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.decision import any_of
from lipschitz_icl.derivations import saddle as theory
from lipschitz_icl.estimate import Estimate, difference, log_ratio_of_means
from lipschitz_icl.estimators.lowrank import (
    Moves,
    best_limit,
    complement_changes,
    matched_optima,
    outside_vector,
    projectors,
    rotated_basis,
)
from lipschitz_icl.estimators.pretraining import noise_floor
from lipschitz_icl.gates.evidence import Outcome, Quantity, plot
from lipschitz_icl.loss.fixed_draw import best_scales
from lipschitz_icl.model import geometry
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem, matched_problem
from lipschitz_icl.runtime.trained import independent_runs

__all__ = ["direction_optimality", "trained_direction", "dimension_dependence", "saddle", "matched_problem"]


def _scales(exponents: list, points: int) -> np.ndarray:
    """The scale grid ``logspace(exponents[0], exponents[1], points)`` of a scale search."""
    return np.logspace(exponents[0], exponents[1], points)


def _signs(changes: list[tuple[str, Estimate]], level: float) -> list[decision.Decision]:
    """``sign`` (+1: every move raises the loss) on each change's interval at ``level``."""
    return [decision.sign(*e.confidence_interval(level), +1) for _, e in changes]


def _move_rows(changes, decisions, level: float, note: str) -> tuple:
    """One row per move: its loss change ``Delta L`` with the interval at ``level`` and its ``sign`` verdict."""
    return tuple(
        Quantity.estimated(f"Delta L along {name}", e, level, verdict=dec.verdict, note=note)
        for (name, e), dec in zip(changes, decisions)
    )


# ----------------------------------------------------------------------------- Theorem 4.4: the minimiser
def _full_rank_scale(task: str, problem) -> float:
    """The exact isotropic ``w*`` of the full-rank affine class with the same slope second moment
    (``lowrank-affine``: the same ``L``; ``lowrank-linear``, slope ``L`` exactly: ``sqrt(3) L``)."""
    L = problem.task_class.L * (math.sqrt(3) if task == "lowrank-linear" else 1.0)
    full = make_problem("affine", problem.d, problem.n, L, problem.sigma)
    return wstar(full, "exact").w_star.value


def _scale_row(c: float, loss: float, edge: str | None, setting: dict) -> Quantity:
    """The searched ``c*`` with its loss on the search draw (reported)."""
    note = f"loss {loss:.5g} on the search draw" + (f"; search edge: {edge}" if edge else "")
    return Quantity(name="best scale c* of c B B^T", measured=c, symbol="c^*", setting=setting, note=note)


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
    """Theorem 4.4: ``c* P`` is a minimiser (``c*`` by :func:`~lipschitz_icl.loss.fixed_draw.best_scales` on
    :func:`~lipschitz_icl.problem.matched_problem`, ``L0 = L``).  ``sign`` rule on the test draw: every move of
    :class:`~lipschitz_icl.estimators.lowrank.Moves` raises the loss, intervals at ``1 - family_level / moves``;
    inconclusive with
    ``c*`` on a grid edge.  ``decide(shift, outside, complement, scale)``: the same back from a moved base (some one
    outside direction: :func:`~lipschitz_icl.decision.any_of`), or at ``w P``, ``w`` of :func:`_full_rank_scale`."""
    search_seed, direction_seed, test_seed = seed.spawn(3)
    problem = matched_problem(task, d, k, n=n, L0=L, sigma=sigma)
    grid = _scales(scale_exponents, scale_points)
    P = projectors(problem)[1]
    ((c, loss_c, edge),) = best_scales(problem, [P], search_contexts, search_seed, grid=grid, refine=refine)
    moves = Moves.around(problem, c, contexts, test_seed, direction_seed, step=step, scale_step=scale_step)
    changes = moves.at_base()
    level = 1 - family_level / len(changes)
    decisions = _signs(changes, level)
    rows = _move_rows(changes, decisions, level, "must be > 0 on the whole interval")

    def decide(shift: float = 0.0, outside: float = 0.0, complement: float = 0.0, scale: str = "") -> decision.Decision:
        if scale:
            shift = _full_rank_scale(task, problem) / c - 1
        if not (shift or outside or complement):
            edge_note = f"c* on the search edge ({edge})" if edge else ""
            return decision.unless(decision.combined("sign", decisions), edge_note)
        signs = _signs(moves.moved(shift=shift, outside=outside, complement=complement), level)
        if outside and not shift:  # some one outside direction is enough to refute "c* P is a minimiser"
            return any_of("sign", signs)
        return decision.combined("sign", signs)

    return Outcome(
        decide=decide,
        quantities=(*rows, _scale_row(c, loss_c, edge, {"task": task, "d": d, "k": k})),
        margin=f"0 (each change's interval wholly > 0); moves of size {scale_step:g} on c, {step:g} ||c* P||_F "
        "elsewhere",
        rule=f"sign rule on each loss change (interval at level {level:.6g}, Bonferroni over {len(changes)} moves), "
        f"task-averaged Monte Carlo on one test draw ({contexts} contexts; c* searched on {search_contexts}); "
        "outside moves by antithetic reflection pairs.",
        extra={"c_star": c},
        points=len(changes),  # "c* B B^T is a minimiser", evaluated along these moves only
    )


# ----------------------------------------------------------------------------- what training finds
def _range_decision(values, threshold: float) -> decision.Decision:
    """``one-sided``: ``[min, max]`` of ``values`` over the runs at or below ``threshold``."""
    return decision.one_sided(min(values), max(values), threshold, "<=")


@dataclass(frozen=True)
class _Runs:
    """What :func:`trained_direction` measures of its independent runs ``(M0, result)``: ``rho(M, B)`` of each
    trained ``M`` and of each start ``M0``, the run-to-run noise floor of ``rho``
    (:func:`~lipschitz_icl.estimators.pretraining.noise_floor`), each trained scale ``tr(P M P)/k``, and the searched
    ``c*`` beside them (the record's ``extra``, in this order)."""

    rho: list
    rho_start: list
    noise_floor: float
    scale: list
    c_star: float

    @classmethod
    def of(cls, results, B: np.ndarray, P: np.ndarray, c_star: float) -> _Runs:
        trained = [r.M for _, r in results]
        rank = B.shape[1]
        return cls(
            rho=[geometry.rho(M, B) for M in trained],
            rho_start=[geometry.rho(M0, B) for M0, _ in results],
            noise_floor=noise_floor(trained, B),
            scale=[float(np.trace(P @ M @ P) / rank) for M in trained],
            c_star=c_star,
        )


@dataclass(frozen=True)
class _TrainedRule:
    """The rule of :func:`trained_direction` on its runs: ``rho`` at or below ``threshold`` for every run, unless
    the noise floor of ``rho`` is at or above ``floor_bound``; ``search_contexts`` for the reported ``c*`` row."""

    runs: _Runs
    threshold: float
    floor_bound: float
    search_contexts: int

    @property
    def floor_note(self) -> str:
        """Why the rule is inconclusive (the noise floor reaches its bound), or ``""``."""
        floor = self.runs.noise_floor
        return f"noise floor {floor:.4f}" if floor >= self.floor_bound else ""

    def rows(self, verdict: str) -> tuple:
        """The range of ``rho(M, B)`` over the runs (decided) and the trained scale ``tr(P M P)/k`` beside ``c*``."""
        rhos = self.runs.rho
        starts = self.runs.rho_start
        scales = self.runs.scale
        note = (
            f"bound {self.threshold}; runs: {', '.join(f'{x:.4f}' for x in rhos)}; random starts {min(starts):.2f}-"
            f"{max(starts):.2f}; noise floor {self.runs.noise_floor:.4f} (must be < {self.floor_bound:.3g})"
        )
        return (
            Quantity.within(
                "rho(M, B) of the trained M (range over runs)",
                max(rhos),
                (min(rhos), max(rhos)),
                theory=0.0,
                verdict=verdict,
                note=note,
            ),
            Quantity.within(
                "trained scale tr(PMP)/k vs searched c*",
                float(np.mean(scales)),
                (min(scales), max(scales)),
                theory=self.runs.c_star,
                note=f"reported only: c* searched on {self.search_contexts} contexts",
            ),
        )


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
    """Pretraining the M-form from random starts ends on ``col(B)``: ``one-sided`` rule on the range of ``rho(M, B)``
    over the runs (:func:`~lipschitz_icl.estimators.pretraining.independent_runs`) at or below ``shape_threshold``,
    inconclusive
    unless the noise floor of ``rho`` (:func:`_run_table`) is below ``shape_threshold / floor_divisor``.
    ``decide(tilt, target)``: the same against ``col(B)`` tilted by ``tilt`` toward a random outside direction
    (:func:`~lipschitz_icl.estimators.lowrank.rotated_basis`), or (``target = "isotropic"``) on the anisotropy of the
    runs."""
    run_seed, tilt_seed, search_seed = seed.spawn(3)
    problem = make_problem(task, d, n, L, sigma, rank=k)
    B, P, _ = projectors(problem)
    results = independent_runs(problem, run_seed, runs, **protocol)
    Ms = [r.M for _, r in results]
    grid = _scales(scale_exponents, scale_points)
    ((c, _, _),) = best_scales(problem, [P], search_contexts, search_seed, grid=grid, refine=refine)
    rule = _TrainedRule(
        runs=_Runs.of(results, B, P, c_star=c),
        threshold=shape_threshold,
        floor_bound=shape_threshold / floor_divisor,
        search_contexts=search_contexts,
    )

    def decide(tilt: float = 0.0, target: str = "col(B)") -> decision.Decision:
        if target == "isotropic":
            return _range_decision([geometry.anisotropy(M) for M in Ms], shape_threshold)
        if tilt:
            tilted = rotated_basis(B, tilt, outside_vector(P, tilt_seed))
            return _range_decision([geometry.rho(M, tilted) for M in Ms], shape_threshold)
        return decision.unless(_range_decision(rule.runs.rho, shape_threshold), rule.floor_note)

    return Outcome(
        decide=decide,
        quantities=rule.rows(decide().verdict),
        margin=f"rho <= {shape_threshold} for every run",
        rule=f"one-sided rule on the range of rho over {runs} independent SGD runs ({protocol}) against "
        f"{shape_threshold}; the run-to-run noise floor must be < threshold/{floor_divisor:g}.",
        extra=asdict(rule.runs),
    )


# ----------------------------------------------------------------------------- dependence on d
@dataclass(frozen=True)
class _Comparison:
    """One test of :func:`dimension_dependence`: its ``key`` (``"A"``, ``"B"``, ...), the row ``label``, the
    ``estimate`` compared with ``bound`` by ``relation`` (``"<="`` or ``">="``)."""

    key: str
    label: str
    estimate: Estimate
    bound: float
    relation: str

    def decision(self, level: float) -> decision.Decision:
        """``one-sided`` on the estimate's interval at ``level`` against the bound."""
        return decision.one_sided(*self.estimate.confidence_interval(level), self.bound, self.relation)

    def row(self, level: float) -> Quantity:
        """The reported row: the estimate with its interval at ``level``, the bound and the verdict."""
        note = f"{self.relation} {self.bound:.4g}"
        return Quantity.estimated(self.label, self.estimate, level, note=note, verdict=self.decision(level).verdict)


def _ratio_minus_one(a, b) -> Estimate:
    """``mean(a)/mean(b) - 1`` by the delta method on the log ratio."""
    log_ratio = log_ratio_of_means(a, b)
    return Estimate(math.expm1(log_ratio.value), math.exp(log_ratio.value) * log_ratio.standard_error)


def _dimension_tests(rows, limit, margin: float, gamma: float = 0.0) -> list[_Comparison]:
    """The comparisons of :func:`dimension_dependence`: (A) ``L_I`` does not fall between consecutive ``d``;
    (B) ``L_P(d)/L_P(inf) - 1 <= margin``; (C) the log growth of ``L_I`` over the grid is at least that of ``L_P``;
    (D1) likewise for the bias parts; (D2) the log growth of the isotropic noise part is ``<= 0``;
    (D3) ``bias_P(d)/bias_P(inf) - 1 <= margin``.  ``gamma`` shifts the bound of (B) and (D3) to
    ``(1 + margin) (d/d_min)^-gamma - 1``; ``limit`` holds the bias and noise parts of the ``d -> infinity`` limit."""
    limit_bias, limit_noise = limit
    d_min = rows[0]["d"]

    def bound(d) -> float:
        return (1 + margin) * (d / d_min) ** (-gamma) - 1

    first = rows[0]
    last = rows[-1]

    def growth(iso: str, low: str) -> Estimate:
        return difference(log_ratio_of_means(last[iso], first[iso]), log_ratio_of_means(last[low], first[low]))

    tests = []
    for r0, r1 in itertools.pairwise(rows):
        change = difference(Estimate.from_samples(r1["I"]), Estimate.from_samples(r0["I"]))
        tests.append(_Comparison("A", f"A: L_I(d={r1['d']}) - L_I(d={r0['d']}) >= 0", change, 0.0, ">="))
    for r in rows:
        ratio = _ratio_minus_one(r["P"], limit_bias + limit_noise)
        tests.append(_Comparison("B", f"B: L_P(d={r['d']})/L_P(inf) - 1 <= bound", ratio, bound(r["d"]), "<="))
    tests += [
        _Comparison("C", "C: log growth of L_I minus that of L_P >= 0", growth("I", "P"), 0.0, ">="),
        _Comparison("D1", "D1: log growth of bias_I minus that of bias_P >= 0", growth("bI", "bP"), 0.0, ">="),
        _Comparison("D2", "D2: log growth of noise_I <= 0", log_ratio_of_means(last["nI"], first["nI"]), 0.0, "<="),
    ]
    for r in rows:
        ratio = _ratio_minus_one(r["bP"], limit_bias)
        tests.append(_Comparison("D3", f"D3: bias_P(d={r['d']})/bias_P(inf) - 1 <= bound", ratio, bound(r["d"]), "<="))
    return tests


@dataclass(frozen=True)
class _Sweep:
    """The rule of :func:`dimension_dependence` on its measurements: the rows along ``d``, the limit's parts,
    the ``margin``, the interval ``level`` and whether a scale search sat at its edge."""

    rows: list
    limit: tuple
    margin: float
    level: float
    unsure: bool

    def decide(self, gamma: float = 0.0, rival: str = "") -> decision.Decision:
        """``one-sided`` on every test of :func:`_dimension_tests` (the bound shifted by ``gamma``), or (``rival =
        "follows-d"``) on the log growth of ``L_P`` minus that of ``L_I`` ``>= 0``."""
        tests = _dimension_tests(self.rows, self.limit, self.margin, gamma)
        if rival == "follows-d":
            growth = next(test.estimate for test in tests if test.key == "C")
            reversed_growth = Estimate(-growth.value, growth.standard_error)
            return decision.one_sided(*reversed_growth.confidence_interval(self.level), 0.0, ">=")
        dec = decision.combined("one-sided", [test.decision(self.level) for test in tests])
        return decision.unless(dec, "a scale search at its edge" if self.unsure and not gamma else "")


def _dimension_figure(rows, limit) -> dict:
    """The optimal errors of ``c* P`` (against their ``d -> infinity`` limit) and of ``w* I`` along ``d``."""
    xs = [float(r["d"]) for r in rows]
    limit_loss = float(np.mean(limit[0] + limit[1]))
    ys = [float(np.mean(r["P"])) for r in rows]
    series = [
        {"label": r"$c^* BB^\top$", "x": xs, "y": ys, "theory_y": [limit_loss] * len(rows)},
        {"label": r"$w^* I$", "x": xs, "y": [float(np.mean(r["I"])) for r in rows]},
    ]
    return plot("semilogx", xs, ys, "$d$", "optimal ICL error", series=series)


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
    """The ICL error follows ``k``, not ``d``: per ``d`` of ``d_grid`` the best ``c P`` and ``w I`` of
    :func:`~lipschitz_icl.problem.matched_problem` with their parts
    (:func:`~lipschitz_icl.estimators.lowrank.matched_optima`),
    and the ``d -> infinity`` limit (:func:`~lipschitz_icl.estimators.lowrank.best_limit`, ``limit_points`` scales).
    ``one-sided``
    rule (:class:`_Sweep`) on the tests of :func:`_dimension_tests`, Bonferroni intervals at family level
    ``family_level``; inconclusive with a scale search at its edge (``c*`` anywhere, ``w*`` at the top)."""
    search_seed, lim_search_seed, lim_eval_seed, *eval_seeds = seed.spawn(3 + len(d_grid))
    grid = _scales(scale_exponents, scale_points)
    lim_grid = _scales(scale_exponents, limit_points)
    problems = [matched_problem(task, d, k, n=n, L0=L0, sigma=sigma) for d in d_grid]
    rows = [matched_optima(p, contexts, search_seed, s, grid=grid, refine=refine) for p, s in zip(problems, eval_seeds)]
    i, limit = best_limit(task, k, lim_grid, lim_search_seed, lim_eval_seed, n=n, L0=L0, sigma=sigma, contexts=contexts)
    tests = _dimension_tests(rows, limit, margin)
    level = 1 - family_level / len(tests)
    # w* = 0 (uniform averaging) is a genuine optimum of the isotropic window (an even link is even in w)
    unsure = any(bool(r["edge_c"]) or r["edge_w"] == "top" for r in rows) or i in (0, lim_grid.size - 1)
    return Outcome(
        decide=_Sweep(rows=rows, limit=limit, margin=margin, level=level, unsure=unsure).decide,
        quantities=tuple(test.row(level) for test in tests),
        margin=f"L_P(d) <= (1 + {margin:g}) L_P(inf); growth differences >= 0",
        rule=f"one-sided tests (A)-(D3) on Bonferroni intervals over {len(tests)} tests (level {family_level:g}); d in "
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
# decide(law=...): the key of each law's change along Q in the derived numbers of _saddle_extra
_RIVALS = {
    "exact": "change",
    "large-n": "large_n_change",
    "infinite-n": "infinite_n_change",
    "no-information": "change_noise",
}


@lru_cache(maxsize=32)
def _saddle_theory(setting: theory.Setting, step: float, low: float, high: float) -> dict:
    """:func:`~lipschitz_icl.derivations.saddle.derived_case` (cached: the alternatives' fresh replicates reuse it)."""
    return theory.derived_case(setting, step=step, low=low, high=high)


def _saddle_extra(th: dict) -> dict:
    """``c*``, ``s``, the kind of ``c* P`` along ``Q`` (the sign of the curvature), and the derived numbers: the
    change and the curvature along ``Q`` with their bias and noise parts, the rivals' changes and curvature."""
    change = th["change"]
    curvature = th["curvature"]
    derived = {
        "change": change.value,
        "change_bias": change.bias,
        "change_noise": change.noise,
        "curvature": curvature.value,
        "curvature_bias": curvature.bias,
        "curvature_noise": curvature.noise,
        "large_n_change": th["large_n"],
        "infinite_n_change": th["infinite_n"],
        "large_n_curvature": th["large_n_curvature"].value,
    }
    kind = "saddle" if curvature.value < 0 else "minimum"
    return {"c_star": th["c"], "s": th["s"], "kind": kind, "derived": derived}


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
    """The change of the loss along the complement ``Q`` at ``c* B B^T`` against its exact derivation
    (:func:`_saddle_theory`: ``c*``, ``Delta = L(c* P +- s Q) - L(c* P)`` at ``s = step c*``, the curvature), measured
    by :func:`~lipschitz_icl.estimators.lowrank.complement_changes` on ``contexts[f"d{d}k{k}"]`` contexts.
    ``equivalence`` rule
    at level ``1 - family_level / 3``: measured minus derived ``Delta`` (widened by the quadrature's accuracy) within
    ``+- margin |Delta|``, and ``sign`` on the scale moves.  ``decide(shift, law)``: the derived change taken as
    ``(1 + shift) Delta``, or a rival's (:data:`_RIVALS`: ``O(1/n)``, ``n -> infinity``, the noise part alone)."""
    problem = matched_problem(task, d, k, n=n, L0=L0, sigma=sigma)
    th = _saddle_theory(theory.Setting.of(problem), step, *scale_bounds)
    extra = _saddle_extra(th)
    count = contexts[f"d{d}k{k}"]
    measured, scale = complement_changes(problem, th["c"], th["s"], scale_step, count, seed)
    case = _SaddleCase(setting={"task": task, "d": d, "k": k}, th=th, measured=measured, level=1 - family_level / 3)
    level = case.level
    scale_decisions = _signs(scale, level)
    interval = case.interval

    def decide(shift: float = 0.0, law: str = "exact") -> decision.Decision:
        if th["at_bound"]:
            return decision.Decision("equivalence", "inconclusive", f"c* at the end of {scale_bounds}")
        centre = (1 + shift) * extra["derived"][_RIVALS[law]]
        tolerance = margin * abs(th["change"].value)
        size = decision.shifted_equivalence(interval, centre, th["change"].accuracy, tolerance)
        detail = f"change along Q: {size.detail}; scale moves: " + ", ".join(dec.verdict for dec in scale_decisions)
        return decision.Decision("equivalence", decision.combine([size, *scale_decisions]), detail)

    return Outcome(
        decide=decide,
        quantities=case.rows() + _move_rows(scale, scale_decisions, level, "must be > 0"),
        margin=f"+-{margin:g} |Delta| on the change along Q; scale moves > 0",
        rule=f"equivalence on Delta = L(c* P +- {step:g} c* Q) - L(c* P) (antithetic pair, {count} contexts, "
        f"interval at level {level:.6g}) against the exact-in-n derivation; sign on the scale moves c* (1 +- "
        f"{scale_step:g}); c* derived (n={n}, L0={L0:g} signal-matched, sigma={sigma:g}).",
        figure=case.figure(),
        extra=extra,
    )


@dataclass(frozen=True)
class _SaddleCase:
    """One case of :func:`saddle`: its ``setting`` (task, d, k), the derived numbers ``th``
    (:func:`_saddle_theory`), the ``measured`` change along ``Q`` and the interval ``level``."""

    setting: dict
    th: dict
    measured: Estimate
    level: float

    @property
    def interval(self) -> tuple[float, float]:
        """The measured change's interval at ``level``."""
        return self.measured.confidence_interval(self.level)

    def rows(self) -> tuple:
        """The reported rows: the change along ``Q``, the curvature, ``c*``."""
        th = self.th
        change = th["change"]
        curv = th["curvature"]
        s = th["s"]
        low, high = self.interval
        return (
            Quantity.within(
                "Delta L along +-s Q at c* B B^T",
                self.measured.value,
                (low, high),
                theory=change.value,
                symbol=r"\Delta_Q",
                setting=self.setting,
                constant=True,
                note=f"s = {s:.4g}; derived bias part {change.bias:.3g}, noise part {change.noise:.3g}; quadrature "
                f"accuracy {change.accuracy:.2g}; rivals: O(1/n) {th['large_n']:.3g}, n -> inf {th['infinite_n']:.3g}",
            ),
            Quantity.within(
                "curvature d^2L/ds^2 along Q at c* B B^T",
                2 * self.measured.value / s**2,
                (2 * low / s**2, 2 * high / s**2),
                theory=curv.value,
                symbol=r"\kappa_Q",
                setting=self.setting,
                constant=True,
                note=f"measured: 2 Delta / s^2 (finite difference); derived bias part {curv.bias:.3g}, noise part "
                f"{curv.noise:.3g}; O(1/n) rival {th['large_n_curvature'].value:.3g}; "
                + ("a saddle" if curv.value < 0 else "a minimum along Q"),
            ),
            Quantity(
                name="optimal scale c* of c B B^T (derived)",
                theory=th["c"],
                symbol="c^*",
                setting=self.setting,
                note="exact loss minimised over c" + ("; at the end of the search range" if th["at_bound"] else ""),
            ),
        )

    def figure(self) -> dict:
        """Measured against derived curvature along ``Q`` (one point per case; on the diagonal if they agree)."""
        s2 = self.th["s"] ** 2 / 2
        low, high = self.interval
        kappa = self.th["curvature"].value
        labels = (r"derived $\partial_s^2 L$ along $Q$", r"measured $2\Delta_Q / s^2$")
        return plot(
            "scatter",
            [kappa],
            [self.measured.value / s2],
            *labels,
            y_low=[low / s2],
            y_high=[high / s2],
            theory_y=[kappa],
        )
