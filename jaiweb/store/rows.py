"""Entry rows as the store reads them: parsed lazily, many at once, one pydantic call per type.

A row read from the database keeps its JSON until its entry is first touched, so a page
that shows a window of a long branch pays for the entries it looks at, not for all.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator, Sequence

from django.db import connection
from pydantic import TypeAdapter

from jaiweb.store.entry_cache import parsed_entries
from journal.entries import AppStateEntry, BranchEntry, CompactionEntry, MessageEntry
from journal.entries import Entry as JournalEntry
from journal.errors import BrokenSessionTree

# One adapter per entry type: a row's type column picks it, so pydantic never has to
# look for the discriminator inside each object.
_ADAPTERS: dict[str, TypeAdapter] = {
    cls.model_fields["type"].default: TypeAdapter(list[cls])
    for cls in (MessageEntry, AppStateEntry, CompactionEntry, BranchEntry)
}
# Entry ids a path looks up in one statement (``PathRows.positions``): far below the
# bound parameters SQLite and PostgreSQL take.
POSITIONS_AT_ONCE = 500


class StoredEntry:
    """An entry with its append number in the session.

    A row read from the database keeps its JSON and is parsed the first time its ``entry``
    is touched (``parse_rows`` parses many at once): a page that shows a window of a long
    branch, or the app state at its leaf, pays for the entries it looks at, not for all.
    A row read without its JSON (``branch_rows(lazy=True)``) fetches it then too.
    """

    __slots__ = ("_entry", "_keep", "_raw", "_session", "entry_id", "seq", "type")

    def __init__(
        self,
        seq: int,
        entry: JournalEntry | None = None,
        *,
        entry_id: str = "",
        type: str = "",
        raw: str | None = None,
        keep: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.seq = seq
        self._entry = entry
        self._raw = raw
        self._keep = keep  # the session whose cache may keep it once parsed
        self._session = session_id  # where to fetch its JSON when it came without
        self.entry_id = entry.id if entry is not None else entry_id
        self.type = entry.type if entry is not None else type

    @property
    def entry(self) -> JournalEntry:
        if self._entry is None:
            parse_rows([self])
        return self._entry

    def may_contain(self, text: str) -> bool:
        """False only when the row is unparsed and its JSON lacks ``text``: a pre-filter
        that lets a reader skip rows it does not need without parsing them."""
        return self._raw is None or text in self._raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoredEntry) and (self.seq, self.entry) == (other.seq, other.entry)

    def __repr__(self) -> str:
        return f"StoredEntry({self.seq}, {self.entry_id!r}, {self.type})"


def parse_rows(rows: list[StoredEntry]) -> None:
    """Parse every row not parsed yet, one pydantic call per entry type (rows read without
    their JSON fetch it first, one query per session)."""
    todo = [row for row in rows if row._entry is None]
    if not todo:
        return
    unfetched: dict[str, list[StoredEntry]] = {}
    for row in todo:
        if row._raw is None:
            unfetched.setdefault(row._session, []).append(row)
    for session_id, group in unfetched.items():
        raw = {r[0]: r[2] for r in raw_rows_by_seq(session_id, [row.seq for row in group])}
        for row in group:
            if row.seq not in raw:
                raise BrokenSessionTree(f"entry {row.entry_id!r} is gone", entry_id=row.entry_id)
            row._raw = raw[row.seq]
    parsed = parse_raw([(row.seq, row.type, row._raw) for row in todo])
    keep: dict[str, dict[int, JournalEntry]] = {}
    for row, done in zip(todo, parsed, strict=True):
        row._entry, row._raw = done.entry, None
        if row._keep is not None:
            keep.setdefault(row._keep, {})[row.seq] = done.entry
    for session_id, entries in keep.items():
        parsed_entries.add(session_id, entries)


def payload_text(column: str = "payload") -> str:
    # Raw JSON text, so a whole path is validated by pydantic in one call.
    return column if connection.vendor == "sqlite" else f"{column}::text"


def parse_raw(rows: list[tuple[int, str, str]]) -> list[StoredEntry]:
    """(seq, type, payload JSON) rows → entries, one pydantic call per entry type."""
    groups: dict[str, list[int]] = {}
    for pos, row in enumerate(rows):
        groups.setdefault(row[1], []).append(pos)
    parsed: list = [None] * len(rows)
    for type_, positions in groups.items():
        adapter = _ADAPTERS.get(type_)
        if adapter is None:
            raise BrokenSessionTree(f"an entry of unknown type {type_!r}")
        text = "[" + ",".join(rows[p][2] for p in positions) + "]"
        for p, entry in zip(positions, adapter.validate_json(text), strict=True):
            parsed[p] = entry
    return [StoredEntry(row[0], entry) for row, entry in zip(rows, parsed, strict=True)]


def raw_rows_by_seq(session_id: str, seqs: list[int]) -> list[tuple[int, str, str]]:
    """(seq, type, payload JSON) by seq; the seq list goes in as one parameter."""
    if connection.vendor == "postgresql":
        sql = (
            "SELECT seq, type, payload::text FROM store_entry WHERE session_id = %s "
            "AND seq = ANY(%s) ORDER BY seq"
        )
        params: list = [session_id, seqs]
    else:
        sql = (
            "SELECT seq, type, payload FROM store_entry WHERE session_id = %s "
            "AND seq IN (SELECT value FROM json_each(%s)) ORDER BY seq"
        )
        params = [session_id, json.dumps(seqs)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class PathRows(Sequence[StoredEntry]):
    """A path root → leaf as the chain ranges it is made of; its rows (seq, id, type) are
    read a block at a time when first touched, so a page that looks at the two ends of a
    100,000-entry path reads a few hundred rows, not the path.

    Safe to read late: the rows of a chain up to a position never change (entries are
    append-only and a position is taken once), whatever is appended meanwhile.
    """

    BLOCK = 256  # rows read at a time

    def __init__(
        self, session_id: str, segments: Sequence[tuple[int, int]], *, keep: str | None
    ) -> None:
        self._session = session_id
        self._segments = tuple(segments)  # (chain, last position on the path), root first
        self._offsets: list[int] = []  # where each segment starts on the path
        at = 0
        for _chain, last in self._segments:
            self._offsets.append(at)
            at += last + 1
        self._len = at
        self._by_chain = {chain: k for k, (chain, _last) in enumerate(self._segments)}
        self._keep = keep
        self._blocks: dict[tuple[int, int], list[StoredEntry]] = {}
        # The block an index last fell in, as path indices [lo, hi): readers walk a path
        # row by row, so most lookups land in it and skip the segment search.
        self._hot: list[StoredEntry] = []
        self._hot_lo = self._hot_hi = 0

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return self._span(start, stop)
        if index < 0:
            index += self._len
        if self._hot_lo <= index < self._hot_hi:
            return self._hot[index - self._hot_lo]
        if not 0 <= index < self._len:
            raise IndexError(index)
        k = bisect_right(self._offsets, index) - 1
        pos = index - self._offsets[k]
        b = pos // self.BLOCK
        block = self._blocks.get((k, b))
        if block is None:
            self._read(k, pos, pos)
            block = self._blocks[(k, b)]
        self._hot, self._hot_lo = block, self._offsets[k] + b * self.BLOCK
        self._hot_hi = self._hot_lo + len(block)
        return block[pos % self.BLOCK]

    def __iter__(self) -> Iterator[StoredEntry]:
        return iter(self._span(0, self._len))

    def __reversed__(self) -> Iterator[StoredEntry]:
        for index in range(self._len - 1, -1, -1):
            yield self[index]

    @property
    def session_id(self) -> str:
        return self._session

    @property
    def chains(self) -> tuple[int, ...]:
        """The chains the path passes, root first: each is its head's seq, and each head is
        on the path (the reading state names a branch by its head)."""
        return tuple(chain for chain, _last in self._segments)

    @property
    def last_positions(self) -> tuple[int, ...]:
        """For each chain of ``chains``, its last position on the path."""
        return tuple(last for _chain, last in self._segments)

    def index_at(self, chain: int, pos: int) -> int | None:
        """Where the entry at ``pos`` of ``chain`` is on the path (None when it is not)."""
        k = self._by_chain.get(chain)  # a path passes a chain once: along its first children
        if k is None or pos > self._segments[k][1]:
            return None
        return self._offsets[k] + pos

    def position(self, entry_id: str) -> int | None:
        """Where ``entry_id`` is on the path (None when it is not): one index search."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT chain, chain_pos FROM store_entry WHERE session_id = %s AND entry_id = %s",
                [self._session, entry_id],
            )
            found = cursor.fetchone()
        return None if found is None else self.index_at(*found)

    def positions(self, entry_ids: Sequence[str]) -> dict[str, int | None]:
        """Where each of ``entry_ids`` is on the path (None when it is not): one index
        search for them all, a few hundred at a time."""
        ids = list(dict.fromkeys(entry_ids))
        found: dict[str, int | None] = {}
        for start in range(0, len(ids), POSITIONS_AT_ONCE):
            chunk = ids[start : start + POSITIONS_AT_ONCE]
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT entry_id, chain, chain_pos FROM store_entry WHERE session_id = %s "
                    f"AND entry_id IN ({', '.join(['%s'] * len(chunk))})",
                    [self._session, *chunk],
                )
                for entry_id, chain, pos in cursor.fetchall():
                    found[entry_id] = self.index_at(chain, pos)
        return {entry_id: found.get(entry_id) for entry_id in ids}

    def _span(self, start: int, stop: int) -> list[StoredEntry]:
        """Rows ``start`` to ``stop``, their unread blocks read with one query per chain."""
        out: list[StoredEntry] = []
        if start >= stop:
            return out
        B = self.BLOCK
        first = bisect_right(self._offsets, start) - 1
        for k in range(first, len(self._segments)):
            offset = self._offsets[k]
            if offset >= stop:
                break
            lo = max(start, offset) - offset
            hi = min(stop, offset + self._segments[k][1] + 1) - offset - 1
            missing = [b for b in range(lo // B, hi // B + 1) if (k, b) not in self._blocks]
            if missing:
                self._read(k, missing[0] * B, missing[-1] * B)
            for b in range(lo // B, hi // B + 1):
                block = self._blocks[(k, b)]
                out.extend(block[max(lo - b * B, 0) : hi - b * B + 1])
        return out

    def _read(self, k: int, low: int, high: int) -> None:
        """The blocks of segment ``k`` holding positions ``low`` … ``high``, in one query."""
        B = self.BLOCK
        chain, last = self._segments[k]
        first, end = low - low % B, min(high - high % B + B - 1, last)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT seq, entry_id, type FROM store_entry WHERE session_id = %s "
                "AND chain = %s AND chain_pos >= %s AND chain_pos <= %s ORDER BY chain_pos",
                [self._session, chain, first, end],
            )
            found = cursor.fetchall()
        if len(found) != end - first + 1:
            raise BrokenSessionTree(f"entries of chain {chain} are gone")
        held = parsed_entries.holds(self._session)
        lookup = parsed_entries.lookup
        rows = [
            StoredEntry(seq, entry)
            if held and (entry := lookup(self._session, seq, entry_id)) is not None
            else StoredEntry(
                seq, entry_id=entry_id, type=type_, keep=self._keep, session_id=self._session
            )
            for seq, entry_id, type_ in found
        ]
        for at in range(0, len(rows), B):
            self._blocks[(k, (first + at) // B)] = rows[at : at + B]


def index_of(rows: Sequence[StoredEntry], entry_id: str) -> int | None:
    """Where ``entry_id`` is among ``rows`` (a path), or None; a PathRows looks it up."""
    if isinstance(rows, PathRows):
        return rows.position(entry_id)
    return next((i for i, r in enumerate(rows) if r.entry_id == entry_id), None)


def indices_of(rows: Sequence[StoredEntry], entry_ids: Sequence[str]) -> dict[str, int | None]:
    """Where each of ``entry_ids`` is among ``rows`` (a path), or None; a PathRows looks
    them up at once."""
    if isinstance(rows, PathRows):
        return rows.positions(entry_ids)
    wanted = set(entry_ids)
    at = {r.entry_id: i for i, r in enumerate(rows) if r.entry_id in wanted}
    return {entry_id: at.get(entry_id) for entry_id in entry_ids}
