"""Theorem 3.5: pretrained attention generalises to unseen ``L``-Lipschitz tasks; a mismatched ``L'``
does worse (Section 3.2, Figure 5).  Registry: ``claims/thm35.toml`` (statements, rules, every design
number, resolutions, alternatives).

Pretrained attention is ``M = w* I`` (``w*`` the exact optimum of the affine or relu class at
``(n, L, sigma)``) or the trainer's ``M``, tested on the probes of :mod:`lipschitz_icl.estimators.probes` (all
``L``-Lipschitz on the sphere, most never seen in pretraining).  Theory numbers (the Lipschitz envelope,
the noise series, the cost of a mismatched window, a window's error on another class) come from
:mod:`lipschitz_icl.derivations.generalisation` and :mod:`lipschitz_icl.derivations.window_law`.
Measured: :func:`lipschitz_icl.estimators.probes.probe_terms` and :func:`~lipschitz_icl.estimators.probes.noise_terms`
(Monte
Carlo, label noise integrated out, all models on common random numbers, independent draws per ``n``);
intervals are standard errors times a Bonferroni ``z`` at the claim's family-wise level.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.derivations import generalisation as theory
from lipschitz_icl.derivations import window_law as law
from lipschitz_icl.estimate import log_slope, mean_se
from lipschitz_icl.estimators.pretraining import setting_runs
from lipschitz_icl.estimators.probes import (
    CosineProbe,
    noise_terms,
    probe_errors_along_n,
    probe_log_ratios,
    probe_suite,
    probe_terms,
)
from lipschitz_icl.gates.evidence import Outcome, Quantity, plot
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem
from lipschitz_icl.runtime.trained import train_all

__all__ = [
    "generalisation",
    "envelope",
    "noise_part",
    "mismatch",
    "mismatch_marked",
    "same_l_classes",
    "trained_mismatch",
]


def _wstar(task: str, d: int, n: int, L: float, sigma: float) -> float:
    """The exact optimum ``w*``; raises if the exact search stopped at its bound (not converged)."""
    result = wstar(make_problem(task, d, n, L, sigma), "exact")
    if result.at_search_bound:
        raise RuntimeError(f"exact w* for {task}, d={d}, n={n} stopped at its search bound")
    return result.w_star.value


def _band(r: float, se: float, z: float) -> tuple[float, float]:
    return r - z * se, r + z * se


def _band_series(label: str, x: list, rows, z: float) -> dict:
    """A figure series of means ``m`` with bands ``m +- z se`` from ``rows = [(m, se), ...]``."""
    low, high = ([_band(m, se, z)[i] for m, se in rows] for i in (0, 1))
    return {"label": label, "x": x, "y": [m for m, _ in rows], "y_low": low, "y_high": high}


# ----------------------------------------------------------------------------- generalisation
def _rates(train_task: str, d: int) -> dict:
    """``rate -> (bound on the slope at the two largest n, relation)``: the claim's envelope rate
    ``n^-alpha`` and the competing statements the registry's alternatives name."""
    alpha = law.window_law(train_task, d)[0]
    own = law.min_error_law(train_task, d)[0]  # E* ~ n^(-p alpha), the pretraining class's own rate
    return {"envelope": (-alpha, "<="), "envelope-only": (-alpha, ">="), "own-class": (own, "<="), "flat": (0.0, ">=")}


def _probe_slopes(loss, pairs, z) -> dict[str, list[tuple[float, float]]]:
    """Per probe, the local log-log slope interval ``s +- z se`` of the error between each pair of consecutive ``n``."""
    return {
        name: [_band(*log_slope(pair, *zip(*rows[k : k + 2])), z) for k, pair in enumerate(pairs)]
        for name, rows in loss.items()
    }


