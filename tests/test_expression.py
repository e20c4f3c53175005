"""The bound-expression reader (lipschitz_icl.expression): a whitelist walk of ``ast.parse``.

The two tables below were computed by the hand-written tokenizer and recursive-descent parser that this
module replaced (lipschitz_icl.gates.variants at commit 7cfe18c), by running it on these texts: the values
(``mpmath.nstr(value, 30)``), SymPy forms and refusal messages (with their columns) must not change.
"""

import mpmath
import pytest

from _work import work
from lipschitz_icl import expression
from lipschitz_icl.expression import MAX_DEPTH, MAX_EXPR_CHARS, MAX_TOKENS, ExpressionError, parse_expression
from lipschitz_icl.gates import variants

NAMES = {"d", "n", "L", "sigma", "C", "h"}
ENV = {"d": 5, "n": 1000, "L": 1.5, "sigma": 0.25, "C": 2.0, "h": 0.1}

# (text, value at ENV, str(sympy)) as computed by the parser before the ast rewrite
OLD_VALUES = [
    ("-2**2", "-4.0", "-4.00000000000000000000000000000"),
    ("2**-1", "0.5", "0.500000000000000000000000000000"),
    ("2**3**2", "512.0", "512.000000000000000000000000000"),
    ("(1+2)*3 - 4/8", "8.5", "17/2"),
    ("+3 - -2", "5.0", "5"),
    ("sqrt(16) + log(exp(2))", "6.0", "6"),
    ("min(3, 1, 2) + max(1, 5)", "6.0", "6"),
    ("abs(-2.5e-1)", "0.25", "1/4"),
    ("n*L**2/sigma**2", "36000.0", "L**2*n/sigma**2"),
    (".5 + 1.", "1.5", "3/2"),
    ("1.e2 + 1E-3 + 7.25e+1", "172.501", "172501/1000"),
    ("C * (n*L**2/sigma**2)**(2/(d+2))", "40.0710488531880063294827424978", "C*(L**2*n/sigma**2)**(2/(d + 2))"),
    ("C*exp(-d*h**2/2)", "1.95061982405666533183991524523", "C*exp(-d*h**2/2)"),
    ("pi * d / 3", "5.23598775598298873077107230547", "pi*d/3"),
    ("sqrt(d) * log(n) / n", "0.0154462103757370827308744231879", "sqrt(d)*log(n)/n"),
    ("(n / log(n))**(-2/(d+2))", "0.2413613343378702237426963399", "(n/log(n))**(-2/(d + 2))"),
    ("2**-3**2", "0.001953125", "0.00195312500000000000000000000000"),
    ("-(-(-d))", "-5.0", "-d"),
    ("max(d, n, L, sigma) - min(h, C)", "999.899999999999999994448884877", "Max(L, d, n, sigma) - Min(C, h)"),
    ("1/3 + 1/7", "0.47619047619047619047619047619", "10/21"),
    ("0.1 + 0.2", "0.3", "3/10"),
    ("123456789012345678901234567890 / 7", "17636684144620811271604938270.0", "17636684144620811271604938270"),
    ("1e-300 * 1e300", "1.0", "1"),
    ("exp(-n/100) + 1", "1.00004539992976248485153559152", "1 + exp(-n/100)"),
    ("d\t+\nn", "1005.0", "d + n"),
    ("  d + 1  ", "6.0", "d + 1"),
    ("abs(h - 0.5) ** 0.5", "0.632455532033675862011236873166", "sqrt(Abs(h - 1/2))"),
    ("log(1 + 1/n) * n", "0.999500333083533166809398920633", "n*log(1 + 1/n)"),
    ("(d - 1) ** (1/3)", "1.58740105196819947475170563927", "(d - 1)**(1/3)"),
    (
        "sigma**2 * n**(-2/(d+2)) * L**(2*d/(d+2))",
        "0.0154987296119180417166971773505",
        "L**(2*d/(d + 2))*sigma**2/n**(2/(d + 2))",
    ),
    ("sqrt(sqrt(sqrt(n)))", "2.37137370566165526165175275748", "n**(1/8)"),
    ("2 ** (d / 2) * pi ** 0.5", "10.0265130985240020096630611392", "2**(d/2)*sqrt(pi)"),
    ("- 2 ** 0.5", "-1.41421356237309504880168872421", "-1.41421356237309504880168872421"),
    ("+-+-d", "5.0", "d"),
    ("(((d)))", "5.0", "d"),
    ("1.", "1.0", "1"),
    ("007.5", "7.5", "15/2"),
    ("1e0", "1.0", "1"),
    ("max(-1, -2)", "-1.0", "-1"),
    ("--------------------------------------d", "5.0", "d"),
    ("2**2**2", "16.0", "16.0000000000000000000000000000"),
]

