"""The strip's panels: each one's HTML reused only while the panel, the cast its forms
offer, the language and the session are the same; and no panel names the leaf, which its
forms take from the page when they are submitted."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from jaiweb.commands.sessions import character_set
from jaiweb.store.selectors import session_get
from jaiweb.studio.regions import studio_context
from jaiweb.studio.templatetags.strip_render import _rendered, strip_panels_forget
from tests.support.storyboard import line, store

pytestmark = pytest.mark.django_db


def _panels(session, language: str) -> str:
    """The strip's panels as the studio page draws them, in ``language``."""
    context = studio_context(session=session_get(session_id=session.id))
    with translation.override(language):
        return render_to_string("studio/strip/panels.html", context)


def _misses() -> int:
    return _rendered.cache_info().misses


def test_a_panel_is_drawn_again_only_when_it_its_cast_or_the_language_changes(alice):
    strip_panels_forget()
    session = store(alice, line(3), "t3f")
    first = _panels(session, "en")
    assert first.count('<figure class="panel') == 3
    drawn = _misses()
    assert _panels(session, "en") == first and _misses() == drawn  # kept: nothing drawn

    character_set(session=session, name="Bob", fields={}, expected_leaf_id="t3f")
    with_bob = _panels(session, "en")
    assert _misses() == drawn + 3  # every panel offers Bob's look now
    assert with_bob.count('data-character="Bob"') == 3

    chinese = _panels(session, "zh-hans")
    assert "导演的说明" in chinese and "The director's notes" not in chinese
    assert _panels(session, "en") == with_bob


def test_no_panel_names_the_leaf_and_its_forms_fill_it_in(alice):
    session = store(alice, line(3), "t3f")
    character_set(session=session, name="Bob", fields={}, expected_leaf_id="t3f")
    leaf = session_get(session_id=session.id).leaf_id
    html = _panels(session, "en")
    assert leaf not in html
    assert html.count('<form class="use-look"') == html.count("data-fills-leaf") == 3
    assert html.count('name="expected_leaf_id" value=""') == 3


def test_two_sessions_with_the_same_panels_link_to_their_own(alice):
    one, two = store(alice, line(2), "t2f", "one"), store(alice, line(2), "t2f", "two")
    assert f"/sessions/{one.id}/" in _panels(one, "en")
    html = _panels(two, "en")
    assert f"/sessions/{two.id}/" in html and one.id not in html