def _generalisation_quantities(
    slopes: dict[str, list[tuple[float, float]]], pairs, alpha, loss, n_grid, w_grid
) -> tuple:
    """The last slope of each probe against the envelope rate ``-alpha``, and the fitted growth exponent of ``w*``."""
    quantities = [
        Quantity.within(
            f"{name}: slope of log error vs log n (n = {pairs[-1][0]}..{pairs[-1][1]})",
            sum(s[-1]) / 2,
            s[-1],
            theory=-alpha,
            verdict=decision.one_sided(*s[-1], -alpha).verdict,
            note="theory: the envelope rate -alpha (a bound); errors " + ", ".join(f"{m:.3g}" for m, _ in loss[name]),
        )
        for name, s in slopes.items()
    ]
    quantities.append(
        Quantity(
            name="w* growth exponent over the grid (window law)",
            theory=alpha,
            measured=float(np.polyfit(np.log(n_grid), np.log(w_grid), 1)[0]),
            note="w* = " + ", ".join(f"{w:.4g}" for w in w_grid) + " (exact quadrature)",
        )
    )
    return tuple(quantities)


def _envelope_figure(
    *,
    train_task: str,
    d: int,
    L: float,
    sigma: float,
    n_grid: list,
    w_grid: list[float],
    loss: dict,
    z: float,
) -> tuple[list, dict]:
    """The envelope-plus-noise curve ``envelope_bias(w*) + noise_series(w*, n)`` at each ``n`` of ``n_grid`` (``w*``
    from ``w_grid``) and the log-log figure of the probes' errors ``loss`` (bands ``+- z se``) beside it."""
    x = list(map(float, n_grid))
    envelope_curve = [
        theory.envelope_bias(d, w, L) + theory.noise_series(d, w, n, sigma) for n, w in zip(n_grid, w_grid)
    ]
    series = [_band_series(name, x, rows, z) for name, rows in loss.items()]
    series += [{"label": "Lipschitz envelope + noise (theory)", "x": x, "y": envelope_curve}]
    title = f"pretrained on {train_task} tasks, tested on the probes"
    figure = plot("loglog", x, envelope_curve, "$n$", "ICL error", series=series, title=title)
    return envelope_curve, figure


def generalisation(
    *,
    train_task: str,
    d: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    n_grid: list,
    contexts: list,
    probes: dict,
    family_level: float,
) -> Outcome:
    """The ICL error of the pretrained window ``w*(n) I`` on every probe falls at least as fast as the
    Lipschitz envelope ``n^-alpha`` (``alpha`` the pretraining class's window exponent).

    ``one-sided`` rule on each probe's local log-log slope (:func:`~lipschitz_icl.estimate.log_slope`, interval
    ``s +- z se``, Bonferroni over probes and pairs): ``<= 0`` between consecutive ``n``, ``<= -alpha`` between the
    two largest.  ``decide(shift, rate)``: the bound ``-(alpha + shift)``, or a competing rate of :func:`_rates`.
    """
    suite = probe_suite(d, L, **probes)
    alpha = law.window_law(train_task, d)[0]
    w_grid = [_wstar(train_task, d, n, L, sigma) for n in n_grid]
    loss = probe_errors_along_n(suite, w_grid, n_grid, sigma, contexts, seed)
    pairs = list(itertools.pairwise(n_grid))
    z = decision.bonferroni_z(len(suite) * len(pairs), family_level)
    rates = _rates(train_task, d)
    slopes = _probe_slopes(loss, pairs, z)

    def decide(shift: float = 0.0, rate: str = "envelope") -> decision.Decision:
        bound, relation = rates[rate]
        falling = "<=" if rate != "flat" else ">="
        checks = [decision.one_sided(*s[-1], bound - shift, relation) for s in slopes.values()]
        checks += [decision.one_sided(*e, 0.0, falling) for s in slopes.values() for e in s[:-1]]
        return decision.combined("one-sided", checks)

    envelope_curve, figure = _envelope_figure(
        train_task=train_task, d=d, L=L, sigma=sigma, n_grid=n_grid, w_grid=w_grid, loss=loss, z=z
    )
    return Outcome(
        decide=decide,
        quantities=_generalisation_quantities(slopes, pairs, alpha, loss, n_grid, w_grid),
        margin=f"none (a bound): slope <= -alpha = {-alpha:.4g}",
        rule=f"one-sided on local log-log slopes (Monte Carlo, z = {z:.2f}, Bonferroni at {family_level:g}): <= 0 "
        f"between consecutive n, <= -alpha = {-alpha:.4g} between the two largest; n = {list(n_grid)}, "
        f"contexts {list(contexts)}.",
        figure=figure,
        extra={
            "n": list(n_grid),
            "w_star": w_grid,
            "alpha": alpha,
            "envelope": envelope_curve,
            "slopes": {k: [sum(b) / 2 for b in v] for k, v in slopes.items()},
        },
    )