# (text, str(ExpressionError)) as raised by the parser before the ast rewrite
OLD_REFUSALS = [
    ("__import__('os').system('true')", 'unexpected character "\'": strings are not allowed (column 12)'),
    (
        "__import__",
        "name '__import__' is not allowed "
        "(allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    ("(lambda: 1)()", "unexpected character ':': only arithmetic is allowed (column 8)"),
    (
        "lambda",
        "name 'lambda' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    ("n.__class__", "unexpected character '.': attribute access is not allowed (column 2)"),
    ("n[0]", "unexpected character '[': indexing is not allowed (column 2)"),
    ("n ^ 2", "unexpected character '^': use ** for powers (column 3)"),
    (
        "eval(n)",
        "name 'eval' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    ("n(2)", "'n' is not a function (column 2)"),
    ("sqrt(n, n)", "sqrt() takes 1 argument(s), got 2 (column 1)"),
    ("max(n)", "max() takes at least 2 arguments (column 1)"),
    (
        "10**10**10",
        "constant sub-expression is undefined: a power is out of range (|x| must stay within [1e-1000, 1e1000])",
    ),
    ("1e400", "number 1e400 out of range (at most 40 characters, |x| in [1e-300, 1e300]) (column 1)"),
    ("log(-1)", "constant sub-expression is undefined: log of a negative number"),
    ("1/0", "constant sub-expression is undefined: division by zero"),
    ("(n", "unexpected end of expression (column 3)"),
    ("n n", "unexpected 'n' (column 3)"),
    ("", "empty expression"),
    ("1e-400", "number 1e-400 out of range (at most 40 characters, |x| in [1e-300, 1e300]) (column 1)"),
    ("n)", "unexpected ')' (column 2)"),
    ("1.5.5", "unexpected '.5' (column 4)"),
    ("2n", "unexpected 'n' (column 2)"),
    ("n +", "unexpected end of expression (column 4)"),
    ("f()", "name 'f' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)"),
    ("sqrt()", "unexpected ')' (column 6)"),
    ("sqrt", "unexpected end of expression (column 5)"),
    ("sqrt + 1", "expected '(', found '+' (column 6)"),
    ("(sqrt)(n)", "expected '(', found ')' (column 6)"),
    ("1,2", "unexpected ',' (column 2)"),
    ("max(*n)", "unexpected '*' (column 5)"),
    ("max(**n)", "unexpected '**' (column 5)"),
    ("n.real", "unexpected character '.': attribute access is not allowed (column 2)"),
    ("1 .real", "unexpected character '.': attribute access is not allowed (column 3)"),
    ("sqrt(n,)", "unexpected ')' (column 8)"),
    ("max(n,,n)", "unexpected ',' (column 7)"),
    ("n +* n", "unexpected '*' (column 4)"),
    ("*n", "unexpected '*' (column 1)"),
    (
        "not n",
        "name 'not' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    (
        "True",
        "name 'True' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    (
        "None",
        "name 'None' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    ("n < 1", "unexpected character '<' (column 3)"),
    ("n == 1", "unexpected character '=': assignment is not allowed (column 3)"),
    ("n % 2", "unexpected character '%' (column 3)"),
    ("~n", "unexpected character '~' (column 1)"),
    ("n @ n", "unexpected character '@' (column 3)"),
    ("n & 1", "unexpected character '&' (column 3)"),
    ("n | 1", "unexpected character '|' (column 3)"),
    ("n << 1", "unexpected character '<' (column 3)"),
    ("'a'", 'unexpected character "\'": strings are not allowed (column 1)'),
    ("f'x'", 'unexpected character "\'": strings are not allowed (column 2)'),
    ("[n]", "unexpected character '[': indexing is not allowed (column 1)"),
    ("{n}", "unexpected character '{' (column 1)"),
    ("{n: 1}", "unexpected character '{' (column 1)"),
    ("n := 1", "unexpected character ':': only arithmetic is allowed (column 3)"),
    ("n; n", "unexpected character ';': statements are not allowed (column 2)"),
    ("n = 1", "unexpected character '=': assignment is not allowed (column 3)"),
    ("#", "unexpected character '#' (column 1)"),
    ("\\", "unexpected character '\\\\' (column 1)"),
    ("ñ", "unexpected character 'ñ' (column 1)"),
    ("ｎ", "unexpected character 'ｎ' (column 1)"),
    ("----------------------------------------n", "expression nested deeper than 40 (column 40)"),
    ("----------------------------------------d", "expression nested deeper than 40 (column 40)"),
    ("x", "name 'x' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)"),
    ("d)(", "unexpected ')' (column 2)"),
    ("sqrt(-1)", "constant sub-expression is undefined: sqrt of a negative number"),
    ("log(0)", "constant sub-expression is undefined: log of zero"),
    ("exp(1e5)", "constant sub-expression is undefined: exp() argument out of range (|x| <= 2303)"),
    ("0**-1", "constant sub-expression is undefined: zero to a negative power"),
    ("(-8)**(1/3)", "constant sub-expression is undefined: negative number to a fractional power"),
    (
        "2**2**2**2**2**2",
        "constant sub-expression is undefined: a power is out of range (|x| must stay within [1e-1000, 1e1000])",
    ),
    ("10**300 * 10**300 * d", "constant sub-expression out of range (|value| must be in [1e-300, 1e300])"),
    ("1e300*1e300", "constant sub-expression out of range (|value| must be in [1e-300, 1e300])"),
    (
        "await n",
        "name 'await' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    (
        "yield n",
        "name 'yield' is not allowed (allowed: C, L, abs, d, exp, h, log, max, min, n, pi, sigma, sqrt) (column 1)",
    ),
    ("n.real()", "unexpected character '.': attribute access is not allowed (column 2)"),
    ("sqrt(x=1)", "unexpected character '=': assignment is not allowed (column 7)"),
    ("1e5.5", "unexpected '.5' (column 4)"),
    ("min(1)", "min() takes at least 2 arguments (column 1)"),
    ("abs(1, 2)", "abs() takes 1 argument(s), got 2 (column 1)"),
    ("log(1, 2)", "log() takes 1 argument(s), got 2 (column 1)"),
    ("pi(1)", "'pi' is not a function (column 3)"),
    ("d()", "'d' is not a function (column 2)"),
    ("sqrt(n)(n)", "unexpected '(' (column 8)"),
    ("((n)", "unexpected end of expression (column 5)"),
    ("n))", "unexpected ')' (column 2)"),
    (")", "unexpected ')' (column 1)"),
    ("(", "unexpected end of expression (column 2)"),
    ("2**", "unexpected end of expression (column 4)"),
    ("*", "unexpected '*' (column 1)"),
    (",", "unexpected ',' (column 1)"),
]


@pytest.mark.parametrize("text, value, sympy_form", OLD_VALUES, ids=range(len(OLD_VALUES)))
def test_values_and_sympy_forms_are_those_of_the_former_parser(text, value, sympy_form):
    expr = parse_expression(text, NAMES)
    assert mpmath.nstr(expr.evaluate(ENV), 30) == value
    assert str(expr.sympy) == sympy_form


@pytest.mark.parametrize("text, message", OLD_REFUSALS, ids=range(len(OLD_REFUSALS)))
def test_refusals_are_those_of_the_former_parser(text, message):
    with pytest.raises(ExpressionError) as info:
        parse_expression(text, NAMES).evaluate(ENV)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "text, message",
    [
        ("1\u0661", "unexpected character '\u0661'"),  # an Arabic-Indic digit (the former parser read 11)
        ("\uff4e", "unexpected character"),  # fullwidth n: Python would normalise it to 'n'
        ("01", "leading zeros"),  # Python's literal rule (the former parser read 1)
        ("0x10", "decimal"),
        ("1_0", "decimal"),
        ("1j", "decimal"),
        ("...", "decimal"),
        ("n // n", "unexpected '//'"),
        ("n and n", "name 'and' is not allowed"),
    ],
)
def test_texts_python_reads_differently_are_refused(text, message):
    with pytest.raises(ExpressionError, match=message):
        parse_expression(text, NAMES)


def test_unicode_white_space_is_a_space():
    assert float(parse_expression("n\u00a0+\t1\n", NAMES).evaluate(ENV)) == 1001.0


def _walk(text, names=frozenset({"a", "b"})):
    """Steps 2-4 only (no screen): the walk must refuse by itself what the screen also stops."""
    body = expression._parse(text)
    return expression._Walk(text, frozenset(names), expression._open_parens(text)).node(body, 0)


@pytest.mark.parametrize(
    "text",
    [
        "a < b",
        "a == b",
        "a and b",
        "not a",
        "a if b else a",
        "lambda: a",
        "(a := 1)",
        "a[0]",
        "a[0:1]",
        "[a]",
        "{a}",
        "{a: b}",
        "(a, b)",
        "[a for a in b]",
        "{a for a in b}",
        "{a: a for a in b}",
        "(a for a in b)",
        "'s'",
        "b's'",
        "f'{a}'",
        "a.b",
        "a.b(1)",
        "~a",
        "a % b",
        "a // b",
        "a @ b",
        "a << b",
        "a | b",
        "a & b",
        "a ^ b",
        "True",
        "None",
        "...",
        "1j",
        "0x10",
        "1_0",
        "sqrt(a, *b)",
        "max(a, b=1)",
        "max(a, **b)",
        "exp(a)(b)",
        "a(b)",
        "__import__(a)",
        "await a",
        "(yield a)",
        "sqrt",
    ],
)
def test_the_walk_refuses_every_node_outside_the_whitelist(text):
    with pytest.raises(ExpressionError):
        _walk(text)


def test_the_walk_builds_the_documented_tree():
    assert _walk("-a**2 + sqrt(b) / 2") == (
        "add",
        ("neg", ("pow", ("var", "a"), ("num", 2))),
        ("div", ("call", "sqrt", (("var", "b"),)), ("num", 2)),
    )


@pytest.mark.parametrize(
    "text, ok",
    [
        ("x" * MAX_EXPR_CHARS, False),  # a name outside the list, but within the length
        ("x" * (MAX_EXPR_CHARS + 1), "longer than"),
        ("-n" + "+n" * ((MAX_TOKENS - 2) // 2), True),  # exactly MAX_TOKENS tokens
        ("--n" + "+n" * ((MAX_TOKENS - 2) // 2), "more than"),
        ("(" * (MAX_DEPTH - 1) + "n" + ")" * (MAX_DEPTH - 1), True),
        ("(" * MAX_DEPTH + "n" + ")" * MAX_DEPTH, "nested deeper"),
        ("-" * (MAX_DEPTH - 1) + "n", True),
        ("-" * MAX_DEPTH + "n", "nested deeper"),
        ("n**" * (MAX_DEPTH - 1) + "n", True),
        ("n**" * MAX_DEPTH + "n", "nested deeper"),
        ("sqrt(" * (MAX_DEPTH - 1) + "n" + ")" * (MAX_DEPTH - 1), True),
        ("sqrt(" * MAX_DEPTH + "n" + ")" * MAX_DEPTH, "nested deeper"),
    ],
)
def test_budgets_hold_at_their_edges(text, ok):
    if ok is True:
        parse_expression(text, {"n"})
    else:
        with pytest.raises(ExpressionError, match=ok or "not allowed"):
            parse_expression(text, {"n"})


@pytest.mark.parametrize(
    "text",
    [
        "-" * 499 + "n",
        "+" * 499 + "n",
        "n**" * 166 + "n",
        "n" + "+n" * 249,
        "(" * 250 + ")" * 250,
        "sqrt(" * 100,
        "9" * 500,
        "1" * 499 + "j",
    ],
)
def test_texts_that_strain_ast_parse_are_refused_before_any_work(text):
    done = work(lambda: parse_expression(text, {"n"}))
    assert isinstance(done.error, ExpressionError) and done.within_refusal, done


def test_no_text_reaches_python_evaluation(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("eval/compile called")

    # once before the patch: SymPy imports modules lazily on first use (an import executes code), which is
    # not the reader evaluating text; the reading under the patch must then call neither eval nor exec
    parse_expression("C * (n*L**2/sigma**2)**(2/(d+2))", NAMES).evaluate(ENV)
    monkeypatch.setattr("builtins.eval", forbidden)
    monkeypatch.setattr("builtins.exec", forbidden)
    expr = parse_expression("C * (n*L**2/sigma**2)**(2/(d+2))", NAMES)
    assert float(expr.evaluate(ENV)) == pytest.approx(40.07104885318800633, rel=1e-15)


def test_variants_re_exports_the_reader():
    assert variants.parse_expression is parse_expression and variants.ExpressionError is ExpressionError
    assert variants.MAX_MAGNITUDE_LOG10 == expression.MAX_MAGNITUDE_LOG10


def test_undefined_at_names_a_domain_error_at_30_and_60_digits_only():
    """The prover refuses a bound undefined at a point (sqrt of a negative number, a division by zero); a value
    that only rounds below 0 at 30 digits, or one out of the magnitude budget, is not 'undefined' (a review
    found exp(-6000 h) + sqrt(exp(h) - exp(h)) refused as undefined)."""
    assert parse_expression("sqrt((h - 0.7)**2 - 0.01)", {"h"}).undefined_at({"h": 0.75}) == "sqrt of a negative number"
    assert parse_expression("1/(h - 0.5)", {"h"}).undefined_at({"h": 0.5}) == "division by zero"
    rounding = parse_expression("sqrt(h**2 - 1.4*h + 0.49)", {"h"})  # (h - 0.7)^2 >= 0, below 0 at 30 digits
    with pytest.raises(ExpressionError, match="sqrt of a negative number"):
        rounding.evaluate({"h": 0.7})
    assert rounding.undefined_at({"h": 0.7}) is None
    assert parse_expression("exp(-6000*h) + sqrt(exp(h) - exp(h))", {"h"}).undefined_at({"h": 0.75}) is None
