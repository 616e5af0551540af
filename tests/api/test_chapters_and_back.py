"""Chapters, "back to where I was" and "continue from here, story only" through the API,
each checked on the journal's entries (issue 30; docs/ARCHITECTURE.md §4, §5 chapters)."""

from __future__ import annotations

import pytest

from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at
from jaiweb.store.services import entry_append, session_create
from tests.support.factories import assistant, user
from tests.support.rewinds import HERO, SICK, STRONG, two_branch_story

pytestmark = pytest.mark.django_db


@pytest.fixture
def story(alice):
    return two_branch_story(alice)


def entries_after(session, seq: int) -> list[dict]:
    return [e.payload for e in Entry.objects.filter(session=session, seq__gt=seq).order_by("seq")]


def last_seq(session) -> int:
    return Entry.objects.filter(session=session).count()


# --- continue from here: story and characters, or story only ----------------------------


def test_story_and_characters_appends_one_branch_entry(as_alice, story):
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/navigate", {"entry_id": "f1"})
    assert got.status_code == 200, got.content
    [rewind] = entries_after(story, seq)
    assert rewind["type"] == "branch" and rewind["parent_id"] == "f1"
    assert rewind["from_id"] == "a1"
    assert got.json()["leaf_id"] == rewind["id"] and got.json()["app_state"] == SICK


def test_story_only_keeps_todays_characters_in_the_same_append(as_alice, story):
    seq = last_seq(story)
    got = as_alice.post(
        f"/sessions/{story.id}/navigate", {"entry_id": "f1", "keep_characters": True}
    )
    assert got.status_code == 200, got.content
    rewind, kept = entries_after(story, seq)
    assert rewind["type"] == "branch" and rewind["parent_id"] == "f1"
    assert rewind["from_id"] == "a1"
    # the target's state (its permission mode) with the characters the leaf had
    assert kept["type"] == "app_state" and kept["parent_id"] == rewind["id"]
    assert kept["value"] == {**SICK, "characters": STRONG["characters"]}
    story.refresh_from_db()
    assert story.leaf_id == kept["id"] == got.json()["leaf_id"]
    assert app_state_at(session=story) == kept["value"]


def test_story_only_with_the_same_characters_writes_only_the_rewind(as_alice, story):
    seq = last_seq(story)
    got = as_alice.post(
        f"/sessions/{story.id}/navigate", {"entry_id": "u0", "keep_characters": True}
    )
    assert got.status_code == 200
    assert [e["type"] for e in entries_after(story, seq)] == ["branch"]


def test_a_stale_leaf_refuses_both_choices_and_writes_nothing(as_alice, story):
    seq = last_seq(story)
    for keep in (False, True):
        got = as_alice.post(
            f"/sessions/{story.id}/navigate",
            {"entry_id": "f1", "expected_leaf_id": "u1", "keep_characters": keep},
        )
        assert got.status_code == 409 and got.json()["leaf_id"] == "a1"
    assert last_seq(story) == seq


def test_the_preview_shows_both_outcomes(as_alice, story):
    got = as_alice.get(f"/sessions/{story.id}/entries/f1/rewind-preview").json()
    both = {(c["character"], c["field"]) for c in got["changes"]}
    assert (HERO, "buff") in both and (None, "permission_mode") in both
    assert [(c["character"], c["field"]) for c in got["story_only_changes"]] == [
        (None, "permission_mode")
    ]


# --- back to where I was -----------------------------------------------------------------


