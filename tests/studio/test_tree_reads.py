"""What the tree reads of a session is the session as it was read: a run appending meanwhile
changes nothing drawn from that reading (jaiweb.studio.tree ``_known``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jaiweb.store.models import ComicSession
from jaiweb.store.services import entry_append
from jaiweb.studio import tree
from jaiweb.studio.tree import More
from journal.entries import MessageEntry, UserMessage
from tests.support.storyboard import T0, line, rewind, store

pytestmark = pytest.mark.django_db


def folded_count(session: ComicSession) -> int:
    [branch] = tree.fork_view(session, parent_id="t1f", exclude="t2u")
    [more] = [item for item in branch if isinstance(item, More)]
    return more.count


def test_a_folded_side_branch_counts_the_entries_known_when_the_session_was_read(alice):
    side = line(20, start=10, parent="b1")  # longer than a side branch draws: folded
    session = store(alice, [*line(3), rewind("b1", "t1f", "t3f"), *side], side[-1].id)
    before = folded_count(session)
    leaf = side[-1].id
    for k in range(3):  # a run goes on at the leaf, at the end of the folded chain
        message = UserMessage(content=f"more {k}")
        entry = MessageEntry(
            id=f"x{k}", parent_id=leaf, timestamp=T0 + timedelta(days=1), message=message
        )
        entry_append(session_id=session.id, entries=[entry], expected_leaf_id=leaf)
        leaf = entry.id
    assert folded_count(session) == before  # the reading from before the appends
    assert folded_count(ComicSession.objects.get(pk=session.id)) == before + 3
