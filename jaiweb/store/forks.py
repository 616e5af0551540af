"""A session made from a path of another: "fork into a new session" copies root → node."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from jaiweb.store.appends import append_entries
from jaiweb.store.errors import InvalidEntry, SessionNotFound
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import branch_get, session_get
from jaiweb.store.services import session_create
from journal.branches import straightened


def session_fork(
    *,
    session_id: str,
    entry_id: str,
    owner: Any,
    title: str | None = None,
    now: datetime | None = None,
) -> ComicSession:
    """A new session of ``owner`` holding root → ``entry_id`` of the source, as one branch,
    with where it came from in ``origin``. Entries keep their ids (they are the same facts);
    the source's operations stay with the source."""
    now = now or timezone.now()
    source = session_get(session_id=session_id)
    if source.owner_id != owner.pk:
        # the fork would name the source's panels, which stay their owner's alone
        raise SessionNotFound(session_id)
    path = straightened(branch_get(session=source, leaf_id=entry_id))  # UnknownEntry if not there
    if not path:
        raise InvalidEntry("nothing to fork: the path is empty")
    with transaction.atomic():
        fork = session_create(
            owner=owner,
            title=title or source.title,
            initial_app_state=source.initial_app_state,
            now=now,
        )
        fork.origin = {"forked_from": {"session_id": source.id, "entry_id": entry_id}}
        fork.save(update_fields=["origin"])
        append_entries(fork.id, path, expected_leaf_id=None, now=now)
    fork.refresh_from_db()
    return fork
