"""The design lock: each confirmatory claim's design, fixed before its data, with its seed salt.

``claims/design.lock.json`` (beside the registry it locks) records, for every confirmatory claim, the
design record of :meth:`lipschitz_icl.gates.registry.ClaimSpec.design_record` (statement, status, scope,
measure, rule, the ``[claim.design]`` numbers, grids, seeds, resolution searches and alternatives), its
hash, the seed salt, the date and the commit it was locked on, and the reason.  Every lock event is
also appended to the file's ``history``, so the report can list how designs changed and why.

* ``pytest verify/`` fails a confirmatory claim whose design differs from its lock, naming what changed
  (:func:`changes`), before measuring anything.
* A changed design is re-locked by ``lipschitz-icl lock KEY --reason TEXT`` (:func:`relock`), which
  always takes a new salt (one above any the claim has had): the seeds of every replicate change
  (:meth:`lipschitz_icl.gates.registry.ClaimCase.seed_sequence`), so the new design draws fresh data and never
  reuses the data that prompted the change.  ``--keep-data`` (salt unchanged) exists only for a first
  lock that records an existing design as it stands, and says so in the history.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

__all__ = [
    "LOCK_NAME",
    "LockEntry",
    "LockError",
    "read",
    "entry_of",
    "salt_of",
    "changes",
    "not_locked",
    "relock",
    "history",
]

LOCK_NAME = "design.lock.json"
FORMAT = 1


class LockError(ValueError):
    """The lock file is malformed, or a lock request is refused."""


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


def _path(directory) -> Path:
    return Path(directory) / LOCK_NAME


def read(directory) -> tuple[dict, list]:
    """``(current entries by key, history)`` of the lock in ``directory`` (empty if there is none)."""
    path = _path(directory)
    if not path.is_file():
        return {}, []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise LockError(f"{path}: format {data.get('format')!r}, expected {FORMAT}")
        current = {k: LockEntry(key=k, **v) for k, v in data["claims"].items()}
        past = [LockEntry(**h) for h in data["history"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise LockError(f"{path}: not a design lock ({exc})") from None
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


def relock(
    specs, reason: str, *, directory, keep_data: bool = False, today: str | None = None, commit: str | None = None
) -> list[LockEntry]:
    """Lock the designs of ``specs`` (confirmatory claims) with a new salt each, one above any salt the
    claim has had (``keep_data``: keep the current salt, 0 for a claim never locked), and write the lock."""
    if not reason.strip():
        raise LockError("a lock states its reason")
    current, past = read(directory)
    today = today or date.today().isoformat()
    commit = _commit() if commit is None else commit
    made = []
    for spec in specs:
        if spec.status != "confirmatory":
            raise LockError(f"{spec.key} is exploratory: only confirmatory designs are locked")
        salts = [h.salt for h in past if h.key == spec.key]
        if keep_data:
            salt = current[spec.key].salt if spec.key in current else 0
        else:
            salt = max(salts, default=0) + 1
        entry = LockEntry(
            key=spec.key,
            design_hash=spec.design_hash,
            salt=salt,
            fixed=today,
            commit=commit,
            reason=reason.strip(),
            design=spec.design_record(),
        )
        current[spec.key] = entry
        past.append(LockEntry(**{**asdict(entry), "design": None}))
        made.append(entry)
    payload = {
        "format": FORMAT,
        "claims": {k: {f: v for f, v in asdict(e).items() if f != "key"} for k, e in sorted(current.items())},
        "history": [{f: v for f, v in asdict(h).items() if f != "design"} for h in past],
    }
    _path(directory).write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return made
