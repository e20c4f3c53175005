"""Task-averaged Monte Carlo of the ICL loss of ``M = w I`` from the pairwise kernel (any zonal prior).

An estimator independent of the exact zonal method (no Gegenbauer series, no Laplace transform): per
sampled context (``x_1..x_n``, ``q`` uniform on the sphere) the task and the noise are integrated out
exactly through the covariance, with ``D(t) = K(1) - K(t)`` and ``sum_i p_i = 1``:

    bias_c  = E_f[(sum_i p_i f(x_i) - f(q))^2 | x, q] = 2 sum_i p_i D(x_i.q) - sum_{i,j} p_i p_j D(x_i.x_j),
    noise_c = sigma^2 sum_i p_i^2,

``1 - x.y`` computed as ``|x - y|^2 / 2``.  Cost ``O(n^2 d)`` per context (``n <= MAX_PAIRWISE_N``),
the kernel evaluated at every pair: the work budget (:mod:`lipschitz_icl.budget`) counts the pairs
times the kernel's parts (:func:`pair_seconds`).  Intervals: the sample mean's standard error over
independent contexts.
"""

from __future__ import annotations

import numpy as np

from lipschitz_icl import budget as budgets
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.exact.zonal import kernel_of
from lipschitz_icl.sphere import laws
from lipschitz_icl.validation import ParameterError, check_int, check_real, check_rng

__all__ = ["MAX_PAIRWISE_N", "pair_seconds", "pairwise_terms", "pairwise_loss"]

MAX_PAIRWISE_N = 4096
# seconds per pair of context points on the project machine (benchmarks/bench_budget.py, upper envelopes):
# the Gram matrix per coordinate, and the kernel per part of a mixture (the registered classes' kernels by
# name; any other kernel, a user expression or a plugin's, as the dearest of them)
SECONDS_PER_PAIR_COORDINATE = 2e-9
SECONDS_PER_PAIR_KERNEL = {"affine": 40e-9, "relu": 160e-9, "cosine": 650e-9}
SECONDS_PER_PAIR_OTHER_KERNEL = 650e-9


def pair_seconds(kernel) -> float:
    """Estimated seconds of one pair of context points for ``kernel``: its Gram coordinates and one
    evaluation of each part (a mixture's parts, else the kernel itself)."""
    parts = [part[0] for part in kernel.parts] or [kernel.name]
    cost = sum(SECONDS_PER_PAIR_KERNEL.get(name, SECONDS_PER_PAIR_OTHER_KERNEL) for name in parts)
    return kernel.d * SECONDS_PER_PAIR_COORDINATE + cost


def pairwise_terms(
    kernel, n: int, w: float, *, contexts: int, rng, chunk_elements: int = 1 << 22, budget=budgets.ENGINE_SECONDS
):
    """Per-context ``(bias_c, collision_c)`` (``collision_c = sum_i p_i^2``) for the zonal ``kernel`` with ``n``
    context points at ``M = w I``, on ``contexts`` contexts drawn from ``rng`` (a seed or Generator), in chunks of
    about ``chunk_elements`` array entries; refused before any work beyond the work ``budget`` (estimated
    seconds)."""
    n = check_int("n", n, minimum=1, maximum=MAX_PAIRWISE_N)
    w = check_real("w", w, minimum=0.0)
    contexts = check_int("contexts", contexts, minimum=2)
    per_context = n * n * pair_seconds(kernel)
    budgets.check(
        contexts * per_context,
        budget,
        name="contexts",
        value=contexts,
        what=f"the pairwise Monte Carlo of {contexts} contexts at n = {n}, d = {kernel.d}",
        cheaper=budgets.fewer_contexts(budgets.largest_count(budget, per_context)) + ", or method 'exact'",
    )
    rng = check_rng(rng)
    d = kernel.d
    per_chunk = max(1, chunk_elements // (n * n + n * d))
    bias, collision = [], []
    done = 0
    while done < contexts:
        size = min(per_chunk, contexts - done)
        x = laws.uniform_sphere(rng, (size, n), d)
        q = laws.uniform_sphere(rng, size, d)
        u_q = 0.5 * np.sum((x - q[:, None, :]) ** 2, axis=-1)  # 1 - x_i.q
        logits = -w * u_q
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        sq = np.sum(x * x, axis=-1)
        u_xx = np.clip(0.5 * (sq[:, :, None] + sq[:, None, :]) - np.einsum("cid,cjd->cij", x, x), 0.0, 2.0)
        gram = kernel.gap(u_xx)
        b = 2.0 * np.sum(p * kernel.gap(u_q), axis=1) - np.einsum("ci,cij,cj->c", p, gram, p)
        bias.append(b)
        collision.append(np.sum(p * p, axis=1))
        done += size
    bias_c, collision_c = np.concatenate(bias), np.concatenate(collision)
    if not (np.all(np.isfinite(bias_c)) and np.all(np.isfinite(collision_c))):
        raise ParameterError(
            "kernel",
            f"finite on [-1, 1] (non-finite pairwise Monte Carlo terms at w = {w})",
            getattr(kernel, "name", kernel),
        )
    return bias_c, collision_c


def pairwise_loss(problem, w, *, contexts: int = 4096, rng=0, budget=budgets.ENGINE_SECONDS) -> LossEstimate:
    """The ICL loss of ``problem`` (a zonal class: :func:`lipschitz_icl.exact.zonal.kernel_of`) at
    ``M = w I`` by the pairwise-kernel Monte Carlo; method ``averaged``, ``info['form'] = 'pairwise'``;
    within the work ``budget`` (:func:`pairwise_terms`)."""
    if problem.n > MAX_PAIRWISE_N:
        raise ParameterError("n", f"<= {MAX_PAIRWISE_N} for the pairwise Monte Carlo (use method 'exact')", problem.n)
    kernel = kernel_of(problem.task_class)
    bias_c, collision_c = pairwise_terms(kernel, problem.n, w, contexts=contexts, rng=rng, budget=budget)
    noise_c = problem.sigma**2 * collision_c
    return LossEstimate(
        Estimate.from_samples(bias_c + noise_c),
        Estimate.from_samples(bias_c),
        Estimate.from_samples(noise_c),
        "averaged",
        {"contexts": contexts, "form": "pairwise"},
    )
