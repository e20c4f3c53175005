"""The paper's claims as evaluable objects: one module per section, each function returns an
:class:`~lipschitz_icl.evidence.Evidence` (theory vs measured, decision rule, verdict, false variants).

``thm34``  Theorem 3.4, Lemma B.5 and the bias/variance parts (CLAIMS.md section 3).
"""
