"""Every public entry point refuses bad input with one message naming the parameter and its range."""

import numpy as np
import pytest

from lipschitz_icl import Attention, AttentionLayer, ParameterError, make_problem, make_task_class, sphere
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.optimum import wstar


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"task": "affine", "d": 1, "n": 10, "L": 1.0, "sigma": 0.1}, "d"),
        ({"task": "affine", "d": 2.5, "n": 10, "L": 1.0, "sigma": 0.1}, "d"),
        ({"task": "affine", "d": 3, "n": 0, "L": 1.0, "sigma": 0.1}, "n"),
        ({"task": "affine", "d": 3, "n": 3.5, "L": 1.0, "sigma": 0.1}, "n"),
        ({"task": "affine", "d": 3, "n": 10, "L": 0.0, "sigma": 0.1}, "L"),
        ({"task": "affine", "d": 3, "n": 10, "L": float("inf"), "sigma": 0.1}, "L"),
        ({"task": "affine", "d": 3, "n": 10, "L": 1.0, "sigma": -0.1}, "sigma"),
        ({"task": "affine", "d": 3, "n": 10, "L": 1.0, "sigma": float("nan")}, "sigma"),
        ({"task": "quartic", "d": 3, "n": 10, "L": 1.0, "sigma": 0.1}, "task"),
        ({"task": "lowrank-linear", "d": 3, "n": 10, "L": 1.0, "sigma": 0.1}, "rank"),
        ({"task": "lowrank-linear", "d": 3, "n": 10, "L": 1.0, "sigma": 0.1, "rank": 4}, "rank"),
        ({"task": "affine", "d": 3, "n": 10, "L": 1.0, "sigma": 0.1, "rank": 2}, "rank"),
        ({"task": "cosine", "d": 3, "n": 10, "L": 1.0, "sigma": 0.1, "frequency": 0.0}, "frequency"),
    ],
)
def test_problem_arguments_are_checked(kwargs, name):
    with pytest.raises(ParameterError) as info:
        make_problem(**kwargs)
    assert info.value.name == name
    assert f"parameter '{name}'" in str(info.value)


def test_B_must_have_orthonormal_columns():
    with pytest.raises(ParameterError, match="orthonormal"):
        make_task_class("lowrank-linear", 3, 1.0, B=np.ones((3, 1)))
    with pytest.raises(ParameterError, match="'B'"):
        make_task_class("lowrank-linear", 3, 1.0, B=np.ones((2, 1)))


def test_loss_arguments_are_checked():
    problem = make_problem("affine", 3, 10, 1.0, 0.1)
    with pytest.raises(ParameterError, match="'w'"):
        icl_loss(problem, float("inf"))
    with pytest.raises(ParameterError, match="'M'"):
        icl_loss(problem, M=np.eye(2))
    with pytest.raises(ParameterError, match="'M'"):
        icl_loss(problem, M=np.full((3, 3), np.nan))
    with pytest.raises(ParameterError, match="'w/M'"):
        icl_loss(problem)
    with pytest.raises(ParameterError, match="'method'"):
        icl_loss(problem, 1.0, method="magic")
    with pytest.raises(ParameterError, match="'contexts'"):
        icl_loss(problem, 1.0, contexts=1)
    with pytest.raises(ParameterError, match="'rng'"):
        icl_loss(problem, 1.0, rng=-3)
    with pytest.raises(ParameterError, match="'attention'"):
        icl_loss(problem, 1.0, attention="relu")
    with pytest.raises(ParameterError, match="'method'"):
        icl_loss(problem, M=np.diag([1.0, 2.0, 3.0]), method="asymptotic")
    with pytest.raises(ParameterError, match="'task'"):
        icl_loss(make_problem("cosine", 3, 10, 1.0, 0.1), 1.0, method="asymptotic")


def test_wstar_arguments_are_checked():
    with pytest.raises(ParameterError, match="'sigma'"):
        wstar(make_problem("affine", 3, 10, 1.0, 0.0), "asymptotic")
    with pytest.raises(ParameterError, match="'task'"):
        wstar(make_problem("lowrank-linear", 3, 10, 1.0, 0.1, rank=1), "mc")
    with pytest.raises(ParameterError, match="'method'"):
        wstar(make_problem("affine", 3, 10, 1.0, 0.1), "newton")
    with pytest.raises(ParameterError, match="'rel_precision'"):
        wstar(make_problem("affine", 3, 10, 1.0, 0.1), "mc", rel_precision=0.0)


def test_attention_layer_shapes_are_checked():
    with pytest.raises(ParameterError, match="W_K, W_Q, W_V"):
        AttentionLayer(np.eye(3), np.eye(4), np.eye(4))
    with pytest.raises(ParameterError, match="'attention'"):
        Attention.isotropic(1.0, 3, "tanh")


def test_sphere_arguments_are_checked():
    with pytest.raises(ParameterError, match="'d'"):
        sphere.log_phi(1, 1.0)
    with pytest.raises(ParameterError, match="'w'"):
        sphere.polar_rule(3, -1.0)


def test_an_integer_bound_is_written_short_only_when_exact():
    """The seed's bound 2**63 - 1 was written '9e18', a number below the bound (9223372036854775807 was accepted
    while the message said otherwise); powers of ten stay short."""
    from lipschitz_icl.validation import _describe_bounds

    assert _describe_bounds(0, 2**63 - 1) == " in [0, 9223372036854775807]"
    assert _describe_bounds(1, 10**150) == " in [1, 1e150]"
    assert _describe_bounds(0, 10**6) == " in [0, 1000000]"


@pytest.mark.parametrize(
    "value, text",
    [
        (10**150, "1e+150"),
        (-(10**30), "-1e+30"),
        (1234567890123456789012, "1.234568e+21"),
        (9223372036854775807, "9223372036854775807"),  # 19 digits: repeated whole
        (10**19, "1e+19"),
        (5, "5"),
        (True, "True"),
        ("x" * 300, "'" + "x" * 79 + "... (302 characters)"),
    ],
)
def test_a_message_repeats_a_value_short(value, text):
    from lipschitz_icl.validation import shorten

    assert shorten(value) == text


def test_an_integer_past_python_s_4300_digit_str_limit_is_repeated_short():
    """``repr(10**5000)`` raises ValueError (Python's limit on integer-to-text conversion): a message repeating
    it failed while being written."""
    from lipschitz_icl.validation import shorten

    assert shorten(10**5000) == "1e+5000"
    assert shorten(-3 * 10**9000 + 1) == "-3e+9000"


def test_a_value_left_out_reads_not_given():
    from lipschitz_icl.validation import received

    assert received(None) == "not given"
    assert received(3) == "got 3"
    assert "(not given)" in str(ParameterError("L", "given", None))
