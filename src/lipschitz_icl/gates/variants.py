"""User bound variants: a claim stated in a TOML file, checked over a parameter grid.

A *bound variant* (the section "User bound variants" of the report; README "Bound variants") says
``quantity  <relation>  bound(params)`` at every point of a grid.  The file is untrusted input: its bound
is read by :mod:`lipschitz_icl.expression` (a whitelist walk of ``ast.parse(mode="eval")``) into a small syntax tree
over numbers, the allowed variable and constant names, ``+ - * / **``, parentheses and the functions
:data:`FUNCTIONS`, from
which the SymPy expression (for display) and an mpmath evaluator (for the numbers) are built.  No text
of the file is ever passed to ``eval``, ``exec``, ``sympify`` or ``parse_expr``.

File format (one variant per file)::

    name = "wstar-affine-upper"              # letters, digits, . _ - (at most 80)
    quantity = "w_star"                      # see QUANTITIES below
    task = "affine"                          # a rotation-invariant class (affine | relu | cosine | ...)
                                             #   or mix:affine=1,relu=2,...
    frequency = 1.0                          # optional, classes with a frequency (cosine) and mixtures (default 1)
    method = "exact"                         # exact | asymptotic | mc   (default exact)
    relation = "<="                          # measured <= bound, or measured >= bound
    bound = "C * (n*L**2/sigma**2)**(2/(d+2))"
    paper_ref = "Theorem 3.4"                # optional
    statement = "w* grows at most like ..."  # optional (default: built from the fields)
    tight_constant = "C"                     # optional: the constant that multiplies the bound
    at_w = "sqrt(n)"                         # optional, bias/noise only: evaluate at this w, not w*
    seed = 0                                 # optional, method mc only
    contexts = 20000                         # optional, method mc only (loss contexts)

    [constants]                              # optional: named numbers used in the bound
    C = 2.0

    [grid]                                   # each entry a number or a list of numbers
    d = [3, 5]
    n = [100, 1000, 10000]
    L = 1.0
    sigma = [0.25, 0.5]

    [domain]                                 # optional, for `lipschitz-icl prove` (lipschitz_icl.prover.search):
    d = [3, 5]                               #   integers as lists or {from = a, to = b},
    sigma = [0.25, 0.5]                      #   reals as closed intervals [lo, hi]

``sharpest = "C"`` with ``[constants] C = [lo, hi]`` (a bracket) asks ``prove`` for the certified sharpest
value of ``C``; ``check`` refuses such a file, and a file with only a ``[domain]``.

Quantities and their grid parameters (all of them required; they are also the variables the bound
may use, together with the constants and ``pi``):

=========================== ======================== ==============================================
``w_star``                  d, n, L, sigma           optimal window ``w*`` (``M = w* I``) of the task class
``icl_error``               d, n, L, sigma           ``min_w L(w)``: the ICL loss at ``w*``
``bias``                    d, n, L, sigma [, w]     bias part of the loss at ``w*`` (or at ``w``/``at_w``)
``noise``                   d, n, L, sigma [, w]     noise part ``sigma^2 E sum_i p_i^2`` at ``w*`` (or ``w``)
``loss``                    d, n, L, sigma, w        ICL loss of ``M = w I`` (``bias + noise``), ``prove`` only
``dbias_dw``                d, n, L, sigma, w        ``d/dw`` of the bias part at ``w``, ``prove`` only
``dnoise_dw``               d, n, L, sigma, w        ``d/dw`` of the noise part at ``w``, ``prove`` only
``dloss_dw``                d, n, L, sigma, w        ``d/dw`` of the loss at ``w``, ``prove`` only
``dloss_dw_step``           d, n, L, sigma, w        ``dL/dw(w, n + 1) - dL/dw(w, n)``, ``prove`` only
``linear_error``            d, n, L, sigma           ICL error of the optimal linear attention, ``prove`` only
``cap_tail``                d, h                     ``P(x . q >= h)``, exact (:func:`concentration.cap_tail`)
``projection_tail``         d, k, s                  ``P(||P x||^2 >= s)``, ``P`` of rank ``k``, exact Beta law
``projection_lower_tail``   d, k, s                  ``P(||P x||^2 <= s)``
``binomial_tail``           n, a, p                  ``P(N >= a)``, ``N ~ Binomial(n, p)`` (cap counts)
``binomial_lower_tail``     n, a, p                  ``P(N <= a)``
=========================== ======================== ==============================================

Decision rule.  At each grid point the measurement is an interval ``[lo, hi]``: for ``exact`` and
``asymptotic`` the method's stated error (for the asymptotic method: the estimated size of the ``1/n^2``
terms it drops, inside its regime; a point outside the regime cannot be evaluated: the file is refused),
for the tails the relative accuracy :data:`~lipschitz_icl.sphere.concentration.TAIL_RTOL`, for ``mc`` a
normal confidence interval at level
``1 - 0.05/m`` (Bonferroni over the ``m`` grid points, so that the whole grid is decided at 95%).
For ``<=`` a point *holds* when ``hi <= bound``, *fails* when ``lo > bound`` and is *inconclusive*
otherwise (``>=`` mirrors it).  The variant fails if any point fails (the counter-example reported is
the point with the largest relative violation), else is inconclusive if any point is, else holds.

Tightest constant.  When the bound is ``C * g(params)`` for a named constant ``C`` (``tight_constant``,
or the only constant; checked numerically: doubling ``C`` doubles the bound at every point) and the
bound is positive on the grid, the numerics allow any ``C`` with ``C >= sup_grid measured/g``
(``<=``) or ``C <= inf_grid measured/g`` (``>=``); that sup/inf is reported with the interval given by
the sup/inf of the endpoint ratios ``lo/g`` and ``hi/g``.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import mpmath

from lipschitz_icl import decision
from lipschitz_icl.expression import (
    BUILTIN_CONSTANTS,
    FUNCTIONS,
    MAX_CONSTANT,
    MAX_DEPTH,
    MAX_EXPR_CHARS,
    MAX_MAGNITUDE_LOG10,
    MAX_TOKENS,
    Expression,
    ExpressionError,
    parse_expression,
)
from lipschitz_icl.gates.evidence import Evidence, Quantity
from lipschitz_icl.prover.domain import REAL_PARAMS, Domain, check_value, parse_domain
from lipschitz_icl.tasks.registry import TASKS, parameters_of
from lipschitz_icl.tasks.zonal import is_mixture, parse_mixture, zonal_task_names
from lipschitz_icl.tomlfile import MAX_FILE_BYTES, TomlFileError, read_toml
from lipschitz_icl.validation import ParameterError, check_int

__all__ = [
    # the expression reader's names, re-exported: variants is where users meet them
    "MAX_DEPTH",
    "MAX_EXPR_CHARS",
    "MAX_FILE_BYTES",
    "MAX_MAGNITUDE_LOG10",
    "MAX_TOKENS",
    "QUANTITIES",
    "FUNCTIONS",
    "VariantFileError",
    "Variant",
    "VariantResult",
    "parse_expression",
    "load_variant",
    "evaluate_variant",
    "variant_evidence",
    "EXIT_CODES",
]

PROBLEM_PARAMS = ("d", "n", "L", "sigma")
QUANTITIES = {
    "w_star": PROBLEM_PARAMS,
    "icl_error": PROBLEM_PARAMS,
    "bias": PROBLEM_PARAMS,
    "noise": PROBLEM_PARAMS,
    "loss": PROBLEM_PARAMS,
    "dbias_dw": PROBLEM_PARAMS,
    "dnoise_dw": PROBLEM_PARAMS,
    "dloss_dw": PROBLEM_PARAMS,
    "dloss_dw_step": PROBLEM_PARAMS,
    "linear_error": PROBLEM_PARAMS,
    "cap_tail": ("d", "h"),
    "projection_tail": ("d", "k", "s"),
    "projection_lower_tail": ("d", "k", "s"),
    "binomial_tail": ("n", "a", "p"),
    "binomial_lower_tail": ("n", "a", "p"),
}
PROVE_AT_W = ("loss", "dbias_dw", "dnoise_dw", "dloss_dw", "dloss_dw_step")  # certified at a window w
PROVE_ONLY = (*PROVE_AT_W, "linear_error")  # no [grid] method for them
OPTIONAL_PARAMS = dict.fromkeys(("bias", "noise", *PROVE_AT_W), ("w",))
TAIL_QUANTITIES = ("cap_tail", "projection_tail", "projection_lower_tail", "binomial_tail", "binomial_lower_tail")
METHODS = ("exact", "asymptotic", "mc")
RELATIONS = ("<=", ">=")
TOP_KEYS = {
    "name",
    "quantity",
    "task",
    "frequency",
    "method",
    "relation",
    "bound",
    "paper_ref",
    "statement",
    "tight_constant",
    "at_w",
    "seed",
    "contexts",
    "constants",
    "grid",
    "domain",
    "sharpest",
}
MAX_GRID_POINTS = 200
MAX_CORNER_CHECKS = 1024  # evaluations of the bound at a [domain]'s corners when the file is read
LEVEL = 0.95
EXIT_CODES = {v: decision.exit_code(v) for v in decision.STATISTICAL}  # verdict -> CLI exit code


class VariantFileError(ParameterError):
    """A variant file that cannot be accepted: ``"<file>:<line>: <reason>"`` (``"<file>: <reason>"`` for the file
    as a whole, line 0; CLI exit code 2)."""

    def __init__(self, path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), int(line), reason
        self.name, self.requirement, self.value = "variant file", reason, str(path)
        ValueError.__init__(self, f"{path}:{line}: {reason}" if self.line else f"{path}: {reason}")


# ------------------------------------------------------------------ the variant file


@dataclass
class Variant:
    """A parsed, validated bound variant (see the module docstring for the file format)."""

    path: str
    name: str
    quantity: str
    relation: str
    bound: Expression
    constants: dict
    grid: dict
    task: str | None = None
    method: str = "exact"
    paper_ref: str = "user bound variant"
    statement: str = ""
    tight_constant: str | None = None
    at_w: Expression | None = None
    seed: int = 0
    contexts: int = 20000
    lines: dict = field(default_factory=dict)  # key -> line of the file, for errors found later
    frequency: float = 1.0  # cosine class and mixtures
    domain: Domain | None = None  # the [domain] table, decided by `lipschitz-icl prove`
    sharpest: str | None = None  # the constant whose sharpest value `prove` certifies
    brackets: dict = field(default_factory=dict)  # constant -> (lo, hi): the sharpest constant's bracket

    def problem(self, params: dict):
        """The :class:`~lipschitz_icl.problem.Problem` of the variant's task at grid point ``params``."""
        from lipschitz_icl.problem import make_problem, mixture_problem

        assert self.task is not None  # read_variant requires a task for every loss quantity
        d, n, L, sigma = params["d"], params["n"], params["L"], params["sigma"]
        if is_mixture(self.task):
            return mixture_problem(self.task, d, n, L, sigma, self.frequency)
        return make_problem(self.task, d, n, L, sigma, **parameters_of(self.task, frequency=self.frequency))

    @property
    def points(self) -> list[dict]:
        """The grid: the Cartesian product of the parameter lists, in file order."""
        keys = list(self.grid)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.grid[k] for k in keys))]

    def describe(self) -> str:
        grid = ", ".join(f"{k} in {{{', '.join(_fmt(v) for v in vals)}}}" for k, vals in self.grid.items())
        if not self.grid and self.domain is not None:
            grid = _describe_domain(self.domain)
        consts = ", ".join(
            [f"{k} = {_fmt(v)}" for k, v in self.constants.items()]
            + [f"{k} in [{_fmt(lo)}, {_fmt(hi)}] (sharpest)" for k, (lo, hi) in self.brackets.items()]
        )
        where = f"{self.quantity}" + (f" of the {self.task} class ({self.method})" if self.task else " (exact law)")
        text = f"{where} {self.relation} {self.bound.text} for {grid}"
        return text + (f", with {consts}" if consts else "")


