"""The timeline: the whole tree at every position of the log, abandoned branches included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal.entries import MessageEntry, ToolResultMessage
from journal.timeline import (
    CALL,
    CHARACTERS,
    MODE,
    PANEL,
    REPLY,
    REWIND,
    TOOL,
    YOU,
    timeline,
    timeline_data,
)
from journal.tree import branch_of
from tests.support.factories import INITIAL, KUNG_FU, LAXATIVE, assistant, at, branch, state, user


def panel(id: str, parent: str, image: str, t: int = 0) -> MessageEntry:
    message = ToolResultMessage(
        tool_call_id="c2", tool_name="generate_image", content="ok", details={"image_id": image}
    )
    return MessageEntry(id=id, parent_id=parent, timestamp=at(t), message=message)


def drawn_turn(n: int, parent: str | None, value: dict, t: int) -> list:
    """A turn as the loop writes one: prompt, tool calls, state, results, closing reply."""
    from tests.support.factories import result

    p = f"t{n}"
    return [
        user(f"{p}u", parent, f"prompt {n}", t=t),
        assistant(f"{p}a", f"{p}u", calls=[("c1", "set_character_state"), ("c2", "x")], t=t),
        state(f"{p}s", f"{p}a", value, t=t),
        result(f"{p}r1", f"{p}s", "c1", "set_character_state", t=t),
        panel(f"{p}r2", f"{p}r1", f"img_{n}", t=t),
        assistant(f"{p}f", f"{p}r2", "done", t=t),
    ]


def story() -> list:
    """The article's story: the lollipop, the laxative, a rewind to after the lollipop, the
    finishing move."""
    return [
        *drawn_turn(1, None, KUNG_FU, 1),
        *drawn_turn(2, "t1f", LAXATIVE, 2),
        branch("b1", "t1f", "t2f", t=3),
        *drawn_turn(3, "b1", KUNG_FU, 4),
    ]


def test_the_story_grows_turn_by_turn_and_the_rewind_keeps_the_old_branch():
    entries = story()
    line = timeline(entries, INITIAL)
    assert len(line.steps) == len(entries) == 19
    assert [s.entry_id for s in line.steps] == [e.id for e in entries]

    first = line.at(1)  # only the first prompt
    assert [(n.entry_id, n.tag, n.label) for n in first.nodes] == [("t1u", "you", "prompt 1")]
    assert line.active_path(1) == [0]
    assert [s.what for s in line.steps[:6]] == [YOU, CALL, CHARACTERS, TOOL, PANEL, REPLY]
    assert line.steps[1].detail == "set_character_state,x"
    assert line.steps[3].detail == "set_character_state"

    before_rewind = line.at(12)  # turn 2 (the laxative) done
    assert [n.entry_id for n in before_rewind.nodes] == ["t1u", "t2u"]
    assert line.active_path(12) == [0, 1]
    assert [(p.node, p.image_id) for p in before_rewind.panels] == [(0, "img_1"), (1, "img_2")]

    rewound = line.at(13)  # the branch entry: back to turn 1, turn 2 left behind, still there
    assert line.steps[12].what == REWIND and line.steps[12].node is None
    assert line.steps[12].active == 0
    assert [n.entry_id for n in rewound.nodes] == ["t1u", "t2u"]
    assert line.active_path(13) == [0]

    end = line.at(19)
    assert [(n.entry_id, n.parent, n.depth, n.lane) for n in end.nodes] == [
        ("t1u", None, 0, 0),
        ("t2u", 0, 1, 0),
        ("t3u", 0, 1, 1),  # a second child of turn 1: the next lane
    ]
    assert line.active_path(19) == [0, 2]
    assert [(p.node, p.step) for p in end.panels] == [(0, 5), (1, 11), (2, 18)]
    assert end == line  # the last position is the whole log


def test_a_state_edit_before_a_prompt_leads_up_to_it():
    entries = [
        *drawn_turn(1, None, KUNG_FU, 1),
        branch("b1", "t1u", "t1f", t=2),  # back to right after the first prompt
        state("s1", "b1", {**INITIAL, "permission_mode": "auto"}, t=3),
        user("u2", "s1", "and now?", t=4),
    ]
    line = timeline(entries, INITIAL)
    assert [s.what for s in line.steps[6:]] == [REWIND, MODE, YOU]
    assert line.steps[6].active == 0
    node = line.nodes[1]
    assert (node.entry_id, node.parent, node.lane, node.step) == ("s1", 0, 0, 8)
    assert line.at(8).nodes[1].tag == "state"  # before its prompt came
    assert (line.at(9).nodes[1].tag, line.at(9).nodes[1].label) == ("you", "and now?")
    assert len(line.nodes) == 2  # the edit and the prompt are one turn


def test_a_rewind_into_the_middle_of_a_turn_forks_from_it():
    entries = [
        *drawn_turn(1, None, KUNG_FU, 1),
        branch("b1", "t1r2", "t1f", t=2),  # "continue from this panel"
        user("u2", "b1", "next", t=3),
        assistant("a2", "u2", "ok", t=3),
    ]
    line = timeline(entries, INITIAL)
    assert [(n.entry_id, n.parent, n.depth, n.lane) for n in line.nodes] == [
        ("t1u", None, 0, 0),
        ("u2", 0, 1, 0),  # turn 1's first child turn: it continues the lane
    ]
    entries += [branch("b2", "t1f", "a2", t=4), user("u3", "b2", "again", t=5)]
    assert timeline(entries, INITIAL).nodes[2].lane == 1  # a second one opens a lane


def test_a_rewind_nothing_followed_yet_draws_no_node_and_is_where_the_session_is():
    entries = [*drawn_turn(1, None, KUNG_FU, 1), *drawn_turn(2, "t1f", LAXATIVE, 2)]
    entries.append(branch("b1", "t1f", "t2f", t=3))
    line = timeline(entries, INITIAL)
    assert len(line.nodes) == 2
    assert line.active_path(len(entries)) == [0]


def test_bad_logs_and_positions_are_refused():
    with pytest.raises(ValueError, match="comes later"):
        timeline([user("u2", "u1"), user("u1", None)], INITIAL)
    with pytest.raises(ValueError, match="twice"):
        timeline([user("u1", None), user("u1", None)], INITIAL)
    line = timeline(story(), INITIAL)
    for position in (-1, 20):
        with pytest.raises(ValueError, match="a position is 0"):
            line.at(position)
    assert line.at(0).nodes == () and line.active_path(0) == []


def test_the_data_is_rows_in_the_order_they_appear():
    data = timeline_data(timeline(story(), INITIAL))
    assert data["nodes"][2] == ["t3u", 0, 1, 1, 14, "you", "prompt 3", "", 0]
    assert data["panels"][0] == [0, 5, "img_1"]
    assert data["steps"][12] == [round(at(3).timestamp() * 1000), REWIND, None, 0, ""]


# --- every position of any session ----------------------------------------------------

# A session as people make one: prompts answered (with a panel or not), state edits, and
# rewinds to any node so far.
actions = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.booleans()),
        st.tuples(st.just("edit"), st.booleans()),
        st.tuples(st.just("rewind"), st.integers(0, 10**6)),
    ),
    max_size=30,
)


def session_of(plan) -> list:
    entries: list = []
    leaf = None
    for n, (action, arg) in enumerate(plan):
        if action == "turn":
            new = [user(f"u{n}", leaf, f"p{n}")]
            if arg:
                new += [
                    assistant(f"c{n}", f"u{n}", calls=[("c2", "generate_image")]),
                    panel(f"r{n}", f"c{n}", f"img{n}"),
                ]
            new.append(assistant(f"f{n}", new[-1].id, "done"))
        elif action == "edit":
            new = [state(f"s{n}", leaf, KUNG_FU if arg else LAXATIVE)]
        elif entries:
            target = entries[arg % len(entries)].id
            new = [branch(f"b{n}", target, leaf)]
        else:
            continue
        entries += new
        leaf = new[-1].id
    return entries


@settings(max_examples=150, deadline=None)
@given(actions)
def test_at_every_position_the_lanes_are_dense_and_the_active_path_is_the_leafs(plan):
    entries = session_of(plan)
    line = timeline(entries, INITIAL)
    for n in range(1, len(entries) + 1):
        shown = line.at(n)
        lanes = {node.lane for node in shown.nodes}
        assert lanes == set(range(len(lanes))), "lanes are numbered as branches were made"
        cells = [(node.lane, node.depth) for node in shown.nodes]
        assert len(cells) == len(set(cells)), "one node per lane and depth"
        on_branch = {e.id for e in branch_of(entries[:n], entries[n - 1].id)}
        path = set(line.active_path(n))
        for i, node in enumerate(shown.nodes):
            assert (i in path) == (node.entry_id in on_branch), (n, node)
            if node.parent is not None:
                assert shown.nodes[node.parent].depth == node.depth - 1
        assert len(shown.panels) == sum(1 for s in line.steps[:n] if s.what == PANEL)
