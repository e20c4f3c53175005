"""Zonal task priors on the command line: ``--task mix:NAME=WEIGHT,...``, ``--frequency K`` (cosine),
``--kernel "EXPR"`` and ``--kernel-file FILE`` (both replace ``--task`` and ``--L``: the kernel carries
the scale).

Kernel file (TOML; read like a variant file by :mod:`lipschitz_icl.tomlfile` -- a regular file of at
most 64 KiB, UTF-8, bounded nesting -- and by the project's safe expression parser, never evaluated as
code; any other key, a constant that is not a number or that shadows ``t``, ``d``, ``u``, ``pi`` or a
function is refused)::

    kernel = "exp(-sqrt(2 - 2*t)/ell)"     # an expression in t (= x.y), d and the constants
    [constants]
    ell = 0.5

Mixture weights and ``--frequency`` are read by the one number parser (ASCII decimal); a mixture is
validated as a whole while the arguments are parsed (:func:`lipschitz_icl.tasks.zonal.parse_mixture`).
"""

from __future__ import annotations

import argparse

from lipschitz_icl.commands._options import real
from lipschitz_icl.problem import kernel_problem, make_problem, mixture_problem
from lipschitz_icl.tasks.registry import FREQUENCY_RANGE, TASKS, parameters_of
from lipschitz_icl.tasks.zonal import is_mixture, kernel_constants, parse_mixture, reserved_names, zonal_task_names
from lipschitz_icl.validation import ParameterError, check_int, shorten

__all__ = ["add_zonal_arguments", "add_frequency_argument", "zonal_problem_from_args", "load_kernel_file"]


def add_zonal_arguments(parser, tasks) -> None:
    """``--task`` (one of ``tasks`` or ``mix:...``), ``--frequency``, ``--kernel``, ``--kernel-file``."""

    def task_type(value: str) -> str:
        if value in tasks:
            return value
        if is_mixture(value):
            try:
                parse_mixture(value)  # validated as a whole while parsing
            except ParameterError as exc:
                raise argparse.ArgumentTypeError(f"must be {exc.requirement} (got {shorten(value)})") from None
            return value
        raise argparse.ArgumentTypeError(
            f"invalid choice: {value!r} (choose from {', '.join(tasks)} or mix:NAME=WEIGHT,...)"
        )

    parser.add_argument(
        "--task",
        default=None,
        type=task_type,
        help=f"task class: {', '.join(tasks)} or mix:NAME=WEIGHT,... (NAME in "
        f"{', '.join(zonal_task_names())}); not with --kernel",
    )
    add_frequency_argument(parser)
    parser.add_argument(
        "--kernel", default=None, help="covariance K(t), t = x.y, as an expression in t and d (replaces --task and --L)"
    )
    parser.add_argument(
        "--kernel-file", default=None, help="TOML file with 'kernel' = EXPR and an optional [constants] table"
    )
    parser.set_defaults(zonal_tasks=tuple(tasks))


def add_frequency_argument(parser) -> None:
    """``--frequency K``: the cosine frequency, read by the one number parser within :data:`FREQUENCY_RANGE`."""
    low, high = FREQUENCY_RANGE
    parser.add_argument(
        "--frequency",
        type=real("frequency", minimum=low, maximum=high),
        default=None,
        help=f"cosine frequency, {low:g} <= k <= {high:g} (default 1; cosine tasks and mixtures only)",
    )


