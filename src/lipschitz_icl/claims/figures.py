"""The paper's figures, computed by the project and decided as claims (registry ``claims/figures.toml``).

Each measure function computes one figure's data from the project's estimators and trainer and returns an
:class:`~lipschitz_icl.gates.evidence.Outcome`: ``decide`` is the claim the figure illustrates, ``figure`` the figure's
JSON-serialisable data (``name``, the key in :data:`lipschitz_icl.report.figures.paper.RENDERERS`; ``title``;
``settings``, every setting used, those the paper does not state chosen in the registry; the series; ``verdict``).
Every random stream is spawned once from the case's ``SeedSequence``; Figure 1 is exact.

Each figure's helpers share one context object, a frozen dataclass holding the figure's design (the registry's
numbers it was given) and what it measured: :class:`_Figure1`, :class:`_Figure3`, :class:`_Figure5`,
:class:`_Figure9`, :class:`_Eq4`, :class:`_Figure6`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import ClassVar

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.derivations import linear_attention
from lipschitz_icl.estimate import mean_difference
from lipschitz_icl.estimators import circle
from lipschitz_icl.estimators.circle import weighted_slice
from lipschitz_icl.estimators.pretraining import (
    mean_interval,
    mean_limits,
    pretraining_curves,
    scale_interval,
    setting_runs,
)
from lipschitz_icl.estimators.window_errors import optimal_error_curves, paired_error_cost
from lipschitz_icl.gates.evidence import Outcome, Quantity
from lipschitz_icl.loss.estimators import paired_ratio
from lipschitz_icl.model import geometry
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.optimum import wstar, wstar_elasticities
from lipschitz_icl.problem import make_problem
from lipschitz_icl.runtime.trained import independent_runs, train_all

__all__ = ["figure1", "figure3", "figure5", "figure9", "eq4_heatmaps", "figure6"]


def _around(name: str, value: float, half: float, side: int | None = None, **fields) -> Quantity:
    """A row ``value`` with the interval ``value -+ half``; given ``side``, the ``sign`` rule's verdict (that side)."""
    if side is not None:
        fields["verdict"] = decision.sign(value - half, value + half, side).verdict
    return Quantity.within(name, value, (value - half, value + half), **fields)


def _record(name: str, title: str, settings: dict, verdict: str, **series) -> dict:
    """A figure record: the renderer's key ``name``, ``title``, the ``settings`` panel, the series, ``verdict``."""
    return {"name": name, "title": title, "settings": settings, **series, "verdict": verdict}


# ----------------------------------------------------------------------------- Figure 1
@dataclass(frozen=True)
class _Figure1:
    """Figure 1 on the circle: its design (``task``, ``L_grid``, ``n``, ``sigma``, ``n_grid``) and its exact numbers:
    the ``w*`` result per ``L`` (``w_n``), the elasticity ``(low, mid, high)`` of the window width between
    consecutive ``L`` (``steps``) and ``(E_lin, E_soft, error)`` at the largest ``n`` per ``L`` (``last``)."""

    task: str
    L_grid: list
    n: int
    sigma: float
    n_grid: list
    w_n: list
    steps: list
    last: list

    d: ClassVar[int] = 2  # the circle

    @property
    def ws(self) -> list:
        """``w*`` per ``L``."""
        return [w.w_star.value for w in self.w_n]

    def quantities(self) -> tuple:
        """The window ``1/sqrt(w*)`` per ``L``, its ``L``-elasticities, and ``E_lin - E_soft`` at the largest ``n``."""
        quantities = [
            Quantity.within(
                f"window 1/sqrt(w*) at L={L:g}",
                1 / math.sqrt(w),
                (r.ci_high**-0.5, r.ci_low**-0.5),
                note=f"w* = {w:.5g} (exact)",
            )
            for L, w, r in zip(self.L_grid, self.ws, self.w_n)
        ]
        quantities += [
            Quantity.within(
                f"d log width / d log L, L {La:g} -> {Lb:g}",
                mid,
                (lo, hi),
                verdict=decision.sign(lo, hi, -1).verdict,
                note="must be < 0",
            )
            for (La, Lb), (lo, mid, hi) in zip(itertools.pairwise(self.L_grid), self.steps)
        ]
        quantities += [
            _around(
                f"ICL error at n={self.n_grid[-1]}, L={L:g}: linear (m*) - softmax (w*)",
                e_lin - e_soft,
                err,
                note="must be > 0",
            )
            for L, (e_lin, e_soft, err) in zip(self.L_grid, self.last)
        ]
        return tuple(quantities)

    def settings(self) -> dict:
        """The settings panel."""
        return {
            "task": self.task,
            "d": self.d,
            "n (top and middle rows)": self.n,
            "sigma": self.sigma,
            "L": list(self.L_grid),
            "n grid (bottom row)": list(self.n_grid),
            "softmax": "M = w* I, w* exact (quadrature)",
            "linear": "M = m* I, m* derived (lipschitz_icl.derivations.linear_attention)",
            "softmax error": "exact quadrature",
            "linear error": "derived E_lin(n)",
            "window shaded": "query angle +- 1/sqrt(w*)",
            "context draw": "one task at L = 1 scaled by L",
        }


