import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from jaiweb.settings import env_bool, env_choice, env_int, parse_database_url
from tests.support.children import clean_env, settings_child, settings_of

BASE_DIR = Path(__file__).resolve().parent.parent
# A production-grade key and feed secret (never used anywhere but these tests).
PROD_KEY = "tEsT-oNlY-kEy-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEF"
PROD_FEED = "test-only-feed-secret-0123456789abcdef"
PROD = {"DEBUG": "0", "SECRET_KEY": PROD_KEY, "JAIWEB_FEED_SECRET": PROD_FEED}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("JAIWEB_LEASE_SECONDS", "abc"),
        ("JAIWEB_LEASE_SECONDS", "0"),
        ("JAIWEB_CONTEXT_BUDGET", "999"),
        ("JAIWEB_MAX_PROMPT_CHARS", "-1"),
        ("JAIWEB_DB_POOL", "-1"),
        ("JAIWEB_DB_POOL", "many"),
        ("DEBUG", "maybe"),
        ("DATABASE_URL", "mysql://x"),
        ("DATABASE_URL", "sqlite://"),
        ("DATABASE_URL", "sqlite:///:memory:"),
        ("DATABASE_URL", "postgres://host:notaport/db"),
        ("DATABASE_URL", "postgres://host:5432/"),
        ("REDIS_URL", "http://127.0.0.1:6379"),
        ("JAIWEB_PUBLIC_URL", "ftp://example.com"),
        ("JAIWEB_LLM_BASE_URL", "localhost:8080"),
        ("JAIWEB_FEED_URL", "example.com/feed"),
        ("JAIWEB_IMAGE_BACKEND", "dalle"),
        ("JAIWEB_IMAGE_BASE_URL", "127.0.0.1:9000/v1"),
        ("JAIWEB_IMAGE_SIZE", "1024x768"),  # not a size gpt-image-1 draws
        ("JAIWEB_IMAGE_SIZE", "huge"),
        ("JAIWEB_IMAGE_QUALITY", "ultra"),
        ("JAIWEB_IMAGE_TIMEOUT", "0"),
        ("JAIWEB_A1111_URL", "ftp://gpu-box:7860"),
        ("JAIWEB_A1111_SIZE", "500x500"),  # sides must be multiples of 8
        ("JAIWEB_A1111_SIZE", "auto"),
        ("JAIWEB_A1111_STEPS", "0"),
        ("JAIWEB_A1111_STEPS", "1000"),
        ("JAIWEB_PROMPTS_PER_MINUTE", "0"),
        ("JAIWEB_SHARE_VIEWS_PER_MINUTE", "0"),
        ("JAIWEB_HTTPS", "sometimes"),
        ("JAIWEB_TRUSTED_PROXIES", "nginx"),
        ("JAIWEB_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.300"),
        ("JAIWEB_TRUSTED_PROXIES", "10.0.0.5/8"),  # host bits set: which was meant?
        ("JAIWEB_TRUSTED_PROXIES", "127.0.0.1 10.0.0.1"),  # commas, not spaces
        ("JAIWEB_DISK_MIN_FREE_MB", "-1"),
        ("JAIWEB_RUNNER_NICE", "-1"),  # raising a priority needs privileges
        ("JAIWEB_RUNNER_NICE", "20"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(name, value):
    r = settings_child(**{name: value})
    assert r.returncode != 0
    assert "ImproperlyConfigured" in r.stderr
    assert f"{name} " in r.stderr
    assert repr(value) in r.stderr


def test_the_message_names_the_bound():
    r = settings_child(JAIWEB_LEASE_SECONDS="abc")
    assert "JAIWEB_LEASE_SECONDS must be an integer >= 1, got 'abc'" in r.stderr


def test_secret_key_is_required_without_debug():
    r = settings_child(DEBUG="0")
    assert r.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in r.stderr


@pytest.mark.parametrize("feed_url", [None, "https://feed.example/"])
def test_feed_secret_is_required_without_debug(feed_url):
    """Issue 14.1: with no secret the webhook checked signatures against the empty key, so
    anyone could publish someone's panel. Refused at start-up, the studio's own feed too."""
    env = {"DEBUG": "off", "SECRET_KEY": PROD_KEY}
    if feed_url:
        env["JAIWEB_FEED_URL"] = feed_url
    r = settings_child(**env)
    assert r.returncode != 0
    assert "ImproperlyConfigured: JAIWEB_FEED_SECRET must be set when DEBUG is off" in r.stderr


def test_a_short_feed_secret_is_refused_without_debug():
    r = settings_child(**{**PROD, "JAIWEB_FEED_SECRET": "feed"})
    assert r.returncode != 0
    assert "JAIWEB_FEED_SECRET must have at least 32 characters when DEBUG is off" in r.stderr
    assert "'feed'" not in r.stderr  # a secret is never echoed


@pytest.mark.parametrize(
    "key",
    [
        "s3cret",  # short
        "s" * 50,  # long, but one character
        "django-insecure-" + "x1y2z3" * 10,  # Django's generated development key
        "jaiweb-dev-only-secret-key-never-use-in-production",  # once written in settings.py
    ],
)
def test_a_weak_secret_key_is_refused_without_debug(key):
    r = settings_child(**{**PROD, "SECRET_KEY": key})
    assert r.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must have at least 50 characters" in r.stderr
    assert key not in r.stderr


def test_the_development_secrets_are_random_per_installation(tmp_path):
    """DEBUG on, nothing set: the key is made once per checkout (kept, mode 600) and the feed
    secret is derived from it, so neither is a constant anyone could read in the code."""
    from jaiweb.settings import derived_secret, dev_secret_key

    first, other = tmp_path / "a" / "key", tmp_path / "b" / "key"
    first.parent.mkdir()
    other.parent.mkdir()
    key = dev_secret_key(first)
    assert len(key) >= 50 and dev_secret_key(first) == key  # kept: the same on every start
    assert first.stat().st_mode & 0o777 == 0o600
    assert dev_secret_key(other) != key  # another installation, another key
    assert derived_secret(key, "feed-webhook") != derived_secret(key + "x", "feed-webhook")
    assert derived_secret(key, "feed-webhook") not in (key, "")

    s = settings_of()
    assert s["SECRET_KEY"] == (BASE_DIR / ".jaiweb-dev-secret-key").read_text().strip()
    assert s["SECRET_KEY"] != "jaiweb-dev-only-secret-key-never-use-in-production"
    assert s["JAIWEB_FEED_SECRET"] == derived_secret(s["SECRET_KEY"], "feed-webhook")
    assert s["JAIWEB_FEED_SECRET"] != "jaiweb-dev-only-feed-secret"
    assert settings_of(SECRET_KEY="mine")["JAIWEB_FEED_SECRET"] == derived_secret(
        "mine", "feed-webhook"
    )


def test_defaults():
    s = settings_of()
    assert s["DEBUG"] is True
    assert s["SECRET_KEY"]
    assert s["DATABASE"]["ENGINE"] == "jaiweb.store.sqlite"
    assert s["DATABASE"]["NAME"] == str(BASE_DIR / "db.sqlite3")
    assert s["CHANNEL_LAYERS"]["default"]["BACKEND"] == "jaiweb.live.layers.InMemoryChannelLayer"
    assert s["JAIWEB_PUBLIC_URL"] is None
    assert s["JAIWEB_LLM_MODEL"] is None
    assert s["JAIWEB_LLM_BASE_URL"] is None
    assert s["JAIWEB_LLM_API_KEY"] is None
    assert s["JAIWEB_IMAGE_BACKEND"] == "local"
    assert s["JAIWEB_IMAGE_MODEL"] == "gpt-image-1"
    assert s["JAIWEB_IMAGE_BASE_URL"] is None
    assert s["JAIWEB_IMAGE_API_KEY"] is None
    assert s["JAIWEB_IMAGE_SIZE"] == "1024x1024"
    assert s["JAIWEB_IMAGE_QUALITY"] is None
    assert s["JAIWEB_IMAGE_TIMEOUT"] == 300
    assert s["JAIWEB_A1111_URL"] == "http://127.0.0.1:7860"
    assert (s["JAIWEB_A1111_SIZE"], s["JAIWEB_A1111_STEPS"]) == ("512x512", 20)
    assert s["JAIWEB_FEED_URL"] is None
    assert s["JAIWEB_FEED_SECRET"]
    assert s["JAIWEB_LEASE_SECONDS"] == 15
    assert s["JAIWEB_CONTEXT_BUDGET"] == 24000
    assert s["JAIWEB_MAX_PROMPT_CHARS"] == 4000
    assert s["JAIWEB_TRUSTED_PROXIES"] == []  # X-Forwarded-For ignored
    assert s["JAIWEB_DISK_MIN_FREE_MB"] == 64
    assert s["JAIWEB_RUNNER_NICE"] == 10


def test_trusted_proxies_are_addresses_and_networks():
    s = settings_of(JAIWEB_TRUSTED_PROXIES=" 127.0.0.1, 10.0.0.0/8,,::1 ")
    assert s["JAIWEB_TRUSTED_PROXIES"] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]


