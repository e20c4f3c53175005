"""The ICL loss of an attention layer and its bias and noise parts, by Monte Carlo or a large-``n`` formula.

====================  ===============================================================================================
``estimators``        :func:`icl_loss` and its methods: ``naive`` (the reference), ``averaged`` (task and noise
                      integrated out exactly), and the routes to ``asymptotic`` and ``exact``
``isotropic``         the reduced form for ``M = w I`` (the inner products with the query), common random numbers
``arccosine``         the reduced form of the arc-cosine (relu) class with the task's direction averaged exactly
``control_variates``  weighted moments of the reduced draws with exact means, coefficients cross-fitted
``pairwise``          the Monte Carlo of a prior given by its kernel alone (pairs of context points)
``fixed_draw``        one draw of prompts kept for many attention matrices, and the scale search on it
``asymptotic``        the large-``n`` loss with its ``1/n`` correction, inside its stated regime (``rho <= 0.05``)
====================  ===============================================================================================

The package re-exports :mod:`lipschitz_icl.loss.estimators` (``from lipschitz_icl.loss import icl_loss``).
"""

from lipschitz_icl.loss import estimators
from lipschitz_icl.loss.estimators import *  # noqa: F403 (the face re-exports its core module's __all__)

__all__ = estimators.__all__
