"""Bound expressions: untrusted arithmetic text read into a small syntax tree, evaluated in mpmath.

A bound of a variant file (:mod:`lipschitz_icl.gates.variants`) or a user kernel
(:func:`lipschitz_icl.tasks.zonal.expression_kernel`) is text from outside.  It is read in four steps,
each with a budget, and never passed to ``eval``, ``exec``, ``compile``, ``sympify`` or
``parse_expr``:

1. *screen* (before any parsing): at most :data:`MAX_EXPR_CHARS` characters, every character in the
   alphabet ``A-Z a-z 0-9 _ . + - * / ( ) ,`` or white space (each white-space character becomes one
   space, so a column is a character), no Python keyword, balanced parentheses nested at most
   :data:`MAX_DEPTH` deep;
2. *parse* with :func:`ast.parse` in ``"eval"`` mode (the screened text is short, ASCII and shallow);
3. *count*: at most :data:`MAX_TOKENS` tokens (names, numbers, operators, parentheses, commas);
4. *walk* the syntax tree over a whitelist -- numbers written in decimal (``12``, ``.5``, ``1.``,
   ``2.5e-3``; not ``01``, ``1_0``, ``0x10``, ``1j``), the allowed names, ``+ - * / **`` (binary) and
   ``+ -`` (unary), calls of the functions :data:`FUNCTIONS` by name with their arity -- into tuples
   ``("num", Fraction) | ("var", name) | ("neg", a) | (op, a, b) | ("call", f, args)``, ``op`` in
   ``add sub mul div pow``.  Any other node (attribute, subscript, string, comparison, boolean
   operator, lambda, comprehension, starred argument, keyword argument, tuple, ...) is refused.  The
   depth of a node is ``1 +`` the parentheses around it ``+`` the unary signs and power exponents above
   it; at most :data:`MAX_DEPTH`.

Precedence is Python's: ``-x**2 = -(x**2)``, ``2**3**2 = 2**9``, ``**`` binds tighter than a unary
sign on its left and looser than one on its right (``2**-1 = 0.5``); ``^`` is refused (``use **``).

A number has at most 40 characters and ``|x|`` in ``[1e-300, 1e300]`` (or 0) and is read exactly as a
:class:`~fractions.Fraction`; every constant sub-expression is folded while walking and refused unless
its value is 0 or in ``[1e-300, 1e300]`` (:data:`MAX_CONSTANT`).  Evaluation (:meth:`Expression.evaluate`)
keeps every intermediate ``|x|`` within ``[1e-1000, 1e1000]`` (:data:`MAX_MAGNITUDE_LOG10`), checking
a power's magnitude ``|b log10 |a||`` before computing it.  Every refusal is an
:class:`ExpressionError` naming its 1-based column when it has one.

Ball evaluation (:meth:`Expression.evaluate_ball`, for the prover :mod:`lipschitz_icl.prover.search`) walks the
same tree in python-flint ball arithmetic (``arb``): the variables are balls (a parameter box), and the
result is a ball that contains the expression's value at every point of the box.  Products, quotients
and integer powers of wide balls are taken from the balls' ends (interval arithmetic: the hull of the
ends' products, reciprocals and powers), and ``exp`` is cut at 0, so a wide box does not lose the sign
a midpoint-radius product would.  An operation that is
undefined somewhere on its argument ball (``log``/``sqrt``/fractional power of a ball reaching below 0,
division by a ball holding 0) is refused with :class:`ExpressionError`, so the caller splits the box;
intermediates stay within ``|x| in [1e-1000000, 1e1000000]`` (:data:`BALL_MAGNITUDE_LOG10`; ball
arithmetic stores exponents exactly, so tails such as ``exp(-7000)`` are representable).
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

_LOG10 = 2.302585092994046  # ln 10 (a bound on the magnitude budget's logarithm need not be exact)

__all__ = [
    "ExpressionError",
    "UndefinedValue",
    "Expression",
    "parse_expression",
    "FUNCTIONS",
    "BUILTIN_CONSTANTS",
    "MAX_EXPR_CHARS",
    "MAX_TOKENS",
    "MAX_DEPTH",
    "MAX_CONSTANT",
    "MAX_MAGNITUDE_LOG10",
    "EVAL_DPS",
    "BALL_MAGNITUDE_LOG10",
]

FUNCTIONS = {"sqrt": 1, "log": 1, "exp": 1, "abs": 1, "min": None, "max": None}  # name -> arity (None: >= 2)
BUILTIN_CONSTANTS = {"pi": (mpmath.pi, sp.pi)}
MAX_EXPR_CHARS = 500
MAX_TOKENS = 200
MAX_DEPTH = 40
MAX_CONSTANT = 1e300
MAX_MAGNITUDE_LOG10 = 1000  # budget: every intermediate value of a bound has |x| in [1e-1000, 1e1000] or 0
EVAL_DPS = 30  # working digits of a bound's value; checked against twice that (ill-conditioning)
BALL_MAGNITUDE_LOG10 = 10**6  # budget of the ball evaluation: every intermediate |x| in [1e-1e6, 1e1e6] or 0


class ExpressionError(ValueError):
    """A bound expression outside the grammar or the whitelist (``column`` is 1-based)."""

    def __init__(self, reason: str, column: int | None = None):
        self.reason, self.column = reason, column
        super().__init__(reason if column is None else f"{reason} (column {column})")


class UndefinedValue(ExpressionError):
    """An operation outside its domain at a point: ``sqrt`` or ``log`` of a negative number, ``log`` of zero, a
    division by zero, zero to a negative power, a negative number to a fractional power (not a value out of the
    magnitude budget, nor an ill-conditioned one: those have a value the evaluation cannot hold)."""


# ------------------------------------------------------------------ 1. screen

_ALPHABET = frozenset(string.ascii_letters + string.digits + "_.+-*/(),")
_HINTS = {
    "^": "use ** for powers",
    ".": "attribute access is not allowed",
    "[": "indexing is not allowed",
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    "=": "assignment is not allowed",
    ";": "statements are not allowed",
    ":": "only arithmetic is allowed",
}
_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*", re.ASCII)
_TOKEN_AT = re.compile(rf" *({_NUMBER.pattern}|[A-Za-z_][A-Za-z_0-9]*|\*\*|//|\S)")  # for messages only


def _not_allowed(name: str, names: frozenset) -> str:
    return f"name {name!r} is not allowed (allowed: {', '.join(sorted(names | set(FUNCTIONS)))})"


def _screen(text: str, names: frozenset) -> str:
    """``text`` with every white-space character replaced by a space, after the checks of step 1 on
    length, characters and keywords (the parentheses: :func:`_open_parens`)."""
    if len(text) > MAX_EXPR_CHARS:
        raise ExpressionError(f"expression longer than {MAX_EXPR_CHARS} characters")
    source = re.sub(r"\s", " ", text)
    for column, ch in enumerate(source, start=1):
        if ch != " " and ch not in _ALPHABET:
            hint = _HINTS.get(ch, "")
            raise ExpressionError(f"unexpected character {ch!r}" + (f": {hint}" if hint else ""), column)
    if not source.strip():
        raise ExpressionError("empty expression")
    for word in _WORD.finditer(source):
        if keyword.iskeyword(word.group()):
            raise ExpressionError(_not_allowed(word.group(), names), word.start() + 1)
    return source


def _open_parens(source: str) -> list[int]:
    """``opened[i]``: the parentheses open before position ``i``; refuses an unmatched ``)``, an
    unclosed ``(`` and parentheses nested beyond :data:`MAX_DEPTH`."""
    opened, depth = [], 0
    for i, ch in enumerate(source):
        opened.append(depth)
        if ch == "(":
            depth += 1
            if 1 + depth > MAX_DEPTH:
                raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}", i + 2)
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ExpressionError("unexpected ')'", i + 1)
    if depth:
        raise ExpressionError("unexpected end of expression", len(source) + 1)
    return opened


# ------------------------------------------------------------------ 2. parse, 3. count


def _token_at(source: str, pos: int):
    """``(token, position)`` of the first token at or after ``pos``, or ``(None, len(source))``."""
    m = _TOKEN_AT.match(source, pos)
    return (m.group(1), m.start(1)) if m else (None, len(source))


def _unexpected(source: str, pos: int) -> ExpressionError:
    token, at = _token_at(source, pos)
    if token is None:
        return ExpressionError("unexpected end of expression", len(source) + 1)
    return ExpressionError(f"unexpected {token!r}", at + 1)


def _syntax_error(source: str, lead: int, exc: SyntaxError) -> ExpressionError:
    """``unexpected <token>`` at the token Python stopped at (past the number, for ``2n``), with
    Python's reason unless it is plain ``invalid syntax``."""
    if not exc.offset or exc.lineno != 1:
        return ExpressionError("unexpected end of expression", len(source) + 1)
    pos = lead + exc.offset - 1
    if exc.msg == "invalid decimal literal":
        pos = next((m.end() for m in _NUMBER.finditer(source) if m.start() <= pos <= m.end()), pos)
    error = _unexpected(source, pos)
    if exc.msg.startswith(("invalid syntax", "invalid decimal literal")) or (
        error.column is not None and error.column > len(source)
    ):
        return error
    return ExpressionError(f"{error.reason} ({exc.msg.split(';')[0]})", error.column)


def _parse(source: str) -> ast.expr:
    """The body of ``ast.parse(source, mode="eval")`` (leading spaces skipped; every ``col_offset`` is
    a position in ``source``); a syntax error names the token Python stopped at."""
    lead = len(source) - len(source.lstrip(" "))
    try:
        tree = ast.parse(source[lead:], mode="eval")
    except SyntaxError as exc:
        raise _syntax_error(source, lead, exc) from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError("expression too complex to parse") from None
    for node in ast.walk(tree):
        if hasattr(node, "col_offset") and hasattr(node, "end_col_offset"):
            node.col_offset += lead
            node.end_col_offset += lead
    return tree.body


_ONE_TOKEN = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp)


