"""Safe output: files are made in a fresh temporary directory, then moved into ``--out`` one by one,
each atomically, and never through a symbolic link.

Used by ``lipschitz-icl report`` and ``lipschitz-icl figures``.  The rules (issue 22):

* ``--out ''`` is refused; ``--out`` must be a directory or creatable as one.
* Before anything is written, every target ``out/<name>`` is checked with ``lstat`` (a dangling link
  counts as existing): without ``force`` any existing target refuses the whole run (nothing written);
  a directory on the way (``out/figures``) that is a symbolic link is never followed.
* Each file is written by :func:`lipschitz_icl.writefile.write_file`: copied into a hidden temporary file
  beside its target (created exclusively), flushed, then moved onto the target: with ``force`` by
  ``rename`` (which replaces a link itself, never the file it points to), without ``force`` by ``link``
  (which refuses an existing name, so a file that appeared meanwhile is not overwritten); a replaced file
  keeps its mode, a new one is ``0644`` less the umask.  A failure removes the temporary file and every
  file this run created, so no partial file is left.
* Errors are one line: a read-only or unusable directory, and a full disk, are bad input
  (:class:`~lipschitz_icl.validation.ParameterError` on ``out``, exit 2); any other I/O error is
  :class:`OutputError` (exit 1).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

from lipschitz_icl.validation import ParameterError
from lipschitz_icl.writefile import write_file

__all__ = ["OutputError", "out_directory", "check_targets", "install", "USER_ERRNOS", "describe"]

# errors that mean the directory the user gave cannot take the output (exit 2); others are I/O failures
USER_ERRNOS = {
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EEXIST,
    errno.ELOOP,
    errno.ENAMETOOLONG,
}


class OutputError(OSError):
    """Writing the output failed for a reason other than the directory the user gave (exit 1)."""


def describe(exc: OSError) -> str:
    """A short reason for an ``OSError``: its ``strerror`` (e.g. ``No space left on device``)."""
    return exc.strerror or type(exc).__name__


def _refuse(out, exc: OSError):
    """The exception to raise for ``exc`` while writing into ``out``: a ``ParameterError`` for the
    directory's own faults (read-only, full, not a directory), else an :class:`OutputError`."""
    if exc.errno in USER_ERRNOS:
        return ParameterError("out", f"a writable directory with space for the output ({describe(exc)})", str(out))
    return OutputError(exc.errno, f"writing into {out} failed ({describe(exc)})")


def out_directory(out) -> Path:
    """``out`` as a :class:`Path` of an existing directory (created with its parents if missing).
    Refuses an empty name and anything that is not a directory."""
    if out is None or str(out) == "":
        raise ParameterError("out", "a directory name (an empty --out would write into the current directory)", out)
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ParameterError("out", "a directory (a file of that name exists)", str(out)) from None
    except OSError as exc:
        raise _refuse(out, exc) from None
    if not path.is_dir():
        raise ParameterError("out", "a directory", str(out))
    return path


def _exists(path: Path) -> bool:
    """``path`` exists as a name (a dangling symbolic link counts)."""
    return os.path.lexists(path)


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def check_targets(out: Path, names, force: bool) -> None:
    """Refuse before writing: without ``force`` any existing ``out/<name>`` (a link, dangling or not,
    counts); in every case a directory target, and a parent directory inside ``out`` that exists but is
    not a directory (a link to one counts as not being one unless ``force`` will replace it)."""
    existing, blocked = [], []
    for name in names:
        target = out / name
        for parent in _parents_inside(out, name):
            if _is_link(parent) and not force:
                blocked.append(f"{parent} is a symbolic link")
            elif _exists(parent) and not _is_link(parent) and not parent.is_dir():
                blocked.append(f"{parent} is not a directory")
        if _exists(target):
            if not _is_link(target) and target.is_dir():
                blocked.append(f"{target} is a directory")
            elif not force:
                existing.append(str(target))
    if blocked:
        reasons = "; ".join(sorted(set(blocked)))
        raise ParameterError("out", f"a directory whose entries can take the output ({reasons})", str(out))
    if existing:
        shown = ", ".join(existing[:3]) + (f" and {len(existing) - 3} more" if len(existing) > 3 else "")
        raise ParameterError("force", f"given to replace existing files ({shown})", False)


def _parents_inside(out: Path, name: str) -> list[Path]:
    """The directories between ``out`` and ``out/<name>`` (``out/figures`` for ``figures/a.pdf``)."""
    parts = Path(name).parts[:-1]
    return [out.joinpath(*parts[: i + 1]) for i in range(len(parts))]


def _make_parents(out: Path, name: str, force: bool, created: list) -> None:
    """Create the directories on the way to ``out/<name>``; a symbolic link there is replaced by a real
    directory with ``force`` (the link itself is removed, never its target), else refused."""
    for parent in _parents_inside(out, name):
        if _is_link(parent):
            if not force:
                raise ParameterError("out", f"a directory without symbolic links ({parent} is one)", str(out))
            os.unlink(parent)
        if not parent.is_dir():
            os.mkdir(parent)
            created.append(parent)


def _copy_from(source: Path):
    """The content of ``source`` as a function that copies it into a handle (for :func:`write_file`)."""

    def copy(handle) -> None:
        with open(source, "rb") as src:
            shutil.copyfileobj(src, handle, 1 << 20)

    return copy


def install(build: Path, out: Path, names, force: bool) -> list[Path]:
    """Move ``build/<name>`` to ``out/<name>`` for every name (see the module docstring); returns the
    targets.  Checks every target first (:func:`check_targets`), so a refusal writes nothing."""
    names = list(names)
    check_targets(out, names, force)
    placed: list[Path] = []
    created_dirs: list[Path] = []
    fresh: list[Path] = []  # targets that did not exist before this run (removed again on failure)
    try:
        for name in names:
            target = out / name
            _make_parents(out, name, force, created_dirs)
            existed = _exists(target)
            write_file(target, _copy_from(build / name), force=force, option="out")
            placed.append(target)
            if not existed:
                fresh.append(target)
    except OSError as exc:
        _undo(fresh, created_dirs)
        raise _refuse(out, exc) from None
    except BaseException:
        _undo(fresh, created_dirs)
        raise
    return placed


def _undo(files, dirs) -> None:
    for path in files:
        try:
            os.unlink(path)
        except OSError:
            pass
    for path in reversed(dirs):
        try:
            os.rmdir(path)
        except OSError:
            pass
