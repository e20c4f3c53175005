"""``lipschitz-icl wstar``: the optimal window ``w*`` for ``M = w I`` (CLI contract).

JSON keys: ``w_star``, ``ci_low``, ``ci_high``, ``loss``, ``method`` (plus diagnostics).
"""

from __future__ import annotations

from ..optimum import WSTAR_METHODS, wstar
from ..tasks import ROTATION_INVARIANT
from ._common import add_problem_arguments, problem_from_args

NAME = "wstar"
HELP = "optimal attention window w* for M = w I (Monte Carlo, asymptotic or exact)"


def add_arguments(parser) -> None:
    add_problem_arguments(parser, ROTATION_INVARIANT, zonal=True)
    parser.add_argument("--method", choices=WSTAR_METHODS, default="mc",
                        help="mc (default; 95%% interval), asymptotic (large n), exact (quadrature)")
    parser.add_argument("--rel-precision", type=float, default=0.005,
                        help="mc: target half-width of the 95%% interval relative to w* (default 0.005)")


def run(args):
    problem = problem_from_args(args)
    kwargs = {"rng": args.seed, "rel_precision": args.rel_precision} if args.method == "mc" else {}
    result = wstar(problem, args.method, **kwargs)
    return result.as_dict(), 0
