"""What a profile leaves out: the full profile's cases a run of another profile did not make.

The registry holds each claim's grid per profile and its replicates per profile
(:mod:`lipschitz_icl.gates.registry`).  For the run's profile, :func:`omissions` lists, claim by claim,
the grid points of the full profile the run did not reach (by the parameter values never run, else the
ids' last parts, e.g. ``d8k2``) and the replicates it did not draw; :func:`unrun_mentions` finds the
settings a claim's statement names that the run did not reach (a statement naming ``d8k2`` when only
``d3k1`` and ``d4k2`` were run), so the report says so beside the statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lipschitz_icl.gates import registry
from lipschitz_icl.report.scope import setting_text

__all__ = ["Omission", "omissions", "unrun_mentions", "unrun_phrase", "FULL"]

FULL = "full"


@dataclass
class Omission:
    """One claim's cases of the full profile that the run did not make."""

    key: str
    grid_points: int  # full-profile grid points not run
    values: dict = field(default_factory=dict)  # parameter -> values never run
    tails: list = field(default_factory=list)  # last id parts of grid points not run (when no value is new)
    replicates: tuple[int, int] | None = None  # (run's replicates, full profile's) when they differ

    def text(self) -> str:
        """One line, ASCII math: ``d = 8, 10, 16 (6 grid points); 1 of 10 replicates``."""
        parts = []
        if self.grid_points:
            if self.values:
                shown = "; ".join(setting_text(k, v) for k, v in self.values.items())
            else:
                shown = ", ".join(self.tails)
            parts.append(f"{shown} ({self.grid_points} grid point{'s' if self.grid_points != 1 else ''})")
        if self.replicates is not None:
            ran, full = self.replicates
            parts.append(f"{ran} of {full} replicates")
        return "; ".join(parts)


def _grid(spec, profile: str) -> dict[str, dict]:
    return {spec.id_pattern.format(**p): p for p in spec.grids.get(profile, ())}


def _tail(base_id: str) -> str:
    return "/".join(base_id.split("/")[2:]) or base_id


def omissions(profile: str, run_keys: set[str] | None = None) -> list[Omission]:
    """Per registry claim (those in ``run_keys`` when given), the full profile's grid points and
    replicates that ``profile`` does not make; claims with nothing left out are not listed."""
    out: list[Omission] = []
    if profile == FULL or profile not in registry.PROFILES:
        return out
    for spec in registry.load():
        if run_keys is not None and spec.key not in run_keys:
            continue
        ran, full = _grid(spec, profile), _grid(spec, FULL)
        missing = [i for i in full if i not in ran]
        values: dict[str, list] = {}
        for base_id in missing:
            for name, value in full[base_id].items():
                seen = {str(p.get(name)) for p in ran.values()}
                if str(value) not in seen and value not in values.setdefault(name, []):
                    values[name].append(value)
        values = {k: v for k, v in values.items() if v}
        replicates = None
        if spec.stochastic and spec.seeds.get(profile) != spec.seeds.get(FULL):
            replicates = (int(spec.seeds.get(profile, 0)), int(spec.seeds.get(FULL, 0)))
        if missing or replicates:
            tails = [] if values else [_tail(i) for i in missing]
            out.append(Omission(spec.key, len(missing), values, tails, replicates))
    return out


def unrun_phrase(unrun: list[str]) -> str:
    """How the report says that a statement names settings the run did not reach (:func:`unrun_mentions`):
    ``"its statement names d8k2, which this run's profile does not reach"``; ``""`` for none."""
    if not unrun:
        return ""
    return "its statement names " + ", ".join(unrun) + ", which this run's profile does not reach"


def unrun_mentions(key: str, statement: str, run_ids: set[str]) -> list[str]:
    """The last id parts of the full profile's grid points of claim ``key`` that ``statement`` names
    (as a word) and that no run record of this claim reached (``run_ids``: the base ids run, of every claim; a
    part that another claim's run reached, say ``thm44/direction/.../d8k2``, does not count for this one)."""
    try:
        spec = registry.find(key)
    except KeyError:
        return []
    full = _grid(spec, FULL)
    heads = {"/".join(base_id.split("/")[:2]) + "/" for base_id in full}
    ran_tails = {_tail(i) for i in run_ids if any(i.startswith(head) for head in heads)}
    found = []
    for base_id in full:
        for part in _tail(base_id).split("/"):
            if part in found or any(part in t.split("/") for t in ran_tails):
                continue
            if re.search(rf"(?<![\w-]){re.escape(part)}(?![\w-])", statement):
                found.append(part)
    return found
