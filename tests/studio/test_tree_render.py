"""The tree's turns: their links as {% url %} gives them, their HTML reused only while the
turn, the language and the session are the same; the turn the leaf leaves is not drawn
again, only its "you are here" mark changes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from jaiweb.store.labels import label_add
from jaiweb.store.selectors import session_get
from jaiweb.store.services import entry_append
from jaiweb.studio.regions import region_parts, studio_context
from jaiweb.studio.templatetags.studio_urls import path_to
from jaiweb.studio.templatetags.tree_render import _drawn, tree_items_forget
from tests.support.storyboard import line, store, turn

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("studio-entry", ["s_1", "e_2"]),
        ("studio-entry", ["a b", "?#%&'()x"]),
        ("studio-entry", ["s.1", "~x-"]),
        ("studio-entry", ["s", "中文"]),
        ("panel-image", ["img_1"]),
        ("studio-tree", ["s_x"]),
        ("studio-tree-spent", ["<script>"]),
    ],
)
def test_path_to_gives_what_reverse_gives(name, args):
    assert path_to(name, *args) == reverse(name, args=args)


@pytest.mark.parametrize("bad", ["", "a/b"])
def test_path_to_refuses_what_reverse_refuses(bad):
    with pytest.raises(Exception) as ours:
        path_to("studio-entry", "s", bad)
    with pytest.raises(Exception) as theirs:
        reverse("studio-entry", args=["s", bad])
    assert type(ours.value) is type(theirs.value)


def _tree(session, language: str) -> str:
    return region_parts(context=studio_context(session=session), language=language, names=["tree"])[
        "tree"
    ]


def test_a_turn_is_drawn_again_when_it_changes_or_the_language_does(alice):
    tree_items_forget()
    session = store(alice, line(3), "t3f")
    first = _tree(session, "en")
    assert _tree(session, "en") == first  # the same turns: the same HTML
    label_add(session_id=session.id, entry_id="t2f", text="<b>twist</b>")
    labelled = _tree(session, "en")
    assert 'data-label="&lt;b&gt;twist&lt;/b&gt;"' in labelled and "<b>twist" not in labelled
    chinese = _tree(session, "zh-hans")
    assert "继续" in chinese and "Continue from here" not in chinese
    assert "Continue from here" in _tree(session, "en")


def test_two_sessions_with_the_same_turns_link_to_their_own(alice):
    one, two = store(alice, line(2), "t2f", "one"), store(alice, line(2), "t2f", "two")
    assert f"/sessions/{one.id}/entries/t2f/" in _tree(one, "en")
    html = _tree(two, "en")
    assert f"/sessions/{two.id}/entries/t2f/" in html and one.id not in html


def test_the_turn_the_leaf_leaves_keeps_its_drawing(alice):
    tree_items_forget()
    session = store(alice, line(2), "t2f")
    before = _tree(session, "en")
    assert before.count('data-leaf="true"') == 1 and 'data-target="t2f"' not in before
    entry_append(session_id=session.id, entries=turn(3, "t2f"), expected_leaf_id="t2f")
    drawn = _drawn.cache_info().misses
    after = _tree(session_get(session_id=session.id), "en")
    assert _drawn.cache_info().misses == drawn + 1  # the new turn alone
    tree_items_forget()
    assert _tree(session_get(session_id=session.id), "en") == after  # as drawn from scratch
    two, three = after.split('data-item="t2f"')[1].split('data-item="t3f"')
    assert 'data-leaf="true"' not in two and 'data-target="t2f"' in two
    assert 'data-leaf="true"' in three and 'class="here"' in three
