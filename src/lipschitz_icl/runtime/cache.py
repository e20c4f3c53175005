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

Several entries at once: :func:`cached_together` reads the stored ones and computes the missing ones in
one call, each under an exclusive lock (``flock`` on ``<entry>.lock``), so that concurrent processes
(pytest-xdist or Dask workers) that ask for the same entry compute it once: the others wait, then read.

Bypass: ``set_enabled(False)`` (the ``--no-cache`` flag of ``lipschitz-icl check`` and the pytest
option ``--no-cache``), or the context manager :func:`disabled`.  :data:`STATS` counts hits, misses
and corrupt entries of this process (for tests and progress lines).
"""

from __future__ import annotations

import contextlib
import functools
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
    "cached_together",
    "entry_path",
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


def _entry(key_parts, namespace: str) -> tuple[dict, Path]:
    """The ident (namespace, canonical key parts, code version) of an entry and its path."""
    ident = {"namespace": namespace, "key": json.loads(_canonical(key_parts)), "code": code_version()}
    key = hashlib.sha256(_canonical(ident).encode()).hexdigest()
    return ident, cache_dir() / namespace / f"{key[:2]}" / f"{key}.json"


def entry_path(key_parts, namespace: str = "default") -> Path:
    """Where the entry of ``key_parts`` lives (``<cache dir>/<namespace>/<xx>/<key>.json``); its lock beside it."""
    return _entry(key_parts, namespace)[1]


def _lookup(ident: dict, path: Path, validate):
    """The stored value of an entry, or :data:`_MISSING` (absent, corrupt or refused by ``validate``)."""
    stored = _read(path, ident)
    if stored is not _MISSING and validate is not None and not _safe_validate(validate, stored):
        STATS["corrupt"] += 1
        stored = _MISSING
    STATS["hits" if stored is not _MISSING else "misses"] += 1
    return stored


def cached(key_parts, compute, *, namespace: str = "default", validate=None):
    """``compute()`` memoised on disk under ``key_parts`` (JSON-serialisable) and the code version.

    ``compute`` must return a JSON-serialisable value (dicts, lists, numbers, strings; non-finite
    floats are kept).  A hit returns the stored value if it is authentic (HMAC) and
    ``validate(value)`` is true; a miss or a corrupt entry calls ``compute`` and stores its result.
    With the cache disabled, ``compute()`` is returned directly.
    """
    if not enabled():
        return compute()
    ident, path = _entry(key_parts, namespace)
    stored = _lookup(ident, path, validate)
    if stored is not _MISSING:
        return stored
    value = compute()
    _write(path, ident, value)
    return value


def cached_together(keys, compute_missing, *, namespace: str = "default", validate=None) -> list:
    """The values of several entries, those missing computed once and together.

    ``keys``: the key parts of each entry (as for :func:`cached`); ``compute_missing(indices)`` returns the
    values of the entries ``indices`` (positions in ``keys``), in that order; ``validate(value, key_parts)``
    (optional) must be true for a stored value to be used.  Hits are read; the missing
    entries are locked (an exclusive ``flock`` on ``<entry>.lock``, taken in path order, so that two
    processes never wait for each other in a circle), read again -- another process (a pytest-xdist or
    Dask worker) may have computed them while this one waited -- and only the entries still missing are
    computed and stored.  So concurrent requests for the same entries compute them once.  A lock that
    cannot be taken within :data:`LOCK_WAIT_SECONDS` (or at all: an unwritable directory, a lock path that is
    not a regular file) is skipped: the entry is then computed here too, which costs time, never
    correctness.  With the cache disabled every value is computed.
    """
    keys = list(keys)
    if not enabled():
        return list(compute_missing(list(range(len(keys)))))
    entries = [_entry(parts, namespace) for parts in keys]
    checks = [None if validate is None else functools.partial(_valid_for, validate, parts) for parts in keys]
    values = [_lookup(ident, path, check) for (ident, path), check in zip(entries, checks)]
    missing = [i for i, v in enumerate(values) if v is _MISSING]
    if not missing:
        return values
    with _locked([entries[i][1] for i in missing]):
        for i in missing:  # computed by another process while this one waited for the lock?
            stored = _read(entries[i][1], entries[i][0])
            if stored is not _MISSING and (checks[i] is None or _safe_validate(checks[i], stored)):
                values[i] = stored
        still = [i for i in missing if values[i] is _MISSING]
        if still:
            for i, value in zip(still, compute_missing(still)):
                values[i] = value
                _write(entries[i][1], entries[i][0], value)
    return values


def _valid_for(validate, key_parts, value) -> bool:
    return validate(value, key_parts)


LOCK_WAIT_SECONDS = 3600.0  # the longest wait for another process's lock on an entry (then computed here)


@contextlib.contextmanager
def _locked(paths):
    """Hold an exclusive ``flock`` on ``<entry>.lock`` of each of ``paths`` (in sorted order)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no locks, concurrent requests may compute twice
        yield
        return
    held = []
    try:
        for path in sorted(set(paths)):
            fd = _lock_file(path)
            if fd is None:
                continue
            if _wait_for_lock(fcntl, fd):
                held.append(fd)
            else:
                os.close(fd)
        yield
    finally:
        for fd in held:
            os.close(fd)  # closing the descriptor releases its lock


def _lock_file(path: Path) -> int | None:
    """A descriptor of the regular file ``<entry>.lock`` beside ``path`` (created; never through a symlink)."""
    directory = _entry_dir(path, create=True)
    if directory is None:
        return None
    try:
        fd = os.open(
            path.name + ".lock",
            os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
            0o600,
            dir_fd=directory,
        )
    except OSError:
        return None
    finally:
        os.close(directory)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _wait_for_lock(fcntl, fd: int) -> bool:
    """Take the exclusive lock on ``fd``, polling with a growing pause, for at most :data:`LOCK_WAIT_SECONDS`."""
    import time

    deadline, pause = time.monotonic() + LOCK_WAIT_SECONDS, 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(2 * pause, 0.5)
        except OSError:
            return False


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
