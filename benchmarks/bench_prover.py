"""The prover's speed targets (issue 18), each beside the float64 exact method, in one run.

1. Proving a cap or projection inequality on ``h`` (or ``s``) in ``[0, 1]`` for one ``d <= 512``: at most
   5 s.  Beside it: the float64 exact tail (``lipschitz_icl.sphere.concentration``) at 1000 grid points, which
   samples and decides nothing about the points between.
2. A certified affine loss (``d <= 10``, ``n <= 1e6``) with relative width ``<= 1e-8``: at most 10 s.
   Beside it: ``lipschitz_icl.exact.route.exact_loss`` (default rtol 1e-6) and its stated relative error.
3. A certified affine ``w*`` (``d <= 5``) to 6 digits: at most 60 s.  Beside it: ``wstar --method exact``.
4. ``lipschitz-icl prove FILE --seconds S`` returns within ``S + 5`` s (issue 28), on the ``w_star`` examples
   whose boxes each cost tens of seconds (a certified ``w*`` per corner).  Beside it: the same command on
   a statement decided at once, which is the command line's start-up.  Wall and CPU time of the process.
5. The trivially true statements of issue 28 (and Hoeffding's bound with ranges of ``n`` and ``a``), each
   decided, and the checker's recheck of each certificate beside the proof.
6. A slope on a piece of ``w`` (issue 27: monotonicity proofs on a range of ``w``): the ball of
   ``enclose_on_w_range`` (Taylor's theorem at the centre, second order) beside the mean value form with
   the majorant alone (the method before), as the ratio of each ball's width to the slope's own variation
   over the piece; then ``dnoise_dw >= 0`` and ``dbias_dw <= 0`` proved on ``w`` in ``[1, 4]`` (boxes, CPU s).

    PYTHONPATH=src python3 benchmarks/bench_prover.py [--quick] [--only 4,5,6]

Each time is one run (wall clock, ``time.perf_counter``; CPU time where said) on whatever else the
machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lipschitz_icl.certified.loss import enclose, enclose_on_w_range, kernel_of, loss_enclosure, part_bounds
from lipschitz_icl.certified.wstar import certified_wstar
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.optimum import wstar_exact
from lipschitz_icl.problem import make_problem
from lipschitz_icl.prover import checker
from lipschitz_icl.prover.search import prove
from lipschitz_icl.sphere import concentration


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def tails(quick: bool) -> None:
    print("\n1. prove a tail inequality on the whole interval (target <= 5 s)")
    print("| statement | d | verdict | boxes | prove s | float64 exact at 1000 grid points s | met |")
    print("|---|---|---|---|---|---|---|")
    cases = [
        ("cap_tail", "exp(-d*h**2/2)", {"h": [0.0, 1.0]}, "Ball: P(x.q >= h) <= exp(-d h^2/2), h in [0, 1]"),
        (
            "projection_tail",
            "exp(k/2*(1 - s*d/k + log(s*d/k)))",
            {"k": [10], "s": "mean"},
            "Dasgupta-Gupta: P(||Px||^2 >= s) <= exp(k/2 (1 - beta + ln beta)), s in [k/d, 1], k = 10",
        ),
    ]
    for quantity, bound, extra, text in cases:
        for d in (3, 512) if quick else (3, 50, 512):
            domain = {"d": [d], **extra}
            if domain.get("s") == "mean":
                domain["s"] = [10 / d, 1.0] if d > 10 else None
            if domain.get("s", 0) is None:
                continue
            result, seconds = timed(prove, quantity, bound, domain)
            grid = np.linspace(0.0, 1.0, 1000)
            if quantity == "cap_tail":
                _, float_s = timed(concentration.cap_tail, d, grid)
            else:
                _, float_s = timed(concentration.projection_tail, d, 10, grid)
            print(
                f"| {text} | {d} | {result.verdict.value} | {result.boxes} | {seconds:.3f} | {float_s:.5f} | "
                f"{'yes' if seconds <= 5 and result.verdict.value == 'proved' else 'no'} |"
            )


def losses(quick: bool) -> None:
    print("\n2. certified affine loss with relative width <= 1e-8 (target <= 10 s), L = 1, sigma = 0.5, w near w*")
    print(
        "| d | n | w | certified [low, high] | rel. width | certified s | exact value | exact stated rel. err | "
        "exact s | met |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d, n in ((3, 10**6), (10, 10**6)) if quick else ((2, 10**6), (3, 10**6), (5, 1000), (10, 100), (10, 10**6)):
        w = round(wstar_exact(make_problem("affine", d, n, 1.0, 0.5)).w_star.value, 3)
        enclosure, seconds = timed(loss_enclosure, d, n, w, 0.5, 1.0, rtol=1e-9)
        e = enclosure.to_dict()
        exact, exact_s = timed(exact_loss, make_problem("affine", d, n, 1.0, 0.5), w)
        width = (e["loss_high"] - e["loss_low"]) / exact.loss.value
        print(
            f"| {d} | {n:.0e} | {w:g} | [{e['loss_low']:.12g}, {e['loss_high']:.12g}] | {width:.1e} | {seconds:.2f} | "
            f"{exact.loss.value:.12g} | {exact.loss.abs_error / exact.loss.value:.1e} | {exact_s:.3f} | "
            f"{'yes' if seconds <= 10 and width <= 1e-8 else 'no'} |"
        )


def minimisers(quick: bool) -> None:
    print("\n3. certified affine w* to 6 digits (target <= 60 s), L = 1")
    print(
        "| d | n | sigma | certified [low, high] | rel. width | evaluations | certified s | exact w* | exact s | met |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    settings = (
        ((3, 100, 0.5), (5, 1000, 0.5))
        if quick
        else ((2, 20, 2.0), (3, 10, 1.0), (3, 100, 0.5), (4, 1000, 0.5), (5, 100, 0.5), (5, 1000, 0.5))
    )
    for d, n, sigma in settings:
        result, seconds = timed(certified_wstar, d, n, sigma, 1.0)
        exact, exact_s = timed(wstar_exact, make_problem("affine", d, n, 1.0, sigma))
        width = (result.high - result.low) / result.low if result.decided else float("inf")
        print(
            f"| {d} | {n} | {sigma:g} | [{result.low:.9g}, {result.high:.9g}] | {width:.1e} | "
            f"{result.info.get('evaluations')} | {seconds:.1f} | {exact.w_star.value:.9g} | {exact_s:.2f} | "
            f"{'yes' if seconds <= 60 and width <= 2e-6 else 'no'} |"
        )


def _command(argv: list) -> tuple[dict, float, float]:
    """``(JSON output, wall s, CPU s)`` of ``python -m lipschitz_icl argv`` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "lipschitz_icl", *argv], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout) if done.stdout else {"verdict": f"exit {done.returncode}"}, wall, cpu


