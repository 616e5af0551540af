"""Redis stops under a web process: prompts are still accepted, counted in the process, the
share page answers and /healthz says the cache is down (issue 27.2).

The Redis is the test's own (tests/support/own_redis.py), never the machine's: the cache
and the channel layer point at it, as REDIS_URL makes them on a cluster, then it stops.
"""

from __future__ import annotations

import json
import logging

import pytest
import redis
from django.test import Client
from django.urls import reverse

from jaiweb.accounts.services import api_token_create
from jaiweb.commands import limits
from jaiweb.settings import redis_caches
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from jaiweb.store.shares import share_link_create
from tests.support.clocks import pin_the_minute

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
PUBSUB = "channels_redis.pubsub.RedisPubSubChannelLayer"


@pytest.fixture
def on_own_redis(own_redis, settings, monkeypatch, tmp_path):
    """The cache and the channel layer on the test's own Redis; the limits' clock pinned."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CACHES = redis_caches(own_redis.url())
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": PUBSUB, "CONFIG": {"hosts": [own_redis.url()]}}
    }
    monkeypatch.setattr(limits, "_cache_failed_at", None)
    monkeypatch.setattr(limits, "_local", limits._LocalCounts())
    return own_redis


def counted_in_redis(own_redis, prefix: str) -> dict[str, int]:
    with redis.Redis.from_url(own_redis.url()) as r:
        return {k.decode(): int(r.get(k)) for k in r.scan_iter(f"*{prefix}*")}


def test_with_redis_stopped_prompts_are_accepted_and_the_share_page_answers(
    on_own_redis, settings, alice, monkeypatch, caplog
):
    minute = pin_the_minute(monkeypatch, into=10)
    settings.JAIWEB_PROMPTS_PER_MINUTE = 3
    settings.JAIWEB_SHARE_VIEWS_PER_MINUTE = 2
    session = session_create(owner=alice, title="outage")
    page = Client()
    page.force_login(alice)
    api = Client(headers={"Authorization": f"Bearer {api_token_create(user=alice, name='t')[1]}"})
    prompts = f"/sessions/{session.id}/prompts"

    # Redis up: the prompt is counted there, and the share page answers.
    assert page.post(prompts, {"text": "before"}, **HX).status_code == 202
    assert list(counted_in_redis(on_own_redis, "jaiweb:prompts:").values()) == [1]
    _, token = share_link_create(session_id=session.id)
    shared = reverse("shared-branch", args=[token])
    assert Client().get(shared).status_code == 200

    on_own_redis.stop()
    assert not on_own_redis.answers()

    # Redis down: counted in this process, which starts the minute at 0.
    with caplog.at_level(logging.WARNING, logger="jaiweb.commands.limits"):
        accepted = [
            page.post(prompts, {"text": "during 1"}, **HX),
            api.post(f"/api/v1{prompts}", json.dumps({"text": "during 2"}), "application/json"),
            page.post(prompts, {"text": "during 3"}, **HX),
        ]
        refused = api.post(f"/api/v1{prompts}", json.dumps({"text": "4"}), "application/json")
        views = [Client().get(shared) for _ in range(3)]
    assert [r.status_code for r in accepted] == [202, 202, 202]
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert refused["Retry-After"] == "50"  # the pinned clock is 10 s into its minute
    assert [r.status_code for r in views] == [200, 200, 429]
    assert "outage" in views[0].content.decode()
    # Every accepted prompt is in the journal: the run, and three inputs queued on it.
    op = Operation.objects.get(session=session)
    kinds = [r.type for r in operation_records(operation_id=op.id)]
    assert kinds.count("operation_accepted") == 1 and kinds.count("input_queued") == 3
    # One warning for the outage, not one per request.
    said = [r.getMessage() for r in caplog.records if r.name == "jaiweb.commands.limits"]
    assert len(said) == 1 and "counting per process" in said[0]

    # A new minute: the process's counts start again.
    minute.advance(60)
    assert page.post(prompts, {"text": "next minute"}, **HX).status_code == 202


def test_healthz_says_the_cache_and_the_channel_layer_are_down(on_own_redis, client):
    up = client.get("/healthz")
    assert up.status_code == 200, up.json()
    assert up.json()["cache"] == "ok" and up.json()["channel_layer"] == "ok"

    on_own_redis.stop()
    down = client.get("/healthz")
    assert down.status_code == 503
    body = down.json()
    assert (body["ok"], body["database"], body["channel_layer"], body["cache"]) == (
        False,
        "ok",
        "error",
        "error",
    )


def test_the_cache_alone_down_leaves_healthz_ok(on_own_redis, client, settings):
    """The process still serves without the cache (its limits count locally): 200, saying so."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "jaiweb.live.layers.InMemoryChannelLayer"}}
    on_own_redis.stop()
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json()["ok"] is True and r.json()["cache"] == "error"
