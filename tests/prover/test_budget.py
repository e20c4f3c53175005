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
