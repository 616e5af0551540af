"""jaiweb.studio.tree: the session tree as a storyboard, one node per turn.

Sessions are written straight to the store (no agent run; tests/support/storyboard.py), in
the shape the loop writes a turn: the prompt, a reply calling tools, the state entry and
its result, the panel's result, the closing reply.
"""

from __future__ import annotations

import re

import pytest

import jaiweb.store.rows as store_rows
from jaiweb.commands.sessions import character_set
from jaiweb.store.selectors import branch_rows
from jaiweb.studio import tree
from jaiweb.studio.tree import More, Turn, turn_starts
from journal.entries import AppStateEntry
from tests.support.spies import calls_of
from tests.support.storyboard import HERO, T0, line, rewind, store, turn

pytestmark = pytest.mark.django_db


def nodes(items) -> list[Turn]:
    return [i for i in items if isinstance(i, Turn)]


# --- the split into turns (pure) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "starts"),
    [
        # a turn: prompt, reply with calls, state, results, closing reply
        (["user", "reply", "state", "tool", "tool", "final"], [0]),
        (["user", "reply", "tool", "final", "user", "final"], [0, 4]),
        # a character edited between two turns leads up to the next prompt
        (["user", "final", "state", "user", "final"], [0, 2]),
        (["user", "final", "state", "state", "user", "final"], [0, 2]),
        # a rewind starts a turn; the prompt after it belongs to it (the rewind is its edge)
        (["user", "final", "branch", "user", "final"], [0, 2]),
        (["user", "final", "branch", "state", "user"], [0, 2]),
        # a rewind to the middle of a turn: what follows it is a new turn
        (["user", "reply", "branch", "user", "final"], [0, 2]),
        # two rewinds in a row are one edge
        (["user", "final", "branch", "branch", "user"], [0, 2]),
        # a prompt typed during a run (steering) is a turn of its own
        (["user", "reply", "tool", "user", "final"], [0, 3]),
        # prompts with no reply (stopped before the model answered)
        (["user", "user", "user"], [0, 1, 2]),
        # a side branch that starts in the middle of a turn
        (["state", "tool", "final", "user"], [0, 3]),
        (["tool", "tool", "final"], [0]),
        # the state of a run's "don't ask again" is part of the turn
        (["user", "reply", "state", "tool", "final"], [0]),
    ],
)
def test_turn_starts(kinds, starts):
    assert turn_starts(kinds) == starts


# --- one node per turn -------------------------------------------------------------------


def test_one_node_per_turn_with_its_prompt_panel_and_state(alice):
    entries = line(3)
    session = store(alice, entries, "t3f")
    items = tree.active_path_view(session)
    assert all(isinstance(i, Turn) for i in items)
    assert [i.entry_id for i in items] == ["t1f", "t2f", "t3f"]  # continue: right after it
    assert [i.first_id for i in items] == ["t1u", "t2u", "t3u"]
    assert [i.parent_id for i in items] == [None, "t1f", "t2f"]
    first = items[0]
    assert first.tag == "you" and first.label == "prompt 1"
    assert first.panels == (("img_0001", "t1r2"),)
    assert first.state_changed and first.steps == 6
    assert (first.type, first.role) == ("message", "assistant")
    assert [i.here for i in items] == [False, False, True]
    assert all(i.active for i in items)


def test_a_turn_without_state_or_panel_has_no_badge_nor_thumbnail(alice):
    session = store(alice, line(1, state=False, panel=False), "t1f")
    [node] = tree.active_path_view(session)
    assert node.panels == () and not node.state_changed and node.steps == 2


def test_a_rewind_is_drawn_as_a_fork_under_the_turn_it_goes_back_to(alice):
    # turns 1, 2, 3; back to right after turn 1; a new turn 4 from there
    entries = [*line(3), rewind("b1", "t1f", "t3f"), *turn(4, "b1")]
    session = store(alice, entries, "t4f")
    items = tree.active_path_view(session)
    assert [i.entry_id for i in items] == ["t1f", "t4f"]  # the active path: turn 1, turn 4
    one, four = items
    assert four.parent_id == "t1f" and four.via == "b1" and four.first_id == "t4u"
    assert one.forks == 1 and one.fork_points == (("t1f", "b1", 1),)
    # the branch left behind hangs from the same node: a fork, drawn open, grey
    [old] = one.branches
    assert [(n.entry_id, n.parent_id, n.active) for n in nodes(old)] == [
        ("t2f", "t1f", False),
        ("t3f", "t2f", False),
    ]
    # no node stands for the branch entry: it is the edge
    drawn = [n.entry_id for n in nodes(items)] + [n.entry_id for n in nodes(old)]
    assert "b1" not in drawn and all(n.tag == "you" for n in nodes(items))


