"""``lipschitz-icl train``: pretrain one attention layer with the NumPy trainer and report its shape.

JSON keys:

- ``w_trained``: ``tr(M)/d`` of the effective ``M`` of the trained layer, the ``M`` of the equivalent
  Eq. (4) predictor with unit value weight (:func:`lipschitz_icl.model.train.effective_M`): M-form softmax
  ``M``; M-form linear ``v M``; full layer ``A_xx = (W_K^T W_Q)[:d, :d]`` (softmax; the label value
  weight ``W_V[d, d]`` scales the output, not the exponent, and is reported separately) or
  ``W_V[d, d] A_xx`` (linear attention, where only the product reaches the prediction);
- ``anisotropy``: ``||M - (tr M/d) I||_F / ||M||_F`` of that ``M``;
- ``rho``: ``||M - P M P||_F / ||M||_F``, ``P = B B^T``, for low-rank tasks (else null);
- ``final_loss`` (and ``final_loss_stderr``): ICL loss of the returned parameters on fresh held-out
  prompts (a seed stream separate from training);
- ``steps``, ``seconds`` (training wall time); for the full layer also ``value_leak``,
  ``label_coupling`` and ``value_weight`` (``W_V[d, d]``).

``--out FILE.npz`` writes the trained parameters (and ``M``, the loss curve) to ``FILE.npz``; the path is
checked before training (name ends in ``.npz``, directory exists and is writable, name length), and an
existing file (or symlink) is refused unless ``--force``.  Limits: ``steps <= 1e6``, ``0 < lr <= 1000``,
``batch * n * (d + 1) <= 5e7`` (memory), ``n <= 1e7``, and the work budget of a command
(:data:`lipschitz_icl.budget.COMMAND_SECONDS`, estimated): the 20000 held-out prompts (``n <= 12000`` at
``d = 3``) and the training, ``steps * batch * n * (d + 1)`` prompt coordinates, within it together; past
it the request is refused before any work, naming ``--n`` or ``--steps`` and a value within it.
"""

from __future__ import annotations

import math
import os

import numpy as np

from lipschitz_icl.validation import ParameterError, check_int, check_real
from lipschitz_icl.writefile import write_file

NAME = "train"
HELP = "pretrain one attention layer (NumPy, analytic gradients) and report the trained M"

EVAL_PROMPTS = 20000


def add_arguments(parser) -> None:
    from lipschitz_icl.commands._common import add_problem_arguments
    from lipschitz_icl.commands._options import integer, real
    from lipschitz_icl.model.attention import ATTENTION_KINDS
    from lipschitz_icl.model.train import MAX_LR, MAX_STEPS, OPTIMIZERS, PARAMETERISATIONS, SCHEDULES
    from lipschitz_icl.tasks.registry import task_names

    add_problem_arguments(parser, task_names(), zonal=True)
    parser.add_argument(
        "--k", type=integer("k", 1, 512), default=None, help="rank of B for the low-rank tasks (1 <= k <= d)"
    )
    parser.add_argument(
        "--param", choices=PARAMETERISATIONS, default="M", help="M (Eq. (4) form, default) or full (W_K, W_Q, W_V)"
    )
    parser.add_argument("--attention", choices=ATTENTION_KINDS, default="softmax", help="softmax (default) or linear")
    parser.add_argument(
        "--steps",
        type=integer("steps", 1, MAX_STEPS),
        default=2000,
        help=f"optimiser steps, 1 <= steps <= {MAX_STEPS:.0e} (default 2000)",
    )
    parser.add_argument(
        "--batch",
        type=integer("batch", 1, 10**6),
        default=256,
        help="fresh prompts per step >= 1, batch * n * (d+1) <= 5e7 (default 256)",
    )
    parser.add_argument(
        "--lr",
        type=real("lr", minimum=0.0, strict_minimum=True, maximum=MAX_LR),
        default=0.02,
        help=f"learning rate, 0 < lr <= {MAX_LR:g} (default 0.02)",
    )
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="adam", help="adam (default) or sgd")
    parser.add_argument(
        "--schedule", choices=SCHEDULES, default="constant", help="learning-rate schedule (default constant)"
    )
    parser.add_argument(
        "--average",
        type=real("average", minimum=0.0, maximum=0.999),
        default=0.5,
        help="fraction of the last steps whose iterates are averaged, in [0, 0.999] "
        "(default 0.5; 0 reports the final iterate)",
    )
    parser.add_argument(
        "--out", default=None, help="write the trained parameters to this new .npz file (checked before training)"
    )
    parser.add_argument("--force", action="store_true", help="allow --out to replace an existing file")