def test_good_values_parse():
    s = settings_of(
        DEBUG="False",
        SECRET_KEY=PROD_KEY,
        DATABASE_URL="postgresql://jai:p%40ss@db.example:6543/studio?sslmode=require",
        REDIS_URL="redis://127.0.0.1:6379/1",
        JAIWEB_PUBLIC_URL="https://comics.example/",
        JAIWEB_LLM_MODEL="qwen3",
        JAIWEB_LLM_BASE_URL="http://127.0.0.1:8080/v1",
        JAIWEB_LLM_API_KEY="key",
        JAIWEB_IMAGE_BACKEND="openai",
        JAIWEB_IMAGE_API_KEY="sk-image",
        JAIWEB_IMAGE_MODEL="dall-e-3",
        JAIWEB_IMAGE_SIZE="1792x1024",
        JAIWEB_IMAGE_QUALITY="hd",
        JAIWEB_FEED_URL="https://feed.example/in",
        JAIWEB_FEED_SECRET=PROD_FEED,
        JAIWEB_LEASE_SECONDS="1",
        JAIWEB_CONTEXT_BUDGET="1000",
        JAIWEB_MAX_PROMPT_CHARS=" 200 ",
    )
    assert s["DEBUG"] is False
    assert s["SECRET_KEY"] == PROD_KEY
    assert s["DATABASE"]["ENGINE"] == "django.db.backends.postgresql"
    assert s["DATABASE"]["NAME"] == "studio"
    assert s["DATABASE"]["USER"] == "jai"
    assert s["DATABASE"]["PASSWORD"] == "p@ss"
    assert s["DATABASE"]["HOST"] == "db.example"
    assert s["DATABASE"]["PORT"] == "6543"
    assert s["DATABASE_OPTIONS"] == {
        "sslmode": "require",
        "server_side_binding": True,
        "prepare_threshold": 5,
        # a bounded pool per process; a returned connection keeps no session switch
        "pool": {"min_size": 1, "max_size": 20, "timeout": 10, "reset": "_pool_reset"},
    }
    # Django then gives the pool check=ConnectionPool.check_connection: no dead connection
    # is handed out after the server ended backends.
    assert s["DATABASE"]["CONN_HEALTH_CHECKS"] == "True"
    unpooled = settings_of(DATABASE_URL="postgres://jai@db.example/studio", JAIWEB_DB_POOL="0")
    assert "pool" not in unpooled["DATABASE_OPTIONS"]
    sized = settings_of(DATABASE_URL="postgres://jai@db.example/studio", JAIWEB_DB_POOL="5")
    assert sized["DATABASE_OPTIONS"]["pool"]["max_size"] == 5
    assert "pool" not in settings_of()["DATABASE_OPTIONS"]  # SQLite: a file, no pool
    assert s["CHANNEL_LAYERS"]["default"] == {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [
                # no read timeout: an idle websocket's blocking receive must not be cut
                {
                    "address": "redis://127.0.0.1:6379/1",
                    "socket_timeout": None,
                    "socket_connect_timeout": 5,
                }
            ],
            # pub/sub ignores the database number: the prefix keeps databases apart
            "prefix": "jaiweb.db1.",
        },
    }
    assert "comics.example" in s["ALLOWED_HOSTS"]
    assert s["CSRF_TRUSTED_ORIGINS"] == ["https://comics.example"]
    assert s["JAIWEB_PUBLIC_URL"] == "https://comics.example/"
    assert s["JAIWEB_LLM_MODEL"] == "qwen3"
    assert s["JAIWEB_LLM_BASE_URL"] == "http://127.0.0.1:8080/v1"
    assert s["JAIWEB_LLM_API_KEY"] == "key"
    assert s["JAIWEB_IMAGE_BACKEND"] == "openai"
    assert s["JAIWEB_IMAGE_API_KEY"] == "sk-image"
    assert (s["JAIWEB_IMAGE_MODEL"], s["JAIWEB_IMAGE_SIZE"]) == ("dall-e-3", "1792x1024")
    assert s["JAIWEB_IMAGE_QUALITY"] == "hd"
    assert s["JAIWEB_FEED_URL"] == "https://feed.example/in"
    assert s["JAIWEB_FEED_SECRET"] == PROD_FEED
    assert s["JAIWEB_LEASE_SECONDS"] == 1
    assert s["JAIWEB_CONTEXT_BUDGET"] == 1000
    assert s["JAIWEB_MAX_PROMPT_CHARS"] == 200


