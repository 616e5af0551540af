"""Events reach the session's channel-layer group, numbered, after their facts commit."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.live.push import ChannelLayerSink, group_name


@pytest.mark.django_db
def test_a_run_streams_numbered_events_to_the_session_group(harness, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_name(harness.session.id), channel)
    harness.events = ChannelLayerSink()
    harness.prompt("/say 你好")
    assert harness.run(OfflineDirector()) == "finished"
    assert harness.events.flush()
    received = []
    while not received or received[-1]["event"]["type"] != "operation_finished":
        received.append(async_to_sync(layer.receive)(channel))  # all sent: none blocks
    assert all(m["type"] == "session.event" for m in received)
    events = [m["event"] for m in received]
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "operation_started" and kinds[-1] == "operation_finished"
    assert "text_delta" in kinds and "entry_committed" in kinds
    text = "".join(e["text"] for e in events if e["type"] == "text_delta")
    committed = next(e for e in events if e["type"] == "entry_committed")
    assert text == committed["entry"]["message"]["content"]  # the stream adds up to the reply
    assert all(e["offline"] for e in events if e["type"] == "text_delta")


class SlowLayer:
    """A layer whose sends take a random while, as Redis round trips do."""

    def __init__(self) -> None:
        self.received: list[tuple[str, int]] = []
        self.random = random.Random(7)

    async def group_send(self, group: str, message: dict) -> None:
        await asyncio.sleep(self.random.random() / 500)
        self.received.append((group, message["event"]["i"]))


def test_events_of_a_session_arrive_in_the_order_they_were_emitted():
    sink = ChannelLayerSink()
    sink.layer = SlowLayer()
    threads = [
        threading.Thread(target=lambda s=s: [sink.emit(s, {"i": i}) for i in range(150)])
        for s in ("a", "b")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sink.flush(timeout=30)
    sent = sink.layer.received
    for session in ("a", "b"):
        assert [i for g, i in sent if g == group_name(session)] == list(range(150))


def test_a_stuck_layer_drops_events_past_the_bound_instead_of_growing():
    sink = ChannelLayerSink()
    gate = threading.Event()

    class StuckLayer:
        sent = 0

        async def group_send(self, group: str, message: dict) -> None:
            while not gate.is_set():
                await asyncio.sleep(0.01)
            StuckLayer.sent += 1

    sink.layer = StuckLayer()
    for i in range(sink.MAX_PENDING + 500):
        sink.emit("s", {"i": i})
    gate.set()
    assert sink.flush(timeout=30)
    assert StuckLayer.sent <= sink.MAX_PENDING + 1
