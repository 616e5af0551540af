"""Who may see and change what: owners everything of theirs, staff may read every session.

Whatever is not the caller's to see is refused exactly like an id that does not exist.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from jaiweb.store.errors import OperationNotFound
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import operation_get, session_get


def session_for(*, user: Any, session_id: str, write: bool = False) -> ComicSession:
    """The session if ``user`` owns it, or may read it (staff); ``SessionNotFound`` otherwise."""
    owner = None if (user.is_staff and not write) else user
    return session_get(session_id=session_id, owner=owner)


def operation_for(*, user: Any, operation_id: str, write: bool = False) -> Operation:
    """The operation if its session is one ``user`` may see (or change, with ``write``)."""
    op = operation_get(operation_id=operation_id)
    mine = op.session.owner_id == user.pk
    if op.session.deleting or not (mine or (user.is_staff and not write)):
        raise OperationNotFound(operation_id)
    return op


def staff_only(user: Any) -> None:
    if not user.is_staff:
        raise PermissionDenied("only staff may use the recovery inbox")
