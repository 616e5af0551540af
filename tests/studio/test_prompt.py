"""POST /sessions/<id>/prompts: a prompt from the page."""

from __future__ import annotations

import pytest
from django.test import Client

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.models import Entry, Operation
from tests.support.builders import park_operation
from tests.support.clocks import pin_the_minute

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def test_an_idle_session_starts_a_run_and_the_regions_come_back(client, alice, episode):
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "<b>hi</b>"}, **HX)
    assert r.status_code == 202
    body = r.content.decode()
    assert 'id="controls"' in body and 'data-state="running"' in body
    assert "&lt;b&gt;hi&lt;/b&gt;" in body and "<b>hi</b>" not in body
    assert Operation.objects.filter(session=episode, outcome__isnull=True).count() == 1


def test_a_prompt_during_a_run_is_queued(client, alice, episode):
    prompt_submit(session=episode, user=alice, text="first")
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "and then"}, **HX)
    assert r.status_code == 202
    assert "data-queued" in r.content.decode() and "and then" in r.content.decode()


def test_parked_is_409_waiting_for_an_admin_and_nothing_changes(client, alice, episode):
    park_operation(prompt_submit(session=episode, user=alice, text="first").operation_id)
    before = Entry.objects.filter(session=episode).count()
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "more"}, **HX)
    assert r.status_code == 409 and "waiting for an admin" in r.content.decode()
    assert Entry.objects.filter(session=episode).count() == before


def test_too_long_is_422_and_empty_is_422(client, alice, episode, settings):
    settings.JAIWEB_MAX_PROMPT_CHARS = 10
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "x" * 11}, **HX)
    assert r.status_code == 422 and "at most 10" in r.content.decode()
    assert client.post(f"/sessions/{episode.id}/prompts", {"text": "  "}, **HX).status_code == 422
    assert not Entry.objects.filter(session=episode).exists()


def test_the_rate_limit_is_429_with_retry_after(client, alice, episode, settings, monkeypatch):
    from django.core.cache import cache

    cache.clear()
    minute = pin_the_minute(monkeypatch, into=15)  # the three prompts fall in one minute
    settings.JAIWEB_PROMPTS_PER_MINUTE = 2
    client.force_login(alice)
    codes = [
        client.post(f"/sessions/{episode.id}/prompts", {"text": f"p{i}"}, **HX).status_code
        for i in range(3)
    ]
    assert codes == [202, 202, 429]
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "again"}, **HX)
    assert r.status_code == 429 and r["Retry-After"] == "45"
    minute.advance(45)  # the next minute
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "later"}, **HX)
    assert r.status_code == 202
    cache.clear()


def test_without_htmx_it_redirects_back_to_the_page(client, alice, episode):
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/prompts", {"text": "plain form"})
    assert r.status_code == 302 and r["Location"] == f"/sessions/{episode.id}/"


def test_csrf_is_required(alice, episode):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(f"/sessions/{episode.id}/prompts", {"text": "x"}).status_code == 403


def test_others_get_404_and_nothing_is_written(client, bob, episode):
    client.force_login(bob)
    assert client.post(f"/sessions/{episode.id}/prompts", {"text": "x"}, **HX).status_code == 404
    assert not Entry.objects.filter(session=episode).exists()


def test_a_page_behind_another_tab_gets_moved_on_and_nothing_is_written(client, alice, episode):
    """The form carries the leaf the page shows; an idle session that moved on refuses."""
    from jaiweb.store.services import rewind_append
    from tests.support.runs import run_pending

    prompt_submit(session=episode, user=alice, text="/say 第一格")
    run_pending()
    episode.refresh_from_db()
    client.force_login(alice)
    page = client.get(f"/sessions/{episode.id}/").content.decode()
    assert f'id="prompt-leaf" name="expected_leaf_id" value="{episode.leaf_id}"' in page
    seen = episode.leaf_id
    root = Entry.objects.filter(session=episode).order_by("seq").first()
    rewind_append(session_id=episode.id, target_id=root.entry_id)  # another tab rewinds
    before = Entry.objects.filter(session=episode).count()
    r = client.post(
        f"/sessions/{episode.id}/prompts", {"text": "接着画", "expected_leaf_id": seen}, **HX
    )
    assert r.status_code == 409
    assert "moved on in another tab" in r.content.decode()
    assert Entry.objects.filter(session=episode).count() == before
    assert not Operation.objects.filter(session=episode, outcome__isnull=True).exists()