def _fmt(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _describe_domain(domain: Domain) -> str:
    parts = []
    for name, pieces in domain.pieces.items():
        if name in REAL_PARAMS:
            lo, hi = pieces[0]
            parts.append(f"{name} = {_fmt(lo)}" if lo == hi else f"{name} in [{_fmt(lo)}, {_fmt(hi)}]")
        else:
            parts.append(f"{name} in {{{', '.join(str(a) if a == b else f'{a}..{b}' for a, b in pieces)}}}")
    return ", ".join(parts)


def _key_line(text: str, table: str | None, key: str) -> int:
    """1-based line of ``key = ...`` inside ``[table]`` (top level when ``table`` is None); else 1."""
    current = None
    header_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[\s*([A-Za-z0-9_\-\"]+)\s*\]", line)
        if header:
            current = header.group(1).strip('"')
            if current == table:
                header_line = number
            if table is None and current == key:  # the key is itself a table: its header line
                return number
            continue
        if current == table and re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=", line):
            return number
        if table is not None and current is None and re.match(rf"\s*{re.escape(table)}\s*=", line):
            header_line = header_line or number
    return header_line or 1


def load_variant(path) -> Variant:
    """Read, parse and validate one variant file; any problem raises :class:`VariantFileError`."""
    path = Path(path)
    try:
        text, data = read_toml(path)  # regular file, size, UTF-8, TOML, nesting
    except TomlFileError as exc:
        raise VariantFileError(exc.path, exc.line, exc.reason) from None

    def fail(key, reason, table=None):
        raise VariantFileError(path, _key_line(text, table, key), reason)

    for key in data:
        if key not in TOP_KEYS:
            fail(key, f"unknown key {key!r} (allowed: {', '.join(sorted(TOP_KEYS))})")

    def string(key, required=True, default=None):
        if key not in data:
            if required:
                raise VariantFileError(path, 1, f"missing key {key!r}")
            return default
        if not isinstance(data[key], str):
            fail(key, f"{key!r} must be a string")
        return data[key]

    name = string("name")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,80}", name):
        fail("name", "'name' must be 1-80 letters, digits, '.', '_' or '-'")
    quantity = string("quantity")
    if quantity not in QUANTITIES:
        fail("quantity", f"'quantity' must be one of {', '.join(QUANTITIES)} (got {quantity!r})")
    relation = string("relation")
    if relation not in RELATIONS:
        fail("relation", f"'relation' must be '<=' or '>=' (got {relation!r})")
    is_tail = quantity in TAIL_QUANTITIES
    method = string("method", required=False, default="exact")
    if method not in METHODS:
        fail("method", f"'method' must be one of {', '.join(METHODS)} (got {method!r})")
    if is_tail and method != "exact":
        fail("method", f"'method' must be 'exact' for {quantity} (its law is known in closed form)")
    task = string("task", required=not is_tail)
    if is_tail and task is not None:
        fail("task", f"'task' does not apply to {quantity}")
    tasks = zonal_task_names()  # the classes with w*, the exact method and the large-n formula where it applies
    if task is not None and task not in tasks and not is_mixture(task):
        fail("task", f"'task' must be one of {', '.join(tasks)} or mix:NAME=WEIGHT,... (got {task!r})")
    if is_mixture(task):
        try:
            parse_mixture(task)
        except ParameterError as exc:
            fail("task", f"'task' must be {exc.requirement}")
    frequency = data.get("frequency", 1.0)
    with_frequency = [name for name in tasks if "frequency" in TASKS[name].parameters]
    if "frequency" in data and (task is None or not (task in with_frequency or is_mixture(task))):
        fail("frequency", f"'frequency' applies to the {', '.join(with_frequency)} class and mixtures only")
    if isinstance(frequency, bool) or not isinstance(frequency, (int, float)) or not 1e-6 <= frequency <= 1e3:
        fail("frequency", f"'frequency' must be a number in [1e-06, 1000] (got {frequency!r})")
    for key in ("seed", "contexts"):
        if key in data and method != "mc":
            fail(key, f"{key!r} applies to method 'mc' only")
    seed, contexts = data.get("seed", 0), data.get("contexts", 20000)
    try:
        seed = check_int("seed", seed, minimum=0)
        contexts = check_int("contexts", contexts, minimum=100, maximum=10**6)
    except ParameterError as exc:
        fail(exc.name, str(exc))

    constants = data.get("constants", {})
    if not isinstance(constants, dict):
        fail("constants", "'constants' must be a table of name = number")
    sharpest = string("sharpest", required=False)
    if sharpest is not None and sharpest not in constants:
        fail("sharpest", f"'sharpest' must name a constant of [constants] (got {sharpest!r})")
    reserved = set(FUNCTIONS) | set(BUILTIN_CONSTANTS) | set(QUANTITIES[quantity]) | {"w", "k", "h", "s", "d"}
    brackets = {}
    for cname, cvalue in constants.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,30}", cname) or cname in reserved:
            fail(
                cname, f"constant name {cname!r} must be an identifier that is not a parameter or function", "constants"
            )
        if cname == sharpest:
            brackets[cname] = _bracket(cvalue, cname, lambda reason, c=cname: fail(c, reason, "constants"))
            continue
        if (
            isinstance(cvalue, bool)
            or not isinstance(cvalue, (int, float))
            or not math.isfinite(cvalue)
            or abs(cvalue) > MAX_CONSTANT
        ):
            fail(cname, f"constant {cname!r} must be a finite number", "constants")
    constants = {k: float(v) for k, v in constants.items() if k not in brackets}

    if quantity in PROVE_ONLY and "grid" in data:
        fail("quantity", f"'quantity' {quantity} is decided by `prove` on a [domain] only, not checked on a [grid]")
    if "grid" not in data and "domain" not in data:
        raise VariantFileError(path, 1, "missing table [grid] (points for `check`) or [domain] (for `prove`)")
    grid = _load_grid(data, quantity, path, text) if "grid" in data else {}
    domain = _load_domain(data, quantity, path, text) if "domain" in data else None
    variables = set(grid) | set(constants) | set(brackets) | (set(domain.pieces) if domain else set())
    try:
        bound = parse_expression(string("bound"), variables)
    except ExpressionError as exc:
        fail("bound", f"bad 'bound': {exc}")

    at_w = None
    if "at_w" in data:
        if quantity not in ("bias", "noise"):
            fail("at_w", "'at_w' applies to the quantities bias and noise only")
        if "w" in grid:
            fail("at_w", "give either 'at_w' or a grid entry 'w', not both")
        try:
            at_w = parse_expression(string("at_w"), set(PROBLEM_PARAMS) | set(constants))
        except ExpressionError as exc:
            fail("at_w", f"bad 'at_w': {exc}")

    tight = string("tight_constant", required=False)
    if tight is not None and tight not in constants:
        fail("tight_constant", f"'tight_constant' must name a constant of [constants] (got {tight!r})")
    if tight is None and len(constants) == 1:
        tight = next(iter(constants))

    points = 1
    for values in grid.values():
        points *= len(values)
    if points > MAX_GRID_POINTS:
        fail("grid", f"the grid has {points} points; at most {MAX_GRID_POINTS} are allowed", None)

    variant = Variant(
        str(path),
        name,
        quantity,
        relation,
        bound,
        constants,
        grid,
        task,
        method,
        string("paper_ref", required=False, default="user bound variant"),
        string("statement", required=False, default=""),
        tight,
        at_w,
        seed,
        contexts,
        {key: _key_line(text, None, key) for key in ("bound", "at_w", "grid", "domain", "frequency")},
        float(frequency),
        domain,
        sharpest,
        brackets,
    )
    if grid and not brackets:
        _check_expressions_on_grid(variant, fail)
    if domain is not None:
        _check_bound_on_domain(variant, fail)
    if not variant.statement:
        variant.statement = variant.describe()
    return variant


def _check_expressions_on_grid(variant: Variant, fail) -> None:
    """Evaluate ``bound`` (and ``at_w``) at every grid point before anything is measured: an expression
    that is undefined, outside the evaluation budget or outside the double range there is a file error
    at its own line (``fail(key, reason)``)."""
    for params in variant.points:
        env = {**params, **variant.constants}
        for key, expr in (("bound", variant.bound), ("at_w", variant.at_w)):
            if expr is None:
                continue
            try:
                value = expr.evaluate(env)
            except ExpressionError as exc:
                fail(key, f"{key!r} cannot be evaluated at {_fmt_params(params)}: {exc.reason}")
            if value != 0 and not (mpmath.mpf(1) / MAX_CONSTANT <= abs(value) <= MAX_CONSTANT):
                fail(key, f"{key!r} is out of range at {_fmt_params(params)} (|value| must be 0 or in [1e-300, 1e300])")
            if key == "at_w" and not 0 < value <= 1e8:
                fail(
                    key, f"'at_w' must be in (0, 1e8] at every grid point (at {_fmt_params(params)}: {float(value):g})"
                )


def _bracket(value, name: str, fail) -> tuple:
    """The sharpest constant's bracket ``[lo, hi]`` (finite, ``lo < hi``)."""
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > MAX_CONSTANT
            for v in value
        )
    ):
        fail(f"the sharpest constant {name!r} must be a bracket [lo, hi] of two finite numbers")
    if not value[0] < value[1]:
        fail(f"the bracket of {name!r} must have lo < hi (got {value})")
    return float(value[0]), float(value[1])


