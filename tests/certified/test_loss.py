"""The certified loss of every certified class (:mod:`lipschitz_icl.certified.loss`): its balls hold the exact
method's values (an independent quadrature, :mod:`lipschitz_icl.exact`, within its own error estimate), a
ball over an interval of ``w`` or ``n`` holds the balls at the points inside, the derivative balls agree with
finite differences (mean value theorem), and what is not certified is refused."""

from __future__ import annotations

import json

import pytest

from lipschitz_icl import cli
from lipschitz_icl.certified import arithmetic
from lipschitz_icl.certified.loss import enclose, enclose_on_w_range, enclose_step_in_n, kernel_of, problem_enclosure
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.problem import kernel_problem, make_problem, mixture_problem
from lipschitz_icl.validation import ParameterError

USER_KERNEL = "exp(-(2 - 2*t)/ell)"  # a Gaussian kernel of the chord, analytic in t


def _problem(task: str, d: int, n: int):
    if task.startswith("mix:"):
        return mixture_problem(task, d, n, 1.0, 0.5, 2.0)
    if task == "kernel":
        return kernel_problem(USER_KERNEL, d, n, 0.5, {"ell": 0.7})
    if task == "cosine":
        return make_problem("cosine", d, n, 1.0, 0.5, frequency=2.0)
    return make_problem(task, d, n, 1.0, 0.5)


def _holds(ball, estimate) -> bool:
    """The certified ball meets the exact method's interval ``value +- abs_error``."""
    e = arithmetic.Enclosure.of(ball)
    return e.low <= estimate.value + estimate.abs_error and estimate.value - estimate.abs_error <= e.high


@pytest.mark.parametrize(
    "task,d,n,w",
    [
        ("affine", 3, 2, 5.0),
        ("affine", 2, 10**6, 300.0),
        ("relu", 3, 2, 5.0),
        ("relu", 5, 1000, 20.0),
        ("cosine", 5, 200, 10.0),
        ("mix:affine=1,relu=2,cosine=1", 4, 30, 3.0),
        ("kernel", 3, 40, 6.0),
    ],
)
def test_certified_balls_hold_the_exact_method(task, d, n, w):
    problem = _problem(task, d, n)
    enclosure = problem_enclosure(problem, w)
    exact = exact_loss(problem, w, rtol=1e-10)
    for part in ("loss", "bias", "noise"):
        assert _holds(getattr(enclosure, part), getattr(exact, part)), (task, part)
    width = arithmetic.Enclosure.of(enclosure.loss).width
    assert width < 1e-8 * exact.loss.value  # narrow: a ball that holds everything would pass the line above


def test_relu_at_d3_n2_w5_agrees_with_the_exact_method_to_1e9():
    """The issue's acceptance case: the certified relu loss at d = 3, n = 2, w = 5, sigma = 0.5."""
    problem = make_problem("relu", 3, 2, 1.0, 0.5)
    e = arithmetic.Enclosure.of(problem_enclosure(problem, 5.0).loss)
    exact = exact_loss(problem, 5.0, rtol=1e-12).loss
    assert abs(0.5 * (e.low + e.high) - exact.value) < 1e-9 and e.width < 1e-9


@pytest.mark.parametrize(
    "task", ["affine", pytest.param("relu", marks=pytest.mark.slow(reason="a relu box of w and n: about 15 s"))]
)
def test_a_ball_over_intervals_of_w_and_n_holds_the_point_values(task):
    kernel = kernel_of(task, 3, 1.0)
    wide = enclose(kernel, (4.0, 4.5), (50, 60), 0.5, 1.0, orders=(0, 1))
    for w, n in ((4.0, 60), (4.25, 53), (4.5, 50)):  # the corners and a point inside
        point = enclose(kernel, w, n, 0.5, 1.0, orders=(0, 1))
        for part in ("loss", "bias", "noise"):
            assert getattr(wide, part).contains(getattr(point, part)), (w, n, part)
        assert wide.derivative(1).loss.contains(point.derivative(1).loss)
    # real n between the integers too: the formulas are analytic in n
    assert wide.loss.contains(enclose(kernel, 4.2, (55.5, 55.5000001), 0.5, 1.0).loss)