# ----------------------------------------------------------------------------- the Lipschitz envelope
def _max_ratio(bias, env, rel) -> tuple[float, float, float]:
    """``(low, value, high)`` of ``max_c bias_c / env_c`` with each ratio's relative rounding ``rel_c``."""
    ratio = bias / env
    return float(np.max(ratio * (1 - rel))), float(np.max(ratio)), float(np.max(ratio * (1 + rel)))


def _envelope_quantities(ratios) -> tuple:
    """Per probe, ``max_c bias_c / (L^2 env_c)`` for the Jensen envelope (bound 1), the centre-of-mass one beside it."""
    return tuple(
        Quantity.within(
            f"{name}: max over contexts of bias_c / (L^2 sum p |x - q|^2)",
            r,
            (low, high),
            theory=1.0,
            verdict=decision.one_sided(low, high, 1.0).verdict,
            note=f"must be <= 1; centre-of-mass envelope: {ratios['centroid'][name][1]:.3g}",
        )
        for name, (low, r, high) in ratios["jensen"].items()
    )


def envelope(
    *,
    train_task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    probes: dict,
) -> Outcome:
    """Identity check: in every sampled context and on every probe the bias of the pretrained window is at
    most the Lipschitz (Jensen) envelope ``L^2 sum_i p_i ||x_i - q||^2``.

    Measured: ``max_c bias_c / (L^2 env_c)`` per probe; a counterexample is exact, its interval the rounding
    of the ``n``-term sums (``n eps`` each; the centre-of-mass envelope ``||sum p_i x_i - q||^2`` adds the
    cancellation ``2 n eps / ||sum p_i x_i - q||``).  ``one-sided`` rule: ``<= 1`` on every probe.
    ``decide(tightening, envelope)``: the bound ``1/(1 + tightening)``, or the envelope ``centroid``.
    """
    (stream,) = seed.spawn(1)
    w = _wstar(train_task, d, n, L, sigma)
    suite = probe_suite(d, L, **probes)
    rng = np.random.default_rng(stream)
    terms, (env,) = probe_terms(suite, [Attention.isotropic(w, d)], n, sigma, contexts, rng, envelope=True)
    eps = n * np.finfo(float).eps
    rel = {"jensen": 2 * eps, "centroid": eps * (1 + 2 / np.sqrt(env["centroid"]))}
    ratios = {
        kind: {name: _max_ratio(b, L**2 * env[kind], rel[kind]) for name, ((b, _),) in terms.items()} for kind in env
    }

    def decide(tightening: float = 0.0, envelope: str = "jensen") -> decision.Decision:
        return decision.combined(
            "one-sided",
            [decision.one_sided(low, high, 1 / (1 + tightening)) for low, _, high in ratios[envelope].values()],
        )

    return Outcome(
        decide=decide,
        quantities=_envelope_quantities(ratios),
        margin="none (a bound): ratio <= 1",
        rule=f"one-sided: max over {contexts} contexts of bias_c/(L^2 env_c) <= 1 on every probe (interval: rounding, "
        f"n eps = {eps:.1e} relative per sum); w* = {w:.5g} exact.",
        extra={"w_star": w, "max_ratio": {k: {p: v[1] for p, v in r.items()} for k, r in ratios.items()}},
    )


# ----------------------------------------------------------------------------- the noise part
def _noise_rows(
    *,
    train_task: str,
    d: int,
    L: float,
    sigma: float,
    n_grid: list,
    contexts: list,
    seed: np.random.SeedSequence,
    z: float,
) -> list:
    """At each ``n`` of ``n_grid``: ``(n, w*, noise part +- z se)`` of the window ``w*(n) I`` pretrained on
    ``train_task`` (Monte Carlo on ``contexts[k]`` contexts of the ``k``-th stream spawned from ``seed``)."""
    rows = []
    for n, c, stream in zip(n_grid, contexts, seed.spawn(len(n_grid))):
        w = _wstar(train_task, d, n, L, sigma)
        (samples,) = noise_terms([Attention.isotropic(w, d)], d, n, sigma, c, np.random.default_rng(stream))
        rows.append((n, w, _band(*mean_se(samples), z)))
    return rows


