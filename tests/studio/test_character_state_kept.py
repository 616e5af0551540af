"""The character-state region names no leaf, so its HTML is kept by what it shows: an entry
that changes none of it (a new turn on the path) leaves the region as it was, and watchers
are not sent it again; a change of a character, of the permission mode or of the run draws
it again. Its forms send the page's leaf when they are submitted."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import character_set, permission_mode_set
from jaiweb.store.selectors import session_get
from jaiweb.store.services import entry_append
from jaiweb.studio.regions import region_parts, studio_context
from tests.support.storyboard import line, store, turn

pytestmark = pytest.mark.django_db


def region(session, language: str = "en") -> str:
    context = studio_context(session=session_get(session_id=session.id))
    return region_parts(context=context, language=language, names=["character-state"])[
        "character-state"
    ]


def test_the_region_names_no_leaf_and_its_forms_fill_it_in(alice):
    session = store(alice, line(2), "t2f")
    html = region(session)
    assert "t2f" not in html and "t1f" not in html
    assert html.count("<form") == html.count("data-fills-leaf") == 3
    assert html.count('name="expected_leaf_id" value=""') == 3


def test_a_new_turn_leaves_the_region_as_it_was(alice):
    session = store(alice, line(2), "t2f")
    before = region(session)
    entry_append(session_id=session.id, entries=turn(3, "t2f", state=False), expected_leaf_id="t2f")
    assert region(session) is before  # kept: not drawn again, the same HTML to every watcher


def test_what_the_region_shows_draws_it_again(alice):
    session = store(alice, line(1), "t1f")
    first = region(session)
    leaf = session_get(session_id=session.id).leaf_id
    character_set(session=session, name="Bob", fields={"mood": "<sly>"}, expected_leaf_id=leaf)
    with_bob = region(session)
    assert 'data-character="Bob"' in with_bob and "&lt;sly&gt;" in with_bob
    assert 'data-character="Bob"' not in first
    leaf = session_get(session_id=session.id).leaf_id
    permission_mode_set(session=session, mode="auto", expected_leaf_id=leaf)
    auto = region(session)
    assert 'data-mode="auto" aria-pressed="true"' in auto and auto != with_bob
    assert "Paid tools" in auto and "付费工具" in region(session, "zh-hans")


def test_each_session_has_its_own_region(alice):
    # the same cast and mode in two sessions: each region's forms post to their own
    one, two = store(alice, line(1), "t1f"), store(alice, line(1), "t1f")
    assert f"/sessions/{one.id}/character" in region(one)
    assert f"/sessions/{two.id}/character" in region(two)
    assert str(one.id) not in region(two)