def figure1(
    *, task: str, L_grid: list, n: int, sigma: float, n_grid: list, slice_points: int, slice_seed: int
) -> Outcome:
    """Figure 1 on the circle (``d = 2``).  ``sign``: each window-width elasticity ``d log(1/sqrt(w*)) / d log L``
    between consecutive ``L`` below zero (intervals from the exact ``w*``'s stated accuracy), and ``E_lin - E_soft``
    above zero at the largest ``n`` for every ``L`` (``E_soft`` exact quadrature with its stated error, ``E_lin``
    derived).  ``decide(shift, gap_factor, window_sign, gap_sign)``: every elasticity beyond ``shift`` on the side
    ``window_sign``, ``E_lin - (1 + gap_factor) E_soft`` on the side ``gap_sign``.  The task drawn in the top row
    (``slice_seed``) is an illustration only."""
    d = _Figure1.d
    w_n = [wstar(make_problem(task, d, n, L, sigma), "exact") for L in L_grid]
    ws = [w.w_star.value for w in w_n]
    m_n = [linear_attention.linear_optimum(task, d, n, L, sigma)[0] for L in L_grid]
    slice_data = weighted_slice(
        task,
        L_grid=L_grid,
        n=n,
        sigma=sigma,
        rng=np.random.default_rng(slice_seed),
        points=slice_points,
        ws=ws,
        ms=m_n,
    )
    soft_err, soft_abs, lin_err = optimal_error_curves(task, d, L_grid, n_grid, sigma)
    width_steps = [(-0.5 * hi, -0.5 * mid, -0.5 * lo) for lo, mid, hi in wstar_elasticities(L_grid, w_n)]
    at_largest_n = [(e_lin[-1], e_soft[-1], err[-1]) for e_lin, e_soft, err in zip(lin_err, soft_err, soft_abs)]
    fig = _Figure1(
        task=task, L_grid=L_grid, n=n, sigma=sigma, n_grid=n_grid, w_n=w_n, steps=width_steps, last=at_largest_n
    )

    def decide(shift: float = 0.0, gap_factor: float = 0.0, window_sign: int = -1, gap_sign: int = +1):
        window = [
            decision.sign(lo - window_sign * shift, hi - window_sign * shift, window_sign) for lo, _, hi in fig.steps
        ]
        gaps = [(e_lin - (1 + gap_factor) * e_soft, (1 + gap_factor) * err) for e_lin, e_soft, err in fig.last]
        return decision.combined("sign", window + decision.signs(gaps, gap_sign))

    return Outcome(
        decide=decide,
        quantities=fig.quantities(),
        margin="0 (every interval on its predicted side)",
        rule="sign rule on each window-width elasticity in L (intervals from the exact w*'s stated accuracy) and on "
        f"E_lin - E_soft at n = {n_grid[-1]} for every L (interval from the quadrature's stated error).",
        figure=_record(
            "fig1",
            "Figure 1: softmax attention adapts its window to L",
            fig.settings(),
            decide().verdict,
            L=list(L_grid),
            w_star=ws,
            m_star=m_n,
            window=[1 / math.sqrt(w) for w in ws],
            **slice_data,
            n_grid=[float(v) for v in n_grid],
            softmax_error=soft_err,
            linear_error=lin_err,
        ),
    )