def noise_part(
    *,
    train_task: str,
    d: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    n_grid: list,
    contexts: list,
    margin: float,
    family_level: float,
) -> Outcome:
    """The noise part of the ICL error with the pretrained window (the same on every probe: the weights
    do not depend on the task) follows the derived series ``sigma^2 (R_d(w*)/n + c_q w*^(d-1)/n^2)``.

    ``equivalence`` at every ``n``: the interval of ``measured/theory - 1`` (``z`` Bonferroni over the grid)
    within ``+-margin``.  ``decide(change, series)``: ``(1 + change)`` times the series ``series``
    (:func:`lipschitz_icl.derivations.generalisation.noise_series`).
    """
    z = decision.bonferroni_z(len(n_grid), family_level)
    rows = _noise_rows(train_task=train_task, d=d, L=L, sigma=sigma, n_grid=n_grid, contexts=contexts, seed=seed, z=z)

    def checks(change: float = 0.0, series: str = "derived") -> list:
        out = []
        for n, w, band in rows:
            low, high = np.array(band) / ((1 + change) * theory.noise_series(d, w, n, sigma, series)) - 1
            out.append(decision.equivalence(low, high, margin))
        return out

    quantities = tuple(
        Quantity.within(
            f"noise part at n={n} (w*={w:.4g})",
            sum(band) / 2,
            band,
            theory=theory.noise_series(d, w, n, sigma),
            verdict=dec.verdict,
            note=f"relative margin +-{margin:g}; first-order sigma^2 R_d/n = "
            f"{theory.noise_series(d, w, n, sigma, 'first-order'):.4g}",
        )
        for (n, w, band), dec in zip(rows, checks())
    )
    return Outcome(
        decide=lambda **kw: decision.combined("equivalence", checks(**kw)),
        quantities=quantities,
        margin=f"+-{margin:g} relative",
        extra={"n": list(n_grid), "w_star": [w for _, w, _ in rows]},
        rule=f"equivalence on measured/theory - 1 within +-{margin:g} at n = {list(n_grid)} (Monte Carlo, "
        f"contexts {list(contexts)}, z = {z:.2f}).",
    )


# ----------------------------------------------------------------------------- the L mismatch (Figure 5)
@dataclass(frozen=True)
class _Panel:
    """A Figure 5 comparison: per probe and compared model the paired log error ratio ``(r, se)`` against the
    ``"matched"`` model and the errors (:func:`~lipschitz_icl.estimators.probes.probe_log_ratios`), the models' labels,
    the gated probes and the Bonferroni ``z``."""

    ratios: dict
    errors: dict
    labels: dict
    gated: list
    z: float

    def figure(self, title: str) -> dict:
        """The figure of the errors of every model on every probe, with bands ``+- z se``."""
        probes = list(self.errors)
        x = list(range(len(self.errors)))
        series = [
            _band_series(label, x, [self.errors[p][k] for p in probes], self.z) for k, label in self.labels.items()
        ]
        axis = ", ".join(f"{i} {p}" for i, p in enumerate(probes))
        for long, short in (("cosine-", "cos"), ("triangle-", "tri"), ("distance-", "dist")):
            axis = axis.replace(long, short)
        return plot("scatter", x, series[0]["y"], "test task: " + axis, "ICL error", series=series, title=title)

    def outcome(self, rule_name, one, *, rule, margin, title, extra, predicted=None) -> Outcome:
        """The claim's outcome: ``one(r, se, key, **deviation)`` (its rule on one log error ratio, a list of
        decisions) on every gated ratio, combined; a row per probe and compared model (the error ratio ``exp(r)``
        with its interval, verdicts on the gated probes only); the figure of the errors."""

        def decide(**deviation) -> decision.Decision:
            checks = [
                c for p in self.gated for k, (r, se) in self.ratios[p].items() for c in one(r, se, k, **deviation)
            ]
            return decision.combined(rule_name, checks)

        quantities = tuple(
            Quantity.within(
                f"{p}: error ratio E({self.labels[k]})/E({self.labels['matched']})",
                math.exp(r),
                (math.exp(r - self.z * se), math.exp(r + self.z * se)),
                theory=(predicted or {}).get((p, k)),
                verdict=decision.combined(rule_name, one(r, se, k)).verdict if p in self.gated else None,
                note="gated" if p in self.gated else "reported only (not a Figure 5 class)",
            )
            for p, row in self.ratios.items()
            for k, (r, se) in row.items()
        )
        errors = {p: {k: v[0] for k, v in row.items()} for p, row in self.errors.items()}
        extra = {**extra, "errors": errors}
        return Outcome(
            decide=decide, quantities=quantities, rule=rule, margin=margin, figure=self.figure(title), extra=extra
        )


