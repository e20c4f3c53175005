"""Linear attention cannot adapt (the paper's linear-attention section, Figure 1).  Registry: ``claims/linear.toml``.

With the identity activation, ``yhat(q) = (1/n) sum_i y_i x_i^T M q`` (value weight absorbed), the optimum
over ``M`` is ``m* I`` with ``m* = a1/a2`` from the quadratic ``E_lin(m) = m^2 a2 - 2 m a1 + a0`` derived in
:mod:`lipschitz_icl.derivations.linear_attention`; as ``n -> inf`` ``m* -> d`` for every ``L`` and ``sigma``
and the error tends to ``k(1) - d B > 0``.  The weights ``(m/n) x_i . q`` have a fixed profile in ``x_i . q``;
only their scale ``m`` is free, and the optimal scale does not follow ``L`` (softmax's ``w*`` grows as
``L^(2 alpha)``).  Measured by Monte Carlo (:mod:`lipschitz_icl.estimators.linear_scale`), the exact softmax ``w*``
and the
trainer (:mod:`lipschitz_icl.estimators.trained_scale`); every stream is spawned from the case's seed.
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl import decision
from lipschitz_icl.decision import Decision, labelled
from lipschitz_icl.derivations import linear_attention as lin
from lipschitz_icl.derivations import window_law as wlaw
from lipschitz_icl.estimate import Estimate, pilot_sample_size, relative_interval
from lipschitz_icl.estimators.linear_scale import base_differences, linear_loss, m_hat, scale_elasticity
from lipschitz_icl.estimators.pretraining import noise_floor
from lipschitz_icl.estimators.trained_scale import TrainedRuns, relative_scale_equivalence
from lipschitz_icl.gates.evidence import Outcome, Quantity
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.model import geometry
from lipschitz_icl.optimum import wstar, wstar_elasticities
from lipschitz_icl.problem import make_problem
from lipschitz_icl.runtime.trained import trained_runs

__all__ = ["optimum", "isotropic", "cannot_adapt", "error_floor", "weights", "trained"]


def other_class(task: str) -> str:
    """The class whose derived linear-attention limit is the nearest rival (affine <-> relu; cosine -> affine)."""
    return {"affine": "relu", "relu": "affine", "cosine": "affine"}[task]


def law_values(task: str, d: int, n: int, L: float, sigma: float, law: str = "derived") -> tuple[float, float]:
    """``(m, E)`` of the optimal linear attention under ``law``: ``derived`` ``m* = a1/a2`` and
    ``E_lin = a0 - a1^2/a2``; ``noiseless`` the same with ``sigma = 0`` (a rival derivation that forgets the
    label noise in ``a2``); ``limit`` the ``n -> inf`` values ``d`` and ``k(1) - d B`` at every ``n``."""
    if law == "limit":
        return lin.linear_limit(task, d, L)
    return lin.linear_optimum(task, d, n, L, 0.0 if law == "noiseless" else sigma)


def _relative(name: str, value: float, half_width: float, target: float, **kw) -> Quantity:
    """A row ``value / target - 1`` (theory 0) with its interval :func:`relative_interval`."""
    return Quantity.within(name, value / target - 1, relative_interval(value, half_width, target), theory=0.0, **kw)


def _z_interval(value: float, standard_error: float, z: float) -> tuple[float, float]:
    """``value -+ z se``."""
    return value - z * standard_error, value + z * standard_error


def _loglog(series: list, xlabel: str, ylabel: str) -> dict:
    """A log-log figure record of ``series``, the first one's ``x``, ``y`` (and ``theory_y``) at the top."""
    first = {key: series[0][key] for key in ("x", "y", "theory_y") if key in series[0]}
    return {"kind": "loglog", **first, "series": series, "xlabel": xlabel, "ylabel": ylabel}


# ----------------------------------------------------------------------------- the optimum m* I
def optimum_decision(m_hats, m_claims, losses, e_claims, *, z: float, m_margin: float, e_margin: float) -> Decision:
    """Equivalence at every ``n``: ``[m_hat +- z se] / m_claim - 1`` within ``+-m_margin`` and
    ``[E +- z se] / e_claim - 1`` within ``+-e_margin``; combined.

    Per ``n``: ``m_hats`` the measured optimum ``m_hat`` and ``losses`` the measured loss ``E`` at ``m* I``
    (``(value, se)`` pairs), ``m_claims`` and ``e_claims`` the claimed ``m*`` and loss; ``z`` the interval's
    multiple of the standard error, ``m_margin`` and ``e_margin`` the relative equivalence margins."""
    decisions = []
    for k, ((mh, ms), mc, (e, es), ec) in enumerate(zip(m_hats, m_claims, losses, e_claims)):
        decisions.append(labelled(f"m #{k}", decision.equivalence(*relative_interval(mh, z * ms, mc), m_margin)))
        decisions.append(labelled(f"E #{k}", decision.equivalence(*relative_interval(e, z * es, ec), e_margin)))
    return decision.combined("equivalence", decisions)


