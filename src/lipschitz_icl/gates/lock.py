"""The design lock: each confirmatory claim's design, fixed before its data, with its seed salt.

``claims/design.lock.json`` (beside the registry it locks) records, for every locked claim, the
design record of :meth:`lipschitz_icl.gates.registry.ClaimSpec.design_record` (statement, status, scope,
measure, rule, the ``[claim.design]`` numbers, grids, seeds, resolution searches and alternatives), its
hash, the seed salt, the date and the commit it was locked on, and the reason.  Every lock event is
also appended to the file's ``history``, so the report can list how designs changed and why.

* ``pytest verify/`` fails a confirmatory claim whose design differs from its lock, naming what changed
  (:func:`changes`), before measuring anything; ``lipschitz-icl lock --check`` (:func:`checked_changes`)
  lists every confirmatory claim and every locked one that differs, whatever its status now, and every
  locked claim that left the registry.
* A changed design is re-locked by ``lipschitz-icl lock KEY --reason TEXT`` (:func:`relock`), which
  takes a new salt (one above any the claim has had): the seeds of every replicate change
  (:meth:`lipschitz_icl.gates.registry.ClaimCase.seed_sequence`), so the new design draws fresh data and never
  reuses the data that prompted the change.
* The lock follows a claim once it is locked: demoting it to exploratory is a change of its design (its
  ``status``), re-locked like any other and checked from then on, so a demoted claim's design cannot move
  unseen.  A locked claim removed from the registry is retired by ``lock KEY --reason TEXT`` (its entry
  leaves the lock; the history keeps the event, ``retired: true``).
* A stochastic claim whose design matches its lock is not re-locked: a new salt for the same design would
  only draw new data until one passes.
* ``--keep-data`` keeps the salt: for a deterministic claim (no seed enters its verdict) at any lock, and
  for a stochastic claim only at its first lock (an existing design recorded as it stands); a stochastic
  claim that has been locked never moves without a new salt.  The history marks such events
  ``kept_data: true``.
* The lock file is read and written only as a regular file: a symbolic link (dangling or not) at its
  name is refused, and it is written atomically (:func:`lipschitz_icl.writefile.write_file`).  A malformed
  lock (another format, not a JSON object, not UTF-8) is :class:`LockFileError`.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from dataclasses import asdict, dataclass, fields
from datetime import date
from pathlib import Path

from lipschitz_icl.writefile import write_file

__all__ = [
    "LOCK_NAME",
    "LockEntry",
    "LockError",
    "LockFileError",
    "KeepDataError",
    "read",
    "entry_of",
    "salt_of",
    "changes",
    "checked_changes",
    "not_locked",
    "relock",
    "retire",
    "history",
]

LOCK_NAME = "design.lock.json"
FORMAT = 1
MAX_LOCK_BYTES = 64 * 1024**2  # a lock of a few hundred claims is well below a megabyte


class LockError(ValueError):
    """A lock request is refused (or, as :class:`LockFileError`, the lock file is malformed)."""


class LockFileError(LockError):
    """The lock file is malformed, not a regular file, or cannot be read."""


class KeepDataError(LockError):
    """``keep_data`` asked for a stochastic claim that has been locked (its design moves only with a new salt)."""


@dataclass(frozen=True, kw_only=True)
class LockEntry:
    """One lock event of one claim."""

    key: str
    design_hash: str
    salt: int
    fixed: str  # ISO date the design was locked
    commit: str  # the commit the lock was made on (the design holds from the next commit on)
    reason: str
    design: dict | None = None  # the locked design record (current entries only)
    kept_data: bool = False  # the event kept the salt (--keep-data): its data are not fresh
    retired: bool = False  # the event removed a claim that left the registry from the lock


_TYPES: dict[str, type | tuple[type, ...]] = {
    "key": str,
    "design_hash": str,
    "salt": int,
    "fixed": str,
    "commit": str,
    "reason": str,
    "design": (dict, type(None)),
    "kept_data": bool,
    "retired": bool,
}
_OPTIONAL = {"design", "kept_data", "retired"}


def _path(directory) -> Path:
    return Path(directory) / LOCK_NAME


def _entry(raw, where: str, key: str | None = None) -> LockEntry:
    """One entry of the file, every field checked for its type (a salt is a non-negative integer)."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is {type(raw).__name__}, not an object")
    values = dict(raw, key=key) if key is not None else dict(raw)
    names = {f.name for f in fields(LockEntry)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"{where}: unknown fields {unknown}")
    missing = sorted(names - _OPTIONAL - set(values))
    if missing:
        raise ValueError(f"{where}: missing fields {missing}")
    for name, value in values.items():
        is_bad_salt = name == "salt" and (isinstance(value, bool) or not isinstance(value, int) or value < 0)
        if is_bad_salt or not isinstance(value, _TYPES[name]):
            raise ValueError(f"{where}: {name} = {str(value)[:40]!r} is not a valid {name}")
    return LockEntry(**values)


