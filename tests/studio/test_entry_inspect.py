"""GET /sessions/<id>/entries/<entry_id>/: the inspector of one node."""

from __future__ import annotations

import pytest

from jaiweb.commands.branches import session_label_add
from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.demo import article_session_create
from jaiweb.store.models import Entry
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


def test_it_shows_text_arguments_and_the_state_at_that_point(client, alice, episode):
    prompt_submit(session=episode, user=alice, text='/draw a "><img src=x onerror=alert(1)>')
    run_pending()
    assistant = next(
        e
        for e in Entry.objects.filter(session=episode).order_by("seq")
        if e.payload.get("message", {}).get("role") == "assistant"
    )
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/entries/{assistant.entry_id}/").content.decode()
    assert 'id="inspector"' in body and "generate_image" in body
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "猪猪侠" in body  # the state at that point
    assert 'data-action="continue-here"' in body and "disabled" not in body


def test_the_state_is_the_one_at_that_node(client, alice):
    session = article_session_create(owner=alice)
    first = Entry.objects.filter(session=session, type="app_state").order_by("seq").first()
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/entries/{first.entry_id}/").content.decode()
    # the article's first state: 猪猪侠 with the lollipop; the later laxative is not there yet
    assert "超级棒棒糖" in body and "拉肚子" not in body


def test_unknown_nodes_and_other_peoples_sessions_are_404(client, alice, bob, episode):
    client.force_login(alice)
    assert client.get(f"/sessions/{episode.id}/entries/e_nope/").status_code == 404
    prompt_submit(session=episode, user=alice, text="hello")
    entry = Entry.objects.filter(session=episode).first()
    client.force_login(bob)
    assert client.get(f"/sessions/{episode.id}/entries/{entry.entry_id}/").status_code == 404


def test_the_nodes_labels_come_with_the_inspector_not_after_it(client, alice):
    """Drawn with the rest: a part fetched once the inspector is on screen would push the
    buttons under it down while the pointer is on its way to one."""
    session = article_session_create(owner=alice)
    node = Entry.objects.filter(session=session, type="app_state").order_by("seq").first()
    session_label_add(session=session, entry_id=node.entry_id, text="<b>最好</b>", kind="bookmark")
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/entries/{node.entry_id}/").content.decode()
    assert 'data-label="&lt;b&gt;最好&lt;/b&gt;" data-label-kind="bookmark"' in body
    assert 'class="label-add"' in body  # the owner's form to add one
    assert 'hx-trigger="load"' not in body
