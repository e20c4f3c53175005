"""``lipschitz-icl loss``: the ICL loss at ``M = w I`` and its bias and noise parts (CLI contract).

JSON keys: ``loss``, ``ci_low``, ``ci_high``, ``bias``, ``noise`` (plus standard errors, ``method``;
``converged`` for ``exact`` and ``certified``: false, the accuracy was not reached, exits 3);
``--method certified`` adds ``loss_low``/``loss_high``, ``bias_low``/``bias_high``, ``noise_low``/``noise_high``:
intervals proved to hold the true values (:mod:`lipschitz_icl.certified.loss`, python-flint ball arithmetic),
and ``ci_low``/``ci_high`` are the loss's.  Certified classes: affine, relu, cosine, their mixtures and a
``--kernel`` analytic in ``t`` on ``[-1, 1]``; any other is refused (exit 2) naming what is not certified.
Supported ranges (refused with exit 2 outside): ``0 <= w <= 1e8``; ``averaged``/``naive`` (Monte
Carlo) ``n <= 1e7``, ``100 <= contexts <= 1e6`` (default 20000; :data:`lipschitz_icl.budget.MIN_CONTEXTS`:
fewer make the 95% interval a poor approximation; refused with the other methods, which sample nothing), a
memory budget (:data:`lipschitz_icl.loss.estimators.MEMORY_BUDGET`) and the work budget of a command
(:mod:`lipschitz_icl.budget`: estimated seconds; the refusal names the largest ``--contexts`` within it, or a
smaller ``n`` when that is below the floor);
``exact`` and ``asymptotic`` any ``n <= 1e150`` (``exact`` relu also a grid budget in ``w`` at small ``n``;
``asymptotic`` only inside its regime, ``rho = max(R_d(w)/n, next-order noise term) <= 0.05``: outside, exit 2
naming the smallest ``--n`` inside it; JSON ``regime`` is ``rho``, :mod:`lipschitz_icl.loss.asymptotic`);
``certified`` any ``n <= 1e150`` within a work budget known before any work (few points dominate the
normaliser at small ``n`` and large ``w``: refused there, naming the budget); its interval always holds the
loss, and one wider than its stated accuracy (relative width ``2e-6``,
:attr:`lipschitz_icl.certified.loss.LossEnclosure.converged`; e.g. ``d = 100``, ``n = 2``, ``w = 1``, where its
tail bounds grow like a power of ``d``) is ``"converged": false`` and exit 3 (inconclusive), its ends ``"inf"``
when unbounded.
"""

from __future__ import annotations

from lipschitz_icl.validation import ParameterError

NAME = "loss"
HELP = "ICL loss at M = w I with its bias and noise parts"
DEFAULT_CONTEXTS = 20000


def add_arguments(parser) -> None:
    from lipschitz_icl.budget import MIN_CONTEXTS
    from lipschitz_icl.commands._common import add_problem_arguments
    from lipschitz_icl.commands._options import integer, real
    from lipschitz_icl.loss.estimators import MAX_CONTEXTS, MAX_W, METHODS
    from lipschitz_icl.tasks.registry import task_names

    add_problem_arguments(parser, task_names(rotation_invariant=True), zonal=True)
    parser.add_argument(
        "--w",
        required=True,
        type=real("w", minimum=0.0, maximum=MAX_W),
        help=f"attention scale w (M = w I), 0 <= w <= {MAX_W:g}",
    )
    parser.add_argument(
        "--method",
        choices=METHODS + ("certified",),
        default="averaged",
        help="averaged (task-averaged Monte Carlo, default; n <= 1e7), naive (n <= 1e7), "
        "asymptotic (large n, inside its regime), exact (quadrature; n <= 1e150), certified (intervals "
        "proved to hold the loss and its parts, ball arithmetic: affine, relu, cosine, mixtures, analytic kernels)",
    )
    parser.add_argument(
        "--contexts",
        type=integer("contexts", MIN_CONTEXTS, MAX_CONTEXTS),
        default=None,
        help=f"Monte Carlo (naive, averaged): number of sampled prompts, {MIN_CONTEXTS} <= contexts <= "
        f"{MAX_CONTEXTS:.0e} (default {DEFAULT_CONTEXTS}; fewer make the 95%% interval a poor approximation)",
    )


def run(args):
    from lipschitz_icl.budget import COMMAND_SECONDS, MIN_CONTEXTS
    from lipschitz_icl.commands._common import problem_from_args
    from lipschitz_icl.loss.estimators import MONTE_CARLO_METHODS, icl_loss

    problem = problem_from_args(args)
    if args.method not in MONTE_CARLO_METHODS and args.contexts is not None:  # refused, never silently ignored
        raise ParameterError(
            "contexts", "unset for a method that samples nothing (naive or averaged take it)", args.contexts
        )
    contexts = DEFAULT_CONTEXTS if args.contexts is None else args.contexts
    if args.method == "certified":
        from lipschitz_icl.certified.loss import problem_enclosure

        enclosure = problem_enclosure(problem, args.w)
        return enclosure.to_dict(), 0 if enclosure.converged else 3
    result = icl_loss(
        problem,
        args.w,
        method=args.method,
        contexts=contexts,
        rng=args.seed,
        budget=COMMAND_SECONDS,
        min_contexts=MIN_CONTEXTS,  # a refusal past the budget then names a setting this command accepts
    )
    return result.to_dict(), 3 if result.inconclusive else 0
