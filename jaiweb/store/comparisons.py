"""Branches compared and rewinds previewed, from the paths the store reads (O(depth) each)."""

from __future__ import annotations

from dataclasses import dataclass

from jaiweb.store.models import ComicSession
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import branch_rows
from journal.branches import Comparison, RewindPreview, compare_branches, rewind_preview


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
