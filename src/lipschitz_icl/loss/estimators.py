"""ICL-loss estimators, all returning a :class:`~lipschitz_icl.estimate.LossEstimate`.

The ICL loss (the paper's pretraining objective, README "Conventions") and its split (softmax weights sum to one, so
the intercept of
the task cancels; the noise is independent of everything else):

    L(M) = E (yhat(q) - f(q))^2 = E (sum_i p_i f(x_i) - f(q))^2  +  sigma^2 E sum_i p_i^2
         =            bias                                       +        noise

(for linear attention the weights need not sum to one and the intercept enters the bias).

Methods:

==============  ======================================================================================
``naive``       sample task, covariates, query and noise; average the squared error (the reference).
``averaged``    task coefficients and noise integrated out exactly (Rao-Blackwellised) through the
                feature form ``v ||sum_i p_i phi(x_i) - phi(q)||^2`` of :mod:`lipschitz_icl.tasks.registry`;
                for ``M = w I`` on a rotation-invariant class, reduced to ``t_i = x_i . q``
                (:mod:`lipschitz_icl.loss.isotropic`: cost per context independent of ``d``); for the
                arc-cosine form (relu) the task's direction is averaged exactly too, with control
                variates (:mod:`lipschitz_icl.loss.arccosine`).
``asymptotic``  large-``n`` loss with its ``1/n`` correction (:mod:`lipschitz_icl.loss.asymptotic`), inside its
                regime ``rho = max(R_d(w)/n, next-order noise term) <= 0.05`` (refused on ``n`` outside).
``exact``       quadrature at any ``n`` (:mod:`lipschitz_icl.exact.route`), where available.
==============  ======================================================================================
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl import budget as budgets
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.loss.isotropic import isotropic_terms
from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import MAX_W, Problem, check_problem
from lipschitz_icl.sphere import laws
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real, check_rng

__all__ = [
    "METHODS",
    "MONTE_CARLO_METHODS",
    "icl_loss",
    "naive_loss",
    "averaged_loss",
    "general_terms",
    "loss_differences",
    "paired_ratio",
    "make_attention",
]

METHODS = ("averaged", "naive", "asymptotic", "exact")
MONTE_CARLO_METHODS = ("averaged", "naive")  # the methods that sample contexts (the others are deterministic)
DEFAULT_CHUNK_ELEMENTS = 1 << 20  # 8 MiB per float64 array: bounded memory at any n
MAX_MC_N = 10**7  # Monte Carlo draws every context point; beyond this use 'exact' or 'asymptotic'
MAX_CONTEXTS = 10**6  # sampled prompts per Monte Carlo estimate
MEMORY_BUDGET = budgets.MEMORY_BUDGET  # bytes a Monte Carlo loss may hold at once (checked before allocating)
_ARRAYS_PER_CHUNK = 8  # float64 arrays of one chunk's size alive at once (x, p, features, temporaries)
# the cost model of the work budget (lipschitz_icl.budget): seconds on the project machine, upper envelopes of
# benchmarks/bench_budget.py
SECONDS_PER_COORDINATE = 50e-9  # naive, and averaged in the general form: per context point and n (d + 2)
SECONDS_PER_REDUCED_POINT = 2e-6  # averaged in the reduced form (M = w I, rotation-invariant): per context point
SECONDS_PER_KINK_POINT = 2e-6  # averaged, arc-cosine form (relu: the direction exact): per context point


def make_attention(problem: Problem, w=None, M=None, attention: str = "softmax", value: float = 1.0) -> Attention:
    """The model from exactly one of ``w`` (``M = w I``) or ``M`` (a ``d x d`` matrix)."""
    if (w is None) == (M is None):
        raise ParameterError("w/M", "exactly one of w (M = w I) or M given", "both" if w is not None else "neither")
    if w is not None:
        return Attention.isotropic(w, problem.d, attention)
    return Attention.create(M, problem.d, attention, value)


def icl_loss(
    problem: Problem,
    w=None,
    *,
    M=None,
    attention: str = "softmax",
    value: float = 1.0,
    method: str = "averaged",
    contexts: int = 4096,
    rng=0,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    budget: float = budgets.ENGINE_SECONDS,
    min_contexts: int = 2,
) -> LossEstimate:
    """The ICL loss of ``problem`` at ``M = w I`` (or a general ``M``) by ``method``.

    ``L(M) = E (sum_i p_i f(x_i) - f(q))^2 + sigma^2 E sum_i p_i^2`` (bias + noise), with ``p`` the
    attention weights of the query ``q`` on the context ``x_1, ..., x_n``.

    Parameters
    ----------
    problem : Problem
        The problem (:func:`~lipschitz_icl.problem.make_problem`).
    w : float, optional
        The window of ``M = w I``, ``0 <= w <= 1e8``; exactly one of ``w`` and ``M``.
    M : array_like, optional
        A general ``d x d`` attention matrix (Monte Carlo methods only).
    attention : {"softmax", "linear"}
        The attention kind; ``asymptotic`` and ``exact`` need softmax and ``M = w I``.
    value : float
        The value weight of linear attention.
    method : {"averaged", "naive", "asymptotic", "exact"}
        The estimator (module docstring); Monte Carlo methods need ``n <= 1e7`` and at most
        :data:`MEMORY_BUDGET` bytes (estimated and refused before allocating), ``exact`` and
        ``asymptotic`` take any ``n <= 1e150`` (``asymptotic`` inside its regime only:
        :class:`~lipschitz_icl.loss.asymptotic.Regime`).
    contexts : int
        Sampled prompts of the Monte Carlo methods, ``2 <= contexts <= 1e6``.
    min_contexts : int
        The fewest contexts the caller accepts (the command line: :data:`lipschitz_icl.budget.MIN_CONTEXTS`): a
        refusal past ``budget`` names ``contexts <= k`` only for ``k`` at least this, else a smaller ``n``.
    rng : int or numpy.random.Generator
        Seed or generator of the Monte Carlo methods.
    chunk_elements : int
        Coordinates drawn at once (bounds the memory; the numbers do not depend on it).
    budget : float
        The work budget of the Monte Carlo methods in estimated seconds (:mod:`lipschitz_icl.budget`;
        the command line's is :data:`~lipschitz_icl.budget.COMMAND_SECONDS`): beyond it the request is
        refused before any work, naming a number of contexts within it.

    Returns
    -------
    LossEstimate
        ``loss``, ``bias`` and ``noise`` as :class:`~lipschitz_icl.estimate.Estimate` (value, standard
        error, numerical error) and the method.

    Examples
    --------
    The exact loss, and a Monte Carlo estimate whose 95% interval holds it:

    >>> from lipschitz_icl import make_problem
    >>> from lipschitz_icl.loss.estimators import icl_loss
    >>> problem = make_problem("affine", d=3, n=100, L=1.0, sigma=0.5)
    >>> exact = icl_loss(problem, 10.0, method="exact")
    >>> print(f"{exact.loss.value:.5f} = {exact.bias.value:.5f} + {exact.noise.value:.5f}")
    0.02791 = 0.00250 + 0.02541
    >>> mc = icl_loss(problem, 10.0, method="averaged", contexts=2000, rng=0)
    >>> low, high = mc.loss.confidence_interval(0.95)
    >>> bool(low <= exact.loss.value <= high)
    True
    """
    problem = check_problem(problem)
    method = check_choice("method", method, METHODS)
    if w is not None:
        w = check_real("w", w, minimum=0.0, maximum=MAX_W)
    value = check_real("value", value)
    model = make_attention(problem, w, M, attention, value)
    if method in ("asymptotic", "exact"):
        if model.kind != "softmax" or model.w is None:
            raise ParameterError(
                "method", f"used with softmax attention and M = w I for {method!r}", "a general M or linear attention"
            )
        if method == "asymptotic":
            from lipschitz_icl.loss.asymptotic import asymptotic_loss

            return asymptotic_loss(problem, model.w)
        from lipschitz_icl.exact.route import exact_loss

        return exact_loss(problem, model.w)
    if problem.n > MAX_MC_N:
        raise ParameterError(
            "n",
            f"<= {MAX_MC_N:.0e} for the Monte Carlo method {method!r} "
            "(use method 'exact' or 'asymptotic' for larger n)",
            problem.n,
        )
    contexts = check_int("contexts", contexts, minimum=2, maximum=MAX_CONTEXTS)
    chunk_elements = check_int("chunk_elements", chunk_elements, minimum=1)
    reduced = (
        method == "averaged"
        and model.kind == "softmax"
        and model.w is not None
        and problem.task_class.rotation_invariant
    )
    arrays = _ARRAYS_PER_CHUNK
    if reduced and problem.task_class.quadrature == "arc-cosine":
        from lipschitz_icl.loss import arccosine

        arrays = arccosine.ARRAYS_PER_POINT
    check_memory(problem, chunk_elements, reduced, arrays)
    check_work(problem, contexts, context_seconds(problem, model, method), budget, floor=min_contexts)
    generator = check_rng(rng)
    if method == "naive":
        return naive_loss(problem, model, contexts, generator, chunk_elements)
    return averaged_loss(problem, model, contexts, generator, chunk_elements)


def check_memory(problem: Problem, chunk_elements: int, reduced: bool, arrays: int = _ARRAYS_PER_CHUNK) -> None:
    """Refuse (``n``, naming the budget) a Monte Carlo loss whose smallest chunk, one prompt of
    ``n`` points (``n d`` coordinates unless ``reduced`` to ``t_i = x_i . q``), exceeds
    :data:`MEMORY_BUDGET` with its temporaries (``arrays`` of the chunk's size alive at once)."""
    per_prompt = problem.n * (1 if reduced else problem.d)
    needed = 8 * arrays * max(per_prompt, min(chunk_elements, per_prompt * MAX_CONTEXTS))
    if needed > MEMORY_BUDGET:
        raise ParameterError(
            "n",
            f"small enough that one prompt fits the memory budget of "
            f"{MEMORY_BUDGET / 1024**3:g} GiB (n d <= {MEMORY_BUDGET // (8 * arrays)} "
            f"here; d = {problem.d})",
            problem.n,
        )


def context_seconds(problem: Problem, model: Attention, method: str) -> float:
    """Estimated seconds of one context of the Monte Carlo ``method`` (the work budget's cost model):
    naive and the general averaged form ``n (d + 2)`` coordinates, the reduced form ``n`` points, the
    arc-cosine form ``n`` points of its kinks, a prior given by its kernel ``n^2`` pairs
    (:func:`lipschitz_icl.loss.pairwise.pair_seconds`)."""
    tc, n = problem.task_class, problem.n
    isotropic = model.kind == "softmax" and model.w is not None
    kernel = getattr(tc, "kernel", None)  # a prior given by its kernel (lipschitz_icl.tasks.zonal_class)
    if method == "averaged" and isotropic and kernel is not None:
        from lipschitz_icl.loss.pairwise import pair_seconds

        return n * n * pair_seconds(kernel)
    if method == "averaged" and isotropic and tc.rotation_invariant:
        return n * (SECONDS_PER_KINK_POINT if tc.quadrature == "arc-cosine" else SECONDS_PER_REDUCED_POINT)
    return n * (problem.d + 2) * SECONDS_PER_COORDINATE


def check_work(
    problem: Problem, contexts: int, seconds_per_context: float, budget: float, name="contexts", floor: int = 2
) -> None:
    """Refuse a Monte Carlo estimate of ``contexts`` contexts at ``seconds_per_context`` each beyond ``budget``
    (:func:`lipschitz_icl.budget.check`): naming ``name`` with the largest number within the budget
    (:func:`lipschitz_icl.budget.fewer_contexts`: a smaller ``n`` when that is below ``floor``, the fewest the
    caller accepts), or ``n`` when not even two contexts fit."""
    affordable = budgets.largest_count(budget, seconds_per_context)
    where = f"n = {problem.n}, d = {problem.d}"
    if affordable < 2:
        budgets.check(
            2 * seconds_per_context,
            budget,
            name="n",
            value=problem.n,
            what=f"two contexts of this Monte Carlo estimate at {where}",
            cheaper="a smaller n, or method 'exact' or 'asymptotic' (any n)",
        )
    budgets.check(
        contexts * seconds_per_context,
        budget,
        name=name,
        value=contexts,
        what=f"{contexts} contexts at {where}",
        cheaper=budgets.fewer_contexts(affordable, name, floor)
        + (", or method 'exact'" if problem.task_class.exact_route else ""),
    )


def _chunks(total: int, per_chunk: int):
    for start in range(0, total, per_chunk):
        yield min(per_chunk, total - start)


def _estimates(bias_c, noise_c, loss_c, method: str, info: dict) -> LossEstimate:
    return LossEstimate(
        Estimate.from_samples(loss_c), Estimate.from_samples(bias_c), Estimate.from_samples(noise_c), method, info
    )


def naive_loss(
    problem: Problem,
    model: Attention,
    contexts: int,
    rng: np.random.Generator,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> LossEstimate:
    """Plain Monte Carlo: per prompt ``(yhat - f(q))^2``; bias from the same prompt without noise,
    ``(sum_i p_i f(x_i) - f(q))^2``, noise part ``(sum_i p_i eps_i)^2``."""
    per_chunk = max(1, chunk_elements // (problem.n * problem.d))
    parts: dict[str, list] = {"bias": [], "noise": [], "loss": []}
    for size in _chunks(contexts, per_chunk):
        task, x, y, q, fq = problem.sample_prompts(rng, size)
        p = model.weights(x, q)
        fx = task(x)
        clean = np.einsum("cn,cn->c", p, fx) - fq
        noisy = np.einsum("cn,cn->c", p, y - fx)
        parts["bias"].append(clean**2)
        parts["noise"].append(noisy**2)
        parts["loss"].append((clean + noisy) ** 2)
    arrays = {k: np.concatenate(v) for k, v in parts.items()}
    return _estimates(arrays["bias"], arrays["noise"], arrays["loss"], "naive", {"contexts": contexts})


def averaged_loss(
    problem: Problem,
    model: Attention,
    contexts: int,
    rng: np.random.Generator,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> LossEstimate:
    """Task-averaged Monte Carlo: per context the exact conditional expectation over the task
    coefficients and the noise, ``v ||sum p phi(x) - phi(q)||^2 + v_b (sum p - 1)^2 + sigma^2 sum p^2``
    (``v_b = L^2/3`` the intercept variance, zero contribution for softmax)."""
    tc = problem.task_class
    sigma2 = problem.sigma**2
    if getattr(tc, "kernel", None) is not None and model.kind == "softmax" and model.w is not None:
        from lipschitz_icl.loss.pairwise import pairwise_loss  # a prior given by its kernel: the pairwise-kernel form

        return pairwise_loss(problem, model.w, contexts=contexts, rng=rng)
    if model.kind == "softmax" and model.w is not None and tc.rotation_invariant:
        if tc.quadrature == "arc-cosine":  # relu: the direction averaged exactly across its kinks
            from lipschitz_icl.loss.arccosine import arccosine_terms

            bias_c, collision_c = arccosine_terms(tc, problem.n, model.w, contexts, rng, chunk_elements)
            form = "reduced, direction exact"
        else:
            bias_c, collision_c = isotropic_terms(tc, problem.n, model.w, contexts, rng, chunk_elements)
            form = "reduced"
        noise_c = sigma2 * collision_c
        return _estimates(bias_c, noise_c, bias_c + noise_c, "averaged", {"contexts": contexts, "form": form})
    ((bias_c, noise_c),) = general_terms(problem, [model], contexts, rng, chunk_elements)
    return _estimates(bias_c, noise_c, bias_c + noise_c, "averaged", {"contexts": contexts, "form": "general"})


def general_terms(
    problem: Problem,
    models,
    contexts: int,
    rng: np.random.Generator,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    budget: float = budgets.ENGINE_SECONDS,
):
    """Per-context ``(bias_c, noise_c)`` of the task-averaged estimator for each model, all on the
    *same* draws of covariates, queries and task directions (common random numbers); within the work
    ``budget`` (``n (d + 2)`` coordinates per context and model)."""
    per_context = problem.n * (problem.d + 2) * SECONDS_PER_COORDINATE * max(1, len(models))
    check_work(problem, contexts, per_context, budget)
    tc = problem.task_class
    sigma2 = problem.sigma**2
    per_chunk = max(1, chunk_elements // (problem.n * problem.d))
    intercept_variance = tc.L**2 / 3.0 if tc.has_intercept else 0.0
    parts: list[tuple[list, list]] = [([], []) for _ in models]
    for size in _chunks(contexts, per_chunk):
        x = laws.uniform_sphere(rng, (size, problem.n), problem.d)
        q = laws.uniform_sphere(rng, size, problem.d)
        features = tc.features(rng, x, q)
        for model, (bias_parts, noise_parts) in zip(models, parts):
            p = model.weights(x, q)
            bias = features.bias(p)
            if model.kind == "linear" and intercept_variance:
                bias = bias + intercept_variance * (np.sum(p, axis=-1) - 1.0) ** 2
            bias_parts.append(bias)
            noise_parts.append(sigma2 * np.sum(p * p, axis=-1))
    return [(np.concatenate(b), np.concatenate(nz)) for b, nz in parts]


def loss_differences(
    problem: Problem,
    base: Attention,
    others,
    *,
    contexts: int = 20000,
    rng=0,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> list[Estimate]:
    """``L(other) - L(base)`` for each of ``others``, as paired estimates on common random numbers
    (task-averaged, general form): the standard error is that of the per-context differences, far
    smaller than that of either loss when the models are close."""
    contexts = check_int("contexts", contexts, minimum=2)
    terms = general_terms(problem, [base, *others], contexts, check_rng(rng), chunk_elements)
    base_loss = terms[0][0] + terms[0][1]
    return [Estimate.from_samples(b + nz - base_loss) for b, nz in terms[1:]]


def paired_ratio(problem, models, contexts: int, stream: np.random.SeedSequence):
    """ICL errors of ``models`` on common contexts of ``problem`` and, for each, the ratio ``r_j = mean(l_j) /
    mean(l_ref)`` of its per-context errors ``l_j`` to those of the last model, with the delta-method standard
    error ``sd(l_j - r_j l_ref) / (mean(l_ref) sqrt(N))``.  Returns ``(errors, ratios, ratio standard errors)``."""
    per = [b + nz for b, nz in general_terms(problem, models, contexts, np.random.default_rng(stream))]
    ref = per[-1]
    ratios = [float(loss.mean() / ref.mean()) for loss in per]
    ses = [float(np.std(loss - r * ref, ddof=1) / (ref.mean() * math.sqrt(loss.size))) for loss, r in zip(per, ratios)]
    return [float(loss.mean()) for loss in per], ratios, ses
