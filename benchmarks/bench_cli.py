"""Start-up of the command line: ``--help`` and a refused argument against ``python -c "import numpy"``.

Target (issue 29): every case within 4x the start-up of ``python -c "import numpy"``.  Each round runs the
baseline and every case once, in a shuffled order (side by side: a busy machine slows them alike); a case's
ratio is the median over the rounds of its CPU time (user + sys of the child, from ``os.wait4``) over the
baseline's CPU time in the same round.  Wall times are printed beside (inflated on a shared machine).  The
heavy libraries each case imported are listed from a separate run (``python -X importtime``).

    PYTHONPATH=src python benchmarks/bench_cli.py [--rounds 15] [--cases wstar-refused,help]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time

BASELINE = ("numpy", [sys.executable, "-c", "import numpy"])
CLI = [sys.executable, "-m", "lipschitz_icl"]
PROBLEM = ["--task", "affine", "--d", "3", "--n", "100", "--L", "1", "--sigma", "0.5"]
CASES = {
    "help": ["--help"],
    "wstar-refused": ["wstar", "--task", "affine", "--d", "1000000", "--n", "100", "--L", "1", "--sigma", "0.5"],
    "wstar-help": ["wstar", "--help"],
    "loss-refused": ["loss", *PROBLEM, "--w", "-1"],
    "loss-help": ["loss", "--help"],
    "train-refused": ["train", *PROBLEM, "--steps", "0"],
    "train-help": ["train", "--help"],
    "scaling-refused": ["scaling", "--task", "affine", "--d", "1000"],
    "check-refused": ["check"],
    "claims-refused": ["claims", "--profile", "no-such-profile"],
    "figures-refused": ["figures", "--out", "x", "--profile", "no-such-profile"],
    "lock-refused": ["lock", "--no-such-option"],
    "report-refused": ["report", "--no-such-option"],
    "derivations-refused": ["derivations"],
    "prove-refused": ["prove", "--max-boxes", "0"],
    "prove-help": ["prove", "--help"],
}
HEAVY = ("scipy", "sympy", "mpmath", "flint", "matplotlib", "dask", "distributed", "jinja2", "tqdm")
TARGET = 4.0


def run_once(argv) -> tuple[float, float]:
    """``(cpu seconds, wall seconds)`` of one run of ``argv`` (output discarded)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4
    return usage.ru_utime + usage.ru_stime, wall


def heavy_imports(argv) -> list[str]:
    """The heavy libraries ``argv`` imports (``-X importtime`` on stderr)."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], check=False, capture_output=True, text=True)
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    return sorted(names & set(HEAVY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffled order")
    args = parser.parse_args()
    names = args.cases.split(",")
    runs = {name: [*CLI, *CASES[name]] for name in names}
    order = [BASELINE[0], *names]
    commands = {BASELINE[0]: BASELINE[1], **runs}
    rng = random.Random(args.seed)
    cpu = {name: [] for name in order}
    wall = {name: [] for name in order}
    for _ in range(args.rounds):
        shuffled = order[:]
        rng.shuffle(shuffled)
        for name in shuffled:
            c, w = run_once(commands[name])
            cpu[name].append(c)
            wall[name].append(w)
    load = os.getloadavg()
    print(f"python {platform.python_version()}, cpus {os.cpu_count()}, rounds {args.rounds}, load {load[0]:.1f}")
    print("ratio = median over rounds of (case CPU / numpy CPU in the same round); target <= 4")
    header = f"{'case':<20} {'cpu median s':>12} {'wall median s':>13} {'ratio (cpu)':>11} {'met':>4}  heavy imports"
    print(header)
    base = cpu[BASELINE[0]]
    for name in order:
        ratio = statistics.median(c / b for c, b in zip(cpu[name], base))
        met = "yes" if ratio <= TARGET else "no"
        heavy = "" if name == BASELINE[0] else (", ".join(heavy_imports(commands[name])) or "none")
        print(
            f"{name:<20} {statistics.median(cpu[name]):>12.3f} {statistics.median(wall[name]):>13.3f} "
            f"{ratio:>11.2f} {met if name != BASELINE[0] else '':>4}  {heavy}"
        )


if __name__ == "__main__":
    main()
