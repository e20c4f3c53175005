"""Benchmarks of the core engine, side by side and as ratios, in one run.

1. Statistical efficiency: (variance x time) per context of the naive estimator over that of the
   task-averaged one, at d = 5, n = 1000, w = w*_asymptotic (target >= 1000x).
2. Kernel throughput: one task-averaged loss evaluation on fixed samples (M = w I) against a bare
   numpy.exp over the same number of elements, same run (target <= 3x).
3. w*: `--method mc` to 0.5% relative precision (target < 10 s for n <= 1000) and
   `--method asymptotic` (target < 0.5 s).
4. Memory: one loss evaluation with n = 100000 and 10000 contexts (target peak < 2 GiB), measured in
   a child process by its peak resident set size.

Run: python benchmarks/bench_engine.py [--quick]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import numpy as np

from lipschitz_icl import make_problem
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.loss.isotropic import draw_isotropic_batch
from lipschitz_icl.optimum import wstar


def _best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def efficiency(task: str, contexts_naive: int, contexts_avg: int):
    problem = make_problem(task, 5, 1000, 1.0, 0.5)
    w = wstar(problem, "asymptotic").w_star.value
    rows = {}
    for method, contexts in (("naive", contexts_naive), ("averaged", contexts_avg)):
        start = time.perf_counter()
        est = icl_loss(problem, w, method=method, contexts=contexts, rng=1)
        seconds = time.perf_counter() - start
        var_per_context = est.loss.standard_error**2 * contexts
        rows[method] = (est.loss.value, var_per_context, seconds / contexts)
    ratio = (rows["naive"][1] * rows["naive"][2]) / (rows["averaged"][1] * rows["averaged"][2])
    return w, rows, ratio


def throughput(task: str, n: int, contexts: int, repeats: int):
    problem = make_problem(task, 5, n, 1.0, 0.5)
    batch = draw_isotropic_batch(problem.task_class, n, contexts, np.random.default_rng(0), w_hint=8.0)
    array = np.random.default_rng(1).uniform(-10, 0, size=(contexts, n))
    t_kernel = _best_of(lambda: batch.terms(8.0, 0), repeats)
    t_exp = _best_of(lambda: np.exp(array), repeats)
    return t_kernel, t_exp, t_kernel / t_exp


def memory_child():
    problem = make_problem("relu", 5, 100000, 1.0, 0.5)
    est = icl_loss(problem, 50.0, contexts=10000, rng=0)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{peak_kib} {est.loss.value}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sample sizes (smoke run)")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child()
        return
    scale = 0.1 if args.quick else 1.0

    print("## 1. Statistical efficiency (d = 5, n = 1000, w = w*_asymptotic, L = 1, sigma = 0.5)\n")
    print("| task | w | method | loss | variance/context | seconds/context |")
    print("|---|---|---|---|---|---|")
    for task in ("affine", "relu"):
        w, rows, ratio = efficiency(task, int(20000 * scale), int(20000 * scale))
        for method, (value, var, sec) in rows.items():
            print(f"| {task} | {w:.3f} | {method} | {value:.6f} | {var:.3e} | {sec:.3e} |")
        print(f"| {task} | | **naive/averaged (variance x time)** | **{ratio:.0f}x** (target >= 1000x) | | |")

    print("\n## 2. Kernel throughput (fixed samples, M = w I, d = 5) against bare numpy.exp\n")
    print("| task | n | contexts | kernel s | exp s | ratio (target <= 3) |")
    print("|---|---|---|---|---|---|")
    for task in ("affine", "relu"):
        for n, contexts in ((1000, 2000), (100, 20000)):
            tk, te, r = throughput(task, n, contexts, 7)
            print(f"| {task} | {n} | {contexts} | {tk:.4f} | {te:.4f} | {r:.2f} |")

    print("\n## 3. w* timings (L = 1, sigma = 0.5)\n")
    print("| task | d | n | method | w* | 95% interval | rel. half-width | contexts | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for task in ("affine", "relu"):
        for d in (2, 5):
            for n in (100, 1000):
                problem = make_problem(task, d, n, 1.0, 0.5)
                for method in ("asymptotic", "mc"):
                    kwargs = {"rng": 0, "rel_precision": 0.005} if method == "mc" else {}
                    start = time.perf_counter()
                    res = wstar(problem, method, **kwargs)
                    sec = time.perf_counter() - start
                    half = (res.ci_high - res.ci_low) / (2 * res.w_star.value)
                    print(
                        f"| {task} | {d} | {n} | {method} | {res.w_star.value:.4f} | "
                        f"[{res.ci_low:.4f}, {res.ci_high:.4f}] | {half:.4f} | "
                        f"{res.info.get('contexts', '-')} | {sec:.2f} |"
                    )

    print("\n## 4. Memory: relu, d = 5, n = 100000, 10000 contexts, one loss evaluation\n")
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True
    ).stdout.split()
    sec = time.perf_counter() - start
    print(f"peak RSS {int(out[0]) / 2**20:.2f} GiB (target < 2 GiB), loss {float(out[1]):.6f}, {sec:.1f} s")


if __name__ == "__main__":
    main()
