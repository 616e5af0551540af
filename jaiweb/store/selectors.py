"""Reads of the two journals. One path is read with a recursive query, never the whole tree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from pydantic import TypeAdapter

from jaiweb.store.errors import OperationNotFound, SessionNotFound
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from journal.entries import AppStateEntry, AssistantMessage, MessageEntry
from journal.entries import Entry as JournalEntry
from journal.errors import BrokenSessionTree, UnknownEntry
from journal.records import Record as JournalRecord
from journal.recovery import RecoveryEvidence, Verdict, fold_operation, verdict_for

_entries_json: TypeAdapter[list[JournalEntry]] = TypeAdapter(list[JournalEntry])


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """An entry with its append number in the session."""

    seq: int
    entry: JournalEntry


def _payload_text() -> str:
    # Raw JSON text, so a whole path is validated by pydantic in one call.
    return "payload" if connection.vendor == "sqlite" else "payload::text"


def _parse(rows: list[tuple[int, str]]) -> list[StoredEntry]:
    entries = _entries_json.validate_json("[" + ",".join(r[1] for r in rows) + "]")
    return [StoredEntry(r[0], e) for r, e in zip(rows, entries, strict=True)]


def session_get(*, session_id: str, owner: Any = None) -> ComicSession:
    """The session; with ``owner``, only if it is theirs (``SessionNotFound`` otherwise)."""
    qs = ComicSession.objects.filter(pk=session_id, deleting=False)
    if owner is not None:
        qs = qs.filter(owner=owner)
    session = qs.first()
    if session is None:
        raise SessionNotFound(session_id)
    return session


def branch_rows(*, session: ComicSession, leaf_id: str | None = None) -> list[StoredEntry]:
    """Root → leaf (default: the session's leaf), read by walking parent ids in the database."""
    leaf = session.leaf_id if leaf_id is None else leaf_id
    if leaf is None:
        return []
    sql = f"""
        WITH RECURSIVE path(seq, parent_id, payload, depth) AS (
            SELECT seq, parent_id, {_payload_text()}, 0 FROM store_entry
             WHERE session_id = %s AND entry_id = %s
            UNION ALL
            SELECT e.seq, e.parent_id, {_payload_text().replace("payload", "e.payload")},
                   p.depth + 1
              FROM store_entry e JOIN path p ON e.entry_id = p.parent_id
             WHERE e.session_id = %s AND p.depth < %s
        )
        SELECT seq, payload, parent_id FROM path ORDER BY depth DESC"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.id, leaf, session.id, session.entry_count])
        rows = cursor.fetchall()
    if not rows:
        if leaf_id is not None:
            raise UnknownEntry(leaf_id)
        raise BrokenSessionTree("the stored leaf is not in the session", leaf_id=leaf)
    if rows[0][2] is not None:
        raise BrokenSessionTree(
            f"missing parent {rows[0][2]!r}, or a cycle", leaf_id=leaf, entry_id=rows[0][2]
        )
    return _parse([(r[0], r[1]) for r in rows])


def branch_get(*, session: ComicSession, leaf_id: str | None = None) -> list[JournalEntry]:
    return [row.entry for row in branch_rows(session=session, leaf_id=leaf_id)]


def app_state_from_branch(session: ComicSession, branch: Iterable[JournalEntry]) -> dict:
    """The last ``app_state`` on a loaded branch, or the session's initial state."""
    value = session.initial_app_state
    for entry in branch:
        if isinstance(entry, AppStateEntry):
            value = entry.value
    return value


def app_state_at(*, session: ComicSession, leaf_id: str | None = None) -> dict:
    """The app state at a node: walks up only to the nearest ``app_state`` entry."""
    leaf = session.leaf_id if leaf_id is None else leaf_id
    if leaf is None:
        return session.initial_app_state
    sql = f"""
        WITH RECURSIVE up(parent_id, type, payload, depth) AS (
            SELECT parent_id, type, {_payload_text()}, 0 FROM store_entry
             WHERE session_id = %s AND entry_id = %s
            UNION ALL
            SELECT e.parent_id, e.type, {_payload_text().replace("payload", "e.payload")},
                   u.depth + 1
              FROM store_entry e JOIN up u ON e.entry_id = u.parent_id
             WHERE e.session_id = %s AND u.type <> 'app_state' AND u.depth < %s
        )
        SELECT payload FROM up WHERE type = 'app_state'"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.id, leaf, session.id, session.entry_count])
        row = cursor.fetchone()
    if row is None:
        if not entry_exists(session=session, entry_id=leaf):
            raise UnknownEntry(leaf)
        return session.initial_app_state
    return _parse([(0, row[0])])[0].entry.value


def entry_exists(*, session: ComicSession, entry_id: str) -> bool:
    return Entry.objects.filter(session=session, entry_id=entry_id).exists()


def entry_get(*, session: ComicSession, entry_id: str) -> StoredEntry:
    row = Entry.objects.filter(session=session, entry_id=entry_id).values_list("seq").first()
    if row is None:
        raise UnknownEntry(entry_id)
    return entries_by_seq(session=session, seqs=[row[0]])[0]


def entries_by_seq(*, session: ComicSession, seqs: list[int]) -> list[StoredEntry]:
    placeholders = ",".join(["%s"] * len(seqs))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, {_payload_text()} FROM store_entry WHERE session_id = %s "
            f"AND seq IN ({placeholders}) ORDER BY seq",
            [session.id, *seqs],
        )
        return _parse(cursor.fetchall())


def children_rows(*, session: ComicSession, entry_id: str | None) -> list[StoredEntry]:
    """A node's children in append order (``None``: the root)."""
    if entry_id is not None and not entry_exists(session=session, entry_id=entry_id):
        raise UnknownEntry(entry_id)
    cond = "parent_id IS NULL" if entry_id is None else "parent_id = %s"
    params = [session.id] + ([] if entry_id is None else [entry_id])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, {_payload_text()} FROM store_entry WHERE session_id = %s AND {cond} "
            "ORDER BY seq",
            params,
        )
        return _parse(cursor.fetchall())


