"""The strip's panels: each one's HTML reused only while the panel, the cast its forms
offer, the language and the session are the same; the panel the leaf moves past is not
drawn again; no panel names the leaf, which its forms take from the page when they are
submitted; the export links under them name it, and the layout form carries the viewer's
own CSRF token."""

from __future__ import annotations

import re

import pytest
from django.middleware.csrf import _does_token_match
from django.template.loader import render_to_string
from django.test import Client
from django.utils import translation

from jaiweb.commands.sessions import character_set
from jaiweb.store.selectors import session_get
from jaiweb.store.services import entry_append
from jaiweb.studio.regions import studio_context
from jaiweb.studio.templatetags.strip_render import _drawn, _rendered, strip_panels_forget
from tests.support.storyboard import line, store, turn

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


def test_the_panel_the_leaf_moves_past_keeps_its_drawing(alice):
    strip_panels_forget()
    session = store(alice, line(2), "t2f")
    before = _panels(session, "en")
    assert before.count('class="here"') == 1
    entry_append(session_id=session.id, entries=turn(3, "t2f"), expected_leaf_id="t2f")
    drawn = _drawn.cache_info().misses
    after = _panels(session, "en")
    assert _drawn.cache_info().misses == drawn + 1  # the new panel alone
    strip_panels_forget()
    assert _panels(session, "en") == after  # as drawn from scratch
    two, three = after.split('<figure class="panel')[2:]
    assert 'class="here"' not in two and 'data-action="continue-panel"' in two
    assert 'class="here"' in three and 'data-action="continue-panel"' not in three


def _strip(session, language: str) -> str:
    context = studio_context(session=session_get(session_id=session.id))
    with translation.override(language):
        return render_to_string("studio/regions/strip.html", context)


def test_the_export_links_name_the_leaf_they_were_drawn_at(alice):
    session = store(alice, line(2), "t2f")
    assert _strip(session, "en").count("leaf_id=t2f") == 5
    entry_append(session_id=session.id, entries=turn(3, "t2f"), expected_leaf_id="t2f")
    html = _strip(session, "en")
    assert html.count("leaf_id=t3f") == 5 and "t2f" not in html.split("comic-downloads")[1]
    assert 'name="expected_leaf_id" value="t3f"' in html
    assert "Use this layout" in html and "使用这个版式" not in html
    assert "使用这个版式" in _strip(session, "zh-hans")


def test_the_layout_form_carries_each_viewers_own_csrf_token(alice, django_user_model):
    staff = django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)
    session = store(alice, line(2), "t2f")
    tokens = {}
    for who in (alice, staff):
        viewer = Client()
        viewer.force_login(who)
        body = viewer.get(f"/sessions/{session.id}/").content.decode()
        form = body.split('<form class="page-layout"')[1].split("</form>")[0]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        tokens[who.username] = (token, viewer.cookies["csrftoken"].value)
    (mine, my_secret), (theirs, their_secret) = tokens.values()
    assert _does_token_match(mine, my_secret) and _does_token_match(theirs, their_secret)
    assert not _does_token_match(mine, their_secret)
    assert "csrfmiddlewaretoken" not in _strip(session, "en")  # a watcher's pass has none
