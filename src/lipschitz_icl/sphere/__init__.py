"""The unit sphere ``S^{d-1}`` and the concentration of points uniform on it.

==================  ==========================================================================================
``laws``            uniform points, the law of ``t = x . q``, ``Phi_d(w) = E exp(w t)`` and the tilted moments,
                    cap probabilities, a polar quadrature rule
``concentration``   exact tail laws of functionals of a uniform point (Beta, Binomial)
``inequalities``    the concentration bounds the paper's proofs cite, as stated
``tails``           a stated bound against the true tail at grid points; Monte Carlo tails
==================  ==========================================================================================

The package re-exports :mod:`lipschitz_icl.sphere.laws` (``from lipschitz_icl.sphere import log_phi``).
"""

from lipschitz_icl.sphere import laws
from lipschitz_icl.sphere.laws import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = laws.__all__
