"""Streamed text goes out coalesced, and never waits behind a stalled model.

The coalescer's timing is asserted on a fake clock (tests/support/clocks.py): what went out
at which fake second, whatever the machine's load. The loop's test uses the real clock and
timer, and asserts an order of events instead: the held piece goes out while the model is
still stalled, because the model does not go on until it has.
"""

from __future__ import annotations

import threading

import pytest

from jaiweb.agent.loop import LoopConfig
from jaiweb.agent.providers.base import StreamEnd, TextDelta
from jaiweb.agent.streaming import DeltaCoalescer
from journal.entries import Usage
from tests.support.clocks import FakeClock
from tests.support.waiting import wait_until

INTERVAL = 0.05


def coalescer(clock: FakeClock) -> tuple[DeltaCoalescer, list[tuple[float, str]]]:
    sent: list[tuple[float, str]] = []
    deltas = DeltaCoalescer(
        lambda text: sent.append((clock.monotonic(), text)),
        INTERVAL,
        clock=clock.monotonic,
        timer=clock.call_later,
    )
    return deltas, sent


def test_first_piece_at_once_then_one_delta_per_interval_and_a_flush_sends_the_rest():
    clock = FakeClock()
    deltas, sent = coalescer(clock)
    assert deltas.add("a") is True and sent == [(clock.now, "a")]
    assert deltas.add("b") is False and deltas.add("c") is False
    assert sent == [(clock.now, "a")]  # within the interval: held
    deltas.flush()
    assert [t for _, t in sent] == ["a", "bc"]
    deltas.flush()
    assert [t for _, t in sent] == ["a", "bc"]  # nothing left to send
    clock.advance(INTERVAL * 10)
    assert [t for _, t in sent] == ["a", "bc"]  # the flushed timer is gone


def test_a_piece_is_sent_by_the_timer_when_no_next_token_comes():
    clock = FakeClock()
    deltas, sent = coalescer(clock)
    start = clock.now
    deltas.add("a")
    deltas.add("b")  # at once after "a": held for the rest of the interval
    clock.advance(INTERVAL * 0.9)  # the model stalls …
    assert sent == [(start, "a")]
    clock.advance(INTERVAL * 0.1)  # … and at the end of the interval the timer sends it
    assert sent == [(start, "a"), (start + INTERVAL, "b")]
    clock.advance(INTERVAL * 10)
    deltas.flush()
    assert sent == [(start, "a"), (start + INTERVAL, "b")]


def test_a_piece_after_a_quiet_interval_goes_at_once_and_a_burst_is_one_delta():
    clock = FakeClock()
    deltas, sent = coalescer(clock)
    start = clock.now
    deltas.add("a")
    clock.advance(INTERVAL)
    deltas.add("b")  # the interval since "a" is over: no wait
    assert sent == [(start, "a"), (start + INTERVAL, "b")]
    for piece in "cdef":  # a burst within the next interval: one delta at its end
        clock.advance(INTERVAL / 5)
        deltas.add(piece)
    clock.advance(INTERVAL)
    deltas.add("g")  # 0.8 of an interval after that delta: held for the rest of it
    clock.advance(INTERVAL)
    assert [t for _, t in sent] == ["a", "b", "cdef", "g"]
    at = [when - start for when, _ in sent]
    assert at == pytest.approx([0, INTERVAL, 2 * INTERVAL, 3 * INTERVAL])


def test_the_real_timer_sends_a_held_piece_without_a_flush():
    sent: list[str] = []
    deltas = DeltaCoalescer(sent.append, INTERVAL)
    deltas.add("a")
    deltas.add("b")
    wait_until(lambda: sent == ["a", "b"], 10, "the timer to send the held piece")
    deltas.flush()
    assert sent == ["a", "b"]


class StallingProvider:
    """Streams "a", "b", then stalls until "b" has gone out (or 10 s), then "c": "b" must
    not wait for "c"."""

    name = "stalling"
    offline = True

    def __init__(self) -> None:
        self.b_went_out = threading.Event()
        self.b_out_during_the_stall = False

    def stream(self, messages, tools, *, language=None, app_state=None):
        yield TextDelta("a")
        yield TextDelta("b")
        self.b_out_during_the_stall = self.b_went_out.wait(10)
        yield TextDelta("c")
        yield StreamEnd("stop", Usage(input_tokens=1, output_tokens=3))

    def summarize(self, messages) -> str:
        return ""


@pytest.mark.django_db
def test_the_loop_sends_held_text_while_the_model_stalls(harness):
    sent: list[str] = []
    emit = harness.events.emit
    provider = StallingProvider()

    def recorded(session_id, event):
        if event["type"] == "text_delta":
            sent.append(event["text"])
            if "b" in event["text"]:
                provider.b_went_out.set()
        emit(session_id, event)

    harness.events.emit = recorded
    harness.prompt("hello")
    config = LoopConfig(context_budget=100_000, lease_seconds=60, delta_interval_seconds=INTERVAL)
    assert harness.run(provider, config=config) == "finished"
    assert provider.b_out_during_the_stall, "b waited for the model's next token"
    assert sent == ["a", "b", "c"]
