"""This process's count of each session's facts, by kind: the version a region is rendered
at when only the regions a change can touch are read, so that a session's watchers share
one rendering of each (``jaiweb.studio.regions.changed_regions_html``).

A count moves only after the fact's commit: the appender bumps it where it announces the
fact (``ChannelLayerSink.emit`` for a run, whose loop emits after its write returned;
``watchers_notify``'s on-commit send for a person's command), then sends the announcement
carrying the bump (``change``). A rolled-back transaction runs no on-commit callback, so
it bumps nothing. Another process's bump reaches this one with its announcement: the
first watcher here to receive it applies it, once (``change_observe``). An announcement
that carries no change, or one that was lost, is covered the way it always was: a
catch-up that reads the database (a gap, a quiet pass, a connect, the page asking).
``last_event_number`` tells the quiet pass whether the page missed an event this
process numbered (then it reads the stream too).
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from cachetools import LRUCache

# The kinds of fact. ``session``: anything about the session, so every region.
FACT_KINDS = ("session", "entry", "app_state", "operation", "wallet")

# A run's events (jaiweb.agent) by the facts they announce; an event not named announces
# none (streamed text, a tool's start: nothing the regions show). Nor does a run's start:
# the operation was unfinished, so the regions said "running", from its acceptance (or the
# person's command that let it go on), which announced it.
EVENT_FACTS: dict[str, tuple[str, ...]] = {
    "entry_committed": ("entry",),
    "state_changed": ("app_state",),
    "tool_finished": ("operation", "wallet"),  # a tool's effect may charge credits
    "approval_requested": ("operation",),
    "operation_parked": ("operation",),
    "operation_finished": ("operation", "wallet"),
    "journal_changed": ("session",),
}

PROCESS = secrets.token_hex(6)  # names this process's bumps in another process
_SEEN_SIZE = 8192  # other processes' bumps applied here, for applying each once

_lock = threading.Lock()
_counts: dict[str, dict[str, int]] = {}
_numbered: dict[str, tuple[str, int]] = {}  # session id -> (sink, the last number it gave)
_seen: LRUCache[str, None] = LRUCache(_SEEN_SIZE)
_numbers = itertools.count(1)


def event_facts(event: Mapping[str, Any]) -> tuple[str, ...]:
    """The facts a run's event announces (``EVENT_FACTS``; an app_state entry's too)."""
    facts = EVENT_FACTS.get(str(event.get("type")), ())
    entry = event.get("entry")
    if facts == ("entry",) and isinstance(entry, dict) and entry.get("type") == "app_state":
        return ("entry", "app_state")
    return facts


def _add(session_id: str, facts: Iterable[str]) -> None:
    counts = _counts.setdefault(session_id, {})
    for fact in facts:
        counts[fact] = counts.get(fact, 0) + 1


def facts_bump(*, session_id: str, facts: Iterable[str]) -> dict[str, Any]:
    """Count ``facts`` of a session as committed; call only after their commit. Returns
    the change an announcement carries (its id names it across processes)."""
    kinds = sorted({f for f in facts if f in FACT_KINDS})
    with _lock:
        _add(session_id, kinds)
        return {"id": f"{PROCESS}-{next(_numbers)}", "facts": kinds}


def change_observe(*, session_id: str, change: Any) -> bool:
    """Apply a change an announcement carried (another process's bump), once per process.

    False when ``change`` says nothing usable: the watcher must then read the database.
    """
    if not isinstance(change, dict):
        return False
    change_id, facts = change.get("id"), change.get("facts")
    if not isinstance(change_id, str) or not isinstance(facts, list):
        return False
    if change_id.startswith(f"{PROCESS}-"):
        return True  # bumped here already, before it was sent
    with _lock:
        if change_id in _seen:
            _seen[change_id] = None  # a hit keeps it among the recent
            return True
        _seen[change_id] = None
        _add(session_id, [f for f in facts if f in FACT_KINDS])
    return True


def event_numbered(*, session_id: str, source: str, n: int) -> None:
    """The sink ``source`` of this process gave a session's event the number ``n`` (before
    it is sent, or dropped)."""
    with _lock:
        _numbered[session_id] = (source, n)


def last_event_number(session_id: str) -> tuple[str, int] | None:
    """The last event of the session a sink of this process numbered, as (its sink, its
    number), or None: a watcher that saw that one missed none of this process's events."""
    with _lock:
        return _numbered.get(session_id)


def fact_counts(session_id: str) -> dict[str, int]:
    """A copy of a session's counts (no database): read before a pass reads the journal,
    so a bump during the read shows as a change at the next pass."""
    with _lock:
        return dict(_counts.get(session_id, ()))
