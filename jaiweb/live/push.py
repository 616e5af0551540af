"""The push side of live events: a run's events and request-thread notices onto the
channel layer, to the group of the session's watchers.

Events only ever report a journal fact after its commit, and watchers that see a gap
catch up from the journal, so a dropped send costs nothing but a re-read. An event that
announces a fact carries the bump of this process's count of it (``versions``): the
kinds of fact it changed, which tell a watcher which regions to read, and the key its
renderings are shared by.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections import deque
from typing import Any

from jaiweb.agent.events import Numbered
from jaiweb.live.versions import PROCESS, event_facts, event_numbered, facts_bump

log = logging.getLogger(__name__)


def group_name(session_id: str) -> str:
    """The channel-layer group of one session's watchers."""
    return f"session.{session_id}"


_sinks = itertools.count(1)


class ChannelLayerSink(Numbered):
    """Sends each event to the session's group on the channel layer, in order.

    Sends run on an event loop: ``loop`` when given (the embedded studio, where the
    in-memory layer lives in daphne's loop), else one background loop of this process.
    Each session has one queue drained by one task at a time, because concurrent
    ``group_send`` calls to Redis can overtake each other and a watcher would see
    deltas out of order. A queue past ``MAX_PENDING`` drops its events; the watchers'
    catch-up from the journal covers the gap.

    Each event names the sink that numbered it (``src``): a watcher follows each source's
    numbers on their own, so a session whose runs go to two runners in turn (a cluster)
    shows no gap at each turn, while a restarted runner is a source heard of anew.
    """

    MAX_PENDING = 2000

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__()
        from channels.layers import get_channel_layer

        self.layer = get_channel_layer()
        self.loop = loop
        self._queues: dict[str, deque[dict[str, Any]]] = {}
        self.source = f"{PROCESS}-{next(_sinks)}"

    def emit(self, session_id: str, event: dict[str, Any]) -> None:
        if self.layer is None:
            return
        with self._lock:
            numbered = {**self._numbered(session_id, event), "src": self.source}
            event_numbered(session_id=session_id, source=self.source, n=numbered["n"])
            message = {"type": "session.event", "event": numbered}
            facts = event_facts(event)
            if facts:  # the loop emits after the write's commit: the bump may go now
                message["change"] = facts_bump(session_id=session_id, facts=facts)
            queue = self._queues.get(session_id)
            if queue is not None:  # a drain task is on it
                if len(queue) < self.MAX_PENDING:
                    queue.append(message)
                return
            self._queues[session_id] = deque([message])
        try:
            loop = self.loop or _background_loop()
            asyncio.run_coroutine_threadsafe(self._drain(session_id), loop)
        except Exception:  # a closed loop must never stop a run
            with self._lock:
                self._queues.pop(session_id, None)
            log.exception("could not send an event of session %s", session_id)

    def flush(self, timeout: float = 5.0) -> bool:
        """Waits until every queued event is sent (or ``timeout``); True when all were."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._queues:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    async def _drain(self, session_id: str) -> None:
        group = group_name(session_id)
        while True:
            with self._lock:
                queue = self._queues[session_id]
                if not queue:
                    del self._queues[session_id]
                    return
                message = queue.popleft()
            try:
                await self.layer.group_send(group, message)
            except Exception:  # a watcher's socket must never stop a run
                log.exception("could not send an event of session %s", session_id)


_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """One event loop per process, on a daemon thread, for sinks given none."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="jaiweb-events", daemon=True).start()
        return _loop


def group_send_nowait(group: str, message: dict[str, Any]) -> None:
    """Send to a group without waiting for it; for request threads.

    The in-memory layer lives on the server's event loop: the send hops there and waits,
    which costs microseconds. Redis can be reached from any loop, so the send goes to this
    process's background loop. A request thread that waited for the busy server loop to
    get round to the publish would hold its pooled database connection meanwhile: on a
    saturated cluster, prompts waited seconds for connections held that way.
    """
    from asgiref.sync import async_to_sync
    from channels.layers import InMemoryChannelLayer, get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        async_to_sync(layer.group_send)(group, message)
        return
    sent = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), _background_loop())
    sent.add_done_callback(_log_failure)


def _log_failure(sent: Any) -> None:
    if not sent.cancelled() and sent.exception() is not None:
        log.error("could not send a live event", exc_info=sent.exception())
