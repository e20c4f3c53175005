"""The estimators the claims stand on, one concept each (the claims in :mod:`lipschitz_icl.claims` judge them).

=====================  ==========================================================================================
``minimiser``          is ``w I`` a minimiser of the ICL loss: probe directions, scale moves, the sign rule
``loss_direction``     which way a loss part moves along ``w`` (exact quadrature)
``law_points``         points of the window and power laws
``linear_scale``       linear attention's scale by Monte Carlo
``window_errors``      the optimal softmax and linear errors along ``n``; the cost of a general ``M``
``pretraining``        the protocol that holds trained layers against theory
``trained_scale``      the scale of independently trained layers against a target
``lowrank``            low-rank tasks: ``P = B B^T``, moves inside and outside ``col(B)``, the ``d -> inf`` limit
``probes``             ``L``-Lipschitz probe tasks (Theorem 3.5)
``projection_lemma``   the Dasgupta-Gupta bounds as prover expressions, and the lemma at their ends
``circle``             attention on the circle (the paper's Figures 1 and 6)
=====================  ==========================================================================================
"""