def _check_bound_on_domain(variant: Variant, fail) -> None:
    """The bound must be defined at every corner of the domain's root boxes (at both ends of a sharpest
    bracket): an endpoint where it is singular is a file error at its own line, not a box left undecided.
    Beyond :data:`MAX_CORNER_CHECKS` evaluations (4096 root boxes have up to 131072 corners: minutes of
    evaluation before the search's budget starts) only the corners of the domain's hull are checked, and
    a singular root box is left to the search (which refuses a point it probes where the bound is undefined,
    :class:`lipschitz_icl.prover.search.UndefinedBound`, and else ends undecided, naming the bound)."""
    assert variant.domain is not None  # called for a variant with a [domain] table only
    ends = [dict(zip(variant.brackets, combo)) for combo in itertools.product(*variant.brackets.values())]
    domain = variant.domain
    every = domain.corner_count() * max(len(ends), 1) <= MAX_CORNER_CHECKS
    for corner in domain.corners() if every else domain.hull_corners():
        for end in ends or [{}]:
            try:
                value = variant.bound.evaluate({**corner, **variant.constants, **end})
            except ExpressionError as exc:
                fail(
                    "bound",
                    f"'bound' cannot be evaluated at {_fmt_params({**corner, **end})} (a corner of the "
                    f"domain): {exc.reason}",
                )
            if value != 0 and not (mpmath.mpf(1) / MAX_CONSTANT <= abs(value) <= MAX_CONSTANT):
                fail(
                    "bound",
                    f"'bound' is out of range at {_fmt_params(corner)} (|value| must be 0 or in [1e-300, 1e300])",
                )