def _optimum_estimates(
    *,
    task: str,
    d: int,
    n_grid: list,
    L: float,
    sigma: float,
    derived: list[tuple[float, float]],
    pilot: int,
    contexts: list,
    half_width: float,
    z: float,
    streams: list[np.random.SeedSequence],
) -> tuple[list, list, list[int]]:
    """At each ``n`` of ``n_grid``: ``(m_hat, se)`` on a sample sized from an independent ``pilot`` for the relative
    half-width ``half_width``, the loss ``(E, se)`` at ``m* I`` (``m*`` from the ``derived`` ``(m*, E_lin)`` pairs)
    on as many contexts, and that sample size (streams ``3k`` pilot, ``3k + 1`` ``m_hat``, ``3k + 2`` loss)."""
    m_hats = []
    losses = []
    sizes = []
    for k, (n, (m_star, _)) in enumerate(zip(n_grid, derived)):
        problem = make_problem(task, d, n, L, sigma)
        m_pilot, se_pilot = m_hat(problem, pilot, streams[3 * k])
        sizes.append(pilot_sample_size(se_pilot * math.sqrt(pilot) / abs(m_pilot), z, half_width, contexts))
        m_hats.append(m_hat(problem, sizes[-1], streams[3 * k + 1]))
        losses.append(linear_loss(problem, m_star, sizes[-1], streams[3 * k + 2]))
    return m_hats, losses, sizes


def _optimum_quantities(
    *,
    task: str,
    d: int,
    n_grid: list,
    L: float,
    sigma: float,
    m_hats: list,
    losses: list,
    derived: list[tuple[float, float]],
    z: float,
) -> tuple[Quantity, ...]:
    """``m_hat/m* - 1`` and ``E(m* I)/E_lin - 1`` at each ``n`` (intervals ``+- z se``; ``(m*, E_lin)`` from the
    ``derived`` pairs), and ``m*`` at the largest ``n`` (a constant)."""
    quantities = []
    for n, (mh, ms), (m_star, e_star), (e, es) in zip(n_grid, m_hats, derived, losses):
        quantities += [
            _relative(f"m_hat / m* - 1 at n={n}", mh, z * ms, m_star, note=f"m* = {m_star:.5g} (derived)"),
            _relative(f"E(m* I) / E_lin - 1 at n={n}", e, z * es, e_star, note=f"E_lin = {e_star:.5g} (derived)"),
        ]
    m_last, se_last = m_hats[-1]
    n_last = n_grid[-1]
    return (
        *quantities,
        Quantity.within(
            f"m* at n={n_last}",
            m_last,
            _z_interval(m_last, se_last, z),
            theory=derived[-1][0],
            symbol="m^*",
            constant=True,
            setting={"task": task, "d": d, "n": n_last, "L": L, "sigma": sigma},
            note=f"derived; -> d = {d} as n -> inf for every L and sigma",
        ),
    )


