"""Branches compared, rewinds previewed (from paths: O(depth) each), and what a subtree spent."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from jaiweb.store.models import ComicSession
from jaiweb.store.rows import StoredEntry, parse_raw, parse_rows, payload_text
from jaiweb.store.selectors import branch_rows, entry_exists
from journal.branches import (
    Comparison,
    Effects,
    RewindPreview,
    compare_branches,
    effects_of,
    rewind_preview,
)
from journal.errors import UnknownEntry

_UP_SQL = """
    WITH RECURSIVE up(leaf, entry_id, parent_id, depth) AS (
        SELECT entry_id, entry_id, parent_id, 0 FROM store_entry
         WHERE session_id = %s AND entry_id IN ({marks})
        UNION ALL
        SELECT up.leaf, e.entry_id, e.parent_id, up.depth + 1
          FROM up JOIN store_entry e ON e.session_id = %s AND e.entry_id = up.parent_id
         WHERE up.depth < %s
    )
    SELECT up.leaf, up.depth, e.seq FROM up
      JOIN store_entry e ON e.session_id = %s AND e.entry_id = up.entry_id
     WHERE e.type = 'message'"""


def messages_above(
    *, session_id: str, node_ids: list[str], reach: int
) -> list[tuple[str, int, int]]:
    """(node, steps up, seq) of every message entry at most ``reach`` entries up from
    each node, the node itself included: one recursive walk for all the nodes."""
    marks = ", ".join(["%s"] * len(node_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            _UP_SQL.format(marks=marks), [session_id, *node_ids, session_id, reach, session_id]
        )
        return [tuple(row) for row in cursor.fetchall()]


@dataclass(frozen=True, slots=True)
class StoredComparison:
    """A comparison, with each side's rows from the fork point on (their append numbers)."""

    comparison: Comparison
    left_rows: list[StoredEntry]
    right_rows: list[StoredEntry]


def _path(session: ComicSession, node_id: str) -> list[StoredEntry]:
    rows = branch_rows(session=session, leaf_id=node_id)  # UnknownEntry for a stranger's id
    parse_rows(rows)
    return rows


def branches_compare(*, session: ComicSession, left_id: str, right_id: str) -> StoredComparison:
    """The branches ending at two nodes, side by side from where they part."""
    left, right = _path(session, left_id), _path(session, right_id)
    comparison = compare_branches(
        [r.entry for r in left], [r.entry for r in right], session.initial_app_state
    )
    shared = len(left) - len(comparison.left.entries)
    return StoredComparison(comparison, left[shared:], right[shared:])


def rewind_preview_at(*, session: ComicSession, target_id: str) -> RewindPreview:
    """What continuing from ``target_id`` would roll back, and what would stay."""
    current = [r.entry for r in _path(session, session.leaf_id)] if session.leaf_id else []
    target = [r.entry for r in _path(session, target_id)]
    return rewind_preview(current, target, session.initial_app_state)


def effects_under(*, session: ComicSession, node_id: str) -> Effects:
    """What the subtree under ``node_id`` (itself included, every branch) spent and published:
    a walk down the children index, reading only the results that can hold an effect."""
    if not entry_exists(session=session, entry_id=node_id):
        raise UnknownEntry(node_id)
    sql = f"""
        WITH RECURSIVE down(entry_id) AS (
            SELECT entry_id FROM store_entry WHERE session_id = %s AND entry_id = %s
            UNION ALL
            SELECT e.entry_id FROM store_entry e JOIN down d ON e.parent_id = d.entry_id
             WHERE e.session_id = %s
        )
        SELECT e.seq, e.type, {payload_text("e.payload")} FROM store_entry e
          JOIN down d ON e.entry_id = d.entry_id
         WHERE e.session_id = %s AND e.type = 'message'
           AND ({payload_text("e.payload")} LIKE %s OR {payload_text("e.payload")} LIKE %s)"""
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [session.id, node_id, session.id, session.id, '%"image_id"%', '%"publish_panel"%'],
        )
        rows = cursor.fetchall()
    return effects_of(row.entry for row in parse_raw(rows))
