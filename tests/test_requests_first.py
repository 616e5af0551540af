"""Requests first: background work waits while a request is being answered, a bounded time."""

from __future__ import annotations

import threading

import pytest

from jaiweb import requests_first
from jaiweb.requests_first import answering, answering_now, wait_turn, waiting_now, waits
from tests.support.waiting import wait_until

LONG = 30.0  # a bound no test reaches: the wait ends because the request did


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