# ----------------------------------------------------------------------------- Figure 3
@dataclass(frozen=True)
class _Figure3:
    """Figure 3's design: ``runs`` trained ``M`` (``protocol``) at each point ``(n, sigma, L)`` of ``settings`` x
    ``L_grid``, on ``task`` tasks in dimension ``d``."""

    task: str
    d: int
    L_grid: list
    settings: list
    runs: int
    protocol: dict

    @property
    def points(self) -> list:
        """Every ``(n, sigma, L)``, ``L`` varying fastest."""
        return [(n, s, L) for n, s in self.settings for L in self.L_grid]

    def trained_norms(self, seed: np.random.SeedSequence) -> tuple[dict, dict]:
        """At each point: ``||M||_2`` of ``runs`` independently trained ``M`` (every point's runs side by side),
        and the exact ``w*``."""
        points = self.points
        problems = {(n, s, L): make_problem(self.task, self.d, n, L, s) for n, s, L in points}
        streams = seed.spawn(len(points))
        runs = [
            run for point, stream in zip(points, streams) for run in setting_runs(problems[point], stream, self.runs)
        ]
        trained = train_all(runs, **self.protocol)
        norms = {}
        for i, point in enumerate(points):
            point_runs = trained[i * self.runs : (i + 1) * self.runs]
            norms[point] = [float(np.linalg.norm(result.M, 2)) for _, result in point_runs]
        w_stars = {point: wstar(problems[point], "exact") for point in points}
        return norms, w_stars

    def quantities(self, norms: dict, w_stars: dict) -> tuple:
        """The mean ``||M||_2`` at each point against the exact ``w*``."""
        return tuple(
            Quantity(
                name=f"||M||_2 at n={n}, sigma={s:g}, L={L:g}",
                theory=w_stars[(n, s, L)].w_star.value,
                measured=float(np.mean(norms[(n, s, L)])),
                note="theory: exact w*; runs " + ", ".join(f"{v:.4f}" for v in norms[(n, s, L)]),
            )
            for n, s, L in self.points
        )

    def record(self, norms: dict, w_stars: dict, verdict: str) -> dict:
        """The figure record: per ``(n, sigma)`` the mean and per-run ``||M||_2`` and ``w*`` against ``L``."""
        series = [
            {
                "label": f"n={n}, sigma={s:g}",
                "L": list(self.L_grid),
                "norm_mean": [float(np.mean(norms[(n, s, L)])) for L in self.L_grid],
                "norm_runs": [norms[(n, s, L)] for L in self.L_grid],
                "w_star": [w_stars[(n, s, L)].w_star.value for L in self.L_grid],
            }
            for n, s in self.settings
        ]
        panel = {
            "task": self.task,
            "d": self.d,
            "L": list(self.L_grid),
            "(n, sigma)": [list(x) for x in self.settings],
            "runs per point": self.runs,
            "training": f"M-form softmax, {self.protocol}",
            "start": "i.i.d. N(0, 1/d) entries",
            "w*": "exact quadrature",
        }
        return _record("fig3", "Figure 3: the trained window follows w* as L grows", panel, verdict, series=series)


