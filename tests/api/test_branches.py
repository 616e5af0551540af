"""/sessions/{id}/compare, …/rewind-preview, …/state and the hand edits of the state."""

from __future__ import annotations

import pytest

from jaiweb.store.demo import KUNG_FU_STATE, LAXATIVE_STATE, article_session_create
from jaiweb.store.models import Entry

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(alice):
    """The article's session: e2's lollipop panel, the laxative e3-e4, a rewind to e2 (e5), e6."""
    return article_session_create(owner=alice)


def buff(state):
    return state["characters"]["猪猪侠"]["buff"]


def test_the_lollipop_and_the_laxative_branches_side_by_side(as_alice, article):
    got = as_alice.get(f"/sessions/{article.id}/compare", left="e4", right="e6")
    assert got.status_code == 200, got.content
    body = got.json()
    assert body["fork_id"] == "e2"
    assert [e["id"] for e in body["left"]["entries"]] == ["e3", "e4"]
    assert [e["id"] for e in body["right"]["entries"]] == ["e5", "e6"]
    assert [e["seq"] for e in body["left"]["entries"]] == [4, 5]
    assert buff(body["left"]["app_state"]) == buff(LAXATIVE_STATE)
    assert buff(body["right"]["app_state"]) == buff(KUNG_FU_STATE)
    [change, *_] = [c for c in body["changes"] if c["field"] == "buff"]
    assert change == {
        "character": "猪猪侠",
        "field": "buff",
        "before": buff(LAXATIVE_STATE),
        "after": buff(KUNG_FU_STATE),
    }


def test_a_comparison_sends_the_first_entries_of_each_side_and_counts_them_all(as_alice, article):
    got = as_alice.get(f"/sessions/{article.id}/compare", left="e4", right="e6", limit=1)
    assert got.status_code == 200, got.content
    body = got.json()
    assert [e["id"] for e in body["left"]["entries"]] == ["e3"]
    assert [e["id"] for e in body["right"]["entries"]] == ["e5"]
    assert body["left"]["entry_count"] == body["right"]["entry_count"] == 2
    # the state and what differs are the whole branches', whatever the limit
    assert buff(body["right"]["app_state"]) == buff(KUNG_FU_STATE)
    assert any(c["field"] == "buff" for c in body["changes"])


@pytest.mark.parametrize("limit", ["-1", "1001", "x"])
def test_a_comparison_limit_out_of_range_is_a_422(as_alice, article, limit):
    got = as_alice.get(f"/sessions/{article.id}/compare", left="e4", right="e6", limit=limit)
    assert got.status_code == 422


def test_a_rewind_preview_names_what_rolls_back(as_alice, article):
    got = as_alice.get(f"/sessions/{article.id}/entries/e4/rewind-preview").json()
    assert got["target_id"] == "e4" and got["left_behind"] == 2  # e5, e6
    assert next((c["field"], c["before"], c["after"]) for c in got["changes"]) == (
        "buff",
        buff(KUNG_FU_STATE),
        buff(LAXATIVE_STATE),
    )
    assert got["stays"] == {"credits": 0, "panels": 0, "posts": 0}


def test_the_state_at_any_node(as_alice, article):
    at = lambda node: as_alice.get(f"/sessions/{article.id}/state", at=node).json()  # noqa: E731
    assert at("e0")["app_state"] == article.initial_app_state
    assert buff(at("e4")["app_state"]) == buff(LAXATIVE_STATE)
    assert at("e6")["app_state"] == at("e2")["app_state"]
    leaf = as_alice.get(f"/sessions/{article.id}/state").json()
    assert leaf["entry_id"] == "e6"


@pytest.mark.parametrize(
    "path",
    ["compare?left=e4&right=zz", "entries/zz/rewind-preview", "state?at=zz"],
)
def test_an_unknown_node_is_a_404(as_alice, article, path):
    got = as_alice.get(f"/sessions/{article.id}/{path}")
    assert got.status_code == 404 and got.json()["code"] == "not_found"


def test_a_character_edited_by_hand_is_an_app_state_entry_at_the_leaf(as_alice, article):
    entries = Entry.objects.filter(session=article).count()
    got = as_alice.post(
        f"/sessions/{article.id}/characters",
        {"name": "猪猪侠", "mood": "开心", "expected_leaf_id": "e6"},
    )
    assert got.status_code == 200, got.content
    body = got.json()
    assert body["app_state"]["characters"]["猪猪侠"]["mood"] == "开心"
    assert body["leaf_id"] != "e6"
    assert Entry.objects.filter(session=article).count() == entries + 1
    stale = as_alice.post(
        f"/sessions/{article.id}/characters",
        {"name": "猪猪侠", "mood": "难过", "expected_leaf_id": "e6"},
    )
    assert stale.status_code == 409 and stale.json()["leaf_id"] == body["leaf_id"]
    assert Entry.objects.filter(session=article).count() == entries + 1


def test_the_characters_limits_are_the_tools(as_alice, article):
    got = as_alice.post(f"/sessions/{article.id}/characters", {"name": "猪" * 41})
    assert got.status_code == 422 and got.json()["field"] == "name"
    got = as_alice.post(f"/sessions/{article.id}/characters", {"name": "猪猪侠", "mood": "x" * 41})
    assert got.status_code == 422 and got.json()["field"] == "mood"


def test_a_character_named_only_whitespace_is_422_naming_the_field(as_alice, article):
    """Issue 27.8: "\u000b" kept to the document (which allowed it) and was refused anyway,
    by the tool, as a "character" no request has; the document now says not blank."""
    entries = Entry.objects.filter(session=article).count()
    got = as_alice.post(f"/sessions/{article.id}/characters", {"name": "\u000b"})
    assert (got.status_code, got.json()) == (
        422,
        {
            "detail": "name: must not be empty or only whitespace",
            "code": "invalid",
            "field": "name",
            "errors": [{"field": "name", "message": "must not be empty or only whitespace"}],
        },
    )
    assert Entry.objects.filter(session=article).count() == entries


def test_the_permission_mode_set_and_rewound(as_alice, article):
    got = as_alice.post(f"/sessions/{article.id}/permission-mode", {"mode": "auto"}).json()
    assert got["app_state"]["permission_mode"] == "auto"
    as_alice.post(f"/sessions/{article.id}/navigate", {"entry_id": "e6"})
    back = as_alice.get(f"/sessions/{article.id}/state").json()
    assert back["app_state"]["permission_mode"] == KUNG_FU_STATE.get("permission_mode", "ask")
    bad = as_alice.post(f"/sessions/{article.id}/permission-mode", {"mode": "sometimes"})
    assert bad.status_code == 422