def _load_domain(data, quantity, path, text) -> Domain:
    """The ``[domain]`` table (:func:`lipschitz_icl.prover.domain.parse_domain`): real parameters as closed
    intervals ``[lo, hi]``, integer ones as lists or ``{from = a, to = b}``."""
    raw = data.get("domain")
    if not isinstance(raw, dict):
        raise VariantFileError(path, _key_line(text, None, "domain"), "'domain' must be a table [domain]")
    try:
        domain = parse_domain(raw, QUANTITIES[quantity], QUANTITIES[quantity] + OPTIONAL_PARAMS.get(quantity, ()))
    except ParameterError as exc:
        line = _key_line(text, "domain", exc.name) if exc.name in raw else _key_line(text, None, "domain")
        raise VariantFileError(path, line, f"domain: {exc}") from None
    if (
        "k" in domain.pieces
        and "d" in domain.pieces
        and max(b for _, b in domain.pieces["k"]) > min(a for a, _ in domain.pieces["d"])
    ):
        raise VariantFileError(path, _key_line(text, "domain", "k"), "domain: every k must be <= every d")
    return domain


def _load_grid(data, quantity, path, text) -> dict:
    grid_raw = data.get("grid")
    if not isinstance(grid_raw, dict):
        raise VariantFileError(path, _key_line(text, None, "grid"), "missing table [grid]")
    required = QUANTITIES[quantity]
    allowed = required + OPTIONAL_PARAMS.get(quantity, ())
    for key in grid_raw:
        if key not in allowed:
            raise VariantFileError(
                path,
                _key_line(text, "grid", key),
                f"grid parameter {key!r} does not apply to {quantity} (allowed: {', '.join(allowed)})",
            )
    for key in required:
        if key not in grid_raw:
            raise VariantFileError(
                path, _key_line(text, None, "grid"), f"grid parameter {key!r} is required for {quantity}"
            )
    grid = {}
    for key in allowed:
        if key not in grid_raw:
            continue
        values = grid_raw[key]
        values = values if isinstance(values, list) else [values]
        if not values:
            raise VariantFileError(path, _key_line(text, "grid", key), f"grid parameter {key!r} is an empty list")
        checked = []
        for value in values:
            try:
                checked.append(check_value(key, value))
            except ParameterError as exc:
                raise VariantFileError(path, _key_line(text, "grid", key), f"grid: {exc}") from None
        grid[key] = checked
    if "k" in grid and max(grid["k"]) > min(grid["d"]):
        raise VariantFileError(path, _key_line(text, "grid", "k"), "grid: every k must be <= every d")
    return grid


