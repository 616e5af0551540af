"""Channel layers that fail, for /healthz's tests (named in CHANNEL_LAYERS by dotted path)."""

from __future__ import annotations

import asyncio

from channels.layers import InMemoryChannelLayer


class BrokenLayer(InMemoryChannelLayer):
    """Refuses every send, as a layer whose server is gone does."""

    async def send(self, channel, message):
        raise ConnectionError("the channel layer is gone")


class SilentLayer(InMemoryChannelLayer):
    """Takes every message and delivers none: the round trip never comes back."""

    async def send(self, channel, message):
        pass

    async def receive(self, channel):
        await asyncio.Event().wait()
