"""The prover: a statement on a whole domain proved, refuted with a certified counterexample, or undecided.

===================  ===========================================================================================
``trusted``          the trusted base: each certified quantity with its enclosure function (one table)
``checker``          the proof checker: a certificate's verdict re-derived from its statement, without the search
``search``           branch and bound over the boxes of a domain; sharpest constants
``domain``           the ``[domain]`` of a statement: real intervals and integer ranges, split into boxes
``budget``           the wall-clock budget, enforced inside a box's evaluation
``certificate``      the certificate a proof writes
``pieces``           a claim's domain cut into pieces and end lemmas
===================  ===========================================================================================

The package re-exports :mod:`lipschitz_icl.prover.search` (``from lipschitz_icl.prover import prove``).
"""

from lipschitz_icl.prover import search
from lipschitz_icl.prover.search import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = search.__all__
