"""The two append primitives every write goes through. Call them inside ``transaction.atomic``.

``append_entries`` checks the expected leaf and moves it in one UPDATE (the session row
is locked until commit, so concurrent appends queue and the loser sees a stale leaf),
then checks parents and ids with one SELECT and inserts. ``append_records`` allocates
record numbers the same way on the operation row and, for a runner, checks its fencing
number in that same UPDATE.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, transaction

from jaiweb.store.errors import (
    InvalidEntry,
    LeaseLost,
    OperationNotFound,
    OperationStateConflict,
    SessionBusy,
    SessionNotFound,
    StaleLeaf,
    StaleLog,
)
from jaiweb.store.models import ComicSession, Operation
from journal.entries import Entry as JournalEntry
from journal.records import OperationFinished
from journal.records import Record as JournalRecord

_IDLE = (
    " AND NOT EXISTS (SELECT 1 FROM store_operation o"
    " WHERE o.session_id = %(sid)s AND o.outcome IS NULL)"
)
_FIRST_CHILD = (
    "NOT EXISTS (SELECT 1 FROM store_entry c"
    " WHERE c.session_id = %(sid)s AND c.parent_id = %(parent)s)"
)


def _append_sql(*, root: bool, require_idle: bool) -> tuple[str, str]:
    """The two halves of one append: move the leaf if every check holds; insert the row.

    The UPDATE's WHERE holds every check (expected leaf, parent exists or the session is
    empty, idle when asked); ``{seq}`` in the INSERT is where the new seq goes.
    """
    eq = "IS" if connection.vendor == "sqlite" else "IS NOT DISTINCT FROM"
    move = (
        "UPDATE store_comicsession SET leaf_id = %(id)s, entry_count = entry_count + 1, "
        f"updated_at = %(now)s WHERE id = %(sid)s AND leaf_id {eq} %(leaf)s "
        "AND deleting = %(no)s"
    )
    if root:
        move += " AND entry_count = 0"
    else:
        move += (
            " AND EXISTS (SELECT 1 FROM store_entry p"
            " WHERE p.session_id = %(sid)s AND p.entry_id = %(parent)s)"
        )
    if require_idle:
        move += _IDLE
    payload = "%(payload)s" if connection.vendor == "sqlite" else "%(payload)s::jsonb"
    columns = "session_id, seq, entry_id, parent_id, type, payload, timestamp, chain, chain_pos"
    values = f"%(sid)s, {{seq}}, %(id)s, %(parent)s, %(type)s, {payload}, %(ts)s"
    if root:
        insert = f"INSERT INTO store_entry ({columns}) SELECT {values}, {{seq}}, 0"
    else:
        insert = (
            f"INSERT INTO store_entry ({columns}) SELECT {values}, "
            f"CASE WHEN {_FIRST_CHILD} THEN p.chain ELSE {{seq}} END, "
            f"CASE WHEN {_FIRST_CHILD} THEN p.chain_pos + 1 ELSE 0 END "
            "FROM {from}store_entry p WHERE p.session_id = %(sid)s AND p.entry_id = %(parent)s"
        )
    return move, insert


@lru_cache(maxsize=8)
def _sqlite_sql(root: bool, require_idle: bool) -> tuple[str, str]:
    """The SQLite statements with sqlite3's own ``:name`` placeholders, converted once."""
    move, insert = _append_sql(root=root, require_idle=require_idle)
    names = {name: f":{name}" for name in _PARAM_NAMES}
    insert = insert.replace("{seq}", "%(seq)s").replace("{from}", "")
    return (move + " RETURNING entry_count") % names, insert % names


@lru_cache(maxsize=8)
def _postgres_sql(root: bool, require_idle: bool) -> str:
    """One statement: the leaf moves and the row goes in together, or neither happens."""
    move, insert = _append_sql(root=root, require_idle=require_idle)
    insert = insert.replace("{seq}", "s.entry_count").replace("{from}", "s, ")
    if root:
        insert += " FROM s"
    return f"WITH s AS ({move} RETURNING entry_count) {insert} RETURNING seq"


_PARAM_NAMES = ("sid", "id", "parent", "leaf", "now", "no", "type", "payload", "ts", "seq")


