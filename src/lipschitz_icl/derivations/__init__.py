"""SymPy derivations that produce the project's theoretical numbers.

Each module derives one result symbolically, exposes it as plain functions (usable without SymPy at
call time where possible) and is tested in ``tests/``: the symbolic result is also spot-checked
numerically against the quantity it claims to describe.
"""
