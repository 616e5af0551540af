"""GET /healthz: the database, the channel layer, the cache and the disks, each checked for
real; 503 naming a failure (the cache alone never makes it 503: tests/ops/test_redis_outage.py)."""

import json
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from jaiweb.accounts.services import api_token_create
from jaiweb.store import space
from jaiweb.store.models import Operation
from jaiweb.store.services import session_create
from tests.support.clocks import FakeClock
from tests.support.image_servers import a1111 as a1111  # the fixture
from tests.support.image_servers import free_port_url

pytestmark = pytest.mark.django_db

LOCAL_IMAGES = {"image_backend": "local", "image": "ok"}  # the default: nothing to ask
# what this process runs on (issue 29: the diagnostics left the pages for here and /about/)
RUNS_ON = {"database_vendor": connection.vendor, "director": "offline"}
ALL_WELL = {"cache": "ok", "disk": "ok", "disk_full": [], **LOCAL_IMAGES, **RUNS_ON}


@pytest.fixture(autouse=True)
def _no_failed_write_yet(monkeypatch):
    """No write of this process has failed for lack of space (the note is per process)."""
    monkeypatch.setattr(space, "_failed_at", None)


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
        "database_vendor": "broken",
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


# --- the disk (issue 27.3: ok: true while every write answered 503) ----------------------

MB = 1024 * 1024


def _written(tmp_path) -> dict[str, Path]:
    """Where this process writes: the media folder, and the SQLite database's folder."""
    places = {"media": tmp_path / "media"}  # not made yet: its parent's filesystem counts
    if connection.vendor == "sqlite":
        places["database"] = Path(connection.settings_dict["NAME"]).parent
    return places


def test_a_filesystem_with_less_free_space_than_the_floor_is_full(client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    places = _written(tmp_path)
    most = max(shutil.disk_usage(p if p.exists() else tmp_path).free for p in places.values())
    settings.JAIWEB_DISK_MIN_FREE_MB = most // MB + 1024  # more than any of them has
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {
        "ok": False,
        "database": "ok",
        "channel_layer": "ok",
        "layer": backend(),
        "cache": "ok",
        "disk": "full",
        "disk_full": list(places),  # media, then the SQLite database
        **LOCAL_IMAGES,
        **RUNS_ON,
    }
    settings.JAIWEB_DISK_MIN_FREE_MB = 1  # less than either has
    assert client.get("/healthz").json() == {**r.json(), "ok": True, **ALL_WELL}
    settings.JAIWEB_DISK_MIN_FREE_MB = 0  # no floor at all
    assert client.get("/healthz").status_code == 200


@contextmanager
def database_refuses_to_grow():
    """The test database answers as on a full disk. SQLite: it may not grow past the pages
    it has (SQLITE_FULL, "database or disk is full"). PostgreSQL: an insert of an entry
    raises disk_full (SQLSTATE 53100), the error its storage gives when a file cannot grow."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA page_count")
            cursor.execute(f"PRAGMA max_page_count = {cursor.fetchone()[0]}")
            try:
                yield
            finally:
                cursor.execute("PRAGMA max_page_count = 4294967294")
            return
        cursor.execute(
            "CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'could not extend file: No space left on device' "
            "USING ERRCODE = 'disk_full'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER test_disk_full BEFORE INSERT ON store_entry "
            "FOR EACH ROW EXECUTE FUNCTION test_disk_full()"
        )
        try:
            yield
        finally:
            cursor.execute("DROP TRIGGER test_disk_full ON store_entry")
            cursor.execute("DROP FUNCTION test_disk_full()")


def big_prompt() -> str:
    """A prompt larger than the free pages of the SQLite file, so that it needs new ones."""
    with connection.cursor() as cursor:
        if connection.vendor != "sqlite":
            return "a prompt"
        cursor.execute("PRAGMA freelist_count")
        free = cursor.fetchone()[0]
        cursor.execute("PRAGMA page_size")
        return "x" * ((free + 4) * cursor.fetchone()[0])


def test_a_write_that_failed_for_lack_of_space_makes_the_disk_full_for_a_minute(
    client, settings, alice, monkeypatch
):
    fake = FakeClock()
    monkeypatch.setattr(space, "clock", fake.monotonic)
    settings.JAIWEB_DISK_MIN_FREE_MB = 0  # only the failed writes count here
    settings.JAIWEB_MAX_PROMPT_CHARS = 10**6
    session = session_create(owner=alice, title="full")
    api = Client(headers={"Authorization": f"Bearer {api_token_create(user=alice, name='t')[1]}"})
    client.force_login(alice)
    text = big_prompt()

    with database_refuses_to_grow():
        refused = api.post(
            f"/api/v1/sessions/{session.id}/prompts", json.dumps({"text": text}), "application/json"
        )
        page = client.post(
            f"/sessions/{session.id}/prompts", {"text": text}, HTTP_HX_REQUEST="true"
        )
    assert refused.status_code == 503
    assert refused.json() == {
        "detail": "the server is out of disk space; try again later",
        "code": "out_of_space",
    }
    assert page.status_code == 503 and "out of disk space" in page.content.decode()
    assert not Operation.objects.filter(session=session).exists()  # nothing written

    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {
        "ok": False,
        "database": "ok",
        "channel_layer": "ok",
        "layer": backend(),
        "cache": "ok",
        "disk": "full",
        "disk_full": ["writes"],
        **LOCAL_IMAGES,
        **RUNS_ON,
    }
    fake.advance(space.RECENT_SECONDS - 1)
    assert client.get("/healthz").status_code == 503
    fake.advance(1)  # a minute with no failed write: the disk is no longer reported full
    assert client.get("/healthz").json() == {**r.json(), "ok": True, **ALL_WELL}
    assert (
        api.post(
            f"/api/v1/sessions/{session.id}/prompts",
            json.dumps({"text": "now"}),
            "application/json",
        ).status_code
        == 202
    )


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