def optimum(
    *,
    task: str,
    d: int,
    seed: np.random.SeedSequence,
    n_grid: list,
    L: float,
    sigma: float,
    pilot: int,
    contexts: list,
    m_margin: float,
    e_margin: float,
    half_width: float,
    family_level: float,
) -> Outcome:
    """The optimal ``m I`` is the derived ``m*`` and its error the derived ``E_lin(n)``: at each ``n``, ``m_hat``
    (:func:`~lipschitz_icl.estimators.linear_scale.m_hat`) on a sample sized from an independent ``pilot`` for a
    relative
    half-width ``half_width`` and the loss at ``m* I`` on as many; :func:`optimum_decision`, Bonferroni ``z`` at
    ``family_level``.  ``decide(m_shift, e_shift, law)``: ``m* (1 + m_shift)`` and ``E_lin (1 + e_shift)``, or the
    rival ``law`` of :func:`law_values`."""
    streams = seed.spawn(3 * len(n_grid))
    z = decision.bonferroni_z(2 * len(n_grid), family_level)
    laws = {law: [law_values(task, d, n, L, sigma, law) for n in n_grid] for law in ("derived", "noiseless", "limit")}
    m_hats, losses, sizes = _optimum_estimates(
        task=task,
        d=d,
        n_grid=n_grid,
        L=L,
        sigma=sigma,
        derived=laws["derived"],
        pilot=pilot,
        contexts=contexts,
        half_width=half_width,
        z=z,
        streams=streams,
    )

    def decide(m_shift: float = 0.0, e_shift: float = 0.0, law: str = "derived") -> Decision:
        m_claim = [m * (1 + m_shift) for m, _ in laws[law]]
        e_claim = [e * (1 + e_shift) for _, e in laws[law]]
        return optimum_decision(m_hats, m_claim, losses, e_claim, z=z, m_margin=m_margin, e_margin=e_margin)

    m_stars = [m for m, _ in laws["derived"]]
    e_lins = [e for _, e in laws["derived"]]
    return Outcome(
        decide=decide,
        quantities=_optimum_quantities(
            task=task,
            d=d,
            n_grid=n_grid,
            L=L,
            sigma=sigma,
            m_hats=m_hats,
            losses=losses,
            derived=laws["derived"],
            z=z,
        ),
        margin=f"+-{m_margin:g} on m_hat/m* - 1, +-{e_margin:g} on E/E_lin - 1",
        rule=f"equivalence (TOST) at n = {list(n_grid)}: m_hat/m* - 1 within +-{m_margin:g} and E(m* I)/E_lin - 1 "
        f"within +-{e_margin:g}, intervals +-z se, z = {z:.2f} (Bonferroni, family-wise {family_level:g}); "
        f"contexts {sizes} (sized from a {pilot}-context pilot for a half-width of {half_width:g} on "
        "m_hat/m* - 1).",
        extra={"m_star": m_stars, "m_hat": m_hats, "E_lin": e_lins, "E": losses, "contexts": sizes},
    )


# ----------------------------------------------------------------------------- isotropy of the optimum
def _directions(d: int, rng: np.random.Generator):
    """Unit-Frobenius perturbations: symmetric traceless, antisymmetric, rank-one traceless (one Gaussian ``A``,
    :func:`lipschitz_icl.model.geometry.anisotropic_directions`), and the scale directions ``+-I / sqrt(d)``."""
    dirs = geometry.anisotropic_directions(rng.normal(size=(d, d)))
    names = {"symmetric traceless": "symmetric", "antisymmetric": "antisymmetric", "rank-one traceless": "rank-one"}
    scale = np.eye(d) / math.sqrt(d)
    return [(name, dirs[key]) for name, key in names.items()] + [("scale up", scale), ("scale down", -scale)]


def perturbation_decision(diffs, z: float, labels) -> Decision:
    """Sign rule: every paired difference ``L(M + eps D) - L(M)`` (interval ``value +- z se``) is > 0."""
    signs = [decision.sign(*_z_interval(e.value, e.standard_error, z), +1) for e in diffs]
    return decision.combined("sign", [labelled(label, sign) for label, sign in zip(labels, signs)])


def _perturbation_quantities(labels, changes, z, n) -> tuple:
    """Each paired loss change ``Delta E_lin`` along a probe direction, interval ``+- z se``, which must be > 0."""
    intervals = [_z_interval(e.value, e.standard_error, z) for e in changes]
    verdicts = [decision.sign(*iv, +1).verdict for iv in intervals]
    return tuple(
        Quantity.within(f"Delta E_lin along {name} at n={n}", e.value, iv, verdict=verdict, note="must be > 0")
        for name, e, iv, verdict in zip(labels, changes, intervals, verdicts)
    )


