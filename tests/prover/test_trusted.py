"""The trusted base (:mod:`lipschitz_icl.prover.trusted`): each quantity's enclosure on a box holds its value at
every point of the box (checked against an independent mpmath evaluation, interior points included), the
extremes theorems put the smallest and largest values where they say, end values are exact, and the
table refuses what it does not cover."""

from __future__ import annotations

import itertools

import mpmath
import pytest
from flint import arb

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.prover.trusted import PARAMETERS, QUANTITIES, NoEnclosure, lookup
from lipschitz_icl.validation import ParameterError


def _beta(z, a, b) -> mpmath.mpf:
    return mpmath.betainc(a, b, 0, z, regularized=True)


def exact_value(name: str, p: dict) -> mpmath.mpf:
    """The quantity at a point by mpmath's incomplete beta (30 digits), written out independently."""
    with mpmath.workdps(30):
        if name == "cap_tail":
            a = mpmath.mpf(p["d"] - 1) / 2
            return _beta((1 - mpmath.mpf(p["h"])) / 2, a, a)
        if name.startswith("projection"):
            d, k, s = p["d"], p["k"], mpmath.mpf(p["s"])
            if k == d:
                return mpmath.mpf(1) if name == "projection_tail" or s >= 1 else mpmath.mpf(0)
            below = _beta(s, mpmath.mpf(k) / 2, mpmath.mpf(d - k) / 2)  # P(||Px||^2 <= s)
            return 1 - below if name == "projection_tail" else below
        n, a, q = p["n"], p["a"], mpmath.mpf(p["p"])
        terms = [mpmath.binomial(n, j) * q**j * (1 - q) ** (n - j) for j in range(n + 1)]
        return mpmath.fsum(terms[max(a, 0) :]) if name == "binomial_tail" else mpmath.fsum(terms[: max(a + 1, 0)])


BOXES = {
    "cap_tail": [{"d": (2, 9), "h": (-0.4, 0.3)}, {"d": (5, 5), "h": (0.1, 0.9)}, {"d": (3, 40), "h": (-1.0, -0.2)}],
    "projection_tail": [{"d": (6, 9), "k": (1, 3), "s": (0.05, 0.6)}, {"d": (4, 4), "k": (4, 4), "s": (0.2, 1.0)}],
    "projection_lower_tail": [{"d": (6, 9), "k": (1, 3), "s": (0.05, 0.6)}],
    "binomial_tail": [{"n": (5, 12), "a": (2, 6), "p": (0.1, 0.7)}, {"n": (3, 3), "a": (0, 4), "p": (0.0, 1.0)}],
    "binomial_lower_tail": [{"n": (5, 12), "a": (2, 6), "p": (0.1, 0.7)}],
}


def _points(box: dict):
    """Every integer of each integer range and 5 points of each real range (both ends included)."""
    axes = []
    for name, (lo, hi) in box.items():
        if PARAMETERS[name].integer:
            axes.append([(name, v) for v in range(lo, hi + 1)])
        else:
            axes.append([(name, lo), *((name, lo + (hi - lo) * i / 4) for i in range(1, 4)), (name, hi)])
    for combo in itertools.product(*axes):
        yield dict(combo)


@pytest.mark.parametrize(("name", "index"), [(n, i) for n, boxes in BOXES.items() for i in range(len(boxes))])
def test_the_enclosure_on_a_box_holds_every_point_value(name, index):
    box = BOXES[name][index]
    quantity = QUANTITIES[name]
    with arithmetic.precision(128):
        low, high = quantity.enclose(box)
        smallest, largest = quantity.extremes(box)
        values = [exact_value(name, point) for point in _points(box)]
    slack = mpmath.mpf(10) ** -25
    assert float(low.lower()) - slack <= min(values) and max(values) <= float(high.upper()) + slack
    # the extremes are attained where the theorem says (the box's smallest and largest values)
    assert abs(min(values) - exact_value(name, smallest)) <= slack
    assert abs(max(values) - exact_value(name, largest)) <= slack


def test_end_values_are_exact_balls():
    """The cap is exactly 1 at h = -1 and 0 at h = 1; so ``cap_tail <= 1`` holds on a box reaching h = -1."""
    cap = QUANTITIES["cap_tail"]
    with arithmetic.precision(128):
        assert cap.value({"d": 512, "h": -1.0}) == 1 and cap.value({"d": 2, "h": 1.0}) == 0
        low, high = cap.enclose({"d": (2, 512), "h": (-1.0, 1.0)})
        assert bool(high <= 1) and bool(low >= 0)
        assert not bool(low.union(high) <= 1)  # the union of the two balls would have lost it