def _check_tokens(body: ast.expr, source: str) -> None:
    """Tokens = names + numbers + operators (one per ``BinOp``/``UnaryOp``) + ``(`` ``)`` ``,``."""
    count = sum(isinstance(node, _ONE_TOKEN) for node in ast.walk(body)) + sum(map(source.count, "(),"))
    if count > MAX_TOKENS:
        raise ExpressionError(f"expression has more than {MAX_TOKENS} tokens")


# ------------------------------------------------------------------ 4. walk

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_REFUSED = {
    ast.Subscript: "indexing is not allowed",
    ast.Lambda: "only arithmetic is allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.NamedExpr: "assignment is not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.List: "containers are not allowed",
    ast.Set: "containers are not allowed",
    ast.Dict: "containers are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
}


def _end(node: ast.expr) -> int:
    """``node.end_col_offset``: :func:`ast.parse` sets it on every expression (its type allows None)."""
    end = node.end_col_offset
    assert end is not None
    return end


class _Walk:
    """The whitelist walk of step 4 over the parsed ``source`` (``opened`` from :func:`_open_parens`)."""

    def __init__(self, source: str, names: frozenset, opened: list[int]):
        self.source, self.names, self.opened = source, names, opened
        self.rules: dict[type, Callable[[Any, int], Any]] = {
            ast.Constant: self._constant,
            ast.Name: self._name,
            ast.UnaryOp: self._unary,
            ast.BinOp: self._binary,
            ast.Call: self._call,
        }  # the whitelist of node types

    def node(self, node: ast.expr, level: int):
        """The tuple tree of ``node``; ``level`` counts the unary signs and exponents above it."""
        self._nest(node, level)
        rule = self.rules.get(type(node))
        if rule is None:
            raise self._refusal(node)
        return rule(node, level)

    def _nest(self, node: ast.expr, level: int) -> None:
        if 1 + self.opened[node.col_offset] + level > MAX_DEPTH:
            raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}", node.col_offset + 1)

    def _refusal(self, node: ast.expr) -> ExpressionError:
        column = node.col_offset + 1
        if isinstance(node, ast.Attribute):
            dot = self.source.index(".", node.value.end_col_offset)
            return ExpressionError("unexpected character '.': attribute access is not allowed", dot + 1)
        if isinstance(node, ast.Tuple):
            return ExpressionError("unexpected ','", self.source.index(",", node.elts[0].end_col_offset) + 1)
        if isinstance(node, ast.Starred):
            return ExpressionError("unexpected '*'", column)
        reason = _REFUSED.get(type(node), "only arithmetic is allowed")
        return ExpressionError(f"{type(node).__name__} is not allowed: {reason}", column)

    def _constant(self, node: ast.Constant, level: int):
        text = self.source[node.col_offset : node.end_col_offset]
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)) or not _NUMBER.fullmatch(text):
            raise ExpressionError(f"unexpected {text!r}: numbers are written in decimal", node.col_offset + 1)
        return ("num", _number(text, node.col_offset + 1))

    def _name(self, node: ast.Name, level: int):
        if node.id in FUNCTIONS:  # a function that is not called
            token, at = _token_at(self.source, _end(node))
            if token is None:
                raise _unexpected(self.source, at)
            raise ExpressionError(f"expected '(', found {token!r}", at + 1)
        if node.id in self.names:
            return ("var", node.id)
        raise ExpressionError(_not_allowed(node.id, self.names), node.col_offset + 1)

    def _unary(self, node: ast.UnaryOp, level: int):
        self._nest(node, level + 1)  # the sign itself opens a level
        if isinstance(node.op, ast.UAdd):
            return self.node(node.operand, level + 1)
        if isinstance(node.op, ast.USub):
            return _fold(("neg", self.node(node.operand, level + 1)))
        raise _unexpected(self.source, node.col_offset)

    def _binary(self, node: ast.BinOp, level: int):
        kind = _BINARY.get(type(node.op))
        if kind is None:
            raise _unexpected(self.source, self._after(_end(node.left), ")"))
        left = self.node(node.left, level)
        right = self.node(node.right, level + (kind == "pow"))
        return _fold((kind, left, right))

    def _call(self, node: ast.Call, level: int):
        func = node.func
        paren = self._after(_end(func), ")")  # the call's "(", past the parentheses around func
        if not isinstance(func, ast.Name):
            self.node(func, level)  # refuses what is not arithmetic, e.g. an attribute
            raise _unexpected(self.source, paren)
        name = func.id
        if name not in FUNCTIONS:
            if name in self.names:
                raise ExpressionError(f"{name!r} is not a function", paren + 1)
            raise ExpressionError(_not_allowed(name, self.names), func.col_offset + 1)
        if self.source[self._after(_end(func), "")] != "(":  # (sqrt)(x)
            return self._name(func, level)
        if node.keywords:
            raise _unexpected(self.source, node.keywords[0].col_offset)
        close = _end(node) - 1
        if not node.args or "," in self.source[node.args[-1].end_col_offset : close]:
            raise ExpressionError("unexpected ')'", close + 1)
        args = [self.node(arg, level) for arg in node.args]
        arity = FUNCTIONS[name]
        if arity is not None and len(args) != arity:
            raise ExpressionError(f"{name}() takes {arity} argument(s), got {len(args)}", func.col_offset + 1)
        if arity is None and len(args) < 2:
            raise ExpressionError(f"{name}() takes at least 2 arguments", func.col_offset + 1)
        return _fold(("call", name, tuple(args)))

    def _after(self, pos: int, skip: str) -> int:
        """The first position at or after ``pos`` holding neither a space nor a character of ``skip``."""
        while pos < len(self.source) and self.source[pos] in " " + skip:
            pos += 1
        return pos