def budgets(quick: bool) -> None:
    print("\n4. prove FILE --seconds S returns within S + 5 s (wall and CPU of the whole process)")
    print("| file | S | verdict | boxes | search s | process wall s | process CPU s | met |")
    print("|---|---|---|---|---|---|---|---|")
    root = Path(__file__).resolve().parent.parent / "variants" / "examples"
    with tempfile.TemporaryDirectory(prefix="bench-prover-") as tmp:
        quick_file = Path(tmp) / "cap.toml"
        quick_file.write_text(
            'name = "cap"\nquantity = "cap_tail"\nrelation = "<="\nbound = "1"\n[domain]\nd = [5]\nh = [0, 1]\n'
        )
        cases = [(quick_file, 20)] + [(root / f"{name}.toml", s) for name in ("wstar_affine_upper",) for s in (5, 20)]
        if not quick:
            cases.append((root / "wstar_affine_fail_exponent.toml", 20))
        for path, seconds in cases:
            out, wall, cpu = _command(["prove", str(path), "--seconds", str(seconds), "--json"])
            print(
                f"| {path.name} | {seconds} | {out['verdict']} | {out.get('boxes_evaluated')} | "
                f"{out.get('seconds', float('nan')):.2f} | {wall:.1f} | {cpu:.1f} | "
                f"{'yes' if wall <= seconds + 5 else 'no'} |"
            )


TRIVIAL = [
    ("cap_tail", "1", {"d": {"from": 2, "to": 512}, "h": [-1.0, 1.0]}),
    ("cap_tail", "100*(d - 8.5)**2", {"d": {"from": 2, "to": 512}, "h": [0.0, 1.0]}),
    ("binomial_tail", "exp(-2*n*(a/n - p)**2)", {"n": [50], "a": [30], "p": [0.0, 0.3]}),
    ("binomial_tail", "exp(-2*n*(a/n - p)**2)", {"n": {"from": 1, "to": 100}, "a": [50], "p": [0.0, 0.3]}),
    ("binomial_tail", "exp(-2*(a - n*p)**2/n)", {"n": [100], "a": {"from": 30, "to": 100}, "p": [0.0, 0.3]}),
]


