"""journal.tree: the index, branch_of, children and paths."""

from __future__ import annotations

import pytest

from journal.errors import BrokenSessionTree, UnknownEntry
from journal.tree import TreeIndex, ancestors, branch_of, children, depth
from tests.support.factories import article_entries, assistant, branch, user


def ids(entries):
    return [e.id for e in entries]


def test_article_branch_of_e6_skips_the_abandoned_rows():
    assert ids(branch_of(article_entries(), "e6")) == ["e0", "e1", "e2", "e5", "e6"]


def test_branch_of_the_abandoned_tip_is_still_there():
    assert ids(branch_of(article_entries(), "e4")) == ["e0", "e1", "e2", "e3", "e4"]


def test_branch_of_none_is_empty():
    assert branch_of(article_entries(), None) == []


def test_index_and_plain_entries_give_the_same_branch():
    entries = article_entries()
    assert branch_of(TreeIndex(entries), "e6") == branch_of(entries, "e6")


def test_unknown_leaf_names_the_leaf():
    with pytest.raises(BrokenSessionTree) as err:
        branch_of(article_entries(), "nope")
    assert err.value.leaf_id == "nope"
    assert "unknown leaf" in str(err.value)


def test_missing_parent_names_leaf_and_entry():
    entries = [user("a", None), assistant("b", "gone"), user("c", "b")]
    with pytest.raises(BrokenSessionTree) as err:
        branch_of(entries, "c")
    assert err.value.leaf_id == "c"
    assert err.value.entry_id == "b"
    assert "'gone'" in str(err.value)


def test_cycle_is_detected():
    entries = [user("a", "b"), assistant("b", "a")]
    with pytest.raises(BrokenSessionTree, match="cycle"):
        branch_of(entries, "a")


def test_self_parent_is_a_cycle():
    with pytest.raises(BrokenSessionTree, match="cycle"):
        branch_of([user("a", "a")], "a")


def test_duplicate_id_is_an_error_not_last_one_wins():
    entries = [user("a", None), assistant("b", "a"), user("b", "a")]
    with pytest.raises(BrokenSessionTree, match="duplicate") as err:
        branch_of(entries, "b")
    assert err.value.entry_id == "b"
    with pytest.raises(BrokenSessionTree, match="duplicate"):
        TreeIndex(entries)


def test_children_in_append_order_and_roots():
    index = TreeIndex(article_entries())
    assert ids(children(index, "e2")) == ["e3", "e5"]
    assert ids(children(index, None)) == ["e0"]
    assert children(index, "e6") == []
    with pytest.raises(UnknownEntry):
        children(index, "zz")


def test_extended_index_is_not_seen_by_the_original():
    base = TreeIndex(article_entries())
    a = base.extended(user("x", "e6"))
    b = base.extended(user("y", "e6"))  # diverges: copies base's prefix
    assert "x" in a and "x" not in base and "x" not in b
    assert "y" in b and "y" not in a and "y" not in base
    assert ids(children(a, "e6")) == ["x"]
    assert ids(children(b, "e6")) == ["y"]
    assert children(base, "e6") == []
    assert len(base) == 7 and len(a) == 8 and len(b) == 8
    # and an old handle can still grow without disturbing the newer ones
    c = base.extended(user("x", "e6"))
    assert ids(children(a, "e6")) == ["x"] and c.get("x") is not None


def test_walks_after_the_first_give_the_same_paths_on_shared_and_copied_stores():
    """The parent positions a walk keeps serve later walks, of this index and of those
    extended from it, and a store copied on divergence keeps none of the old one's."""
    base = TreeIndex(article_entries())
    assert ids(branch_of(base, "e6")) == ["e0", "e1", "e2", "e5", "e6"]
    assert ids(branch_of(base, "e4")) == ["e0", "e1", "e2", "e3", "e4"]
    a = base.extended(user("x", "e6")).extended(assistant("x2", "x"))
    b = base.extended(user("y", "e4"))  # diverges: its own store
    for _ in range(2):
        assert ids(branch_of(a, "x2")) == ["e0", "e1", "e2", "e5", "e6", "x", "x2"]
        assert ids(branch_of(b, "y")) == ["e0", "e1", "e2", "e3", "e4", "y"]
        assert ids(branch_of(base, "e6")) == ["e0", "e1", "e2", "e5", "e6"]
    with pytest.raises(BrokenSessionTree):
        branch_of(base, "x2")  # a later index's entry is not in this one


def test_a_parent_listed_after_its_child_still_gives_the_path():
    entries = [user("b", "a"), assistant("c", "b"), user("a", None)]
    for _ in range(2):
        assert ids(branch_of(TreeIndex(entries), "c")) == ["a", "b", "c"]
        assert ids(branch_of(entries, "c")) == ["a", "b", "c"]


def test_seq_and_last():
    index = TreeIndex(article_entries())
    assert index.seq("e0") == 1 and index.seq("e6") == 7
    assert index.last.id == "e6"
    with pytest.raises(UnknownEntry):
        index.seq("zz")


def test_depth_and_ancestors():
    index = TreeIndex(article_entries())
    assert depth(index, "e6") == 5
    assert ids(ancestors(index, "e6")) == ["e6", "e5", "e2", "e1", "e0"]


def test_branch_of_cost_is_independent_of_session_size():
    """Counted, not timed: branch_of looks up depth entries however many the session has."""

    class CountingPositions(dict):
        lookups = 0

        def get(self, key, default=None):
            self.lookups += 1
            return super().get(key, default)

        def __getitem__(self, key):
            self.lookups += 1
            return super().__getitem__(key)

    def build(n_side):
        entries = [user("0", None)]
        for i in range(1, 50):
            entries.append(user(str(i), str(i - 1)))
        for j in range(n_side):  # a bushy side tree hanging off the root
            entries.append(branch(f"s{j}", "0", "49"))
        positions = CountingPositions({e.id: i for i, e in enumerate(entries)})
        return TreeIndex.of_unique(entries, positions), positions

    (small, small_counts), (large, large_counts) = build(10), build(10_000)
    assert [e.id for e in branch_of(small, "49")] == [str(i) for i in range(50)]
    branch_of(large, "49")
    assert small_counts.lookups == large_counts.lookups == 50
