"""Reads of where a forked session came from, as a viewer may be told it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaiweb.commands.access import may_see
from jaiweb.store.models import ComicSession


@dataclass(frozen=True, slots=True)
class Origin:
    title: str  # the source's title ("" once it is gone, or when the viewer may not see it)
    session_id: str | None  # the source, when the viewer may see it (a link back)
    entry_id: str  # the node the fork's branch ends at


def fork_origin(*, session: ComicSession, viewer: Any) -> Origin | None:
    """Where ``session`` was forked from (its ``origin``), as ``viewer`` may be told it."""
    forked = (session.origin or {}).get("forked_from")
    if not isinstance(forked, dict):
        return None
    source = (
        ComicSession.objects.filter(pk=str(forked.get("session_id", "")), deleting=False)
        .only("id", "title", "owner_id")
        .first()
    )
    if source is None:
        return Origin("", None, str(forked.get("entry_id", "")))
    if not may_see(user=viewer, owner_id=source.owner_id):
        return Origin("", None, str(forked.get("entry_id", "")))
    return Origin(source.title, source.id, str(forked.get("entry_id", "")))
