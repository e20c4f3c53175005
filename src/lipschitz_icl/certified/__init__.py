"""Certified enclosures in python-flint (FLINT/Arb) ball arithmetic: balls that provably hold the true value.

===============  ===============================================================================================
``arithmetic``   the working precision, exact balls, the ball of an interval, outward-rounded ends
``laws``         the sphere laws: cap probability, Beta laws of projections, binomial tails, ``Phi_d(w)``
``quadrature``   Gauss-Legendre panels with a certified (Bernstein-ellipse) error bound
``kernels``      the zonal kernel of every certified class: Gegenbauer coefficients and their tail bounds
``laplace``      the loss's Laplace-transform quadrature with every step certified, Taylor coefficients in ``w``
``loss``         the ICL loss of ``M = w I`` and its ``w``-derivatives as balls over boxes of ``w``, ``n``, ...
``wstar``        an interval proved to hold the global minimiser ``w*``; one-sided ``w*`` bounds (the search)
``wstar_proof``  the tests of a ``w*`` proof, and its check from the proof's hints alone (no search)
``window``       window-law bounds ``w* <= C Lambda^alpha`` (or ``>=``) over a range of ``n``
``linear``       the ICL error of the optimal linear attention, its closed form in ball arithmetic
===============  ===============================================================================================

The package re-exports :mod:`~lipschitz_icl.certified.arithmetic` and :mod:`~lipschitz_icl.certified.laws`
(light: python-flint only); the loss and ``w*`` are imported from their modules.
"""

from lipschitz_icl.certified import arithmetic, laws
from lipschitz_icl.certified.arithmetic import *  # noqa: F403 (the face re-exports its core module's __all__)
from lipschitz_icl.certified.laws import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = arithmetic.__all__ + laws.__all__
