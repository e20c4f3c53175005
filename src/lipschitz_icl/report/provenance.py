"""Where the numbers come from: commit, date, profile, runtime, versions, seeds.

``claims.json`` carries ``provenance`` (``commit``, ``dirty``, ``date``, ``profile``, ``seconds``,
``python``, ``numpy``, ``platform``, ``workers``) once the gate run writes it; older files do not.  Then
the report derives what it can and says so: the commit of the ``lipschitz-icl`` checkout the report is
built from (``git rev-parse`` with hooks and fsmonitor off, read-only), the file's modification time
as the date, the top-level ``profile`` and ``seconds``, and this interpreter's Python and NumPy versions
-- each marked ``derived at report time``.  Seeds: the replicate indices the records carry, and the
design salts of ``design_history`` where present.
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Provenance", "provenance", "run_rows"]

GIT_TIMEOUT = 10


@dataclass
class Provenance:
    """What the report prints about where its numbers come from (``derived`` names the fields read at
    report time rather than from ``claims.json``)."""

    commit: str = "unknown"
    dirty: bool | None = None
    date: str = "unknown"
    profile: str = "?"
    seconds: float | None = None
    python: str = ""
    numpy: str = ""
    platform: str = ""
    workers: int | None = None
    seeds: str = ""
    salts: list = field(default_factory=list)
    derived: list = field(default_factory=list)

    @property
    def short_commit(self) -> str:
        return self.commit[:7] if self.commit not in ("", "unknown") else "unknown"


def _git(args: list[str], cwd: Path) -> str | None:
    cmd = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-C", str(cwd), *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _checkout_commit() -> tuple[str | None, bool | None]:
    """The commit of the checkout this package runs from, and whether its tracked files differ."""
    here = Path(__file__).resolve().parent
    commit = _git(["rev-parse", "HEAD"], here)
    if commit is None:
        return None, None
    status = _git(["status", "--porcelain", "--untracked-files=no"], here)
    return commit, (None if status is None else bool(status))


def _seeds(claims: list) -> str:
    seeds = sorted({r["seed"] for r in claims if isinstance(r.get("seed"), int)})
    if not seeds:
        return "no stochastic cases"
    shown = (
        f"{seeds[0]}"
        if len(seeds) == 1
        else (
            f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))
        )
    )
    return f"replicate {shown} of each stochastic case (child of the SeedSequence of the SHA-256 of its id)"


def provenance(data: dict, claims_path=None) -> Provenance:
    """The provenance of ``data`` (module docstring)."""
    raw = data.get("provenance")
    given = raw if isinstance(raw, dict) else {}
    out = Provenance()
    for name in ("commit", "date", "profile", "python", "numpy", "platform"):
        if isinstance(given.get(name), str) and given[name]:
            setattr(out, name, given[name])
    if isinstance(given.get("dirty"), bool):
        out.dirty = given["dirty"]
    for name in ("seconds", "workers"):
        if isinstance(given.get(name), (int, float)) and not isinstance(given.get(name), bool):
            setattr(out, name, given[name])
    if out.commit == "unknown":
        commit, dirty = _checkout_commit()
        if commit:
            out.commit, out.dirty = commit, dirty
            out.derived.append("commit")
    if out.date == "unknown" and claims_path is not None:
        try:
            stamp = Path(claims_path).stat().st_mtime
            out.date = dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.derived.append("date")
        except OSError:
            pass
    if out.profile == "?" and isinstance(data.get("profile"), str):
        out.profile = data["profile"]
    if out.seconds is None and isinstance(data.get("seconds"), (int, float)):
        out.seconds = float(data["seconds"])
    if not out.python:
        out.python, out.numpy, out.platform = platform.python_version(), np.__version__, platform.platform(terse=True)
        out.derived.extend(["python", "numpy", "platform"])
    out.seeds = _seeds(data.get("claims", []))
    history = data.get("design_history")
    if isinstance(history, list):
        out.salts = [h for h in history if isinstance(h, dict)]
    return out


def run_rows(data: dict) -> list[dict]:
    """The runs merged into ``claims.json`` (``pytest verify/ -k ...`` merging a subset): one entry per run of
    the top-level ``runs`` list (``id`` and what else it records: ``date``, ``commit``, ``profile``,
    ``selection``, ``seconds``), with the number of records that name it (``run``); records naming a run
    the list lacks are listed under that id.  Empty when no record carries a ``run``."""
    claims = [r for r in data.get("claims", []) if isinstance(r, dict)]
    counts: dict[str, int] = {}
    for r in claims:
        if isinstance(r.get("run"), str):
            counts[r["run"]] = counts.get(r["run"], 0) + 1
    runs = [r for r in data.get("runs", []) if isinstance(r, dict) and isinstance(r.get("id"), str)]
    if not counts and not runs:
        return []
    out = []
    for run in runs:
        described = "; ".join(
            f"{name} {run[name]}" for name in ("date", "commit", "profile", "selection", "seconds") if name in run
        )
        out.append({"id": run["id"], "text": described, "records": counts.pop(run["id"], 0)})
    for run_id, n in counts.items():
        out.append({"id": run_id, "text": "not in the file's runs list", "records": n})
    return out
