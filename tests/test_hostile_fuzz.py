"""Hypothesis fuzzing (issue #11) of the bound-expression grammar and of numeric CLI arguments:
whatever the text, the outcome is a finite number within the budget or one ExpressionError /
one-line exit 2 -- never another exception, never a non-finite number with exit 0, never slow."""

from __future__ import annotations

import json
import math

import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _work import work
from lipschitz_icl.cli import main
from lipschitz_icl.gates.variants import MAX_MAGNITUDE_LOG10, ExpressionError, parse_expression
from lipschitz_icl.validation import ParameterError, parse_int, parse_real

NUMBERS = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["1e300", "1e-300", "9" * 45, "1e301", "0.5", "1e30", "1e-30", "0", "2.5e10", "7"]),
)
ATOMS = st.one_of(NUMBERS, st.sampled_from(["d", "n", "pi", "d", "n"]))
OPS = st.sampled_from(["+", "-", "*", "/", "**", "**", "**"])
FUNCS = st.sampled_from(["sqrt", "log", "exp", "abs", "min", "max"])


@st.composite
def expressions(draw, depth=0):
    """Random token strings mostly inside the grammar (and sometimes outside it)."""
    kind = draw(st.integers(0, 5 if depth < 4 else 0))
    if kind == 0:
        return draw(ATOMS)
    if kind in (1, 2, 3):
        return f"{draw(expressions(depth + 1))} {draw(OPS)} {draw(expressions(depth + 1))}"
    if kind == 4:
        f = draw(FUNCS)
        args = [draw(expressions(depth + 1)) for _ in range(2 if f in ("min", "max") else 1)]
        return f"{f}({', '.join(args)})"
    return draw(st.sampled_from(["(", "-", ""])) + draw(expressions(depth + 1)) + draw(st.sampled_from([")", "", "^2"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=expressions(), d=st.sampled_from([2, 3, 10, 512]), n=st.sampled_from([1, 100, 10**15]))
def test_expression_grammar_fuzz(text, d, n):
    values = []

    def read():
        values.append(parse_expression(text, {"d", "n"}).evaluate({"d": d, "n": n}))

    work(read)  # the first reading warms up lazy imports and caches; the second is counted
    values.clear()
    done = work(read)
    if done.error is None:
        (value,) = values
        assert isinstance(value, mpmath.mpf) and mpmath.isfinite(value)
        assert value == 0 or abs(mpmath.log10(abs(value))) <= MAX_MAGNITUDE_LOG10
    else:
        assert isinstance(done.error, ExpressionError), (text, done)
    assert done.within_refusal, (text, done)  # read or refused within the parser's budgets: no long computation


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=list("0123456789eE+-.x_ ,１٣"), max_size=45),
        st.sampled_from(["inf", "nan", "-inf", "1e400", "1e-400", "0x10", "1_0"]),
    )
)
def test_number_parsers_fuzz(text):
    for parse in (
        lambda t: parse_int("n", t, minimum=1, maximum=10**150),
        lambda t: parse_real("L", t, minimum=1e-6, maximum=1e6),
    ):
        try:
            value = parse(text)
        except ParameterError as exc:
            assert exc.name in ("n", "L") and "\n" not in str(exc)
        else:
            assert math.isfinite(value) and text.isascii()


@settings(max_examples=300, deadline=None)
@given(k=st.integers(1, 10**150))
def test_parse_int_is_exact(k):
    assert parse_int("n", str(k), minimum=1, maximum=10**150) == k
    assert parse_int("n", f"{k}.0", minimum=1, maximum=10**150) == k


ARG = st.one_of(
    st.sampled_from(
        [
            "1",
            "3",
            "200",
            "1e14",
            "1e150",
            "1e151",
            "1e300",
            "0",
            "-1",
            "0.5",
            "nan",
            "inf",
            "1e-300",
            "512",
            "513",
            "1e8",
            "1e9",
            "１",
            "",
            "9" * 50,
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**20), 10**20).map(str),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(d=ARG, n=ARG, L=ARG, sigma=ARG, w=ARG)
def test_numeric_cli_arguments_fuzz(capsys, d, n, L, sigma, w):
    """Each request answered or refused in one line; either within the work of a refusal (the asymptotic loss
    is a closed form; the second run is counted, after the first one's imports)."""
    argv = [
        "loss",
        "--task",
        "affine",
        "--d",
        d,
        "--n",
        n,
        "--L",
        L,
        "--sigma",
        sigma,
        "--w",
        w,
        "--method",
        "asymptotic",
        "--json",
    ]
    codes = []
    main(argv)
    capsys.readouterr()
    done = work(lambda: codes.append(main(argv)))
    out, err = capsys.readouterr()
    (code,) = codes
    assert code in (0, 2), (code, err)
    if code == 0:
        payload = json.loads(out)
        assert err == "" and all(math.isfinite(payload[k]) for k in ("loss", "bias", "noise", "ci_low", "ci_high"))
    else:
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert done.error is None and done.within_refusal, done