def isotropic(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    contexts: int,
    relative_size: float,
    family_level: float,
) -> Outcome:
    """``m* I`` minimises the loss over all ``M``: every perturbation of Frobenius size ``eps = relative_size
    ||m* I||_F`` along :func:`_directions` raises it (:func:`perturbation_decision`, Bonferroni ``z`` at
    ``family_level``).  ``decide(shift, anisotropy, base)``: the same probes from ``m* ((1 + shift) I + anisotropy
    sqrt(d) D)``, ``D`` the reverse of the symmetric traceless probe, or from ``d I`` for ``base = "limit"``
    (exact on the same draws: :func:`~lipschitz_icl.estimators.linear_scale.base_differences`)."""
    dir_stream, data_stream = seed.spawn(2)
    m_star = law_values(task, d, n, L, sigma)[0]
    labels, units = zip(*_directions(d, np.random.default_rng(dir_stream)))
    eps = relative_size * m_star * math.sqrt(d)
    z = decision.bonferroni_z(len(labels), family_level)
    bases = [m_star * np.eye(d), 2 * m_star * np.eye(d), m_star * (np.eye(d) - math.sqrt(d) * units[0])]
    problem = make_problem(task, d, n, L, sigma)
    probes = [eps * D for D in units]
    D0, D1, D2 = base_differences(problem, bases, probes, contexts, np.random.default_rng(data_stream))

    def diffs(shift: float = 0.0, anisotropy: float = 0.0, base: str = "derived"):
        shift += d / m_star - 1 if base == "limit" else 0.0
        return [Estimate.from_samples(row) for row in D0 + shift * (D1 - D0) + anisotropy * (D2 - D0)]

    def decide(**kw) -> Decision:
        return perturbation_decision(diffs(**kw), z, labels)

    return Outcome(
        decide=decide,
        quantities=_perturbation_quantities(labels, diffs(), z, n),
        margin="0 (every interval wholly above 0)",
        rule=f"sign: every paired Delta E (z = {z:.2f}, Bonferroni over {len(labels)} directions at family-wise "
        f"{family_level:g}) > 0; perturbation size {relative_size:g} ||m* I||_F; {contexts} contexts, common "
        f"random numbers; m* = {m_star:.5g} (derived).",
        extra={"m_star": m_star, "eps": eps},
        points=len(labels),  # "no anisotropic M does better", evaluated along these probe directions only
    )


# ----------------------------------------------------------------------------- the error does not vanish
def _error_laws(task: str, d: int, grid, L: float, sigma: float) -> dict[str, tuple[list, list]]:
    """``name -> (law values E(n), limits)`` on ``grid``: the derived ``E_lin(n)`` with its limit ``k(1) - d B``;
    the other class's (:func:`other_class`); no learning (``k(1)``, the zero predictor's error, at every ``n``);
    softmax's rate on any ``L``-Lipschitz task, the envelope law's ``n^(-gamma)``, ``gamma = 2/(d+1)``
    (:func:`lipschitz_icl.derivations.window_law.envelope_law_exprs`), from the derived ``E_lin`` at the first ``n``."""

    def derived(cls):
        return [lin.linear_optimum(cls, d, n, L, sigma)[1] for n in grid], [lin.linear_limit(cls, d, L)[1]] * len(grid)

    gamma = float(wlaw.envelope_law_exprs()["gamma"].subs(wlaw.d, d))
    rate = [lin.linear_optimum(task, d, grid[0], L, sigma)[1] * (n / grid[0]) ** -gamma for n in grid]
    k1 = [lin.zero_predictor_error(task, d, L)] * len(grid)
    rivals = {"other-class": derived(other_class(task)), "no-learning": (k1, k1), "softmax-rate": (rate, rate)}
    return {"derived": derived(task), **rivals}


def error_points(grid, errors, values, limits, z: float, scale: float = 1.0):
    """Asymptotic points ``E(n) / (scale limit(n)) - 1`` (interval ``E +- z se``) with the claimed law's own
    distance to its limit ``law(n)/limit(n) - 1`` as the next-order term (``scale`` multiplies the whole
    claimed law: the relative next-order term is unchanged)."""
    return [
        decision.AsymptoticPoint(float(n), *relative_interval(e, z * s, scale * lim), val / lim - 1.0)
        for n, (e, s), val, lim in zip(grid, errors, values, limits)
    ]


def _softmax_series(
    task: str, d: int, *, grid: list[int], L: float, sigma: float, contexts: int, stream: np.random.SeedSequence
) -> list | None:
    """Softmax's error at its exact ``w*(n)`` (figure only) where ``w*`` has an exact quadrature, else None."""
    if task not in wlaw.TASKS:
        return None
    problems = [make_problem(task, d, n, L, sigma) for n in grid]
    return [
        icl_loss(p, wstar(p, "exact").w_star.value, contexts=contexts, rng=np.random.default_rng(s)).loss.value
        for p, s in zip(problems, stream.spawn(len(grid)))
    ]


def _optimum_errors(
    *,
    task: str,
    d: int,
    grid: list[int],
    L: float,
    sigma: float,
    e_lim: float,
    targets: list[float],
    z: float,
    pilot: int,
    contexts: list,
    streams: list[np.random.SeedSequence],
) -> tuple[list, list[int]]:
    """The loss ``(E, se)`` of linear attention at ``m*(n) I`` at each ``n`` of ``grid``, on a sample sized from an
    independent ``pilot`` for the relative half-width ``targets[k]`` (the pilot's standard deviation taken relative
    to the limit ``e_lim = k(1) - d B``; streams ``2k`` pilot, ``2k + 1`` sample), and the sample sizes."""
    errors = []
    sizes = []
    for k, (n, target) in enumerate(zip(grid, targets)):
        problem = make_problem(task, d, n, L, sigma)
        m_star = law_values(task, d, n, L, sigma)[0]
        relative_sd = linear_loss(problem, m_star, pilot, streams[2 * k])[1] * math.sqrt(pilot) / e_lim
        sizes.append(pilot_sample_size(relative_sd, z, target, contexts))
        errors.append(linear_loss(problem, m_star, sizes[-1], streams[2 * k + 1]))
    return errors, sizes