def _number(text: str, column: int) -> Fraction:
    """The decimal literal ``text`` as an exact fraction, at most 40 characters, ``|x|`` in
    ``[1e-300, 1e300]`` or 0."""
    mantissa_exp = re.search(r"[eE]([+-]?\d+)$", text)
    if len(text) > 40 or (mantissa_exp and abs(int(mantissa_exp.group(1))) > 300):
        raise ExpressionError(
            f"number {text[:20]}{'...' if len(text) > 20 else ''} out of range "
            "(at most 40 characters, |x| in [1e-300, 1e300])",
            column,
        )
    value = Fraction(text)
    if value != 0 and not (Fraction(1, 10**300) <= abs(value) <= 10**300):
        raise ExpressionError(f"number {text} out of range (|x| in [1e-300, 1e300])", column)
    return value


def _tree(text: str, names: frozenset):
    """Steps 1-4 of the module docstring: the tuple tree of ``text`` over ``names``."""
    source = _screen(text, names)
    opened = _open_parens(source)
    body = _parse(source)
    _check_tokens(body, source)
    return _Walk(source, names, opened).node(body, 0)


# ------------------------------------------------------------------ folding and evaluation


def _is_constant(node) -> bool:
    if node[0] == "num":
        return True
    if node[0] == "var":
        return node[1] in BUILTIN_CONSTANTS
    if node[0] == "call":
        return all(_is_constant(a) for a in node[2])
    return all(_is_constant(a) for a in node[1:])


