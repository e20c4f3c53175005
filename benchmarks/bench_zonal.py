"""Time of one exact zonal loss (lipschitz_icl.exact.zonal) and of an exact w*: cosine, a mixture and user kernels.

For d in {2, 3, 5, 10} and n in {1e2, 1e14} (sigma = 0.5, L = 1 for the built-in classes): the exact
w* (``wstar(..., 'exact')``) and one exact loss at that w*.  Each time is the median of ``--repeats``
runs after one warm-up run (the warm-up computes and caches the kernel's Gegenbauer coefficients).  The
stated relative error is the returned ``abs_error / value`` of the loss; ``conv`` whether the
resolution levels converged to rtol = 1e-6.  Targets (issue 13): loss < 0.2 s, w* < 2 s.

    PYTHONPATH=src:. python3 benchmarks/bench_zonal.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import time

from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import kernel_problem, make_problem, mixture_problem
from lipschitz_icl.validation import ParameterError

KERNELS = {
    "cosine": lambda d, n: make_problem("cosine", d, n, 1.0, 0.5),
    "mix": lambda d, n: mixture_problem("mix:affine=1,relu=1,cosine=1", d, n, 1.0, 0.5),
    "gauss": lambda d, n: kernel_problem("exp(-(2-2*t)/ell**2)", d, n, 0.5, {"ell": 0.5}),
    "matern52": lambda d, n: kernel_problem("(1+sqrt(5)*sqrt(2-2*t)+5*(2-2*t)/3)*exp(-sqrt(5)*sqrt(2-2*t))", d, n, 0.5),
}


def _median(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--d", type=int, nargs="*", default=[2, 3, 5, 10])
    args = parser.parse_args()
    print(f"python {platform.python_version()}, cpus {os.cpu_count()}, median of {args.repeats} runs")
    print(
        f"{'kernel':9} {'d':>3} {'n':>7} {'w*':>11} {'w* s':>7} {'loss':>12} {'rel.err':>8} {'conv':>5} {'loss s':>7}"
    )
    for name, make in KERNELS.items():
        for d in args.d:
            for n in (10**2, 10**14):
                problem = make(d, n)
                try:
                    result, t_w = _median(functools.partial(wstar, problem, "exact"), args.repeats)
                except ParameterError as exc:
                    print(f"{name:9} {d:3d} {n:7.0e}  refused: {exc}")
                    continue
                w = result.w_star.value
                loss, t_l = _median(functools.partial(exact_loss, problem, w), args.repeats)
                rel = loss.loss.abs_error / loss.loss.value
                print(
                    f"{name:9} {d:3d} {n:7.0e} {w:11.5g} {t_w:7.3f} {loss.loss.value:12.5e} {rel:8.1e} "
                    f"{loss.info['converged']!s:>5} {t_l:7.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