def _limit_quantities(
    *,
    task: str,
    d: int,
    L: float,
    grid: list[int],
    errors: list,
    e_lim: float,
    e_last_theory: float,
    next_theory: float,
    z: float,
    margin: float,
    verdict: str,
    sigma: float,
) -> tuple[Quantity, Quantity]:
    """``E(n_max)/(k(1) - d B) - 1`` (interval ``E +- z se``, the rule's ``verdict``) against the derived next-order
    term ``next_theory`` at ``n_max``; ``E(n_max)`` against the derived ``E_lin(n_max)`` (``e_last_theory``), a
    constant row named for what it measures (its limit ``e_lim = k(1) - d B`` in its note)."""
    e_last, se_last = errors[-1]
    low, high = _z_interval(e_last, se_last, z)
    return (
        Quantity.within(
            f"E(n={grid[-1]}) / (k(1) - d B) - 1",
            e_last / e_lim - 1,
            (low / e_lim - 1, high / e_lim - 1),
            theory=next_theory,
            verdict=verdict,
            note=f"theory: derived next-order term; margin +-{margin:g}",
        ),
        Quantity.within(
            f"linear error E_lin(n) at n = {grid[-1]}",
            e_last,
            (low, high),
            theory=e_last_theory,
            symbol=r"E_{\mathrm{lin}}(n)",
            setting={"task": task, "d": d, "n": grid[-1], "L": L, "sigma": sigma},
            constant=True,
            note=f"derived exactly at n = {grid[-1]}; its limit as n -> inf is k(1) - d B = {e_lim:.6g}",
        ),
    )


def _limit_grid(
    *,
    task: str,
    d: int,
    n_grid: list,
    L: float,
    sigma: float,
    margin: float,
    extension_factor: float,
    n_max: float,
    reach: float,
) -> tuple:
    """``(k(1) - d B, T, grid)``: ``T(n) = E_lin(n)/(k(1) - d B) - 1``; ``n_grid`` extended by ``extension_factor``
    (up to ``n_max``) to ``T < reach margin`` (:func:`lipschitz_icl.decision.extend_grid`)."""
    e_lim = lin.linear_limit(task, d, L)[1]

    def next_order(n):
        """``T(n) = E_lin(n)/(k(1) - d B) - 1``."""
        return lin.linear_optimum(task, d, n, L, sigma)[1] / e_lim - 1.0

    extended = decision.extend_grid(n_grid, next_order, margin, factor=extension_factor, x_max=n_max, reach=reach)
    return e_lim, next_order, [int(round(n)) for n in extended]


def _error_record(grid, errors, law, lim, sizes, soft) -> tuple[dict, dict]:
    """The limit claim's ``extra`` and the log-log figure of its error and ``law`` (softmax at ``w*`` beside it)."""
    extra = {"n": grid, "linear": errors, "linear_theory": law, "linear_limit": lim, "contexts": sizes, "softmax": soft}
    x = [float(n) for n in grid]
    series = [{"label": "linear ($m^*$)", "x": x, "y": [v for v, _ in errors], "theory_y": law}]
    series += [{"label": "softmax ($w^*$)", "x": x, "y": soft}] if soft else []
    return extra, _loglog(series, "$n$", "ICL error")


