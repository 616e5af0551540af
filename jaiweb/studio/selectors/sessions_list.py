"""Reads behind the sessions list: the owner's sessions as cards."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaiweb.store.models import ComicSession, Operation, operation_state
from jaiweb.store.selectors import branch_counts, latest_tool_result


@dataclass(frozen=True, slots=True)
class SessionCard:
    session: ComicSession
    branches: int
    thumbnail: str | None
    state: str  # idle / running / parked


def my_sessions(*, owner: Any) -> list[SessionCard]:
    """The owner's sessions, latest activity first, with a thumbnail of the latest panel."""
    sessions = list(
        ComicSession.objects.filter(owner=owner, deleting=False).order_by("-updated_at")
    )
    ids = [session.id for session in sessions]
    branches = branch_counts(session_ids=ids)
    unfinished = dict(
        Operation.objects.filter(session_id__in=ids, outcome__isnull=True).values_list(
            "session_id", "parked_at"
        )
    )
    cards = []
    for session in sessions:
        latest = latest_tool_result(session=session, tool="generate_image") or {}
        image = latest.get("details", {}).get("image_id")
        if session.id in unfinished:
            state = operation_state(outcome=None, parked_at=unfinished[session.id])
        else:
            state = "idle"
        cards.append(SessionCard(session, branches.get(session.id, 0), image, state))
    return cards
