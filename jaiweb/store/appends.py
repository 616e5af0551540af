"""The two append primitives every write goes through. Call them inside ``transaction.atomic``.

``append_entries`` checks the expected leaf and moves it in one UPDATE (the session row
is locked until commit, so concurrent appends queue and the loser sees a stale leaf),
then checks parents and ids with one SELECT and inserts. ``append_records`` allocates
record numbers the same way on the operation row and, for a runner, checks its fencing
number in that same UPDATE.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import connection

from jaiweb.store.errors import (
    InvalidEntry,
    LeaseLost,
    OperationNotFound,
    OperationStateConflict,
    SessionNotFound,
    StaleLeaf,
)
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from journal.entries import Entry as JournalEntry
from journal.entries import entry_to_dict
from journal.records import OperationFinished, record_to_dict
from journal.records import Record as JournalRecord


def _null_safe_eq() -> str:
    return "IS" if connection.vendor == "sqlite" else "IS NOT DISTINCT FROM"


def append_entries(
    session_id: str,
    entries: Sequence[JournalEntry],
    *,
    expected_leaf_id: str | None,
    now: datetime,
) -> int:
    """Append entries after ``expected_leaf_id``; the last one becomes the leaf. Returns its seq.

    Refuses with ``StaleLeaf`` when the leaf moved, ``InvalidEntry`` on an unknown parent,
    a duplicate id or a second root, ``SessionNotFound``. Raises before any insert, and the
    caller's transaction rolls the leaf back.
    """
    if not entries:
        raise InvalidEntry("nothing to append")
    new_ids = [e.id for e in entries]
    if len(set(new_ids)) != len(new_ids):
        raise InvalidEntry("the entries to append repeat an id")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_comicsession SET leaf_id = %s, entry_count = entry_count + %s, "
            f"updated_at = %s WHERE id = %s AND leaf_id {_null_safe_eq()} %s "
            "AND deleting = %s RETURNING entry_count",
            [new_ids[-1], len(entries), now, session_id, expected_leaf_id, False],
        )
        row = cursor.fetchone()
        if row is None:
            actual = (
                ComicSession.objects.filter(pk=session_id, deleting=False)
                .values_list("leaf_id", flat=True)
                .first()
            )
            if actual is None and not ComicSession.objects.filter(pk=session_id).exists():
                raise SessionNotFound(session_id)
            raise StaleLeaf(session_id, expected_leaf_id, actual)
        first_seq = row[0] - len(entries) + 1

        outside_parents = {e.parent_id for e in entries if e.parent_id is not None} - set(new_ids)
        wanted = sorted(outside_parents | set(new_ids))
        placeholders = ",".join(["%s"] * len(wanted))
        cursor.execute(
            f"SELECT entry_id FROM store_entry WHERE session_id = %s "
            f"AND entry_id IN ({placeholders})",
            [session_id, *wanted],
        )
        found = {r[0] for r in cursor.fetchall()}

    taken = found & set(new_ids)
    if taken:
        raise InvalidEntry(f"entry id {sorted(taken)[0]!r} is already in the session")
    missing = outside_parents - found
    if missing:
        raise InvalidEntry(f"parent {sorted(missing)[0]!r} is not in the session")
    seen: set[str] = set()
    batch = set(new_ids)
    for pos, entry in enumerate(entries):
        if entry.parent_id is None and (first_seq + pos != 1):
            raise InvalidEntry(f"entry {entry.id!r} has no parent, but the session has a root")
        if entry.parent_id in batch and entry.parent_id not in seen:
            raise InvalidEntry(f"entry {entry.id!r} comes before its parent {entry.parent_id!r}")
        seen.add(entry.id)

    Entry.objects.bulk_create(
        [
            Entry(
                session_id=session_id,
                seq=first_seq + pos,
                entry_id=entry.id,
                parent_id=entry.parent_id,
                type=entry.type,
                payload=entry_to_dict(entry),
                timestamp=entry.timestamp,
            )
            for pos, entry in enumerate(entries)
        ]
    )
    return first_seq + len(entries) - 1


def append_records(
    operation_id: str,
    records: Sequence[JournalRecord],
    *,
    fencing: int | None,
    now: datetime,
) -> int:
    """Append records to an unfinished operation; returns the last record's seq.

    With ``fencing`` (a runner's write) the operation's fencing number must still be that
    one, else ``LeaseLost``. Without it (a write from the web) the caller has checked the
    operation's state under lock. ``operation_finished`` sets the outcome in the same
    statement's transaction and releases the lease.
    """
    if not records:
        raise OperationStateConflict("nothing to append")
    for record in records:
        if record.operation_id != operation_id:
            raise OperationStateConflict(
                f"record for {record.operation_id!r} appended to operation {operation_id!r}"
            )
    for record in records[:-1]:
        if isinstance(record, OperationFinished):
            raise OperationStateConflict("operation_finished must be the last record")
    fence = "" if fencing is None else " AND fencing = %s"
    params: list = [len(records), operation_id] + ([] if fencing is None else [fencing])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_operation SET record_count = record_count + %s "
            f"WHERE id = %s AND outcome IS NULL{fence} RETURNING record_count",
            params,
        )
        row = cursor.fetchone()
    if row is None:
        op = Operation.objects.filter(pk=operation_id).values("outcome", "fencing").first()
        if op is None:
            raise OperationNotFound(operation_id)
        if op["outcome"] is not None:
            raise OperationStateConflict(f"operation {operation_id!r} is finished")
        raise LeaseLost(operation_id, fencing or 0)
    first_seq = row[0] - len(records) + 1
    OperationRecord.objects.bulk_create(
        [
            OperationRecord(
                operation_id=operation_id,
                seq=first_seq + pos,
                type=record.type,
                payload=record_to_dict(record),
                timestamp=record.timestamp,
            )
            for pos, record in enumerate(records)
        ]
    )
    last = records[-1]
    if isinstance(last, OperationFinished):
        Operation.objects.filter(pk=operation_id).update(
            outcome=last.outcome,
            finished_at=last.timestamp,
            lease_owner=None,
            lease_expires_at=None,
            parked_at=None,
        )
    return first_seq + len(records) - 1