def cannot_adapt(
    *,
    task: str,
    d: int,
    seed: np.random.SeedSequence,
    n_grid: list,
    L: float,
    sigma: float,
    n_max: float,
    reach: float,
    extension_factor: float,
    pilot: int,
    contexts: list,
    margin: float,
    follow_precision: float,
    precision_floor: float,
    family_level: float,
) -> Outcome:
    """The optimal linear attention's error does not vanish: it tends to the derived ``k(1) - d B > 0``.  ``n_grid``
    extended by ``extension_factor`` while ``T(n) = E_lin(n)/limit - 1`` is at least ``reach margin``
    (:func:`lipschitz_icl.decision.extend_grid`); at each ``n`` the loss at ``m*(n) I`` on a sample sized from an
    independent ``pilot`` for a relative half-width ``follow_precision max(T(n), precision_floor margin)``;
    ``asymptotic`` rule on :func:`error_points`.  ``decide(change, law)``: ``(1 + change) E_lin(n)``, or a rival
    law of :func:`_error_laws`."""
    e_lim, next_order, grid = _limit_grid(
        task=task,
        d=d,
        n_grid=n_grid,
        L=L,
        sigma=sigma,
        margin=margin,
        extension_factor=extension_factor,
        n_max=n_max,
        reach=reach,
    )
    streams = seed.spawn(2 * len(grid) + 1)
    z = decision.bonferroni_z(len(grid), family_level)
    targets = [follow_precision * max(abs(next_order(n)), precision_floor * margin) for n in grid]
    errors, sizes = _optimum_errors(
        task=task,
        d=d,
        grid=grid,
        L=L,
        sigma=sigma,
        e_lim=e_lim,
        targets=targets,
        z=z,
        pilot=pilot,
        contexts=contexts,
        streams=streams,
    )
    laws = _error_laws(task, d, grid, L, sigma)

    def decide(change: float = 0.0, law: str = "derived") -> Decision:
        return decision.asymptotic(error_points(grid, errors, *laws[law], z, 1 + change), margin)

    theory = laws["derived"][0]
    soft = _softmax_series(task, d, grid=grid, L=L, sigma=sigma, contexts=pilot, stream=streams[-1])
    extra, figure = _error_record(grid, errors, theory, e_lim, sizes, soft)
    quantities = _limit_quantities(
        task=task,
        d=d,
        L=L,
        grid=grid,
        errors=errors,
        e_lim=e_lim,
        e_last_theory=theory[-1],
        next_theory=next_order(grid[-1]),
        z=z,
        margin=margin,
        verdict=decide().verdict,
        sigma=sigma,
    )
    return Outcome(
        decide=decide,
        quantities=quantities,
        margin=f"+-{margin:g} on E/(k(1) - d B) - 1",
        rule=f"asymptotic rule on E(n)/(k(1) - d B) - 1 over n = {grid} (extended by x{extension_factor:g} while the "
        f"derived next-order term >= {reach * margin:g}), intervals E +- z se, z = {z:.2f}; contexts {sizes} "
        f"(sized from {pilot}-context pilots); limit k(1) - d B = {e_lim:.5g} (derived).",
        extra=extra,
        figure=figure,
    )


# ----------------------------------------------------------------------------- the weights do not follow L
def error_floor(
    *, task: str, d: int, L: float, n_low: int, n_high: int, sigma_low: float, sigma_high: float, stated: float
) -> Outcome:
    """Linear attention's error does not vanish: ``E_lin(n) >= C L^2/3`` (``C = stated``) at every integer ``n`` of
    ``[n_low, n_high]`` and every ``sigma`` of ``[sigma_low, sigma_high]``, proved by the prover on the closed
    form :func:`lipschitz_icl.certified.linear.linear_error` (nonincreasing in ``n``, nondecreasing in
    ``sigma``: the smallest value is at ``n_high``, ``sigma_low``)."""
    from lipschitz_icl.gates.proof_outcome import proof_outcome
    from lipschitz_icl.prover.pieces import Piece

    domain = {"d": [d], "n": {"from": n_low, "to": n_high}, "L": L, "sigma": [sigma_low, sigma_high]}
    piece = Piece("linear_error", "C*L**2/3", domain, task=task, relation=">=")
    return proof_outcome(pieces=[piece], constant="C", stated=stated, max_boxes=64, seconds=60.0)


def elasticity_decision(linear, softmax, linear_claim: float, softmax_claim: float, margin: float) -> Decision:
    """Equivalence within ``+-margin``: the ``L``-elasticity interval ``linear`` of the optimal linear scale
    with ``linear_claim`` and softmax's ``softmax`` with ``softmax_claim``; combined."""
    pairs = (("linear m*", linear, linear_claim), ("softmax w*", softmax, softmax_claim))
    return decision.combined(
        "equivalence", [labelled(name, decision.equivalence(lo - c, hi - c, margin)) for name, (lo, hi), c in pairs]
    )