def figure3(
    *,
    task: str,
    d: int,
    L_grid: list,
    settings: list,
    runs: int,
    protocol: dict,
    level: float,
    margin: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 3: ``||M||_2`` of the trained ``M`` (``runs``
    :func:`~lipschitz_icl.estimators.pretraining.independent_runs` of
    ``protocol`` per point).  ``sign``: each consecutive difference of mean norms in ``L`` above zero (``level``
    t-interval); ``equivalence``: the ``level`` interval of ``mean ||M||_2 / w* - 1`` within ``+-margin``, at every
    ``(n, sigma)`` of ``settings``.  ``decide(change, target)``: the norm claimed to be ``(1 + change) w*``;
    ``target = "fixed"``: the ``w*`` at the largest ``L`` for every ``L`` (a window that does not adapt)."""
    fig = _Figure3(task=task, d=d, L_grid=L_grid, settings=settings, runs=runs, protocol=protocol)
    norms, w_stars = fig.trained_norms(seed)
    rising = [
        mean_difference(norms[(n, s, La)], norms[(n, s, Lb)], level)
        for n, s in settings
        for La, Lb in itertools.pairwise(L_grid)
    ]

    def decide(change: float = 0.0, target: str = "exact") -> decision.Decision:
        agree = []
        for n, s, L in fig.points:
            ref = w_stars[(n, s, L_grid[-1] if target == "fixed" else L)]
            w0 = ref.w_star.value
            low, high = scale_interval(norms[(n, s, L)], ref, target=w0 * (1 + change), level=level)
            agree.append(decision.equivalence(low / w0, high / w0, margin))
        return decision.combined("equivalence", agree + decision.signs(rising, +1))

    return Outcome(
        decide=decide,
        quantities=fig.quantities(norms, w_stars),
        margin=f"+-{margin:g} on ||M||_2 / w* - 1; sign 0 on the increase",
        rule=f"sign on consecutive differences of the mean ||M||_2 over {runs} runs ({level:g} t-intervals); "
        f"equivalence of mean ||M||_2 / w* - 1 with 0 within +-{margin:g} ({level:g} Welch intervals).",
        figure=fig.record(norms, w_stars, decide().verdict),
    )


# ----------------------------------------------------------------------------- Figures 5 and 9: pretraining
@dataclass(frozen=True)
class _Schedule:
    """The keywords of :func:`~lipschitz_icl.estimators.pretraining.pretraining_curves` in Figures 5 and 9:
    ``segments`` x
    ``segment_steps`` steps of ``protocol`` from scale ``init_scale``, the error on ``test_contexts`` contexts."""

    protocol: dict
    init_scale: float
    segments: int
    segment_steps: int
    test_contexts: int

    def curves(self, problems, streams, kind: str = "softmax") -> list:
        """Runs ``(problems[k], streams[k])`` side by side, each ``(steps, errors, standard errors, effective M per
        checkpoint, final params)``."""
        return pretraining_curves(problems, streams, kind=kind, **vars(self))


# ----------------------------------------------------------------------------- Figure 5
@dataclass(frozen=True)
class _Pretrained:
    """What Figure 5 measures: per class its test-error curve during pretraining (``curves``) and ``(end - start,
    z (se_end + se_start))`` (``drops``); on common cosine-task contexts the layers' errors ``E`` (cosine last) and
    ``E_class / E_cosine`` with its se (``cross``, paired)."""

    curves: dict
    drops: list
    cross: dict


@dataclass(frozen=True)
class _Figure5:
    """Figure 5's design: softmax attention pretrained on each of ``classes`` (``schedule``) at ``d``, ``n``, ``L``,
    ``sigma``, then tested on ``cross_contexts`` common cosine-task contexts; ``z`` the Bonferroni quantile."""

    classes: list
    d: int
    n: int
    L: float
    sigma: float
    schedule: _Schedule
    cross_contexts: int
    z: float

    def pretrain(self, problems: dict, streams) -> _Pretrained:
        """Each class's pretraining curve (stream ``i`` for class ``i``) and the layers' errors on cosine tasks (the
        last stream)."""
        curves = {}
        finals = {}
        drops = []
        runs = self.schedule.curves([problems[task] for task in self.classes], streams[: len(self.classes)])
        for task, (steps, errors, ses, Ms, _) in zip(self.classes, runs):  # the classes trained side by side
            curves[task] = {"steps": steps, "error": errors, "se": ses}
            finals[task] = Ms[-1]
            drops.append((errors[-1] - errors[0], self.z * (ses[-1] + ses[0])))  # paired: se of the difference <= sum
        order = [c for c in self.classes if c != "cosine"] + ["cosine"]
        layers = [Attention(finals[c]) for c in order]
        error, ratio, ratio_se = paired_ratio(problems["cosine"], layers, self.cross_contexts, streams[-1])
        cross = {"pretrained_on": order, "error": error, "ratio": ratio, "ratio_se": ratio_se}
        return _Pretrained(curves=curves, drops=drops, cross=cross)

    def quantities(self, measured: _Pretrained) -> tuple:
        """Each class's end-of-pretraining test error, and each class's cosine-task error ratio."""
        curves = measured.curves
        cross = measured.cross
        quantities = [
            Quantity(
                name=f"test error of {c}: start -> end",
                measured=curves[c]["error"][-1],
                verdict=dec.verdict,
                note=f"start {curves[c]['error'][0]:.4g}",
            )
            for c, dec in zip(self.classes, decision.signs(measured.drops, -1))
        ]
        quantities += [
            _around(
                f"error on cosine tasks, pretrained on {c}, / pretrained on cosine",
                r,
                self.z * s,
                theory=1.0,
                note=f"error {e:.4g}",
            )
            for c, e, r, s in zip(cross["pretrained_on"][:-1], cross["error"], cross["ratio"], cross["ratio_se"])
        ]
        return tuple(quantities)

    def record(self, measured: _Pretrained, verdict: str) -> dict:
        """The figure record: its settings panel, the pretraining curves per class, the errors on cosine tasks."""
        schedule = self.schedule
        panel = {
            "d": self.d,
            "n": self.n,
            "L": self.L,
            "sigma": self.sigma,
            "classes": list(self.classes),
            "training": f"M-form softmax from N(0, {schedule.init_scale:g}^2/d) starts, {schedule.segments} segments "
            f"of {schedule.segment_steps} steps, {schedule.protocol}",
            "test error": f"task-averaged estimator, {schedule.test_contexts} common contexts per checkpoint",
            "cross-class error": f"{self.cross_contexts} common cosine-task contexts",
            "cosine frequency": 1.0,
        }
        title = "Figure 5: pretraining on three classes, tested on cosine tasks"
        return _record("fig5", title, panel, verdict, curves=measured.curves, cross=measured.cross)


def figure5(
    *,
    classes: list,
    d: int,
    n: int,
    L: float,
    sigma: float,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    cross_contexts: int,
    protocol: dict,
    init_scale: float,
    margin: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 5: the held-out test error during pretraining of softmax attention on each class, and the error on
    cosine tasks of the layers pretrained on each class.  ``sign``: end-minus-start test error below zero per class
    (paired, interval ``+- z (se_end + se_start)``); ``equivalence``: ``E_class / E_cosine - 1`` within ``+-margin``
    (paired delta-method intervals, :func:`~lipschitz_icl.loss.estimators.paired_ratio`); ``z`` Bonferroni over all
    intervals
    at ``family_level``.  ``decide(change, only, drop_sign)``: the ratio of ``only`` (default every class) claimed
    to be ``1 + change``; the end-minus-start error on the side ``drop_sign``."""
    streams = seed.spawn(len(classes) + 1)
    z = decision.bonferroni_z(2 * len(classes), family_level)
    schedule = _Schedule(protocol, init_scale, segments, segment_steps, test_contexts)
    fig = _Figure5(classes=classes, d=d, n=n, L=L, sigma=sigma, schedule=schedule, cross_contexts=cross_contexts, z=z)
    problems = {task: make_problem(task, d, n, L, sigma) for task in [*classes, "cosine"]}
    measured = fig.pretrain(problems, streams)
    cross = measured.cross

    def decide(change: float = 0.0, only: str = "", drop_sign: int = -1) -> decision.Decision:
        ratios = zip(cross["pretrained_on"], cross["ratio"][:-1])
        moved = [r - 1 - (change if only in ("", c) else 0.0) for c, r in ratios]
        equal = [decision.equivalence(x - z * s, x + z * s, margin) for x, s in zip(moved, cross["ratio_se"])]
        return decision.combined("equivalence", equal + decision.signs(measured.drops, drop_sign))

    return Outcome(
        decide=decide,
        quantities=fig.quantities(measured),
        margin=f"+-{margin:g} on E_class / E_cosine - 1",
        rule=f"sign on the end-minus-start test error per class; equivalence of E_class/E_cosine - 1 on cosine tasks "
        f"with 0 within +-{margin:g} (paired delta-method intervals, z = {z:.2f}).",
        figure=fig.record(measured, decide().verdict),
    )


# ----------------------------------------------------------------------------- Figure 9
@dataclass(frozen=True)
class _LinkRuns:
    """What Figure 9 measures: per link the runs of each kind (``series``), each kind's mean end-minus-start ``rho``
    change per link (``changes``: ``level`` t-intervals) and every run's final error gap linear - softmax with its
    half-width ``z (se_lin + se_soft)`` (``gaps``, links in order, runs within)."""

    series: dict
    changes: dict
    gaps: list


@dataclass(frozen=True)
class _Figure9:
    """Figure 9's design: ``runs`` pretraining runs of each kind of ``schedules`` (softmax, linear) on low-rank tasks
    of each link, at ``d``, ``rank``, ``n``, ``L``, ``sigma``; ``z`` the Bonferroni quantile of the gaps, ``level``
    that of the ``rho`` changes."""

    links: list
    d: int
    rank: int
    n: int
    L: float
    sigma: float
    runs: int
    schedules: dict
    z: float
    level: float

    def link_runs(self, problems: dict, streams: dict, kind: str) -> dict:
        """Per link: ``runs`` pretraining curves of ``kind`` (run ``k`` from child ``k`` of the link's stream),
        ``rho(M, B)`` at each checkpoint; the runs of every link side by side."""
        links = list(problems)
        run_problems = [problems[link] for link in links for _ in range(self.runs)]
        run_streams = [run for link in links for run in streams[link].spawn(self.runs)]
        curves = self.schedules[kind].curves(run_problems, run_streams, kind)
        out = {}
        for i, link in enumerate(links):
            steps, errors, ses, Ms, _ = zip(*curves[i * self.runs : (i + 1) * self.runs])
            rho = [[geometry.rho(M, problems[link].task_class.B) for M in run] for run in Ms]
            out[link] = {"steps": steps[-1], "rho": rho, "error": list(errors), "se": list(ses)}
        return out

    def pretrain(self, problems: dict, seed: np.random.SeedSequence) -> _LinkRuns:
        """Per link (a stream each): the runs of each kind, the ``rho`` changes and the final error gaps."""
        series = {}
        gaps = []
        changes: dict[str, list] = {kind: [] for kind in self.schedules}
        streams = {
            link: dict(zip(self.schedules, ls.spawn(2))) for link, ls in zip(problems, seed.spawn(len(problems)))
        }
        by_kind = {
            kind: self.link_runs(problems, {link: streams[link][kind] for link in problems}, kind)
            for kind in self.schedules
        }
        for link in problems:
            out = {kind: by_kind[kind][link] for kind in self.schedules}
            series[link] = out
            for kind in changes:
                changes[kind].append(mean_interval([r[-1] - r[0] for r in out[kind]["rho"]], 0.5 + self.level / 2))
            finals = zip(out["linear"]["error"], out["softmax"]["error"], out["linear"]["se"], out["softmax"]["se"])
            gaps += [
                (lin_e[-1] - soft_e[-1], self.z * (lin_s[-1] + soft_s[-1])) for lin_e, soft_e, lin_s, soft_s in finals
            ]
        return _LinkRuns(series=series, changes=changes, gaps=gaps)

    def rows(self, measured: _LinkRuns) -> tuple:
        """Per link softmax's mean ``rho`` change and each run's final error gap."""
        quantities = []
        for i, link in enumerate(self.links):
            mean_change, half = measured.changes["softmax"][i]
            runs_of_link = measured.series[link]
            final = "; ".join(
                f"{kind} " + ", ".join(f"{r[-1]:.4f}" for r in runs_of_link[kind]["rho"]) for kind in runs_of_link
            )
            note = f"must be < 0; final rho: {final}"
            quantities.append(
                _around(f"{link}: softmax rho end - start (mean over runs)", mean_change, half, -1, note=note)
            )
            quantities += [
                _around(f"{link}, run {k}: final error linear - softmax", g, hw, +1)
                for k, (g, hw) in enumerate(measured.gaps[i * self.runs : (i + 1) * self.runs])
            ]
        return tuple(quantities)

    def record(self, measured: _LinkRuns, verdict: str) -> dict:
        """The figure record: its settings panel and each link's softmax and linear pretraining runs."""
        soft = self.schedules["softmax"]
        linear = self.schedules["linear"]
        panel = {
            "d": self.d,
            "rank": self.rank,
            "B": f"the first {self.rank} coordinate axes",
            "n": self.n,
            "L": self.L,
            "sigma": self.sigma,
            "links": list(self.links),
            "runs": self.runs,
            "softmax training": f"{soft.segments} x {soft.segment_steps} steps, {soft.protocol}",
            "linear training": f"{linear.segments} x {linear.segment_steps} steps, {linear.protocol} (Adam restarted "
            "at each segment), value weight v",
            "test error": f"task-averaged estimator on {soft.test_contexts} common contexts per run",
            "cosine frequency": 1.0,
            "rho of linear attention": "rho(v M, B)",
        }
        title = "Figure 9: softmax learns the low-rank subspace, linear does not"
        return _record("fig9", title, panel, verdict, series=measured.series)


def figure9(
    *,
    links: list,
    d: int,
    rank: int,
    n: int,
    L: float,
    sigma: float,
    runs: int,
    segments: int,
    segment_steps: int,
    test_contexts: int,
    protocol: dict,
    linear_protocol: dict,
    init_scale: float,
    level: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 9: ``rho(M, B)`` and the held-out test error during pretraining of softmax (``protocol``) and linear
    attention (``linear_protocol``; ``rho(v M, B)``) on low-rank tasks with each link.  ``sign``, per link: the mean
    end-minus-start change of softmax's ``rho`` below zero (``level`` t-interval over ``runs`` runs), and each run's
    final error gap linear - softmax above zero (``+- z (se_lin + se_soft)``, valid whatever their correlation;
    ``z`` Bonferroni over runs and links at ``family_level``).  ``decide(shift, kind, gap_sign)``: the ``rho`` of
    ``kind`` falls by more than ``shift``; the gap on the side ``gap_sign``."""
    z = decision.bonferroni_z(len(links) * runs, family_level)
    problems = {link: make_problem(f"lowrank-{link}", d, n, L, sigma, rank=rank) for link in links}
    softmax = _Schedule(protocol, init_scale, segments, segment_steps, test_contexts)
    schedules = {"softmax": softmax, "linear": replace(softmax, protocol=linear_protocol)}
    fig = _Figure9(links=links, d=d, rank=rank, n=n, L=L, sigma=sigma, runs=runs, schedules=schedules, z=z, level=level)
    measured = fig.pretrain(problems, seed)

    def decide(shift: float = 0.0, kind: str = "softmax", gap_sign: int = +1) -> decision.Decision:
        falls = decision.signs(measured.changes[kind], -1, shift)
        return decision.combined("sign", falls + decision.signs(measured.gaps, gap_sign))

    return Outcome(
        decide=decide,
        quantities=fig.rows(measured),
        margin="0 (every interval on its predicted side)",
        rule=f"sign on the mean end-minus-start change of softmax's rho ({level:g} t-interval over runs) and on each "
        f"run's final error gap linear - softmax (+- z (se_lin + se_soft), z = {z:.2f}), {runs} runs per link and "
        "kind.",
        figure=fig.record(measured, decide().verdict),
    )


# ----------------------------------------------------------------------------- rebuttal: Eq. (4) heat maps
@dataclass(frozen=True)
class _Eq4:
    """The rebuttal figure's design: ``runs`` full layers trained on ``task`` tasks (``protocol`` from scale
    ``init_scale``) at each ``d`` of ``d_grid``, ``n = n_per_d d``, ``L``, ``sigma``; the ``level`` upper limit of
    the mean distance to the Eq. (4) form held to ``threshold``."""

    task: str
    d_grid: list
    n_per_d: int
    L: float
    sigma: float
    runs: int
    protocol: dict
    init_scale: float
    level: float
    threshold: float

    def layers(self, seed: np.random.SeedSequence) -> tuple[list, list]:
        """Per ``d``: ``W_K^T W_Q`` of the first of ``runs`` trained layers, every run's distance to the Eq. (4)
        form."""
        mats = []
        dists = []
        for d, stream in zip(self.d_grid, seed.spawn(len(self.d_grid))):
            problem = make_problem(self.task, d, self.n_per_d * d, self.L, self.sigma)
            layers = independent_runs(problem, stream, self.runs, init_scale=self.init_scale, **self.protocol)
            As = [geometry.kq_matrix(r.params) for _, r in layers]
            mats.append(As[0].tolist())
            dists.append([geometry.block_distance(A) for A in As])
        return mats, dists

    def quantities(self, dists: list, means, bounds: list) -> tuple:
        """Per ``d`` the mean distance to the Eq. (4) form, interval ``bounds``."""
        return tuple(
            Quantity.within(
                f"distance to the Eq. (4) form, d={d} ({self.level:g} upper limit)",
                mean,
                (lo, hi),
                theory=0.0,
                verdict=decision.one_sided(lo, hi, self.threshold, "<=").verdict,
                note=f"threshold {self.threshold}; runs " + ", ".join(f"{x:.4f}" for x in v),
            )
            for d, v, mean, (lo, hi) in zip(self.d_grid, dists, means, bounds)
        )

    def record(self, mats: list, dists: list, verdict: str) -> dict:
        """The record: settings panel, per ``d`` the first run's ``W_K^T W_Q`` and each run's distance."""
        panel = {
            "task": self.task,
            "d": list(self.d_grid),
            "n": [self.n_per_d * d for d in self.d_grid],
            "L": self.L,
            "sigma": self.sigma,
            "runs per d": self.runs,
            "shown": "W_K^T W_Q of the first run (rows and columns: x_1..x_d, label)",
            "training": f"{self.protocol}, start scale {self.init_scale}",
        }
        title = "Trained W_K^T W_Q on ReLU tasks: the Eq. (4) block form"
        return _record("eq4", title, panel, verdict, d=list(self.d_grid), matrices=mats, distance=dists)


def eq4_heatmaps(
    *,
    task: str,
    d_grid: list,
    n_per_d: int,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    init_scale: float,
    level: float,
    threshold: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """The rebuttal's figure: ``W_K^T W_Q`` of full layers trained on ``task`` tasks (``runs`` :func:`independent_runs`
    of ``protocol`` from scale ``init_scale``, ``n = n_per_d d``) for each ``d``, and its distance to the Eq. (4)
    form (:func:`lipschitz_icl.model.geometry.block_distance`).  ``one-sided``: for every ``d`` the ``level`` upper
    limit of
    the mean distance at most ``threshold`` (interval ``[min over runs, upper limit]``).  ``decide(floor)``: "a
    distance of at least ``floor``" at the ``d`` of the largest upper limit."""
    fig = _Eq4(
        task=task,
        d_grid=d_grid,
        n_per_d=n_per_d,
        L=L,
        sigma=sigma,
        runs=runs,
        protocol=protocol,
        init_scale=init_scale,
        level=level,
        threshold=threshold,
    )
    mats, dists = fig.layers(seed)
    means, _, highs = zip(*(mean_limits(v, level) for v in dists))
    bounds = [(min(*v, hi), hi) for v, hi in zip(dists, highs)]

    def decide(floor: float | None = None) -> decision.Decision:
        if floor is None:
            return decision.combined("one-sided", [decision.one_sided(lo, hi, threshold, "<=") for lo, hi in bounds])
        return decision.one_sided(*max(bounds, key=itemgetter(1)), floor, ">=")

    return Outcome(
        decide=decide,
        quantities=fig.quantities(dists, means, bounds),
        margin=f"<= {threshold} on the mean distance ({level:g} upper limit)",
        rule=f"one-sided: {level:g} upper limit of the mean distance to the Eq. (4) form over {runs} runs <= "
        f"{threshold}, for each d.",
        figure=fig.record(mats, dists, decide().verdict),
    )


