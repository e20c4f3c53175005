"""The paper's claims: one measure module per group beside its registry file (``<group>.py`` and
``<group>.toml``, read by :mod:`lipschitz_icl.gates.registry`).  Each measure function returns an
:class:`~lipschitz_icl.gates.evidence.Outcome` whose ``decide`` applies a rule of :mod:`lipschitz_icl.decision`; a
module's ``__all__`` names its measure functions (and what other modules import from it).

``thm34``          Theorem 3.4, Lemma B.5 and the bias/variance parts
``thm35``          Theorem 3.5: generalisation to unseen L-Lipschitz tasks, the L mismatch
``linear``         linear attention cannot adapt
``thm44``          Theorem 4.4: the window learns the direction col(B) of low-rank tasks
``concentration``  the sphere concentration inequalities the proofs use
``lemmaB1``        Lemma B.1 and Eq. (4): the form trained full layers end in
``figures``        the paper's Figures 1, 3, 5, 6, 9 and Eq. (4)
``regularity``     the regularity law of zonal task priors (beyond the paper)
``loss_shape``     the shape of the ICL loss in ``w``, decided by proof: the noise part rises and the bias
                   part falls as ``w`` grows (Theorem 3.4's trade-off), each lies within a factor 2 of its
                   derived power of ``w``, where the bias part turns, and how ``w*`` follows ``L``
"""
