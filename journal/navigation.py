"""Rewind: moving the leaf to any node is appending a ``branch`` entry; nothing is deleted."""

from __future__ import annotations

from collections.abc import Container
from datetime import datetime

from journal.entries import BranchEntry
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
