"""The ``w*`` proof and its check (:mod:`lipschitz_icl.certified.wstar_proof`): the proof a certified ``w*``
search returns verifies from its hints alone to the same bracket and minimum; a proof whose bracket misses the
minimiser, whose walks leave a gap or stop short, or whose cut is moved inward fails; malformed proofs are
refused; a mutation tester changes every piece's kind and no mutant verifies a bracket without ``w*``."""

from __future__ import annotations

import copy
import json

import pytest
from flint import arb

from lipschitz_icl.certified import wstar_proof
from lipschitz_icl.certified.loss import Derivative, LossEnclosure, kernel_of
from lipschitz_icl.certified.wstar import certified_wstar
from lipschitz_icl.optimum import wstar
from lipschitz_icl.problem import make_problem

D, N, SIGMA, L = 2, 10**6, 0.5, 1.0  # a certified w* of about 4 CPU seconds, its check about 2


@pytest.fixture(scope="module")
def found():
    result = certified_wstar(D, N, SIGMA, L, task="affine")
    assert result.decided and result.proof is not None, result.info
    return result


@pytest.fixture(scope="module")
def exact_wstar() -> float:
    return float(wstar(make_problem("affine", D, N, L, SIGMA), "exact").w_star.value)


def check(raw: dict, evaluations: int = 10**4) -> wstar_proof.Verified:
    objective = wstar_proof.Objective(kernel_of("affine", D, 1.0), N, SIGMA, L, seconds=600, evaluations=evaluations)
    return wstar_proof.verify(objective, wstar_proof.read_proof(raw))


def test_the_proof_of_a_search_verifies_from_its_hints_alone(found, exact_wstar):
    raw = json.loads(json.dumps(found.proof.to_dict()))  # through its JSON form, as a certificate carries it
    verified = check(raw)
    assert (verified.low, verified.high) == (found.low, found.high)
    assert verified.low <= exact_wstar <= verified.high
    assert float(verified.loss_low.lower()) <= found.loss_low + 1e-18
    assert float(verified.loss_high.upper()) >= found.loss_high - 1e-18
    kinds = [piece[2] for piece in raw["left"] + raw["right"]]
    assert kinds.count("cut") + kinds.count("end") == 2  # each walk ends at a cut or the range's end


def _moved_bracket(raw, factor):
    raw["low"], raw["high"] = raw["low"] * factor, raw["high"] * factor


def _first_right_piece_dropped(raw):
    del raw["right"][0]


def _right_walk_without_its_cut(raw):
    raw["right"].pop()


def _right_cut_moved_inward(raw):
    first = raw["right"][0]
    raw["right"] = [first, [first[1], "inf", "cut"]]


def _left_walk_ends_inside_the_range(raw):
    last_inner = raw["left"][-2][0]
    raw["left"][-1] = [last_inner, last_inner, "end"]


def _a_down_piece_in_the_right_walk(raw):
    raw["right"][1][2] = "down"


def _pieces_swapped(raw):
    raw["left"][1], raw["left"][2] = raw["left"][2], raw["left"][1]


TAMPERED = {
    "bracket moved above w*": (lambda raw: _moved_bracket(raw, 1.01), "signs"),
    "bracket moved below w*": (lambda raw: _moved_bracket(raw, 0.99), "signs"),
    "a piece dropped (a gap)": (_first_right_piece_dropped, "follow on"),
    "a walk without its cut": (_right_walk_without_its_cut, "without a cut"),
    "a cut moved inward": (_right_cut_moved_inward, "floor at the cut"),
    "an end inside the range": (_left_walk_ends_inside_the_range, "search range's end"),
    "a down piece on the right": (_a_down_piece_in_the_right_walk, "not a kind"),
    "two pieces swapped": (_pieces_swapped, "follow on"),
}


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_proof_fails_its_check(found, name):
    tamper, reason = TAMPERED[name]
    raw = copy.deepcopy(found.proof.to_dict())
    tamper(raw)
    with pytest.raises(wstar_proof.ProofError, match=reason):
        check(raw)


