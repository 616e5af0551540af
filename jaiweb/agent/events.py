"""Where a run's live events go: the sink the loop emits to, and their numbering.

Events only ever report a journal fact after its commit (the loop emits after its write
returns). They are numbered per session; a watcher that sees a gap catches up from the
journal, which stays the truth. The sink onto the channel layer is ``jaiweb.live.push``:
the agent knows only this protocol.
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from typing import Any, Protocol


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
            return self._numbered(session_id, event)

    def _numbered(self, session_id: str, event: dict[str, Any]) -> dict[str, Any]:
        return {**event, "n": next(self._counters[session_id])}
