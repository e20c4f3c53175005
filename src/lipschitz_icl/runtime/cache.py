"""On-disk cache of expensive evaluations, keyed by inputs and code (the engine's ``w*`` and losses go
through it in :mod:`lipschitz_icl.runtime.memo`; this module imports nothing of the engine).

Where: ``$LIPSCHITZ_ICL_CACHE`` if set, else ``~/.cache/lipschitz-icl`` (:func:`cache_dir`).  Each
entry is one JSON file ``<namespace>/<key>.json`` holding the key parts, the payload and a SHA-256
checksum of the payload; the key is the SHA-256 of the canonical JSON of

    (namespace, key parts, code version)

where the code version (:func:`code_version`) is the package ``__version__`` plus a hash of every
``.py`` source file of the package, so any edit of the code invalidates every entry.  Entries are
JSON (never pickle): reading a cache directory cannot run code.  Writes are atomic (temporary
file, then ``os.replace``), so concurrent writers never leave a half-written entry.

Threat model.  (1) Accidental corruption: truncated or flipped bytes, a disk full, an entry of an
older layout.  (2) Hostile entries: the directory may be shared (``$LIPSCHITZ_ICL_CACHE`` on a group
or world-writable path), so anyone who can write there can plant an entry with a correctly
recomputed SHA-256 and plausible but wrong numbers.  Defences: every entry carries an HMAC-SHA256
of its ident and payload under a per-user key (``<cache dir>/.key``, 32 random bytes, created with
mode 0600; a key file not owned by this user, readable by others, or not a regular file disables
reading the cache, so an attacker who can replace the key gains nothing); and every value read is
validated (decodes as UTF-8 JSON, at most :data:`MAX_ENTRY_BYTES`, the expected keys and types,
finite numbers, ``ci_low <= w* <= ci_high``, ``w* > 0``, non-negative losses) by the caller's
``validate``.  Anything that fails is *corrupt*: counted, ignored, recomputed and overwritten --
never trusted and never a traceback.  Symlinks: below the cache directory every
component (namespace, prefix directory, entry) is opened relative to its parent with ``O_NOFOLLOW``,
so a symlinked or dangling namespace directory is never followed (a miss; nothing is written through
it).  Not covered: an attacker who can read this user's files (and so the key).

Bypass: ``set_enabled(False)`` (the ``--no-cache`` flag of ``lipschitz-icl check`` and the pytest
option ``--no-cache``), or the context manager :func:`disabled`.  :data:`STATS` counts hits, misses
and corrupt entries of this process (for tests and progress lines).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from functools import lru_cache
from pathlib import Path

__all__ = [
    "cache_dir",
    "code_version",
    "cached",
    "json_default",
    "set_enabled",
    "enabled",
    "disabled",
    "STATS",
    "ENV_VAR",
]

ENV_VAR = "LIPSCHITZ_ICL_CACHE"
MAX_ENTRY_BYTES = 1 << 20
KEY_FILE = ".key"
STATS = {"hits": 0, "misses": 0, "corrupt": 0}
_ENABLED = [True]


def cache_dir() -> Path:
    """``$LIPSCHITZ_ICL_CACHE`` when set and non-empty, else ``~/.cache/lipschitz-icl``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path.home() / ".cache" / "lipschitz-icl"


@lru_cache(maxsize=1)
def code_version() -> str:
    """``"<__version__>+<sha256 of the package's .py files>"`` (paths and contents, sorted by path)."""
    from lipschitz_icl import __version__

    root = Path(__file__).resolve().parents[1]  # the package lipschitz_icl/, every subpackage included
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return f"{__version__}+{digest.hexdigest()[:16]}"


def set_enabled(flag: bool) -> None:
    """Turn the cache on or off for this process."""
    _ENABLED[0] = bool(flag)


def enabled() -> bool:
    """Whether :func:`cached` reads and writes the disk cache."""
    return _ENABLED[0]


@contextlib.contextmanager
def disabled():
    """Context in which every :func:`cached` call recomputes and stores nothing."""
    previous = _ENABLED[0]
    _ENABLED[0] = False
    try:
        yield
    finally:
        _ENABLED[0] = previous


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=json_default)


def json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):  # numpy arrays
        return value.tolist()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _checksum(payload_text: str) -> str:
    return hashlib.sha256(payload_text.encode()).hexdigest()


