"""Parsed entries, kept per process. Safe because a committed entry never changes.

Only reads made outside a transaction fill it (they see committed rows only), and a hit
must name the same entry id at the same seq, so an entry can never be confused with
another one that took a rolled-back seq.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from journal.entries import Entry as JournalEntry

MAX_ENTRIES = 250_000


class EntryCache:
    """LRU by session; evicts whole sessions once more than ``max_entries`` are held."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._sessions: OrderedDict[str, dict[int, JournalEntry]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def holds(self, session_id: str) -> bool:
        """Whether any entry of the session was parsed here."""
        return session_id in self._sessions

    def count(self, session_id: str) -> int:
        """How many entries of the session are held."""
        return len(self._sessions.get(session_id, ()))

    def lookup(self, session_id: str, seq: int, entry_id: str) -> JournalEntry | None:
        entries = self._sessions.get(session_id)
        if entries is None:
            return None
        entry = entries.get(seq)
        return entry if entry is not None and entry.id == entry_id else None

    def add(self, session_id: str, parsed: dict[int, JournalEntry]) -> None:
        with self._lock:
            entries = self._sessions.setdefault(session_id, {})
            before = len(entries)
            entries.update(parsed)
            self._size += len(entries) - before
            self._sessions.move_to_end(session_id)
            while self._size > self.max_entries and len(self._sessions) > 1:
                _, dropped = self._sessions.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._sessions.clear()
            self._size = 0


parsed_entries = EntryCache()
