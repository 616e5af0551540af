"""journal.snapshot: apply_entry, branch_app_state, replay — and the article's rewind."""

from __future__ import annotations

import pytest

from journal.errors import BrokenSessionTree
from journal.navigation import rewind_entry
from journal.snapshot import SessionSnapshot, apply_entry, branch_app_state, replay
from journal.tree import TreeIndex
from tests.support.factories import (
    INITIAL,
    KUNG_FU,
    LAXATIVE,
    T0,
    article_entries,
    assistant,
    at,
    state,
    user,
)


def test_article_app_state_at_e6_is_e1s():
    snap = replay(article_entries(), INITIAL, T0)
    assert snap.leaf_id == "e6"
    assert [e.id for e in snap.branch()] == ["e0", "e1", "e2", "e5", "e6"]
    assert snap.app_state == KUNG_FU
    assert snap.updated_at == at(6) and snap.created_at == T0


def test_article_rewind_to_e4_brings_back_e3s_state():
    snap = replay(article_entries(), INITIAL, T0)
    rewind = rewind_entry(snap.leaf_id, "e4", entry_id="e7", now=at(7), known=snap.index)
    after = apply_entry(snap, rewind)
    assert after.app_state == LAXATIVE
    assert [e.id for e in after.branch()] == ["e0", "e1", "e2", "e3", "e4", "e7"]
    assert snap.app_state == KUNG_FU  # the old snapshot did not change
    assert "e7" not in snap


def test_state_at_every_node_of_the_article():
    entries = article_entries()
    expected = {"e0": INITIAL, "e1": KUNG_FU, "e2": KUNG_FU, "e3": LAXATIVE, "e4": LAXATIVE}
    expected |= {"e5": KUNG_FU, "e6": KUNG_FU}
    for leaf, value in expected.items():
        assert branch_app_state(entries, leaf, INITIAL) == value, leaf
    assert branch_app_state(entries, None, INITIAL) == INITIAL


def test_continuing_the_leaf_keeps_state_without_a_walk():
    snap = replay(article_entries()[:3], INITIAL, T0)
    nxt = apply_entry(snap, user("x", "e2"))
    assert nxt.state is snap.state  # shared inside; handed out as copies


def test_an_entry_off_the_leaf_recomputes_state():
    snap = replay(article_entries()[:5], INITIAL, T0)  # leaf e4, laxative
    fork = apply_entry(snap, user("x", "e1"))  # appended under e1 directly
    assert fork.app_state == KUNG_FU


def test_divergent_appends_to_one_snapshot_do_not_see_each_other():
    base = replay(article_entries(), INITIAL, T0)
    a = apply_entry(base, state("a", "e6", LAXATIVE))
    b = apply_entry(base, user("b", "e6"))
    assert "a" in a and "a" not in b and "a" not in base
    assert "b" in b and "b" not in a
    assert a.app_state == LAXATIVE and b.app_state == KUNG_FU and base.app_state == KUNG_FU
    a2 = apply_entry(a, user("c", "a"))
    b2 = apply_entry(b, user("c", "b"))  # same id, other line: both fine
    assert a2.index["c"].parent_id == "a" and b2.index["c"].parent_id == "b"


def test_snapshot_is_immutable():
    snap = SessionSnapshot.empty(INITIAL, T0)
    with pytest.raises(AttributeError):
        snap.leaf_id = "x"  # type: ignore[misc]


def test_apply_refuses_missing_parent_duplicate_and_second_root():
    snap = replay(article_entries(), INITIAL, T0)
    with pytest.raises(BrokenSessionTree, match="not in the session"):
        apply_entry(snap, user("x", "nowhere"))
    with pytest.raises(BrokenSessionTree, match="duplicate"):
        apply_entry(snap, user("e3", "e6"))
    with pytest.raises(BrokenSessionTree, match="one root"):
        apply_entry(snap, user("x", None))


def test_replay_of_nothing_is_the_initial_state():
    snap = replay([], INITIAL, T0)
    assert snap.leaf_id is None and snap.app_state == INITIAL and snap.branch() == []


def test_branch_app_state_accepts_an_index():
    index = TreeIndex(article_entries())
    assert branch_app_state(index, "e4", INITIAL) == LAXATIVE


def test_replay_equals_stepwise_in_a_session_with_assistants():
    entries = [*article_entries(), assistant("e7", "e6", "降龙十巴掌.png", t=7)]
    snap = SessionSnapshot.empty(INITIAL, T0)
    for e in entries:
        snap = apply_entry(snap, e)
    replayed = replay(entries, INITIAL, T0)
    assert (snap.leaf_id, snap.app_state, snap.updated_at) == ("e7", KUNG_FU, at(7))
    assert (replayed.leaf_id, replayed.app_state, replayed.updated_at) == ("e7", KUNG_FU, at(7))
    assert snap.entries == replayed.entries == entries