def test_right_after_a_rewind_the_turn_gone_back_to_is_where_the_session_is(alice):
    entries = [*line(2), rewind("b1", "t1f", "t2f")]
    session = store(alice, entries, "b1")
    items = tree.active_path_view(session)
    [one] = items  # the rewind with nothing after it is not a node
    assert one.here and one.entry_id == "t1f"
    assert [n.entry_id for n in nodes(one.branches[0])] == ["t2f"]


def test_a_rewind_nothing_followed_is_not_drawn_nor_counted(alice):
    # back to turn 1 (b1), then at once back to turn 2 (b2) and on from there
    entries = [*line(2), rewind("b1", "t1f", "t2f"), rewind("b2", "t2f", "b1", 1), *turn(3, "b2")]
    session = store(alice, entries, "t3f")
    items = tree.active_path_view(session)
    assert [i.entry_id for i in items] == ["t1f", "t2f", "t3f"]
    assert items[0].forks == 0 and items[0].branches == ()
    assert items[1].forks == 0  # t2f's children: b2 (the line) only; t3u? no: b2 leads to it
    assert items[2].via == "b2"


def test_a_rewind_into_the_middle_of_a_turn_forks_from_that_turn(alice):
    # back to right after turn 1's state was set (before its panel), then a new prompt
    entries = [*line(1), rewind("b1", "t1r1", "t1f"), *turn(2, "b1", state=False)]
    session = store(alice, entries, "t2f")
    items = tree.active_path_view(session)
    one, two = items
    assert one.entry_id == "t1r1" and one.panels == ()  # on this line turn 1 drew nothing
    assert two.parent_id == "t1r1"
    [rest] = one.branches  # the rest of turn 1 as it was: its panel, its closing reply
    [node] = nodes(rest)
    assert node.first_id == "t1r2" and node.entry_id == "t1f" and node.tag == "tool"
    assert node.panels == (("img_0001", "t1r2"),)


def test_a_state_edited_before_a_prompt_belongs_to_that_turn(alice):
    entries = line(1)
    value = {"characters": {HERO: {"mood": "angry"}}, "permission_mode": "ask"}
    entries.append(AppStateEntry(id="edit", parent_id="t1f", timestamp=T0, value=value))
    entries.extend(turn(2, "edit", state=False, panel=False))
    session = store(alice, entries, "t2f")
    one, two = tree.active_path_view(session)
    assert one.entry_id == "t1f"  # right after turn 1: before the edit
    assert two.first_id == "edit" and two.tag == "you" and two.state_changed


def test_the_inspector_reads_the_entries_of_one_turn(alice):
    session = store(alice, line(3), "t3f")
    path = branch_rows(session=session, leaf_id="t2f", lazy=True)
    assert [r.entry_id for r in tree.turn_entries(path, "t2u")][:2] == ["t2u", "t2a"]
    assert [r.entry_id for r in tree.turn_entries(path, None)] == [
        "t2u",
        "t2a",
        "t2s",
        "t2r1",
        "t2r2",
        "t2f",
    ]


# --- long sessions stay paged ------------------------------------------------------------


def _parsed(monkeypatch):
    """The rows ``parse_raw`` parses from now on, counted."""
    calls = calls_of(monkeypatch, store_rows, "parse_raw")
    return lambda: sum(len(args[0]) for args, _kwargs in calls)


