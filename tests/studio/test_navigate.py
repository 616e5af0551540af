"""POST /sessions/<id>/rewind: "continue from here" (a branch entry; nothing deleted)."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.demo import article_session_create
from jaiweb.store.models import ComicSession, Entry
from tests.support.builders import park_operation

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def article(alice):
    return article_session_create(owner=alice)


def test_continue_here_appends_a_branch_and_redraws_the_regions(client, alice, article):
    first_state = Entry.objects.filter(session=article, type="app_state").order_by("seq")[0]
    count = article.entry_count
    client.force_login(alice)
    r = client.post(
        f"/sessions/{article.id}/rewind",
        {"entry_id": first_state.entry_id, "expected_leaf_id": article.leaf_id},
        **HX,
    )
    assert r.status_code == 200
    body = r.content.decode()
    assert 'id="tree"' in body and 'id="character-state"' in body and 'id="inspector"' in body
    assert 'value="超级棒棒糖(功夫大师)"' in body
    article.refresh_from_db()
    assert article.entry_count == count + 1
    assert Entry.objects.get(session=article, entry_id=article.leaf_id).type == "branch"


def test_a_stale_leaf_is_409(client, alice, article):
    entry = Entry.objects.filter(session=article).order_by("seq")[0]
    client.force_login(alice)
    r = client.post(
        f"/sessions/{article.id}/rewind",
        {"entry_id": entry.entry_id, "expected_leaf_id": "e_old"},
        **HX,
    )
    body = r.content.decode()
    assert r.status_code == 409 and "another tab" in body
    assert 'id="tree"' in body and f'data-leaf-id="{article.leaf_id}"' in body  # caught up
    assert ComicSession.objects.get(pk=article.id).entry_count == article.entry_count


def test_an_unknown_node_is_404(client, alice, article):
    client.force_login(alice)
    assert client.post(f"/sessions/{article.id}/rewind", {"entry_id": "nope"}).status_code == 404


def test_running_and_parked_sessions_refuse(client, alice, episode):
    op = prompt_submit(session=episode, user=alice, text="hi").operation_id
    entry = Entry.objects.filter(session=episode).first().entry_id
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/rewind", {"entry_id": entry}, **HX)
    assert r.status_code == 409
    park_operation(op)
    r = client.post(f"/sessions/{episode.id}/rewind", {"entry_id": entry}, **HX)
    assert r.status_code == 409 and "waiting for an admin" in r.content.decode()


def test_others_get_404(client, bob, article):
    client.force_login(bob)
    entry = Entry.objects.filter(session=article).first().entry_id
    assert client.post(f"/sessions/{article.id}/rewind", {"entry_id": entry}).status_code == 404
