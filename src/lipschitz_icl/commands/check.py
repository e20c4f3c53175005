"""``lipschitz-icl check FILE...``: check user bound variants (TOML) over their grids.

Every file is read and validated first (:func:`lipschitz_icl.gates.variants.load_variant`); if any is bad,
nothing is evaluated and the command exits 2 with ``<file>:<line>: <reason>`` on stderr.  Then each
variant is evaluated (:func:`lipschitz_icl.gates.variants.evaluate_variant`): its grid points are the pieces
of a sweep on ``--scheduler`` (:mod:`lipschitz_icl.runtime.sweep`; default ``auto``: in this process for tiny
grids, else a local Dask cluster kept for every file of the command), with the same numbers on any
scheduler.  The Monte Carlo measurements (``method = "mc"``) share the command's work budget
(:data:`lipschitz_icl.budget.COMMAND_SECONDS`, estimated seconds), split evenly over the files and their grid
points before any is measured: a ``w*`` search caps its contexts within its share (its point inconclusive when
that misses its precision), a loss whose ``contexts`` exceed it makes the file exit 2 naming the point.

The grid mode samples: a variant that holds at its grid points is shown at those points only.  The
text says so ("holds at N points (grid sample; ...)") and points to ``lipschitz-icl prove FILE``, which
decides a ``[domain]`` (:mod:`lipschitz_icl.prover.search`), or, for a file without one, says to add it; a file
without a ``[grid]`` is refused here.

Without ``--json``: the overall verdict and one summary line per variant.  JSON keys: ``mode``
(``"grid"``), ``points`` (grid points evaluated, all files), ``verdict`` (overall: fails if any fails, else
inconclusive if any is, else holds),
``variants`` (one object per file: ``name``, ``verdict``, ``counterexample`` (grid point, measured,
bound, margin) or null, ``tightest_constant`` or null, ``points``, ...), ``cache`` (hits, misses,
corrupt entries of every grid point, wherever it ran).
Exit codes: 0 all hold, 1 some variant fails, 3 inconclusive, 2 bad file.
"""

from __future__ import annotations

NAME = "check"
HELP = "check user bound variants (TOML files) against the numerics"


def add_arguments(parser) -> None:
    from lipschitz_icl.runtime import sweep

    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="variant files (TOML; format in lipschitz_icl.gates.variants)"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="recompute every w*/loss evaluation (do not read or write the disk cache)",
    )
    sweep.add_scheduler_argument(parser)


def run(args):
    from lipschitz_icl.budget import COMMAND_SECONDS
    from lipschitz_icl.gates.evidence import combine_verdicts
    from lipschitz_icl.gates.variants import EXIT_CODES, VariantFileError, evaluate_variant, load_variant
    from lipschitz_icl.runtime import cache, sweep

    sweep.parse_scheduler(args.scheduler)
    variants = [load_variant(path) for path in args.files]  # all validated before anything runs
    for v in variants:
        if not v.grid or v.brackets:
            missing = "no [grid] table" if not v.grid else f"a bracket for the sharpest constant {v.sharpest!r}"
            raise VariantFileError(
                v.path,
                v.lines.get("grid" if not v.grid else "bound", 1),
                f"{missing}: `check` samples a grid; `lipschitz-icl prove {v.path}` decides the [domain]",
            )
    previous = cache.enabled()
    cache.set_enabled(previous and not args.no_cache)
    before = dict(cache.STATS)
    try:
        with sweep.session(args.scheduler):
            # the command's work budget, split over the variants and their points before any is measured
            results = [evaluate_variant(v, budget=COMMAND_SECONDS / len(variants)) for v in variants]
    finally:
        cache.set_enabled(previous)
    verdict = combine_verdicts(r.verdict for r in results)
    points = sum(len(r.points) for r in results)
    payload = {
        "verdict": verdict,
        "mode": "grid",
        "points": points,
        "variants": [r.to_dict() for r in results],
        "cache": {
            "enabled": not args.no_cache and previous,
            "dir": str(cache.cache_dir()),
            **{k: cache.STATS[k] - before[k] for k in cache.STATS},
        },
    }
    if not args.json:
        payload = {
            "verdict": verdict,
            "mode": f"grid sample of {points} points",
            **{r.variant.name: _summary(r) for r in results},
        }
    return payload, EXIT_CODES[verdict]


def _summary(result) -> str:
    """One line per variant for the plain-text output."""
    n = len(result.points)
    if result.verdict == "holds":
        if result.variant.domain is not None:
            where = f"`lipschitz-icl prove {result.variant.path}` decides the whole domain"
        else:  # prove needs a [domain] table: say what to add rather than name a command that refuses the file
            where = "add a [domain] table for `lipschitz-icl prove` to decide a whole domain"
        text = f"holds at {n} points (grid sample; {where}) ({result.seconds:.2f} s)"
    else:
        text = f"{result.verdict} ({n} grid points, {result.seconds:.2f} s)"
    c = result.counterexample
    if c is not None:
        where = ", ".join(f"{k}={v:g}" for k, v in c.params.items())
        text += (
            f"; counter-example at {where}: measured {c.measured:.6g} in [{c.ci_low:.6g}, {c.ci_high:.6g}], "
            f"bound {c.bound:.6g}, relative margin {c.relative_margin:+.3g}"
        )
    t = result.tightest
    if t is not None:
        text += (
            f"; tightest {t['name']} = {t['value']:.6g} in [{t['ci_low']:.6g}, {t['ci_high']:.6g}] "
            f"({t['kind']} over the grid; stated {t['stated']:g})"
        )
    return text