def _mismatch_labels(factor: float, suffix: str = "") -> dict:
    """The labels of the models pretrained at ``L' = L``, ``L/factor`` and ``factor L``."""
    f = f"{factor:g}"
    return {"matched": f"L' = L{suffix}", "smaller": f"L' = L/{f}{suffix}", "larger": f"L' = {f}L{suffix}"}


def _sign_rule(z: float):
    """The rule of :func:`mismatch` on one log ratio ``r +- z se``: ``sign`` ``r > shift``; the expected sign
    of each ``L'`` (``-1``: that ``L'`` claimed better); ``within > 0``: ``|r| < log(1 + within)``."""

    def one(r, se, key, shift=0.0, within=0.0, smaller=+1, larger=+1) -> list:
        low, high = _band(r, se, z)
        if within:
            m = math.log1p(within)
            return [decision.sign(low - m, high - m, -1), decision.sign(low + m, high + m, +1)]
        return [decision.sign(low - shift, high - shift, {"smaller": smaller, "larger": larger}[key])]

    return one


def _sign_outcome(panel: _Panel, contexts: int, how: str, title: str, extra: dict) -> Outcome:
    """:func:`mismatch`'s rule (:func:`_sign_rule` on every gated ratio) on ``panel``; ``how`` ends the rule text."""
    return panel.outcome(
        "sign",
        _sign_rule(panel.z),
        rule=f"sign of log(E_L'/E_L) on {', '.join(panel.gated)} ({contexts} contexts, common random numbers, "
        f"z = {panel.z:.2f}{how}",
        margin="none (a direction): log(E_L'/E_L) > 0",
        title=title,
        extra=extra,
    )


def _affine_mismatch(
    *,
    d: int,
    n: int,
    L: float,
    sigma: float,
    factor: float,
    probes: dict,
    contexts: int,
    seed: np.random.SeedSequence,
    gated: list,
    z: float,
) -> tuple[dict, _Panel]:
    """Exact ``w*`` of affine pretraining at ``L`` (matched), ``L/factor`` and ``factor L``, and the panel of their
    log error ratios and errors on the probes of :func:`~lipschitz_icl.estimators.probes.probe_suite` at ``L``
    (``probes`` its options; :func:`~lipschitz_icl.estimators.probes.probe_log_ratios` on ``contexts`` contexts of
    one stream spawned from ``seed``), ``gated`` and ``z`` passed to the panel."""
    (stream,) = seed.spawn(1)
    pretrained_at = (("matched", L), ("smaller", L / factor), ("larger", L * factor))
    ws = {k: _wstar("affine", d, n, x, sigma) for k, x in pretrained_at}
    models = {k: Attention.isotropic(w, d) for k, w in ws.items()}
    ratios, errors = probe_log_ratios(models, probe_suite(d, L, **probes), n, sigma, contexts, stream)
    return ws, _Panel(ratios, errors, _mismatch_labels(factor), gated, z)


