"""Who may see and change a session: its owner everything; staff may read every session.

Whatever is not the caller's to see is refused exactly like an id that does not exist,
so a refusal says nothing about other users' data.
"""

from __future__ import annotations

from typing import Any

from jaiweb.store.errors import OperationNotFound, SessionNotFound
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import operation_get, session_get


def may_see(*, user: Any, owner_id: Any, write: bool = False) -> bool:
    """The one rule: the owner may do anything, staff may read."""
    if not getattr(user, "is_authenticated", False):
        return False
    return owner_id == user.pk or (user.is_staff and not write)


def session_for(*, user: Any, session_id: str, write: bool = False) -> ComicSession:
    """The session if ``user`` may see it (or change it, with ``write``); ``SessionNotFound``
    otherwise."""
    session = session_get(session_id=session_id)
    if not may_see(user=user, owner_id=session.owner_id, write=write):
        raise SessionNotFound(session_id)
    return session


def operation_for(*, user: Any, operation_id: str, write: bool = False) -> Operation:
    """The operation if its session is one ``user`` may see (or change, with ``write``)."""
    op = operation_get(operation_id=operation_id)
    if op.session.deleting or not may_see(user=user, owner_id=op.session.owner_id, write=write):
        raise OperationNotFound(operation_id)
    return op
