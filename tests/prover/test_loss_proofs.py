"""``prove`` on the loss quantities (bias, noise, loss and their ``w``-derivatives,
:mod:`lipschitz_icl.prover.trusted`): a monotonicity proved on a range of ``w`` and rechecked, a range of
``n`` decided as one real interval, a refutation with its certified counterexample, a sharpest constant,
and forged certificates that fail the recheck."""

from __future__ import annotations

import copy

import pytest

from lipschitz_icl.certified.loss import enclose, kernel_of
from lipschitz_icl.prover import checker
from lipschitz_icl.prover.search import prove

AFFINE = {"d": [3], "n": [100], "L": 1.0, "sigma": 0.5}


@pytest.fixture(scope="module")
def noise_rises():
    """``dnoise_dw >= 0`` for the affine class at d = 3, n = 100 on w in [5, 5.2]."""
    return prove("dnoise_dw", "0", {**AFFINE, "w": [5.0, 5.2]}, relation=">=", task="affine", seconds=120)


def test_a_monotonicity_is_proved_on_a_range_of_w_and_rechecks(noise_rises):
    assert noise_rises.verdict.value == "proved" and noise_rises.undecided_count == 0
    assert noise_rises.certificate["statement"]["task"] == "affine"
    result = checker.check(noise_rises.certificate)
    assert result.recheck == "passed" and result.verdict == "proved"


def test_a_range_of_n_is_one_real_interval():
    """``noise >= sigma^2 / n`` (``sum_i p_i^2 >= 1/n``) on n in {50..60} at w = 5: one box, no box per integer."""
    result = prove("noise", "sigma**2/n", {**AFFINE, "n": {"from": 50, "to": 60}, "w": 5.0}, relation=">=", task="relu")
    assert result.verdict.value == "proved" and result.boxes == 1
    assert checker.check(result.certificate).recheck == "passed"


def test_a_false_bound_is_refuted_with_a_certified_counterexample():
    at = float(enclose(kernel_of("affine", 3, 1.0), 5.1, 100, 0.5, 1.0).bias.mid())
    result = prove("bias", "B", {**AFFINE, "w": [5.0, 5.2]}, constants={"B": 0.99 * at}, task="affine")
    assert result.verdict.value == "refuted"
    point = result.counterexample["params"]
    assert point["d"] == 3 and point["n"] == 100 and 5.0 <= point["w"] <= 5.2
    assert result.counterexample["quantity"][0] > 0.99 * at
    assert checker.check(result.certificate).verdict == "refuted"


def test_the_sharpest_constant_of_a_loss_bound():
    """The sharpest ``C`` of ``loss <= C`` at one point is the loss itself, certified on both sides."""
    value = float(enclose(kernel_of("affine", 3, 1.0), 5.0, 100, 0.5, 1.0).loss.mid())
    result = prove(
        "loss",
        "C",
        {**AFFINE, "w": 5.0},
        sharpest_constant="C",
        bracket=(0.5 * value, 2 * value),
        rtol=1e-6,
        task="affine",
    )
    sharp = result.sharpest
    assert sharp["low"] <= value * (1 + 1e-9) and value * (1 - 1e-9) <= sharp["high"]
    assert sharp["high"] - sharp["low"] <= 2e-6 * value
    assert checker.check(result.certificate).recheck == "passed"


def _forged_bound(certificate: dict) -> dict:
    forged = copy.deepcopy(certificate)
    forged["statement"]["bound"] = "1"  # dnoise_dw >= 1 is false (dnoise_dw is about 1e-3 here)
    return forged


def _forged_task(certificate: dict) -> dict:
    forged = copy.deepcopy(certificate)
    forged["statement"]["task"] = "lowrank-linear"  # not a class of the loss quantities
    return forged


def _forged_leaf(certificate: dict) -> dict:
    """The true statement's cover replaced by one leaf, the whole range of w, claimed proved with a stored
    enclosure above 0: the checker encloses that leaf itself (too wide to decide) and fails it."""
    forged = copy.deepcopy(certificate)
    part = forged["parts"][0]
    root = part["roots"][0][0]
    assert "split" in root  # the genuine proof needed more than one box
    part["roots"][0] = [{"box": root["box"], "decision": "proved", "quantity": [1e-3, 3e-3], "bound": [0.0, 0.0]}]
    return forged


@pytest.mark.parametrize("forge", [_forged_bound, _forged_task, _forged_leaf])
def test_a_forged_loss_certificate_fails_the_recheck(noise_rises, forge):
    forged = forge(noise_rises.certificate)
    try:
        result = checker.check(forged)
    except checker.CertificateError:
        return  # refused as malformed: it does not recheck
    assert result.recheck == "failed"
