"""``lipschitz-icl figures --out DIR [--only fig1,fig3,...] [--profile P] [--force] [--json]``: regenerate
the paper's figures from the project's own computations (registry group ``figures``).

Each figure is one claim of ``claims/figures.toml``: its gate's measure function computes the data and
decides the claim (replicate seed 0 of the chosen profile); :mod:`lipschitz_icl.report.figures.paper` draws it.  Per
figure three files are written in ``DIR`` (and nowhere else): ``<name>.pdf`` (vector), ``<name>.png`` and
``<name>.json`` (the figure data with its settings, claim id and verdict).  They are made in a fresh
temporary directory and moved into ``DIR`` file by file, atomically, never through a symbolic link
(:mod:`lipschitz_icl.report.output`): without ``--force`` an existing file of those names (a dangling
link counts) refuses the run before anything is computed; with it, a link is replaced itself, never
its target.  The figures' computations (``case.run()``) are the pieces of a sweep on ``--scheduler``
(:mod:`lipschitz_icl.runtime.sweep`; default ``auto``); drawing and writing stay in this process.  A progress
bar goes to stderr when it is a terminal and ``--json`` is not given.

Payload: ``figures``, a list of ``{name, files, settings, verdict}``.  Exit 0 if every figure's claim
holds, 1 if one fails (or writing failed for a reason other than the directory), 3 if one is
inconclusive (and none fails); 2 for an unknown ``--only`` name, an empty, read-only or full ``--out``,
or an existing output file without ``--force``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from lipschitz_icl.validation import ParameterError

NAME = "figures"
HELP = "regenerate the paper's figures (PDF, PNG, JSON data) from the project's computations"
SUFFIXES = (".pdf", ".png", ".json")


def add_arguments(parser) -> None:
    from lipschitz_icl.gates import registry
    from lipschitz_icl.runtime import sweep

    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument(
        "--only", default=None, help=f"comma-separated figures to make (default all: {', '.join(figure_names())})"
    )
    parser.add_argument(
        "--profile",
        choices=registry.PROFILES,
        default="default",
        help="grid of the figures' claims: default (fast) or full",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace existing output files (a symbolic link is replaced itself, never its target)",
    )
    sweep.add_scheduler_argument(parser)


def figure_names() -> list[str]:
    """The figures of the registry, in registry order."""
    from lipschitz_icl.gates import registry

    return [spec.name for spec in registry.specs("figures")]


def _selected(only: str | None) -> list[str]:
    names = figure_names()
    if only is None:
        return names
    chosen = [x.strip() for x in only.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in names]
    if unknown or not chosen:
        raise ParameterError("only", f"a comma-separated subset of {', '.join(names)}", only)
    return [x for x in names if x in chosen]


def make_figure(case, evidence, build: Path) -> dict:
    """Draw the figure of ``case`` (a figures claim case) from its ``evidence`` (``case.run()``) into the
    directory ``build``; returns ``{name, files, settings, verdict}`` (file names relative to ``build``)."""
    from lipschitz_icl.report.figures import paper as paperfigs

    data = evidence.figure
    stem = case.spec.name
    files = [Path(f).name for f in paperfigs.write(paperfigs.render(data), build, stem)]
    record = {
        "claim_id": evidence.claim_id,
        "verdict": evidence.verdict,
        "caption": paperfigs.caption(data),
        "figure": evidence.to_dict()["figure"],
    }  # to_dict: non-finite floats as strings (JSON-safe)
    (build / f"{stem}.json").write_text(json.dumps(record, indent=1))
    return {
        "name": stem,
        "files": files + [f"{stem}.json"],
        "settings": data.get("settings", {}),
        "verdict": evidence.verdict,
    }


def _evidence(case):
    """One piece: the evidence (figure data and verdict) of a figures claim case."""
    return case.run()


def _write(cases, evidences, out: Path, force: bool) -> list[dict]:
    """Draw every figure in a fresh temporary directory, then move the files into ``out``."""
    from lipschitz_icl.report.output import install

    with tempfile.TemporaryDirectory(prefix="lipschitz-icl-figures-") as tmp:
        build = Path(tmp)
        figures = [make_figure(case, evidence, build) for case, evidence in zip(cases, evidences)]
        names = [f for fig in figures for f in fig["files"]]
        placed = {p.name: str(p) for p in install(build, out, names, force)}
    for fig in figures:
        fig["files"] = [placed[f] for f in fig["files"]]
    return figures


def run(args):
    from lipschitz_icl.decision import combine, exit_code
    from lipschitz_icl.gates import registry
    from lipschitz_icl.report.figures import FigureDataError
    from lipschitz_icl.report.output import USER_ERRNOS, OutputError, check_targets, describe, out_directory
    from lipschitz_icl.runtime import sweep

    sweep.parse_scheduler(args.scheduler)
    names = _selected(args.only)
    out = out_directory(args.out)
    check_targets(out, [f"{n}{s}" for n in names for s in SUFFIXES], args.force)
    # one figure per claim: replicate seed 0 (the full profile's other seeds are the gates' seed sweep)
    cases = [c for c in registry.cases(args.profile, "figures") if c.spec.name in names and c.seed in (None, 0)]
    with sweep.session(args.scheduler):
        evidences = sweep.map_pieces(_evidence, [(case,) for case in cases], desc="figures", unit="figure")
    try:
        figures = _write(cases, evidences, out, args.force)
    except (FigureDataError, OutputError) as exc:
        print(f"lipschitz-icl: figures: {exc}", file=sys.stderr)
        return {"figures": [], "message": str(exc)}, 1
    except OSError as exc:  # the temporary directory
        if exc.errno in USER_ERRNOS:
            raise ParameterError(
                "out", f"figures that can be drawn ({describe(exc)} in the temporary directory)", args.out
            ) from None
        print(f"lipschitz-icl: figures: writing failed ({describe(exc)})", file=sys.stderr)
        return {"figures": [], "message": describe(exc)}, 1
    code = exit_code(combine([f["verdict"] for f in figures]))
    return {"figures": figures}, code


def format_text(payload: dict) -> str:
    """One line per figure: name, verdict, files."""
    return "\n".join(f"{f['name']}: {f['verdict']}  {' '.join(f['files'])}" for f in payload["figures"])
