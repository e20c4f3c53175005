"""``lipschitz-icl wstar``: the optimal window ``w*`` for ``M = w I`` (CLI contract).

JSON keys: ``w_star``, ``ci_low``, ``ci_high``, ``loss``, ``method`` (plus diagnostics).  Supported
ranges: ``n >= 2`` (at ``n = 1`` the loss does not depend on ``w``), ``sigma > 0``; ``mc`` ``n <= 1e7``
within a memory and work budget (``contexts * n``); ``exact``/``asymptotic`` ``n <= 1e150``.  Any
``L/sigma`` the option ranges allow (``1e-12`` to ``1e12``); ``w*`` grows like
``(n L^2/sigma^2)^(2/(d+2))``, so extreme ratios put it outside the search range (exit 3).  The search covers ``1e-3 <= w <= 1e8``: a ``w*`` at an end of
it is reported with exit code 3 (inconclusive) and the open interval ``(0, end]`` or ``[end, inf)``;
so is an ``mc`` interval that did not reach ``--rel-precision``.
"""

from __future__ import annotations

from ..optimum import REL_PRECISION_RANGE, WSTAR_METHODS, wstar
from ..tasks import ROTATION_INVARIANT
from ._common import add_problem_arguments, problem_from_args, real

NAME = "wstar"
HELP = "optimal attention window w* for M = w I (Monte Carlo, asymptotic or exact)"


def add_arguments(parser) -> None:
    add_problem_arguments(parser, ROTATION_INVARIANT, zonal=True)
    parser.add_argument("--method", choices=WSTAR_METHODS, default="mc",
                        help="mc (default; 95%% interval; n <= 1e7 within a memory/work budget), asymptotic "
                             "(large n), exact (quadrature; n <= 1e150); w* searched in [1e-3, 1e8]: exit 3 with an "
                             "open interval when it ends at a bound (extreme n L^2/sigma^2)")
    low, high = REL_PRECISION_RANGE
    parser.add_argument("--rel-precision", type=real("rel_precision", minimum=low, maximum=high), default=0.005,
                        help=f"mc: target half-width of the 95%% interval relative to w*, in [{low:g}, {high:g}] "
                             "(default 0.005; exit 3 when not reached)")


def run(args):
    problem = problem_from_args(args)
    kwargs = {"rng": args.seed, "rel_precision": args.rel_precision} if args.method == "mc" else {}
    result = wstar(problem, args.method, **kwargs)
    return result.as_dict(), 3 if result.inconclusive else 0
