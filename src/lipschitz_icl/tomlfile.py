"""Reading a small TOML file from outside (variant files, kernel files): the one reader both use.

The file must be a regular file (devices, FIFOs and directories are refused from ``stat`` and the file is
opened non-blocking, so ``/dev/zero`` or a FIFO never blocks or fills memory) of at most
:data:`MAX_FILE_BYTES` bytes (never more than that plus one is read, whatever a sparse file claims),
UTF-8 text, and TOML whose arrays and tables nest at most as deep as Python's parser recursion allows
(a file nested 30,000 deep is refused, not a ``RecursionError``).  Every refusal is a
:class:`TomlFileError` carrying the path, the 1-based line (0: the file as a whole) and the reason.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["MAX_FILE_BYTES", "TomlFileError", "read_limited", "read_toml"]

MAX_FILE_BYTES = 64 * 1024


class TomlFileError(ValueError):
    """A TOML file that cannot be accepted: ``"<file>:<line>: <reason>"`` (``"<file>: <reason>"`` for the file as
    a whole, line 0)."""

    def __init__(self, path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), int(line), reason
        super().__init__(f"{path}:{line}: {reason}" if self.line else f"{path}: {reason}")


def read_limited(path) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most :data:`MAX_FILE_BYTES` bytes;
    never blocks (FIFOs, devices are refused from ``stat`` and opened non-blocking) and never reads
    more than ``MAX_FILE_BYTES + 1`` bytes."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise TomlFileError(path, 0, "not a regular file (devices, FIFOs and directories are refused)")
        if info.st_size > MAX_FILE_BYTES:
            raise TomlFileError(path, 0, f"file larger than {MAX_FILE_BYTES} bytes")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise TomlFileError(path, 0, "not a regular file")
            data = os.read(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise TomlFileError(path, 0, f"cannot read the file ({exc.strerror or exc})") from None
    except ValueError as exc:  # e.g. an embedded NUL in the path
        if isinstance(exc, TomlFileError):
            raise
        raise TomlFileError(path, 0, f"cannot read the file ({exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise TomlFileError(path, 0, f"file larger than {MAX_FILE_BYTES} bytes")
    return data


def read_toml(path) -> tuple[str, dict]:
    """``(text, table)`` of the TOML file ``path`` (rules in the module docstring)."""
    path = Path(path)
    raw = read_limited(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TomlFileError(path, line, "the file is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise TomlFileError(path, int(m.group(1)) if m else 1, f"invalid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        raise TomlFileError(path, 0, "arrays or tables nested too deeply") from None
    return text, data
