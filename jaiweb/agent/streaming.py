"""A model reply streamed out to watchers as coalesced text deltas while it is assembled."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from jaiweb.agent.providers.base import (
    Provider,
    ProviderError,
    RawToolCall,
    Reply,
    TextDelta,
    TransientProviderError,
    add,
)
from journal.entries import ContextMessage, ToolCall
from journal.jsonvalues import JSON_VALUE_DEPTH_MAX, json_loads

_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Cancellable(Protocol):
    def cancel(self) -> None: ...


def start_timer(delay: float, fire: Callable[[], None]) -> Cancellable:
    """``fire()`` on a daemon thread after ``delay`` seconds, unless cancelled first."""
    timer = threading.Timer(delay, fire)
    timer.daemon = True
    timer.start()
    return timer


class DeltaCoalescer:
    """Streamed text out as deltas: the first piece at once, then at most one delta per
    ``interval`` — and no piece held longer than that, even when the model stalls (a
    timer sends what waits, so text never sits behind a slow next token).

    ``clock`` (monotonic seconds) and ``timer`` (``timer(delay, fire)`` → something with
    ``cancel()``) are the real ones unless a test passes a fake clock's.
    """

    def __init__(
        self,
        emit: Callable[[str], None],
        interval: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        timer: Callable[[float, Callable[[], None]], Cancellable] = start_timer,
    ) -> None:
        self._emit = emit
        self._interval = interval
        self._clock = clock
        self._start_timer = timer
        self._lock = threading.Lock()  # the stream's thread and the timer's: deltas in order
        self._pending = ""
        self._last = 0.0
        self._first = True
        self._timer: Cancellable | None = None

    def add(self, text: str) -> bool:
        """Queue ``text``; True when it was the first piece (sent at once)."""
        with self._lock:
            self._pending += text
            if self._first:
                self._first = False
                self._send()
                return True
            wait = self._last + self._interval - self._clock()
            if wait <= 0:
                self._send()
            elif self._timer is None:
                self._timer = self._start_timer(wait, self._on_time)
        return False

    def flush(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._send()

    def _on_time(self) -> None:
        with self._lock:
            self._timer = None
            self._send()

    def _send(self) -> None:
        if self._pending:
            self._emit(self._pending)
        self._pending, self._last = "", self._clock()


def stream_reply(
    provider: Provider,
    messages: Sequence[ContextMessage],
    specs: list[dict],
    *,
    on_text: Callable[[str], None],
    interval: float,
    on_first_text: Callable[[], None] = lambda: None,
    language: str | None = None,
    app_state: Mapping[str, Any] | None = None,
) -> Reply:
    """Stream one reply; its text goes to ``on_text`` coalesced to one delta per interval.

    ``TransientProviderError`` when the stream ends before the reply is complete.
    """
    reply, parts = Reply(), {}
    deltas = DeltaCoalescer(on_text, interval)
    try:
        for event in provider.stream(list(messages), specs, language=language, app_state=app_state):
            add(reply, parts, event)
            if isinstance(event, TextDelta):
                if deltas.add(event.text):  # the first words went out at once
                    on_first_text()
            else:
                deltas.flush()
        if not reply.complete:
            raise TransientProviderError("the stream ended before the reply was complete")
    except ProviderError as exc:
        exc.partial_usage = reply.usage  # what the provider counted before the cut
        raise
    finally:
        deltas.flush()
    return reply


def normalize_calls(raw: list[RawToolCall], taken: set[str]) -> list[ToolCall]:
    """Tool calls as the journal keeps them: ids valid and unique in the operation, arguments
    a JSON object (or ``{"_unparsed": text}`` when the provider sent something else)."""
    calls = []
    counter = 0
    for call in raw:
        call_id = call.id or ""
        if not _CALL_ID.match(call_id) or call_id in taken:
            while True:
                counter += 1
                call_id = f"call_{counter}"
                if call_id not in taken:
                    break
        taken.add(call_id)
        try:
            arguments = (
                json_loads(call.arguments, depth_max=JSON_VALUE_DEPTH_MAX)
                if call.arguments.strip()
                else {}
            )
        except ValueError:  # not JSON, or nested deeper than the journal keeps
            arguments = None
        if not isinstance(arguments, dict):
            arguments = {"_unparsed": call.arguments}
        calls.append(ToolCall(id=call_id, name=call.name or "unknown", arguments=arguments))
    return calls
