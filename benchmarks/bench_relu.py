"""The relu task-averaged estimator against the naive one: variance x time per context, side by side.

Setting (issue 29, target >= 300x): relu, d = 5, n = 1000, L = 1, sigma = 0.5, w = w*_asymptotic.  Each
round runs, in a shuffled order on fresh seeds, the naive estimator (``icl_loss(method="naive")``), the
task-averaged one (``method="averaged"``: the direction averaged exactly, with control variates,
:mod:`lipschitz_icl.loss.arccosine`) and, for comparison, the reduced form that draws the direction per
context (:func:`lipschitz_icl.loss.isotropic.isotropic_terms`, the averaged estimator before this change).
A method's cost is its CPU time per context (``time.process_time``; wall time beside it) and its
variance the per-context variance of the loss (``se^2 x contexts``); a round's ratio is
``(var x cpu)_naive / (var x cpu)_method`` of that round, and the table gives the median over the rounds.
Each estimate is also held to the exact method (``z`` = difference / standard error).

    PYTHONPATH=src python benchmarks/bench_relu.py [--rounds 5] [--contexts 4000]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

import numpy as np

from lipschitz_icl import make_problem
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.loss.isotropic import isotropic_terms
from lipschitz_icl.optimum import wstar

D, N, L, SIGMA = 5, 1000, 1.0, 0.5


def drawn_direction(problem, w, contexts, seed):
    """``(loss, standard error)`` of the reduced form that draws the direction per context."""
    bias, collision = isotropic_terms(problem.task_class, problem.n, w, contexts, np.random.default_rng(seed), 1 << 20)
    loss = bias + problem.sigma**2 * collision
    return float(loss.mean()), float(loss.std(ddof=1) / math.sqrt(contexts))


def run(method, problem, w, contexts, seed):
    """``(loss, se, cpu seconds, wall seconds)`` of one estimate."""
    cpu, wall = time.process_time(), time.perf_counter()
    if method == "drawn direction":
        value, se = drawn_direction(problem, w, contexts, seed)
    else:
        est = icl_loss(problem, w, method=method, contexts=contexts, rng=seed)
        value, se = est.loss.value, est.loss.standard_error
    return value, se, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--contexts", type=int, default=4000, help="contexts per estimate (each method)")
    args = parser.parse_args()
    problem = make_problem("relu", D, N, L, SIGMA)
    w = wstar(problem, "asymptotic").w_star.value
    exact = icl_loss(problem, w, method="exact").loss.value
    methods = ["naive", "averaged", "drawn direction"]
    icl_loss(problem, w, method="averaged", contexts=50, rng=0)  # imports and caches outside the clock
    rows = {m: [] for m in methods}
    order = random.Random(0)
    for r in range(args.rounds):
        for k, method in enumerate(order.sample(methods, len(methods))):
            value, se, cpu, wall = run(method, problem, w, args.contexts, 1000 * r + k + 1)
            rows[method].append((value, se * se * args.contexts, cpu / args.contexts, wall / args.contexts))
    print(f"relu, d = {D}, n = {N}, L = {L:g}, sigma = {SIGMA:g}, w = w*_asymptotic = {w:.4f}; exact loss {exact:.6f}")
    print(f"{args.rounds} rounds of {args.contexts} contexts per method; load average {os.getloadavg()[0]:.1f}")
    print(
        "| method | loss (last round) | z vs exact | variance/context | CPU s/context | wall s/context | "
        "naive/method (variance x CPU), median [range] |"
    )
    print("|---|---|---|---|---|---|---|")
    for method in methods:
        value = rows[method][-1][0]
        z = (value - exact) / math.sqrt(rows[method][-1][1] / args.contexts)
        ratios = [(a[1] * a[2]) / (b[1] * b[2]) for a, b in zip(rows["naive"], rows[method])]
        var = statistics.median(x[1] for x in rows[method])
        cpu = statistics.median(x[2] for x in rows[method])
        wall = statistics.median(x[3] for x in rows[method])
        print(
            f"| {method} | {value:.6f} | {z:+.2f} | {var:.3e} | {cpu:.3e} | {wall:.3e} | "
            f"**{statistics.median(ratios):.0f}x** [{min(ratios):.0f}, {max(ratios):.0f}] |"
        )


if __name__ == "__main__":
    main()
