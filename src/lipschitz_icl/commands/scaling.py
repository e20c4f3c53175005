"""``lipschitz-icl scaling``: the w* law of Theorem 3.4 for one class and dimension (registry:
``thm34.window-law``).

Keys: ``alpha_derived``, ``C_derived`` (from ``derivations/window_law.py``), ``alpha_measured`` (local
slope of the exact ``w*`` between the two largest grid points), ``ratio_trend`` (``w*_exact /
(C rho^alpha)`` at the three largest grid points), ``next_order_trend`` (the derived next-order term
there), ``n_max`` (the grid is extended past 1e14 while that term is above half the margin),
``resolution`` (the exponent shift the rule refutes), ``decision``, ``verdict``.
Exit 0 holds, 1 fails, 3 inconclusive (e.g. not yet in the asymptotic range within the reachable n).
"""

from __future__ import annotations

from ..claims.thm34 import window_scaling
from ..validation import check_int
from ._common import integer

NAME = "scaling"
HELP = "check the w* law of Theorem 3.4 (exponent and constant) against the exact w*"
EXIT = {"holds": 0, "fails": 1, "inconclusive": 3}


def add_arguments(parser) -> None:
    parser.add_argument("--task", required=True, choices=("affine", "relu"), help="task class")
    parser.add_argument("--d", required=True, type=integer("d", 2, 64), help="dimension, 2 <= d <= 64")


def run(args):
    d = check_int("d", args.d, minimum=2, maximum=64)
    ev = window_scaling(args.task, d)
    alpha_q, c_q = ev.quantities[1], ev.quantities[2]
    payload = {"alpha_derived": alpha_q.theory, "C_derived": c_q.theory, "alpha_measured": alpha_q.measured,
               "C_measured": c_q.measured, "ratio_trend": ev.extra["ratio"][-3:],
               "next_order_trend": ev.extra["next_order"][-3:], "n_max": ev.extra["n_grid"][-1],
               "resolution": ev.resolution, "decision": ev.extra["decision"], "verdict": ev.verdict,
               "false_variants_refuted": f"{ev.power[0]}/{ev.power[1]}"}
    return payload, EXIT[ev.verdict]
