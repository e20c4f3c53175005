"""Writing one file the project produces: atomically, never through a symbolic link, with the mode a user
expects, and never over an existing file unless asked.

Every file a command writes for its user goes through :func:`write_file` (proof certificates, the design
lock, the derivations documents, the report's and the figures' outputs, trained parameters, the gates'
``claims.json``).  The rules:

* **Atomic.**  The content goes into a new hidden temporary file in the target's own directory (created
  exclusively, never through a link), is flushed to disk, then moved onto the target in one step: a reader
  sees the old file or the new one, never a part; a failure (a full disk, Ctrl-C) leaves the target as it
  was and removes the temporary file.
* **Never through a symbolic link.**  A link at the target is never followed: without ``force`` it counts as
  an existing file (a dangling one too) and is refused; with ``force`` the link itself is replaced by the new
  regular file, never the file it points to.  (Directories on the way are the user's to choose.)
* **The mode a user expects.**  A replaced regular file keeps its permission bits; a new file gets ``0644``
  less the process's umask (what ``open(path, "w")`` would give with the usual umask, never the ``0600`` of a
  temporary file).
* **No silent overwrite.**  Without ``force`` an existing name is refused, checked again at the last moment:
  the new file is put in place by a hard link, which fails if the name appeared meanwhile (on a file system
  without hard links: a check, then a rename).

Refusals are :class:`~lipschitz_icl.validation.ParameterError` on the caller's ``option`` (the command's
option that named the path); a failure of the file system itself is an ``OSError`` naming the target (never
the temporary file), for the caller's own contract (exit 2 or 1).  :func:`check_target` makes the same
refusals before any work, so a command that computes for minutes refuses a bad path first.

Not routed here: the on-disk cache (:mod:`lipschitz_icl.runtime.cache`) keeps its own writer, which works
through directory descriptors at every level (a cache directory swapped for a link mid-write is not
followed) and makes private ``0600`` files, as a cache of signed entries should.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from lipschitz_icl.validation import ParameterError

__all__ = ["NEW_FILE_MODE", "check_target", "write_file", "new_file_mode"]

NEW_FILE_MODE = 0o644  # a new file's mode before the umask
_NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK)
_UMASK_LOCK = threading.Lock()

Content = bytes | str | Callable[[BinaryIO], object]


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:  # elsewhere: set and restore (a thread creating a file meanwhile could see 0)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode of a new file: :data:`NEW_FILE_MODE` less the umask."""
    return NEW_FILE_MODE & ~_umask()


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def check_target(path, *, force: bool, option: str) -> Path:
    """Refuse, before any work, a target :func:`write_file` would refuse: an empty name, a directory, a
    parent that is not a directory, or (without ``force``) an existing name, a symbolic link included."""
    if path is None or str(path) == "":
        raise ParameterError(option, "a file path (an empty name names no file)", path)
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        raise ParameterError(option, f"a path in an existing directory ({parent} is not one)", str(path))
    info = _lstat(path)
    if info is None:
        return path
    if stat.S_ISDIR(info.st_mode):
        raise ParameterError(option, "a file path, not a directory", str(path))
    if not force:
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "a file"
        raise ParameterError(
            option, f"a path where no file exists yet ({kind} is there; give --force to replace it)", str(path)
        )
    return path


def _fill(handle: BinaryIO, content: Content) -> None:
    if isinstance(content, str):
        handle.write(content.encode("utf-8"))
    elif isinstance(content, bytes):
        handle.write(content)
    else:
        content(handle)


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming the target (its class kept: ``PermissionError``, ...), not the temporary file."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def _place(tmp: str, path: Path, force: bool, option: str) -> None:
    """Move ``tmp`` onto ``path``: ``rename`` with ``force`` (a link there is replaced itself), else a hard
    link that fails on an existing name."""
    if force:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        raise ParameterError(
            option,
            "a path where no file exists yet (one appeared while writing; give --force to replace it)",
            str(path),
        ) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if _lstat(path) is not None:
            raise ParameterError(
                option, "a path where no file exists yet (give --force to replace it)", str(path)
            ) from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def _sync_directory(directory: Path) -> None:
    """Make the rename durable (best effort: some file systems refuse a directory descriptor's fsync)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(path, content: Content, *, force: bool = False, option: str = "out") -> Path:
    """Write ``content`` to ``path`` by the rules of the module docstring; returns the path.

    ``content`` is ``bytes``, a ``str`` (written as UTF-8) or a function that writes into the binary handle
    it is given (``numpy.savez``, a copy from another file).  ``option`` names the path in refusals."""
    path = check_target(path, force=force, option=option)
    existing = _lstat(path)
    keep = existing is not None and stat.S_ISREG(existing.st_mode)
    mode = stat.S_IMODE(existing.st_mode) if keep and existing is not None else new_file_mode()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lipschitz-icl-", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _named(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            _fill(handle, content)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        _place(tmp, path, force, option)
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        if os.path.lexists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _sync_directory(path.parent)
    return path
