"""GET /healthz: the database and the channel layer, each checked for real; 503 naming a failure."""

import pytest
from django.conf import settings

from tests.support.image_servers import a1111 as a1111  # the fixture
from tests.support.image_servers import free_port_url

pytestmark = pytest.mark.django_db


LOCAL_IMAGES = {"image_backend": "local", "image": "ok"}  # the default: nothing to ask


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
        **LOCAL_IMAGES,
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
        **LOCAL_IMAGES,
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
        **LOCAL_IMAGES,
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
        **LOCAL_IMAGES,
    }


def test_it_says_which_image_backend_answers(client, settings, a1111):
    """Issue 28: the answer names the configured image backend and whether it answers."""
    settings.JAIWEB_IMAGE_BACKEND = "a1111"
    settings.JAIWEB_A1111_URL = a1111.url
    r = client.get("/healthz")
    assert r.status_code == 200
    assert (r.json()["image_backend"], r.json()["image"]) == ("a1111", "ok")
    assert "image_error" not in r.json()
    assert a1111.requests[-1].path.startswith("/sdapi/v1/progress")
    assert a1111.renders() == []  # asking never draws


def test_an_image_backend_that_does_not_answer_is_named_but_is_no_503(client, settings):
    """A web process serves without its image backend: the answer says what is wrong, and the
    load balancer keeps the process."""
    settings.JAIWEB_IMAGE_BACKEND = "openai"
    settings.JAIWEB_IMAGE_BASE_URL = free_port_url() + "/v1"
    settings.JAIWEB_IMAGE_API_KEY = "sk-secret-image-key"
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json()["ok"] is True
    assert (r.json()["image_backend"], r.json()["image"]) == ("openai", "error")
    assert r.json()["image_error"].startswith("unreachable: ")
    assert "sk-secret-image-key" not in r.content.decode()
