"""Property tests of the session tree: random sessions built by appends, forks and rewinds."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from journal.entries import AppStateEntry, BranchEntry, MessageEntry, parse_entry
from journal.errors import BrokenSessionTree
from journal.navigation import rewind_entry
from journal.snapshot import SessionSnapshot, apply_entry, branch_app_state, replay
from journal.tree import TreeIndex, branch_of
from tests.support.factories import INITIAL, T0, assistant, at, state, user
from tests.support.strategies import app_value, text


@st.composite
def sessions(draw, max_steps=40):
    """Entries appended as the product does: to the leaf, a fork under any node, or a rewind."""
    entries = []
    snap = SessionSnapshot.empty(INITIAL, T0)
    n = draw(st.integers(1, max_steps))
    for i in range(n):
        eid = f"e{i}"
        if not entries:
            entries.append(user(eid, None, draw(text), t=i))
        else:
            step = draw(st.sampled_from(["user", "assistant", "state", "fork", "rewind"]))
            leaf = snap.leaf_id
            if step == "rewind":
                target = draw(st.sampled_from([e.id for e in entries]))
                entry = rewind_entry(
                    snap.leaf_id, target, entry_id=eid, now=at(i), known=snap.index
                )
                if entry is None:
                    entry = user(eid, leaf, "same leaf", t=i)
            elif step == "fork":  # appended under a node that is not the leaf
                parent = draw(st.sampled_from([e.id for e in entries]))
                entry = user(eid, parent, draw(text), t=i)
            elif step == "state":
                entry = state(eid, leaf, draw(app_value), t=i)
            elif step == "assistant":
                entry = assistant(eid, leaf, draw(text), t=i)
            else:
                entry = user(eid, leaf, draw(text), t=i)
            entries.append(entry)
        snap = apply_entry(snap, entries[-1])
    return entries


def naive_branch(entries, leaf_id):
    """The article's branchOf, transcribed."""
    by_id = {e.id: e for e in entries}
    out, cursor = [], leaf_id
    while cursor is not None:
        out.append(by_id[cursor])
        cursor = by_id[cursor].parent_id
    return out[::-1]


def naive_state(entries, leaf_id):
    value = INITIAL
    for e in naive_branch(entries, leaf_id):
        if isinstance(e, AppStateEntry):
            value = e.value
    return value


@given(sessions())
def test_stepwise_apply_equals_replay(entries):
    snap = SessionSnapshot.empty(INITIAL, T0)
    for e in entries:
        snap = apply_entry(snap, e)
    replayed = replay(entries, INITIAL, T0)
    assert snap.leaf_id == replayed.leaf_id == entries[-1].id
    assert snap.app_state == replayed.app_state
    assert snap.updated_at == replayed.updated_at == entries[-1].timestamp
    assert snap.entries == replayed.entries == entries  # no entry is ever lost


@given(sessions())
def test_app_state_is_the_last_app_state_on_the_path(entries):
    snap = SessionSnapshot.empty(INITIAL, T0)
    for e in entries:
        snap = apply_entry(snap, e)
        assert snap.app_state == naive_state(entries, e.id)
    index = TreeIndex(entries)
    for e in entries:
        assert branch_app_state(index, e.id, INITIAL) == naive_state(entries, e.id)
        assert branch_of(index, e.id) == naive_branch(entries, e.id)


@given(sessions(), st.data())
def test_divergent_appends_to_one_snapshot_stay_independent(entries, data):
    k = data.draw(st.integers(1, len(entries)))
    past = replay(entries[:k], INITIAL, T0)
    future = replay(entries, INITIAL, T0)  # grown from a replay that passed through ``past``
    parent_a = data.draw(st.sampled_from([e.id for e in entries[:k]]))
    parent_b = data.draw(st.sampled_from([e.id for e in entries[:k]]))
    a = apply_entry(past, state("xa", parent_a, {"who": "a"}))
    b = apply_entry(past, user("xb", parent_b, "b"))
    a2 = apply_entry(a, user("xc", "xa", "a again"))
    assert "xb" not in a2 and "xa" not in b and "xc" not in b
    assert "xa" not in past and "xb" not in past and len(past.index) == k
    assert past.entries == entries[:k]
    assert a2.entries == [*entries[:k], a.index["xa"], a2.index["xc"]]
    assert b.entries == [*entries[:k], b.index["xb"]]
    assert a.app_state == {"who": "a"}
    assert b.app_state == naive_state([*entries[:k], b.index["xb"]], "xb")
    assert future.entries == entries


@given(sessions())
def test_json_round_trip_is_exact(entries):
    for e in entries:
        assert parse_entry(e.model_dump_json()) == e
        dumped = e.model_dump(mode="json")
        assert parse_entry(dumped).model_dump(mode="json") == dumped


@settings(max_examples=200)
@given(sessions(), st.data())
def test_a_broken_tree_always_raises(entries, data):
    assume(len(entries) >= 2)
    how = data.draw(st.sampled_from(["drop", "dangling", "duplicate", "cycle"]))
    victim_pos = data.draw(st.integers(1, len(entries) - 1))
    victim = entries[victim_pos]
    broken = list(entries)
    if how == "drop":  # a node vanishes: every descendant's branch is broken
        del broken[victim_pos]
        below = [
            e
            for e in entries[victim_pos + 1 :]
            if victim.id in {a.id for a in naive_branch(entries, e.id)}
        ]
        assume(below)
        leaf = below[-1].id
    elif how == "dangling":
        broken[victim_pos] = victim.model_copy(update={"parent_id": "nowhere"})
        leaf = victim.id
    elif how == "duplicate":
        other = entries[data.draw(st.integers(0, len(entries) - 1))]
        broken.append(other.model_copy(update={"parent_id": entries[0].id}))
        leaf = entries[-1].id
    else:  # the root points below itself
        broken[0] = entries[0].model_copy(update={"parent_id": victim.id})
        leaf = victim.id
    try:
        branch_of(broken, leaf)
    except BrokenSessionTree as exc:
        assert exc.leaf_id == leaf
    else:
        raise AssertionError(f"{how} did not raise")


def test_the_strategy_makes_forks_rewinds_and_states():
    from hypothesis import find

    def shape(entries, kind):
        return any(isinstance(e, kind) for e in entries)

    assert shape(find(sessions(), lambda es: shape(es, BranchEntry)), BranchEntry)
    assert shape(find(sessions(), lambda es: shape(es, AppStateEntry)), AppStateEntry)
    fork = find(
        sessions(),
        lambda es: any(
            isinstance(e, MessageEntry) and e.parent_id is not None and e.parent_id != es[i - 1].id
            for i, e in enumerate(es)
            if i
        ),
    )
    assert len(fork) >= 2
