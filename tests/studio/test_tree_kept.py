"""jaiweb.studio.tree keeps the turns it drew: a pass after an entry draws the path again,
and a turn is made again only when something it shows has changed (its entries, its forks,
the leaf at it, the path it is on)."""

from __future__ import annotations

import pytest

from jaiweb.store.selectors import session_get
from jaiweb.store.services import entry_append
from jaiweb.studio import tree
from jaiweb.studio.tree import Turn
from tests.support.storyboard import line, rewind, store, turn

pytestmark = pytest.mark.django_db


def drawn(session) -> list[Turn]:
    return [
        i for i in tree.active_path_view(session_get(session_id=session.id)) if isinstance(i, Turn)
    ]


def test_a_turn_nothing_changed_is_the_one_drawn_before(alice):
    session = store(alice, line(3), "t3f")
    first = drawn(session)
    again = drawn(session)
    assert [t.entry_id for t in again] == ["t1f", "t2f", "t3f"]
    assert all(a is b for a, b in zip(first, again, strict=True))


def test_a_new_turn_moves_here_and_leaves_the_others_kept(alice):
    session = store(alice, line(2), "t2f")
    one, two = drawn(session)
    assert two.here and not one.here
    entry_append(session_id=session.id, entries=turn(3, "t2f"), expected_leaf_id="t2f")
    one_after, two_after, three = drawn(session)
    assert one_after is one  # nothing about it changed
    assert two_after is not two and not two_after.here  # the leaf left it
    assert three.here and three.entry_id == "t3f"


def test_a_fork_off_a_kept_turn_is_drawn_on_it(alice):
    session = store(alice, line(3), "t3f")
    one, _two, _three = drawn(session)
    assert one.forks == 0
    entry_append(
        session_id=session.id,
        entries=[rewind("b1", "t1f", "t3f"), *turn(4, "b1")],
        expected_leaf_id="t3f",
    )
    one_after, four = drawn(session)
    assert one_after.fork_points == (("t1f", "b1", 1),)
    assert four.entry_id == "t4f" and four.here


def test_the_same_entries_in_another_session_are_their_own_turns(alice):
    # storyboard ids are the same in every session; each session's turns are its own
    mine = store(alice, line(2), "t2f")
    other = store(alice, [*line(2), rewind("b1", "t1f", "t2f"), *turn(3, "b1")], "t3f")
    assert drawn(mine)[0].forks == 0
    assert drawn(other)[0].fork_points == (("t1f", "b1", 1),)
    assert drawn(mine)[0].forks == 0
