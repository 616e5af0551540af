"""The session tree: an index over entries, branches, children and paths (docs/ARCHITECTURE.md §8).

``TreeIndex`` is built once in O(n) (one pass; children are indexed on first use) and
extended in O(1). Indexes extended from one another share a single append-only store;
each index sees only the prefix of the store it was built with, so an index never sees
entries added through another one. When an index that is not at the store's tip is
extended (two futures of one past), it copies its prefix first — copy on divergence —
and the two lines stay independent.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from journal.entries import Entry
from journal.errors import BrokenSessionTree, UnknownEntry

UNSEEN, ROOT, MISSING = -1, -2, -3  # what ``_Store.parents`` holds besides positions


class _Store:
    """Append-only storage shared by the indexes extended from one another.

    ``children`` (parent id, None for roots -> positions of its children, ascending) is
    built on first use when the store was made in bulk: a session read to check it or to
    show its leaf never asks for it, and building it allocates a list per parent.
    """

    __slots__ = ("_children", "_parents", "entries", "position")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.position: dict[str, int] = {}
        self._children: dict[str | None, list[int]] | None = {}
        self._parents: list[int] | None = None

    @classmethod
    def of(cls, entries: list[Entry], position: dict[str, int]) -> _Store:
        """A store over ``entries`` whose ids are unique, ``position[e.id]`` their index."""
        store = cls.__new__(cls)
        store.entries, store.position, store._children = entries, position, None
        store._parents = None
        return store

    @property
    def parents(self) -> list[int]:
        """Each entry's parent's position, filled in by the walks that pass it (``UNSEEN``
        until then): a later walk follows integers through a list instead of ids through
        a dict. The list is made on the first walk, not with the store, so that a store
        made to read one leaf does not pay a pass over every entry."""
        parents = self._parents
        if parents is None:
            parents = self._parents = [UNSEEN] * len(self.entries)
        return parents

    @property
    def children(self) -> dict[str | None, list[int]]:
        kids = self._children
        if kids is None:
            kids = {}
            for pos, entry in enumerate(self.entries):
                siblings = kids.get(entry.parent_id)
                if siblings is None:
                    kids[entry.parent_id] = [pos]
                else:
                    siblings.append(pos)
            self._children = kids
        return kids

    def append(self, entry: Entry) -> None:
        pos = len(self.entries)
        self.entries.append(entry)
        self.position[entry.id] = pos
        if self._parents is not None:
            self._parents.append(UNSEEN)
        by_parent = self._children
        if by_parent is None:  # not built yet: it will be, from entries, this one included
            return
        kids = by_parent.get(entry.parent_id)
        if kids is None:
            by_parent[entry.parent_id] = [pos]
        else:
            kids.append(pos)


class TreeIndex:
    """The entries of one session by id and by parent, in append order."""

    __slots__ = ("_size", "_store")

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        """The index of ``entries`` (O(n), one pass); a duplicate id is an error."""
        stored = list(entries)
        position: dict[str, int] = {}
        for pos, entry in enumerate(stored):
            if entry.id in position:
                raise BrokenSessionTree("duplicate entry id", entry_id=entry.id)
            position[entry.id] = pos
        self._store = _Store.of(stored, position)
        self._size = len(stored)

    @classmethod
    def of_unique(cls, entries: list[Entry], position: dict[str, int]) -> TreeIndex:
        """The index of ``entries`` when the caller has already made ``position``
        (``position[e.id]`` is e's place in ``entries``, so ids are unique). The index
        owns both from now on: the caller must not change them."""
        index = cls.__new__(cls)
        index._store = _Store.of(entries, position)
        index._size = len(entries)
        return index

    # -- building -------------------------------------------------------------

    def add(self, entry: Entry) -> None:
        """Add an entry in place (O(1)); a duplicate id is an error, never "last one wins"."""
        if entry.id in self:
            raise BrokenSessionTree("duplicate entry id", entry_id=entry.id)
        if self._size != len(self._store.entries):
            self._store = self._copied_store()
        self._store.append(entry)
        self._size += 1

    def extended(self, entry: Entry) -> TreeIndex:
        """A new index with one more entry; this one is unchanged (O(1) amortized)."""
        other = TreeIndex.__new__(TreeIndex)
        other._store = self._store
        other._size = self._size
        other.add(entry)
        return other

    def _copied_store(self) -> _Store:
        entries = self._store.entries[: self._size]
        return _Store.of(entries, {entry.id: pos for pos, entry in enumerate(entries)})

    # -- reading --------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    def __contains__(self, entry_id: object) -> bool:
        pos = self._store.position.get(entry_id)  # type: ignore[arg-type]
        return pos is not None and pos < self._size

    def __iter__(self) -> Iterator[Entry]:
        """Entries in append order."""
        entries = self._store.entries
        return (entries[i] for i in range(self._size))

    def get(self, entry_id: str) -> Entry | None:
        pos = self._store.position.get(entry_id)
        if pos is None or pos >= self._size:
            return None
        return self._store.entries[pos]

    def __getitem__(self, entry_id: str) -> Entry:
        entry = self.get(entry_id)
        if entry is None:
            raise UnknownEntry(entry_id)
        return entry

    def seq(self, entry_id: str) -> int:
        """The entry's append number, 1-based (``seq`` of stored rows)."""
        pos = self._store.position.get(entry_id)
        if pos is None or pos >= self._size:
            raise UnknownEntry(entry_id)
        return pos + 1

    @property
    def last(self) -> Entry | None:
        """The entry appended last: the leaf."""
        return self._store.entries[self._size - 1] if self._size else None

    def path_to(self, leaf_id: str) -> list[Entry] | None:
        """Root → ``leaf_id`` in one tight loop, or None when the walk meets something
        wrong (an unknown id, a missing parent, a cycle): ``ancestors`` then says what.

        The walk follows parent positions, each looked up once per store and kept
        (``_Store.parents``). A parent always comes before its child in an append-only
        journal, so the positions fall at each step: no cycle can be walked, and every
        position passed is inside this index. An entry whose parent is missing or comes
        after it ends the walk with None."""
        store, size = self._store, self._size
        position, entries, parents = store.position, store.entries, store.parents
        pos = position.get(leaf_id)  # type: ignore[arg-type]
        if pos is None or pos >= size:
            return None
        chain: list[int] = []
        keep = chain.append
        while True:
            keep(pos)
            up = parents[pos]
            if up == UNSEEN:
                parent_id = entries[pos].parent_id
                up = parents[pos] = ROOT if parent_id is None else position.get(parent_id, MISSING)
            if up < 0 or up >= pos:
                break
            pos = up
        if up != ROOT:
            return None
        chain.reverse()
        return [entries[p] for p in chain]

    def child_entries(self, parent_id: str | None) -> list[Entry]:
        positions = self._store.children.get(parent_id, ())
        visible = bisect_left(positions, self._size)  # type: ignore[arg-type]
        entries = self._store.entries
        return [entries[p] for p in positions[:visible]]


def as_index(index_or_entries: TreeIndex | Iterable[Entry]) -> TreeIndex:
    """Accept either an index or plain entries (then build the index, O(n))."""
    if isinstance(index_or_entries, TreeIndex):
        return index_or_entries
    return TreeIndex(index_or_entries)


def _index_for(index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None) -> TreeIndex:
    try:
        return as_index(index_or_entries)
    except BrokenSessionTree as exc:
        raise BrokenSessionTree(exc.reason, leaf_id=leaf_id, entry_id=exc.entry_id) from None


def ancestors(index_or_entries: TreeIndex | Iterable[Entry], entry_id: str) -> Iterator[Entry]:
    """The entry, its parent, …, up to the root: O(depth), lazily."""
    index = _index_for(index_or_entries, entry_id)
    entry = index.get(entry_id)
    if entry is None:
        raise BrokenSessionTree("unknown leaf", leaf_id=entry_id, entry_id=entry_id)
    seen: set[str] = set()
    while True:
        seen.add(entry.id)
        yield entry
        parent_id = entry.parent_id
        if parent_id is None:
            return
        if parent_id in seen:
            raise BrokenSessionTree("cycle in parent links", leaf_id=entry_id, entry_id=parent_id)
        parent = index.get(parent_id)
        if parent is None:
            raise BrokenSessionTree(
                f"missing parent {parent_id!r} of {entry.id!r}", leaf_id=entry_id, entry_id=entry.id
            )
        entry = parent


def branch_of(index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None) -> list[Entry]:
    """Root → leaf, following ``parent_id``; O(depth) with an index. ``None`` → []."""
    if leaf_id is None:
        return []
    path = _index_for(index_or_entries, leaf_id).path_to(leaf_id)
    if path is None:  # something is wrong on the way: the careful walk says what
        path = list(ancestors(index_or_entries, leaf_id))
        path.reverse()
    return path


def children(index: TreeIndex | Iterable[Entry], entry_id: str | None) -> list[Entry]:
    """The children of a node in append order; ``None`` gives the roots."""
    index = as_index(index)
    if entry_id is not None and entry_id not in index:
        raise UnknownEntry(entry_id)
    return index.child_entries(entry_id)


def depth(index_or_entries: TreeIndex | Sequence[Entry], entry_id: str) -> int:
    """Number of entries from the root to this one, inclusive."""
    return sum(1 for _ in ancestors(index_or_entries, entry_id))
