"""Proof certificates: the statement, the verdict claimed, and the hints that let the checker re-derive it.

A certificate is one JSON object, version 4 (:data:`lipschitz_icl.prover.checker.VERSION`; the checker
states the schema's limits and refuses anything else)::

    {"format": "lipschitz-icl prove certificate", "version": 4,
     "statement": {"quantity", "task", "relation", "bound", "constants", "sharpest", "domain"},
     "verdict": "proved" | "refuted" | "undecided",
     "precision_bits": 128,
     "sharpest": null | {"low", "high", "proved_at", "refuted_at"},
     "libraries": {"python-flint": "0.9.0", "FLINT": "3.6.0"},   (optional: what made it; the checker trusts none)
     "parts": [ {"constants": {} | {C: value},
                 "verdict": "proved" | "refuted" | "undecided",
                 "roots": [[node, ...], ...]                    (proved, undecided: one preorder list per root box)
                 "counterexample": {"params", "quantity", "bound"}   (refuted)} ]}

(a counterexample and a proved leaf of a *witnessed* quantity, ``w_star`` or ``icl_error``, add
``"witnesses": [{"point", "proof"}, ...]``: the ``w*`` proof at each point where the quantity is enclosed,
:mod:`lipschitz_icl.prover.witness`).

The statement is the whole claim: ``quantity relation bound`` at every point of ``domain`` (a real
parameter ``[lo, hi]``, an integer one a list of ``[from, to]`` pieces; the root boxes are the product of
the pieces in the domain's order) with the statement's ``constants``; ``sharpest`` names the constant
whose sharpest value is certified (else null).  A part's ``constants`` hold only that constant's value
at which the part is decided (``{}`` for a plain statement): every other constant is the statement's.

Each root's tree is a list of nodes in preorder: a node holds its ``box`` (parameter -> ``[lo, hi]``,
doubles written exactly) and either ``split`` (``{"param", "at"}``), then followed by the nodes of its
lower half and of its upper half (a real range ``[lo, at]``, ``[at, hi]``; an integer range ``{lo..at}``,
``{at+1..hi}``), or a leaf ``decision`` (``proved`` or ``undecided``, the latter with its ``reason``)
with the ``quantity`` and ``bound`` enclosures ``[low, high]`` (outward-rounded doubles; null where a
leaf has none, or an end is beyond the double range).  A flat list keeps deep partitions (boxes halved
toward an end hundreds of times) free of nesting limits.  A witness is a hint like the cover: the checker
checks each ``w*`` proof (:func:`lipschitz_icl.certified.wstar_proof.verify`) and trusts none.  A plain
statement has one part; a sharpest constant has two (proved at one end, refuted at the other), or the one undecided end.
:mod:`lipschitz_icl.prover.checker` re-derives the verdict from the statement without the search;
:func:`write` never overwrites a file unless ``force``.
"""

from __future__ import annotations

import json
from pathlib import Path

from lipschitz_icl.prover.checker import FORMAT, VERSION
from lipschitz_icl.validation import ParameterError
from lipschitz_icl.writefile import check_target, write_file

__all__ = ["FORMAT", "VERSION", "build", "libraries", "check_path", "write"]


def build(statement, parts: list, *, verdict: str, precision_bits: int, sharpest: dict | None = None) -> dict:
    """The certificate of ``parts`` (each a dict as in the module docstring) for ``statement`` (a
    :class:`lipschitz_icl.prover.search.Statement`), claiming ``verdict``; ``sharpest`` is the certified
    interval ``{"low", "high", "proved_at", "refuted_at"}`` of a sharpest constant; ``libraries``: the
    ball-arithmetic libraries that made it (:func:`libraries`)."""
    quantity = statement.quantity
    return {
        "format": FORMAT,
        "version": VERSION,
        "statement": {
            "quantity": quantity.name,
            "task": quantity.task,
            "relation": statement.relation,
            "bound": statement.bound.text,
            "constants": {k: v for k, v in statement.constants.items() if k != statement.sharpest},
            "sharpest": statement.sharpest,
            "domain": statement.domain.to_dict(),
        },
        "verdict": verdict,
        "precision_bits": precision_bits,
        "sharpest": sharpest,
        "libraries": libraries(),
        "parts": parts,
    }


def libraries() -> dict:
    """``{"python-flint": version, "FLINT": version}``: the python-flint package and the FLINT library (with Arb)
    it is built on, as python-flint reports them."""
    import flint

    return {"python-flint": str(flint.__version__), "FLINT": str(getattr(flint, "__FLINT_VERSION__", "unknown"))}


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
