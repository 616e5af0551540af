"""Big session trees written straight to the store, for the explorer's tests and bench/web.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import transaction

from jaiweb.store.chains import entry_rows
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.services import session_create
from journal.entries import AppStateEntry, BranchEntry, MessageEntry, UserMessage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def big_tree_create(*, owner, depth: int, forks: int, fork_len: int, title: str = "big"):
    """A main line ``m0…`` of ``depth`` entries (the leaf at its end) and ``forks`` side
    branches of ``fork_len`` entries, each opened by a branch entry somewhere on the line."""
    entries = []
    parent = None
    for i in range(depth):
        ts = T0 + timedelta(seconds=i)
        if i % 10 == 9:
            entry = AppStateEntry(
                id=f"m{i}", parent_id=parent, timestamp=ts, value={"characters": {"猪猪侠": {}}}
            )
        else:
            message = UserMessage(content=f"main line <{i}>")
            entry = MessageEntry(id=f"m{i}", parent_id=parent, timestamp=ts, message=message)
        entries.append(entry)
        parent = entry.id
    for k in range(forks):
        at = f"m{(k * 7919) % max(depth - 1, 1)}"
        ts = T0 + timedelta(days=1, seconds=k)
        entries.append(BranchEntry(id=f"b{k}", parent_id=at, timestamp=ts, from_id="m0"))
        parent = f"b{k}"
        for j in range(fork_len - 1):
            message = UserMessage(content=f"side {k}.{j}")
            entries.append(
                MessageEntry(id=f"s{k}_{j}", parent_id=parent, timestamp=ts, message=message)
            )
            parent = f"s{k}_{j}"
    session = session_create(owner=owner, title=title)
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries), batch_size=2000)
        ComicSession.objects.filter(pk=session.id).update(
            leaf_id=f"m{depth - 1}", entry_count=len(entries)
        )
    session.refresh_from_db()
    return session
