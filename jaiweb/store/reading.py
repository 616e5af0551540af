"""Reading state: which branches of a session each person has opened (issue 30).

A branch is a chain of the tree (``Entry.chain``: a run of first children), named by its
head's entry id. Opening the studio page reads the active path's branches; opening a node
in the inspector reads the node's. What is left unread carries a dot in the tree, and
"next unread" jumps to it. It is a side table (``BranchRead``), per user: nothing of the
story, so it is never an entry and no rewind moves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from jaiweb.store.models import BranchRead, ComicSession, Entry
from jaiweb.store.rows import PathRows
from jaiweb.store.selectors import branch_rows


@dataclass(frozen=True, slots=True)
class Branch:
    head_id: str  # the chain's first entry: a fork's or a rewind's child, or the root
    parent_id: str | None  # the node it forks from (None: the root's chain)
    seq: int


def branches_of(*, session: ComicSession) -> list[Branch]:
    """The session's branches in append order, as far as the session was read: every
    chain's head, less a rewind's branch entry that nothing followed (not drawn in the
    tree), unless it is the leaf."""
    heads = list(
        Entry.objects.filter(session=session, chain_pos=0, seq__lte=session.entry_count)
        .order_by("seq")
        .values_list("entry_id", "parent_id", "seq", "type")
    )
    lone = [seq for _id, _parent, seq, kind in heads if kind == "branch"]
    followed = (
        set(
            Entry.objects.filter(
                session=session, chain__in=lone, chain_pos=1, seq__lte=session.entry_count
            ).values_list("chain", flat=True)
        )
        if lone
        else set()
    )
    return [
        Branch(entry_id, parent, seq)
        for entry_id, parent, seq, kind in heads
        if kind != "branch" or seq in followed or entry_id == session.leaf_id
    ]


def _read_heads(*, user: Any, session: ComicSession) -> set[str]:
    return set(
        BranchRead.objects.filter(user=user, session=session).values_list("head_id", flat=True)
    )


def unread_branches(*, user: Any, session: ComicSession) -> list[Branch]:
    """The branches ``user`` has not opened, in append order."""
    read = _read_heads(user=user, session=session)
    return [b for b in branches_of(session=session) if b.head_id not in read]


def branches_read_mark(
    *, user: Any, session: ComicSession, head_ids: list[str], now: datetime | None = None
) -> None:
    """``user`` has opened these branches (a branch read twice stays one row)."""
    if not head_ids or not getattr(user, "is_authenticated", False):
        return
    at = now or timezone.now()
    BranchRead.objects.bulk_create(
        [BranchRead(user=user, session=session, head_id=h, read_at=at) for h in set(head_ids)],
        ignore_conflicts=True,
    )


def path_read_mark(*, user: Any, session: ComicSession, now: datetime | None = None) -> None:
    """``user`` looks at the active path: each of its branches is read."""
    rows = branch_rows(session=session, lazy=True)
    if not isinstance(rows, PathRows) or not rows.chains:
        return
    heads = list(
        Entry.objects.filter(session=session, seq__in=rows.chains, chain_pos=0).values_list(
            "entry_id", flat=True
        )
    )
    branches_read_mark(user=user, session=session, head_ids=heads, now=now)


def node_read_mark(
    *, user: Any, session: ComicSession, entry_ids: list[str], now: datetime | None = None
) -> None:
    """``user`` opened a node (its turn's entries named by ``entry_ids``): the branches
    those entries are on are read."""
    chains = set(
        Entry.objects.filter(session=session, entry_id__in=entry_ids).values_list(
            "chain", flat=True
        )
    )
    heads = list(
        Entry.objects.filter(session=session, seq__in=chains, chain_pos=0).values_list(
            "entry_id", flat=True
        )
    )
    branches_read_mark(user=user, session=session, head_ids=heads, now=now)
