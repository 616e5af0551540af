"""Session snapshots: the fold of the Session Journal (docs/ARCHITECTURE.md §8).

The article's ``applyEntry`` copies the whole entry array on each append, O(n²) over a
session. Here a snapshot holds a ``TreeIndex`` that is extended in O(1) and shared
with the snapshot it came from (copy on divergence), and the app state is recomputed
only when an entry does not continue the leaf: a walk up to the nearest ``app_state``
entry, O(depth). ``replay`` of a whole log checks it in one pass and builds the final
snapshot once, with no snapshot or index per entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from journal.entries import AppStateEntry, Entry
from journal.errors import BrokenSessionTree
from journal.jsonvalues import json_copy
from journal.tree import TreeIndex, ancestors, as_index, branch_of

AppState = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """The session at one moment: its entries, leaf and app state. Never changes.

    ``app_state`` and ``initial_app_state`` are copies made when read: the state a
    snapshot holds is shared with its entries and with the snapshots before and after
    it, so a caller that edits what it got changes neither the journal nor anyone's view.
    """

    index: TreeIndex = field(repr=False)
    leaf_id: str | None
    state: AppState = field(repr=False)  # shared, never handed out: see app_state
    initial: AppState = field(repr=False)
    created_at: datetime
    updated_at: datetime

    @classmethod
    def empty(cls, initial_app_state: AppState, created_at: datetime) -> SessionSnapshot:
        """A session with no entries yet."""
        initial = json_copy(initial_app_state)  # the caller's dict stays the caller's
        return cls(TreeIndex(), None, initial, initial, created_at, created_at)

    @property
    def app_state(self) -> AppState:
        return json_copy(self.state)

    @property
    def initial_app_state(self) -> AppState:
        return json_copy(self.initial)

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
        state = entry.value
    elif entry.parent_id == snapshot.leaf_id:
        state = snapshot.state
    else:
        state = _last_app_state(index, entry.id, snapshot.initial)
    return SessionSnapshot(
        index=index,
        leaf_id=entry.id,
        state=state,
        initial=snapshot.initial,
        created_at=snapshot.created_at,
        updated_at=entry.timestamp,
    )


def branch_app_state(
    index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None, initial: AppState
) -> AppState:
    """The last ``app_state`` on the path root → leaf, or ``initial``: O(depth), stops early.

    A copy: editing it changes no entry."""
    return json_copy(_last_app_state(index_or_entries, leaf_id, initial))


def _last_app_state(
    index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None, initial: AppState
) -> AppState:
    if leaf_id is None:
        return initial
    for entry in ancestors(as_index(index_or_entries), leaf_id):
        if isinstance(entry, AppStateEntry):
            return entry.value
    return initial


def replay(entries: Iterable[Entry], initial: AppState, created_at: datetime) -> SessionSnapshot:
    """Fold entries in append order into a snapshot: the snapshot ``apply_entry`` gives when
    they are applied one by one, built once.

    One pass checks what ``apply_entry`` checks (one root, first; every parent appended
    before its child; no id twice) while it indexes the ids; then the index is made over
    those entries, and the app state is read once, at the leaf (the last ``app_state`` on
    its path: what ``apply_entry`` carries along). A log that fails a check is folded
    entry by entry, so it raises exactly what ``apply_entry`` raises, at the same entry.
    """
    stored = list(entries)  # the index's own list: the caller's may change after
    position: dict[str, int] = {}
    for pos, entry in enumerate(stored):
        parent = entry.parent_id
        if parent is None:
            if pos:
                break  # a second root
        elif parent not in position:
            break  # unknown yet: later in the log, or nowhere
        position[entry.id] = pos
    else:
        if len(position) == len(stored):  # else an id came twice
            return _folded(stored, position, initial, created_at)
    return _replay_stepwise(stored, initial, created_at)


def _folded(
    stored: list[Entry], position: dict[str, int], initial: AppState, created_at: datetime
) -> SessionSnapshot:
    empty = SessionSnapshot.empty(initial, created_at)
    if not stored:
        return empty
    index = TreeIndex.of_unique(stored, position)
    leaf = stored[-1]
    return SessionSnapshot(
        index=index,
        leaf_id=leaf.id,
        state=_last_app_state(index, leaf.id, empty.initial),
        initial=empty.initial,
        created_at=created_at,
        updated_at=leaf.timestamp,
    )


def _replay_stepwise(
    entries: Iterable[Entry], initial: AppState, created_at: datetime
) -> SessionSnapshot:
    snapshot = SessionSnapshot.empty(initial, created_at)
    for entry in entries:
        snapshot = apply_entry(snapshot, entry)
    return snapshot
