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
    if target_id == snapshot.leaf_id:
        return None
    assert snapshot.leaf_id is not None  # a session with an entry has a leaf
    return BranchEntry(id=entry_id, parent_id=target_id, timestamp=now, from_id=snapshot.leaf_id)
