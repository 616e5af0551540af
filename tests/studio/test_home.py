from django.db import connection


def test_it_works(client):
    r = client.get("/")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<title>jaiweb</title>" in body
    assert "Sign up" in body
    assert f'data-mode="database">{connection.vendor}<' in body


def test_it_labels_the_offline_director(client, settings):
    settings.JAIWEB_LLM_MODEL = None
    body = client.get("/").content.decode()
    assert "offline director" in body


def test_it_shows_the_model(client, settings):
    settings.JAIWEB_LLM_MODEL = "some-model"
    body = client.get("/").content.decode()
    assert "model some-model" in body
    assert "offline director" not in body


def test_it_escapes_settings(client, settings):
    settings.JAIWEB_LLM_MODEL = "<script>x</script>"
    body = client.get("/").content.decode()
    assert "<script>" not in body
    assert "&lt;script&gt;x&lt;/script&gt;" in body


def test_it_names_the_channel_layer(client, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert "in-memory" in client.get("/").content.decode()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]},
        }
    }
    assert 'data-mode="channel-layer">Redis<' in client.get("/").content.decode()


def test_it_rejects_post(client):
    assert client.post("/").status_code == 405