def test_a_ball_over_an_interval_of_n_is_a_centred_form():
    """On ``n`` in ``[100, 101]`` the slope balls hold the slopes at both ends and stay within a few percent of
    the slope (the direct ball sum gave +/- 60% of the noise part's slope there: each node's spread in ``n``
    summed separately, across integrands that cancel in ``s``)."""
    kernel = kernel_of("affine", 3, 1.0)
    over = enclose(kernel, 1.0, (100, 101), 0.5, 1.0, orders=(0, 1)).derivative(1)
    for n in (100, 101):
        point = enclose(kernel, 1.0, n, 0.5, 1.0, orders=(1,)).derivative(1)
        for part in ("noise", "bias"):
            assert getattr(over, part).contains(getattr(point, part)), (n, part)
    for part in ("noise", "bias"):
        e = arithmetic.Enclosure.of(getattr(over, part))
        assert e.width < 0.05 * abs(0.5 * (e.low + e.high)), part


def test_over_a_tenth_of_n_the_loss_slope_keeps_its_sign():
    """On ``n`` in ``[100, 110]`` at ``w = 5.16`` (12% above ``w*`` at ``n = 110``) the slope of the loss is
    certified positive and its ball holds the slopes at the two ends and the middle.  The first-order centred
    form gave 7.9e-4 +/- 8.1e-4 (its width of second order in the radius hid the sign), the second-order one
    7.9e-4 +/- 4.0e-4; the Taylor model of order 4 with the loss's model added before it is collapsed gives
    7.9e-4 +/- 1.2e-4."""
    kernel = kernel_of("affine", 3, 1.0)
    over = enclose(kernel, 5.16, (100, 110), 0.5, 1.0, orders=(0, 1), rtol=1e-8).derivative(1).loss
    assert over > 0
    for n in (100, 105, 110):
        point = enclose(kernel, 5.16, n, 0.5, 1.0, orders=(1,)).derivative(1).loss
        assert over.contains(point), n


def test_over_an_interval_of_n_the_loss_slope_is_as_wide_as_its_variation():
    """The slope of the loss over ``n`` in ``[1000, 1140]`` at ``w = 10.572`` (d = 3; ``w*`` is 9.6 at
    ``n = 1000`` and 10.1 at ``n = 1140``) holds the slopes at five integers of the range, and its radius is at
    most 1.25 times half their spread.  The integrands' slopes in ``n`` change sign across ``s``: collapsed
    panel by panel (radii added) the ball was four times as wide as the variation, which hid the sign at
    ``n`` ratios above 1.07 in the window-law proofs."""
    kernel = kernel_of("affine", 3, 1.0)
    w = 10.572
    over = enclose(kernel, w, (1000, 1140), 0.5, 1.0, orders=(1,)).derivative(1)
    points = [enclose(kernel, w, n, 0.5, 1.0, orders=(1,)).derivative(1).loss for n in (1000, 1035, 1070, 1105, 1140)]
    for point in points:
        assert over.loss.contains(point)
    mids = [float(point.mid()) for point in points]
    half_spread = (max(mids) - min(mids)) / 2
    assert float(over.loss.rad()) <= 1.25 * half_spread
    assert over.loss > 0


@pytest.mark.parametrize("task", ["relu", "cosine"])  # affine: tests/certified/test_certified.py
def test_derivative_balls_agree_with_finite_differences(task):
    """``(L(w + h) - L(w - h)) / 2h`` is a value of ``L'`` on ``[w - h, w + h]`` (mean value theorem): the
    ball of that quotient meets the ball of ``L'`` over the interval; the same one order up, for the noise
    part, the bias part and the loss."""
    kernel = kernel_of(task, 4, 1.0)
    w, h, n = 6.0, 1e-3, 100
    lo, hi = (enclose(kernel, x, n, 0.5, 1.0, orders=(0, 1)) for x in (w - h, w + h))
    over = enclose(kernel, (w - h, w + h), n, 0.5, 1.0, orders=(1, 2))
    for part in ("noise", "bias", "loss"):
        quotient = (getattr(hi.derivative(0), part) - getattr(lo.derivative(0), part)) / (2 * h)
        assert quotient.overlaps(getattr(over.derivative(1), part)), part
        second = (getattr(hi.derivative(1), part) - getattr(lo.derivative(1), part)) / (2 * h)
        assert second.overlaps(getattr(over.derivative(2), part)), part
    # and the signs where they are known: the noise part rises with w (N' >= 0)
    assert over.derivative(1).noise > 0


