"""Which way a part of the exact ICL loss moves along the window ``w``: the ``sign`` rule on the smallest
consecutive change of the bias or the noise part of :func:`lipschitz_icl.exact.route.exact_loss` along a grid
of ``w``, each change's interval widened by the quadrature's stated ``abs_error`` of both ends."""

from __future__ import annotations

from lipschitz_icl import decision
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.problem import Problem

__all__ = ["part_direction"]


def part_direction(problem: Problem, w_grid, part: str, expected: int) -> decision.Decision:
    """``sign`` (+1) on ``min_i expected (P(w_{i+1}) - P(w_i)) +- (e_i + e_{i+1})``, ``P`` the ``part``
    (``"bias"`` or ``"noise"``) of the exact loss of ``problem`` and ``e_i`` its ``abs_error`` at ``w_i``:
    holds when the part moves in the ``expected`` direction (+1 rises, -1 falls) at every step beyond the
    quadrature's error; inconclusive if any quadrature did not converge."""
    estimates = [exact_loss(problem, w) for w in w_grid]
    if not all(e.info.get("converged", False) for e in estimates):
        return decision.Decision("sign", "inconclusive", f"{part}: an exact quadrature did not converge")
    values = [getattr(e, part).value for e in estimates]
    errors = [getattr(e, part).abs_error for e in estimates]
    changes = [
        (expected * (b - a) - ea - eb, expected * (b - a) + ea + eb)
        for a, b, ea, eb in zip(values, values[1:], errors, errors[1:])
    ]
    return decision.sign(*min(changes), +1)
