"""Arguments shared by the problem-based commands: ``--task --d --n --L --sigma --seed``."""

from __future__ import annotations

from ..problem import Problem, make_problem


def add_problem_arguments(parser, tasks, zonal: bool = False) -> None:
    """``--task`` (one of ``tasks``), ``--d``, ``--n``, ``--L``, ``--sigma``, ``--seed``; with ``zonal``
    also ``mix:`` tasks, ``--frequency``, ``--kernel`` and ``--kernel-file`` (:mod:`._zonal`)."""
    if zonal:
        from ._zonal import add_zonal_arguments
        add_zonal_arguments(parser, tasks)
    else:
        parser.add_argument("--task", required=True, choices=tasks, help="task class")
    parser.add_argument("--d", required=True, type=int, help="dimension d >= 2")
    parser.add_argument("--n", required=True, type=float,
                        help="context size n >= 1 (integral; 1e14 notation accepted)")
    parser.add_argument("--L", required=not zonal, type=float, help="Lipschitz bound L > 0")
    parser.add_argument("--sigma", required=True, type=float, help="label noise sigma >= 0")
    parser.add_argument("--seed", type=int, default=0, help="random seed (non-negative; default 0)")


def problem_from_args(args) -> Problem:
    """Validated :class:`~lipschitz_icl.problem.Problem` from the parsed arguments."""
    if getattr(args, "zonal_tasks", None) is not None:
        from ._zonal import zonal_problem_from_args
        return zonal_problem_from_args(args)
    return make_problem(args.task, args.d, args.n, args.L, args.sigma)
