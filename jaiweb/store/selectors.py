"""Reads of the two journals. One path is read with a recursive query, never the whole tree."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from cachetools import LRUCache
from django.contrib.auth import get_user_model
from django.db import connection

from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.store import rows as stored
from jaiweb.store.entry_cache import parsed_entries
from jaiweb.store.errors import OperationNotFound, SessionNotFound
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from jaiweb.store.rows import StoredEntry, parse_rows, payload_text
from journal.chapters import Chapter, chapters_on, chapters_placed, marks_of
from journal.entries import (
    AssistantMessage,
    MessageEntry,
)
from journal.entries import Entry as JournalEntry
from journal.errors import BrokenSessionTree, UnknownEntry
from journal.ids import idempotency_key
from journal.jsonvalues import json_copy
from journal.navigation import where_i_was
from journal.records import Record as JournalRecord
from journal.records import ToolResolved, parse_record
from journal.recovery import (
    OperationLog,
    RecoveryEvidence,
    Verdict,
    fold_operation,
    verdict_for,
)


def _nameable(id_: str) -> bool:
    """Whether ``id_`` could name a stored row: no id holds a NUL (check_text refuses them
    where ids are made), and PostgreSQL refuses one in a query with an error, so an id from
    a URL such as /api/v1/sessions/%00 was a 500 there (the websocket fuzz test)."""
    return "\x00" not in id_


_SESSION = Prepared(
    lambda session_id: ComicSession.objects.filter(pk=session_id, deleting=False).values_list(
        *model_columns(ComicSession)
    ),
    session_id=str,
)
_OWNED_SESSION = Prepared(
    lambda session_id, owner: ComicSession.objects.filter(
        pk=session_id, deleting=False, owner_id=owner
    ).values_list(*model_columns(ComicSession)),
    session_id=str,
    owner=int,
)


# What a run reads as it starts: its operation's language and its session (whatever the
# session's state) with the session's owner; then the session's leaf and entry count. Every
# operation reads them: compiled once.
_RUN_START = Prepared(
    lambda operation_id: Operation.objects.filter(pk=operation_id).values_list(
        "language", *(f"session__{column}" for column in model_columns(ComicSession))
    ),
    operation_id=str,
)
_USER = Prepared(
    lambda user_id: (
        get_user_model().objects.filter(pk=user_id).values_list(*model_columns(get_user_model()))
    ),
    user_id=int,
)
_POSITION = Prepared(
    lambda session_id: ComicSession.objects.filter(pk=session_id).values_list(
        "leaf_id", "entry_count"
    ),
    session_id=str,
)


_OWNER_AT = model_columns(ComicSession).index("owner_id")


def operation_session_get(*, operation_id: str) -> tuple[ComicSession, str | None]:
    """The session an operation runs in, whatever the session's state, with its owner read
    too (the run's tools act as them); and the operation's language (None: the default).
    ``Operation.DoesNotExist`` when the operation or the session's owner is gone."""
    row = _RUN_START.first(operation_id=operation_id)
    owner = None if row is None else _USER.first(user_id=row[1 + _OWNER_AT])
    if row is None or owner is None:
        raise Operation.DoesNotExist(f"no operation {operation_id} with its session and owner")
    session = from_row(ComicSession, row[1:])
    session.owner = from_row(get_user_model(), owner)
    return session, row[0]


def session_position(*, session_id: str) -> tuple[str | None, int]:
    """The session's leaf and entry count as the database has them now.
    ``ComicSession.DoesNotExist`` when it is gone."""
    row = _POSITION.first(session_id=session_id)
    if row is None:
        raise ComicSession.DoesNotExist(f"no session {session_id}")
    return row[0], row[1]


def session_get(*, session_id: str, owner: Any = None) -> ComicSession:
    """The session; with ``owner``, only if it is theirs (``SessionNotFound`` otherwise)."""
    if not _nameable(session_id):
        raise SessionNotFound(session_id)
    if owner is None:
        row = _SESSION.first(session_id=session_id)
    else:
        row = _OWNED_SESSION.first(session_id=session_id, owner=getattr(owner, "pk", owner))
    if row is None:
        raise SessionNotFound(session_id)
    return from_row(ComicSession, row)


def branch_rows(
    *, session: ComicSession, leaf_id: str | None = None, lazy: bool = False
) -> Sequence[StoredEntry]:
    """Root → leaf (default: the session's leaf), one index range scan per chain on the path.

    Each entry continues its parent's chain unless it is a later child (a fork or a rewind):
    the walk jumps from a chain's head to its parent's chain, so it costs one step per
    fork passed, not per entry. Entries this process parsed before are not parsed again.
    ``lazy``: for a reader that touches a few rows of a long branch (a page), the path
    comes as its chain ranges (``PathRows``): a row is read when touched, a block at a
    time, and its JSON when it is parsed (``parse_rows``), so a page of a 100,000-entry
    path costs what it shows.
    """
    leaf = session.leaf_id if leaf_id is None else leaf_id
    if leaf is None:
        return []
    if lazy:
        return _lazy_path(session, leaf, known_leaf=leaf_id is None)
    # Most of the session not parsed here yet: fetch the payloads with the path, one query.
    held = parsed_entries.count(session.id)
    with_payload = held * 2 < session.entry_count
    payload = f", e.type, {payload_text().replace('payload', 'e.payload')}" if with_payload else ""
    with connection.cursor() as cursor:
        cursor.execute(_PATH_SQL.format(payload=payload), {"sid": session.id, "leaf": leaf})
        path = cursor.fetchall()  # (seq, entry_id, parent_id, chain_pos[, type, payload])
    if not path:
        if leaf_id is not None:
            raise UnknownEntry(leaf_id)
        raise BrokenSessionTree("the stored leaf is not in the session", leaf_id=leaf)
    if path[0][2] is not None or path[0][3] != 0:
        raise BrokenSessionTree(
            f"missing parent {path[0][2]!r}, or a cycle", leaf_id=leaf, entry_id=path[0][2]
        )
    # Rows not parsed here are parsed when touched; committed rows only may be kept.
    keep = None if connection.in_atomic_block else session.id
    lookup = parsed_entries.lookup
    if with_payload:
        if not held:
            return [StoredEntry(r[0], entry_id=r[1], type=r[4], raw=r[5], keep=keep) for r in path]
        return [
            StoredEntry(r[0], entry)
            if (entry := lookup(session.id, r[0], r[1])) is not None
            else StoredEntry(r[0], entry_id=r[1], type=r[4], raw=r[5], keep=keep)
            for r in path
        ]
    known = {r[0]: lookup(session.id, r[0], r[1]) for r in path}
    missing = [seq for seq, entry in known.items() if entry is None]
    raw = {r[0]: r for r in stored.raw_rows_by_seq(session.id, missing)} if missing else {}
    return [
        StoredEntry(r[0], entry)
        if (entry := known[r[0]]) is not None
        else StoredEntry(r[0], entry_id=r[1], type=raw[r[0]][1], raw=raw[r[0]][2], keep=keep)
        for r in path
    ]


# The chains of the path to a leaf, the leaf's first (depth 0), each to its last position.
_SEGMENTS_CTE = """
    WITH RECURSIVE seg(chain, last_pos, depth) AS (
        SELECT chain, chain_pos, 0 FROM store_entry
         WHERE session_id = %(sid)s AND entry_id = %(leaf)s
        UNION ALL
        SELECT p.chain, p.chain_pos, seg.depth + 1
          FROM seg
          JOIN store_entry h ON h.session_id = %(sid)s AND h.chain = seg.chain
                           AND h.chain_pos = 0
          JOIN store_entry p ON p.session_id = %(sid)s AND p.entry_id = h.parent_id
         WHERE seg.depth < (SELECT entry_count FROM store_comicsession WHERE id = %(sid)s)
    )"""
_PATH_SQL = (
    _SEGMENTS_CTE
    + """
    SELECT e.seq, e.entry_id, e.parent_id, e.chain_pos{payload}
      FROM seg JOIN store_entry e ON e.session_id = %(sid)s AND e.chain = seg.chain
                                 AND e.chain_pos <= seg.last_pos
     ORDER BY seg.depth DESC, e.chain_pos"""
)


# The same chains with each one's head (its entry at position 0): the root's must be there
# and have no parent, or the tree is broken.
_SEGMENTS_SQL = (
    _SEGMENTS_CTE
    + """
    SELECT seg.chain, seg.last_pos, h.entry_id, h.parent_id
      FROM seg LEFT JOIN store_entry h ON h.session_id = %(sid)s AND h.chain = seg.chain
                                       AND h.chain_pos = 0
     ORDER BY seg.depth DESC"""
)

# The chain ranges of paths read here, by (session, leaf): the path to an entry never
# changes, so a page drawn again reads its rows without walking the tree again.
_SEGMENTS_KEPT = 4096
_segments: LRUCache[tuple[str, str], tuple[tuple[int, int], ...]] = LRUCache(_SEGMENTS_KEPT)
_segments_lock = threading.Lock()


def _lazy_path(session: ComicSession, leaf: str, *, known_leaf: bool) -> stored.PathRows:
    """The path to ``leaf`` as its chain ranges (one recursive query, or none when this
    process read it before); rows are read when touched (``PathRows``)."""
    key = (session.id, leaf)
    keep = None if connection.in_atomic_block else session.id
    with _segments_lock:
        segments = _segments.get(key)
    if segments is None:
        with connection.cursor() as cursor:
            cursor.execute(_SEGMENTS_SQL, {"sid": session.id, "leaf": leaf})
            found = cursor.fetchall()  # (chain, last position, head id, head's parent)
        if not found:
            if not known_leaf:
                raise UnknownEntry(leaf)
            raise BrokenSessionTree("the stored leaf is not in the session", leaf_id=leaf)
        if found[0][2] is None or found[0][3] is not None:
            raise BrokenSessionTree(
                f"missing parent {found[0][3]!r}, or a cycle", leaf_id=leaf, entry_id=found[0][3]
            )
        segments = tuple((chain, last) for chain, last, _id, _parent in found)
        if keep is not None:  # committed rows only (see entry_cache)
            with _segments_lock:
                _segments[key] = segments
    return stored.PathRows(session.id, segments, keep=keep)


def _rows_by_seq(session_id: str, seqs: list[int]) -> list[StoredEntry]:
    """Entries by seq, parsed in one pydantic call."""
    return stored.parse_raw(stored.raw_rows_by_seq(session_id, seqs))


def branch_get(*, session: ComicSession, leaf_id: str | None = None) -> list[JournalEntry]:
    """Root → leaf, every entry parsed."""
    rows = branch_rows(session=session, leaf_id=leaf_id)
    parse_rows(rows)
    return [row.entry for row in rows]


def app_state_at(
    *, session: ComicSession, leaf_id: str | None = None, rows: list[StoredEntry] | None = None
) -> dict:
    """The app state at a node (default: the leaf), a copy the caller may change.

    The one read of it: the last ``app_state`` entry on the path, or the session's initial
    state. ``rows``: the path root → node, when the caller has loaded it (only its last
    ``app_state`` row is parsed); otherwise the query walks up only to the nearest one.
    """
    if rows is not None:
        for row in reversed(rows):
            if row.type == "app_state":
                return json_copy(row.entry.value)  # the cached entry stays as it was
        return json_copy(session.initial_app_state)
    leaf = session.leaf_id if leaf_id is None else leaf_id
    if leaf is None:
        return json_copy(session.initial_app_state)
    sql = f"""
        WITH RECURSIVE up(parent_id, type, payload, depth) AS (
            SELECT parent_id, type, {payload_text()}, 0 FROM store_entry
             WHERE session_id = %s AND entry_id = %s
            UNION ALL
            SELECT e.parent_id, e.type, {payload_text().replace("payload", "e.payload")},
                   u.depth + 1
              FROM store_entry e JOIN up u ON e.entry_id = u.parent_id
             WHERE e.session_id = %s AND u.type <> 'app_state'
               AND u.depth < (SELECT entry_count FROM store_comicsession WHERE id = %s)
        )
        SELECT payload FROM up WHERE type = 'app_state'"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.id, leaf, session.id, session.id])
        row = cursor.fetchone()
    if row is None:
        if not entry_exists(session=session, entry_id=leaf):
            raise UnknownEntry(leaf)
        return json_copy(session.initial_app_state)
    return json_copy(stored.parse_raw([(0, "app_state", row[0])])[0].entry.value)


def entry_exists(*, session: ComicSession, entry_id: str) -> bool:
    if not _nameable(entry_id):
        return False
    return Entry.objects.filter(session=session, entry_id=entry_id).exists()


def entry_get(*, session: ComicSession, entry_id: str) -> StoredEntry:
    if not _nameable(entry_id):
        raise UnknownEntry(entry_id)
    row = Entry.objects.filter(session=session, entry_id=entry_id).values_list("seq").first()
    if row is None:
        raise UnknownEntry(entry_id)
    return entries_by_seq(session=session, seqs=[row[0]])[0]


def entries_by_seq(*, session: ComicSession, seqs: list[int]) -> list[StoredEntry]:
    return _rows_by_seq(session.id, seqs)


def children_rows(*, session: ComicSession, entry_id: str | None) -> list[StoredEntry]:
    """A node's children in append order (``None``: the root)."""
    if entry_id is not None and not entry_exists(session=session, entry_id=entry_id):
        raise UnknownEntry(entry_id)
    cond = "parent_id IS NULL" if entry_id is None else "parent_id = %s"
    params = [session.id] + ([] if entry_id is None else [entry_id])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, type, {payload_text()} FROM store_entry "
            f"WHERE session_id = %s AND {cond} ORDER BY seq",
            params,
        )
        return stored.parse_raw(cursor.fetchall())


