"""Reads behind a rewind: what it would roll back, and where "back" goes."""

from __future__ import annotations

from collections.abc import Sequence

from jaiweb.store.models import ComicSession
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import app_state_at, branch_rows, where_i_was_of
from journal.branches import (
    RewindPreview,
    choices_changed,
    effects_of,
    panel_image_of,
    state_changes,
)
from journal.errors import BrokenSessionTree, UnknownEntry
from journal.lettering import comic_changes


def _panel_ids(rows: list[StoredEntry]) -> list[str]:
    """The panels among a path's rows, in order (only the rows that may be one are parsed)."""
    kept = [r for r in rows if r.type == "message" and r.may_contain('"image_id"')]
    parse_rows(kept)
    return [r.entry_id for r in kept if panel_image_of(r.entry)]


def rewind_preview_of(
    *, session: ComicSession, target_rows: list[StoredEntry], leaf_rows: list[StoredEntry]
) -> RewindPreview:
    """``store.comparisons.rewind_preview_at`` from the two paths the inspector has loaded
    (root → the node, root → the leaf): the paths are compared by id and only the results
    of the part left behind that can hold an effect are parsed, where that one parses both
    paths whole, which on a deep session is most of the click's time."""
    shared = 0
    for a, b in zip(leaf_rows, target_rows, strict=False):
        if a.entry_id != b.entry_id:
            break
        shared += 1
    left = [
        r
        for r in leaf_rows[shared:]
        if r.type == "message" and (r.may_contain('"image_id"') or r.may_contain("publish_panel"))
    ]
    parse_rows(left)
    before = app_state_at(session=session, rows=leaf_rows)
    after = app_state_at(session=session, rows=target_rows)
    return RewindPreview(
        target_id=target_rows[-1].entry_id,
        changes=state_changes(before, after),
        left_behind=len(leaf_rows) - shared,
        stays=effects_of(r.entry for r in left),
        choices=choices_changed(before, after),
        comic=comic_changes(
            before, after, [r.entry_id for r in target_rows], lambda: _panel_ids(target_rows)
        ),
    )


def back_target_of(*, session: ComicSession, rows: Sequence[StoredEntry]) -> str | None:
    """Where "back to where I was" goes from the active path ``rows`` (the leaf the latest
    rewind on it left), or None when no rewind is on it. One index search: the tree shows
    the button on every drawing, and its preview is read only when asked for
    (``back_preview_of``)."""
    target = where_i_was_of(rows) if rows else None
    return None if target is None or target == session.leaf_id else target


def back_preview_of(*, session: ComicSession) -> RewindPreview | None:
    """What "back to where I was" rolls back now, or None when there is nowhere to go."""
    rows = branch_rows(session=session, lazy=True)
    target = back_target_of(session=session, rows=rows)
    if target is None:
        return None
    try:
        target_rows = branch_rows(session=session, leaf_id=target, lazy=True)
    except (UnknownEntry, BrokenSessionTree):
        return None
    return rewind_preview_of(session=session, target_rows=target_rows, leaf_rows=rows)