def _weights_quantities(
    *,
    derived: float,
    e_lin: float,
    lin_iv: tuple[float, float],
    m_hats: list,
    alpha: float,
    e_soft: float,
    soft_iv: tuple[float, float],
    ws: list[float],
) -> tuple[Quantity, ...]:
    """The ``L``-elasticity ``e_lin`` (interval ``lin_iv``) of ``m_hat`` against the ``derived`` one, and that of
    softmax's ``w*``, ``e_soft`` (interval ``soft_iv``), against ``2 alpha``; the notes list ``m_hats`` and ``ws``."""
    m_list = ", ".join(f"{m:.5g}" for m, _ in m_hats)
    w_list = ", ".join(f"{w:.5g}" for w in ws)
    rows = (
        ("d log m* / d log L (linear attention)", e_lin, lin_iv, derived, f"m_hat = {m_list}"),
        ("d log w* / d log L (softmax attention)", e_soft, soft_iv, 2 * alpha, f"theory 2 alpha; w* = {w_list}"),
    )
    return tuple(Quantity.within(name, value, iv, theory=theory, note=note) for name, value, iv, theory, note in rows)


def _weights_figure(L_grid, ws, m_hats, m_stars) -> dict:
    """Log-log figure of ``w*`` and ``m_hat`` (``m*`` theory) against ``L``, each over its value at the first ``L``."""
    x = list(L_grid)
    m_lo = m_hats[0][0]
    theory = [m / m_stars[0] for m in m_stars]
    series = [
        {"label": r"softmax $w^*$", "x": x, "y": [w / ws[0] for w in ws]},
        {"label": r"linear $\hat m$", "x": x, "y": [m / m_lo for m, _ in m_hats], "theory_y": theory},
    ]
    return _loglog(series, "$L$", "optimal weight scale / its value at the smallest $L$")


def weights(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L_grid: list,
    sigma: float,
    contexts: int,
    margin_fraction: float,
    family_level: float,
) -> Outcome:
    """As ``L`` grows softmax's optimal window shrinks (``w* ~ L^(2 alpha)``) while the optimal linear attention's
    weights ``(m*/n) x_i . q`` keep their scale but for the derived finite-``n`` noise effect (``m* -> d``):
    :func:`elasticity_decision` on the ``L``-elasticities ``log(x_hi/x_lo)/log(L_hi/L_lo)`` over ``L_grid`` of
    ``m_hat`` (:func:`~lipschitz_icl.estimators.linear_scale.m_hat`; delta-method interval ``+- z se``, ``z`` at
    ``family_level``) and of the exact softmax ``w*`` (its stated accuracy), margin ``+-margin_fraction 2 alpha``
    (:func:`~lipschitz_icl.derivations.window_law.window_law`).  ``decide(shift, linear, softmax)``: the linear
    claim shifted, or the rivals ``linear = "softmax"`` (``m* ~ L^(2 alpha)``), ``softmax = "none"`` (``w*`` fixed).
    """
    alpha = wlaw.window_law(task, d)[0]
    margin = margin_fraction * 2 * alpha
    span = math.log(L_grid[-1] / L_grid[0])
    m_hats = [m_hat(make_problem(task, d, n, LL, sigma), contexts, s) for LL, s in zip(L_grid, seed.spawn(len(L_grid)))]
    m_stars = [law_values(task, d, n, LL, sigma)[0] for LL in L_grid]
    found = [wstar(make_problem(task, d, n, LL, sigma), "exact") for LL in L_grid]
    e_lin, lin_iv = scale_elasticity(m_hats[0], m_hats[-1], span, decision.bonferroni_z(1, family_level))
    derived = math.log(m_stars[-1] / m_stars[0]) / span
    soft_lo, e_soft, soft_hi = wstar_elasticities([L_grid[0], L_grid[-1]], [found[0], found[-1]])[0]
    soft_iv = (soft_lo, soft_hi)
    stuck = [LL for LL, w in zip(L_grid, found) if w.at_search_bound]

    def decide(shift: float = 0.0, linear: str = "derived", softmax: str = "derived") -> Decision:
        if stuck:
            return Decision("equivalence", "inconclusive", f"softmax w* at its search bound for L = {stuck}")
        claim = {"derived": derived, "softmax": 2 * alpha}[linear] + shift
        soft_claim = {"derived": 2 * alpha, "none": 0.0}[softmax]
        return elasticity_decision(lin_iv, soft_iv, claim, soft_claim, margin)

    ws = [w.w_star.value for w in found]
    return Outcome(
        decide=decide,
        quantities=_weights_quantities(
            derived=derived,
            e_lin=e_lin,
            lin_iv=lin_iv,
            m_hats=m_hats,
            alpha=alpha,
            e_soft=e_soft,
            soft_iv=soft_iv,
            ws=ws,
        ),
        margin=f"+-{margin:.4g} on each L-elasticity",
        rule=f"equivalence within +-{margin_fraction:g} x 2 alpha = +-{margin:.4g}: the L-elasticity of m_hat (L = "
        f"{L_grid[0]:g} to {L_grid[-1]:g}, n = {n}, sigma = {sigma:g}, {contexts} contexts each, interval "
        f"+- z se) with the derived {derived:.3g}, and that of softmax's exact w* with 2 alpha = {2 * alpha:.4g}.",
        extra={"L": list(L_grid), "m_hat": m_hats, "m_star": m_stars, "w_star": ws, "alpha": alpha},
        figure=_weights_figure(L_grid, ws, m_hats, m_stars),
    )