def test_loss_quantities_need_single_d_and_n():
    for name in ("w_star", "icl_error"):
        quantity = lookup(name, "affine")
        for param, box in [("n", {"d": (3, 3), "n": (100, 200)}), ("d", {"d": (3, 4), "n": (100, 100)})]:
            with pytest.raises(NoEnclosure) as caught:
                quantity.enclose({**box, "L": (1.0, 1.0), "sigma": (0.5, 0.5)})
            assert caught.value.param == param


def test_the_table_refuses_what_it_does_not_cover():
    with pytest.raises(ParameterError, match="quantity"):
        lookup("bias_part", "affine")
    with pytest.raises(ParameterError, match="task"):
        lookup("bias", "lowrank-linear")
    with pytest.raises(ParameterError, match="task"):
        lookup("dbias_dw")
    with pytest.raises(ParameterError, match="task"):
        lookup("w_star", "lowrank-linear")
    with pytest.raises(ParameterError, match="task"):
        lookup("cap_tail", "affine")  # a tail of the sphere has no class
    assert lookup("w_star", "relu").task == "relu" and lookup("icl_error", "cosine").task == "cosine"
    assert lookup("cap_tail").names == ("d", "h") and lookup("w_star", "affine").parameter("n").minimum == 2
    d, sigma = PARAMETERS["d"], PARAMETERS["sigma"]
    assert d.admits(5) and not d.admits(5.0) and not d.admits(True) and not d.admits(513)
    assert sigma.admits(1e-9) and not sigma.admits(0.0) and sigma.admits(1)
    rule = QUANTITIES["projection_tail"].domain_rule
    assert rule({"d": ((5, 5),), "k": ((1, 5),), "s": ((0.0, 1.0),)}) is None
    assert "k at most" in rule({"d": ((5, 9),), "k": ((6, 6),), "s": ((0.0, 1.0),)})


def test_a_point_value_is_a_ball():
    with arithmetic.precision(128):
        assert isinstance(QUANTITIES["binomial_tail"].value({"n": 10, "a": 3, "p": 0.25}), arb)


# ----------------------------------------------------------------------------- the loss quantities
LOSS_POINT = {"d": 3, "n": 100, "L": 1.0, "sigma": 0.5, "w": 5.0}


def test_a_loss_quantity_is_the_certified_loss_of_its_class():
    from lipschitz_icl.certified.loss import enclose, kernel_of

    at = enclose(kernel_of("relu", 3, 1.0), 5.0, 100, 0.5, 1.0, orders=(1,))
    assert lookup("bias", "relu").value(LOSS_POINT).overlaps(at.bias)
    assert lookup("dloss_dw", "relu").value(LOSS_POINT).overlaps(at.derivative(1).loss)


def test_a_loss_quantity_on_a_box_holds_its_corners_and_takes_n_as_one_interval():
    """A box of ``w`` (mean value theorem) and of ``n`` (one real interval, never a box per integer)."""
    quantity = lookup("noise", "affine")
    box = {"d": (3, 3), "n": (100, 105), "L": (1.0, 1.0), "sigma": (0.5, 0.5), "w": (5.0, 5.01)}
    low, high = quantity.enclose(box)
    assert low is high  # one ball for the whole box
    for n in (100, 103, 105):
        for w in (5.0, 5.01):
            point = quantity.value({**LOSS_POINT, "n": n, "w": w})
            assert low.contains(point), (n, w)
    assert low > 0  # a ball that tells something (wide: ball arithmetic over a range of n, see the docstring)
    with pytest.raises(NoEnclosure) as caught:
        quantity.enclose({**box, "d": (3, 4)})
    assert caught.value.param == "d"
    with pytest.raises(NoEnclosure) as caught:
        quantity.enclose({**box, "n": (2, 10)})
    assert caught.value.param == "n"


def test_the_noise_and_bias_of_one_box_are_one_certified_evaluation(monkeypatch):
    """One evaluation gives both parts of a box: the bias quantity after the noise one on the same box (two
    claims on one range of w) computes nothing again, and its ball is the evaluation's bias part."""
    from lipschitz_icl.certified import loss

    calls = []
    evaluate = loss.enclose_on_w_range

    def counted(*args, **kwargs):
        calls.append(args[1])
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(loss, "enclose_on_w_range", counted)
    box = {"d": (3, 3), "n": (100, 100), "L": (1.0, 1.0), "sigma": (0.5, 0.5), "w": (5.0, 5.0078125)}
    noise, _ = lookup("noise", "affine").enclose(box)
    bias, _ = lookup("bias", "affine").enclose(box)
    assert calls == [(5.0, 5.0078125)]
    direct = evaluate(loss.kernel_of("affine", 3, 1.0), (5.0, 5.0078125), 100, 0.5, 1.0)
    assert (bias.mid(), bias.rad()) == (direct.bias.mid(), direct.bias.rad())
    assert (noise.mid(), noise.rad()) == (direct.noise.mid(), direct.noise.rad())
