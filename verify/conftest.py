"""The claim gates: ``pytest verify/`` checks the paper's claims (CLAIMS.md section 3).

Each gate file checks one claim group and asserts its verdict; gates land with the claims' issues.
"""
