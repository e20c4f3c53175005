"""The optimal window ``w*`` for ``M = w I``: ``w* = argmin_w L(w)``.

==============  ======================================================================================
``mc``          Monte Carlo on the reduced form (:mod:`lipschitz_icl.loss.isotropic`) with common random
                numbers: the same contexts for every ``w``.  Newton's method in ``theta = log w`` on the
                sample-mean loss, with the per-context first and second derivatives in closed form.
                Uncertainty by the M-estimator (sandwich) rule: with per-context gradients ``g_c`` at
                the optimum and mean curvature ``H``, ``se(theta*) = sd(g_c) / (|H| sqrt(N))``; the
                interval is ``exp(theta* +- z se)``.  Contexts are added (pilot, then the size the pilot
                says is needed) until the interval's half-width is within ``rel_precision`` of ``w*``.
``asymptotic``  minimiser of the large-``n`` loss (:mod:`lipschitz_icl.loss.asymptotic`), bounded Brent in
                ``theta``, inside the model's regime at the minimiser (refused outside: use ``exact``); the
                interval is the optimiser's tolerance widened by the model's error ``3 rho``.
``exact``       the same on the quadrature loss (:mod:`lipschitz_icl.exact.route`).
==============  ======================================================================================

Supported range: ``n >= 2`` (at ``n = 1`` the loss does not depend on ``w``), ``sigma > 0``, the
problem's ranges (:mod:`lipschitz_icl.problem`), ``mc`` ``n <= 1e7``.  The search covers
:data:`W_SEARCH` = ``[1e-3, 1e8]``: a ``w*`` that ends within a factor ``exp(1e-3)`` of an end is not a
minimiser that was found, so it is returned with the open interval ``(0, w]`` or ``[w, inf)`` and
:attr:`WStar.inconclusive` set (the CLI exits 3); so is an ``mc`` result whose interval did not reach
``rel_precision``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from lipschitz_icl import budget as budgets
from lipschitz_icl.estimate import Estimate, LossEstimate, normal_quantile
from lipschitz_icl.loss.isotropic import IsotropicBatch, draw_isotropic_batch
from lipschitz_icl.problem import Problem, check_problem
from lipschitz_icl.tasks.registry import task_names
from lipschitz_icl.validation import ParameterError, check_choice, check_int, check_real, check_rng

__all__ = ["WStar", "wstar", "wstar_mc", "wstar_asymptotic", "wstar_exact", "WSTAR_METHODS", "wstar_elasticities"]

WSTAR_METHODS = ("mc", "asymptotic", "exact")
W_SEARCH = (1e-3, 1e8)
THETA_BOUNDS = (math.log(W_SEARCH[0]), math.log(W_SEARCH[1]))
REL_PRECISION_RANGE = (1e-4, 0.5)
BANK_BYTES = 40  # bytes the mc bank holds per context point (t, features, temporaries of one evaluation)
# the mc search's cost per point of its bank (the work budget, lipschitz_icl.budget): seconds on the project
# machine for the pilot, the Newton steps and the growth, an upper envelope of benchmarks/bench_budget.py
SECONDS_PER_BANK_POINT = 4e-6


@dataclass(frozen=True)
class WStar:
    """``w*`` (an :class:`Estimate`), its interval ``(ci_low, ci_high)``, the loss there, the method, what
    the search reports (``info``: evaluations, seconds, contexts, ...) and its status flags:

    ``at_search_bound``
        the search ended at an end of :data:`W_SEARCH` (the interval is open on that side);
    ``at_budget_bound``
        the method's work budget refused the loss beyond ``w*`` (the interval is open on that side);
    ``precision_reached``
        ``mc`` only: the interval's relative half-width reached the requested precision;
    ``loss_converged``
        deterministic methods: the loss at ``w*`` reached its stated tolerance.
    """

    w_star: Estimate
    ci_low: float
    ci_high: float
    loss: Estimate
    method: str
    info: dict = field(default_factory=dict)
    at_search_bound: bool = False
    at_budget_bound: bool = False
    precision_reached: bool | None = None
    loss_converged: bool | None = None

    @property
    def inconclusive(self) -> bool:
        """The search ended at a bound of :data:`W_SEARCH` or of the method's budget, ``mc`` missed its
        precision target, or the deterministic loss at ``w*`` did not reach its tolerance."""
        return (
            self.at_search_bound
            or self.at_budget_bound
            or self.precision_reached is False
            or self.loss_converged is False
        )

    def to_dict(self) -> dict:
        """The result as JSON-ready keys: ``w_star``, ``ci_low``, ``ci_high``, ``loss``, ``method``, the
        flags that apply (``None`` ones left out) and the entries of ``info``."""
        flags = {
            "at_search_bound": self.at_search_bound,
            "at_budget_bound": self.at_budget_bound,
            "precision_reached": self.precision_reached,
            "loss_converged": self.loss_converged,
        }
        return {
            "w_star": self.w_star.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "loss": self.loss.value,
            "method": self.method,
            **{k: v for k, v in flags.items() if v is not None},
            **self.info,
        }


def _w_of(theta: float) -> float:
    """``exp(theta)`` kept inside :data:`W_SEARCH` (the optimiser may step a rounding error beyond)."""
    return min(max(math.exp(theta), W_SEARCH[0]), W_SEARCH[1])


def _at_bound(theta: float) -> bool:
    return not (THETA_BOUNDS[0] + 1e-3 < theta < THETA_BOUNDS[1] - 1e-3)


def _open_interval(w_star: float) -> tuple[float, float]:
    """The interval a search that ended at a bound supports: everything beyond that bound."""
    return (0.0, w_star) if math.log(w_star) < sum(THETA_BOUNDS) / 2 else (w_star, math.inf)


def wstar(problem: Problem, method: str = "mc", **kwargs) -> WStar:
    """``w* = argmin_w L(w)`` of ``problem`` for ``M = w I`` by ``method``.

    Parameters
    ----------
    problem : Problem
        A rotation-invariant task class (affine, relu, cosine), ``n >= 2``, ``sigma > 0``.
    method : {"mc", "asymptotic", "exact"}
        Monte Carlo with common random numbers (:func:`wstar_mc`), the minimiser of the large-``n``
        loss (:func:`wstar_asymptotic`) or of the quadrature loss at any ``n`` (:func:`wstar_exact`).
    **kwargs
        Passed to the method's function (``rng``, ``rel_precision``, ``contexts``, ... for ``mc``;
        ``rel_tol`` for the others).

    Returns
    -------
    WStar
        ``w*`` (an :class:`~lipschitz_icl.estimate.Estimate`), its interval ``(ci_low, ci_high)``, the loss
        at ``w*``; :attr:`WStar.inconclusive` when the search ended at a bound or missed its precision.

    Examples
    --------
    >>> from lipschitz_icl import make_problem
    >>> from lipschitz_icl.optimum import wstar
    >>> problem = make_problem("affine", d=3, n=100, L=1.0, sigma=0.5)
    >>> exact = wstar(problem, "exact")
    >>> print(f"w* = {exact.w_star.value:.3f}, loss {exact.loss.value:.5f}")
    w* = 4.447, loss 0.01820
    >>> mc = wstar(problem, "mc", rng=0)     # its sandwich interval holds the exact w*
    >>> bool(mc.ci_low <= exact.w_star.value <= mc.ci_high), mc.inconclusive
    (True, False)
    """
    problem = check_problem(problem)
    method = check_choice("method", method, WSTAR_METHODS)
    solvers: dict[str, Callable[..., WStar]] = {"mc": wstar_mc, "asymptotic": wstar_asymptotic, "exact": wstar_exact}
    return solvers[method](problem, **kwargs)


def _require_isotropic(problem: Problem):
    check_problem(problem)
    if not problem.task_class.rotation_invariant:
        raise ParameterError(
            "task",
            f"a rotation-invariant class ({', '.join(task_names(rotation_invariant=True))}) for w*",
            problem.task,
        )
    if problem.sigma <= 0:
        raise ParameterError(
            "sigma", "> 0 for w* (without label noise the window need not have a finite optimum)", problem.sigma
        )
    if problem.n < 2:
        raise ParameterError("n", ">= 2 for w* (with one context point the loss does not depend on w)", problem.n)


def _minimise_deterministic(loss_of_theta, theta0: float, xatol: float):
    """Minimise a unimodal function of ``theta = log w``: expand a bracket from ``theta0`` in steps that
    double (from 0.25), then bounded Brent inside the bracket (an infinite value at ``theta0``, a window
    beyond the method's budget, first moves the start down in doubling steps).  Returns
    ``(theta*, evaluations)``."""
    from scipy import optimize

    cache = {}

    def f(theta):
        if theta not in cache:
            cache[theta] = loss_of_theta(theta)
        return cache[theta]

    lo_bound, hi_bound = THETA_BOUNDS
    step = 0.25
    mid = min(max(theta0, lo_bound + step), hi_bound - step)
    walk = step
    while not math.isfinite(f(mid)) and mid - walk > lo_bound:  # a start beyond the method's budget (large
        mid -= walk  # w): walk down in doubling steps
        walk *= 2.0
    left, right = mid - step, mid + step
    while True:
        if f(left) < f(mid) and left > lo_bound:
            step *= 2.0
            left, mid, right = max(lo_bound, mid - step), left, mid
        elif f(right) < f(mid) and right < hi_bound:
            step *= 2.0
            left, mid, right = mid, right, min(hi_bound, mid + step)
        else:
            break
    res = optimize.minimize_scalar(f, bounds=(left, right), method="bounded", options={"xatol": xatol})
    return float(res.x), len(cache)


def _leading_order_guess(problem: Problem) -> float:
    """A starting ``theta``: the minimiser of the closed-form large-``n`` loss of the linear kernel form
    (the affine class; cheap); a class given by its kernel supplies its own leading-order start
    (``task_class.wstar_guess``)."""
    guess = getattr(problem.task_class, "wstar_guess", None)
    if guess is not None and problem.sigma > 0:
        return math.log(guess(problem.n, problem.sigma))
    from lipschitz_icl.loss.asymptotic import form_terms

    def loss(theta):
        try:
            b0, b1, R = form_terms("linear", problem.d, math.exp(theta))
        except ParameterError:  # R_d(w) beyond the double range at large w and d: not the minimiser
            return math.inf
        return problem.L**2 * (b0 + b1 / problem.n) + problem.sigma**2 * R / problem.n

    grid = np.linspace(*THETA_BOUNDS, 23)
    values = [loss(th) for th in grid]
    return float(grid[int(np.argmin(values))])


_EDGE = 0.01  # a minimiser whose neighbour exp(+-_EDGE) w* could not be evaluated is at a budget bound


def _refusing(loss_fn, refused: list):
    """``loss_fn`` with a refusal of ``w`` (the method's grid or range budget at that window) turned into an
    infinite loss, the window recorded in ``refused``."""

    def loss(problem, w):
        try:
            return loss_fn(problem, w)
        except ParameterError as exc:
            if exc.name != "w":
                raise
            refused.append(w)
            return LossEstimate(Estimate(math.inf), Estimate(math.inf), Estimate(math.inf), "refused")

    return loss


def _deterministic_wstar(problem: Problem, loss_fn, method: str, rel_tol: float, loss_accuracy: float = 2e-6) -> WStar:
    """Minimise ``loss_fn`` in ``log w``.  Windows the method refuses (budget) count as an infinite loss; a
    minimiser next to such a window (within ``exp(+-_EDGE)``) is not a minimum that was found: it is
    reported like one at the search bound, inconclusive with the open interval beyond it
    (``at_budget_bound``); a search that can evaluate no window near its minimiser is refused."""
    _require_isotropic(problem)
    rel_tol = check_real("rel_tol", rel_tol, minimum=0.0, strict_minimum=True)
    start = time.perf_counter()
    refused: list = []
    loss = _refusing(loss_fn, refused)
    theta, evaluations = _minimise_deterministic(
        lambda th: loss(problem, _w_of(th)).loss.value, _leading_order_guess(problem), rel_tol
    )
    w_star = _w_of(theta)
    at = loss(problem, w_star)
    if not math.isfinite(at.loss.value):
        raise ParameterError(
            "method",
            f"a method that can evaluate the loss near w* for these inputs ({method} "
            f"is out of its budget at every window the search reached, e.g. w = {w_star:.4g})",
            method,
        )
    info = {"evaluations": evaluations, "seconds": time.perf_counter() - start}
    at_search_bound = _at_bound(theta)
    side = 0
    if refused:
        side = next(
            (s for s in (1, -1) if not math.isfinite(loss(problem, w_star * math.exp(s * _EDGE)).loss.value)), 0
        )
    # accuracy: the optimiser's tolerance plus the shift of the minimiser that the loss's own numerical
    # error allows (``loss_accuracy``, relative in w*)
    accuracy = rel_tol + loss_accuracy
    low, high = w_star * math.exp(-accuracy), w_star * math.exp(accuracy)
    if at_search_bound:
        low, high = _open_interval(w_star)
    elif side:
        low, high = (w_star, math.inf) if side > 0 else (0.0, w_star)
    converged = bool(at.info["converged"]) if "converged" in at.info else None
    return WStar(
        Estimate(w_star, 0.0, 0, w_star * accuracy),
        low,
        high,
        at.loss,
        method,
        info,
        at_search_bound=at_search_bound,
        at_budget_bound=side != 0,
        loss_converged=converged,
    )


# arc-cosine form (relu): the 2-D quadrature's error (up to 2.8e-4 of the loss at d = 2, not smooth in w,
# lipschitz_icl.loss.asymptotic.form_accuracy) moves the minimiser: measured between refine=1 and refine=8,
# up to 1.7e-3 at d = 2 (n = 1e4, w* = 24), 2.4e-4 at d = 2 and 7.7e-5 at d = 3 (n = 1e14)
_ASYMPTOTIC_WSTAR_ACCURACY: dict[str | None, float] = {"arc-cosine": 3e-3}
# the minimiser of the large-n model moves from the finite-n w* by at most 2.7 rho (rho the model's regime
# parameter at w*, lipschitz_icl.loss.asymptotic.Regime): measured against the exact w* over 199 problems
# (affine, relu; d = 2 ... 50; n = 3 ... 1e6; sigma = 0.1, 0.5, 1); tests/test_optimum.py checks a sample
WSTAR_MODEL_FACTOR = 3.0


def _asymptotic_search(problem: Problem, rel_tol: float) -> WStar:
    """The minimiser of the large-``n`` model at any ``n`` (:func:`~lipschitz_icl.loss.asymptotic.large_n_model`),
    without its regime: a search start, or the raw result :func:`wstar_asymptotic` judges."""
    from lipschitz_icl.loss.asymptotic import large_n_model

    return _deterministic_wstar(
        problem,
        large_n_model,
        "asymptotic",
        rel_tol,
        loss_accuracy=_ASYMPTOTIC_WSTAR_ACCURACY.get(problem.task_class.quadrature, 2e-6),
    )


def wstar_asymptotic(problem: Problem, *, rel_tol: float = 1e-6) -> WStar:
    """Minimiser of the large-``n`` loss ``L^2 (b0(w) + b1(w)/n) + sigma^2 R_d(w)/n`` (``R_d(w)`` beyond the
    double range at large ``w`` and ``d``: an infinite loss there), inside the model's regime.

    The regime is judged at the minimiser (:class:`lipschitz_icl.loss.asymptotic.Regime`, ``rho <= 0.05``):
    outside it the result is refused (``ParameterError`` on ``method``: use the exact method); inside, the
    interval is widened by the model's own error, ``exp(+-WSTAR_MODEL_FACTOR rho)``, and ``info["regime"]``
    holds ``rho``.  Far outside (``d = 50``, ``n = 3``) the model's minimiser is a third below the exact
    ``w*``."""
    from lipschitz_icl.loss.asymptotic import asymptotic_loss, regime

    found = _asymptotic_search(problem, rel_tol)
    w_star = found.w_star.value
    where = regime(problem.d, problem.n, w_star)
    if not where.inside:
        raise ParameterError(
            "method",
            f"a method inside its regime for these inputs (the asymptotic w* = {w_star:.4g} at n = "
            f"{problem.n:.4g}, d = {problem.d}: {where.describe()}; use --method exact)",
            "asymptotic",
        )
    spread = found.w_star.abs_error / w_star + WSTAR_MODEL_FACTOR * where.rho  # the search's accuracy + the model's
    low, high = found.ci_low, found.ci_high
    if not (found.at_search_bound or found.at_budget_bound):
        low, high = w_star * math.exp(-spread), w_star * math.exp(spread)
    return replace(
        found,
        w_star=Estimate(w_star, 0.0, 0, w_star * spread),
        ci_low=low,
        ci_high=high,
        loss=asymptotic_loss(problem, w_star).loss,
        info={**found.info, "regime": where.rho},
    )


def wstar_exact(problem: Problem, *, rel_tol: float = 1e-6) -> WStar:
    """Minimiser of the quadrature loss of :mod:`lipschitz_icl.exact.route` (windows beyond its grid budget:
    see :func:`_deterministic_wstar`)."""
    from lipschitz_icl.exact.route import check_budget, exact_loss

    _require_isotropic(problem)
    check_budget(problem, math.exp(_leading_order_guess(problem)))  # refused up front, not after the search
    # measured: w* moves by ~1e-6 relative between quadrature tolerances 1e-6 and 1e-10
    return _deterministic_wstar(problem, exact_loss, "exact", rel_tol, loss_accuracy=2e-6)


class _Bank:
    """Common random numbers: fixed context batches, extended on demand (same seed stream)."""

    def __init__(self, problem: Problem, rng: np.random.Generator, chunk_contexts: int, w_hint: float | None = None):
        self.problem = problem
        self.w_hint = w_hint
        self.rng = rng
        self.chunk_contexts = chunk_contexts
        self.batches: list[IsotropicBatch] = []

    @property
    def contexts(self) -> int:
        return sum(b.contexts for b in self.batches)

    def grow_to(self, contexts: int):
        while self.contexts < contexts:
            size = min(self.chunk_contexts, contexts - self.contexts)
            self.batches.append(
                draw_isotropic_batch(self.problem.task_class, self.problem.n, size, self.rng, w_hint=self.w_hint)
            )

    def terms(self, w: float, order: int):
        """Per-context loss and its theta-derivatives: ``loss_c = bias_c + sigma^2 collision_c``."""
        s2 = self.problem.sigma**2
        pieces = [b.terms(w, order) for b in self.batches]
        cols = [np.concatenate([p[k] for p in pieces]) for k in range(len(pieces[0]))]
        out = {"bias": cols[0], "loss": cols[0] + s2 * cols[1]}
        if order >= 1:
            out["grad"] = cols[2] + s2 * cols[3]
        if order >= 2:
            out["hess"] = cols[4] + s2 * cols[5]
        return out


def _newton(bank: _Bank, theta: float, max_iter: int = 50, tol: float = 1e-8) -> tuple[float, int]:
    """Newton in ``theta`` on the bank's mean loss; a step that does not lower the mean loss is
    halved, and where the curvature is not positive a bounded Brent search takes over.  Stops when
    the step falls below ``tol``."""
    for iteration in range(1, max_iter + 1):
        t = bank.terms(math.exp(theta), 2)
        g, h, f0 = float(np.mean(t["grad"])), float(np.mean(t["hess"])), float(np.mean(t["loss"]))
        if h <= 0:
            from scipy import optimize  # only here: Newton's steps need no SciPy

            res = optimize.minimize_scalar(
                lambda th: float(np.mean(bank.terms(math.exp(th), 0)["loss"])),
                bounds=(theta - 3.0, theta + 3.0),
                method="bounded",
                options={"xatol": 1e-6},
            )
            theta = float(res.x)
            continue
        step = -g / h
        step = max(-2.0, min(2.0, step))
        while abs(step) > tol:
            candidate = theta + step
            if float(np.mean(bank.terms(math.exp(candidate), 0)["loss"])) <= f0:
                break
            step *= 0.5
        theta += step
        if abs(step) < tol:
            return theta, iteration
    return theta, max_iter


def wstar_mc(
    problem: Problem,
    *,
    rng=0,
    rel_precision: float = 0.005,
    level: float = 0.95,
    pilot_contexts: int = 2000,
    max_contexts: int = 400_000,
    contexts: int | None = None,
    w0: float | None = None,
    chunk_elements: int = 1 << 21,
    budget: float = budgets.ENGINE_SECONDS,
) -> WStar:
    """``w*`` by Monte Carlo with common random numbers; ``contexts`` fixes the sample size, otherwise
    it is chosen so that the ``level`` interval has half-width ``<= rel_precision * w*`` (capped at
    ``max_contexts`` and at the work ``budget``, estimated seconds; ``precision_reached`` says whether
    the target was met).  Refused before any work when the bank of ``contexts`` (or of 10, the least
    search) exceeds the memory or the work budget."""
    _require_isotropic(problem)
    from lipschitz_icl.loss.estimators import MAX_MC_N

    if problem.n > MAX_MC_N:
        raise ParameterError("n", f"<= {MAX_MC_N:.0e} for method 'mc' (use 'exact' or 'asymptotic')", problem.n)
    generator = check_rng(rng)
    rel_precision = check_real(
        "rel_precision", rel_precision, minimum=REL_PRECISION_RANGE[0], maximum=REL_PRECISION_RANGE[1]
    )
    level = check_real("level", level, minimum=0.5, maximum=0.999999)
    pilot_contexts = check_int("pilot_contexts", pilot_contexts, minimum=10)
    max_contexts = check_int("max_contexts", max_contexts, minimum=10)
    if contexts is not None:
        contexts = check_int("contexts", contexts, minimum=10)
    # the bank keeps every drawn context (t and the reduced features: about BANK_BYTES per point)
    per_context = problem.n * SECONDS_PER_BANK_POINT
    affordable = min(budgets.largest_count(budget, per_context), budgets.MEMORY_BUDGET // (BANK_BYTES * problem.n))
    asked, name = (contexts, "contexts") if contexts is not None else (10, "n")
    cheaper = f"contexts <= {affordable}" if contexts is not None and affordable >= 10 else "method 'exact' (any n)"
    where = f"{asked} contexts at n = {problem.n}"
    budgets.check_memory(
        asked * BANK_BYTES * problem.n,
        name=name,
        value=contexts or problem.n,
        what=f"the bank of {where}",
        cheaper=cheaper,
    )
    budgets.check(
        asked * per_context,
        budget,
        name=name,
        value=contexts or problem.n,
        what=f"the w* search by Monte Carlo on {where}",
        cheaper=cheaper,
    )
    max_contexts = min(max_contexts, affordable)
    pilot_contexts = min(pilot_contexts, max_contexts)
    start = time.perf_counter()
    if w0 is None:
        w0 = _initial_guess(problem, generator)
    w0 = check_real("w0", w0, minimum=0.0, strict_minimum=True)
    z = normal_quantile(0.5 + 0.5 * level)
    bank = _Bank(problem, generator, max(1, chunk_elements // problem.n), w_hint=w0)
    bank.grow_to(contexts if contexts is not None else min(pilot_contexts, max_contexts))
    theta, iterations = _newton(bank, math.log(w0))
    se = _sandwich_se(bank, theta)
    if contexts is None and math.isfinite(se):  # (no curvature at the pilot: inconclusive as it stands)
        needed = int(math.ceil(bank.contexts * (z * se / math.log1p(rel_precision)) ** 2 * 1.1))
        if needed > bank.contexts:
            bank.grow_to(min(needed, max_contexts))
            theta, more = _newton(bank, theta)
            iterations += more
            se = _sandwich_se(bank, theta)
    theta = min(max(theta, THETA_BOUNDS[0]), THETA_BOUNDS[1])
    w_star = math.exp(theta)
    at = bank.terms(w_star, 0)
    half = z * se
    reached = bool(math.isfinite(half) and math.expm1(half) <= rel_precision * (1 + 1e-12))
    info = {
        "contexts": bank.contexts,
        "contexts_within_budget": affordable,  # the most the work and memory budgets allow
        "newton_iterations": iterations,
        "relative_halfwidth": math.expm1(half) if math.isfinite(half) else math.inf,
        "seconds": time.perf_counter() - start,
    }
    low, high = (w_star * math.exp(-half), w_star * math.exp(half)) if math.isfinite(half) else (0.0, math.inf)
    at_search_bound = _at_bound(theta)
    if at_search_bound:
        low, high = _open_interval(w_star)
    return WStar(
        Estimate(w_star, w_star * se, bank.contexts),
        low,
        high,
        Estimate.from_samples(at["loss"]),
        "mc",
        info,
        at_search_bound=at_search_bound,
        precision_reached=reached,
    )


def _sandwich_se(bank: _Bank, theta: float) -> float:
    """``sd(g_c) / (|H| sqrt(N))``; infinite where the mean curvature is not positive (a flat or concave
    sample loss locates no minimum: the interval is unbounded and the result inconclusive)."""
    t = bank.terms(math.exp(theta), 2)
    g, h = t["grad"], float(np.mean(t["hess"]))
    if not (h > 0 and math.isfinite(h)):
        return math.inf
    return float(Estimate.from_samples(g).standard_error / h)


def _initial_guess(problem: Problem, rng: np.random.Generator) -> float:
    """Start of the Newton search: the asymptotic ``w*`` where it exists, else a coarse CRN grid drawn
    from a stream spawned from the caller's generator (``rng.spawn``: its own state is not advanced)."""
    from lipschitz_icl.loss.asymptotic import asymptotic_tasks

    if problem.task in asymptotic_tasks():  # a start only: the model's minimiser, inside its regime or not
        return _asymptotic_search(problem, rel_tol=1e-3).w_star.value
    probe = _Bank(problem, rng.spawn(1)[0], 1 << 30)
    probe.grow_to(200)
    grid = np.exp(np.linspace(math.log(1e-2), math.log(1e5), 36))
    values = [float(np.mean(probe.terms(w, 0)["loss"])) for w in grid]
    return float(grid[int(np.argmin(values))])


def wstar_elasticities(factors, results) -> list[tuple[float, float, float]]:
    """``(low, mid, high)`` of the elasticity ``log(w*_b/w*_a)/log(f_b/f_a)`` between consecutive grid
    points, the interval from the exact ``w*`` intervals."""
    out = []
    for (fa, a), (fb, b) in zip(zip(factors, results), list(zip(factors, results))[1:]):
        span = math.log(fb / fa)
        out.append(
            (
                math.log(b.ci_low / a.ci_high) / span,
                math.log(b.w_star.value / a.w_star.value) / span,
                math.log(b.ci_high / a.ci_low) / span,
            )
        )
    return out
