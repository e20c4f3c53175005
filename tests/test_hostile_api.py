"""Hostile input over the Python API and the expression evaluator (issue #11): one error path
(:class:`ParameterError`, a ``ValueError`` naming the parameter the caller passed), bombs refused
in bounded time, and the numerics that used to return wrong numbers."""

from __future__ import annotations

import math

import mpmath
import pytest

from _work import refusal_work
from lipschitz_icl import ParameterError, make_problem, sphere
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.gates.variants import ExpressionError, parse_expression
from lipschitz_icl.loss.asymptotic import asymptotic_loss
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.model.train import train
from lipschitz_icl.optimum import wstar, wstar_mc
from lipschitz_icl.validation import parse_int, parse_real

P = {"task": "affine", "d": 3, "n": 200, "L": 1.0, "sigma": 0.5}


def problem(**over):
    return make_problem(**{**P, **over})


API_CASES = [
    ("B-text", lambda: make_problem("lowrank-linear", 3, 10, 1.0, 0.1, B="abc"), "B"),
    ("B-nested-junk", lambda: make_problem("lowrank-linear", 3, 10, 1.0, 0.1, B=[[1, "x"]]), "B"),
    ("L-1e300", lambda: problem(L=1e300), "L"),
    ("L-tiny", lambda: problem(L=1e-300), "L"),
    ("sigma-1e300", lambda: problem(sigma=1e300), "sigma"),
    ("sigma-nan", lambda: problem(sigma=float("nan")), "sigma"),
    ("d-huge", lambda: problem(d=10**20), "d"),
    ("d-text", lambda: problem(d="3"), "d"),
    ("n-1e200", lambda: problem(n=10**200), "n"),
    ("n-inf", lambda: problem(n=float("inf")), "n"),
    ("n-bool", lambda: problem(n=True), "n"),
    ("value-nan", lambda: icl_loss(problem(), 1.0, value=float("nan"), contexts=10), "value"),
    ("w-negative-averaged", lambda: icl_loss(problem(), -1.0, contexts=10), "w"),
    ("w-1e300", lambda: icl_loss(problem(), 1e300, method="exact"), "w"),
    ("w-nan", lambda: icl_loss(problem(), float("nan"), method="asymptotic"), "w"),
    ("asymptotic-w-1e12", lambda: asymptotic_loss(problem(), 1e12), "w"),
    ("exact-w-negative", lambda: exact_loss(problem(), -1.0), "w"),
    ("contexts-huge", lambda: icl_loss(problem(), 1.0, contexts=10**9), "contexts"),
    ("memory-budget", lambda: icl_loss(problem(d=512, n=10**7), 1.0, method="naive", contexts=2), "n"),
    ("work-budget", lambda: icl_loss(problem(n=10**6), 1.0, contexts=100000), "contexts"),
    ("wstar-n-1", lambda: wstar(problem(n=1), "exact"), "n"),
    ("wstar-sigma-0", lambda: wstar(problem(sigma=0.0), "exact"), "sigma"),
    ("wstar-method", lambda: wstar(problem(), "newton"), "method"),
    ("mc-rel-precision", lambda: wstar_mc(problem(), rel_precision=1e-12), "rel_precision"),
    ("mc-seed", lambda: wstar_mc(problem(), rng=-1), "rng"),
    ("mc-memory", lambda: wstar_mc(problem(n=10**7)), "n"),
    ("train-steps", lambda: train(problem(), steps=10**7), "steps"),
    ("train-lr", lambda: train(problem(), steps=1, lr=1e300), "lr"),
    ("loss-no-problem", lambda: icl_loss(None, 1.0), "problem"),
    ("loss-text-problem", lambda: icl_loss("abc", 1.0, method="exact"), "problem"),
    ("wstar-no-problem", lambda: wstar(None, "exact"), "problem"),
    ("asymptotic-no-problem", lambda: asymptotic_loss(None, 1.0), "problem"),
    ("parse-int-fullwidth", lambda: parse_int("n", "１２"), "n"),
    ("parse-int-float", lambda: parse_int("n", "2.5"), "n"),
    ("parse-real-hex", lambda: parse_real("L", "0x1p3"), "L"),
    ("parse-real-inf", lambda: parse_real("L", "inf"), "L"),
]


