"""Session snapshots: the fold of the Session Journal (CONTRACT §4).

The article's ``applyEntry`` copies the whole entry array on each append, O(n²) over a
session. Here a snapshot holds a ``TreeIndex`` that is extended in O(1) and shared
with the snapshot it came from (copy on divergence), and the app state is recomputed
only when an entry does not continue the leaf: a walk up to the nearest ``app_state``
entry, O(depth).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from journal.entries import AppStateEntry, Entry
from journal.errors import BrokenSessionTree
from journal.tree import TreeIndex, ancestors, as_index, branch_of

AppState = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """The session at one moment: its entries, leaf and app state. Never changes."""

    index: TreeIndex = field(repr=False)
    leaf_id: str | None
    app_state: AppState
    initial_app_state: AppState
    created_at: datetime
    updated_at: datetime

    @classmethod
    def empty(cls, initial_app_state: AppState, created_at: datetime) -> SessionSnapshot:
        """A session with no entries yet."""
        return cls(TreeIndex(), None, initial_app_state, initial_app_state, created_at, created_at)

    @property
    def entries(self) -> list[Entry]:
        """Every entry in append order (O(n): prefer ``index`` for lookups)."""
        return list(self.index)

    def branch(self) -> list[Entry]:
        """Root → leaf: the active branch."""
        return branch_of(self.index, self.leaf_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.index


def apply_entry(snapshot: SessionSnapshot, entry: Entry) -> SessionSnapshot:
    """The snapshot after appending ``entry``; ``snapshot`` itself is unchanged."""
    if entry.parent_id is None:
        if len(snapshot.index):
            raise BrokenSessionTree("a session has one root", entry_id=entry.id)
    elif entry.parent_id not in snapshot.index:
        raise BrokenSessionTree(
            f"parent {entry.parent_id!r} is not in the session", entry_id=entry.id
        )
    index = snapshot.index.extended(entry)
    if isinstance(entry, AppStateEntry):
        app_state = entry.value
    elif entry.parent_id == snapshot.leaf_id:
        app_state = snapshot.app_state
    else:
        app_state = branch_app_state(index, entry.id, snapshot.initial_app_state)
    return SessionSnapshot(
        index=index,
        leaf_id=entry.id,
        app_state=app_state,
        initial_app_state=snapshot.initial_app_state,
        created_at=snapshot.created_at,
        updated_at=entry.timestamp,
    )


def branch_app_state(
    index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None, initial: AppState
) -> AppState:
    """The last ``app_state`` on the path root → leaf, or ``initial``: O(depth), stops early."""
    if leaf_id is None:
        return initial
    for entry in ancestors(as_index(index_or_entries), leaf_id):
        if isinstance(entry, AppStateEntry):
            return entry.value
    return initial


def replay(entries: Iterable[Entry], initial: AppState, created_at: datetime) -> SessionSnapshot:
    """Fold entries in append order into a snapshot (equals applying them one by one)."""
    snapshot = SessionSnapshot.empty(initial, created_at)
    for entry in entries:
        snapshot = apply_entry(snapshot, entry)
    return snapshot