def trivial(quick: bool) -> None:
    print("\n5. trivially true statements, decided; the checker's recheck beside the proof (CPU s)")
    print("| statement | domain | verdict | boxes | prove CPU s | recheck | recheck CPU s | recheck / prove |")
    print("|---|---|---|---|---|---|---|---|")
    for quantity, bound, domain in TRIVIAL[:3] if quick else TRIVIAL:
        start = time.process_time()
        result = prove(quantity, bound, domain, seconds=60)
        proved = time.process_time() - start
        start = time.process_time()
        report = checker.check(result.certificate)
        rechecked = time.process_time() - start
        print(
            f"| `{quantity} <= {bound}` | `{domain}` | {result.verdict.value} | {result.boxes} | {proved:.2f} | "
            f"{report.recheck}, {report.verdict} | {rechecked:.2f} | {rechecked / max(proved, 1e-9):.2f} |"
        )


def _mean_value_form(kernel, lo: float, hi: float, n: int, order: int):
    """The ball of ``d^order P/dw^order`` on ``[lo, hi]`` by the mean value theorem with the majorant of
    ``part_bounds`` (how ``enclose_on_w_range`` worked before its Taylor form): centre ball +- r sup|P'|."""
    centre = 0.5 * (lo + hi)
    at = enclose(kernel, centre, n, 0.5, 1.0, orders=(order,)).derivative(order)
    sups = part_bounds(kernel, (lo, hi), n, 0.5, 1.0, order=order + 1)
    radius = 0.5 * (hi - lo)
    return {part: (getattr(at, part), float(sups[part][order + 1].upper()) * radius) for part in ("noise", "bias")}


def slopes(quick: bool) -> None:
    print("\n6. a slope on a piece of w: ball width / the slope's variation over the piece (d = 3, n = 100)")
    print("| class | piece | part | variation | Taylor form | mean value form | Taylor s | mean value s |")
    print("|---|---|---|---|---|---|---|---|")
    pieces = [(1.0, 1.01), (1.0, 1.05)] if quick else [(1.0, 1.01), (1.0, 1.02), (1.0, 1.05), (4.0, 4.08), (4.0, 4.4)]
    for task in ("affine",) if quick else ("affine", "relu"):
        kernel = kernel_of(task, 3, 1.0)
        for lo, hi in pieces:
            taylor, taylor_s = timed(enclose_on_w_range, kernel, (lo, hi), 100, 0.5, 1.0, order=1)
            before, before_s = timed(_mean_value_form, kernel, lo, hi, 100, 1)
            points = [enclose(kernel, w, 100, 0.5, 1.0, orders=(1,)).derivative(1) for w in np.linspace(lo, hi, 5)]
            for part in ("noise", "bias"):
                values = [float(getattr(p, part).mid()) for p in points]
                variation = max(values) - min(values)
                ball = getattr(taylor, part)
                width = float(ball.upper() - ball.lower())
                print(
                    f"| {task} | [{lo:g}, {hi:g}] | {part} | {variation:.2e} | {width / variation:.3g} | "
                    f"{2 * before[part][1] / variation:.3g} | {taylor_s:.2f} | {before_s:.2f} |"
                )
    print("\n| statement (affine, d = 3, n = 100, w in [1, 4]) | verdict | boxes | CPU s |")
    print("|---|---|---|---|")
    domain = {"d": [3], "n": [100], "L": 1.0, "sigma": 0.5, "w": [1.0, 4.0]}
    for quantity, relation in (("dnoise_dw", ">="), ("dbias_dw", "<=")):
        start = time.process_time()
        result = prove(quantity, "0", domain, relation=relation, task="affine", seconds=300)
        seconds = time.process_time() - start
        print(f"| `{quantity} {relation} 0` | {result.verdict.value} | {result.boxes} | {seconds:.1f} |")


SECTIONS = {1: tails, 2: losses, 3: minimisers, 4: budgets, 5: trivial, 6: slopes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer settings")
    parser.add_argument("--only", default="1,2,3,4,5,6", help="the sections to run, e.g. 4,5")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, one run each")
    for section in sorted({int(x) for x in args.only.split(",")}):
        SECTIONS[section](args.quick)


if __name__ == "__main__":
    main()
