"""The certified ``w*`` targets of issue 27 (item 2), beside the float64 exact method, in one run.

1. A one-sided bound ``w* <= B`` and ``w* >= B`` at one ``(d, n)`` without locating ``w*``
   (:func:`lipschitz_icl.certified.wstar.wstar_bound`; ``B`` 10% beyond the exact ``w*``): target at most 2 s.
2. A two-sided certified ``w*`` to relative width ``1e-6`` (:func:`lipschitz_icl.certified.wstar.problem_wstar`):
   target at most 5 s (``d <= 10``, ``n <= 1e6``).

Both for the affine and the relu class (``L = 1``, ``sigma = 0.5``); beside each, ``wstar --method exact``
(float64, not certified).  Each time is one run: CPU time of this process (``time.process_time``) and wall
clock, on whatever else the machine is doing.  Each certified search has a budget (``--seconds``): past it
the result is undecided, and that is what is recorded.

    PYTHONPATH=src python3 benchmarks/bench_certified_wstar.py [--seconds 120] [--cases affine:3:1e6,relu:3:1000]
"""

from __future__ import annotations

import argparse
import json
import time

from lipschitz_icl.certified.loss import kernel_of
from lipschitz_icl.certified.wstar import problem_wstar, wstar_bound
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def case(task: str, d: int, n: int, seconds: float) -> dict:
    problem = make_problem(task, d, n, 1.0, 0.5)
    exact, exact_cpu, _ = timed(lambda: wstar(problem, "exact"))
    w_exact = float(exact.w_star.value)
    kernel = kernel_of(task, d, 1.0)
    row = {"task": task, "d": d, "n": n, "w_exact": w_exact, "exact_cpu": exact_cpu}
    for side, bound in (("upper", 1.1 * w_exact), ("lower", w_exact / 1.1)):
        result, cpu, wall = timed(lambda b=bound, s=side: wstar_bound(kernel, n, 0.5, 1.0, b, s, seconds=seconds))
        row[f"one_sided_{side}"] = {"bound": bound, "outcome": result.outcome, "cpu": cpu, "wall": wall}
    result, cpu, wall = timed(lambda: problem_wstar(problem, seconds=seconds))
    row["two_sided"] = {
        "decided": result.decided,
        "low": result.low,
        "high": result.high,
        "relative_width": (result.high - result.low) / result.low if result.decided else None,
        "holds_exact": result.decided and result.low <= w_exact <= result.high,
        "reason": result.info.get("reason"),
        "cpu": cpu,
        "wall": wall,
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--cases", default="affine:3:1e6,affine:10:1e6,relu:3:1000")
    args = parser.parse_args()
    for text in args.cases.split(","):
        task, d, n = text.split(":")
        print(json.dumps(case(task, int(d), int(float(n)), args.seconds)), flush=True)


if __name__ == "__main__":
    main()
