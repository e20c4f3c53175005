"""The paper's claims: one measure module per group beside its registry file (``<group>.py`` and
``<group>.toml``, read by :mod:`lipschitz_icl.registry`).  Each measure function returns an
:class:`~lipschitz_icl.evidence.Evidence` decided by a rule of :mod:`lipschitz_icl.decision`.

``thm34``          Theorem 3.4, Lemma B.5 and the bias/variance parts
``thm35``          Theorem 3.5: generalisation to unseen L-Lipschitz tasks, the L mismatch
``linear``         linear attention cannot adapt
``thm44``          Theorem 4.4: the window learns the direction col(B) of low-rank tasks
``concentration``  the sphere concentration inequalities the proofs use
"""
