"""Probe function families for Theorem 3.5 (generalisation to unseen ``L``-Lipschitz tasks).

Theorem 3.5 (registry: ``lipschitz_icl/claims/thm35.toml``; paper Section 3.2 and Figure 5): attention
pretrained on an ``L``-class keeps a small ICL error on *any* ``L``-Lipschitz task.  The gates test that
on tasks the attention never saw.  Each probe family is a small class with ``name``, ``d``, ``L`` and
``sample(rng, size)`` returning a callable batch of tasks (``task(x)`` for ``x`` of shape
``(batch, ..., d)``, as :class:`lipschitz_icl.tasks.registry.Task`) with ``task.lipschitz`` the per-task
Lipschitz constant on the sphere, always ``<= L``.  Lipschitz constants are with respect to the
Euclidean (chordal) distance between points of ``S^{d-1}``, the distance the kernel bound
``|f(x_i) - f(q)| <= L ||x_i - q||`` uses.  ``u ~ Unif(S^{d-1})``, ``phi ~ U[0, 2 pi]``, independent.

==============  ====================================================  =====================
name            f(x)                                                  per-task Lipschitz
==============  ====================================================  =====================
affine, relu,   the classes of :mod:`lipschitz_icl.tasks.registry`             ``<= L``
cosine-k        ``(L/k) cos(k u.x + phi)``
triangle-k      ``(L/k) T(k u.x + phi)``, ``T(s) = |s - 2 pi round(s / 2 pi)| - pi/2``   ``L``
                (a triangle wave of period ``2 pi``, slopes ``+-1``)
distance-m      ``L (min_j ||x - s_j|| - 1)``, ``s_1..s_m`` i.i.d. uniform on the sphere    ``L``
==============  ====================================================  =====================

Why these are ``L``-Lipschitz: ``T`` and ``cos`` are 1-Lipschitz on ``R`` and ``x -> k u.x`` is
``k``-Lipschitz, so the triangle and cosine probes are ``L``-Lipschitz on ``R^d``, hence on the sphere;
a minimum of 1-Lipschitz distances is 1-Lipschitz.  The constants are attained on the sphere (the
tangential gradient is ``L sqrt(1 - (u.x)^2)`` for the ridge probes, ``sqrt(1 - ||x - s||^2/4)`` near
``s`` for the distance probe), so they are not loose; ``tests/estimators/test_probes.py`` checks both directions.

The triangle probe has kinks on the hyperplanes ``k u.x + phi = pi Z`` and the distance probe on the
medial set of ``{s_j}`` and at the points ``s_j``: they are not smooth, unlike the pretraining classes'
affine tasks, and neither is in any pretraining class.

:func:`probe_terms` is the estimator the gates use: per context the bias ``(sum_i p_i f(x_i) - f(q))^2``
for a sampled task and the noise part ``sigma^2 sum_i p_i^2`` (the label noise integrated out exactly),
for several models on *common* covariates, queries and tasks, so differences between models are paired;
:func:`noise_terms` is its noise part alone (no task is needed: the weights do not depend on it);
:func:`probe_errors_along_n` and :func:`probe_log_ratios` summarise it per probe (mean errors with standard
errors along ``n``; paired log error ratios between models).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from lipschitz_icl.estimate import mean_se, paired_log_ratio
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.sphere import laws
from lipschitz_icl.tasks.registry import make_task_class
from lipschitz_icl.validation import check_int, check_real, check_rng

__all__ = [
    "Probe",
    "ProbeTask",
    "TriangleProbe",
    "DistanceProbe",
    "CosineProbe",
    "probe_suite",
    "probe_terms",
    "noise_terms",
    "probe_errors_along_n",
    "probe_log_ratios",
    "PROBE_KINDS",
    "triangle_wave",
]

PROBE_KINDS = ("affine", "relu", "cosine", "triangle", "distance")


def triangle_wave(s) -> np.ndarray:
    """``T(s) = |s - 2 pi round(s / (2 pi))| - pi/2``: period ``2 pi``, slopes ``+-1``, range
    ``[-pi/2, pi/2]``, kinks at ``s in pi Z``."""
    s = np.asarray(s, dtype=np.float64)
    return np.abs(s - 2.0 * np.pi * np.round(s / (2.0 * np.pi))) - 0.5 * np.pi


@dataclass
class ProbeTask:
    """A batch of probe tasks: ``fn(params, x)`` evaluates them, ``lipschitz`` per task."""

    fn: Callable[[dict, np.ndarray], np.ndarray]
    params: dict
    lipschitz: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.fn(self.params, np.asarray(x, dtype=np.float64))


def _ridge(params: dict, x: np.ndarray) -> np.ndarray:
    """``u.x`` per task for ``x`` of shape ``(batch, ..., d)``."""
    return np.einsum("b...d,bd->b...", x, params["u"])


def _column(value: np.ndarray, ndim: int) -> np.ndarray:
    return np.reshape(value, (-1,) + (1,) * (ndim - 1))


@dataclass(frozen=True)
class TriangleProbe:
    """``f(x) = (L/k) T(k u.x + phi)`` (triangle wave in ``u.x``), frequency ``k``."""

    d: int
    L: float
    frequency: float = 1.0

    @property
    def name(self) -> str:
        return f"triangle-{self.frequency:g}"

    def sample(self, rng: np.random.Generator, size: int) -> ProbeTask:
        size = check_int("size", size, minimum=1)
        params = {"u": laws.uniform_sphere(rng, size, self.d), "phi": rng.uniform(0.0, 2 * np.pi, size)}
        k, L = self.frequency, self.L

        def fn(p, x):
            s = _ridge(p, x)
            return (L / k) * triangle_wave(k * s + _column(p["phi"], s.ndim))

        return ProbeTask(fn, params, np.full(size, L))


@dataclass(frozen=True)
class CosineProbe:
    """``f(x) = (L/k) cos(k u.x + phi)``: the cosine class of :mod:`lipschitz_icl.tasks.registry` as a probe."""

    d: int
    L: float
    frequency: float = 1.0

    @property
    def name(self) -> str:
        return f"cosine-{self.frequency:g}"

    def sample(self, rng: np.random.Generator, size: int):
        return make_task_class("cosine", self.d, self.L, frequency=self.frequency).sample(rng, size)


@dataclass(frozen=True)
class DistanceProbe:
    """``f(x) = L (min_j ||x - s_j|| - 1)``, ``m`` centres ``s_j`` uniform on the sphere per task."""

    d: int
    L: float
    centres: int = 3

    @property
    def name(self) -> str:
        return f"distance-{self.centres}"

    def sample(self, rng: np.random.Generator, size: int) -> ProbeTask:
        size = check_int("size", size, minimum=1)
        params = {"s": laws.uniform_sphere(rng, (size, self.centres), self.d)}
        L = self.L

        def fn(p, x):
            batch, d = x.shape[0], x.shape[-1]
            flat = x.reshape(batch, -1, d)
            # ||x - s||^2 = 2 - 2 x.s on the sphere; computed directly so points off the sphere work too
            dist2 = (
                np.sum(flat * flat, axis=-1)[:, :, None]
                - 2.0 * np.einsum("bnd,bmd->bnm", flat, p["s"])
                + np.sum(p["s"] * p["s"], axis=-1)[:, None, :]
            )
            dist = np.sqrt(np.clip(np.min(dist2, axis=-1), 0.0, None))
            return L * (dist.reshape(x.shape[:-1]) - 1.0)

        return ProbeTask(fn, params, np.full(size, L))


@dataclass(frozen=True)
class _ClassProbe:
    """A task class of :mod:`lipschitz_icl.tasks.registry` used as a probe (affine, relu)."""

    kind: str
    d: int
    L: float

    @property
    def name(self) -> str:
        return self.kind

    def sample(self, rng: np.random.Generator, size: int):
        return make_task_class(self.kind, self.d, self.L).sample(rng, size)


class Probe(Protocol):
    """A probe of the suite: tasks on ``S^(d-1)`` that are ``L``-Lipschitz, drawn by ``sample``."""

    @property
    def d(self) -> int: ...
    @property
    def L(self) -> float: ...
    @property
    def name(self) -> str: ...
    def sample(self, rng: np.random.Generator, size: int) -> Callable[[np.ndarray], np.ndarray]: ...


def probe_suite(
    d: int, L: float, *, cosine_frequencies=(1.0, 4.0), triangle_frequencies=(1.0, 4.0), centres=(3,)
) -> list[Probe]:
    """The probe suite: affine, relu, cosine and triangle waves at the given frequencies, distance to
    ``m`` random points for each ``m`` in ``centres``; every task ``L``-Lipschitz on ``S^{d-1}``."""
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    suite: list[Probe] = [_ClassProbe("affine", d, L), _ClassProbe("relu", d, L)]
    suite += [
        CosineProbe(d, L, check_real("frequency", k, minimum=0.0, strict_minimum=True)) for k in cosine_frequencies
    ]
    suite += [
        TriangleProbe(d, L, check_real("frequency", k, minimum=0.0, strict_minimum=True)) for k in triangle_frequencies
    ]
    suite += [DistanceProbe(d, L, check_int("centres", m, minimum=1)) for m in centres]
    return suite


def probe_terms(
    probes, models, n: int, sigma: float, contexts: int, rng, *, chunk_elements: int = 1 << 20, envelope: bool = False
):
    """Per-context ``(bias_c, noise_c)`` of each model on each probe, on common random numbers.

    For each context: covariates ``x_1..x_n`` and query ``q`` uniform on the sphere (shared by every
    probe and model), one task per probe (shared by the models), the weights ``p`` of each model
    (:meth:`lipschitz_icl.model.attention.Attention.weights`), then

        bias_c  = (sum_i p_i f(x_i) - f(q))^2,     noise_c = sigma^2 sum_i p_i^2,

    whose means are the two parts of the ICL loss (the noise enters the squared error only through
    ``E (sum_i p_i eps_i)^2 = sigma^2 sum_i p_i^2``, so it is integrated out exactly).
    Returns ``{probe.name: [(bias_c, noise_c) per model]}``; with ``envelope=True`` also, per model, a dict
    of per-context envelopes: ``"jensen"``, the Lipschitz envelope ``sum_i p_i ||x_i - q||^2`` (for weights
    ``p >= 0`` summing to one and a task with per-task Lipschitz constant ``<= L``: ``bias_c <= L^2 env_c``,
    Jensen), and ``"centroid"``, the squared displacement of the weights' centre of mass
    ``||sum_i p_i x_i - q||^2`` (``bias_c <= L^2 centroid_c`` for affine tasks ``a.x + b`` with ``|a| <= L``,
    not in general).
    """
    n = check_int("n", n, minimum=1)
    contexts = check_int("contexts", contexts, minimum=2)
    sigma2 = check_real("sigma", sigma, minimum=0.0) ** 2
    generator = check_rng(rng)
    d = probes[0].d
    per_chunk = max(1, chunk_elements // (n * d))
    out: dict[str, list[tuple[list, list]]] = {p.name: [([], []) for _ in models] for p in probes}
    env: list[dict[str, list]] = [{"jensen": [], "centroid": []} for _ in models]
    done = 0
    while done < contexts:
        size = min(per_chunk, contexts - done)
        done += size
        x = laws.uniform_sphere(generator, (size, n), d)
        q = laws.uniform_sphere(generator, size, d)
        weights = [m.weights(x, q) for m in models]
        if envelope:
            dist2 = np.sum((x - q[:, None, :]) ** 2, axis=-1)
            for p, parts in zip(weights, env):
                parts["jensen"].append(np.sum(p * dist2, axis=-1))
                parts["centroid"].append(np.sum((np.einsum("cn,cnd->cd", p, x) - q) ** 2, axis=-1))
        for probe in probes:
            task = probe.sample(generator, size)
            fx = task(x)
            fq = task(q[:, None, :])[:, 0]
            for p, (bias_parts, noise_parts) in zip(weights, out[probe.name]):
                bias_parts.append((np.einsum("cn,cn->c", p, fx) - fq) ** 2)
                noise_parts.append(sigma2 * np.sum(p * p, axis=-1))
    result = {name: [(np.concatenate(b), np.concatenate(nz)) for b, nz in parts] for name, parts in out.items()}
    if envelope:
        return result, [{kind: np.concatenate(parts) for kind, parts in e.items()} for e in env]
    return result


def noise_terms(models, d: int, n: int, sigma: float, contexts: int, rng, *, chunk_elements: int = 1 << 20):
    """Per-context noise part ``noise_c = sigma^2 sum_i p_i^2`` of each model, on common covariates and
    queries uniform on ``S^{d-1}`` (what :func:`probe_terms` returns as the noise part on every probe: the
    weights do not depend on the task).  Returns one array of length ``contexts`` per model."""
    d = check_int("d", d, minimum=2)
    n = check_int("n", n, minimum=1)
    contexts = check_int("contexts", contexts, minimum=2)
    sigma2 = check_real("sigma", sigma, minimum=0.0) ** 2
    generator = check_rng(rng)
    per_chunk = max(1, chunk_elements // (n * d))
    out: list[list] = [[] for _ in models]
    done = 0
    while done < contexts:
        size = min(per_chunk, contexts - done)
        done += size
        x = laws.uniform_sphere(generator, (size, n), d)
        q = laws.uniform_sphere(generator, size, d)
        for model, parts in zip(models, out):
            p = model.weights(x, q)
            parts.append(sigma2 * np.sum(p * p, axis=-1))
    return [np.concatenate(parts) for parts in out]


def probe_errors_along_n(suite, windows, n_grid, sigma, contexts, seed) -> dict:
    """``{probe: [(mean, se) of the ICL error at each n]}`` for the windows ``w(n) I`` (``windows``),
    ``contexts[i]`` contexts at ``n_grid[i]``, independent draws per ``n`` (one stream spawned from ``seed`` each)."""
    loss: dict[str, list] = {p.name: [] for p in suite}
    for n, w, c, stream in zip(n_grid, windows, contexts, seed.spawn(len(n_grid))):
        terms = probe_terms(suite, [Attention(w * np.eye(suite[0].d))], n, sigma, c, np.random.default_rng(stream))
        for name, ((b, nz),) in terms.items():
            loss[name].append(mean_se(b + nz))
    return loss


def probe_log_ratios(models: dict, suite, n, sigma, contexts, stream) -> tuple[dict, dict]:
    """``({probe: {model: (log(E_model/E_first), se)}}, {probe: {model: (mean E, se)}})`` of the named
    ``models`` against the first, on common random numbers (paired log ratios,
    :func:`lipschitz_icl.estimate.paired_log_ratio`)."""
    names = list(models)
    terms = probe_terms(suite, [models[k] for k in names], n, sigma, contexts, np.random.default_rng(stream))
    ratios, errors = {}, {}
    for probe in suite:
        losses = {k: b + nz for k, (b, nz) in zip(names, terms[probe.name])}
        ratios[probe.name] = {k: paired_log_ratio(losses[k], losses[names[0]]) for k in names[1:]}
        errors[probe.name] = {k: mean_se(v) for k, v in losses.items()}
    return ratios, errors