def _fold(node):
    """Refuse constant sub-expressions that are not finite reals of moderate size (|x| <= 1e300)."""
    if _is_constant(node):
        try:
            value = _evaluate_node(node, {})
        except ExpressionError as exc:
            raise ExpressionError(f"constant sub-expression is undefined: {exc.reason}") from None
        if value != 0 and not (mpmath.mpf(1) / MAX_CONSTANT <= abs(value) <= MAX_CONSTANT):
            raise ExpressionError("constant sub-expression out of range (|value| must be in [1e-300, 1e300])")
    return node


def _real(value):
    """``value`` if it is a finite real within the budget ``|x| in [1e-1000, 1e1000]`` (or 0)."""
    if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
        raise ExpressionError("not a finite real number")
    if value != 0 and abs(mpmath.log10(abs(value))) > MAX_MAGNITUDE_LOG10:
        raise ExpressionError(
            f"an intermediate value is out of range (|x| must stay within "
            f"[1e-{MAX_MAGNITUDE_LOG10}, 1e{MAX_MAGNITUDE_LOG10}])"
        )
    return value


def _checked_power(a, b):
    """``a ** b``, refused before it is computed when ``|log10 |a ** b||`` would exceed the budget
    (so ``d**d**d**d`` or ``(1+1e-30)**(1e30)`` cost nothing)."""
    if a == 0 and b < 0:
        raise UndefinedValue("zero to a negative power")
    if a < 0 and b != int(b):
        raise UndefinedValue("negative number to a fractional power")
    if a != 0 and abs(b * mpmath.log10(abs(a))) > MAX_MAGNITUDE_LOG10:
        raise ExpressionError(
            f"a power is out of range (|x| must stay within [1e-{MAX_MAGNITUDE_LOG10}, 1e{MAX_MAGNITUDE_LOG10}])"
        )
    return _real(mpmath.power(a, b))