def load_kernel_file(path: str):
    """``(expression, constants)`` from a kernel file (format in the module docstring), read like a variant
    file (:mod:`lipschitz_icl.tomlfile`: a regular file of at most 64 KiB, UTF-8, bounded nesting); keys
    other than ``kernel`` and ``[constants]`` are refused, never ignored, and so is a constant that is not
    a number or that shadows ``t``, ``d``, ``u``, ``pi`` or a function
    (:func:`~lipschitz_icl.tasks.zonal.kernel_constants`)."""
    from lipschitz_icl.tomlfile import TomlFileError, read_toml

    try:
        _, data = read_toml(path)
    except TomlFileError as exc:
        raise ParameterError("kernel-file", f"a readable kernel file ({exc})", path) from None
    unknown = sorted(set(data) - {"kernel", "constants"})
    if unknown:
        raise ParameterError(
            "kernel-file", f"a file with the keys 'kernel' and [constants] only (unknown key {unknown[0]!r})", path
        )
    if not isinstance(data.get("kernel"), str):
        raise ParameterError("kernel-file", "a file whose 'kernel' is a string (an expression in t and d)", path)
    constants = data.get("constants", {})
    if not isinstance(constants, dict):
        raise ParameterError("kernel-file", "a [constants] table of name = number", path)
    reserved = reserved_names()
    for name, value in constants.items():
        if name in reserved:
            raise ParameterError(
                "kernel-file",
                f"a file whose [constants] do not shadow t, d, u, pi or a function name ({name!r} does)",
                path,
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(
                "kernel-file", f"a [constants] table of numbers (constant {name!r} is a {type(value).__name__})", path
            )
    try:
        return data["kernel"], kernel_constants(constants)
    except ParameterError as exc:
        raise ParameterError("kernel-file", f"a file whose {exc.name} is {exc.requirement}", path) from None


def zonal_problem_from_args(args):
    """The problem of ``--kernel``/``--kernel-file`` or of ``--task`` (built-in, cosine with
    ``--frequency``, or a mixture)."""
    d = check_int("d", args.d, minimum=2)
    user = args.kernel is not None or args.kernel_file is not None
    if user:
        if args.kernel is not None and args.kernel_file is not None:
            raise ParameterError("kernel", "given once (--kernel or --kernel-file)", "both")
        for name, value in (("task", args.task), ("L", args.L), ("frequency", args.frequency)):
            if value is not None:
                raise ParameterError(name, "unset with --kernel (the kernel carries the scale)", value)
        text, constants = (args.kernel, {}) if args.kernel is not None else load_kernel_file(args.kernel_file)
        return kernel_problem(text, d, args.n, args.sigma, constants)
    tasks = args.zonal_tasks
    if args.task is None:
        raise ParameterError("task", f"given: one of {', '.join(tasks)}, mix:NAME=WEIGHT,... or --kernel", None)
    if args.L is None:
        raise ParameterError("L", "given (a finite real number > 0) with --task", None)
    frequency = 1.0 if args.frequency is None else args.frequency
    if is_mixture(args.task):
        return mixture_problem(args.task, d, args.n, args.L, args.sigma, frequency)
    if args.task not in tasks:
        raise ParameterError("task", f"one of {', '.join(tasks)} or mix:NAME=WEIGHT,...", args.task)
    with_frequency = [name for name in tasks if "frequency" in TASKS[name].parameters]
    if args.frequency is not None and args.task not in with_frequency:
        raise ParameterError("frequency", f"unset for a task other than {' or '.join(with_frequency)}", args.frequency)
    return make_problem(args.task, d, args.n, args.L, args.sigma, **parameters_of(args.task, frequency=frequency))


def zonal_scaling(args, d: int):
    """``lipschitz-icl scaling`` for ``--kernel`` or a zonal ``--task``: the regularity law's ``w*`` law
    (``L = 1``, ``sigma = 0.5``).  Returns ``(payload, exit code)``."""
    from lipschitz_icl.claims.regularity import kernel_scaling
    from lipschitz_icl.decision import exit_code
    from lipschitz_icl.gates.registry import find
    from lipschitz_icl.tasks import symbolic
    from lipschitz_icl.tasks.zonal import expression_kernel, parse_task

    if args.kernel is not None or args.kernel_file is not None:
        if args.task is not None or args.frequency is not None:
            raise ParameterError("task", "unset with --kernel (the kernel carries the scale)", args.task)
        if args.kernel is not None and args.kernel_file is not None:
            raise ParameterError("kernel", "given once (--kernel or --kernel-file)", "both")
        text, constants = (args.kernel, {}) if args.kernel is not None else load_kernel_file(args.kernel_file)
        kernel = expression_kernel(text, d, constants)
    elif args.task is None:
        raise ParameterError("task", f"given: {', '.join(zonal_task_names())}, mix:NAME=WEIGHT,... or --kernel", None)
    else:
        frequency = 1.0 if args.frequency is None else args.frequency
        kernel = parse_task(args.task, d, 1.0, frequency)
    if kernel.sympy is not None:  # the regularity law's series of the kernel at t = 1, under the symbolic budget
        from lipschitz_icl.derivations.regularity import regularity_of_kernel

        try:
            symbolic.within_budget(
                lambda: regularity_of_kernel(kernel),
                name="kernel",
                text=kernel.name,
                what="the series at t = 1",
                start=kernel.sympy,
            )
        except ParameterError:
            raise
        except ValueError as exc:  # e.g. a constant kernel: no bias part, so no window law (b = 0)
            raise ParameterError("kernel", f"a kernel the regularity law applies to ({exc})", kernel.name) from None
    # the registry's window-law claim applied to this kernel: its design, resolutions and alternatives
    try:
        ev, judged = kernel_scaling(kernel, find("regularity.window-law"))
    except ParameterError as exc:
        if exc.name != "method":  # scaling has no --method: the exact w* search it runs is what the kernel defeats
            raise
        raise ParameterError(
            "kernel", f"a kernel whose w* the exact method reaches ({exc.requirement})", kernel.name
        ) from None
    reg, verdict = ev.extra["regularity"], judged.decision.verdict
    payload = {
        "kernel": kernel.name,
        "gamma": reg.gamma,
        "beta": reg.beta,
        "alpha_derived": reg.alpha,
        "C_derived": reg.C,
        "alpha_measured": ev.extra["slope"],
        "C_measured": ev.quantities[2].measured,
        "n_grid": ev.extra["n_grid"],
        "w_star": ev.extra["w_star"],
        "ratio_trend": ev.extra["ratio"],
        "next_order_trend": ev.extra["next_order"],
        "next_order_derived": reg.k is not None,
        "resolution": judged.resolutions[0].to_dict(),
        "decision": judged.decision.detail,
        "verdict": verdict,
        "alternatives": [{"name": a.name, "verdict": a.verdict, "ruled_out": a.ruled_out} for a in judged.alternatives],
    }
    return payload, exit_code(verdict)