# ------------------------------------------------------------------ evaluation


@dataclass
class PointResult:
    """One grid point: parameters, measured value and interval, the bound, margin and verdict."""

    params: dict
    measured: float
    ci_low: float
    ci_high: float
    bound: float
    verdict: str
    margin: float
    relative_margin: float

    def to_dict(self) -> dict:
        """JSON-ready: ``relative_margin`` is null where it is undefined (a bound of 0)."""
        out = dict(self.__dict__)
        if not math.isfinite(self.relative_margin):
            out["relative_margin"] = None
        return out


@dataclass
class VariantResult:
    """The outcome of :func:`evaluate_variant`."""

    variant: Variant
    points: list[PointResult]
    verdict: str
    counterexample: PointResult | None
    tightest: dict | None
    seconds: float
    level: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        v = self.variant
        return {
            "file": v.path,
            "name": v.name,
            "quantity": v.quantity,
            "task": v.task,
            "method": v.method,
            "relation": v.relation,
            "bound": v.bound.text,
            "bound_sympy": str(v.bound.sympy),
            "constants": v.constants,
            "verdict": self.verdict,
            "counterexample": None if self.counterexample is None else self.counterexample.to_dict(),
            "tightest_constant": self.tightest,
            "grid_points": len(self.points),
            "confidence_level": self.level,
            "seconds": self.seconds,
            "notes": self.notes,
            "points": [p.to_dict() for p in self.points],
        }


