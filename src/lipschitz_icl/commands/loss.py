"""``lipschitz-icl loss``: the ICL loss at ``M = w I`` and its bias and noise parts (CLI contract).

JSON keys: ``loss``, ``ci_low``, ``ci_high``, ``bias``, ``noise`` (plus standard errors, ``method``).
"""

from __future__ import annotations

from ..loss import METHODS, icl_loss
from ..tasks import TASK_NAMES
from ._common import add_problem_arguments, problem_from_args

NAME = "loss"
HELP = "ICL loss at M = w I with its bias and noise parts"


def add_arguments(parser) -> None:
    add_problem_arguments(parser, TASK_NAMES[:3], zonal=True)
    parser.add_argument("--w", required=True, type=float, help="attention scale w (M = w I), finite")
    parser.add_argument("--method", choices=METHODS, default="averaged",
                        help="averaged (task-averaged Monte Carlo, default), naive, asymptotic, exact")
    parser.add_argument("--contexts", type=int, default=20000,
                        help="Monte Carlo: number of sampled prompts (default 20000)")


def run(args):
    problem = problem_from_args(args)
    result = icl_loss(problem, args.w, method=args.method, contexts=args.contexts, rng=args.seed)
    return result.as_dict(), 0
