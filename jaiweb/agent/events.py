"""Live events of a run, for the browsers watching a session.

Events only ever report a journal fact after its commit (the loop emits after its write
returns). They are numbered per session; a watcher that sees a gap catches up from the
journal, which stays the truth.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections import defaultdict
from typing import Any, Protocol

log = logging.getLogger(__name__)


def group_name(session_id: str) -> str:
    return f"session.{session_id}"


class EventSink(Protocol):
    def emit(self, session_id: str, event: dict[str, Any]) -> None: ...


class NullSink:
    def emit(self, session_id: str, event: dict[str, Any]) -> None:
        pass


class Numbered:
    """Numbers events per session (1, 2, …) before handing them on."""

    def __init__(self) -> None:
        self._counters: dict[str, itertools.count] = defaultdict(lambda: itertools.count(1))
        self._lock = threading.Lock()

    def number(self, session_id: str, event: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            return {**event, "n": next(self._counters[session_id])}


class RecordingSink(Numbered):
    """Keeps every event: for tests and benchmarks."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, session_id: str, event: dict[str, Any]) -> None:
        self.events.append((session_id, self.number(session_id, event)))

    def types(self) -> list[str]:
        return [e["type"] for _, e in self.events]


class ChannelLayerSink(Numbered):
    """Sends each event to the session's group on the channel layer.

    With ``loop`` (the embedded studio: the in-memory layer lives in daphne's loop) the
    send is scheduled there from the runner's thread; without it (Redis) it is sent from
    this thread. A full channel drops the event; the watcher's catch-up covers it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__()
        from channels.layers import get_channel_layer

        self.layer = get_channel_layer()
        self.loop = loop

    def emit(self, session_id: str, event: dict[str, Any]) -> None:
        if self.layer is None:
            return
        message = {"type": "session.event", "event": self.number(session_id, event)}
        try:
            if self.loop is not None:
                send = self.layer.group_send(group_name(session_id), message)
                asyncio.run_coroutine_threadsafe(send, self.loop)
            else:
                from asgiref.sync import async_to_sync

                async_to_sync(self.layer.group_send)(group_name(session_id), message)
        except Exception:  # a watcher's socket must never stop a run
            log.exception("could not send an event of session %s", session_id)