def _read_text(path: Path) -> str | None:
    """The lock's text; ``None`` if there is none.  A symbolic link at its name (dangling or not) or a
    non-regular file is refused: a lock read through a link could be another registry's, or none at all."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise LockFileError(f"{path}: a symbolic link (the design lock must be a regular file in its registry)")
    if not stat.S_ISREG(info.st_mode):
        raise LockFileError(f"{path}: not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_LOCK_BYTES + 1)
    if len(data) > MAX_LOCK_BYTES:
        raise LockFileError(f"{path}: larger than {MAX_LOCK_BYTES // 1024**2} MiB, not a design lock")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LockFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read(directory) -> tuple[dict, list]:
    """``(current entries by key, history)`` of the lock in ``directory`` (empty if there is none).
    Raises :class:`LockFileError` for a lock that is not a regular file or not a design lock of this format."""
    path = _path(directory)
    try:
        text = _read_text(path)
    except OSError as exc:
        raise LockFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if text is None:
        return {}, []
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not an object")
        if data.get("format") != FORMAT:
            raise ValueError(f"format {str(data.get('format'))[:20]!r}, expected {FORMAT}")
        claims, past_raw = data.get("claims"), data.get("history")
        if not isinstance(claims, dict) or not isinstance(past_raw, list):
            raise ValueError("'claims' must be an object and 'history' a list")
        current = {k: _entry(v, f"claims.{k}", key=k) for k, v in claims.items()}
        past = [_entry(h, f"history[{i}]") for i, h in enumerate(past_raw)]
    except (TypeError, ValueError, RecursionError) as exc:
        raise LockFileError(f"{path}: not a design lock ({str(exc)[:200]})") from None
    return current, past


def history(directory) -> list[dict]:
    """Every lock event, oldest first (for claims.json and the report)."""
    return [asdict(h) for h in read(directory)[1]]


def entry_of(spec) -> LockEntry | None:
    """The current lock entry of a registry claim (``None`` if it is not locked)."""
    return read(spec.directory)[0].get(spec.key)


def salt_of(spec) -> int:
    """The claim's seed salt: its lock's, 0 if it is not locked."""
    entry = entry_of(spec)
    return entry.salt if entry else 0


def _diff(old, new, path: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            where = f"{path}.{key}" if path else str(key)
            if key not in old:
                out.append(f"{where} added ({_short(new[key])})")
            elif key not in new:
                out.append(f"{where} removed (was {_short(old[key])})")
            else:
                out.extend(_diff(old[key], new[key], where))
        return out
    return [] if old == new else [f"{path}: {_short(old)} -> {_short(new)}"]


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def not_locked(spec) -> str:
    """What to do about a confirmatory claim that has no lock entry yet."""
    return f"not locked yet: run lipschitz-icl lock {spec.key} --reason TEXT (the design is fixed before its data)"


def changes(spec) -> list[str]:
    """What differs between a confirmatory claim's design and its lock (empty when they match); a claim that is not
    locked yet: :func:`not_locked`."""
    entry = entry_of(spec)
    if entry is None:
        return [not_locked(spec)]
    if entry.design_hash == spec.design_hash:
        return []
    return _diff(entry.design or {}, spec.design_record()) or ["design hash differs"]


def checked_changes(specs, directory) -> dict[str, list[str]]:
    """What ``lock --check`` reports, by key: every confirmatory claim that differs from its lock, every
    locked claim that differs whatever its status now (a demotion is a change: ``status: "confirmatory" ->
    "exploratory"``), and every locked claim that is no longer in the registry."""
    current, _ = read(directory)
    specs = list(specs)
    out = {}
    for spec in specs:
        if spec.status == "confirmatory" or spec.key in current:
            changed = changes(spec)
            if changed:
                out[spec.key] = changed
    present = {spec.key for spec in specs}
    for key in sorted(set(current) - present):
        out[key] = [f"{key} is locked but no longer in the registry (retire it: lipschitz-icl lock {key} --reason ...)"]
    return out


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).resolve().parent,
            check=False,  # a failing git gives an empty commit below
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _salt(spec, current: dict, past: list, keep_data: bool) -> int:
    """The salt of a new lock event of ``spec``: one above any it has had, or (``keep_data``) the current one,
    which a stochastic claim may keep only at its first lock (module docstring)."""
    salts = [h.salt for h in past if h.key == spec.key]
    if spec.key in current:
        salts.append(current[spec.key].salt)
    if not keep_data:
        return max(salts, default=0) + 1
    if spec.stochastic and salts:
        raise KeepDataError(
            f"{spec.key} is stochastic and has been locked before: keeping its salt would let its design move "
            "without fresh data (a re-lock takes a new salt)"
        )
    return current[spec.key].salt if spec.key in current else 0


def relock(
    specs, reason: str, *, directory, keep_data: bool = False, today: str | None = None, commit: str | None = None
) -> list[LockEntry]:
    """Lock the designs of ``specs`` with a new salt each, one above any salt the claim has had, and write the
    lock.  A claim is locked when it is confirmatory, or exploratory with an entry in the lock (a demoted
    claim stays under the lock).  ``keep_data`` keeps the salt where the module docstring allows it (0 for a
    claim never locked) and marks the event ``kept_data`` in the history."""
    if not reason.strip():
        raise LockError("a lock states its reason")
    current, past = read(directory)
    today = today or date.today().isoformat()
    commit = _commit() if commit is None else commit
    made = []
    for spec in specs:
        if spec.status != "confirmatory" and spec.key not in current:
            raise LockError(f"{spec.key} is exploratory and not locked: only confirmatory designs are locked")
        unchanged = spec.key in current and current[spec.key].design_hash == spec.design_hash
        if unchanged and spec.stochastic and not keep_data:
            raise LockError(
                f"{spec.key}: its design matches the lock; a new salt for the same design would only draw "
                "new data until one passes (nothing to re-lock)"
            )
        entry = LockEntry(
            key=spec.key,
            design_hash=spec.design_hash,
            salt=_salt(spec, current, past, keep_data),
            fixed=today,
            commit=commit,
            reason=reason.strip(),
            design=spec.design_record(),
            kept_data=keep_data,
        )
        current[spec.key] = entry
        past.append(LockEntry(**{**asdict(entry), "design": None}))
        made.append(entry)
    _write(directory, current, past)
    return made


def retire(keys, reason: str, *, directory, today: str | None = None, commit: str | None = None) -> list[LockEntry]:
    """Remove locked claims that are no longer in the registry from the lock; the history keeps the event
    (``retired``, with the last design hash and salt, so a claim that comes back under the same key still
    takes a salt above every one it had)."""
    if not reason.strip():
        raise LockError("a lock states its reason")
    current, past = read(directory)
    today = today or date.today().isoformat()
    commit = _commit() if commit is None else commit
    made = []
    for key in keys:
        if key not in current:
            raise LockError(f"{key} is neither in the registry nor in {LOCK_NAME}")
        old = current.pop(key)
        event = LockEntry(
            key=key,
            design_hash=old.design_hash,
            salt=old.salt,
            fixed=today,
            commit=commit,
            reason=reason.strip(),
            retired=True,
        )
        past.append(event)
        made.append(event)
    _write(directory, current, past)
    return made


def _record(entry: LockEntry, drop: tuple) -> dict:
    """An entry as the file holds it: without ``drop`` and without flags that are false (the file of an
    older version stays byte for byte the same until an event sets one)."""
    return {f: v for f, v in asdict(entry).items() if f not in drop and not (f in ("kept_data", "retired") and not v)}


def _write(directory, current: dict, past: list) -> None:
    payload = {
        "format": FORMAT,
        "claims": {k: _record(e, ("key",)) for k, e in sorted(current.items())},
        "history": [_record(h, ("design",)) for h in past],
    }
    write_file(_path(directory), json.dumps(payload, indent=1, sort_keys=False) + "\n", force=True, option="lock")
