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


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_block_is_interrupted_at_its_deadline():
    start = time.perf_counter()
    with pytest.raises(OutOfTime), deadline(start + 0.3):
        _spin(30.0)
    assert time.perf_counter() - start < 5.0  # interrupted, not run to the end of the 30 s loop


def test_a_block_that_ended_is_never_interrupted_later():
    with deadline(time.perf_counter() + 0.2):
        pass
    _spin(0.5)  # past the deadline: nothing fires


def test_a_deadline_in_the_past_raises_at_once():
    with pytest.raises(OutOfTime), deadline(time.perf_counter() - 1):
        raise AssertionError("the block must not run")


def test_it_works_in_another_thread():
    caught = []

    def work():
        try:
            with deadline(time.perf_counter() + 0.2):
                _spin(30.0)
        except OutOfTime:
            caught.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(20.0)
    assert caught == [True] and not thread.is_alive()


def test_the_search_stops_inside_a_slow_box():
    """A quantity whose every value takes 30 s (a stand-in for a certified w* per corner): ``seconds = 0.5``
    ends the search inside the first box, which is reported undecided with its reason."""
    statement = make_statement("cap_tail", "exp(-d*h**2/2)", {"d": [5], "h": [0.0, 1.0]})
    cap = statement.quantity

    def slow_value(point):
        _spin(30.0)
        return cap.value(point)

    slow = dataclasses.replace(cap, value=slow_value)
    statement = dataclasses.replace(statement, quantity=slow)
    start = time.perf_counter()
    result = prove_statement(statement, seconds=0.5)
    assert time.perf_counter() - start < 10.0
    assert result.verdict is Verdict.UNDECIDED and result.notes == ("budget exhausted",)
    assert result.undecided_count == 1 and "budget" in result.undecided_boxes[0]["reason"]
    assert result.certificate["parts"][0]["roots"][0][0]["decision"] == "undecided"
