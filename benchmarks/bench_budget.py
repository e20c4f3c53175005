"""The work budget of the Monte Carlo paths (lipschitz_icl.budget): refusals up front, and requests at the
edge of the command line's budget finishing within 90 s.

Part 1 runs the refused requests (each must exit 2 at once, naming the budget and a cheaper setting) and
prints the one-line message.  Part 2 runs, for every Monte Carlo path of the command line, the request at
the edge of the budget (:data:`lipschitz_icl.budget.COMMAND_SECONDS`, estimated) that the refusal
suggests, at the default settings otherwise, and measures its CPU time (user + sys of the child,
``os.wait4``) and wall time beside the estimate: the estimate is an upper envelope when CPU <= estimate,
and the target is met when the request finishes within 90 s.  The runs are sequential; the load average
is printed with each (the machine is shared: wall time is inflated by other jobs, CPU time much less).

    PYTHONPATH=src python benchmarks/bench_budget.py [--only refusals|edges]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

CLI = [sys.executable, "-m", "lipschitz_icl"]
TARGET_SECONDS = 90.0


def problem(task, d, n, **extra):
    args = ["--task", task, "--d", str(d), "--n", str(n), "--L", "1", "--sigma", "0.5"]
    for key, value in extra.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    return args


# (label, refused argv, the option the refusal names); the edge request uses the suggested value
PATHS = [
    ("loss naive", ["loss", *problem("affine", 5, 10000, w=20), "--method", "naive"], "contexts"),
    ("loss averaged, reduced (cosine)", ["loss", *problem("cosine", 3, 20000, w=20)], "contexts"),
    ("loss averaged, relu (direction exact)", ["loss", *problem("relu", 5, 5000, w=20)], "contexts"),
    (
        "loss averaged, pairwise mixture (issue 29)",
        ["loss", *problem("mix:affine=1,relu=1,cosine=1", 3, 1000, w=0.02), "--method", "averaged"],
        "contexts",
    ),
    ("train (with its 20000 held-out prompts)", ["train", *problem("affine", 5, 2000)], "steps"),
]
# the w* search caps its contexts within the budget (exit 3 when that misses the precision): run as is
SEARCHES = [("wstar mc (contexts capped)", ["wstar", *problem("relu", 5, 20000)])]


def run(argv) -> tuple[int, str, float, float]:
    """``(exit code, stderr, cpu seconds, wall seconds)`` of ``lipschitz-icl ARGV``."""
    start = time.perf_counter()
    proc = subprocess.Popen([*CLI, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err.strip(), usage.ru_utime + usage.ru_stime, time.perf_counter() - start


def refusals() -> dict:
    """Part 1: every refused request; returns ``label -> suggested value``."""
    print("## Refused up front (exit 2)\n")
    print("| path | request | exit | CPU s | message |")
    print("|---|---|---|---|---|")
    suggested = {}
    for label, argv, option in PATHS:
        code, err, cpu, _ = run(argv)
        value = re.search(rf"{option} <= (\d+)", err)
        suggested[label] = int(value.group(1)) if value else None
        message = err.removeprefix("lipschitz-icl: error: ")
        print(f"| {label} | `{' '.join(argv)}` | {code} | {cpu:.2f} | {message} |")
    return suggested


def edges(suggested: dict) -> None:
    """Part 2: the requests at the edge of the budget."""
    print("\n## At the edge of the budget (estimate <= 60 s): CPU and wall time (target: within 90 s)\n")
    print("| path | request | exit | CPU s | wall s | load | within 90 s |")
    print("|---|---|---|---|---|---|---|")
    cases = [(label, [*argv, f"--{option}", str(suggested[label])]) for label, argv, option in PATHS]
    for label, argv in cases + SEARCHES:
        load = os.getloadavg()[0]
        code, _, cpu, wall = run(argv)
        met = "yes" if wall <= TARGET_SECONDS else ("CPU yes, wall no" if cpu <= TARGET_SECONDS else "no")
        print(f"| {label} | `{' '.join(argv)}` | {code} | {cpu:.1f} | {wall:.1f} | {load:.1f} | {met} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("refusals", "edges"), default=None)
    args = parser.parse_args()
    suggested = refusals()
    if args.only != "refusals":
        edges(suggested)


if __name__ == "__main__":
    main()