def _measure(variant: Variant, params: dict, level: float, budget: float | None = None) -> tuple[float, float, float]:
    """``(value, lo, hi)`` of the variant's quantity at ``params``; ``budget``: the work budget (estimated seconds,
    :mod:`lipschitz_icl.budget`) of a Monte Carlo measurement (None: the library's default)."""
    from lipschitz_icl.runtime import memo
    from lipschitz_icl.sphere import concentration

    q = variant.quantity
    if q in TAIL_QUANTITIES:
        p = float(concentration.TAILS[q](**params))
        return p, p * (1 - concentration.TAIL_RTOL), p * (1 + concentration.TAIL_RTOL)
    problem = variant.problem(params)
    mc = variant.method == "mc"
    within = {"budget": budget} if mc and budget is not None else {}
    w = params.get("w")
    if w is None and variant.at_w is not None:
        w = float(variant.at_w.evaluate({**params, **variant.constants}))
        if not (w > 0 and math.isfinite(w)):
            raise ParameterError("at_w", "positive and finite at every grid point", w)
    ws = None
    if w is None:
        kwargs = {"rng": variant.seed, "level": level, **within} if mc else {}
        ws = memo.cached_wstar(problem, variant.method, **kwargs)
        if q == "w_star":
            return ws.w_star.value, ws.ci_low, ws.ci_high
        if q == "icl_error":
            lo, hi = ws.loss.confidence_interval(level)
            return ws.loss.value, lo, hi
        w = ws.w_star.value
    if mc:
        loss = memo.cached_loss(problem, w, "averaged", contexts=variant.contexts, rng=variant.seed, **within)
    else:
        loss = memo.cached_loss(problem, w, variant.method)
    part = loss.bias if q == "bias" else loss.noise
    lo, hi = part.confidence_interval(level)
    return part.value, lo, hi