def _evaluate_node(node, env, dps: int = EVAL_DPS):
    kind = node[0]
    with mpmath.workdps(dps):
        if kind == "num":
            return mpmath.mpf(node[1].numerator) / node[1].denominator
        if kind == "var":
            if node[1] in BUILTIN_CONSTANTS:
                return +BUILTIN_CONSTANTS[node[1]][0]
            return mpmath.mpf(env[node[1]])
        if kind == "neg":
            return -_evaluate_node(node[1], env, dps)
        if kind == "call":
            args = [_evaluate_node(a, env, dps) for a in node[2]]
            name = node[1]
            if name == "min":
                return min(args)
            if name == "max":
                return max(args)
            if name == "abs":
                return abs(args[0])
            if name in ("sqrt", "log") and args[0] < 0:
                raise UndefinedValue(f"{name} of a negative number")
            if name == "log" and args[0] == 0:
                raise UndefinedValue("log of zero")
            if name == "exp" and abs(args[0]) > MAX_MAGNITUDE_LOG10 * 2.302585:
                raise ExpressionError(f"exp() argument out of range (|x| <= {MAX_MAGNITUDE_LOG10 * 2.302585:.0f})")
            return _real(getattr(mpmath, name)(args[0]))
        a, b = _evaluate_node(node[1], env, dps), _evaluate_node(node[2], env, dps)
        if kind == "add":
            return _real(a + b)
        if kind == "sub":
            return _real(a - b)
        if kind == "mul":
            return _real(a * b)
        if kind == "div":
            if b == 0:
                raise UndefinedValue("division by zero")
            return _real(a / b)
        return _checked_power(a, b)