def entries_after(*, session: ComicSession, after_seq: int = 0, limit: int = 1000):
    """Entries in append order after a seq: what a client that missed events catches up with."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, {_payload_text()} FROM store_entry WHERE session_id = %s AND seq > %s "
            "ORDER BY seq LIMIT %s",
            [session.id, after_seq, limit],
        )
        return _parse(cursor.fetchall())


def entry_ids_among(*, session: ComicSession, ids: Iterable[str]) -> set[str]:
    """Which of these ids are entries of the session (recovery evidence)."""
    wanted = list(set(ids))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        found.update(
            Entry.objects.filter(session=session, entry_id__in=chunk).values_list(
                "entry_id", flat=True
            )
        )
    return found


def unfinished_operation(*, session: ComicSession) -> Operation | None:
    return Operation.objects.filter(session=session, outcome__isnull=True).first()


def operation_get(*, operation_id: str) -> Operation:
    op = Operation.objects.select_related("session").filter(pk=operation_id).first()
    if op is None:
        raise OperationNotFound(operation_id)
    return op


def operation_records(*, operation_id: str) -> list[JournalRecord]:
    rows = OperationRecord.objects.filter(operation_id=operation_id).order_by("seq")
    return [row.to_journal() for row in rows]


def recovery_evidence(*, session: ComicSession, records: list[JournalRecord]) -> RecoveryEvidence:
    """Which entries the records name exist, and which of those assistant replies were final."""
    named = fold_operation(records).named_entry_ids()
    rows = Entry.objects.filter(session=session, entry_id__in=named).values_list(
        "entry_id", "type", "payload"
    )
    present: set[str] = set()
    final: dict[str, str] = {}
    for entry_id, type_, payload in rows:
        present.add(entry_id)
        if type_ == "message" and payload["message"]["role"] == "assistant":
            message = MessageEntry.model_validate(payload).message
            if isinstance(message, AssistantMessage) and message.is_final:
                final[entry_id] = message.stop_reason
    return RecoveryEvidence(entry_ids=frozenset(present), final_assistant_entries=final)


def operation_verdict(*, operation: Operation) -> Verdict:
    """``recover_operation`` on the stored log (``CorruptedOperationLog`` propagates)."""
    records = operation_records(operation_id=operation.id)
    return verdict_for(
        fold_operation(records), recovery_evidence(session=operation.session, records=records)
    )
