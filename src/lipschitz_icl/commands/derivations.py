"""``lipschitz-icl derivations --out DIR [--check] [--force] [--json]``: write the derivations as documents a
theorist reads, or check that the documents in ``DIR`` are current.

The documents (:mod:`lipschitz_icl.derivations.documents`): ``<module>.md`` per derivation module of
:mod:`lipschitz_icl.derivations` (statement, assumptions, steps, results; every formula printed by
``sympy.latex`` from the expressions the code computes) and ``README.md``, their index.  The text is
deterministic (no dates, fixed number format); a number computed numerically (a quadrature, a search) is printed
to the digits its stated accuracy warrants and compared numerically, within that accuracy
(:func:`lipschitz_icl.derivations.documents.current`), so the committed ``derivations/`` checks as current on every
machine.

Writing: ``DIR`` is made first (one that cannot be made is refused at once; the directories made go again if the
run fails before writing), then every document is computed; then a missing file is written, a current one left
alone (also one whose numerically computed numbers differ from this machine's within their accuracy: the committed
text does not follow each machine's last digit), and a different one is overwritten only with ``--force``
(otherwise exit 2 naming the files, nothing written).
Files of ``DIR`` that the command does not make are never touched.  Each file is written by
:func:`lipschitz_icl.writefile.write_file`: atomically, never through a symbolic link, an overwritten file
keeping its mode (a new one ``0644`` less the umask).  ``--check`` writes nothing: exit 0 when
every document in ``DIR`` equals the generated text, exit 1 naming the stale and missing documents (and any
other ``.md`` file of ``DIR``, which no derivation makes).  Refused (exit 2): an empty ``--out``, an ``--out``
that is a symbolic link or not a directory or cannot be made, a document path that is a symbolic link or not a
regular file.

Payload: ``out``, ``documents`` (``{file, status}``; status ``written``, ``overwritten``, ``unchanged``, or with
``--check`` ``current``, ``stale``, ``missing``), ``extra`` (other ``.md`` files of ``DIR``), and with
``--check`` ``stale`` (the files that are not current).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from lipschitz_icl.validation import ParameterError
from lipschitz_icl.writefile import write_file

NAME = "derivations"
HELP = "write the derivations as Markdown documents (statement, steps, results), or --check they are current"
EXIT_OK, EXIT_STALE = 0, 1
MAX_DOCUMENT_BYTES = 16 * 1024**2  # far above any document (the largest is tens of kilobytes)


def add_arguments(parser) -> None:
    parser.add_argument(
        "--out", required=True, help="directory of the documents (created if missing), e.g. derivations"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming the documents in --out that are stale or missing",
    )
    mode.add_argument("--force", action="store_true", help="overwrite documents that differ from the generated ones")


def _out_dir(text: str) -> Path:
    """``--out`` as a path: non-empty, not a symbolic link, a directory if it exists."""
    if not text.strip():
        raise ParameterError("out", "a non-empty directory path", text)
    out = Path(text)
    if out.is_symlink():
        raise ParameterError("out", "a directory, not a symbolic link", text)
    if out.exists() and not out.is_dir():
        raise ParameterError("out", "a directory (it exists and is not one)", text)
    return out


def _current(path: Path) -> str | None:
    """The text of a document file, ``None`` if missing; a link or a non-file is refused.  At most
    :data:`MAX_DOCUMENT_BYTES` are read: a larger file is no document this command makes (it reads as stale)."""
    if path.is_symlink():
        raise ParameterError("out", f"a directory whose {path.name} is not a symbolic link", str(path.parent))
    if not path.exists():
        return None
    if not path.is_file():
        raise ParameterError("out", f"a directory whose {path.name} is a regular file", str(path.parent))
    with open(path, "rb") as handle:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
    return data.decode("utf-8", errors="replace")


def _extra(out: Path, generated) -> list[str]:
    """``.md`` files of ``out`` that no derivation makes (sorted)."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir() if p.suffix == ".md" and p.name not in generated)


def check(out: Path, generated: dict) -> dict:
    """``--check``: the status of every document in ``out`` (nothing written)."""
    from lipschitz_icl.derivations import documents

    status = {}
    for name in generated:
        found = _current(out / name)
        if found is None:
            status[name] = "missing"
        else:
            status[name] = "current" if documents.current(name, found) else "stale"
    extra = _extra(out, generated)
    stale = [name for name, s in status.items() if s != "current"] + extra
    return {
        "out": str(out),
        "documents": [{"file": n, "status": s} for n, s in status.items()],
        "extra": extra,
        "stale": stale,
    }


def write(out: Path, generated: dict, force: bool) -> dict:
    """Write the documents into ``out``; a differing file needs ``force`` (checked before anything is written)."""
    from lipschitz_icl.derivations import documents

    found = {name: _current(out / name) for name in generated}
    unchanged = {name for name, text in found.items() if text is not None and documents.current(name, text)}
    differing = [name for name in generated if found[name] is not None and name not in unchanged]
    if differing and not force:
        raise ParameterError(
            "force",
            "given to overwrite documents that differ from the generated ones ("
            + ", ".join(str(out / n) for n in differing)
            + ")",
            False,
        )
    out.mkdir(parents=True, exist_ok=True)
    status = {}
    for name, text in generated.items():
        if name in unchanged:
            status[name] = "unchanged"
            continue
        # atomic, never through a link, the existing file's mode kept (a new one 0644 less the umask)
        write_file(out / name, text, force=found[name] is not None, option="out")
        status[name] = "overwritten" if found[name] is not None else "written"
    return {
        "out": str(out),
        "documents": [{"file": n, "status": s} for n, s in status.items()],
        "extra": _extra(out, generated),
    }


def run(args):
    from lipschitz_icl.derivations import documents

    out = _out_dir(args.out)
    made = [] if args.check else _make_dir(out, args.out)
    try:
        generated = documents.files()
    except BaseException:  # interrupted or failed before writing: the directories this run made go again
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    if args.check:
        payload = check(out, generated)
        return payload, EXIT_STALE if payload["stale"] else EXIT_OK
    return write(out, generated, args.force), EXIT_OK


def _make_dir(out: Path, text: str) -> list[Path]:
    """Make ``--out`` before the derivations run (seconds), so that one that cannot be made is refused at once;
    returns the directories made, outermost first (removed again if the run fails before writing)."""
    missing = []
    probe = out
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        for directory in missing:  # a partial mkdir -p: what it made goes again
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise ParameterError("out", f"a directory that can be created ({exc.strerror})", text) from None
    return list(reversed(missing))


def format_text(payload: dict) -> str:
    """One line per document (``status  path``); with ``--check`` a last line naming the stale files."""
    out = Path(payload["out"])
    lines = [f"{d['status']:<11} {out / d['file']}" for d in payload["documents"]]
    lines += [f"{'extra':<11} {out / name}" for name in payload["extra"]]
    if "stale" in payload:
        lines.append(
            "stale: " + ", ".join(str(out / n) for n in payload["stale"])
            if payload["stale"]
            else "all documents are current"
        )
    return "\n".join(lines)
