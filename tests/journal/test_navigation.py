"""journal.navigation.rewind_entry: a rewind (or a fork) appends a branch entry."""

from __future__ import annotations

import pytest

from journal.entries import BranchEntry
from journal.errors import UnknownEntry
from journal.navigation import rewind_entry
from journal.snapshot import apply_entry, replay
from tests.support.factories import INITIAL, KUNG_FU, T0, article_entries, at


@pytest.fixture
def snap():
    return replay(article_entries(), INITIAL, T0)


def test_rewind_to_an_ancestor(snap):
    entry = rewind_entry(snap.leaf_id, "e1", entry_id="b1", now=at(9), known=snap.index)
    assert entry == BranchEntry(id="b1", parent_id="e1", timestamp=at(9), from_id="e6")


def test_fork_to_the_tip_of_an_abandoned_branch(snap):
    entry = rewind_entry(snap.leaf_id, "e4", entry_id="b1", now=at(9), known=snap.index)
    assert entry.parent_id == "e4" and entry.from_id == "e6"


def test_the_leaf_itself_needs_no_entry(snap):
    assert rewind_entry(snap.leaf_id, "e6", entry_id="b1", now=at(9), known=snap.index) is None


def test_unknown_target(snap):
    with pytest.raises(UnknownEntry) as err:
        rewind_entry(snap.leaf_id, "e99", entry_id="b1", now=at(9), known=snap.index)
    assert err.value.entry_id == "e99"
    assert str(err.value) == "unknown entry 'e99'"


def test_navigation_is_only_an_append(snap):
    entry = rewind_entry(snap.leaf_id, "e0", entry_id="b1", now=at(9), known=snap.index)
    after = apply_entry(snap, entry)
    assert len(after.index) == len(snap.index) + 1
    assert after.app_state == INITIAL
    back = apply_entry(
        after, rewind_entry(after.leaf_id, "e6", entry_id="b2", now=at(10), known=after.index)
    )
    assert back.app_state == KUNG_FU
    assert [e.id for e in back.branch()][-2:] == ["e6", "b2"]