@pytest.mark.parametrize("cid, call, name", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_refuses_with_one_named_parameter_error(cid, call, name):
    """Refused with one named error, before any work (:func:`_work.refusal_work`: calls and memory counted)."""
    done = refusal_work(call)
    assert isinstance(done.error, ParameterError) and isinstance(done.error, ValueError) and done.error.name == name
    message = str(done.error)
    assert f"'{name}'" in message and "\n" not in message and len(message) < 600
    assert done.within_refusal, done


BOMBS = [
    ("tower", "d**d**d**d", {"d": 10}),
    ("tower-constant", "2**2**2**2**2**2", {}),
    ("rational-power", "(1+1e-30)**(1e30)", {}),
    ("rational-power-times-d", "(1+1e-30)**(1e30) * d", {"d": 3}),
    ("simplified-rational-power", "(d/d + 1e-30)**(1e30)", {"d": 3}),
    ("400-digits", "9" * 400, {}),
    ("exp-exp", "exp(exp(exp(exp(d))))", {"d": 3}),
    ("huge-product", "10**300 * 10**300 * d", {"d": 3}),
    ("big-power-of-variable", "2**n", {"n": 10**14}),
    ("tiny-power", "(1/d)**(10**6)", {"d": 10}),
    ("deep-parens", "(" * 100 + "d" + ")" * 100, {"d": 3}),
    ("long", "d+" * 400 + "d", {"d": 3}),
    ("division-by-zero", "1/(d-3)", {"d": 3}),
]


@pytest.mark.parametrize("cid, text, env", BOMBS, ids=[b[0] for b in BOMBS])
def test_expression_bombs_are_refused_before_any_work(cid, text, env):
    def read():
        parse_expression(text, set(env) | {"d", "n"}).evaluate(env)

    done = refusal_work(read)
    assert isinstance(done.error, ExpressionError) and done.within_refusal, done


@pytest.mark.parametrize("d", [2, 5, 64])
@pytest.mark.parametrize("w", [1e3, 1e6, 1e8])
def test_collision_ratio_is_stable_at_large_w(d, w):
    """log R_d(w) against 50-digit mpmath; the difference of log Phi lost ~3e-8 here at w = 1e8."""
    with mpmath.workdps(50):
        nu = mpmath.mpf(d) / 2 - 1

        def log_phi(x):
            return mpmath.log(mpmath.gamma(mpmath.mpf(d) / 2) * (2 / x) ** nu * mpmath.besseli(nu, x))

        reference = float(log_phi(2 * mpmath.mpf(w)) - 2 * log_phi(mpmath.mpf(w)))
    assert float(sphere.log_collision_ratio(d, w)) == pytest.approx(reference, rel=1e-11, abs=1e-11)


def test_asymptotic_noise_part_is_sigma2_R_over_n_at_large_w():
    p = problem(n=10**20)
    for w in (1e4, 1e6, 1e8):
        expected = p.sigma**2 * math.exp(float(sphere.log_collision_ratio(3, w))) / p.n
        got = asymptotic_loss(p, w).noise.value
        assert got == pytest.approx(expected, rel=1e-12) and got > 0


def test_exact_integer_n_is_not_rounded():
    assert parse_int("n", "9007199254740993") == 9007199254740993
    assert parse_int("n", "1e14") == 10**14 and parse_int("n", "100.000") == 100
    assert problem(n=parse_int("n", "9007199254740993")).n == 9007199254740993


def test_wstar_at_its_search_bound_is_inconclusive_with_an_open_interval():
    r = wstar(problem(n=10**25), "exact")
    assert r.inconclusive and r.ci_high == math.inf and r.ci_low == r.w_star.value
    inner = wstar(problem(), "exact")
    assert not inner.inconclusive and inner.ci_low < inner.w_star.value < inner.ci_high


def test_no_runtime_warning_for_valid_input():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wstar(problem(d=512, n=1000), "exact")
        with pytest.raises(ParameterError, match="'w'"):  # R_d(w) = e^843 here: refused, not inf
            asymptotic_loss(problem(d=512), 1e4)


def test_mc_precision_not_reached_is_inconclusive():
    r = wstar_mc(problem(), rng=3, rel_precision=1e-4, pilot_contexts=200, max_contexts=400)
    assert r.precision_reached is False and r.inconclusive
    ok = wstar_mc(problem(), rng=3, rel_precision=0.05)
    assert ok.precision_reached is True and not ok.inconclusive
