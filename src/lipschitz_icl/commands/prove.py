"""``lipschitz-icl prove FILE.toml``: decide a bound variant on its whole ``[domain]`` (CLI contract).

The file is a bound variant (:mod:`lipschitz_icl.gates.variants`) with a ``[domain]`` table: a real parameter
takes a closed interval ``[lo, hi]``, an integer one a list or ``{from = a, to = b}``.  The prover
(:mod:`lipschitz_icl.prover.search`) partitions the domain into boxes and decides each with certified ball
arithmetic (python-flint).  With ``sharpest = "C"`` and ``[constants] C = [lo, hi]`` it certifies the
sharpest constant instead: JSON ``sharpest`` holds ``low``/``high`` (proved at one, refuted at the
other, with the counterexample).

Exit codes: 0 proved, 1 refuted (JSON ``counterexample``: ``params`` and both enclosures), 3 undecided
(JSON ``undecided_boxes``, ``undecided_count``, ``undecided_share``, ``boxes_evaluated``, ``seconds``),
2 bad input (one line: empty or inverted interval, a parameter outside the quantity's range, a bracket
that does not bracket, a certificate path that exists without ``--force``, a cosine ``frequency`` other
than 1: the certified cosine class is that of frequency 1).

``--certificate PATH`` writes the statement, the verdict and the partition with every box's enclosures
(:mod:`lipschitz_icl.prover.certificate`).  ``prove --recheck PATH`` re-derives the verdict from the
statement through the checker :mod:`lipschitz_icl.prover.checker` (not the search) and prints the statement
it verified: exit 0 when the certificate certifies what it claims (JSON ``verdict``: proved, refuted, or a
sharpest constant's ``sharpest`` interval), 1 naming the first box or part that does not, 3 when the
verdict re-derived is undecided or the recheck ran out of ``--seconds``, 2 (one line naming
``--recheck``) when the file is not a certificate of the current version.

``--seconds`` bounds the wall time of the command from its start (the command line's start-up and the
file read included) to the end of the search or of the recheck, checked inside a box's evaluation too
(:mod:`lipschitz_icl.prover.budget`).
"""

from __future__ import annotations

import time

from lipschitz_icl.validation import ParameterError

NAME = "prove"
HELP = "prove or refute a bound variant on its whole [domain] with certified ball arithmetic"


def add_arguments(parser) -> None:
    from lipschitz_icl.commands._options import integer, real
    from lipschitz_icl.prover import budget

    parser.add_argument("file", nargs="?", metavar="FILE", help="variant file (TOML) with a [domain] table")
    parser.add_argument("--recheck", metavar="PATH", help="re-verify the certificate PATH instead of proving")
    parser.add_argument("--certificate", metavar="PATH", help="write the proof certificate (JSON) to PATH")
    parser.add_argument("--force", action="store_true", help="replace an existing --certificate file")
    parser.add_argument(
        "--max-boxes",
        type=integer("max_boxes", 1, 10**7),
        default=budget.MAX_BOXES,
        help=f"budget: boxes evaluated per search, 1 <= N <= 1e7 (default {budget.MAX_BOXES})",
    )
    parser.add_argument(
        "--seconds",
        type=real("seconds", minimum=0.0, strict_minimum=True, maximum=1e6),
        default=budget.SECONDS,
        help=f"budget: wall-clock seconds of the search or the recheck, 0 < S <= 1e6 (default {budget.SECONDS:g})",
    )
    parser.add_argument(
        "--sharpest-rtol",
        type=real("sharpest_rtol", minimum=1e-12, maximum=0.5),
        default=budget.SHARPEST_RTOL,
        help=f"sharpest constant: stop at this relative width, 1e-12 <= R <= 0.5 (default {budget.SHARPEST_RTOL:g})",
    )