def mismatch(
    *,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    factor: float,
    probes: dict,
    gated: list,
    family_level: float,
) -> Outcome:
    """Figure 5 with ``M = w* I``: attention pretrained on affine tasks at ``L' = L/factor`` or ``factor L`` has a
    larger ICL error on ``L``-tasks of the ``gated`` (Figure 5) classes than the one pretrained at ``L``.

    ``sign`` rule (:func:`_sign_rule`) on every gated paired log ratio ``log(E_L'/E_L)``
    (:func:`~lipschitz_icl.estimate.paired_log_ratio`, Bonferroni over the gated comparisons); the other probes'
    ratios are reported, not gated."""
    z = decision.bonferroni_z(2 * len(gated), family_level)
    ws, panel = _affine_mismatch(
        d=d, n=n, L=L, sigma=sigma, factor=factor, probes=probes, contexts=contexts, seed=seed, gated=gated, z=z
    )
    how = f", Bonferroni at {family_level:g}); w* exact: " + ", ".join(f"{w:.4g}" for w in ws.values())
    return _sign_outcome(panel, contexts, how, "Figure 5: pretraining setting vs test task", {"w_star": ws})


def trained_mismatch(
    *,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    factor: float,
    probes: dict,
    gated: list,
    family_level: float,
    protocol: dict,
) -> Outcome:
    """Figure 5 with trained attention: the M-form pretrained by the trainer (``protocol``, one run each, own
    streams) on affine tasks at ``L``, ``L/factor`` and ``factor L``, tested with the rule of :func:`mismatch`."""
    streams = seed.spawn(4)
    settings = {"matched": L, "smaller": L / factor, "larger": L * factor}
    runs = [
        run
        for LL, stream in zip(settings.values(), streams)
        for run in setting_runs(make_problem("affine", d, n, LL, sigma), stream, 1)
    ]
    trained = [result for _, result in train_all(runs, **protocol)]  # the three settings side by side
    models = {key: Attention(result.M) for key, result in zip(settings, trained)}
    ws = {key: result.w_trained for key, result in zip(settings, trained)}
    ratios, errors = probe_log_ratios(models, probe_suite(d, L, **probes), n, sigma, contexts, streams[3])
    z = decision.bonferroni_z(2 * len(gated), family_level)
    panel = _Panel(ratios, errors, _mismatch_labels(factor, " (trained)"), gated, z)
    how = f"); one trainer run per setting ({protocol})"
    return _sign_outcome(panel, contexts, how, "Figure 5 with trained attention", {"w_trained": ws})


def _required_factors(d: int, factor: float, marked_factor: float, marked_margin: float) -> tuple[dict, dict]:
    """The derived leading-order ratios ``E'/E`` at ``lambda = factor^(+-2 alpha)`` (affine), and the required factor
    per rule: ``conditional`` (``marked_factor`` where the ratio is ``>= marked_margin marked_factor``, else 1),
    ``unconditional``, ``derived``."""
    alpha = law.window_law("affine", d)[0]
    beta = law.noise_leading(d)[0]
    p_aff = -law.bias_leading("affine", d)[0]
    derived = {
        k: theory.mismatch_ratio(factor ** (s * 2 * alpha), p_aff, beta) for k, s in (("smaller", -1), ("larger", +1))
    }
    factors = {
        "conditional": {k: marked_factor if v >= marked_margin * marked_factor else 1.0 for k, v in derived.items()},
        "unconditional": dict.fromkeys(derived, marked_factor),
        "derived": derived,
    }
    return derived, factors


