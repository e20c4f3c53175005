"""``lipschitz-icl figures --out DIR [--only fig1,fig3,...] [--profile P] [--force] [--json]``: regenerate
the paper's figures from the project's own computations (registry group ``figures``).

Each figure is one claim of ``claims/figures.toml``: its gate's measure function computes the data and
decides the claim (replicate seed 0 of the chosen profile); :mod:`lipschitz_icl.paperfigs` draws it.  Per figure three files are written in
``DIR`` (and nowhere else): ``<name>.pdf`` (vector), ``<name>.png`` and ``<name>.json`` (the figure data
with its settings, claim id and verdict).  The figures' computations (``case.run()``) are the pieces of
a sweep on ``--scheduler`` (:mod:`lipschitz_icl.sweep`; default ``auto``); drawing and writing stay in
this process.  A progress bar goes to stderr when it is a terminal and ``--json`` is not given.

Payload: ``figures``, a list of ``{name, files, settings, verdict}``.  Exit 0 if every figure's claim
holds, 1 if one fails, 3 if one is inconclusive (and none fails); 2 for an unknown ``--only`` name or
an existing output file without ``--force``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import paperfigs, registry, sweep
from ..decision import combine, exit_code
from ..validation import ParameterError

NAME = "figures"
HELP = "regenerate the paper's figures (PDF, PNG, JSON data) from the project's computations"
SUFFIXES = (".pdf", ".png", ".json")


def add_arguments(parser) -> None:
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated figures to make (default all: {', '.join(figure_names())})")
    parser.add_argument("--profile", choices=registry.PROFILES, default="default",
                        help="grid of the figures' claims: default (fast) or full")
    parser.add_argument("--force", action="store_true", help="overwrite existing output files")
    sweep.add_scheduler_argument(parser)


def figure_names() -> list[str]:
    """The figures of the registry, in registry order."""
    return [spec.name for spec in registry.specs("figures")]


def _selected(only: str | None) -> list[str]:
    names = figure_names()
    if only is None:
        return names
    chosen = [x.strip() for x in only.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in names]
    if unknown or not chosen:
        raise ParameterError("--only", f"a comma-separated subset of {', '.join(names)}", only)
    return [x for x in names if x in chosen]


def _check_out(out: Path, names, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ParameterError("--out", "a directory", str(out))
    existing = [str(out / f"{n}{s}") for n in names for s in SUFFIXES if (out / f"{n}{s}").exists()]
    if existing and not force:
        raise ParameterError("--force", f"given to overwrite existing output files ({', '.join(existing)})", False)


def make_figure(case, evidence, out: Path) -> dict:
    """Draw and write the figure of ``case`` (a figures claim case) from its ``evidence`` (``case.run()``);
    returns ``{name, files, settings, verdict}``."""
    data = evidence.figure
    stem = case.spec.name
    fig = paperfigs.render(data)
    files = paperfigs.write(fig, out, stem)
    record = {"claim_id": evidence.claim_id, "verdict": evidence.verdict, "caption": paperfigs.caption(data),
              "figure": evidence.to_dict()["figure"]}  # to_dict: non-finite floats as strings (JSON-safe)
    json_path = out / f"{stem}.json"
    json_path.write_text(json.dumps(record, indent=1))
    return {"name": stem, "files": files + [str(json_path)], "settings": data.get("settings", {}),
            "verdict": evidence.verdict}


def _evidence(case):
    """One piece: the evidence (figure data and verdict) of a figures claim case."""
    return case.run()


def run(args):
    sweep.parse_scheduler(args.scheduler)
    names = _selected(args.only)
    out = Path(args.out)
    _check_out(out, names, args.force)
    out.mkdir(parents=True, exist_ok=True)
    # one figure per claim: replicate seed 0 (the full profile's other seeds are the gates' seed sweep)
    cases = [c for c in registry.cases(args.profile, "figures") if c.spec.name in names and c.seed in (None, 0)]
    with sweep.session(args.scheduler):
        evidences = sweep.map_pieces(_evidence, [(case,) for case in cases], desc="figures", unit="figure")
    figures = [make_figure(case, evidence, out) for case, evidence in zip(cases, evidences)]
    verdicts = [f["verdict"] for f in figures]
    code = exit_code(combine(verdicts))
    return {"figures": figures}, code


def format_text(payload: dict) -> str:
    """One line per figure: name, verdict, files."""
    return "\n".join(f"{f['name']}: {f['verdict']}  {' '.join(f['files'])}" for f in payload["figures"])