def test_the_image_backends_have_settings_of_their_own():
    """The image backend never borrows the LLM's server or key (issue 28)."""
    s = settings_of(
        JAIWEB_LLM_MODEL="qwen3",
        JAIWEB_LLM_BASE_URL="http://127.0.0.1:8080/v1",
        JAIWEB_LLM_API_KEY="llm-key",
        JAIWEB_IMAGE_BACKEND="openai",
        JAIWEB_IMAGE_BASE_URL="http://127.0.0.1:9000/v1",
        JAIWEB_IMAGE_MODEL="sd-turbo",
        JAIWEB_IMAGE_SIZE="768x512",  # another model than OpenAI's: any WxH
        JAIWEB_A1111_URL="http://gpu-box:7861/",
        JAIWEB_A1111_SIZE="512x768",
        JAIWEB_A1111_STEPS="30",
    )
    assert s["JAIWEB_IMAGE_BASE_URL"] == "http://127.0.0.1:9000/v1"
    assert s["JAIWEB_IMAGE_API_KEY"] is None  # a server of one's own may need no key
    assert (s["JAIWEB_IMAGE_MODEL"], s["JAIWEB_IMAGE_SIZE"]) == ("sd-turbo", "768x512")
    assert s["JAIWEB_A1111_URL"] == "http://gpu-box:7861/"
    assert (s["JAIWEB_A1111_SIZE"], s["JAIWEB_A1111_STEPS"]) == ("512x768", 30)
    for backend in ("local", "openai", "comfyui", "a1111"):
        got = settings_of(JAIWEB_IMAGE_BACKEND=backend, JAIWEB_IMAGE_API_KEY="k")
        assert got["JAIWEB_IMAGE_BACKEND"] == backend


