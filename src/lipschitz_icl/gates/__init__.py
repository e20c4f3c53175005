"""The gates: the claims registry and its design lock, the evidence a claim leaves, and the pytest plugin.

=================  =============================================================================================
``registry``       the claims registry as data (one TOML file per claim group): statement, scope, rule, margin,
                   design, resolutions, alternatives; judges a measure function's outcome into evidence
``lock``           the design lock: a hash and seed salt per confirmatory design
``evidence``       the record of one claim case (quantities, verdict, resolutions, alternatives, figure)
``proof_outcome``  a claim decided by proof, as a claim's outcome
``variants``       user bound variants (TOML): checked at grid points or proved on a domain
``pytest_plugin``  the ``verify/`` gates: one test per claim case, ``reports/claims.json``
=================  =============================================================================================
"""
