"""A session's status: idle, running (an unfinished operation) or parked (waiting for an admin)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import unfinished_operation

SessionState = Literal["idle", "running", "parked"]
UNREAD = object()  # ``session_status``'s operation when the caller has not read it


@dataclass(frozen=True, slots=True)
class SessionStatus:
    state: SessionState
    operation_id: str | None
    parked_reason: str | None = None


def session_status(*, session: ComicSession, operation: object = UNREAD) -> SessionStatus:
    """The status of the session's unfinished operation (``Operation.state``), or idle.
    ``operation``: that operation (or None) when the caller has read it already."""
    op = unfinished_operation(session=session) if operation is UNREAD else operation
    if op is None:
        return SessionStatus("idle", None)
    if op.state == "parked":
        return SessionStatus("parked", op.id, op.attention or None)
    return SessionStatus("running", op.id)
