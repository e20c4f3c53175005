"""The prover: a statement on a whole domain proved, refuted with a certified counterexample, or undecided.

===================  ===========================================================================================
``trusted``          the trusted base: each certified quantity with its enclosure function (one table)
``checker``          the proof checker: a certificate's verdict re-derived from its statement, without the search
``search``           branch and bound over the boxes of a domain; sharpest constants
``witness``          the search's side of ``w_star``/``icl_error``: the ``w*`` proof a certificate carries
``domain``           the ``[domain]`` of a statement: real intervals and integer ranges, split into boxes
``budget``           the wall-clock budget, enforced inside a box's evaluation
``certificate``      the certificate a proof writes
``pieces``           a claim's domain cut into pieces and end lemmas
===================  ===========================================================================================

The package re-exports :mod:`lipschitz_icl.prover.search` (``from lipschitz_icl.prover import prove``), loaded
at the first use of one of its names: importing the checker alone (``from lipschitz_icl.prover import
checker``) loads no search code.
"""

import importlib
import importlib.util


def __getattr__(name: str):
    """A name of :mod:`lipschitz_icl.prover.search` (``__all__`` included), loaded on first use; a submodule's
    name is left to the import system (its lookup must not load the search)."""
    if (name.startswith("__") and name != "__all__") or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    search = importlib.import_module("lipschitz_icl.prover.search")
    if name == "__all__":
        return search.__all__
    if name in search.__all__:
        return getattr(search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
