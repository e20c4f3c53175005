"""The search's side of a witnessed quantity (:mod:`lipschitz_icl.prover.witness`): the ball the ``w*`` search
proved and the certificate entry of its proof, which the trusted table then checks to the same ball; a point
where the search cannot close has no enclosure."""

from __future__ import annotations

import pytest

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.prover import witness
from lipschitz_icl.prover.trusted import NoEnclosure, lookup, point_key

POINT = {"d": 2, "n": 10**6, "L": 1.0, "sigma": 0.5}  # w* = 170.2 (affine)


def test_the_search_ball_is_the_ball_its_witness_shows():
    for name in ("w_star", "icl_error"):
        quantity = lookup(name, "affine")
        ball, entry = witness.point_value(quantity, POINT)
        assert entry["point"] == POINT and set(entry["proof"]) == {"low", "high", "w1", "rtol", "left", "right"}
        shown = quantity.value_at(POINT, {point_key(POINT): entry["proof"]})
        if name == "w_star":  # the bracket itself: the same doubles
            assert arithmetic.Enclosure.of(shown).as_list() == arithmetic.Enclosure.of(ball).as_list()
        else:  # the minimum's balls, each computed at the precision of its caller (cached across tests)
            assert shown.overlaps(ball)
    low, high = arithmetic.Enclosure.of(witness.point_value(lookup("w_star", "affine"), POINT)[0]).as_list()
    assert 170 < low < high < 170.5


def test_a_box_gives_the_witnesses_of_its_two_extremes():
    quantity = lookup("w_star", "affine")
    box = {"d": (2, 2), "n": (10**6, 10**6), "L": (1.0, 1.0), "sigma": (0.5, 0.5)}
    (low, high), entries = witness.enclose(quantity, box)
    assert len(entries) == 1 and low is high  # a point: one extreme
    wider = {**box, "sigma": (0.5, 0.55)}  # w* falls with sigma: its extremes are the two ends
    (low, high), entries = witness.enclose(quantity, wider)
    assert [entry["point"]["sigma"] for entry in entries] == [0.55, 0.5]
    assert high.upper() > low.lower()


def test_without_a_witness_the_table_has_no_enclosure():
    with pytest.raises(NoEnclosure, match="no w_star proof is given"):
        lookup("w_star", "affine").value_at(POINT, {})


def test_an_attempt_the_float_wstar_contradicts_is_skipped_and_one_it_allows_is_made(monkeypatch):
    """Planning only: ``w* <= 85`` on n in [1e5, 1e6] (d = 2) is false at n = 1e6 (w* = 170) and ``w* >= 212`` is
    false at n = 1e5 (w* = 68), so neither one-sided attempt is made; for ``w* <= 200`` the attempt is made (and
    its opposite ``w* >= 200`` is not: false at n = 1e5)."""
    from types import SimpleNamespace

    from lipschitz_icl.certified import wstar as certified_wstar_module

    calls = []

    def recording(kernel, n, sigma, L, window, side, **kwargs):
        calls.append((window, side))
        return SimpleNamespace(outcome="undecided", proof=None, info={})

    monkeypatch.setattr(certified_wstar_module, "wstar_bound", recording)
    quantity = lookup("w_star", "affine")
    box = {"d": (2, 2), "n": (10**5, 10**6), "L": (1.0, 1.0), "sigma": (0.5, 0.5)}
    assert witness.one_sided(quantity, box, "<=", arithmetic.interval(85.0, 212.0)) == ("undecided", None)
    assert calls == []
    assert witness.one_sided(quantity, box, "<=", arithmetic.exact(200.0)) == ("undecided", None)
    assert calls == [(200.0, "upper")]


def test_the_plan_skips_only_beyond_its_tolerance():
    assert witness._may_hold("upper", 100.0, [])  # no float w*: every attempt is made
    assert witness._may_hold("upper", 100.0, [99.0, 100.0 * (1 + witness.PLAN_RTOL / 2)])
    assert not witness._may_hold("upper", 100.0, [99.0, 100.0 * (1 + 2 * witness.PLAN_RTOL)])
    assert witness._may_hold("lower", 100.0, [101.0, 100.0 * (1 - witness.PLAN_RTOL / 2)])
    assert not witness._may_hold("lower", 100.0, [101.0, 100.0 * (1 - 2 * witness.PLAN_RTOL)])
    # the corners: (n_hi, sigma_lo, L_hi) first, where w* is largest (it grows with n and falls with sigma)
    box = {"n": (1000, 1200), "sigma": (0.4, 0.6), "L": (1.0, 1.0)}
    corners = witness._corner_wstars("affine", 3, box)
    assert corners == [
        witness._float_wstar("affine", 3, 1200, 0.4, 1.0),
        witness._float_wstar("affine", 3, 1000, 0.6, 1.0),
    ]
    assert corners[0] > corners[1]
    assert witness._corner_wstars("relu", 3, {"n": (100, 200), "sigma": (0.5, 0.5), "L": (1.0, 1.0)}) == []
    assert witness._corner_wstars("affine", 3, {"n": (100.5, 200.0), "sigma": (0.5, 0.5), "L": (1.0, 1.0)}) == []


def test_a_walk_passes_on_the_refined_first_choice_it_learned_and_an_inherited_one_lapses(monkeypatch):
    """Planning only: a walk that learned to try refined shapes first (``info["refine_first"]``) hands the choice
    to the next walk of the same class and dimension; that walk, not having learned it itself, hands on nothing,
    so the third starts plain again.  Another dimension keeps its own choice.  (With no plan, each box makes
    both attempts: ``w* <= 5`` and its opposite ``w* >= 5``.)"""
    from types import SimpleNamespace

    from lipschitz_icl.certified import wstar as certified_wstar_module

    given = []

    def recording(kernel, n, sigma, L, window, side, **kwargs):
        given.append((kernel.d, kwargs["refine_first"]))
        return SimpleNamespace(outcome="undecided", proof=None, info={"refine_first": len(given) == 1})

    monkeypatch.setattr(certified_wstar_module, "wstar_bound", recording)
    monkeypatch.setattr(witness, "_REFINE_FIRST", {})
    monkeypatch.setattr(witness, "_corner_wstars", lambda task, d, box: [])  # no plan: every attempt is made
    quantity = lookup("w_star", "affine")
    for d in (3, 3, 4):
        box = {"d": (d, d), "n": (100, 133), "L": (1.0, 1.0), "sigma": (0.5, 0.5)}
        assert witness.one_sided(quantity, box, "<=", arithmetic.exact(5.0)) == ("undecided", None)
    assert given == [(3, False), (3, True), (3, False), (3, False), (4, False), (4, False)]
