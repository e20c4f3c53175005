"""Time of one exact loss evaluation (lipschitz_icl.exact.route.exact_loss) and of an exact w*, affine and relu.

For d in {2, 5, 10} and n in {1e2, 1e14} at the window w = (n L^2 / sigma^2)^(2/(d+2)) (the scale of the
optimum; L = 1, sigma = 0.5).  Each time is the median of ``--repeats`` runs after one warm-up run; one
run is a full ``exact_loss`` call at the default rtol = 1e-6 (two resolution levels).  The stated
relative error is the returned ``abs_error / value`` of the loss.

    PYTHONPATH=src python3 benchmarks/bench_exact.py [--repeats 7]

Note: the relu part is a dense matrix product; on a machine shared with other jobs a multi-threaded
BLAS can be slower than a single thread (try OPENBLAS_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    L, sigma = 1.0, 0.5
    print(
        f"python {platform.python_version()}, cpus {os.cpu_count()}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"median of {args.repeats} runs"
    )
    print(
        f"{'task':6} {'d':>3} {'n':>7} {'w':>10} {'loss':>12} {'rel.err':>9} {'level':>5} {'median s':>9} {'min s':>8}"
    )
    for task in ("affine", "relu"):
        for d in (2, 5, 10):
            for n in (10**2, 10**14):
                w = (n * L**2 / sigma**2) ** (2.0 / (d + 2))
                problem = make_problem(task, d, n, L, sigma)
                result = exact_loss(problem, w)  # warm-up
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    result = exact_loss(problem, w)
                    times.append(time.perf_counter() - start)
                rel = result.loss.abs_error / result.loss.value
                print(
                    f"{task:6} {d:3d} {n:7.0e} {w:10.4g} {result.loss.value:12.5e} {rel:9.1e} "
                    f"{result.info['level']:5d} {statistics.median(times):9.4f} {min(times):8.4f}"
                )

    print("\nexact w* (lipschitz_icl.optimum.wstar, method 'exact'; target < 2 s), median of 3 runs")
    print(f"{'task':6} {'d':>3} {'n':>7} {'w*':>12} {'evaluations':>11} {'median s':>9}")
    for task in ("affine", "relu"):
        for d in (2, 5, 10):
            for n in (10**2, 10**14):
                problem = make_problem(task, d, n, L, sigma)
                times = []
                for _ in range(3):
                    start = time.perf_counter()
                    res = wstar(problem, "exact")
                    times.append(time.perf_counter() - start)
                print(
                    f"{task:6} {d:3d} {n:7.0e} {res.w_star.value:12.6g} {res.info['evaluations']:11d} "
                    f"{statistics.median(times):9.3f}"
                )


if __name__ == "__main__":
    main()
