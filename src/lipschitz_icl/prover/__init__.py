"""The prover: a statement on a whole domain proved, refuted with a certified counterexample, or undecided.

===================  ===========================================================================================
``search``           branch and bound over the boxes of a domain; sharpest constants
``domain``           the ``[domain]`` of a statement: real intervals and integer ranges, split into boxes
``enclosures``       the tail quantities as balls over a box
``loss_enclosures``  the loss quantities (``w_star``, ``icl_error``) as balls over a box
``pieces``           a claim's domain cut into pieces and end lemmas
``certificate``      the certificate a proof writes
``recheck``          the certificate re-verified without the search
===================  ===========================================================================================

The package re-exports :mod:`lipschitz_icl.prover.search` (``from lipschitz_icl.prover import prove``).
"""

from lipschitz_icl.prover import search
from lipschitz_icl.prover.search import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = search.__all__