def _append_one(
    db,
    cursor,
    session_id: str,
    entry: JournalEntry,
    leaf: str | None,
    now: Any,
    require_idle: bool,
) -> int | None:
    """One entry, every check inside the statements; None when a check refused it.

    ``db`` is the connection's own wrapper (``django.db.connection`` resolves it through
    an asgiref Local on every attribute: a dozen lookups an append, read once instead).
    On SQLite ``cursor`` is the driver's own cursor: the hot path skips Django's wrapper.
    """
    root = entry.parent_id is None
    params = {
        "sid": session_id,
        "id": entry.id,
        "parent": entry.parent_id,
        "leaf": leaf,
        "now": now,
        "no": False,
        "type": entry.type,
        "payload": entry.model_dump_json(),
        "ts": db.ops.adapt_datetimefield_value(entry.timestamp),
    }
    if db.vendor == "postgresql":
        cursor.execute(_postgres_sql(root, require_idle), params)
        row = cursor.fetchone()
        return None if row is None else row[0]
    move, insert = _sqlite_sql(root, require_idle)
    row = cursor.execute(move, params).fetchone()
    if row is None:
        return None
    params["seq"] = row[0]
    cursor.execute(insert, params)
    return row[0]


def _refusal(
    session_id: str, entry: JournalEntry, leaf: str | None, require_idle: bool
) -> Exception:
    """Why an append was refused: read only after the fact, on the slow path."""
    row = ComicSession.objects.filter(pk=session_id).values("leaf_id", "deleting").first()
    if row is None or row["deleting"]:
        return SessionNotFound(session_id)
    if row["leaf_id"] != leaf:
        return StaleLeaf(session_id, leaf, row["leaf_id"])
    if require_idle:
        op = Operation.objects.filter(session_id=session_id, outcome__isnull=True).first()
        if op is not None:
            return SessionBusy(session_id, op.id, parked=op.is_parked)
    if entry.parent_id is None:
        return InvalidEntry(f"entry {entry.id!r} has no parent, but the session has a root")
    return InvalidEntry(f"parent {entry.parent_id!r} is not in the session")


def append_entries(
    session_id: str,
    entries: Sequence[JournalEntry],
    *,
    expected_leaf_id: str | None,
    now: datetime,
    require_idle: bool = False,
    savepoint: bool = True,
) -> int:
    """Append entries after ``expected_leaf_id``; the last one becomes the leaf. Returns its seq.

    Each entry is one statement on PostgreSQL (two on SQLite) that moves the leaf only if
    it still is the expected one, the parent exists (or, for a root, the session is empty)
    and, with ``require_idle``, no operation is unfinished. Refusals: ``StaleLeaf``,
    ``InvalidEntry`` (unknown parent, duplicate id, second root), ``SessionNotFound``,
    ``SessionBusy``. Several entries go in one transaction.
    """
    if not entries:
        raise InvalidEntry("nothing to append")
    new_ids = [e.id for e in entries]
    if len(set(new_ids)) != len(new_ids):
        raise InvalidEntry("the entries to append repeat an id")
    batch, seen = set(new_ids), set()
    for entry in entries:
        if entry.parent_id in batch and entry.parent_id not in seen:
            raise InvalidEntry(f"entry {entry.id!r} comes before its parent {entry.parent_id!r}")
        seen.add(entry.id)

    db = connections[DEFAULT_DB_ALIAS]  # what django.db.connection is, looked up once
    stamp = db.ops.adapt_datetimefield_value(now)
    if db.in_atomic_block:
        if not savepoint:  # the caller's transaction fails whole on a refusal
            return _append_all(db, session_id, entries, expected_leaf_id, stamp, require_idle)
        with transaction.atomic():  # a savepoint: a refused entry leaves the caller's work intact
            return _append_all(db, session_id, entries, expected_leaf_id, stamp, require_idle)
    if db.vendor == "postgresql":
        if len(entries) == 1:  # one statement in autocommit: it applies whole or not at all
            return _append_all(db, session_id, entries, expected_leaf_id, stamp, require_idle)
        with transaction.atomic():
            return _append_all(db, session_id, entries, expected_leaf_id, stamp, require_idle)
    # SQLite outside a transaction: BEGIN IMMEDIATE … COMMIT on the driver's connection,
    # the same thing transaction.atomic() does here, at a fraction of its cost per append.
    # The backend (jaiweb.store.sqlite) queues this process's writers on a lock.
    db.write_begin()
    try:
        seq = _append_all(db, session_id, entries, expected_leaf_id, stamp, require_idle)
    except BaseException:
        db.write_end(commit=False)
        raise
    db.write_end(commit=True)
    return seq


def _append_all(
    db,
    session_id: str,
    entries: Sequence[JournalEntry],
    leaf: str | None,
    stamp: Any,
    require_idle: bool,
) -> int:
    if db.vendor == "sqlite":
        db.ensure_connection()
        cursor_context: Any = closing(db.connection.cursor())
    else:
        cursor_context = db.cursor()
    with cursor_context as cursor:
        for entry in entries:
            try:
                seq = _append_one(db, cursor, session_id, entry, leaf, stamp, require_idle)
            except (IntegrityError, sqlite3.IntegrityError) as exc:
                if "entry_id_per_session" in str(exc) or "entry_id" in str(exc):
                    raise InvalidEntry(f"entry id {entry.id!r} is already in the session") from None
                raise
            if seq is None:
                raise _refusal(session_id, entry, leaf, require_idle)
            leaf = entry.id
    return seq