def test_back_returns_to_the_leaf_the_rewind_left_and_again(as_alice, story):
    # the fixture's own rewind (b1) left f1: back goes there, previewed first
    preview = as_alice.get(f"/sessions/{story.id}/back").json()
    assert preview["target_id"] == "f1"
    assert {c["field"] for c in preview["preview"]["changes"]} >= {"buff", "permission_mode"}
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/back", {"expected_leaf_id": "a1"})
    assert got.status_code == 200, got.content
    [back] = entries_after(story, seq)
    assert back["type"] == "branch" and back["parent_id"] == "f1" and back["from_id"] == "a1"
    assert got.json() == {"leaf_id": back["id"], "app_state": SICK}
    # back again: the rewind just made left a1
    assert as_alice.get(f"/sessions/{story.id}/back").json()["target_id"] == "a1"
    again = as_alice.post(f"/sessions/{story.id}/back", {})
    [second] = entries_after(story, seq + 1)
    assert second["parent_id"] == "a1" and second["from_id"] == back["id"]
    assert again.json()["app_state"] == STRONG


def test_back_after_story_only_goes_to_the_leaf_left(as_alice, story):
    as_alice.post(f"/sessions/{story.id}/navigate", {"entry_id": "f1", "keep_characters": True})
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/back", {})
    assert got.status_code == 200
    [back] = entries_after(story, seq)
    assert back["parent_id"] == "a1"  # the leaf the story-only rewind left
    assert got.json()["app_state"] == STRONG


def test_back_with_no_rewind_on_the_path_or_a_stale_leaf_is_409(as_alice, alice):
    session = session_create(owner=alice, title="flat", initial_app_state=STRONG)
    entry_append(
        session_id=session.id,
        entries=[user("u0", None), assistant("a0", "u0")],
        expected_leaf_id=None,
    )
    assert as_alice.get(f"/sessions/{session.id}/back").json() == {
        "target_id": None,
        "preview": None,
    }
    got = as_alice.post(f"/sessions/{session.id}/back", {})
    assert got.status_code == 409 and got.json()["code"] == "nothing_to_go_back_to"
    assert last_seq(session) == 2


def test_back_from_a_stale_page_is_409(as_alice, story):
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/back", {"expected_leaf_id": "u1"})
    assert got.status_code == 409 and got.json()["leaf_id"] == "a1"
    assert last_seq(story) == seq


def test_another_users_session_is_404_for_back_and_chapters(as_bob, as_staff, story):
    for api in (as_bob,):
        assert api.get(f"/sessions/{story.id}/back").status_code == 404
        assert api.get(f"/sessions/{story.id}/chapters").status_code == 404
    seq = last_seq(story)
    for api in (as_bob, as_staff):  # staff may read, never write
        assert api.post(f"/sessions/{story.id}/back", {}).status_code == 404
        got = api.post(f"/sessions/{story.id}/chapters", {"entry_id": "u0", "title": "One"})
        assert got.status_code == 404
        assert api.delete(f"/sessions/{story.id}/chapters/u0").status_code == 404
    assert last_seq(story) == seq
    assert as_staff.get(f"/sessions/{story.id}/chapters").status_code == 200


# --- chapters ----------------------------------------------------------------------------


def test_chapters_are_app_state_entries_numbered_along_the_branch(as_alice, story):
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u1", "title": " Two "})
    assert got.status_code == 200, got.content
    got = as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u0", "title": "One"})
    body = got.json()
    assert body["chapters"] == [
        {"number": 1, "entry_id": "u0", "title": "One"},
        {"number": 2, "entry_id": "u1", "title": "Two"},
    ]
    first, second = entries_after(story, seq)
    assert first["type"] == second["type"] == "app_state"
    assert second["parent_id"] == first["id"] and body["leaf_id"] == second["id"]
    assert second["value"]["characters"] == STRONG["characters"]  # the rest is kept
    assert as_alice.get(f"/sessions/{story.id}/chapters").json() == body
    # an older node's branch has only the chapters of its own state
    assert as_alice.get(f"/sessions/{story.id}/chapters", leaf_id="a1").json()["chapters"] == []
    # ended: the chapter after it becomes chapter 1
    got = as_alice.delete(f"/sessions/{story.id}/chapters/u0")
    assert got.json()["chapters"] == [{"number": 1, "entry_id": "u1", "title": "Two"}]
    assert as_alice.delete(f"/sessions/{story.id}/chapters/u0").status_code == 404