def entries_after(*, session: ComicSession, after_seq: int = 0, limit: int = 1000):
    """Entries in append order after a seq: what a client that missed events catches up with."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, type, {payload_text()} FROM store_entry "
            "WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            [session.id, after_seq, limit],
        )
        return stored.parse_raw(cursor.fetchall())


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


def entries_among(*, session: ComicSession, ids: Iterable[str]) -> dict[str, JournalEntry]:
    """Those of these ids that are entries of the session, parsed, by id."""
    wanted = [i for i in set(ids) if _nameable(i)]
    found: dict[str, JournalEntry] = {}
    for start in range(0, len(wanted), 500):
        seqs = list(
            Entry.objects.filter(
                session=session, entry_id__in=wanted[start : start + 500]
            ).values_list("seq", flat=True)
        )
        for row in _rows_by_seq(session.id, sorted(seqs)) if seqs else []:
            found[row.entry_id] = row.entry
    return found


# The expression of migration 0009's index, word for word: a planner uses an expression
# index only for a query that sends the same expression.
_TOOL_NAME = {
    "sqlite": "json_extract(payload, '$.message.tool_name')",
    "postgresql": "((payload -> 'message') ->> 'tool_name')",
}


def tool_results_at(*, session: ComicSession, tools: Sequence[str]) -> list[tuple[int, int, int]]:
    """(seq, chain, chain_pos) of every result of ``tools`` in the session, in no order:
    a search of the ``entry_tool_result`` index, whatever the session's size."""
    if not tools:
        return []
    name = _TOOL_NAME[connection.vendor]
    marks = ", ".join(["%s"] * len(tools))
    sql = (
        f"SELECT seq, chain, chain_pos FROM store_entry WHERE session_id = %s "
        f"AND type = 'message' AND {name} IN ({marks})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.pk, *tools])
        return cursor.fetchall()


_IMAGE_ID = {
    "sqlite": "json_extract(payload, '$.message.details.image_id')",
    "postgresql": "(((payload -> 'message') -> 'details') ->> 'image_id')",
}


_TOOL_CALL_ID = {
    "sqlite": "json_extract(payload, '$.message.tool_call_id')",
    "postgresql": "((payload -> 'message') ->> 'tool_call_id')",
}


def panel_sessions(
    *, owner: Any, image_ids: Sequence[str], keys: dict[str, str] | None = None
) -> dict[str, str]:
    """image id → the id of a session of ``owner`` that drew it (its ``generate_image``
    result): a search of ``entry_tool_result`` in each of the owner's sessions.

    A fork copies its source's results, so a panel may be in several sessions. With
    ``keys`` (image id → its render's idempotency key), such a panel goes to the session
    whose operation dispatched the call under that key: where it was drawn and charged,
    never a fork of it. Without a match, the oldest of those sessions."""
    if not image_ids:
        return {}
    marks = ", ".join(["%s"] * len(image_ids))
    image = _IMAGE_ID[connection.vendor]
    sql = (
        f"SELECT {image}, e.session_id, {_TOOL_CALL_ID[connection.vendor]} "
        "FROM store_entry e JOIN store_comicsession s ON s.id = e.session_id "
        "WHERE e.session_id IN (SELECT id FROM store_comicsession WHERE owner_id = %s) "
        f"AND e.type = 'message' AND {_TOOL_NAME[connection.vendor]} = 'generate_image' "
        f"AND {image} IN ({marks}) ORDER BY s.created_at, s.id"
    )
    candidates: dict[str, list[tuple[str, str]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [owner.pk, *image_ids])
        for image_id, session_id, call_id in cursor.fetchall():
            candidates.setdefault(image_id, []).append((session_id, call_id or ""))
    shared = {
        session_id for found in candidates.values() if len(found) > 1 for session_id, _call in found
    }
    operations: dict[str, list[str]] = {}
    if shared and keys:
        pairs = Operation.objects.filter(session_id__in=shared).values_list("session_id", "id")
        for session_id, operation_id in pairs:
            operations.setdefault(session_id, []).append(operation_id)

    def drew(session_id: str, call_id: str, key: str) -> bool:
        return any(idempotency_key(op, call_id) == key for op in operations.get(session_id, ()))

    out: dict[str, str] = {}
    for image_id, found in candidates.items():
        key = (keys or {}).get(image_id)
        matches = [s for s, call in found if key is not None and drew(s, call, key)]
        out[image_id] = matches[0] if len(found) > 1 and matches else found[0][0]
    return out


_LATEST_IMAGE = {
    "sqlite": (
        "json_extract(payload, '$.message.details.image_id')",
        "json_extract(payload, '$.message.is_error') IS NOT 1",
    ),
    "postgresql": (
        "((payload -> 'message') -> 'details') ->> 'image_id'",
        "((payload -> 'message') ->> 'is_error') IS DISTINCT FROM 'true'",
    ),
}


def latest_images(*, session_ids: Sequence[str]) -> dict[str, str]:
    """The image of each session's latest successful ``generate_image`` result, in one query.

    Each session is one backward walk of the ``entry_tool_result`` index that stops at its
    first successful result, whatever lies behind it. A session with no such result is
    left out."""
    if not session_ids:
        return {}
    image, succeeded = _LATEST_IMAGE[connection.vendor]
    marks = ", ".join(["%s"] * len(session_ids))
    sql = (
        f"SELECT s.id, (SELECT {image} FROM store_entry WHERE session_id = s.id "
        f"AND type = 'message' AND {_TOOL_NAME[connection.vendor]} = 'generate_image' "
        f"AND {succeeded} ORDER BY seq DESC LIMIT 1) "
        f"FROM {ComicSession._meta.db_table} s WHERE s.id IN ({marks})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, list(session_ids))
        return {sid: image for sid, image in cursor.fetchall() if isinstance(image, str)}


def branch_counts(*, session_ids: Sequence[str]) -> dict[str, int]:
    """Count the branches of each session: the root's chain, and one chain per fork and rewind.

    The count searches the ``entry_chain_head`` index instead of reading every entry. The 0 is
    written into the SQL because a planner proves a partial index's ``chain_pos = 0`` from a
    literal, not from a parameter."""
    if not session_ids:
        return {}
    marks = ", ".join(["%s"] * len(session_ids))
    # Without statistics SQLite rates the covering (session, chain, chain_pos) index as
    # good, and walks the session whole in it.
    hint = " INDEXED BY entry_chain_head" if connection.vendor == "sqlite" else ""
    sql = (
        f"SELECT session_id, count(*) FROM store_entry{hint} WHERE session_id IN ({marks}) "
        "AND chain_pos = 0 GROUP BY session_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, list(session_ids))
        return dict(cursor.fetchall())


_UNFINISHED = Prepared(
    lambda session_id: (
        Operation.objects.filter(session_id=session_id, outcome__isnull=True)
        .order_by("pk")
        .values_list(*model_columns(Operation))[:1]
    ),
    session_id=str,
)


_ATTEMPTS = Prepared(
    lambda operation_id: Operation.objects.filter(pk=operation_id).values_list("attempts")[:1],
    operation_id=str,
)


def operation_claims(*, operation_id: str) -> int | None:
    """How many times the operation was claimed by a runner; None when there is no such one."""
    row = _ATTEMPTS.first(operation_id=operation_id)
    return None if row is None else row[0]


def unfinished_operation(*, session: ComicSession) -> Operation | None:
    return from_row(Operation, _UNFINISHED.first(session_id=session.pk))


def parked_inputs(*, session: ComicSession) -> set[str]:
    """The prompts (accepted and queued inputs) of the session's operation parked in the
    recovery inbox, if one is: the turns waiting for an admin. One short query."""
    rows = _PARKED_INPUTS.rows(session_id=session.pk)
    return {p["input_entry_id"] for (p,) in rows if isinstance(p.get("input_entry_id"), str)}


_PARKED_INPUTS = Prepared(
    lambda session_id: OperationRecord.objects.filter(
        operation__session_id=session_id,
        operation__outcome__isnull=True,
        operation__parked_at__isnull=False,
        type__in=("operation_accepted", "input_queued"),
    ).values_list("payload"),
    session_id=str,
)


def operation_get(*, operation_id: str) -> Operation:
    if not _nameable(operation_id):
        raise OperationNotFound(operation_id)
    op = Operation.objects.select_related("session").filter(pk=operation_id).first()
    if op is None:
        raise OperationNotFound(operation_id)
    return op


_RECORDS = Prepared(
    lambda operation_id: (
        OperationRecord.objects.filter(operation_id=operation_id)
        .order_by("seq")
        .values_list("payload")
    ),
    operation_id=str,
)


def operation_records(*, operation_id: str) -> list[JournalRecord]:
    return [parse_record(payload) for (payload,) in _RECORDS.rows(operation_id=operation_id)]


# The entries an operation's records name, read at each step of a run (its evidence).
_NAMED_ENTRIES = Prepared(
    lambda session_id, entry_ids: Entry.objects.filter(
        session_id=session_id, entry_id__in=entry_ids
    ).values_list("entry_id", "type", "payload"),
    session_id=str,
    entry_ids=[str],
)


def recovery_evidence(
    *, session: ComicSession, records: list[JournalRecord], log: OperationLog | None = None
) -> RecoveryEvidence:
    """Which entries the records name exist, and which of those assistant replies were final.

    ``log``: the records' fold when the caller has it already (not folded again)."""
    named = (log or fold_operation(records)).named_entry_ids()
    rows = _NAMED_ENTRIES.rows(session_id=session.pk, entry_ids=sorted(named))
    present: set[str] = set()
    final: dict[str, str] = {}
    for entry_id, type_, payload in rows:
        present.add(entry_id)
        if type_ == "message" and payload["message"]["role"] == "assistant":
            message = MessageEntry.model_validate(payload).message
            if isinstance(message, AssistantMessage) and message.is_final:
                final[entry_id] = message.stop_reason
    return RecoveryEvidence(entry_ids=frozenset(present), final_assistant_entries=final)


class OperationReading:
    """An operation's stored records, their fold, and what the session holds of what they
    name (read when first asked for): everything recovery decides from."""

    def __init__(self, session: ComicSession, records: list[JournalRecord]) -> None:
        self.session = session
        self.records = records
        self.log: OperationLog = fold_operation(records)
        self._evidence: RecoveryEvidence | None = None

    @property
    def evidence(self) -> RecoveryEvidence:
        if self._evidence is None:
            self._evidence = recovery_evidence(
                session=self.session, records=self.records, log=self.log
            )
        return self._evidence

    def verdict(self) -> Verdict:
        """``recover_operation`` on this reading (``JournalError`` if it cannot decide)."""
        return verdict_for(self.log, self.evidence)


def operation_reading(
    *, operation_id: str, session: ComicSession, records: list[JournalRecord] | None = None
) -> OperationReading:
    """Records → fold → evidence, the one way (``CorruptedOperationLog`` propagates).

    ``records``: the operation's records, when the caller has read them already."""
    if records is None:
        records = operation_records(operation_id=operation_id)
    return OperationReading(session, records)


def operation_verdict(*, operation: Operation) -> Verdict:
    """What recovery would decide for the operation now."""
    return operation_reading(operation_id=operation.id, session=operation.session).verdict()


def reconciler_resolutions(*, limit: int = 50) -> list[tuple[Operation, ToolResolved, str]]:
    """The latest calls recovery settled itself from evidence, newest first: each with its
    operation (and session and owner), the ``tool_resolved`` record, and the call's tool."""
    rows = list(
        OperationRecord.objects.filter(type="tool_resolved", payload__resolved_by="reconciler")
        .select_related("operation__session__owner")
        .order_by("-timestamp", "-id")[:limit]
    )
    resolved = [(row.operation, row.to_journal()) for row in rows]
    calls = {(op.id, r.tool_call_id) for op, r in resolved}
    tools: dict[tuple[str, str], str] = {}
    dispatches = OperationRecord.objects.filter(
        operation_id__in={op_id for op_id, _ in calls}, type="tool_dispatched"
    ).values_list("operation_id", "payload")
    for op_id, payload in dispatches:
        tools[(op_id, payload["tool_call_id"])] = payload["tool_name"]
    return [
        (op, r, tools.get((op.id, r.tool_call_id), ""))
        for op, r in resolved
        if isinstance(r, ToolResolved)
    ]


# --- chapters and "back to where I was" (issue 30) ------------------------------------------


_BRANCHES_ON_CHAINS = Prepared(
    lambda session_id, chains: (
        Entry.objects.filter(session_id=session_id, chain__in=chains, type="branch")
        .order_by("-seq")
        .values_list("chain", "chain_pos", "seq")
    ),
    session_id=str,
    chains=[int],
)


def where_i_was_of(rows: Sequence[StoredEntry]) -> str | None:
    """Return the leaf the latest rewind on a path left, or None.

    The path runs from the root to the leaf, as ``branch_rows`` reads it. A lazy path asks the
    index for the ``branch`` entries of its chains. Seq grows from the root to the leaf, so the
    latest rewind on the path is the entry with the highest seq, and only that one is parsed."""
    if isinstance(rows, stored.PathRows):
        if not rows.chains:
            return None
        found = _BRANCHES_ON_CHAINS.rows(session_id=rows.session_id, chains=list(rows.chains))
        for chain, pos, _seq in found:
            at = rows.index_at(chain, pos)
            if at is not None:
                return where_i_was([rows[at].entry])
        return None
    for row in reversed(rows):
        if row.type == "branch":
            return where_i_was([row.entry])
    return None


def chapters_at(
    *, session: ComicSession, leaf_id: str | None = None, rows: Sequence[StoredEntry] | None = None
) -> list[Chapter]:
    """The chapters of root → ``leaf_id`` (default: the leaf), numbered in path order, from
    the app state at that node (``rows``: the path, when the caller has read it)."""
    if rows is None:
        rows = branch_rows(session=session, leaf_id=leaf_id, lazy=True)
    state = app_state_at(session=session, rows=rows)
    marks = marks_of(state)
    if not marks:
        return []
    if isinstance(rows, stored.PathRows):  # one index search a mark, not the whole path
        where = {m.entry_id: rows.position(m.entry_id) for m in marks}
        placed = {entry_id: at for entry_id, at in where.items() if at is not None}
        return chapters_placed(placed, len(rows), state)
    return chapters_on([r.entry_id for r in rows], state)