def append_records(
    operation_id: str,
    records: Sequence[JournalRecord],
    *,
    fencing: int | None,
    now: datetime,
    expected_seq: int | None = None,
    waiting_end: bool = False,
) -> int:
    """Append records to an unfinished operation; returns the last record's seq.

    ``waiting_end``: the records answer what the run waited for (a decision, a stop), so
    the operation is claimable again.

    With ``fencing`` (a runner's write) the operation's fencing number must still be that
    one, else ``LeaseLost``. With ``expected_seq`` the log must still end at that record
    (the one the runner decided from), else ``StaleLog``; both checks are in the UPDATE
    that allocates the new seqs, so they hold at commit. Without them (a write from the
    web) the caller has checked the operation's state under lock; either way writers of
    one operation queue on its row. ``operation_finished`` sets the outcome in the same
    transaction and releases the lease.
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
    fence, checks = _checks(fencing, expected_seq)
    # One UPDATE of the operation row per transaction, whatever the records: a second one
    # would make PostgreSQL re-check the row's foreign key to its session at COMMIT (the
    # row version is then this transaction's own), taking a lock on the session row after
    # the operation row's, the reverse of the documented order (session, then operation),
    # and deadlocking against a prompt that holds the session and waits for the operation.
    db = connections[DEFAULT_DB_ALIAS]  # what django.db.connection is, looked up once
    stamp = db.ops.adapt_datetimefield_value
    sets, values = "", []
    last = records[-1]
    if isinstance(last, OperationFinished):
        sets = (
            ", outcome = %s, finished_at = %s, lease_owner = NULL, lease_expires_at = NULL, "
            "parked_at = NULL, waiting_since = NULL"
        )
        values = [last.outcome, stamp(last.timestamp)]
    elif waiting_end:
        sets = ", waiting_since = NULL"
    payload = "%s" if db.vendor == "sqlite" else "%s::jsonb"
    insert = (
        "INSERT INTO store_operationrecord (operation_id, seq, type, payload, timestamp) "
        f"VALUES (%s, %s, %s, {payload}, %s)"
    )
    with db.cursor() as cursor:
        cursor.execute(
            f"UPDATE store_operation SET record_count = record_count + %s{sets} "
            f"WHERE id = %s AND outcome IS NULL{fence} RETURNING record_count",
            [len(records), *values, operation_id, *checks],
        )
        row = cursor.fetchone()
        if row is not None:
            first_seq = row[0] - len(records) + 1
            rows = [
                (operation_id, first_seq + pos, r.type, r.model_dump_json(), stamp(r.timestamp))
                for pos, r in enumerate(records)
            ]
            if len(rows) == 1:  # the common case: no executemany machinery for one row
                cursor.execute(insert, rows[0])
            else:
                cursor.executemany(insert, rows)
    if row is None:
        raise _record_refusal(operation_id, fencing, expected_seq)
    return first_seq + len(records) - 1


def _checks(fencing: int | None, expected_seq: int | None) -> tuple[str, list[int]]:
    """The WHERE clauses (and their values) of a runner's checks on the operation row."""
    sql, values = "", []
    if fencing is not None:
        sql, values = sql + " AND fencing = %s", [*values, fencing]
    if expected_seq is not None:
        sql, values = sql + " AND record_count = %s", [*values, expected_seq]
    return sql, values


def _record_refusal(operation_id: str, fencing: int | None, expected_seq: int | None) -> Exception:
    """Why the operation row refused a write: read only after the fact."""
    op = (
        Operation.objects.filter(pk=operation_id)
        .values("outcome", "fencing", "record_count")
        .first()
    )
    if op is None:
        return OperationNotFound(operation_id)
    if op["outcome"] is not None:
        return OperationStateConflict(f"operation {operation_id!r} is finished")
    if fencing is not None and op["fencing"] != fencing:
        return LeaseLost(operation_id, fencing)
    if expected_seq is not None and op["record_count"] != expected_seq:
        return StaleLog(operation_id, expected_seq, op["record_count"])
    return LeaseLost(operation_id, fencing or 0)


def fencing_check(operation_id: str, fencing: int, expected_seq: int | None = None) -> None:
    """Inside the caller's transaction: the run still holds its lease (row locked till commit),
    and, with ``expected_seq``, its log still ends where the runner read it."""
    lock = " FOR UPDATE" if connection.vendor == "postgresql" else ""
    fence, checks = _checks(fencing, expected_seq)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM store_operation WHERE id = %s AND outcome IS NULL{fence}{lock}",
            [operation_id, *checks],
        )
        if cursor.fetchone() is None:
            raise _record_refusal(operation_id, fencing, expected_seq)