def _measure_point(variant: Variant, params: dict, level: float, budget: float | None = None):
    """The sweep piece of one grid point: ``(value, lo, hi)`` (:func:`_measure`), or the text of the
    :class:`~lipschitz_icl.validation.ParameterError` that makes the point unmeasurable."""
    try:
        return _measure(variant, params, level, budget)
    except ParameterError as exc:
        return str(exc)


def _bound_at(variant: Variant, params: dict):
    """The bound (mpmath) at ``params``; an undefined bound is a :class:`VariantFileError`."""
    try:
        return variant.bound.evaluate({**params, **variant.constants})
    except ExpressionError as exc:
        raise VariantFileError(
            variant.path, variant.lines.get("bound", 1), f"bound undefined at {_fmt_params(params)}: {exc.reason}"
        ) from None


def evaluate_variant(variant: Variant, *, budget: float | None = None) -> VariantResult:
    """Measure the quantity at every grid point, compare with the bound, decide (module docstring).

    ``budget``: the work budget (estimated seconds, :mod:`lipschitz_icl.budget`) of the Monte Carlo
    measurements of the whole grid, split evenly over its points before any is measured (a ``w*`` search caps
    its contexts within its share, inconclusive when that misses its precision; a loss whose contexts exceed
    it is refused); None gives each point the library's default (``check`` gives the command's 60 s: a grid of
    16 ``mc`` points at ``n = 1e7`` ran for hours, 900 s a point).

    The bound is evaluated at every point first (an undefined bound stops before any measurement);
    the measurements are the pieces of one sweep (:func:`lipschitz_icl.runtime.sweep.map_pieces`: serial, or
    on the scheduler of the active sweep session), with a progress bar named after the variant."""
    from lipschitz_icl.runtime import sweep

    start = time.perf_counter()
    if not variant.grid:
        raise VariantFileError(
            variant.path,
            variant.lines.get("domain", 1),
            "no [grid] table: the grid check samples points; `lipschitz-icl prove` decides the [domain]",
        )
    points = variant.points
    m = len(points)
    level = 1.0 - (1.0 - LEVEL) / m if variant.method == "mc" else LEVEL
    bounds = [_bound_at(variant, params) for params in points]
    share = None if budget is None else budget / m
    measured = sweep.map_pieces(
        _measure_point, [(variant, params, level, share) for params in points], desc=variant.name, unit="point"
    )
    results: list[PointResult] = []
    factor_ok = variant.tight_constant is not None
    ratios = []
    for params, bound_mp, measurement in zip(points, bounds, measured):
        if isinstance(measurement, str):
            raise VariantFileError(
                variant.path,
                variant.lines.get("grid", 1),
                f"cannot be evaluated at {_fmt_params(params)}: {measurement}",
            )
        value, lo, hi = measurement
        bound = float(bound_mp)
        verdict = decision.one_sided(lo, hi, bound, variant.relation).verdict
        margin = bound - value if variant.relation == "<=" else value - bound
        relative = margin / abs(bound) if bound != 0 else (math.copysign(math.inf, margin) if margin else 0.0)
        results.append(PointResult(params, value, lo, hi, bound, verdict, margin, relative))
        if factor_ok:
            c = variant.constants[variant.tight_constant]
            doubled = variant.bound.evaluate({**params, **variant.constants, variant.tight_constant: 2 * c})
            factor_ok = c != 0 and bound_mp > 0 and abs(doubled / bound_mp - 2) < 1e-12
            if factor_ok:
                g = bound_mp / c
                ratios.append((float(value / g), float(lo / g), float(hi / g), params))
    verdict = decision.combine(r.verdict for r in results)
    failing = [r for r in results if r.verdict == "fails"]
    counterexample = min(failing, key=lambda r: r.relative_margin) if failing else None
    notes = []
    tightest = None
    if variant.tight_constant is not None and not factor_ok:
        notes.append(
            f"no tightest {variant.tight_constant}: the bound is not {variant.tight_constant} times a "
            "positive function on the grid"
        )
    elif factor_ok and ratios:
        pick = max if variant.relation == "<=" else min
        best = pick(ratios, key=lambda r: r[0])
        tightest = {
            "name": variant.tight_constant,
            "stated": variant.constants[variant.tight_constant],
            "value": best[0],
            "ci_low": pick(r[1] for r in ratios),
            "ci_high": pick(r[2] for r in ratios),
            "kind": "sup" if variant.relation == "<=" else "inf",
            "at": best[3],
        }
    return VariantResult(variant, results, verdict, counterexample, tightest, time.perf_counter() - start, level, notes)


