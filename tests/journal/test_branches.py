"""journal.branches: two branches compared, effects under a path, a rewind's preview."""

from __future__ import annotations

from journal.branches import (
    Change,
    Effects,
    compare_branches,
    effects_of,
    entry_effects,
    rewind_preview,
    state_changes,
)
from journal.tree import TreeIndex, branch_of
from tests.support.factories import INITIAL, KUNG_FU, LAXATIVE, article_entries, panel, post


def paths():
    entries = article_entries()
    entries += [panel("p1", "e4"), post("p2", "p1"), panel("p3", "e6")]
    index = TreeIndex(entries)
    laxative = branch_of(index, "p2")  # e0 e1 e2 e3 e4 p1 p2
    lollipop = branch_of(index, "p3")  # e0 e1 e2 e5 e6 p3
    return laxative, lollipop


def test_a_panel_charges_its_cost_unless_the_service_had_charged_for_it_already():
    assert entry_effects(panel("a", "e0")) == Effects(credits=10, panels=1)
    assert entry_effects(panel("a", "e0", replayed=True)) == Effects(credits=0, panels=1)
    assert entry_effects(panel("a", "e0", error=True)) == Effects()
    assert entry_effects(post("b", "a")) == Effects(posts=1)
    assert effects_of([panel("a", "e0"), post("b", "a"), panel("c", "b")]) == Effects(20, 2, 1)


def test_the_lollipop_and_the_laxative_branches_part_at_the_first_panel():
    laxative, lollipop = paths()
    got = compare_branches(laxative, lollipop, INITIAL)
    assert got.fork_id == "e2"
    assert [e.id for e in got.left.entries] == ["e3", "e4", "p1", "p2"]
    assert [e.id for e in got.right.entries] == ["e5", "e6", "p3"]
    assert (got.left.state, got.right.state) == (LAXATIVE, KUNG_FU)
    assert got.changes == [
        Change("猪猪侠", "buff", LAXATIVE["characters"]["猪猪侠"]["buff"], "超级棒棒糖(功夫大师)"),
        Change("猪猪侠", "skill", "无", "降龙十巴掌"),
    ]
    assert got.left.effects == Effects(credits=10, panels=1, posts=1)
    assert got.right.effects == Effects(credits=10, panels=1)


def test_a_branch_compared_with_itself_parts_nowhere():
    laxative, _ = paths()
    got = compare_branches(laxative, laxative, INITIAL)
    assert got.fork_id == "p2" and got.left.entries == got.right.entries == []
    assert got.changes == []


def test_state_changes_name_a_character_that_comes_or_goes_and_the_permission_mode():
    before = {
        "characters": {"A": {"buff": "x", "skill": "y", "mood": "z"}},
        "permission_mode": "ask",
    }
    after = {"characters": {"B": {"buff": "x"}}, "permission_mode": "auto"}
    got = state_changes(before, after)
    assert Change("A", "buff", "x", None) in got and Change("B", "buff", None, "x") in got
    assert got[-1] == Change(None, "permission_mode", "ask", "auto")


def test_a_rewind_preview_says_what_rolls_back_and_what_stays():
    laxative, lollipop = paths()
    # On the laxative branch (leaf p2), continue from e2: the buff rolls back to the
    # lollipop's, the panel's 10 credits and the post stay.
    target = lollipop[:3]  # e0 e1 e2
    got = rewind_preview(laxative, target, INITIAL)
    assert got.target_id == "e2" and got.left_behind == 4
    assert got.changes == [
        Change("猪猪侠", "buff", LAXATIVE["characters"]["猪猪侠"]["buff"], "超级棒棒糖(功夫大师)"),
        Change("猪猪侠", "skill", "无", "降龙十巴掌"),
    ]
    assert got.stays == Effects(credits=10, panels=1, posts=1)


def test_a_rewind_to_the_leaf_itself_rolls_nothing_back():
    laxative, _ = paths()
    got = rewind_preview(laxative, laxative, INITIAL)
    assert got.changes == [] and got.left_behind == 0 and got.stays == Effects()
