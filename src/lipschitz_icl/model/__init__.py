"""The attention layer and what trains it.

=============  ================================================================================================
``attention``  softmax and linear attention in the ``M``-form; the full ``(W_K, W_Q, W_V)`` layer on tokens
               ``[x; y]``
``geometry``   the shape of an attention matrix: scale, anisotropy, the representation error ``rho(M, B)``
``train``      the NumPy trainer (analytic gradients, Adam/SGD) of the ``M``-form or the full layer
=============  ================================================================================================
"""