# ----------------------------------------------------------------------------- the trainer
def _trained_shape(aniso, floor: float, threshold: float, floor_factor: float) -> Decision:
    """One-sided: every anisotropy ``<= threshold``; inconclusive unless the run-to-run noise floor is below
    ``threshold/floor_factor``."""
    if floor * floor_factor >= threshold:
        return Decision("one-sided", "inconclusive", f"noise floor {floor:.4f} >= threshold/{floor_factor:g}")
    return decision.one_sided(0.0, max(aniso), threshold, "<=")


def _trained_quantities(
    runs_out: TrainedRuns,
    *,
    m_star: float,
    shape: Decision,
    floor: float,
    margin: float,
    level: float,
    shape_threshold: float,
) -> tuple[Quantity, ...]:
    """``mean tr(v M)/d / m* - 1`` (``level`` t-interval, equivalence within ``+-margin``) and the largest trained
    anisotropy against ``shape_threshold`` (the ``shape`` decision's verdict; the noise ``floor`` in its note)."""
    scale, interval = relative_scale_equivalence(runs_out.scales, m_star, margin, level)
    starts = [geometry.anisotropy(M0) for M0 in runs_out.starts]
    scale_note = f"{len(runs_out.results)} runs; m* = {m_star:.5g}; margin +-{margin:g}"
    shape_note = f"random starts {min(starts):.2f}-{max(starts):.2f}; noise floor {floor:.4f}"
    rows = (
        ("tr(v M)/d / m* - 1", float(np.mean(runs_out.scales)) / m_star - 1, interval, scale.verdict, scale_note),
        ("max anisotropy of trained v M", max(runs_out.anisotropy), (0.0, shape_threshold), shape.verdict, shape_note),
    )
    return tuple(
        Quantity.within(name, value, iv, theory=0.0, verdict=verdict, note=note)
        for name, value, iv, verdict, note in rows
    )


def trained(
    *,
    task: str,
    d: int,
    n: int,
    seed: np.random.SeedSequence,
    L: float,
    sigma: float,
    runs: int,
    protocol: dict,
    init_scale: float,
    margin: float,
    level: float,
    shape_threshold: float,
    floor_factor: float,
) -> Outcome:
    """Training linear attention (M-form, ``protocol``) from random anisotropic starts ends at ``m* I``.

    Scale: :func:`~lipschitz_icl.estimators.trained_scale.relative_scale_equivalence` of ``tr(v M)/d`` over ``runs``
    independent runs with ``m*``; shape: :func:`_trained_shape` with the run-to-run noise floor
    (:func:`lipschitz_icl.estimators.pretraining.noise_floor`).  ``decide(change, law)``: the target ``(1 + change)
    m``, ``m``
    of :func:`law_values`."""
    problem = make_problem(task, d, n, L, sigma)
    runs_out = trained_runs(problem, seed, runs, attention="linear", init_scale=init_scale, **protocol)
    floor = noise_floor([r.M for r in runs_out.results])
    shape = _trained_shape(runs_out.anisotropy, floor, shape_threshold, floor_factor)
    m_star = law_values(task, d, n, L, sigma)[0]

    def decide(change: float = 0.0, law: str = "derived") -> Decision:
        target = law_values(task, d, n, L, sigma, law)[0] * (1 + change)
        scale = relative_scale_equivalence(runs_out.scales, target, margin, level)[0]
        return decision.combined("equivalence", [labelled("scale", scale), labelled("shape", shape)])

    return Outcome(
        decide=decide,
        quantities=_trained_quantities(
            runs_out,
            m_star=m_star,
            shape=shape,
            floor=floor,
            margin=margin,
            level=level,
            shape_threshold=shape_threshold,
        ),
        margin=f"+-{margin:g} on tr(v M)/d / m* - 1",
        rule=f"equivalence of the mean tr(v M)/d over {runs} runs ({level:g} t-interval) with m* = {m_star:.5g} within "
        f"+-{margin:g} relative; every anisotropy < {shape_threshold:g}. Protocol: {protocol}, start scale "
        f"{init_scale:g}.",
        extra={"scales": runs_out.scales, "anisotropy": runs_out.anisotropy, "noise_floor": floor},
    )