def mismatch_marked(
    *,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    factor: float,
    probes: dict,
    gated: list,
    family_level: float,
    marked_factor: float,
    marked_margin: float,
) -> Outcome:
    """Exploratory: the mismatched error is at least ``marked_factor`` times the matched one where the derived
    leading-order ratio (:func:`lipschitz_icl.derivations.generalisation.mismatch_ratio`,
    ``lambda = factor^(+-2 alpha)``) is at least
    ``marked_margin x marked_factor``; elsewhere only larger (factor 1).

    ``one-sided`` rule ``log(E'/E) >= log(required) + shift`` on the gated classes.  ``decide(shift,
    required)``: ``"unconditional"`` asks ``marked_factor`` everywhere, ``"derived"`` the derived ratio itself.
    """
    z = decision.bonferroni_z(2 * len(gated), family_level)
    ws, panel = _affine_mismatch(
        d=d, n=n, L=L, sigma=sigma, factor=factor, probes=probes, contexts=contexts, seed=seed, gated=gated, z=z
    )
    derived, factors = _required_factors(d, factor, marked_factor, marked_margin)

    def one(r, se, k, shift=0.0, required="conditional") -> list:
        return [decision.one_sided(*_band(r, se, z), math.log(factors[required][k]) + shift, ">=")]

    labels = _mismatch_labels(factor)
    required = ", ".join(f"{labels[k]}: {v:g}" for k, v in factors["conditional"].items())
    return panel.outcome(
        "one-sided",
        one,
        rule=f"one-sided: log(E_L'/E_L) >= log(required factor) on {', '.join(gated)} ({contexts} "
        f"contexts, z = {z:.2f}); required factors {required}; derived ratios "
        + ", ".join(f"{labels[k]}: {v:.3g}" for k, v in derived.items()),
        margin=f"required factors {required}",
        title="Figure 5: pretraining setting vs test task",
        extra={"w_star": ws, "derived_ratio": derived, "required_factor": factors["conditional"]},
        predicted={("affine", k): v for k, v in derived.items()},
    )


def _class_ratios(suite, gated, *, d: int, n: int, L: float, sigma: float, ws: dict) -> dict:
    """Per gated probe, the ratio ``class_error(w*_relu) / class_error(w*_affine)`` the derivation predicts."""
    classes = {
        p.name: ("cosine", p.frequency) if isinstance(p, CosineProbe) else (getattr(p, "kind", ""), 1.0)
        for p in suite
        if p.name in gated
    }
    return {
        (name, "relu"): theory.class_error(kind, d, n=n, L=L, sigma=sigma, w=ws["relu"], frequency=k)
        / theory.class_error(kind, d, n=n, L=L, sigma=sigma, w=ws["affine"], frequency=k)
        for name, (kind, k) in classes.items()
    }


def same_l_classes(
    *,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    probes: dict,
    gated: list,
    max_ratio: float,
    family_level: float,
) -> Outcome:
    """Figure 5, right panel: pretrained at the same ``L`` on relu instead of affine tasks, the attention's ICL
    error on the gated (Figure 5) classes changes by at most a factor ``max_ratio``.

    ``equivalence`` on the paired log ratios ``log(E_relu@L/E_affine@L)``: within ``+-log max_ratio``.
    ``decide(shift, ratio)``: the ratio claimed to be ``ratio e^shift``.  Theory column: the ratio
    :func:`~lipschitz_icl.derivations.generalisation.class_error` predicts at the two exact windows.
    """
    (stream,) = seed.spawn(1)
    suite = probe_suite(d, L, **probes)
    ws = {k: _wstar(k, d, n, L, sigma) for k in ("affine", "relu")}
    models = {"matched": Attention.isotropic(ws["affine"], d), "relu": Attention.isotropic(ws["relu"], d)}
    z = decision.bonferroni_z(len(gated), family_level)
    margin = math.log(max_ratio)
    labels = {"matched": "affine@L", "relu": "relu@L"}
    panel = _Panel(*probe_log_ratios(models, suite, n, sigma, contexts, stream), labels, gated, z)
    predicted = _class_ratios(suite, gated, d=d, n=n, L=L, sigma=sigma, ws=ws)

    def one(r, se, _key, shift=0.0, ratio=1.0) -> list:
        low, high = np.array(_band(r, se, z)) - math.log(ratio) - shift
        return [decision.equivalence(low, high, margin)]

    return panel.outcome(
        "equivalence",
        one,
        rule=f"equivalence of log(E_relu@L/E_affine@L) within +-log {max_ratio:g} on {', '.join(gated)} "
        f"({contexts} contexts, common random numbers, z = {z:.2f}); w* = {ws['affine']:.4g} "
        f"(affine), {ws['relu']:.4g} (relu), exact",
        margin=f"+-log {max_ratio:g} = +-{margin:.4g} on the log ratio",
        title="Figure 5 (right): same L, other class",
        predicted=predicted,
        extra={"w_star": ws, "predicted_ratio": {p: v for (p, _), v in predicted.items()}},
    )
