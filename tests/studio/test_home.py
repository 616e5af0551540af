"""The welcome page, and the About page that took the diagnostics off every page."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_it_works(client):
    r = client.get("/")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<title>jaiweb</title>" in body
    assert "Sign up" in body
    assert 'href="/about/"' in body  # linked discreetly, from the footer
    assert 'data-mode="database"' not in body  # no diagnostics on the welcome page


def test_my_sessions_shows_no_diagnostics(client, alice):
    client.force_login(alice)
    body = client.get("/").content.decode()
    assert "Channel layer" not in body and 'data-mode="database"' not in body
    assert 'href="/about/"' in body


def test_the_about_page_names_the_database(client):
    body = client.get("/about/").content.decode()
    assert f'data-mode="database">{connection.vendor}<' in body


def test_it_labels_the_offline_director(client, settings):
    settings.JAIWEB_LLM_MODEL = None
    body = client.get("/about/").content.decode()
    assert "offline director" in body


def test_it_shows_the_model(client, settings):
    settings.JAIWEB_LLM_MODEL = "some-model"
    body = client.get("/about/").content.decode()
    assert "model some-model" in body
    assert "offline director" not in body


def test_it_escapes_settings(client, settings):
    settings.JAIWEB_LLM_MODEL = "<script>x</script>"
    body = client.get("/about/").content.decode()
    assert "<script>" not in body
    assert "&lt;script&gt;x&lt;/script&gt;" in body


def test_it_names_the_channel_layer(client, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert "in-memory" in client.get("/about/").content.decode()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]},
        }
    }
    assert 'data-mode="channel-layer">Redis<' in client.get("/about/").content.decode()


def test_it_rejects_post(client):
    assert client.post("/").status_code == 405
    assert client.post("/about/").status_code == 405


def test_the_favicon_answers(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r["Content-Type"] == "image/x-icon"
    assert b"".join(r.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert 'rel="icon" href="/static/favicon.svg"' in client.get("/").content.decode()


def test_the_about_page_speaks_chinese(client, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    body = client.get("/about/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "关于这个工作室" in body and "内存（仅限本进程）" in body and "离线导演" in body
