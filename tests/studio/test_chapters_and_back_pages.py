"""The studio's side of chapters, "back to where I was" and "story only" (issue 30): the
tree's headings and back bar, the preview's two outcomes, and the writes behind them."""

from __future__ import annotations

import pytest

from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at, chapters_at
from tests.support.rewinds import SICK, STRONG, two_branch_story

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def story(alice):
    return two_branch_story(alice)


def payloads_after(session, seq: int) -> list[dict]:
    return [e.payload for e in Entry.objects.filter(session=session, seq__gt=seq).order_by("seq")]


def chapters_now(session):
    session.refresh_from_db()
    return chapters_at(session=session)


def seq_of(session) -> int:
    return Entry.objects.filter(session=session).count()


def test_the_preview_offers_both_choices_and_story_only_keeps_the_characters(client, alice, story):
    client.force_login(alice)
    body = client.get(f"/sessions/{story.id}/entries/f1/?from=us").content.decode()
    assert 'data-choice="story-and-characters"' in body and 'data-choice="story-only"' in body
    assert 'data-action="continue-keep-characters"' in body
    story_only = body.split('data-choice="story-only"')[1]
    assert "拉肚子虚脱" not in story_only.split("</div>")[0]  # no character rolls back there
    seq = seq_of(story)
    got = client.post(
        f"/sessions/{story.id}/rewind",
        {"entry_id": "f1", "expected_leaf_id": "a1", "keep": "characters"},
        **HX,
    )
    assert got.status_code == 200
    rewind, kept = payloads_after(story, seq)
    assert (rewind["type"], rewind["parent_id"], rewind["from_id"]) == ("branch", "f1", "a1")
    assert kept["type"] == "app_state" and kept["parent_id"] == rewind["id"]
    assert kept["value"] == {**SICK, "characters": STRONG["characters"]}


def test_the_tree_offers_back_previewed_and_back_rewinds(client, alice, story):
    client.force_login(alice)
    page = client.get(f"/sessions/{story.id}/").content.decode()
    assert 'data-back-target="f1"' in page and 'data-action="back"' in page
    # its preview, loaded when opened: the buff and the mode roll back to the sick turn's
    preview = client.get(f"/sessions/{story.id}/back/preview").content.decode()
    assert 'data-preview="back"' in preview
    assert '超级棒棒糖(功夫大师)</span> → <span class="after">拉肚子虚脱' in preview
    assert "20 credits stay spent" not in preview  # the part left behind spent nothing
    seq = seq_of(story)
    got = client.post(f"/sessions/{story.id}/back", {"expected_leaf_id": "a1"}, **HX)
    assert got.status_code == 200
    [back] = payloads_after(story, seq)
    assert (back["type"], back["parent_id"], back["from_id"]) == ("branch", "f1", "a1")
    story.refresh_from_db()
    assert app_state_at(session=story) == SICK
    # stale: nothing written, the regions as they are now
    got = client.post(f"/sessions/{story.id}/back", {"expected_leaf_id": "a1"}, **HX)
    assert got.status_code == 409 and seq_of(story) == seq + 1


def test_chapter_headings_on_the_tree_and_the_form_behind_them(client, alice, bob, story):
    client.force_login(alice)
    url = f"/sessions/{story.id}/chapters"
    got = client.post(url, {"entry_id": "u1", "title": "The fight", "expected_leaf_id": "a1"}, **HX)
    assert got.status_code == 200
    [chapter] = chapters_now(story)
    assert (chapter.number, chapter.entry_id, chapter.title) == (1, "u1", "The fight")
    page = client.get(f"/sessions/{story.id}/").content.decode()
    assert 'data-chapter="1" data-chapter-entry="u1"' in page and "The fight" in page
    seq = seq_of(story)
    story.refresh_from_db()
    for title in ("", "  ", "x" * 121, "nul\x00"):
        got = client.post(
            url, {"entry_id": "u0", "title": title, "expected_leaf_id": story.leaf_id}, **HX
        )
        assert got.status_code == 422, title
    assert seq_of(story) == seq
    client.force_login(bob)
    got = client.post(
        url, {"entry_id": "u0", "title": "t", "expected_leaf_id": story.leaf_id}, **HX
    )
    assert got.status_code == 404 and seq_of(story) == seq
    client.force_login(alice)
    got = client.post(
        url, {"entry_id": "u1", "clear": "1", "expected_leaf_id": story.leaf_id}, **HX
    )
    assert got.status_code == 200 and chapters_now(story) == []
