"""replay's one-pass build against the fold it replaces: apply_entry over every entry.

Random trees grown as the product grows them (appends to the leaf, forks under any node,
rewinds with a branch entry, app_state and compaction entries), then the same logs
broken (a dangling parent, a parent appended later, a second root, an id twice).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from journal.entries import Entry
from journal.errors import BrokenSessionTree
from journal.navigation import rewind_entry
from journal.snapshot import SessionSnapshot, apply_entry, replay
from journal.tree import children
from tests.support.factories import INITIAL, T0, assistant, at, compaction, state, user
from tests.support.strategies import app_value, text

STEPS = ["user", "assistant", "state", "compaction", "fork", "rewind"]


@st.composite
def logs(draw, max_steps=40) -> list[Entry]:
    entries: list[Entry] = []
    snap = SessionSnapshot.empty(INITIAL, T0)
    for i in range(draw(st.integers(0, max_steps))):
        eid, leaf = f"e{i}", snap.leaf_id
        step = draw(st.sampled_from(STEPS)) if entries else "user"
        some = st.sampled_from([e.id for e in entries]) if entries else st.none()
        if step == "rewind":
            entry = rewind_entry(
                snap.leaf_id, draw(some), entry_id=eid, now=at(i), known=snap.index
            )
            entry = entry or user(eid, leaf, "the leaf itself", t=i)
        elif step == "fork":
            entry = user(eid, draw(some), draw(text), t=i)
        elif step == "state":
            entry = state(eid, leaf, draw(app_value), t=i)
        elif step == "compaction":
            entry = compaction(eid, leaf, draw(some), draw(text), t=i)
        elif step == "assistant":
            entry = assistant(eid, leaf, draw(text), t=i)
        else:
            entry = user(eid, leaf, draw(text), t=i)
        entries.append(entry)
        snap = apply_entry(snap, entry)
    return entries


def folded(entries: list[Entry], initial=INITIAL) -> SessionSnapshot:
    """The reference: apply_entry, one entry at a time."""
    snap = SessionSnapshot.empty(initial, T0)
    for entry in entries:
        snap = apply_entry(snap, entry)
    return snap


def assert_same(fast: SessionSnapshot, slow: SessionSnapshot) -> None:
    assert fast.leaf_id == slow.leaf_id
    assert fast.state is slow.state or (fast.state is fast.initial and slow.state is slow.initial)
    assert fast.app_state == slow.app_state
    assert fast.initial_app_state == slow.initial_app_state
    assert (fast.created_at, fast.updated_at) == (slow.created_at, slow.updated_at)
    assert fast.entries == slow.entries
    assert fast.branch() == slow.branch()
    assert len(fast.index) == len(slow.index)
    for node in [None, *(e.id for e in slow.entries)]:
        assert children(fast.index, node) == children(slow.index, node)
        if node is not None:
            assert fast.index.seq(node) == slow.index.seq(node)
            assert node in fast


@settings(max_examples=300)
@given(logs())
def test_replay_equals_folding_with_apply_entry(entries):
    assert_same(replay(entries, INITIAL, T0), folded(entries))


@given(logs(), st.data())
def test_a_replayed_snapshot_grows_like_a_folded_one(entries, data):
    """Appends after a replay (at the leaf, and two futures of one past) match the fold's."""
    fast, slow = replay(entries, INITIAL, T0), folded(entries)
    ids = [e.id for e in entries]
    for k in range(data.draw(st.integers(1, 4))):
        parent = data.draw(st.sampled_from([*ids, fast.leaf_id])) if ids else None
        if data.draw(st.booleans()):
            entry = state(f"x{k}", parent, {"k": k}, t=100 + k)
        else:
            entry = user(f"x{k}", parent, f"after {k}", t=100 + k)
        grown_fast, grown_slow = apply_entry(fast, entry), apply_entry(slow, entry)
        assert_same(grown_fast, grown_slow)
        if data.draw(st.booleans()):  # keep the old past and diverge from it next time
            continue
        fast, slow, ids = grown_fast, grown_slow, [*ids, entry.id]


@given(logs(), st.data())
def test_a_broken_log_raises_what_the_fold_raises(entries, data):
    broken = list(entries)
    how = data.draw(st.sampled_from(["dangling", "later", "root", "twice", "self"]))
    pos = data.draw(st.integers(0, len(broken)))
    if how == "dangling":
        broken.insert(pos, user("x", "nowhere"))
    elif how == "later":  # its parent comes after it
        broken.insert(pos, user("x", "y"))
        broken.append(user("y", entries[-1].id if entries else None))
    elif how == "root":
        broken.insert(pos, user("x", None))
    elif how == "self":
        broken.insert(pos, user("x", "x"))
    else:
        if not entries:
            broken = [user("x", None), user("x", "x")]
        else:
            twin = entries[data.draw(st.integers(0, len(entries) - 1))]
            broken.insert(max(pos, 1), user(twin.id, entries[0].id))
    errors = []
    for fold in (lambda: replay(broken, INITIAL, T0), lambda: folded(broken)):
        try:
            snap = fold()
        except BrokenSessionTree as exc:
            errors.append((exc.reason, exc.entry_id, exc.leaf_id))
        else:
            errors.append(snap)
    fast, slow = errors
    if isinstance(slow, SessionSnapshot):  # e.g. a second root first in an empty log
        assert_same(fast, slow)
    else:
        assert fast == slow


def test_the_caller_keeps_its_list_and_its_initial_state():
    entries = [user("e0", None), state("e1", "e0", {"a": 1}), user("e2", "e1")]
    initial = {"characters": {}}
    snap = replay(entries, initial, T0)
    entries[2] = user("e9", "e1")
    entries.append(user("e3", "e2"))
    initial["characters"]["x"] = {}
    assert [e.id for e in snap.entries] == ["e0", "e1", "e2"]
    assert snap.initial_app_state == {"characters": {}}
    assert snap.app_state == {"a": 1}


def test_an_empty_log_is_the_empty_snapshot():
    snap = replay(iter(()), INITIAL, T0)
    assert snap.leaf_id is None and snap.entries == [] and snap.app_state == INITIAL
    assert snap.updated_at == snap.created_at == T0


def test_the_strategy_makes_every_kind_of_entry_and_forks():
    from hypothesis import find

    from journal.entries import AppStateEntry, BranchEntry, CompactionEntry

    for kind in (AppStateEntry, BranchEntry, CompactionEntry):
        assert any(
            isinstance(e, kind)
            for e in find(logs(), lambda es, k=kind: any(isinstance(e, k) for e in es))
        )
    fork = find(logs(), lambda es: any(e.parent_id != es[i - 1].id for i, e in enumerate(es) if i))
    assert len(fork) >= 2
