"""The embedded studio's channel layer sweeps for expired messages at most once a second
(jaiweb.live.layers), and still delivers and expires as channels' own layer does."""

from __future__ import annotations

from unittest import mock

from asgiref.sync import async_to_sync

from jaiweb.live import layers
from tests.support.spies import calls_of


def test_one_sweep_a_second_and_messages_still_go_to_the_group(monkeypatch):
    layer = layers.InMemoryChannelLayer(expiry=60)
    sweeps = calls_of(monkeypatch, layers.ChannelsInMemoryLayer, "_clean_expired")

    async def traffic():
        channel = await layer.new_channel()
        await layer.group_add("g", channel)
        for n in range(50):
            await layer.group_send("g", {"type": "x", "n": n})
            assert (await layer.receive(channel))["n"] == n

    clock = [100.0]
    with mock.patch.object(layers.time, "monotonic", lambda: clock[0]):
        async_to_sync(traffic)()
        assert len(sweeps) == 1  # 100 sends and receives within one second
        clock[0] += layers.InMemoryChannelLayer.CLEAN_SECONDS
        async_to_sync(traffic)()
        assert len(sweeps) == 2


def test_an_expired_message_is_still_dropped_at_the_next_sweep():
    layer = layers.InMemoryChannelLayer(expiry=60)

    async def run():
        channel = await layer.new_channel()
        await layer.group_add("g", channel)
        with mock.patch("channels.layers.time.time", lambda: 1000.0):
            await layer.group_send("g", {"type": "old"})
        layer._cleaned = float("-inf")  # a sweep is due
        with mock.patch("channels.layers.time.time", lambda: 1061.0):
            layer._clean_expired()
        return channel

    channel = async_to_sync(run)()
    assert channel not in layer.channels and channel not in layer.groups.get("g", {})