# ----------------------------------------------------------------------------- Figure 6 (Lemma B.5)
@dataclass(frozen=True)
class _Cost:
    """The paired ICL error of the general ``M`` minus that of ``w* I``: its ``mean``, the ``half``-width of its
    interval and ``E(w* I)``."""

    mean: float
    half: float
    e_iso: float


@dataclass(frozen=True)
class _Figure6:
    """Figure 6 on the circle: its design (``task``, ``d``, ``n``, ``L``, ``sigma``, the general ``M``'s ``rotation``
    and ``anisotropy``, ``points`` of the angle grid, ``contexts``, the ``margin`` in radians) and what it finds:
    ``w*``, the general ``M``, the weight profiles on the angle grid of step ``step``, the attention ``centres``
    (``iso``: of ``w* I``; ``gen``: of ``M``) and their predicted directions (``theory``)."""

    task: str
    d: int
    n: int
    L: float
    sigma: float
    rotation: float
    anisotropy: float
    points: int
    contexts: int
    margin: float
    w: float
    M: np.ndarray
    angle: np.ndarray
    step: float
    profiles: dict
    centres: dict
    theory: dict

    def centre_rule(self, name: str, target: float) -> decision.Decision:
        """``equivalence`` of the centre ``name`` with ``target`` within ``+-margin`` (interval: one grid step)."""
        centre = self.centres[name]
        return decision.equivalence(centre - target - self.step, centre - target + self.step, self.margin)

    def quantities(self, cost: _Cost) -> tuple:
        """The two attention centres against their predicted directions, and ``E(M) - E(w* I)``."""
        rows = [
            _around(
                f"centre of the attention of {label} (radians from the query)",
                self.centres[name],
                self.step,
                theory=self.theory[name],
                verdict=self.centre_rule(name, self.theory[name]).verdict,
                note=note,
            )
            for name, label, note in (("iso", "w* I", ""), ("gen", "the general M", "theory: the direction of M q"))
        ]
        excess = f"must be > 0; E(w* I) = {cost.e_iso:.4g}"
        return (*rows, _around("ICL error of the general M minus that of w* I", cost.mean, cost.half, +1, note=excess))

    def settings(self) -> dict:
        """The settings panel."""
        return {
            "task": self.task,
            "d": self.d,
            "n": self.n,
            "L": self.L,
            "sigma": self.sigma,
            "w*": f"{self.w:.5g} (exact)",
            "general M": f"w* R({self.rotation:g}) diag({1 + self.anisotropy:g}, {1 - self.anisotropy:g})",
            "query": "q = (1, 0)",
            "centres": f"argmax over {self.points} grid points, +- one step",
            "ICL errors": f"task-averaged estimator, {self.contexts} common contexts",
        }

    def record(self, verdict: str) -> dict:
        """The figure record: the weight profiles on the circle and their centres."""
        return {
            "name": "fig6",
            **circle.profiles_shown(self.angle, self.profiles, self.points),
            "centre_isotropic": self.centres["iso"],
            "centre_general": self.centres["gen"],
            "centre_theory": self.theory["gen"],
            "M": self.M.tolist(),
            "verdict": verdict,
            "settings": self.settings(),
        }