# ------------------------------------------------------------------ ball evaluation (python-flint arb)


@functools.cache
def _ball_limits():
    """``(10^-B, 10^B)`` as balls, ``B`` = :data:`BALL_MAGNITUDE_LOG10` (``ln 10`` as :data:`_LOG10`), once."""
    from flint import arb

    exponent = arb(BALL_MAGNITUDE_LOG10) * _LOG10
    return (-exponent).exp(), exponent.exp()


def _ball(value):
    """``value`` (an ``arb``) if finite and within :data:`BALL_MAGNITUDE_LOG10`, else refused."""
    if not value.is_finite():
        raise ExpressionError("undefined or unbounded on this box")
    smallest, largest = _ball_limits()
    top, bottom = value.abs_upper(), value.abs_lower()
    if top != 0 and (top > largest or (bottom > 0 and bottom < smallest)):
        raise ExpressionError("an intermediate value is out of range on this box")
    return value


def _interval(lo, hi):
    """The ball ``[lo, hi]`` (``lo <= hi``, exact ``arb`` endpoints)."""
    return lo.union(hi)


def _ball_power(a, b):
    """``a ** b`` on balls.  An exact integer exponent ``m``: for a base ball ``[lo, hi]`` that is certainly
    non-zero the hull of ``lo^m`` and ``hi^m`` (``x^m`` is monotone where ``x`` keeps its sign), and for a
    base ball about 0 (``m > 0``) the image ``[lo^m, hi^m]`` (odd ``m``, monotone) or
    ``[0, max(|lo|, |hi|)^m]`` (even ``m``).  Otherwise ``a >= 0`` is required: ``exp(b log a)`` for
    ``a > 0``, and ``[0, hi^b]`` for a ball reaching 0 with ``b > 0`` (``x^b`` increasing, ``0^b = 0``)."""
    from flint import arb

    if b.is_exact() and b.is_integer():
        m = int(b.unique_fmpz())
        if m == 0:
            return arb(1)
        if a > 0 or a < 0:  # x^m is monotone where x keeps its sign: the hull of the ends' powers (no x*x
            # dependency: a ball [2, 50] squared by multiplication reaches below 0)
            low, high = a.lower() ** m, a.upper() ** m
            return _ball(_interval(low.min(high), low.max(high)))
        if m < 0:
            raise ExpressionError("zero to a negative power on this box")
        lo, hi = a.lower(), a.upper()
        if m % 2:
            return _ball(_interval(lo**m, hi**m))
        return _ball(_interval(arb(0), a.abs_upper() ** m))
    if not a >= 0:
        raise ExpressionError("a fractional power of a possibly negative number on this box")
    if a > 0:
        return _ball((b * a.log()).exp())
    if not b > 0:
        raise ExpressionError("zero to a non-positive power on this box")
    return _ball(_interval(arb(0), (b * a.abs_upper().log()).exp()))


