"""Events reach the session's channel-layer group, numbered, after their facts commit."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from jaiweb.agent.events import ChannelLayerSink, group_name
from jaiweb.agent.providers.offline import OfflineDirector

pytestmark = pytest.mark.django_db


def test_a_run_streams_numbered_events_to_the_session_group(harness, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_name(harness.session.id), channel)
    harness.events = ChannelLayerSink()
    harness.prompt("/say 你好")
    assert harness.run(OfflineDirector()) == "finished"
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
