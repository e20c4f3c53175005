"""Proof certificates: the partition a proof used, each box's enclosures and the rule that decided it.

A certificate is one JSON object::

    {"format": "lipschitz-icl prove certificate", "version": 1,
     "statement": {"quantity", "task", "relation", "bound", "constants", "free", "domain"},
     "precision_bits": 128,
     "sharpest": null | {"name", "low", "high", "proved_at", "refuted_at", ...},
     "parts": [ {"constants": {...}, "verdict": "proved" | "refuted" | "undecided",
                 "roots": [[node, ...], ...]           (proved, undecided: one preorder list per root box)
                 "counterexample": {"params", "quantity", "bound", "rule"}   (refuted)} ]}

Each root's tree is a list of nodes in preorder: a node holds its ``box`` (parameter -> ``[lo, hi]``,
doubles written exactly) and either ``split`` (``{"param", "at"}``), then followed by the nodes of its
lower half and of its upper half (a real range ``[lo, at]``, ``[at, hi]``; an integer range ``{lo..at}``,
``{at+1..hi}``), or a leaf ``decision`` with its ``rule`` and the ``quantity`` and ``bound`` enclosures
``[low, high]`` (outward-rounded doubles).  A flat list keeps deep partitions (boxes halved toward an end
hundreds of times) free of nesting limits.  The domain's root boxes are
:meth:`lipschitz_icl.prover.domain.Domain.roots` in order.  A plain prove has one part; a sharpest constant has
two (proved at one end, refuted at the other).  :mod:`lipschitz_icl.prover.recheck` re-verifies a certificate
without the search code; :func:`write` never overwrites a file unless ``force``.
"""

from __future__ import annotations

import json
from pathlib import Path

from lipschitz_icl.validation import ParameterError
from lipschitz_icl.writefile import check_target, write_file

__all__ = ["FORMAT", "VERSION", "build", "check_path", "write"]

FORMAT = "lipschitz-icl prove certificate"
VERSION = 1


def build(statement, parts: list, precision_bits: int, sharpest: dict | None = None) -> dict:
    """The certificate of ``parts`` (each a dict as in the module docstring) for ``statement``."""
    quantity = statement.quantity
    free = sorted(set(statement.bound.names) - set(quantity.params) - set(statement.constants) - {"pi"})
    return {
        "format": FORMAT,
        "version": VERSION,
        "statement": {
            "quantity": quantity.name,
            "task": getattr(quantity, "task", None),
            "relation": statement.relation,
            "bound": statement.bound.text,
            "constants": dict(statement.constants),
            "free": free,
            "domain": statement.domain.to_dict(),
        },
        "precision_bits": precision_bits,
        "sharpest": sharpest,
        "parts": parts,
    }


def check_path(path, *, force: bool = False) -> None:
    """Refuse, before a proof starts, a ``--certificate`` path :func:`write` would refuse
    (:func:`lipschitz_icl.writefile.check_target`)."""
    check_target(path, force=force, option="certificate")


def write(certificate: dict, path, *, force: bool = False) -> Path:
    """Write ``certificate`` to ``path`` (JSON) by :func:`lipschitz_icl.writefile.write_file`: atomically, never
    through a symbolic link (with ``force`` a link is replaced itself, never its target), an existing file
    (a link, dangling or not, counts) kept unless ``force``."""
    text = json.dumps(certificate, allow_nan=False)
    try:
        return write_file(path, text, force=force, option="certificate")
    except OSError as exc:
        raise ParameterError("certificate", f"a writable path ({exc.strerror or exc})", str(path)) from None
