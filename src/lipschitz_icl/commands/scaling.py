"""``lipschitz-icl scaling``: the w* law of Theorem 3.4 for one class and dimension (registry:
``thm34.window-law``).

Keys: ``alpha_derived``, ``C_derived`` (from ``lipschitz_icl/derivations/window_law.py``), ``alpha_measured`` (local
slope of the exact ``w*`` between the two largest grid points), ``ratio_trend`` (``w*_exact /
(C rho^alpha)`` at the three largest grid points), ``next_order_trend`` (the derived next-order term
there), ``n_max`` (the grid is extended past 1e14 while that term is above half the margin),
``resolution`` (the exponent shift the rule refutes), ``decision``, ``verdict``.
Exit 0 holds, 1 fails, 3 inconclusive (e.g. not yet in the asymptotic range within the reachable n).
With ``--kernel EXPR`` or ``--task cosine|mix:...`` the regularity law of that prior
(:func:`lipschitz_icl.claims.regularity.kernel_scaling`; keys also ``gamma``, ``beta``).
The exact ``w*`` at the grid points are the pieces of a sweep on ``--scheduler``
(:mod:`lipschitz_icl.runtime.sweep`; default ``auto``), with the same numbers on any scheduler.
"""

from __future__ import annotations

from lipschitz_icl.validation import ParameterError, check_int

NAME = "scaling"
HELP = "check the w* law of Theorem 3.4 (exponent and constant) against the exact w*"


def add_arguments(parser) -> None:
    from lipschitz_icl.commands._options import integer
    from lipschitz_icl.commands._zonal import add_frequency_argument
    from lipschitz_icl.runtime import sweep

    parser.add_argument(
        "--task",
        default=None,
        help="task class: affine, relu (Theorem 3.4 law), or cosine, "
        "mix:NAME=WEIGHT,... (regularity law); not with --kernel",
    )
    parser.add_argument("--d", required=True, type=integer("d", 2, 64), help="dimension, 2 <= d <= 64")
    parser.add_argument(
        "--kernel",
        default=None,
        help="covariance K(t) as an expression in t and d: the "
        "regularity law of that prior (lipschitz_icl.claims.regularity)",
    )
    add_frequency_argument(parser)
    parser.add_argument("--kernel-file", default=None, help="TOML file with 'kernel' = EXPR and optional [constants]")
    sweep.add_scheduler_argument(parser)


def run(args):
    from lipschitz_icl.runtime import sweep

    d = check_int("d", args.d, minimum=2, maximum=64)
    with sweep.session(args.scheduler):
        return _scaling(args, d)


def _scaling(args, d: int):
    from lipschitz_icl.decision import exit_code
    from lipschitz_icl.derivations.window_law import TASKS as LAW_TASKS  # the classes Theorem 3.4's law is derived for
    from lipschitz_icl.gates.registry import ClaimCase, find

    if args.kernel is not None or args.kernel_file is not None or args.task not in LAW_TASKS:
        from lipschitz_icl.commands._zonal import zonal_scaling

        return zonal_scaling(args, d)
    if args.frequency is not None:
        raise ParameterError("frequency", f"unset for the {' and '.join(LAW_TASKS)} classes", args.frequency)
    # the registry's window-law claim at this (task, d): its design (grid, margin, extension) and judgement
    ev = ClaimCase(find("thm34.window-law"), (("d", d), ("task", args.task)), None).run()
    alpha_q, c_q = ev.quantities[1], ev.quantities[2]
    payload = {
        "alpha_derived": alpha_q.theory,
        "C_derived": c_q.theory,
        "alpha_measured": alpha_q.measured,
        "C_measured": c_q.measured,
        "ratio_trend": ev.extra["ratio"][-3:],
        "next_order_trend": ev.extra["next_order"][-3:],
        "n_max": ev.extra["n_grid"][-1],
        "resolution": ev.resolution,
        "decision": ev.decision,
        "verdict": ev.verdict,
        "alternatives": [
            {"name": a["name"], "verdict": a["verdict"], "ruled_out": a["ruled_out"]} for a in ev.alternatives
        ],
    }
    return payload, exit_code(ev.verdict)
