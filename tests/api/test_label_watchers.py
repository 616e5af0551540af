"""A label written through the API reaches the session's open pages, as the studio's does."""

from __future__ import annotations

import pytest

from jaiweb.commands import sessions as commands
from jaiweb.live.push import group_name
from jaiweb.store.demo import article_session_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(alice):
    return article_session_create(owner=alice)


@pytest.fixture
def sent(monkeypatch):
    """What the commands announce to watchers' groups, in order."""
    sends: list[tuple[str, dict]] = []
    monkeypatch.setattr(commands, "group_send_nowait", lambda g, m: sends.append((g, m)))
    return sends


def test_adding_and_removing_a_label_tell_the_watchers_after_the_commit(
    as_alice, article, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as pending:
        got = as_alice.post(f"/sessions/{article.id}/labels", {"entry_id": "e4", "text": "彩蛋"})
    assert got.status_code == 201
    assert sent == []  # nothing before the commit
    for callback in pending:
        callback()
    [(group, message)] = sent
    assert group == group_name(article.id)
    assert message["type"] == "session.event" and message["change"]
    with django_capture_on_commit_callbacks(execute=True):
        gone = as_alice.delete(f"/sessions/{article.id}/labels/{got.json()['id']}")
    assert gone.status_code == 204
    assert [g for g, _ in sent] == [group_name(article.id)] * 2


def test_a_refused_label_tells_no_one(as_alice, article, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        unknown = as_alice.post(f"/sessions/{article.id}/labels", {"entry_id": "nope", "text": "x"})
        missing = as_alice.delete(f"/sessions/{article.id}/labels/999")
    assert (unknown.status_code, missing.status_code) == (404, 404)
    assert sent == []