def run(args):
    from lipschitz_icl.gates.variants import VariantFileError, load_variant
    from lipschitz_icl.prover import search

    # the budget counts from the start of the command (the CLI's start-up and reading the file too)
    until = getattr(args, "_started", time.perf_counter()) + args.seconds
    if args.recheck is not None:
        return _recheck(args, until)
    if args.file is None:
        raise ParameterError("FILE", "a variant file with a [domain] (or --recheck PATH)", None)
    if args.certificate is not None:  # refused before the search, not after it
        from lipschitz_icl.prover.certificate import check_path

        check_path(args.certificate, force=args.force)
    variant = load_variant(args.file)
    if variant.domain is None:
        raise VariantFileError(
            variant.path,
            1,
            "no [domain] table: `prove` decides a [domain] (real parameters "
            "as [lo, hi], integer ones as lists or {from = a, to = b})",
        )
    if variant.frequency != 1.0:  # the certified cosine class is that of frequency 1 (prover.trusted)
        raise VariantFileError(
            variant.path,
            variant.lines.get("frequency", 1),
            "'frequency' must be 1 for `prove` (the certified cosine class has frequency 1; "
            f"got {variant.frequency:g})",
        )
    quantity = search.quantity_of(variant.quantity, variant.task)
    search.check_domain(quantity, variant.domain)
    statement = search.Statement(
        quantity=quantity,
        relation=variant.relation,
        bound=variant.bound,
        constants=dict(variant.constants),
        domain=variant.domain,
        sharpest=variant.sharpest,
    )
    try:
        if variant.sharpest is not None:
            result = search.sharpest(
                statement,
                variant.sharpest,
                variant.brackets[variant.sharpest],
                rtol=args.sharpest_rtol,
                max_boxes=args.max_boxes,
                until=until,
            )
        else:
            result = search.prove_statement(statement, max_boxes=args.max_boxes, until=until, desc=variant.name)
    except search.UndefinedBound as exc:  # a file error at the bound's line, as at a corner of the domain
        raise VariantFileError(
            variant.path, variant.lines.get("bound", 1), f"'bound' must be {exc.requirement}"
        ) from None
    payload = {"name": variant.name, "file": variant.path, "quantity": variant.quantity, **result.to_dict()}
    if args.certificate is not None:
        from lipschitz_icl.prover.certificate import write

        payload["certificate"] = str(write(result.certificate, args.certificate, force=args.force))
    return payload, result.exit_code


def _recheck(args, until: float):
    if args.file is not None or args.certificate is not None:
        raise ParameterError("recheck", "given alone (no FILE, no --certificate)", args.file or args.certificate)
    from lipschitz_icl.decision import Verdict
    from lipschitz_icl.prover.budget import OutOfTime, deadline
    from lipschitz_icl.prover.checker import CertificateError, recheck

    try:
        with deadline(until):
            report = recheck(args.recheck).to_dict()
    except CertificateError as exc:  # a refusal raised while the JSON is parsed names no path: name it here
        raise CertificateError(exc.reason, args.recheck) from None
    except OverflowError:  # a JSON integer beyond the double range where the schema reads a number
        raise CertificateError("a number beyond the double range", args.recheck) from None
    except OutOfTime:
        return {"recheck": "unfinished", "verdict": None, "reason": f"ran out of --seconds {args.seconds:g}"}, 3
    if report["recheck"] == "failed":
        return report, 1
    return report, Verdict.UNDECIDED.exit_code if report["verdict"] == "undecided" else 0


def format_text(payload: dict) -> str:
    """Plain-text output: the verdict first, then what decided it."""
    if "recheck" in payload:
        return _recheck_text(payload)
    lines = [f"verdict: {payload['verdict']}"]
    lines.append(f"statement: {payload['statement']}")
    c = payload.get("counterexample")
    if c:
        where = ", ".join(f"{k}={v:g}" for k, v in c["params"].items())
        lines.append(
            f"counterexample: {where}: quantity in [{c['quantity'][0]:.9g}, {c['quantity'][1]:.9g}], "
            f"bound in [{c['bound'][0]:.9g}, {c['bound'][1]:.9g}]"
        )
    s = payload.get("sharpest")
    if s and s.get("low") is not None:
        lines.append(
            f"sharpest {s['name']} in [{s['low']:.9g}, {s['high']:.9g}] (proved at {s['proved_at']:.9g}, "
            f"refuted at {s['refuted_at']:.9g})"
        )
    lines.append(
        f"boxes: {payload['boxes_evaluated']} evaluated, {payload['boxes_proved']} proved, "
        f"{payload['undecided_count']} undecided (share {payload['undecided_share']:.3g}); "
        f"{payload['seconds']:.2f} s"
    )
    for entry in payload.get("undecided_boxes", [])[:5]:
        lines.append(f"undecided: {entry['box']}: {entry['reason']}")
    if payload.get("certificate"):
        lines.append(f"certificate: {payload['certificate']}")
    return "\n".join(lines)


def _recheck_text(payload: dict) -> str:
    lines = [f"recheck: {payload['recheck']}"]
    if payload["recheck"] == "unfinished":
        return "\n".join([*lines, f"reason: {payload['reason']}"])
    lines.append(f"statement: {payload['statement']}")
    lines.append(f"verdict: {payload['verdict']} (claimed: {payload['claimed']})")
    s = payload.get("sharpest")
    if s:
        lines.append(
            f"sharpest {s['name']} in [{s['low']!r}, {s['high']!r}]: proved at {s['proved_at']!r}, "
            f"refuted at {s['refuted_at']!r}"
        )
    lines.append(f"boxes: {payload['boxes_checked']} proved boxes rechecked, {payload['undecided_boxes']} undecided")
    if payload.get("first_bad_box"):
        lines.append(f"first bad box: {payload['first_bad_box']}: {payload['reason']}")
    return "\n".join(lines)