@pytest.mark.parametrize("order", [0, 1, 2])
def test_the_taylor_ball_on_a_w_piece_holds_the_point_values_and_is_narrow(order):
    """``enclose_on_w_range``: the ball holds the value at the piece's ends and inside it; for the slope, on a
    piece of 2% it is at most twice the slope's own variation there (plus the point balls' widths), where
    the mean value theorem with the majorant alone gave a ball ten times the slope itself."""
    kernel = kernel_of("affine", 3, 1.0)
    lo, hi, n = 1.0, 1.02, 100
    over = enclose_on_w_range(kernel, (lo, hi), n, 0.5, 1.0, order=order)
    points = [enclose(kernel, w, n, 0.5, 1.0, orders=(order,)).derivative(order) for w in (lo, 1.007, hi)]
    for part in ("noise", "bias"):
        for point in points:
            assert getattr(over, part).contains(getattr(point, part)), (part, order)
    if order == 1:
        for part in ("noise", "bias"):
            ends = [arithmetic.Enclosure.of(getattr(point, part)) for point in points]
            variation = max(e.high for e in ends) - min(e.low for e in ends)
            assert arithmetic.Enclosure.of(getattr(over, part)).width <= 2 * variation, part


def test_the_derivative_ball_is_narrow_at_a_point():
    kernel = kernel_of("relu", 3, 1.0)
    at = enclose(kernel, 8.0, 1000, 0.5, 1.0, orders=(1, 2, 3))
    for k in (1, 2, 3):
        e = arithmetic.Enclosure.of(at.derivative(k).loss)
        assert e.width < 1e-6 * abs(0.5 * (e.low + e.high)), k


def test_n_1_and_w_0_are_closed_forms():
    """``n = 1``: ``noise = sigma^2``; ``w = 0``: uniform weights, ``noise = sigma^2 / n``."""
    kernel = kernel_of("affine", 3, 1.0)
    one = enclose(kernel, 3.0, 1, 0.5, 1.0)
    assert one.noise.contains(arithmetic.exact(0.25)) and one.noise.rad() == 0
    zero = enclose(kernel, 0.0, 10, 0.5, 1.0)
    assert zero.noise.overlaps(arithmetic.exact(0.25) / 10) and zero.noise.rad() < 1e-18
    assert _holds(zero.loss, exact_loss(make_problem("affine", 3, 10, 1.0, 0.5), 0.0, rtol=1e-10).loss)


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _common(*extra):
    return ["--d", "3", "--n", "40", "--sigma", "0.5", *extra, "--method", "certified", "--json"]


@pytest.mark.parametrize(
    "args",
    [
        ["--task", "relu", "--L", "1"],
        ["--task", "cosine", "--frequency", "2", "--L", "1"],
        ["--task", "mix:affine=1,relu=1", "--L", "1"],
        ["--kernel", "exp(-(2 - 2*t))"],
    ],
)
def test_the_loss_command_gives_certified_intervals_for_every_class(capsys, args):
    code, out, _ = run(["loss", *args, "--w", "6", *_common()], capsys)
    result = json.loads(out)
    assert code == 0 and result["method"] == "certified"
    for part in ("loss", "bias", "noise"):
        assert result[f"{part}_low"] <= result[part] <= result[f"{part}_high"]
        assert result[f"{part}_high"] - result[f"{part}_low"] < 1e-8 * result[part]
    assert (result["ci_low"], result["ci_high"]) == (result["loss_low"], result["loss_high"])


@pytest.mark.parametrize(
    "args,named",
    [
        (["--kernel", "exp(-sqrt(2 - 2*t))", "--w", "6"], "kernel"),  # a branch point at t = 1: not analytic
        (["--kernel", "(1 + 2*sqrt(3)*sqrt(2 - 2*t))*exp(-2*sqrt(3)*sqrt(2 - 2*t))", "--w", "6"], "kernel"),  # Matern
        (["--task", "relu", "--L", "1", "--w", "40", "--n", "5"], "w"),  # beyond the certified grid's budget
    ],
)
def test_what_is_not_certified_is_refused_in_one_line(capsys, args, named):
    argv = ["loss", *args, "--d", "3", "--sigma", "0.5", "--method", "certified", "--json"]
    if "--n" not in args:
        argv[1:1] = ["--n", "40"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"lipschitz-icl: error: --{named}:") and "certified" in err