def _key() -> bytes | None:
    """This user's HMAC key (created on first use); ``None`` when it cannot be trusted or made."""
    path = cache_dir() / KEY_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
        except FileExistsError:
            pass
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
                return None
            key = handle.read(64)
    except OSError:
        return None
    return key if len(key) == 32 else None


def _mac(key: bytes, ident: dict, payload_text: str) -> str:
    return hmac.new(key, (_canonical(ident) + "\0" + payload_text).encode(), hashlib.sha256).hexdigest()


def cached(key_parts, compute, *, namespace: str = "default", validate=None):
    """``compute()`` memoised on disk under ``key_parts`` (JSON-serialisable) and the code version.

    ``compute`` must return a JSON-serialisable value (dicts, lists, numbers, strings; non-finite
    floats are kept).  A hit returns the stored value if it is authentic (HMAC) and
    ``validate(value)`` is true; a miss or a corrupt entry calls ``compute`` and stores its result.
    With the cache disabled, ``compute()`` is returned directly.
    """
    if not enabled():
        return compute()
    ident = {"namespace": namespace, "key": json.loads(_canonical(key_parts)), "code": code_version()}
    key = hashlib.sha256(_canonical(ident).encode()).hexdigest()
    path = cache_dir() / namespace / f"{key[:2]}" / f"{key}.json"
    stored = _read(path, ident)
    if stored is not _MISSING and validate is not None and not _safe_validate(validate, stored):
        STATS["corrupt"] += 1
        stored = _MISSING
    if stored is not _MISSING:
        STATS["hits"] += 1
        return stored
    STATS["misses"] += 1
    value = compute()
    _write(path, ident, value)
    return value


_MISSING = object()


def _safe_validate(validate, value) -> bool:
    try:
        return bool(validate(value))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return False


_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _entry_dir(path: Path, create: bool) -> int | None:
    """A descriptor of the directory holding the entry ``path`` (``<cache dir>/<namespace>/<xx>``), each
    component below the cache directory opened relative to the one above with ``O_NOFOLLOW |
    O_DIRECTORY`` (created first when ``create``): a symlinked (or dangling, or non-directory) namespace
    or prefix directory is never followed -- ``None``, the entry is a miss and nothing is written."""
    root = cache_dir()
    try:
        parts = path.parent.relative_to(root).parts
        if create:
            root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY)
    except (OSError, ValueError):
        return None
    try:
        for name in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
            sub = os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
    except OSError:
        os.close(fd)
        return None
    return fd


def _read(path: Path, ident: dict):
    directory = _entry_dir(path, create=False)
    if directory is None:
        return _MISSING
    try:  # non-blocking and regular files only: a FIFO planted in a shared directory must not hang us
        fd = os.open(path.name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _O_NOFOLLOW, dir_fd=directory)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise IsADirectoryError(path)
            raw = handle.read(MAX_ENTRY_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return _MISSING
    except OSError:
        STATS["corrupt"] += 1
        return _MISSING
    finally:
        os.close(directory)
    key = _key()
    try:
        if len(raw) > MAX_ENTRY_BYTES or key is None:
            raise ValueError("too large or no trusted key")
        entry = json.loads(raw.decode("utf-8"))
        payload_text = entry["payload"]
        ok = (
            isinstance(payload_text, str)
            and entry.get("checksum") == _checksum(payload_text)
            and entry.get("ident") == ident
            and hmac.compare_digest(str(entry.get("mac", "")), _mac(key, ident, payload_text))
        )
        value = json.loads(payload_text) if ok else _MISSING
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        ok, value = False, _MISSING
    if not ok:
        STATS["corrupt"] += 1
        return _MISSING
    return value


def _write(path: Path, ident: dict, value) -> None:
    payload_text = json.dumps(value, default=json_default)
    key = _key()
    if key is None:
        return
    entry = {
        "ident": ident,
        "checksum": _checksum(payload_text),
        "payload": payload_text,
        "mac": _mac(key, ident, payload_text),
    }
    directory = _entry_dir(path, create=True)
    if directory is None:
        return
    tmp = None
    try:
        name = f".tmp-{secrets.token_hex(8)}.json"
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600, dir_fd=directory)
        tmp = name
        with os.fdopen(fd, "w") as handle:
            json.dump(entry, handle)
        os.replace(tmp, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        tmp = None
    except OSError:
        pass  # an unwritable cache costs speed, never correctness: the value is returned regardless
    finally:  # also on Ctrl-C: no temporary file is left behind, the entry is old or new, never partial
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=directory)
        os.close(directory)


# ------------------------------------------------------------------ the cached evaluations