def figure6(
    *,
    task: str,
    d: int,
    n: int,
    L: float,
    sigma: float,
    rotation: float,
    anisotropy: float,
    points: int,
    contexts: int,
    margin: float,
    family_level: float,
    seed: np.random.SeedSequence,
) -> Outcome:
    """Figure 6 (Lemma B.5) on the circle: the attention of ``M = w* R(rotation) diag(1 + a, 1 - a)`` centres on the
    direction of ``M q`` and costs ICL error; that of ``w* I`` centres on the query.  A centre is the grid point of
    largest weight, its interval one grid step either side (``exp(|Mq| cos(t - t_Mq))`` is unimodal).
    ``equivalence``: each centre within ``+-margin`` rad of its predicted direction; ``sign``: the general centre away
    from the query, and ``E(M) - E(w* I) > 0`` on its paired interval (common random numbers, Bonferroni ``z`` at
    ``family_level``).  ``decide(offset, centre)``: ``w* I``'s attention claimed ``offset`` rad from the query;
    ``centre = "query"``: the general ``M`` centres on the query too (the rival of an isotropic picture)."""
    problem = make_problem(task, d, n, L, sigma)
    w = wstar(problem, "exact").w_star.value
    M = circle.general_window(w, rotation, anisotropy)
    angle, step, profiles, centres = circle.centres(M, w, points)
    fig = _Figure6(
        task=task,
        d=d,
        n=n,
        L=L,
        sigma=sigma,
        rotation=rotation,
        anisotropy=anisotropy,
        points=points,
        contexts=contexts,
        margin=margin,
        w=w,
        M=M,
        angle=angle,
        step=step,
        profiles=profiles,
        centres=centres,
        theory={"iso": 0.0, "gen": math.atan2(float(M[1, 0]), float(M[0, 0]))},
    )
    z = decision.bonferroni_z(1, family_level)
    (mean, se), e_iso = paired_error_cost(problem, M, w, contexts, seed)
    costlier = decision.sign(mean - z * se, mean + z * se, +1)

    def decide(offset: float = 0.0, centre: str = "Mq") -> decision.Decision:
        gen = fig.centre_rule("gen", fig.theory["gen"] if centre == "Mq" else 0.0)
        away = decision.sign(centres["gen"] - step, centres["gen"] + step, 1 if fig.theory["gen"] > 0 else -1)
        parts = [fig.centre_rule("iso", offset), gen] + ([away, costlier] if centre == "Mq" else [])
        return decision.combined("equivalence", parts)

    return Outcome(
        decide=decide,
        margin=f"+-{margin:g} rad on each centre; E(M) - E(w* I) > 0",
        rule=f"equivalence of each centre with its predicted direction within +-{margin:g} rad (interval: one grid "
        f"step of {step:.2g}); sign of the general centre and of E(M) - E(w* I) (paired, z = {z:.2f}).",
        quantities=fig.quantities(_Cost(mean=mean, half=z * se, e_iso=e_iso)),
        figure=fig.record(decide().verdict),
    )
