"""Reads behind the timeline page: the timeline of a session's first entries."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import entries_after
from journal.timeline import timeline, timeline_data


@lru_cache(maxsize=8)
def _timeline_of(session_id: str, count: int) -> dict[str, Any]:
    session = ComicSession.objects.get(pk=session_id)
    rows = entries_after(session=session, after_seq=0, limit=count) if count else []
    return timeline_data(timeline([row.entry for row in rows], session.initial_app_state))


def timeline_of(*, session: ComicSession, count: int) -> dict[str, Any]:
    """The timeline of the session's first ``count`` entries, as the page's script reads it.

    Entries never change, so the first ``count`` of a session always make the same timeline:
    kept per process for the last few asked for (each ``?at=`` of the page is a new load of
    the same one; 10,000 entries take a second or two to read and parse).
    """
    return _timeline_of(session.id, count)