MAX_PATH = 4096


def _check_out(path, force: bool):
    """``path`` if training may write it: ends in ``.npz``, in an existing writable directory, a name
    the file system accepts, and (unless ``force``) nothing there yet -- all before any training."""
    if path is None:
        return None
    requirement = "a path ending in .npz, in an existing writable directory"
    if not path.endswith(".npz") or len(os.path.basename(path)) <= 4 or len(path) > MAX_PATH:
        raise ParameterError("out", requirement, path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK):
        raise ParameterError("out", requirement, path)
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    if len(os.fsencode(os.path.basename(path))) > name_max:
        raise ParameterError("out", f"a file name of at most {name_max} bytes", path)
    if os.path.isdir(path):  # --force replaces a file, never a directory
        raise ParameterError("out", "a file path (it is a directory; --force replaces files only)", path)
    if os.path.lexists(path) and not force:
        raise ParameterError("out", "a path where no file exists yet (or give --force to replace a file)", path)
    return path


def _check_work(problem, steps: int, batch: int) -> None:
    """The command's work budget (:data:`lipschitz_icl.budget.COMMAND_SECONDS`) holds the held-out evaluation
    (:data:`EVAL_PROMPTS` prompts, a Monte Carlo loss of ``n (d + 2)`` coordinates each) and the training
    (:data:`lipschitz_icl.model.train.SECONDS_PER_STEP_COORDINATE`) together; checked before any work.  An
    evaluation beyond it by itself names ``--n`` (``--n 1e7`` spent minutes training 5 prompts, then hours on
    20000 held-out ones), else the training names ``--steps``."""
    from lipschitz_icl import budget
    from lipschitz_icl.loss.estimators import SECONDS_PER_COORDINATE
    from lipschitz_icl.model.train import SECONDS_PER_STEP_COORDINATE

    per_point = EVAL_PROMPTS * (problem.d + 2) * SECONDS_PER_COORDINATE
    held_out = problem.n * per_point
    budget.check(
        held_out,
        budget.COMMAND_SECONDS,
        name="n",
        value=problem.n,
        what=f"the {EVAL_PROMPTS} held-out prompts at n = {problem.n}, d = {problem.d}",
        cheaper=f"n <= {budget.largest_count(budget.COMMAND_SECONDS, per_point)} in d = {problem.d}",
    )
    per_step = batch * problem.n * (problem.d + 1) * SECONDS_PER_STEP_COORDINATE
    budget.check(
        held_out + steps * per_step,
        budget.COMMAND_SECONDS,
        name="steps",
        value=steps,
        what=f"{steps} steps of {batch} prompts at n = {problem.n}, d = {problem.d}, and the held-out prompts",
        cheaper=f"steps <= {budget.largest_count(budget.COMMAND_SECONDS - held_out, per_step)}, or a smaller batch",
    )


def _write_npz(path: str, force: bool, arrays: dict) -> None:
    """Write ``arrays`` to ``path`` by :func:`lipschitz_icl.writefile.write_file` (atomic, never through a
    link, the mode a user expects); without ``force`` a file that appeared during training is still refused."""
    try:
        write_file(path, lambda handle: np.savez(handle, **arrays), force=force, option="out")
    except OSError as exc:  # a full disk, a read-only or vanished directory: one line, no partial file
        raise ParameterError(
            "out", f"a path the trained parameters can be written to ({exc.strerror or exc})", path
        ) from None


def _through_zonal_options(task) -> bool:
    """True when ``--task`` is read by the zonal options (:mod:`._zonal`): none given (``--kernel``), a
    mixture, or a rotation-invariant class with extra parameters (``--frequency``)."""
    from lipschitz_icl.tasks.registry import TASKS
    from lipschitz_icl.tasks.zonal import is_mixture

    if task is None or is_mixture(task):
        return True
    cls = TASKS[task]
    return cls.rotation_invariant and bool(cls.parameters)


