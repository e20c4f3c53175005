"""``lipschitz-icl derivations --out DIR [--check] [--force] [--json]``: write the derivations as documents a
theorist reads, or check that the documents in ``DIR`` are current.

The documents (:mod:`lipschitz_icl.derivations.documents`): ``<module>.md`` per derivation module of
:mod:`lipschitz_icl.derivations` (statement, assumptions, steps, results; every formula printed by
``sympy.latex`` from the expressions the code computes) and ``README.md``, their index.  The text is
deterministic (no dates, fixed number format), so the committed ``derivations/`` can be checked in CI.

Writing: every document is computed first; then a missing file is written, an identical one left alone, and a
different one is overwritten only with ``--force`` (otherwise exit 2 naming the files, nothing written).
Files of ``DIR`` that the command does not make are never touched.  ``--check`` writes nothing: exit 0 when
every document in ``DIR`` equals the generated text, exit 1 naming the stale and missing documents (and any
other ``.md`` file of ``DIR``, which no derivation makes).  Refused (exit 2): an empty ``--out``, an ``--out``
that is a symbolic link or not a directory, a document path that is a symbolic link or not a regular file.

Payload: ``out``, ``documents`` (``{file, status}``; status ``written``, ``overwritten``, ``unchanged``, or with
``--check`` ``current``, ``stale``, ``missing``), ``extra`` (other ``.md`` files of ``DIR``), and with
``--check`` ``stale`` (the files that are not current).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lipschitz_icl.validation import ParameterError

NAME = "derivations"
HELP = "write the derivations as Markdown documents (statement, steps, results), or --check they are current"
EXIT_OK, EXIT_STALE = 0, 1


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
    """The text of a document file, ``None`` if missing; a link or a non-file is refused."""
    if path.is_symlink():
        raise ParameterError("out", f"a directory whose {path.name} is not a symbolic link", str(path.parent))
    if not path.exists():
        return None
    if not path.is_file():
        raise ParameterError("out", f"a directory whose {path.name} is a regular file", str(path.parent))
    return path.read_bytes().decode("utf-8", errors="replace")


def _extra(out: Path, generated) -> list[str]:
    """``.md`` files of ``out`` that no derivation makes (sorted)."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir() if p.suffix == ".md" and p.name not in generated)


def _write(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) through a temporary file in the same directory, then rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check(out: Path, generated: dict) -> dict:
    """``--check``: the status of every document in ``out`` (nothing written)."""
    status = {}
    for name, text in generated.items():
        found = _current(out / name)
        status[name] = "missing" if found is None else ("current" if found == text else "stale")
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
    found = {name: _current(out / name) for name in generated}
    differing = [name for name, text in generated.items() if found[name] is not None and found[name] != text]
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
        if found[name] == text:
            status[name] = "unchanged"
            continue
        _write(out / name, text)
        status[name] = "overwritten" if found[name] is not None else "written"
    return {
        "out": str(out),
        "documents": [{"file": n, "status": s} for n, s in status.items()],
        "extra": _extra(out, generated),
    }


def run(args):
    from lipschitz_icl.derivations import documents

    out = _out_dir(args.out)
    generated = documents.files()
    if args.check:
        payload = check(out, generated)
        return payload, EXIT_STALE if payload["stale"] else EXIT_OK
    return write(out, generated, args.force), EXIT_OK


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
