"""GET /healthz: the database, the channel layer and the cache, each checked for real; 503
naming a failure (the cache alone never makes it 503: tests/ops/test_redis_outage.py)."""

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db

ALL_WELL = {"cache": "ok"}


def backend() -> str:
    return settings.CHANNEL_LAYERS["default"]["BACKEND"]


def test_it_works(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {
        "ok": True,
        "database": "ok",
        "channel_layer": "ok",
        "layer": backend(),
        **ALL_WELL,
    }
    assert "no-cache" in r["Cache-Control"]
    assert "no-store" in r["Cache-Control"]


def test_it_handles_head(client):
    assert client.head("/healthz").status_code == 200


def test_it_rejects_post(client):
    assert client.post("/healthz").status_code == 405


def test_it_reports_a_database_failure(client, monkeypatch):
    class BrokenConnection:
        vendor = "broken"

        def cursor(self):
            raise RuntimeError("database is gone")

    monkeypatch.setattr("jaiweb.ops.views.connection", BrokenConnection())
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {
        "ok": False,
        "database": "error",
        "channel_layer": "ok",
        "layer": backend(),
        **ALL_WELL,
    }


def test_it_reports_a_broken_channel_layer(client, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "tests.ops.layers.BrokenLayer"}}
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {
        "ok": False,
        "database": "ok",
        "channel_layer": "error",
        "layer": "tests.ops.layers.BrokenLayer",
        **ALL_WELL,
    }


def test_a_layer_that_never_answers_times_out(client, settings, monkeypatch):
    monkeypatch.setattr("jaiweb.ops.views.LAYER_TIMEOUT", 0.2)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "tests.ops.layers.SilentLayer"}}
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json()["channel_layer"] == "error"


def test_a_missing_layer_is_an_error(client, settings):
    settings.CHANNEL_LAYERS = {}
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json()["channel_layer"] == "error"
    assert r.json()["layer"] == "none"


REDIS = "channels_redis.pubsub.RedisPubSubChannelLayer"


def test_a_real_redis_round_trip(client, settings):
    """Both passes: the suite's machine always has Redis on 127.0.0.1:6379."""
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": REDIS, "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]}}
    }
    for _ in range(2):  # a second request (another event loop) works too
        r = client.get("/healthz")
        assert r.status_code == 200, r.json()
        assert r.json()["layer"] == REDIS


def test_redis_that_is_not_there(client, settings):
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": REDIS, "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}
    }
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {
        "ok": False,
        "database": "ok",
        "channel_layer": "error",
        "layer": REDIS,
        **ALL_WELL,
    }