def _problem(args):
    """The problem of the arguments; a class or mixture that cannot sample tasks is refused."""
    from lipschitz_icl.commands._common import problem_from_args
    from lipschitz_icl.problem import make_problem
    from lipschitz_icl.tasks.registry import TASKS

    if _through_zonal_options(args.task):
        if args.k is not None:
            raise ParameterError("k", f"unset for the full-rank task {args.task!r}", args.k)
        problem = problem_from_args(args)  # cosine --frequency, mix:..., (kernels: refused, no sampler)
        problem.task_class.sample(np.random.default_rng(0), 1)
        return problem
    task_kwargs = {}
    if TASKS[args.task].low_rank:
        if args.k is None:
            raise ParameterError("k", f"given (an integer in [1, d]) for the low-rank task {args.task!r}", None)
        task_kwargs["rank"] = check_int("k", args.k, minimum=1, maximum=max(1, args.d))
    elif args.k is not None:
        raise ParameterError("k", f"unset for the full-rank task {args.task!r}", args.k)
    if args.L is None:
        raise ParameterError("L", "given (a finite real number > 0) with --task", None)
    for name in ("frequency", "kernel", "kernel_file"):
        if getattr(args, name) is not None:
            raise ParameterError(name.replace("_", "-"), f"unset for the task {args.task!r}", getattr(args, name))
    return make_problem(args.task, args.d, args.n, args.L, args.sigma, **task_kwargs)


def run(args):
    from lipschitz_icl.model import geometry
    from lipschitz_icl.model.train import icl_loss, train

    seed = check_int("seed", args.seed, minimum=0)
    problem = _problem(args)
    steps = check_int("steps", args.steps, minimum=1)
    batch = check_int("batch", args.batch, minimum=1)
    lr = check_real("lr", args.lr, minimum=0.0, strict_minimum=True)
    average = check_real("average", args.average, minimum=0.0, maximum=0.999)
    out = _check_out(args.out, args.force)
    _check_work(problem, steps, batch)

    train_seq, eval_seq = np.random.SeedSequence(seed).spawn(2)
    # an lr too large overflows: the trainer stops at the first non-finite loss and the command refuses --lr in one
    # line, so numpy's overflow warnings before it would only be noise on stderr
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            result = train(
                problem,
                param=args.param,
                attention=args.attention,
                steps=steps,
                batch=batch,
                lr=lr,
                optimizer=args.optimizer,
                schedule=args.schedule,
                average_fraction=average,
                seed=train_seq,
            )
    except FloatingPointError:
        raise ParameterError("lr", "small enough for training to stay finite", lr) from None
    with np.errstate(over="ignore", invalid="ignore"):
        held_out = icl_loss(
            problem,
            result.param,
            result.params,
            np.random.default_rng(eval_seq),
            kind=result.kind,
            prompts=EVAL_PROMPTS,
        )
    M = result.M
    B = problem.task_class.B
    payload = {
        "w_trained": result.w_trained,
        "anisotropy": geometry.anisotropy(M),
        "rho": geometry.rho(M, B) if B is not None else None,
        "final_loss": held_out.value,
        "final_loss_stderr": held_out.standard_error,
        "steps": result.steps,
        "seconds": result.seconds,
        "task": problem.task,
        "d": problem.d,
        "n": problem.n,
        # the scale given (--L); for a mixture the problem's L is its kernel's derived constant, not what was asked
        "L": problem.L if args.L is None else float(args.L),
        "sigma": problem.sigma,
        "k": problem.task_class.rank if problem.task_class.low_rank else None,
        "param": result.param,
        "attention": result.kind,
        "value_leak": None,
        "label_coupling": None,
        "value_weight": None,
        "out": out,
    }
    if result.param == "full":
        params = result.params
        payload["value_leak"] = geometry.value_leak(params["W_V"])
        payload["label_coupling"] = geometry.kq_label_coupling(params["W_K"], params["W_Q"])
        payload["value_weight"] = float(params["W_V"][-1, -1])
    if not all(math.isfinite(v) for v in (held_out.value, result.w_trained)):
        raise ParameterError("lr", "small enough for training to stay finite", lr)
    if out is not None:
        arrays = {name: np.asarray(value) for name, value in result.params.items()}
        _write_npz(out, args.force, {"M_effective": M, "loss_curve": result.loss_curve, **arrays})
    return payload, 0
