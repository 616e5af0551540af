"""Streamed text goes out coalesced, and never waits behind a stalled model."""

from __future__ import annotations

import time

import pytest

from jaiweb.agent.loop import LoopConfig
from jaiweb.agent.providers.base import StreamEnd, TextDelta
from jaiweb.agent.streaming import DeltaCoalescer
from journal.entries import Usage

INTERVAL = 0.05


def test_first_piece_at_once_then_one_delta_per_interval_and_a_flush_sends_the_rest():
    sent: list[str] = []
    deltas = DeltaCoalescer(sent.append, INTERVAL)
    assert deltas.add("a") is True and sent == ["a"]
    assert deltas.add("b") is False and deltas.add("c") is False
    assert sent == ["a"]  # within the interval: held
    deltas.flush()
    assert sent == ["a", "bc"]
    deltas.flush()
    assert sent == ["a", "bc"]  # nothing left to send


def test_a_piece_is_sent_by_the_timer_when_no_next_token_comes():
    sent: list[tuple[float, str]] = []
    deltas = DeltaCoalescer(lambda t: sent.append((time.monotonic(), t)), INTERVAL)
    deltas.add("a")
    start = time.monotonic()
    deltas.add("b")
    time.sleep(INTERVAL * 6)  # the model stalls
    assert [t for _, t in sent] == ["a", "b"]
    assert sent[1][0] - start < INTERVAL * 4
    deltas.flush()
    assert [t for _, t in sent] == ["a", "b"]


class StallingProvider:
    """Streams "a", "b", then stalls before "c": "b" must not wait for "c"."""

    name = "stalling"
    offline = True

    def __init__(self) -> None:
        self.c_at = 0.0

    def stream(self, messages, tools, *, language=None, app_state=None):
        yield TextDelta("a")
        yield TextDelta("b")
        time.sleep(INTERVAL * 8)
        self.c_at = time.monotonic()
        yield TextDelta("c")
        yield StreamEnd("stop", Usage(input_tokens=1, output_tokens=3))

    def summarize(self, messages) -> str:
        return ""


@pytest.mark.django_db
def test_the_loop_sends_held_text_while_the_model_stalls(harness):
    sent: list[tuple[float, str]] = []
    emit = harness.events.emit

    def timed(session_id, event):
        if event["type"] == "text_delta":
            sent.append((time.monotonic(), event["text"]))
        emit(session_id, event)

    harness.events.emit = timed
    harness.prompt("hello")
    provider = StallingProvider()
    config = LoopConfig(context_budget=100_000, lease_seconds=60, delta_interval_seconds=INTERVAL)
    assert harness.run(provider, config=config) == "finished"
    assert [t for _, t in sent] == ["a", "b", "c"]
    assert sent[1][0] < provider.c_at  # "b" went out during the stall