def test_openai_images_without_a_key_need_a_server_of_ones_own():
    """OpenAI itself needs a key: start-up says which variable, and the way out."""
    r = settings_child(JAIWEB_IMAGE_BACKEND="openai", JAIWEB_LLM_API_KEY="llm-key")
    assert r.returncode != 0
    assert "ImproperlyConfigured: JAIWEB_IMAGE_API_KEY must be set" in r.stderr
    assert "JAIWEB_IMAGE_BASE_URL" in r.stderr
    assert "llm-key" not in r.stderr


def test_the_image_size_must_suit_the_model():
    r = settings_child(JAIWEB_IMAGE_MODEL="dall-e-2", JAIWEB_IMAGE_SIZE="1024x1536")
    assert "JAIWEB_IMAGE_SIZE must be one of 256x256, 512x512, 1024x1024, got '1024x1536'" in (
        r.stderr
    )
    assert settings_of(JAIWEB_IMAGE_SIZE="1024x1536")["JAIWEB_IMAGE_SIZE"] == "1024x1536"
    r = settings_child(JAIWEB_IMAGE_MODEL="dall-e-3", JAIWEB_IMAGE_QUALITY="high")
    assert "JAIWEB_IMAGE_QUALITY must be one of standard, hd, got 'high'" in r.stderr


def test_openai_api_key_never_switches_providers():
    s = settings_of(OPENAI_API_KEY="sk-stray")
    assert s["JAIWEB_LLM_MODEL"] is None
    assert s["JAIWEB_LLM_API_KEY"] is None
    assert "sk-stray" not in json.dumps(s)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[("1", True), ("true", True), ("Yes", True), ("ON", True)],
        *[("0", False), ("false", False), ("no", False), ("Off", False), ("", False)],
    ],
)
def test_env_bool(monkeypatch, value, expected):
    monkeypatch.setenv("JAIWEB_X", value)
    assert env_bool("JAIWEB_X", False) is expected


def test_env_int(monkeypatch):
    monkeypatch.delenv("JAIWEB_X", raising=False)
    assert env_int("JAIWEB_X", 7, min=1) == 7
    monkeypatch.setenv("JAIWEB_X", "12")
    assert env_int("JAIWEB_X", 7, min=1) == 12
    monkeypatch.setenv("JAIWEB_X", "1.5")
    with pytest.raises(ImproperlyConfigured, match=r"JAIWEB_X must be an integer >= 1, got '1.5'"):
        env_int("JAIWEB_X", 7, min=1)


