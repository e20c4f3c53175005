"""The report's bibliography: the paper (with its version), the inequalities' sources, Arb/FLINT and the
libraries, from ``references.toml`` beside this module.

:func:`references` reads the entries; :func:`citations` gives the keys a text cites (an entry's ``match``
expressions on a claim's ``paper_ref`` or statement: ``Dasgupta-Gupta`` cites Dasgupta and Gupta's
paper); :func:`library_versions` the installed version of each software entry's package (from
``claims.json``'s provenance when the gate run recorded it, else read with :mod:`importlib.metadata` when
the report is built, and marked so), which the report prints where it cites the library (its provenance
line); the report lists only the entries it cites.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources

__all__ = [
    "Reference",
    "references",
    "paper_version",
    "citations",
    "library_versions",
    "flint_library_version",
    "PAPER_KEY",
]

PAPER_KEY = "collins2024"


@dataclass(frozen=True)
class Reference:
    key: str
    text: str
    match: tuple[str, ...]
    package: str = ""


@cache
def _data() -> dict:
    import tomllib

    return tomllib.loads(resources.files("lipschitz_icl.report").joinpath("references.toml").read_text("utf-8"))


@cache
def references() -> tuple[Reference, ...]:
    """Every entry of ``references.toml``, in its order."""
    return tuple(
        Reference(r["key"], r["text"], tuple(r.get("match", [])), r.get("package", "")) for r in _data()["reference"]
    )


def paper_version() -> str:
    """The version of the paper the registry follows, as ``references.toml`` states it."""
    return str(_data()["paper"]["version"])


def citations(*texts: str) -> list[str]:
    """The keys of the entries whose ``match`` expressions occur in any of ``texts`` (in the file's order)."""
    joined = " ".join(texts)
    return [r.key for r in references() if any(re.search(m, joined) for m in r.match)]


def library_versions(provenance: dict | None) -> dict[str, tuple[str, bool]]:
    """Package -> ``(version, read at report time)`` for every software entry (module docstring); a
    package that is not installed reads ``not installed``."""
    given: dict = provenance if isinstance(provenance, dict) else {}
    versions = given.get("versions")
    recorded: dict = versions if isinstance(versions, dict) else {}
    out = {}
    for ref in references():
        if not ref.package:
            continue
        value = recorded.get(ref.package) or (given.get("numpy") if ref.package == "numpy" else None)
        if isinstance(value, str) and value:
            out[ref.package] = (value, False)
            continue
        try:
            out[ref.package] = (metadata.version(ref.package), True)
        except metadata.PackageNotFoundError:
            out[ref.package] = ("not installed", True)
    return out


def flint_library_version() -> str:
    """The FLINT library (with Arb) python-flint is built on, as python-flint reports it (``""`` if not
    available)."""
    try:
        import flint
    except ImportError:
        return ""
    return str(getattr(flint, "__FLINT_VERSION__", ""))
