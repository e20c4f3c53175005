"""The work budget of the Monte Carlo paths (lipschitz_icl.budget): refusals up front, and requests at the
edge of the command line's budget finishing within 90 s.

Part 1 runs the refused requests (each must exit 2 at once, naming the budget and a cheaper setting) and
prints the one-line message.  Part 2 runs, for every Monte Carlo path of the command line, the request at
the edge of the budget (:data:`lipschitz_icl.budget.COMMAND_SECONDS`, estimated) that the refusal
suggests, at the default settings otherwise, and measures its CPU time (user + sys of the child,
``os.wait4``) and wall time beside the estimate: the estimate is an upper envelope when CPU <= estimate,
and the target is met when the request finishes within 90 s.  The runs are sequential; the load average
is printed with each (the machine is shared: wall time is inflated by other jobs, CPU time much less).

    PYTHONPATH=src python benchmarks/bench_budget.py [--only refusals|edges] [--scale 1]

``--scale s`` runs the edge requests at ``s`` times the suggested contexts or steps (an estimate of about
``60 s`` times ``s``): on a loaded machine the full edges take many minutes of wall time, and CPU time
scales with the work.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

CLI = [sys.executable, "-m", "lipschitz_icl"]


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


def estimate(label: str, value: int) -> float:
    """The work budget's estimate of the edge request of ``label`` at ``value`` contexts (steps for train),
    from the library's own cost model (the suggested value is the largest within the budget)."""
    from lipschitz_icl.loss import estimators
    from lipschitz_icl.model.train import SECONDS_PER_STEP_COORDINATE

    if label.startswith("train"):  # affine, d = 5, n = 2000, batch 256, and 20000 held-out prompts
        held_out = 20000 * 2000 * (5 + 2) * estimators.SECONDS_PER_COORDINATE
        return held_out + value * 256 * 2000 * (5 + 1) * SECONDS_PER_STEP_COORDINATE
    argv = next(argv for name, argv, _ in PATHS if name == label)
    from lipschitz_icl.cli import build_parser
    from lipschitz_icl.commands._common import problem_from_args

    args = build_parser(("loss",)).parse_args(argv)
    problem = problem_from_args(args)
    model = estimators.make_attention(problem, args.w)
    return value * estimators.context_seconds(problem, model, args.method)


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


def edges(suggested: dict, scale: float) -> None:
    """Part 2: the requests at (``scale`` times) the edge of the budget."""
    print(f"\n## At {scale:g} x the edge of the budget (estimate {60 * scale:g} s): CPU and wall time\n")
    print("| path | request | exit | CPU s | estimate s | CPU / estimate | wall s | load |")
    print("|---|---|---|---|---|---|---|---|")
    cases = []
    for label, argv, option in PATHS:
        if suggested[label] is None:  # the refusal named a smaller n: the budget affords fewer than --contexts' floor
            row = f"| {label} | (no edge: the budget affords fewer than the CLI's {option} floor) |"
            print(row + " - |" * 6)
            continue
        value = max(1, int(scale * suggested[label]))
        cases.append((label, [*argv, f"--{option}", str(value)], estimate(label, value)))
    for label, argv, estimate_seconds in cases + [(label, argv, 60.0) for label, argv in SEARCHES]:
        load = os.getloadavg()[0]
        code, _, cpu, wall = run(argv)
        print(
            f"| {label} | `{' '.join(argv)}` | {code} | {cpu:.1f} | {estimate_seconds:.1f} | "
            f"{cpu / estimate_seconds:.2f} | {wall:.1f} | {load:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("refusals", "edges"), default=None)
    parser.add_argument("--scale", type=float, default=1.0, help="the edge requests at this fraction of the budget")
    args = parser.parse_args()
    suggested = refusals()
    if args.only != "refusals":
        edges(suggested, args.scale)


if __name__ == "__main__":
    main()