def test_refusals_in_python_name_the_parameter():
    kernel = kernel_of("affine", 3, 1.0)
    with pytest.raises(ParameterError, match="'n'"):
        enclose(kernel, 3.0, (2, 4), 0.5, 1.0)  # an n interval needs n >= 5 (the binomial series of psi^(n-2))
    with pytest.raises(ParameterError, match="'task'"):
        kernel_of("quartic", 3, 1.0)


def test_a_user_kernel_near_its_pole_gives_an_unbounded_ball_never_an_exception():
    """``exp(1/(1.2 - t))`` is analytic on an ellipse about ``[-1, 1]``, but a quadrature panel's complex rectangle
    reaches its pole at ``t = 1.2``: the gap there escaped as a ``NotCertified`` traceback through ``loss --method
    certified``; it is an unbounded ball now (no proof can use it, the command reports exit 3)."""
    from flint import acb, arb

    from lipschitz_icl.certified.kernels import certified_kernel

    kernel = certified_kernel(kernel_problem("exp(1/(1.2 - t))", 3, 100, 0.5).task_class)
    near_pole = acb(arithmetic.interval(-0.1, 0.1), arithmetic.interval(-0.7, 0.7))  # cos of it reaches t = 1.2
    assert not kernel.gap(near_pole).is_finite()
    assert kernel.gap(arb(0.5)).is_finite()  # on the real line it is a finite ball


def test_an_interval_wider_than_the_stated_accuracy_is_not_converged():
    """d = 100, n = 2, w = 1: the certified interval holds the loss (0.1306, the exact method) but is 1e8 wide;
    ``converged`` is false, so the command exits 3 instead of printing it with exit 0."""
    from lipschitz_icl.certified.loss import ACCURACY

    wide = enclose(kernel_of("affine", 100), 1.0, 2, 0.5, 1.0)
    assert not wide.converged and wide.loss.contains(arithmetic.exact(0.1305940595804515))  # loss --method exact
    tight = enclose(kernel_of("affine", 3), 5.0, 100, 0.5, 1.0)
    low, high = arithmetic.low(tight.loss), arithmetic.high(tight.loss)
    assert tight.converged and high - low <= 2 * ACCURACY * high


@pytest.mark.parametrize(
    "task", ["affine", pytest.param("relu", marks=pytest.mark.slow(reason="the relu kernel's balls, about 10 s"))]
)
def test_the_step_in_n_of_the_loss_slope_holds_the_differences_of_the_point_balls(task):
    """``enclose_step_in_n`` holds ``dL/dw(w, n + 1) - dL/dw(w, n)`` at every integer ``n`` of its range and every
    ``w`` of its box: checked against the differences of the certified point balls at the box's ends and
    centre; near ``w*`` the step is negative (the optimum moves up with ``n``) and the ball keeps the sign."""
    kernel = kernel_of(task, 3, 1.0)
    box = enclose_step_in_n(kernel, (9.9, 10.1), (1000, 1011), 0.5, 1.0).loss
    for w in (9.9, 10.0, 10.1):
        for n in (1000, 1005, 1010):
            at = [enclose(kernel, w, m, 0.5, 1.0, orders=(1,)).derivative(1).loss for m in (n, n + 1)]
            assert box.overlaps(at[1] - at[0]), (w, n)
    assert arithmetic.high(box) < 0
    point = enclose_step_in_n(kernel, 10.0, (1000, 1001), 0.5, 1.0).loss
    assert arithmetic.high(point) < 0 and point.rad() < 0.01 * abs(float(point.mid()))


@pytest.mark.parametrize("n", [(1000.5, 1002), (1000, 1000), (4, 10), (True, 10)])
def test_a_step_in_n_needs_an_interval_of_integers_from_5(n):
    with pytest.raises(ParameterError, match="'n'"):
        enclose_step_in_n(kernel_of("affine", 3, 1.0), 10.0, n, 0.5, 1.0)