def _ball_call(name: str, args):
    from flint import arb

    x = args[0]
    if name in ("min", "max"):
        out = args[0]
        for y in args[1:]:
            out = out.min(y) if name == "min" else out.max(y)
        return out
    if name == "abs":
        return abs(x) if (x >= 0 or x <= 0) else _interval(arb(0), x.abs_upper())
    if name == "sqrt":
        if not x >= 0:
            raise ExpressionError("sqrt of a possibly negative number on this box")
        return _ball(x.sqrt() if x > 0 else _interval(arb(0), x.abs_upper().sqrt()))
    if name == "log":
        if not x > 0:
            raise ExpressionError("log of a number that may be <= 0 on this box")
        return _ball(x.log())
    return _ball(x.exp()).nonnegative_part()  # exp > 0: a wide ball's lower end below 0 is cut at 0


def _ball_divide(a, b):
    if not (b > 0 or b < 0):
        raise ExpressionError("division by a number that may be 0 on this box")
    return _ball(_product(a, _reciprocal(b)))


_BALL_OPERATIONS = {
    "add": lambda a, b: _ball(a + b),
    "sub": lambda a, b: _ball(a - b),
    "mul": lambda a, b: _ball(_product(a, b)),
    "div": _ball_divide,
    "pow": _ball_power,
}


def _ball_evaluator(node) -> Callable:
    """The function ``env -> ball`` of ``node`` (``env``: name -> ``arb``), the tree walked once into closures:
    a number the exact ball of its fraction, an operation as :data:`_BALL_OPERATIONS` and :func:`_ball_call`
    on its operands evaluated left to right."""
    from flint import arb

    kind = node[0]
    if kind == "num":
        value = node[1]
        if value.denominator == 1:
            integer = arb(value.numerator)
            return lambda env: integer
        return lambda env: arb(value.numerator) / value.denominator
    if kind == "var":
        name = node[1]
        return (lambda env: arb.pi()) if name in BUILTIN_CONSTANTS else (lambda env: env[name])
    if kind == "neg":
        inner = _ball_evaluator(node[1])
        return lambda env: -inner(env)
    if kind == "call":
        function, arguments = node[1], tuple(_ball_evaluator(a) for a in node[2])
        return lambda env: _ball_call(function, [argument(env) for argument in arguments])
    left, right, operation = _ball_evaluator(node[1]), _ball_evaluator(node[2]), _BALL_OPERATIONS[kind]
    return lambda env: operation(left(env), right(env))


_EVALUATORS: dict = {}  # id(tree) -> (tree, its evaluator); the tree is kept, so its id stays its own


def _evaluator_of(tree) -> Callable:
    """:func:`_ball_evaluator` of ``tree``, once per tree object (by identity: hashing a tree costs a tenth)."""
    entry = _EVALUATORS.get(id(tree))
    if entry is None:
        if len(_EVALUATORS) >= 1024:
            _EVALUATORS.clear()
        entry = _EVALUATORS[id(tree)] = (tree, _ball_evaluator(tree))
    return entry[1]


def _product(a, b):
    """``a * b``: for two inexact balls the hull of the four products of their ends (interval
    multiplication: a midpoint-radius product of two wide balls reaches far beyond the true range,
    ``[-50, -2] * [3.4, 2500]`` to ``+6e4``); else the ball product."""
    if a.is_exact() or b.is_exact():
        return a * b
    ends = [x * y for x in (a.lower(), a.upper()) for y in (b.lower(), b.upper())]
    low, high = ends[0], ends[0]
    for end in ends[1:]:
        low, high = low.min(end), high.max(end)
    return _interval(low, high)


def _reciprocal(b):
    """``1 / b`` for a ball certainly of one sign: the hull of the ends' reciprocals (``1/x`` is monotone)."""
    if b.is_exact():
        return 1 / b
    low, high = 1 / b.upper(), 1 / b.lower()
    return _interval(low.min(high), low.max(high))


