"""Arguments shared by the problem-based commands: ``--task --d --n --L --sigma --seed`` (typed by
:mod:`lipschitz_icl.commands._options`; the zonal ones by :mod:`lipschitz_icl.commands._zonal`)."""

from __future__ import annotations

from lipschitz_icl.commands._options import integer, real
from lipschitz_icl.problem import L_RANGE, MAX_D, MAX_N, SIGMA_MAX, Problem, make_problem

MAX_SEED = 2**63 - 1


def add_problem_arguments(parser, tasks, zonal: bool = False) -> None:
    """``--task`` (one of ``tasks``), ``--d``, ``--n``, ``--L``, ``--sigma``, ``--seed``; with ``zonal``
    also ``mix:`` tasks, ``--frequency``, ``--kernel`` and ``--kernel-file`` (:mod:`._zonal`)."""
    if zonal:
        from lipschitz_icl.commands._zonal import add_zonal_arguments  # SymPy only for the zonal commands

        add_zonal_arguments(parser, tasks)
    else:
        parser.add_argument("--task", required=True, choices=tasks, help="task class")
    parser.add_argument("--d", required=True, type=integer("d", 2, MAX_D), help=f"dimension, 2 <= d <= {MAX_D}")
    parser.add_argument(
        "--n",
        required=True,
        type=integer("n", 1, MAX_N),
        help="context size, an integer 1 <= n <= 1e150 (1e14 notation accepted; "
        "each method narrows this, see --method)",
    )
    parser.add_argument(
        "--L",
        required=not zonal,
        type=real("L", minimum=L_RANGE[0], maximum=L_RANGE[1]),
        help=f"Lipschitz bound, {L_RANGE[0]:g} <= L <= {L_RANGE[1]:g}",
    )
    parser.add_argument(
        "--sigma",
        required=True,
        type=real("sigma", minimum=0.0, maximum=SIGMA_MAX),
        help=f"label noise, 0 <= sigma <= {SIGMA_MAX:g}",
    )
    parser.add_argument(
        "--seed", type=integer("seed", 0, MAX_SEED), default=0, help="random seed, 0 <= seed < 2^63 (default 0)"
    )


def problem_from_args(args) -> Problem:
    """Validated :class:`~lipschitz_icl.problem.Problem` from the parsed arguments."""
    if getattr(args, "zonal_tasks", None) is not None:
        from lipschitz_icl.commands._zonal import zonal_problem_from_args

        return zonal_problem_from_args(args)
    return make_problem(args.task, args.d, args.n, args.L, args.sigma)
