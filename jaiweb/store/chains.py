"""The chain fold: how entries are laid out so a path is a few index range scans.

A node's first child continues the node's chain at the next position; a later child (a
fork, a rewind) starts a chain of its own, named by its seq. ``appends`` computes the
same thing in SQL for each append; these are for bulk writes and for checking.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from django.db import connection

from jaiweb.store.models import Entry
from journal.entries import Entry as JournalEntry
from journal.entries import entry_to_dict


def chain_positions(
    entries: Iterable[tuple[str, str | None]], start_seq: int = 1
) -> Iterator[tuple[int, int]]:
    """(chain, chain_pos) for each (entry_id, parent_id), given in append order."""
    where: dict[str, tuple[int, int]] = {}
    parents_with_child: set[str | None] = set()
    for seq, (entry_id, parent_id) in enumerate(entries, start_seq):
        if parent_id in where and parent_id not in parents_with_child:
            chain, pos = where[parent_id]
            position = (chain, pos + 1)
        else:
            position = (seq, 0)
        parents_with_child.add(parent_id)
        where[entry_id] = position
        yield position


def entry_rows(session_id: str, entries: list[JournalEntry]) -> Iterator[Entry]:
    """Unsaved rows for a whole new session's entries (import, benchmarks), seq from 1."""
    positions = chain_positions((e.id, e.parent_id) for e in entries)
    for seq, (entry, (chain, pos)) in enumerate(zip(entries, positions, strict=True), 1):
        yield Entry(
            session_id=session_id,
            seq=seq,
            entry_id=entry.id,
            parent_id=entry.parent_id,
            type=entry.type,
            payload=entry_to_dict(entry),
            timestamp=entry.timestamp,
            chain=chain,
            chain_pos=pos,
        )


def chain_last_rows(*, session_id: str, chains: list[int]) -> list[tuple[int, int, int]]:
    """(chain, last chain_pos, its seq) of each chain: each chain's last row by one
    backward index search (an aggregate would read the chains whole), in one statement."""
    if not chains:
        return []
    one = (
        "SELECT * FROM (SELECT chain, chain_pos, seq FROM store_entry WHERE session_id = %s"
        " AND chain = %s ORDER BY chain_pos DESC LIMIT 1) AS c{}"
    )
    sql = " UNION ALL ".join(one.format(i) for i in range(len(chains)))
    with connection.cursor() as cursor:
        cursor.execute(sql, [v for chain in chains for v in (session_id, chain)])
        return [tuple(row) for row in cursor.fetchall()]
