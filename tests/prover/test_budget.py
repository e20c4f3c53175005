"""The wall-clock budget (:mod:`lipschitz_icl.prover.budget`): it interrupts a block at its deadline, in any
thread, never after the block ended; the search stops inside a box whose evaluation outlasts ``seconds``."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from lipschitz_icl.decision import Verdict
from lipschitz_icl.prover.budget import OutOfTime, deadline
from lipschitz_icl.prover.search import make_statement, prove_statement


def _spin(seconds: float, finished: list | None = None) -> None:
    """Busy for ``seconds``; then (only if not interrupted) ``finished`` gets an entry."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    if finished is not None:
        finished.append(seconds)


def test_a_block_is_interrupted_at_its_deadline():
    finished: list = []
    with pytest.raises(OutOfTime), deadline(time.perf_counter() + 0.3):
        _spin(30.0, finished)
    assert finished == []  # interrupted, not run to the end of the 30 s loop


def test_a_block_that_ended_is_never_interrupted_later():
    with deadline(time.perf_counter() + 0.2):
        pass
    _spin(0.5)  # past the deadline: nothing fires


def test_a_deadline_in_the_past_raises_at_once():
    with pytest.raises(OutOfTime), deadline(time.perf_counter() - 1):
        raise AssertionError("the block must not run")


def test_it_works_in_another_thread():
    caught = []
    finished: list = []

    def work():
        try:
            with deadline(time.perf_counter() + 0.2):
                _spin(30.0, finished)
        except OutOfTime:
            caught.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert caught == [True] and finished == []


def test_the_search_stops_inside_a_slow_box():
    """A quantity whose every value takes 30 s (a stand-in for a certified w* per corner): ``seconds = 0.5``
    ends the search inside the first box, which is reported undecided with its reason."""
    statement = make_statement("cap_tail", "exp(-d*h**2/2)", {"d": [5], "h": [0.0, 1.0]})
    cap = statement.quantity

    finished: list = []

    def slow_value(point):
        _spin(30.0, finished)
        return cap.value(point)

    slow = dataclasses.replace(cap, value=slow_value)
    statement = dataclasses.replace(statement, quantity=slow)
    result = prove_statement(statement, seconds=0.5)
    assert finished == []  # the evaluation in the box was interrupted, not waited for
    assert result.verdict is Verdict.UNDECIDED and result.notes == ("budget exhausted",)
    assert result.undecided_count == 1 and "budget" in result.undecided_boxes[0]["reason"]
    assert result.certificate["parts"][0]["roots"][0][0]["decision"] == "undecided"


def test_a_lost_interruption_still_ends_the_search_at_its_budget(monkeypatch):
    """The watchdog's exception can be lost (delivered inside a garbage-collector callback, it is printed as
    unraisable and dropped): the search checks the clock before each box too, so it still stops at
    ``seconds``, its boxes left undecided, rather than going on to ``max_boxes``."""
    from lipschitz_icl.prover import budget

    monkeypatch.setattr(budget, "_raise_in", lambda thread_id: None)  # every interruption lost
    statement = make_statement("cap_tail", "exp(-d*h**2/2)", {"d": {"from": 2, "to": 512}, "h": [0.0, 1.0]})
    cap = statement.quantity

    def slow_value(point):
        _spin(0.05)
        return cap.value(point)

    statement = dataclasses.replace(statement, quantity=dataclasses.replace(cap, value=slow_value))
    start = time.perf_counter()
    result = prove_statement(statement, seconds=0.5, max_boxes=200)
    assert time.perf_counter() - start < 5.0  # not the 200 boxes of 0.05 s (10 s) the search could go on to
    assert result.verdict is Verdict.UNDECIDED and result.notes == ("budget exhausted",)
    assert result.undecided_count >= 1


def test_an_interrupted_block_leaves_profiling_working():
    """The scheduled exception was once cleared with PyThreadState_SetAsyncExc(thread, NULL), which left CPython's
    pending flag set: the next sys.setprofile of the process hung (this test never returned)."""
    import sys

    with pytest.raises(OutOfTime), deadline(time.perf_counter() + 0.1):
        _spin(30.0)
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(event))
    try:
        _spin(0.0)
    finally:
        sys.setprofile(None)
    assert "call" in calls


def _variant_file(tmp_path, domain: str, bound: str, sharpest: bool = False):
    head = f'name = "corners"\nquantity = "cap_tail"\nrelation = "<="\nbound = "{bound}"\n'
    if sharpest:
        head += 'sharpest = "C"\n[constants]\nC = [0.5, 2.0]\n'
    path = tmp_path / "corners.toml"
    path.write_text(head + "[domain]\n" + domain)
    return path


def test_reading_a_large_domain_checks_a_bounded_number_of_corners(tmp_path, monkeypatch):
    """The bound was evaluated at every corner of every root box when the file was read, before the search's
    budget: 4096 root boxes of a loss quantity (65536 evaluations) took 90 s of a ``--seconds 5 --max-boxes 1``
    run.  Beyond :data:`~lipschitz_icl.gates.variants.MAX_CORNER_CHECKS` evaluations only the hull's corners
    are checked (each a point of the domain), the count known before any corner is built."""
    from lipschitz_icl.expression import Expression
    from lipschitz_icl.gates.variants import MAX_CORNER_CHECKS, load_variant

    calls = []
    evaluate = Expression.evaluate

    def counted(self, env):
        calls.append(dict(env))
        return evaluate(self, env)

    monkeypatch.setattr(Expression, "evaluate", counted)
    listed = ", ".join(str(d) for d in range(2, 513))  # 511 values of d, h a range: 1022 corners, 2 ends each
    variant = load_variant(_variant_file(tmp_path, f"d = [{listed}]\nh = [0.0, 1.0]\n", "exp(-C*d*h**2/100)", True))
    assert variant.domain.corner_count() == 1022 == len(variant.domain.corners())
    assert 0 < len(calls) <= MAX_CORNER_CHECKS
    assert {(c["d"], c["h"]) for c in calls} == {(2, 0.0), (2, 1.0), (512, 0.0), (512, 1.0)}


def test_a_small_domain_still_has_every_root_corner_checked(tmp_path):
    """Below the limit nothing changed: a bound singular at a listed value inside the hull is refused naming it."""
    from lipschitz_icl.gates.variants import VariantFileError, load_variant

    with pytest.raises(VariantFileError, match=r"cannot be evaluated at d=5"):
        load_variant(_variant_file(tmp_path, "d = [3, 5, 7]\nh = [0.0, 1.0]\n", "1/(d - 5)"))
