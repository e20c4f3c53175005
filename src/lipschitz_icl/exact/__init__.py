"""The ICL loss of ``M = w I`` at any context size ``n`` (1 to 1e150), by quadrature: no Monte Carlo.

==============  ================================================================================================
``route``       :func:`exact_loss`: which quadrature a task class takes (its ``exact_route``), the budget
``grids``       the Laplace-transform grids both quadratures integrate on
``quadrature``  the affine and relu classes: a dedicated quadrature of the kernel terms
``zonal``       any zonal prior: the Gegenbauer series of its kernel
==============  ================================================================================================

The package re-exports :mod:`lipschitz_icl.exact.route` (``from lipschitz_icl.exact import exact_loss``).
"""

from lipschitz_icl.exact import route
from lipschitz_icl.exact.route import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = route.__all__