def test_a_rewind_rolls_chapters_back_and_back_brings_them_again(as_alice, story):
    as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u1", "title": "Two"})
    # the preview says so, for either choice
    preview = as_alice.get(f"/sessions/{story.id}/entries/a1/rewind-preview").json()
    lost = {"character": None, "field": "chapters", "before": "Two", "after": None}
    assert lost in preview["changes"] and lost in preview["story_only_changes"]
    as_alice.post(f"/sessions/{story.id}/navigate", {"entry_id": "a1"})
    assert as_alice.get(f"/sessions/{story.id}/chapters").json()["chapters"] == []
    as_alice.post(f"/sessions/{story.id}/back", {})
    chapters = as_alice.get(f"/sessions/{story.id}/chapters").json()["chapters"]
    assert [c["title"] for c in chapters] == ["Two"]


@pytest.mark.parametrize(
    "title",
    ["", "   ", "x" * 121, "nul\x00here", "lone \udc00", None, 5, ["a"]],
    ids=["empty", "blank", "too-long", "nul", "surrogate", "null", "number", "list"],
)
def test_a_bad_title_is_422_and_nothing_is_written(as_alice, story, title):
    seq = last_seq(story)
    got = as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u1", "title": title})
    assert got.status_code == 422, got.content
    assert got.json()["field"] == "title"
    assert last_seq(story) == seq


def test_a_lone_surrogate_sent_as_an_escape_is_422(as_alice, story):
    seq = last_seq(story)
    got = as_alice.client.post(
        f"/api/v1/sessions/{story.id}/chapters",
        data='{"entry_id": "u1", "title": "bad \\udfff"}',
        content_type="application/json",
    )
    assert got.status_code == 422 and last_seq(story) == seq


def test_a_node_unknown_or_off_the_branch_or_a_stale_leaf_writes_nothing(as_alice, story):
    seq = last_seq(story)
    url = f"/sessions/{story.id}/chapters"
    assert as_alice.post(url, {"entry_id": "nope", "title": "t"}).status_code == 404
    assert as_alice.post(url, {"entry_id": "f1", "title": "t"}).status_code == 422  # left
    stale = as_alice.post(url, {"entry_id": "u1", "title": "t", "expected_leaf_id": "u1"})
    assert stale.status_code == 409 and stale.json()["leaf_id"] == "a1"
    assert last_seq(story) == seq


def test_a_title_with_markup_is_kept_as_text_and_escaped_on_the_page(
    as_alice, story, client, alice
):
    title = "<script>alert(1)</script>"
    got = as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u1", "title": title})
    assert got.json()["chapters"][0]["title"] == title
    client.force_login(alice)
    page = client.get(f"/sessions/{story.id}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert title not in page


def test_chapters_survive_an_export_and_an_import(as_alice, as_bob, alice):
    story = session_create(owner=alice, title="no panels", initial_app_state=STRONG)
    entry_append(
        session_id=story.id,
        entries=[user("u0", None), assistant("a0", "u0"), user("u1", "a0"), assistant("a1", "u1")],
        expected_leaf_id=None,
    )
    as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u1", "title": "The fight"})
    as_alice.post(f"/sessions/{story.id}/chapters", {"entry_id": "u0", "title": "The start"})
    got = as_alice.client.get(f"/api/v1/sessions/{story.id}/export")
    data = b"".join(got.streaming_content)
    made = as_bob.client.post(
        "/api/v1/sessions/import", data=data, content_type="application/jsonl"
    )
    assert made.status_code == 201, made.content
    copy = made.json()["id"]
    assert as_bob.get(f"/sessions/{copy}/chapters").json()["chapters"] == [
        {"number": 1, "entry_id": "u0", "title": "The start"},
        {"number": 2, "entry_id": "u1", "title": "The fight"},
    ]
