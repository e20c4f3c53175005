"""CPU seconds of the claim gates that train attention, the lone-run path and the shared path side by side in one run.

Each selected claim case of the registry (default: every case of the ``--profile`` whose claim trains attention)
is measured twice in this process, alternating, with ``ClaimCase.run`` (what a gate records):

- lone: every run trained by itself (:func:`lipschitz_icl.model.train.train` once per run, as the claims did
  before runs were trained side by side) and no store of trained layers (the cache off: also every exact
  ``w*`` the claim computes is computed, as on the shared path, which does not cache them either);
- shared: runs trained side by side (:func:`lipschitz_icl.model.train.train_runs`) through the store of
  trained layers (:mod:`lipschitz_icl.runtime.trained`) in a fresh cache directory, shared by every case of
  the run (the four ``lemmaB1`` claims of a setting name one data stream and train it once).

The table gives each case's CPU seconds (``time.process_time``: every thread of the process) on both paths,
the ratio, and whether the two evidences are identical (every field but the timings); the last line gives the
totals.  The machine should otherwise be idle (its load average is printed before and after); CPU seconds are
less sensitive to other work than wall seconds, not immune to it.

Run: python benchmarks/bench_gates.py [--profile default] [--claims ID_PART ...]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from lipschitz_icl.estimators import pretraining
from lipschitz_icl.gates import registry
from lipschitz_icl.model.train import init_params, train, train_runs
from lipschitz_icl.runtime import cache

TRAINED = (
    "lemmaB5/trained",
    "thm35/trained-mismatch",
    "linear/trained",
    "thm44/trained",
    "figures/fig3",
    "figures/fig5",
    "figures/fig9",
    "figures/eq4",
    "lemmaB1/",
)
TIMINGS = {"seconds", "cpu_seconds"}


def lone_train_all(runs, *, attention="softmax", init_scale=1.0, **protocol):
    """:func:`lipschitz_icl.estimators.pretraining.train_all` with every run trained by itself."""
    param = protocol.get("param", "M")
    out = []
    for run in runs:
        start = init_params(param, run.problem.d, attention, np.random.default_rng(run.start_seed), init_scale)
        init = {name: value.copy() for name, value in start.items()}
        result = train(run.problem, attention=attention, init=init, seed=run.prompt_seed, **protocol)
        out.append((start["M"] if param == "M" else start, result))
    return out


def lone_train_runs(problems, seeds, *, inits=None, **protocol):
    """:func:`lipschitz_icl.model.train.train_runs` with every run trained by itself (the segments of the
    pretraining curves of Figures 5 and 9)."""
    inits = [None] * len(problems) if inits is None else inits
    return [train_runs([p], [s], inits=[i], **protocol)[0] for p, s, i in zip(problems, seeds, inits)]


def _without_timings(evidence) -> str:
    record = {k: v for k, v in evidence.to_dict().items() if k not in TIMINGS}
    return json.dumps(record, sort_keys=True, default=str)


def measure(case, path: str) -> tuple[float, str]:
    """CPU seconds of ``case.run()`` on ``path`` (``lone`` or ``shared``) and its evidence without timings."""
    real = pretraining.train_all, pretraining.train_runs
    if path == "lone":
        pretraining.train_all, pretraining.train_runs = lone_train_all, lone_train_runs
    try:
        with cache.disabled() if path == "lone" else _enabled():
            start = time.process_time()
            evidence = case.run()
            return time.process_time() - start, _without_timings(evidence)
    finally:
        pretraining.train_all, pretraining.train_runs = real


class _enabled:
    def __enter__(self):
        self.previous = cache.enabled()
        cache.set_enabled(True)

    def __exit__(self, *exc):
        cache.set_enabled(self.previous)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=registry.PROFILES)
    parser.add_argument("--claims", nargs="+", default=list(TRAINED), help="parts of claim ids to select")
    args = parser.parse_args()
    os.environ[cache.ENV_VAR] = tempfile.mkdtemp(prefix="bench-gates-cache-")  # a fresh store for this run
    cases = [c for c in registry.cases(args.profile) if any(part in c.claim_id for part in args.claims)]
    print(f"# CPU seconds of {len(cases)} claim gates ({args.profile} profile): lone runs vs shared, side by side\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}; cache {cache.cache_dir()}\n")
    print("| claim | lone CPU s | shared CPU s | lone / shared | identical evidence |")
    print("|---|---|---|---|---|")
    totals = [0.0, 0.0]
    for case in cases:
        lone, a = measure(case, "lone")
        shared, b = measure(case, "shared")
        totals[0] += lone
        totals[1] += shared
        print(f"| {case.claim_id} | {lone:.1f} | {shared:.1f} | {lone / shared:.2f}x | {a == b} |", flush=True)
    print(f"| **total** | {totals[0]:.1f} | {totals[1]:.1f} | **{totals[0] / totals[1]:.2f}x** | |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
