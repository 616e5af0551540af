"""An event sink that keeps what a run emitted, for tests to read back."""

from __future__ import annotations

from typing import Any

from jaiweb.agent.events import Numbered


class RecordingSink(Numbered):
    """Keeps every event: for tests and benchmarks."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, session_id: str, event: dict[str, Any]) -> None:
        self.events.append((session_id, self.number(session_id, event)))

    def types(self) -> list[str]:
        return [e["type"] for _, e in self.events]