def test_env_choice(monkeypatch):
    monkeypatch.setenv("JAIWEB_X", "b")
    assert env_choice("JAIWEB_X", ("a", "b"), "a") == "b"
    monkeypatch.setenv("JAIWEB_X", "c")
    with pytest.raises(ImproperlyConfigured, match=r"JAIWEB_X must be one of a, b, got 'c'"):
        env_choice("JAIWEB_X", ("a", "b"), "a")


def test_sqlite_urls(tmp_path):
    relative = parse_database_url("sqlite:///var/db.sqlite3", tmp_path)
    assert relative["NAME"] == tmp_path / "var" / "db.sqlite3"
    assert relative["TEST"] == {"NAME": tmp_path / "var" / "test_db.sqlite3"}

    absolute = parse_database_url("sqlite:////srv/jaiweb/db.sqlite3", tmp_path)
    assert absolute["NAME"] == Path("/srv/jaiweb/db.sqlite3")
    assert absolute["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in absolute["OPTIONS"]["init_command"]
    assert "synchronous=FULL" in absolute["OPTIONS"]["init_command"]
    assert absolute["CONN_MAX_AGE"] is None  # a thread keeps its connection


def test_postgres_urls(tmp_path):
    db = parse_database_url("postgres://postgres@127.0.0.1/test", tmp_path)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "test",
        "postgres",
        "",
        "127.0.0.1",
        "",
    )
    assert db["OPTIONS"] == {"server_side_binding": True, "prepare_threshold": 5}
    assert "CONN_MAX_AGE" not in db  # Django's 0: a request's connection goes back to the pool
    pooled = parse_database_url(
        "postgres://u@h/x?server_side_binding=false&prepare_threshold=0", tmp_path
    )
    assert pooled["OPTIONS"] == {"server_side_binding": False, "prepare_threshold": 0}
    for bad in ("server_side_binding=maybe", "prepare_threshold=x"):
        with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
            parse_database_url(f"postgres://u@h/x?{bad}", tmp_path)
    ipv6 = parse_database_url("postgresql://u:p@[::1]:5432/x", tmp_path)
    assert (ipv6["HOST"], ipv6["PORT"]) == ("::1", "5432")


@pytest.mark.django_db
def test_the_database_is_durable_on_commit():
    """SQLite: a WAL file synced on every commit; PostgreSQL: its defaults, fsync on commit."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            assert "mode=memory" not in str(connection.settings_dict["NAME"])
            assert connection.settings_dict["NAME"] != ":memory:"
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
            cursor.execute("PRAGMA synchronous")
            assert cursor.fetchone()[0] == 2  # FULL
            cursor.execute("PRAGMA busy_timeout")
            assert cursor.fetchone()[0] == 20000
        else:
            assert connection.vendor == "postgresql"
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
            cursor.execute("SHOW fsync")
            assert cursor.fetchone()[0] == "on"


def test_production_is_one_environment_away():
    dev = settings_of()
    assert dev["DEBUG"] is True and dev["SESSION_COOKIE_SECURE"] is False
    prod = settings_of(**PROD)
    assert prod["DEBUG"] is False
    assert prod["SESSION_COOKIE_SECURE"] is True and prod["CSRF_COOKIE_SECURE"] is True
    plain_http = settings_of(**PROD, JAIWEB_HTTPS="0")
    assert plain_http["SESSION_COOKIE_SECURE"] is False


def test_check_deploy_is_clean_in_the_documented_production_environment():
    """docs/DEPLOY.md §2 behind its TLS-terminating proxy: no warning (issue 14.10). W005,
    W008 and W021 are silenced in settings.py, each with the reason it does not apply."""
    env = clean_env(
        **PROD,
        JAIWEB_PUBLIC_URL="https://comics.example.com/",
        ALLOWED_HOSTS="comics.example.com,127.0.0.1",
        JAIWEB_HTTPS="1",
    )
    r = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "System check identified no issues (3 silenced)." in r.stdout


@pytest.mark.django_db
def test_the_suite_hashes_its_users_passwords_with_a_fast_hasher(alice):
    """tests/conftest.py: PBKDF2 would cost most of the suite's set-up time."""
    assert alice.password.startswith("md5$")
    assert alice.check_password("alice-pass-1")
