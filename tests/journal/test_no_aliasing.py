"""Snapshots never alias journal data (docs/ARCHITECTURE.md §7): an edit of what a caller got
changes neither the entry, nor another snapshot, nor the journal."""

from __future__ import annotations

from journal.entries import AppStateEntry, parse_entry
from journal.snapshot import SessionSnapshot, apply_entry, branch_app_state, replay
from tests.support.factories import T0


def state(buff: str) -> dict:
    return {
        "characters": {"猪猪侠": {"buff": buff, "skill": "降龙十巴掌"}},
        "permission_mode": "ask",
    }


def test_the_value_an_entry_was_built_from_stays_the_callers():
    value = state("超级棒棒糖")
    entry = AppStateEntry(id="e1", parent_id=None, timestamp=T0, value=value)
    value["characters"]["猪猪侠"]["buff"] = "拉肚子"
    value["permission_mode"] = "auto"
    assert entry.value == state("超级棒棒糖")


def test_editing_a_snapshots_state_changes_no_entry_and_no_other_snapshot():
    entry = AppStateEntry(id="e1", parent_id=None, timestamp=T0, value=state("超级棒棒糖"))
    first = replay([entry], state("无"), T0)
    second = apply_entry(
        first,
        parse_entry(
            {
                "type": "branch",
                "id": "e2",
                "parent_id": "e1",
                "timestamp": T0.isoformat(),
                "from_id": "e1",
            }
        ),
    )
    first.app_state["characters"]["猪猪侠"]["buff"] = "拉肚子"
    second.app_state["characters"].clear()
    assert entry.value == state("超级棒棒糖")
    assert first.app_state == state("超级棒棒糖") == second.app_state


def test_the_initial_state_is_copied_in_and_out():
    initial = state("无")
    snapshot = SessionSnapshot.empty(initial, T0)
    initial["permission_mode"] = "auto"
    snapshot.initial_app_state["characters"]["x"] = {}
    snapshot.app_state["permission_mode"] = "auto"
    assert snapshot.app_state == state("无") == snapshot.initial_app_state


def test_branch_app_state_hands_out_a_copy():
    entry = AppStateEntry(id="e1", parent_id=None, timestamp=T0, value=state("超级棒棒糖"))
    got = branch_app_state([entry], "e1", state("无"))
    got["characters"]["猪猪侠"]["buff"] = "拉肚子"
    assert entry.value == state("超级棒棒糖")
    assert branch_app_state([entry], "e1", state("无")) == state("超级棒棒糖")
