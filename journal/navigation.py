"""Rewind: moving the leaf to any node is appending a ``branch`` entry; nothing is deleted."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from datetime import datetime
from typing import Any

from journal.entries import BranchEntry, Entry
from journal.errors import UnknownEntry


def rewind_entry(
    leaf_id: str | None,
    target_id: str,
    *,
    entry_id: str,
    now: datetime,
    known: Container[str] | None = None,
) -> BranchEntry | None:
    """The entry that makes ``target_id`` the active node: an ancestor or any other branch's.

    ``None`` when the target already is the leaf; ``UnknownEntry`` when it is not in
    ``known`` (a snapshot's index, say). A store that keeps the tree in a database checks
    that with one lookup instead, and passes no ``known``.
    """
    if known is not None and target_id not in known:
        raise UnknownEntry(target_id)
    if target_id == leaf_id:
        return None
    if leaf_id is None:  # an empty session has no node to go to
        raise UnknownEntry(target_id)
    return BranchEntry(id=entry_id, parent_id=target_id, timestamp=now, from_id=leaf_id)


# --- rewind, with choices (issue 30) -------------------------------------------------------


def where_i_was(path: Sequence[Entry]) -> str | None:
    """The leaf the latest rewind on ``path`` (root → leaf) left: the ``from_id`` of the
    ``branch`` entry nearest the leaf, or None when the path has none. "Back to where I
    was" rewinds there, which is itself a rewind, so a second click comes back again."""
    for entry in reversed(path):
        if isinstance(entry, BranchEntry):
            return entry.from_id
    return None


def state_keeping_characters(
    target_state: Mapping[str, Any], current_state: Mapping[str, Any]
) -> dict | None:
    """The state "continue from here, story only" writes after the rewind: the target's,
    with the characters of ``current_state`` (the leaf's, before the rewind). None when the
    target has those characters already, so nothing more is written."""
    current = current_state.get("characters", {})
    if target_state.get("characters", {}) == current:
        return None
    return {**target_state, "characters": current}
