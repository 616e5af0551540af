"""Rewind and fork: moving the leaf is appending a ``branch`` entry; nothing is deleted."""

from __future__ import annotations

from datetime import datetime

from journal.entries import BranchEntry
from journal.errors import UnknownEntry
from journal.snapshot import SessionSnapshot


def branch_entry_for(
    snapshot: SessionSnapshot, target_id: str, *, entry_id: str, now: datetime
) -> BranchEntry | None:
    """The entry that makes ``target_id`` the active node: an ancestor or any other branch's node.

    ``None`` when the target already is the leaf; ``UnknownEntry`` when it is not in the session.
    """
    if target_id not in snapshot.index:
        raise UnknownEntry(target_id)
    return branch_entry_to(snapshot.leaf_id, target_id, entry_id=entry_id, now=now)


def branch_entry_to(
    leaf_id: str | None, target_id: str, *, entry_id: str, now: datetime
) -> BranchEntry | None:
    """As ``branch_entry_for``, for a caller that has checked the target is in the session.

    A store that keeps the tree in a database checks that with one lookup instead of
    loading a snapshot.
    """
    if target_id == leaf_id:
        return None
    if leaf_id is None:  # an empty session has no node to go to
        raise UnknownEntry(target_id)
    return BranchEntry(id=entry_id, parent_id=target_id, timestamp=now, from_id=leaf_id)
