"""``lipschitz-icl wstar``: the optimal window ``w*`` for ``M = w I`` (CLI contract).

JSON keys: ``w_star``, ``ci_low``, ``ci_high``, ``loss``, ``method`` (plus diagnostics).  Supported
ranges: ``n >= 2`` (at ``n = 1`` the loss does not depend on ``w``), ``sigma > 0``; ``mc`` ``n <= 1e7``
within a memory budget and the work budget of a command (:mod:`lipschitz_icl.budget`: the contexts of its
search are capped within it, exit 3 when that misses ``--rel-precision``); ``exact``/``asymptotic``
``n <= 1e150``, ``asymptotic`` only inside its regime at its ``w*`` (:mod:`lipschitz_icl.loss.asymptotic`;
outside: exit 2 on ``--method``, use ``exact``; inside, JSON ``regime`` is its ``rho`` and the interval carries
the model's error).  Any
``L/sigma`` the option ranges allow (``1e-12`` to ``1e12``); ``w*`` grows like
``(n L^2/sigma^2)^(2/(d+2))``, so extreme ratios put it outside the search range (exit 3).  The search covers ``1e-3
<= w <= 1e8``: a ``w*`` at an end of
it is reported with exit code 3 (inconclusive) and the open interval ``(0, end]`` or ``[end, inf)``;
so is an ``mc`` interval that did not reach ``--rel-precision``.

``--method certified`` (:mod:`lipschitz_icl.certified.wstar`; the classes of ``loss --method certified``):
``w_star_low``/``w_star_high`` (also ``ci_low``/``ci_high``) are proved to hold every global minimiser over
the search range, with ``loss_low``/``loss_high`` the minimum loss; exit 3 when the proof did not close
(``reason``, e.g. the command's budget of 60 CPU seconds, :data:`lipschitz_icl.budget.COMMAND_SECONDS`, spent;
then the minimiser interval is ``[0, inf)`` and the loss interval what is certain:
``[sigma^2/n, L(w)]`` at the best window evaluated, never a point) or the minimiser is at an end of the
range; refused up front (exit 2) when one evaluation near the guess is beyond the certified budget.
"""

from __future__ import annotations

NAME = "wstar"
HELP = "optimal attention window w* for M = w I (Monte Carlo, asymptotic, exact or certified)"


def add_arguments(parser) -> None:
    from lipschitz_icl.commands._common import add_problem_arguments
    from lipschitz_icl.commands._options import real
    from lipschitz_icl.optimum import REL_PRECISION_RANGE, WSTAR_METHODS
    from lipschitz_icl.tasks.registry import task_names

    add_problem_arguments(parser, task_names(rotation_invariant=True), zonal=True)
    parser.add_argument(
        "--method",
        choices=WSTAR_METHODS + ("certified",),
        default="mc",
        help="mc (default; 95%% interval; n <= 1e7 within a memory/work budget), asymptotic "
        "(large n), exact (quadrature; n <= 1e150), certified (an interval proved to hold the "
        "minimiser, ball arithmetic; tens of seconds to minutes); w* searched in [1e-3, 1e8]: exit "
        "3 with an open interval when it ends at a bound (extreme n L^2/sigma^2)",
    )
    low, high = REL_PRECISION_RANGE
    parser.add_argument(
        "--rel-precision",
        type=real("rel_precision", minimum=low, maximum=high),
        default=0.005,
        help=f"mc: target half-width of the 95%% interval relative to w*, in [{low:g}, {high:g}] "
        "(default 0.005; exit 3 when not reached)",
    )


def run(args):
    from lipschitz_icl.budget import COMMAND_SECONDS
    from lipschitz_icl.commands._common import problem_from_args
    from lipschitz_icl.optimum import wstar
    from lipschitz_icl.validation import ParameterError

    problem = problem_from_args(args)
    if args.method == "certified":
        from lipschitz_icl.certified.wstar import problem_wstar

        enclosure = problem_wstar(problem, seconds=COMMAND_SECONDS)
        return enclosure.to_dict(), 0 if enclosure.decided and not enclosure.info.get("at_search_bound") else 3
    kwargs = (
        {"rng": args.seed, "rel_precision": args.rel_precision, "budget": COMMAND_SECONDS}
        if args.method == "mc"
        else {}
    )
    try:
        result = wstar(problem, args.method, **kwargs)
    except ParameterError as exc:
        if exc.name != "method":
            raise
        # the library refuses the method knowing only the problem (a prior without a sampler): repeat the method
        raise ParameterError("method", exc.requirement, args.method) from None
    return result.to_dict(), 3 if result.inconclusive else 0