def _fmt_params(params: dict) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in params.items())


def variant_evidence(result: VariantResult) -> Evidence:
    """The :class:`Evidence` record of a checked variant (one quantity per grid point, plus the
    tightest constant when there is one)."""
    v = result.variant
    interval = (
        "the method's numerical error bound"
        if v.method != "mc"
        else f"a {result.level:.4g} normal interval (Bonferroni over {len(result.points)} points)"
    )
    rule = (
        f"measured {v.relation} bound at every grid point, each measurement an interval ({interval}): "
        "holds if every interval lies on the bound's side, fails if any lies wholly on the wrong side, "
        "else inconclusive"
    )
    quantities = [
        Quantity(
            name=f"{v.quantity}({_fmt_params(p.params)})",
            theory=p.bound,
            measured=p.measured,
            ci_low=p.ci_low,
            ci_high=p.ci_high,
            verdict=p.verdict,
            note=f"relative margin {p.relative_margin:+.3g}",
        )
        for p in result.points
    ]
    if result.tightest is not None:
        t = result.tightest
        quantities.append(
            Quantity(
                name=f"tightest {t['name']} ({t['kind']} over the grid)",
                theory=t["stated"],
                measured=t["value"],
                ci_low=t["ci_low"],
                ci_high=t["ci_high"],
                note=f"attained at {_fmt_params(t['at'])}",
            )
        )
    return Evidence(
        claim_id=f"variant:{v.name}",
        paper_ref=v.paper_ref,
        statement=v.statement,
        rule=rule,
        quantities=tuple(quantities),
        verdict=result.verdict,
        seconds=result.seconds,
        rule_name="one-sided",
        margin=f"none: measured {v.relation} bound",
        margin_source="the user's bound, stated in its file",
        group="variants",
        key=f"variants.{v.name}",
        scope="variant",
        points=len(result.points),
    )