def _to_sympy(node, symbols):
    kind = node[0]
    if kind == "num":
        return sp.Rational(node[1].numerator, node[1].denominator)
    if kind == "var":
        return BUILTIN_CONSTANTS[node[1]][1] if node[1] in BUILTIN_CONSTANTS else symbols[node[1]]
    if kind == "neg":
        return -_to_sympy(node[1], symbols)
    if kind == "call":
        args = [_to_sympy(a, symbols) for a in node[2]]
        func = {"sqrt": sp.sqrt, "log": sp.log, "exp": sp.exp, "abs": sp.Abs, "min": sp.Min, "max": sp.Max}
        return func[node[1]](*args)
    a, b = _to_sympy(node[1], symbols), _to_sympy(node[2], symbols)
    if kind == "pow" and a.is_Rational and b.is_Rational:
        # never SymPy's exact rational power: (1+1e-30)**(1e30) would not finish; a 30-digit float
        with mpmath.workdps(2 * EVAL_DPS):
            value = _checked_power(mpmath.mpf(a.p) / a.q, mpmath.mpf(b.p) / b.q)
        return sp.Float(mpmath.nstr(value, 30), 30)
    if kind == "pow":
        return a**b
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b}[kind]()


@dataclass(frozen=True)
class Expression:
    """A parsed bound: the syntax tree, its SymPy form (``sympy``) and its source ``text``."""

    text: str
    tree: tuple
    sympy: sp.Expr
    names: frozenset

    def to_sympy(self, values: dict) -> sp.Expr:
        """The SymPy form with ``values`` (name -> SymPy object: a symbol with the caller's assumptions,
        or an exact number) for the names; a power of two exact numbers is checked against the magnitude
        budget first and becomes a 30-digit float (never SymPy's exact power: ``d**d**d`` at ``d = 512``
        is refused, not computed)."""
        return _to_sympy(self.tree, values)

    def evaluate(self, env: dict) -> mpmath.mpf:
        """Value at ``env`` (name -> number) in 30-digit mpmath arithmetic, within the budget
        ``|x| in [1e-1000, 1e1000]`` for every intermediate; the value is recomputed with 60 digits and
        an expression whose two values differ beyond 1e-15 relative is refused as ill-conditioned
        (``(1+1e-30)**(1e30)`` is not ``e`` at 30 digits)."""
        value = _evaluate_node(self.tree, env)
        check = _evaluate_node(self.tree, env, 2 * EVAL_DPS)
        if abs(value - check) > mpmath.mpf("1e-15") * abs(check):
            raise ExpressionError("ill-conditioned: its value changes beyond 1e-15 between 30 and 60 digits")
        return value

    def undefined_at(self, env: dict) -> str | None:
        """Why the expression has no value at ``env`` (name -> number): an operation outside its domain
        (:class:`UndefinedValue`) at 30 and again at 60 digits (a value that only rounds below 0 at 30 digits, as
        ``(h - 0.7)**2`` written out at ``h = 0.7``, is defined); None where it has one, or where the evaluation
        fails for another reason (out of the magnitude budget, ill-conditioned)."""
        reason = None
        for dps in (EVAL_DPS, 2 * EVAL_DPS):
            try:
                _evaluate_node(self.tree, env, dps)
            except UndefinedValue as exc:
                reason = reason or exc.reason
            except ExpressionError:
                return None
            else:
                return None
        return reason

    def evaluate_ball(self, env: dict):
        """A python-flint ``arb`` ball containing the value at every point of the balls ``env`` (name ->
        ``arb``, or a number, taken exactly), at the working precision of ``flint.ctx``; an operation
        undefined somewhere on its argument raises :class:`ExpressionError` (module docstring)."""
        from flint import arb

        balls = {k: v if isinstance(v, arb) else arb(v) for k, v in env.items()}
        return _evaluator_of(self.tree)(balls)


def parse_expression(text: str, names) -> Expression:
    """Parse ``text`` over the variables/constants ``names`` (plus ``pi``); see the module docstring."""
    if not isinstance(text, str):
        raise ExpressionError("the expression must be a string")
    allowed = frozenset(names) | frozenset(BUILTIN_CONSTANTS)
    tree = _tree(text, allowed)
    symbols = {name: sp.Symbol(name, positive=True) for name in allowed if name not in BUILTIN_CONSTANTS}
    return Expression(text, tree, _to_sympy(tree, symbols), allowed)