GOOD = {"low": 1.0, "high": 2.0, "w1": 1.5, "rtol": 1e-6, "left": [[0.0, 1.0, "cut"]], "right": [[2.0, "inf", "cut"]]}


def test_a_check_out_of_its_budget_fails():
    with pytest.raises(wstar_proof.ProofError, match="out of budget"):
        check(GOOD, evaluations=1)


MALFORMED = {
    "a key missing": ({k: v for k, v in GOOD.items() if k != "w1"}, "exactly the keys"),
    "a key added": ({**GOOD, "verdict": "proved"}, "exactly the keys"),
    "a number as text": ({**GOOD, "low": "1.0"}, "finite number"),
    "an infinite bracket": ({**GOOD, "high": float("inf")}, "finite number"),
    "a reversed bracket": ({**GOOD, "low": 2.0, "high": 1.0}, "low < high"),
    "a bracket outside the range": ({**GOOD, "high": 1e9}, "low < high"),
    "rtol out of range": ({**GOOD, "rtol": 0.5}, "rtol"),
    "an empty walk": ({**GOOD, "left": []}, "1 to"),
    "a piece of two entries": ({**GOOD, "right": [[2.0, "inf"]]}, r"\[a, b, kind\]"),
    "an unknown kind": ({**GOOD, "right": [[2.0, 3.0, "Up"], [3.0, "inf", "cut"]]}, "kind must be one of"),
    "too many pieces": ({**GOOD, "right": [[2.0, 3.0, "up"]] * (wstar_proof.MAX_PIECES + 1)}, "1 to"),
    "not an object": ([1, 2], "exactly the keys"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_proof_is_refused(name):
    raw, reason = MALFORMED[name]
    with pytest.raises(wstar_proof.ProofError, match=reason):
        wstar_proof.read_proof(raw)


class _NoCurvature:
    """An objective whose second derivative on the bracket is NaN (a ball the loss could not enclose), its value
    and slope at the centre finite: L(c) = 1, L'(c) = 0."""

    def at(self, w, orders=(0,), rtol=None):
        nan = arb("nan")
        return LossEnclosure(arb(1), arb(0), {1: Derivative(arb(0), arb(0)), 2: Derivative(nan, nan)})


def test_a_bracket_without_a_finite_curvature_has_no_minimum():
    """A NaN compares false both ways: ``m = curvature if curvature < 0 else 0`` once read a NaN as "not
    negative" and dropped the curvature term, so a wide forged bracket on which the loss is concave gave a
    lower bound above the true minimum (an ``icl_error >= ...`` certificate of a false statement rechecked)."""
    with pytest.raises(wstar_proof.ProofError, match="no finite enclosure"):
        wstar_proof.minimum_lower_bound(_NoCurvature(), 60.0, 3000.0)


@pytest.mark.slow(reason="about 40 checks of mutated proofs, 1-2 s each")
def test_no_mutated_kind_verifies_a_bracket_without_wstar(found, exact_wstar):
    """Every piece's kind changed to every other kind: each mutant fails its check or still proves a bracket
    that holds the exact method's ``w*`` (a kind may be shown by a second test too: a convex piece may also
    be increasing)."""
    genuine = found.proof.to_dict()
    verified_mutants = 0
    for side in ("left", "right"):
        for index, piece in enumerate(genuine[side]):
            for kind in ("excluded", "up", "down", "convex", "cut", "end"):
                if kind == piece[2]:
                    continue
                raw = copy.deepcopy(genuine)
                raw[side][index][2] = kind
                try:
                    verified = check(raw)
                except wstar_proof.ProofError:
                    continue
                verified_mutants += 1
                assert verified.low <= exact_wstar <= verified.high, (side, index, kind)
    assert verified_mutants < 20  # most mutants fail: the tests are not vacuous


# ----------------------------------------------------------------------------- one-sided proofs over a box of n
BOX_N = (10**6, 11 * 10**5)  # an interval of n: the proof holds at every real n of it


@pytest.fixture(scope="module")
def one_sided():
    """``w* <= 1.1 w*(1.1e6)`` and ``w* >= 0.9 w*(1e6)`` over ``n`` in ``BOX_N`` (d = 2; about 2 s each)."""
    from lipschitz_icl.certified.wstar import wstar_bound

    kernel = kernel_of("affine", D, 1.0)
    ends = [float(wstar(make_problem("affine", D, n, L, SIGMA), "exact").w_star.value) for n in BOX_N]
    upper = wstar_bound(kernel, BOX_N, SIGMA, L, 1.1 * ends[1], "upper")
    lower = wstar_bound(kernel, BOX_N, SIGMA, L, 0.9 * ends[0], "lower")
    assert upper.outcome == lower.outcome == "proved", (upper.reason, lower.reason)
    return {"upper": upper.proof.to_dict(), "lower": lower.proof.to_dict(), "ends": ends}


def check_bound(raw: dict) -> None:
    objective = wstar_proof.Objective(kernel_of("affine", D, 1.0), BOX_N, SIGMA, L, seconds=600)
    wstar_proof.verify_bound(objective, wstar_proof.read_bound_proof(raw))


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_a_one_sided_proof_over_an_interval_of_n_verifies_from_its_hints(one_sided, side):
    raw = json.loads(json.dumps(one_sided[side]))
    check_bound(raw)
    assert raw["walk"][-1][2] == "cut"
    low_end, high_end = one_sided["ends"]
    assert (raw["bound"] > high_end) if side == "upper" else (raw["bound"] < low_end)


def _window_moved_past_wstar(raw, ends):
    # the window (the bound) moved to the other side of w* at the far end of the box: the slope there has the
    # wrong sign, so the walk's first piece fails
    raw["bound"] = 0.97 * ends[1] if raw["side"] == "upper" else 1.03 * ends[0]
    raw["walk"][0][0 if raw["side"] == "upper" else 1] = raw["bound"]


def _window_moved_without_its_walk(raw, ends):
    raw["bound"] *= 1.01


def _side_flipped(raw, ends):
    raw["side"] = "lower" if raw["side"] == "upper" else "upper"


def _first_piece_marked_excluded(raw, ends):
    raw["walk"][0][2] = "excluded"  # the loss next to the window does not exceed L(window)


def _cut_dropped(raw, ends):
    raw["walk"].pop()


ONE_SIDED_TAMPERED = {
    "window moved past w*": _window_moved_past_wstar,
    "window moved without its walk": _window_moved_without_its_walk,
    "side flipped": _side_flipped,
    "first piece marked excluded": _first_piece_marked_excluded,
    "cut dropped": _cut_dropped,
}


@pytest.mark.parametrize("name", sorted(ONE_SIDED_TAMPERED))
@pytest.mark.parametrize("side", ["upper", "lower"])
def test_a_tampered_one_sided_proof_fails_its_check(one_sided, side, name):
    raw = copy.deepcopy(one_sided[side])
    ONE_SIDED_TAMPERED[name](raw, one_sided["ends"])
    with pytest.raises(wstar_proof.ProofError):
        check_bound(raw)


@pytest.mark.parametrize(
    "raw",
    [
        {"bound": 5.0, "side": "upper", "anchor": None},
        {"bound": 5.0, "side": "both", "anchor": None, "walk": [[5.0, "inf", "cut"]]},
        {"bound": 1e9, "side": "upper", "anchor": None, "walk": [[1e9, "inf", "cut"]]},
        {"bound": 5.0, "side": "upper", "anchor": "near", "walk": [[5.0, "inf", "cut"]]},
        {"bound": 5.0, "side": "upper", "anchor": None, "walk": []},
        {"bound": 5.0, "side": "upper", "anchor": None, "walk": [[5.0, 6.0, "sideways"]]},
    ],
    ids=["no walk", "unknown side", "window outside the search range", "anchor not a number", "empty walk", "kind"],
)
def test_a_malformed_one_sided_proof_is_refused(raw):
    with pytest.raises(wstar_proof.ProofError):
        wstar_proof.read_bound_proof(raw)


def test_a_wide_piece_is_shown_by_its_refined_shape():
    """At d = 3, n = 116 a ball of the third derivative over w in [6.5, 7.28] (12%) explodes (the true value is
    about 2e-4); the largest of the balls over sub-pieces of 3% is within a factor 10 of it, and the slope's
    sign on the whole piece (w* = 4.7) is shown by the refined shape, which the walk then tries first."""
    f = wstar_proof.Objective(kernel_of("affine", 3, 1.0), 116, SIGMA, L)
    a, b = 6.5, 6.5 * 1.12
    assert f.third_ball(a, b) > 1.0
    assert f.third_bound(a, b) < 2e-3
    assert wstar_proof.monotone(f, a, b, 1) and f.refine_first
    assert not f.shape(a, b, False)[0] > 0  # the plain shape does not show it


def test_the_third_derivative_bound_of_a_sub_piece_holds_its_points_and_is_as_tight_as_a_finer_quadrature():
    """The ball of ``|d^3 L/dw^3|`` over a sub-piece (3% of ``w``, ``n`` an interval) is made at the coarse
    quadrature target ``THIRD_RTOL``: it holds the certified third derivative at points of the piece and of ``n``
    (each at 1e-10), and is within 1% of the ball at a target 100 times finer (its width is the dependency on
    ``w``, not the quadrature's error)."""
    f = wstar_proof.Objective(kernel_of("affine", 3, 1.0), (100, 127), SIGMA, L)
    a, b = 7.0, 7.0 * 1.03
    bound = f.third_ball(a, b)
    finer = abs(f.at((a, b), (1, 2, 3), rtol=wstar_proof.THIRD_RTOL / 100).derivative(3).loss).abs_upper()
    assert bound <= 1.01 * finer
    for n in (100, 113, 127):
        point = wstar_proof.Objective(kernel_of("affine", 3, 1.0), n, SIGMA, L)
        for w in (a, 0.5 * (a + b), b):
            third = point.at(w, (3,), rtol=1e-10).derivative(3).loss
            assert abs(third).abs_upper() <= bound


def test_a_coarse_design_that_swamps_the_loss_is_replaced_by_the_next_tier():
    """relu, d = 3, n = 1000: the coarse (8-point theta rule) design for w in [13.077, 22.1] gives a ball of the
    loss at w = 17 that holds 0 (the quadrature's error bound swamps a loss of 0.0052); the objective then
    evaluates again on the next tier's design over the evaluation's own range, and the slope's sign is shown."""
    from lipschitz_icl.certified import loss

    kernel = kernel_of("relu", 3, 1.0)
    coarse = loss.design(kernel, (13.077, 22.1), (1000, 1000), order=2, rtol=1e-4, want_q=True)
    swamped = loss.enclose(kernel, 17.0, 1000, 0.5, 1.0, orders=(0, 1, 2), rtol=1e-4, want_q=True, plan=coarse)
    assert not swamped.loss > 0  # the case the objective must not hand to a test
    objective = wstar_proof.Objective(kernel, 1000, 0.5, 1.0, seconds=120)
    objective.span = (13.077, 22.1)  # the design above
    result = objective.at(17.0, (0, 1, 2), want_q=True)
    assert objective.evaluations == 2  # the swamped evaluation and the one on the finer design
    assert result.loss > 0 and result.derivative(1).loss > 0  # L rises at 17 (the default design: 1.73e-4)
    assert result.loss.rad() < 1e-3 * result.loss.mid()  # a ball a test can use, not one just above 0