def test_a_10000_entry_session_draws_a_page_of_turns_and_parses_only_those(alice, monkeypatch):
    # a main line of 1,540 turns of 6 entries, 40 side branches of 3 turns off it
    entries = line(1500)
    for k in range(40):
        entries.append(rewind(f"b{k}", f"t{1 + k * 37}f", "t1500f", k))
        entries.extend(line(3, start=10_000 + k * 10, parent=f"b{k}"))
    entries.extend(line(40, start=1501, parent="t1500f"))
    leaf = entries[-1].id
    session = store(alice, entries, leaf)
    assert session.entry_count == 10_000
    from jaiweb.store.entry_cache import parsed_entries

    parsed_entries.clear()
    parsed = _parsed(monkeypatch)
    items = tree.active_path_view(session)
    turns, folds = nodes(items), [i for i in items if isinstance(i, More)]
    assert len(turns) == tree.PATH_HEAD + tree.PATH_TAIL and len(folds) == 1
    assert turns[-1].here and turns[-1].entry_id == leaf
    assert parsed() < 1_000, f"{parsed()} entries parsed for one page"

    # the fold loads a page of turns at a time, and its pages add up to the whole path
    path = branch_rows(session=session, lazy=True)
    store_rows.parse_rows(path)
    kinds = [tree.kind_of(r.entry) for r in path]
    starts = turn_starts(kinds)
    ends = [path[e - 1].entry_id for e in [*starts[1:], len(path)]]
    seen = [t.entry_id for t in turns[: tree.PATH_HEAD]]
    query, pages = folds[0].query, 0
    while query:
        q = dict(p.split("=") for p in query.split("&"))
        page = tree.path_page(
            session, leaf_id=q["path"], start=int(q["start"]), stop=int(q["stop"])
        )
        got = nodes(page)
        assert len(got) <= tree.PAGE
        seen.extend(t.entry_id for t in got)
        more = [i for i in page if isinstance(i, More)]
        query = more[0].query if more else None
        pages += 1
    seen.extend(t.entry_id for t in turns[tree.PATH_HEAD :])
    assert seen == ends and pages > 1


def test_a_long_side_branch_opens_a_page_of_turns_at_a_time(alice):
    # turns 1-3; back to turn 1 for 30 turns (t100…t129); back to turn 3 for turn 200
    entries = [*line(3), rewind("b1", "t1f", "t3f"), *line(30, start=100, parent="b1")]
    entries.extend([rewind("b2", "t3f", "t129f", 1), *turn(200, "b2")])
    session = store(alice, entries, "t200f")
    items = tree.active_path_view(session)
    assert [n.entry_id for n in nodes(items)] == ["t1f", "t2f", "t3f", "t200f"]
    assert items[0].fork_points == (("t1f", "t2u", 1),)
    [branch] = tree.fork_view(session, parent_id="t1f", exclude="t2u")
    assert items[0].branches == (tuple(branch),)  # drawn open: a page of it is within the budget
    assert [n.entry_id for n in nodes(branch)] == [
        f"t{n}f" for n in range(100, 100 + tree.CHAIN_PAGE)
    ]
    assert nodes(branch)[0].via == "b1" and nodes(branch)[0].parent_id == "t1f"
    [more] = [i for i in branch if isinstance(i, More)]
    assert more.count == (30 - tree.CHAIN_PAGE) * 6
    chain, start = re.fullmatch(r"chain=(\d+)&from=(\d+)", more.query).groups()
    rest = tree.chain_view(session, chain=int(chain), from_pos=int(start))
    assert nodes(rest)[0].entry_id == f"t{100 + tree.CHAIN_PAGE}f"
    assert nodes(rest)[-1].entry_id == f"t{100 + 2 * tree.CHAIN_PAGE - 1}f"
    [more] = [i for i in rest if isinstance(i, More)]
    assert more.count == (30 - 2 * tree.CHAIN_PAGE) * 6
    assert items[2].fork_points == ()  # turn 3's line goes on through b2: no fork there


def test_the_page_of_a_10000_entry_session_is_small(client, alice):
    entries = line(1667)[:10_000]
    session = store(alice, entries, entries[-1].id)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/").content.decode()
    assert len(body) < 200_000
    assert body.count('class="node"') == tree.PATH_HEAD + tree.PATH_TAIL
    assert re.search(r"… [\d,]+ more entries", body)


def test_a_turn_of_hand_edits_names_what_they_changed_comparing_each_edit_once(alice, monkeypatch):
    compared = calls_of(monkeypatch, tree, "edited_characters")
    session = store(alice, line(1), "t1f")

    def edit(name: str, mood: str) -> None:
        character_set(
            session=session, name=name, fields={"mood": mood}, expected_leaf_id=session.leaf_id
        )
        session.refresh_from_db()

    edit(HERO, "angry")
    edit("超人强", "calm")
    edit(HERO, "sad")
    *_, edits = tree.active_path_view(session)
    assert edits.edited == "characters" and edits.label == f"{HERO}, 超人强"
    assert len(compared) == 3

    # One more edit: the turn grows, and only the new edit is compared with its state before.
    edit("小呆呆", "sleepy")
    *_, edits = tree.active_path_view(session)
    assert edits.label == f"{HERO}, 超人强, 小呆呆"
    assert len(compared) == 4
