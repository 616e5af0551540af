"""Requests first: background work waits while a request is being answered, a bounded time."""

from __future__ import annotations

import threading
import time

import pytest

from jaiweb import requests_first
from jaiweb.requests_first import answering, answering_now, wait_turn, waiting_now, waits
from tests.support.waiting import wait_until

LONG = 30.0  # a bound no test reaches: the wait ends because the request did
# Far longer than the requests of the test below take, and short enough that a lost
# wake-up fails it quickly.
RARE = 2.0


def test_nothing_waits_when_no_request_is_being_answered():
    before = waits()
    assert wait_turn(max_wait=LONG) == "free"
    assert waits() == before


def test_requests_are_counted_while_answered_even_when_they_fail():
    assert answering_now() == 0
    with answering():
        with answering():
            assert answering_now() == 2
        assert answering_now() == 1
    with pytest.raises(RuntimeError), answering():
        raise RuntimeError("the view failed")
    assert answering_now() == 0


def test_background_work_goes_on_when_the_last_request_is_answered():
    in_request, done_answering = threading.Event(), threading.Event()
    outcome: list[str] = []

    def request():
        with answering():
            in_request.set()
            done_answering.wait(LONG)

    asking = threading.Thread(target=request)
    asking.start()
    in_request.wait(LONG)
    before = waits()[0]
    working = threading.Thread(target=lambda: outcome.append(wait_turn(max_wait=LONG)))
    working.start()
    wait_until(lambda: waiting_now() == 1, 10, "the background work to wait")
    done_answering.set()
    working.join(LONG)
    asking.join(LONG)
    assert outcome == ["answered"]  # let go by the request's end, not by the bound
    assert waits()[0] == before + 1
    assert waiting_now() == 0


def test_a_request_that_never_ends_holds_background_work_back_only_for_the_bound(monkeypatch):
    monkeypatch.setattr(requests_first, "MAX_WAIT_SECONDS", 0.01)
    with answering():
        assert wait_turn() == "bound"
    assert waiting_now() == 0


@pytest.fixture
def short_bound(monkeypatch):
    """The bound, short: the tests below see background work wait, not for how long."""
    monkeypatch.setattr(requests_first, "MAX_WAIT_SECONDS", 0.001)


def test_a_catch_up_render_waits_while_a_request_is_answered(short_bound):
    from jaiweb.studio.consumers import _on_a_renderer

    before = waits()[0]
    assert _on_a_renderer(lambda: "rendered") == "rendered"
    assert waits()[0] == before  # no request: no wait
    with answering():
        assert _on_a_renderer(lambda: "rendered") == "rendered"
    assert waits()[0] == before + 1


def test_under_many_requests_coming_and_going_no_background_wait_is_lost():
    """Requests start and end on four threads while four others wait their turn again and
    again: every wait ends because the requests did (a lost wake-up would run into the
    bound), and nothing stays counted."""
    stop = threading.Event()
    outcomes: list[str] = []
    lock = threading.Lock()

    def requests():
        while not stop.is_set():
            with answering():
                time.sleep(0.0005)
            time.sleep(0.001)  # a gap between a thread's requests, as between clicks

    def background():
        for _ in range(300):
            outcome = wait_turn(max_wait=RARE)
            with lock:
                outcomes.append(outcome)
            if outcome == "bound":
                return  # a wake-up was lost (or the box stalled for RARE): stop here

    asking = [threading.Thread(target=requests) for _ in range(4)]
    working = [threading.Thread(target=background) for _ in range(4)]
    for t in asking + working:
        t.start()
    for t in working:
        t.join(LONG * 2)
    stop.set()
    for t in asking:
        t.join(LONG)
    assert "bound" not in outcomes
    assert len(outcomes) == 1200
    assert "answered" in outcomes  # the requests did hold background work back
    assert answering_now() == 0
    assert waiting_now() == 0
