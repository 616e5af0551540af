"""The one settings module of jaiweb.

Everything that differs between machines comes from the environment (docs/ARCHITECTURE.md §10),
read through the small parsers below. A bad value stops start-up with
ImproperlyConfigured naming the variable and the value. An empty variable counts as
unset.

DEBUG defaults to on: with no environment at all, `python manage.py studio` is the
embedded mode (SQLite file, in-memory channel layer, offline director, local
renderer), which then serves with DEBUG off unless `--debug` or DEBUG=1 asks for it.
Turn it off with DEBUG=0 in production; then SECRET_KEY (50+ characters) and
JAIWEB_FEED_SECRET (32+ characters) are required. No secret is ever empty or a constant
written here: with DEBUG on and no SECRET_KEY, one is made at random on the first start
and kept in DEV_SECRET_FILE, and the feed's secret is derived from SECRET_KEY.
"""

import contextlib
import hashlib
import hmac
import ipaddress
import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

TRUE_VALUES = ("1", "true", "yes", "on")
FALSE_VALUES = ("0", "false", "no", "off")


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(name: str, default: str | None = None) -> str | None:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in TRUE_VALUES:
        return True
    if value.lower() in FALSE_VALUES:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0/true/false/yes/no/on/off, got {value!r}")


def env_int(name: str, default: int, min: int | None = None, max: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    if min is not None and max is not None:
        bound = f" from {min} to {max}"
    else:
        bound = f" >= {min}" if min is not None else (f" <= {max}" if max is not None else "")
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer{bound}, got {value!r}") from None
    if (min is not None and number < min) or (max is not None and number > max):
        raise ImproperlyConfigured(f"{name} must be an integer{bound}, got {value!r}")
    return number


def env_choice(name: str, choices: tuple[str, ...], default: str | None) -> str | None:
    value = _raw(name)
    if value is None:
        return default
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def env_url(name: str, schemes: tuple[str, ...] = ("http", "https")) -> str | None:
    value = _raw(name)
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.netloc:
        raise ImproperlyConfigured(f"{name} must be a {'/'.join(schemes)} URL, got {value!r}")
    return value


def env_networks(name: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Read a comma-separated list of IP addresses and CIDR networks (an address is a
    network of one); unset or empty gives none. A network with host bits set
    (10.0.0.5/8) is refused, since it is unclear which was meant."""
    value = _raw(name)
    if value is None:
        return ()
    networks = []
    for part in value.split(","):
        item = part.strip()
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated IP addresses or CIDR networks "
                f"(such as 127.0.0.1, 10.0.0.0/8, ::1), got {value!r}: {exc}"
            ) from None
    return tuple(networks)


def parse_database_url(url: str, base_dir: Path, name: str = "DATABASE_URL") -> dict:
    """Turn a database URL into a Django DATABASES entry.

    sqlite:///relative/path (relative to the project base dir), sqlite:////abs/path,
    postgres:// or postgresql://user:password@host:port/dbname?option=value.
    """

    def bad(why: str) -> ImproperlyConfigured:
        return ImproperlyConfigured(f"{name} {why}, got {url!r}")

    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # "sqlite:///x" splits into netloc "" and path "/x"; a fourth slash keeps
        # the path absolute.
        if parts.netloc or parts.query or parts.fragment:
            raise bad("must look like sqlite:///relative/path or sqlite:////abs/path")
        path = unquote(parts.path[1:])
        if not path or path == ":memory:" or path.endswith("/"):
            raise bad("must name a SQLite file (an in-memory database is not supported)")
        file = Path(path) if path.startswith("/") else base_dir / path
        return {
            "ENGINE": "jaiweb.store.sqlite",
            "NAME": file,
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
            # A file, not memory: live-server and child-process tests share it.
            "TEST": {"NAME": file.with_name("test_" + file.name)},
            # A thread keeps its connection between requests: opening one (Django's
            # functions registered, the pragmas run) costs more than a prompt's own
            # queries (docs/PERFORMANCE.md). One that saw a query fail is closed at the
            # request's end all the same (jaiweb/store/sqlite/base.py).
            "CONN_MAX_AGE": None,
        }
    if parts.scheme in ("postgres", "postgresql"):
        try:
            port = parts.port
        except ValueError:
            raise bad("has a bad port") from None
        dbname = unquote(parts.path[1:])
        if not dbname or "/" in dbname:
            raise bad("must name a database, as in postgres://user:pass@host:5432/dbname")
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": dbname,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port) if port else "",
            "OPTIONS": _postgres_options(parse_qsl(parts.query), bad),
        }
    raise bad("must start with sqlite://, postgres:// or postgresql://")


def _postgres_options(pairs: list[tuple[str, str]], bad) -> dict:
    """Connection options from the URL's query string.

    By default parameters are bound on the server and a statement run 5 times is
    prepared: the one-statement append is then planned once per connection, not on every
    call (about half its time). Behind a transaction-pooling PgBouncer, add
    ``?server_side_binding=false`` to the URL.
    """
    options: dict = {"server_side_binding": True, "prepare_threshold": 5}
    for key, value in pairs:
        if key == "server_side_binding":
            if value.lower() not in TRUE_VALUES + FALSE_VALUES:
                raise bad(f"has server_side_binding={value!r}; use true or false")
            options[key] = value.lower() in TRUE_VALUES
        elif key == "prepare_threshold":
            if not value.isdigit():
                raise bad(f"has prepare_threshold={value!r}; use a whole number")
            options[key] = int(value)
        else:
            options[key] = value
    return options


def redis_caches(url: str) -> dict:
    """Return CACHES on the Redis at ``url``.

    While Redis cannot be reached, each process counts the rate limits on its own
    (jaiweb/commands/limits.py), so a call may fail fast: 1 s timeouts and one immediate
    retry (for a pooled connection Redis has closed), where redis-py's default retries
    with backoff took 4 s to give up on a refused connection. The backend keeps one
    connection pool per process and counts in one round trip (jaiweb/ops/cache.py).
    """
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return {
        "default": {
            "BACKEND": "jaiweb.ops.cache.SharedPoolRedisCache",
            "LOCATION": url,
            "OPTIONS": {
                "socket_connect_timeout": 1,
                "socket_timeout": 1,
                "retry": Retry(NoBackoff(), 1),
            },
        }
    }


# --- environment -------------------------------------------------------------------

DEBUG = env_bool("DEBUG", True)
# Whether DEBUG came from the environment: `manage.py studio` turns an unset one off once
# these settings are read (jaiweb/ops/management/commands/studio.py), keeping the secrets
# the default gave.
JAIWEB_DEBUG_FROM_ENVIRONMENT = _raw("DEBUG") is not None

# DEBUG on and no SECRET_KEY: a key made once per checkout, kept beside the code and
# never committed (.gitignore), so no two installations share one and no one can guess it.
DEV_SECRET_FILE = BASE_DIR / ".jaiweb-dev-secret-key"


def dev_secret_key(path: Path) -> str:
    """The key in ``path``, made at random (mode 600) by whichever process starts first."""
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(50) + "\n")
        with contextlib.suppress(FileExistsError):  # another process was first: theirs wins
            os.link(tmp, path)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"SECRET_KEY is unset and no development key could be kept in {path} ({exc}); "
            "set SECRET_KEY"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text().strip()


# Keys that were once written down (this file's old development key) are public.
KNOWN_KEYS = ("jaiweb-dev-only-secret-key-never-use-in-production",)


def check_secret_key(key: str) -> str:
    """What Django's check --deploy asks of a production key (security.W009), as an error."""
    if (
        len(key) < 50
        or len(set(key)) < 5
        or key.startswith("django-insecure-")
        or key in KNOWN_KEYS
    ):
        raise ImproperlyConfigured(
            "SECRET_KEY must have at least 50 characters, 5 of them different, when DEBUG is "
            f"off (got {len(key)} characters; the value is not shown). Make one with: "
            'python -c "import secrets; print(secrets.token_urlsafe(50))"'
        )
    return key


def derived_secret(key: str, purpose: str) -> str:
    """A secret of its own for ``purpose``, as secret as ``key`` and never equal to it."""
    return hmac.new(key.encode(), f"jaiweb:{purpose}".encode(), hashlib.sha256).hexdigest()


SECRET_KEY = env_str("SECRET_KEY")
if SECRET_KEY is None:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = dev_secret_key(DEV_SECRET_FILE)
elif not DEBUG:
    check_secret_key(SECRET_KEY)

# Behind HTTPS (a reverse proxy that terminates TLS): cookies only over HTTPS, HSTS, and
# the proxy's X-Forwarded-Proto believed. On by default when DEBUG is off.
JAIWEB_HTTPS = env_bool("JAIWEB_HTTPS", not DEBUG)
if JAIWEB_HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("JAIWEB_HSTS_SECONDS", 3600, min=0)
    # check --deploy, behind the TLS-terminating proxy of docs/DEPLOY.md:
    # W008 SECURE_SSL_REDIRECT: the proxy redirects http:// to https:// itself; a redirect
    #   here would also send loopback health checks and scrapes (/healthz, /metrics,
    #   plain HTTP on 127.0.0.1) to an https:// port nothing listens on.
    # W005 SECURE_HSTS_INCLUDE_SUBDOMAINS, W021 SECURE_HSTS_PRELOAD: HSTS for every
    #   subdomain, and the browsers' preload list (hard to leave), commit the whole domain,
    #   not this application: the domain's owner decides them at the proxy.
    SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W008", "security.W021"]
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

DATABASES = {
    "default": parse_database_url(env_str("DATABASE_URL", "sqlite:///db.sqlite3"), BASE_DIR)
}

# PostgreSQL: each process draws its connections from a pool of at most this many
# (psycopg_pool) instead of opening one per thread that touches the database, Django's
# default: a bounded number per process, and no connection set-up (the server's CPU)
# per request. A thread waits up to 10 s for a free one. 0: no pool.
JAIWEB_DB_POOL = env_int("JAIWEB_DB_POOL", 20, min=0)


def _pool_reset(conn) -> None:
    """A connection goes back to the pool without the one session switch jaiweb knows
    (``jaiweb.allow_truncate``, set by the test runner's flush): no borrower inherits it."""
    with conn.transaction():
        conn.execute("RESET jaiweb.allow_truncate")


if DATABASES["default"]["ENGINE"].endswith("postgresql") and JAIWEB_DB_POOL:
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": JAIWEB_DB_POOL,
        "timeout": 10,
        "reset": _pool_reset,
    }
    # With a pool, Django passes psycopg_pool's check=ConnectionPool.check_connection: a
    # connection is checked (one empty query) as it is handed out. Without it, after the
    # server ended backends (a restart, pg_terminate_backend, a failover) the pool handed
    # out dead ones, each a 500 ("the connection is closed"), until all had been tried.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    # Redis pub/sub: a live event is published once and pushed to every web process
    # subscribed to the session's group. The list-based RedisChannelLayer pops one
    # message per round trip into a per-process queue of bounded size and drops what
    # does not fit: at 200 busy sessions a third of the watchers lost their end lines
    # (docs/PERFORMANCE.md). Pub/sub delivers at most once, like the rest of this
    # stream: what a watcher misses while disconnected it reads from the journal.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                # redis-py 8 reads with a 5 s socket timeout by default; the layer polls
                # its subscription itself.
                "hosts": [
                    {"address": REDIS_URL, "socket_timeout": None, "socket_connect_timeout": 5}
                ],
                # Pub/sub channels ignore the database number: the prefix keeps a
                # studio on redis db 1 from hearing one on db 0.
                "prefix": f"jaiweb.db{urlsplit(REDIS_URL).path.strip('/') or '0'}.",
            },
        }
    }
    # Counters shared by every process (the rate limits).
    CACHES = redis_caches(REDIS_URL)
else:
    # Only shared inside one process: the embedded mode (`manage.py studio`).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "jaiweb.live.layers.InMemoryChannelLayer",  # swept once a second
            "CONFIG": {"capacity": 1000},
        }
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# None means: the URL that `manage.py studio` serves on (the command fills it in).
JAIWEB_PUBLIC_URL = env_url("JAIWEB_PUBLIC_URL")

# Unset: the offline director. OPENAI_API_KEY is deliberately never read, so a stray
# key in the environment cannot switch providers.
JAIWEB_LLM_MODEL = env_str("JAIWEB_LLM_MODEL")
JAIWEB_LLM_BASE_URL = env_url("JAIWEB_LLM_BASE_URL")
JAIWEB_LLM_API_KEY = env_str("JAIWEB_LLM_API_KEY")

# --- image backends (docs/IMAGE_BACKENDS.md) ----------------------------------------
# Each backend's settings are its own, never the LLM's: a director on a local llama.cpp
# server never sends the panels there too.
JAIWEB_IMAGE_BACKEND = env_choice(
    "JAIWEB_IMAGE_BACKEND", ("local", "openai", "comfyui", "a1111"), "local"
)
# How long a render request may take before it counts as failed (openai, a1111).
JAIWEB_IMAGE_TIMEOUT = env_int("JAIWEB_IMAGE_TIMEOUT", 300, min=1)

# openai: OpenAI Images or a server speaking its API. Sizes and qualities per model family
# as OpenAI documents them; another model (a compatible server's) takes any WxH.
OPENAI_IMAGE_SIZES = {
    "gpt-image": ("auto", "1024x1024", "1536x1024", "1024x1536"),
    "dall-e-3": ("1024x1024", "1792x1024", "1024x1792"),
    "dall-e-2": ("256x256", "512x512", "1024x1024"),
}
OPENAI_IMAGE_QUALITIES = {
    "gpt-image": ("auto", "low", "medium", "high"),
    "dall-e-3": ("standard", "hd"),
    "dall-e-2": ("standard",),
}
ANY_IMAGE_QUALITY = ("auto", "low", "medium", "high", "standard", "hd")


def openai_image_family(model: str) -> str | None:
    """The OpenAI model family whose documented sizes and qualities apply, if any."""
    model = model.lower()
    if model.startswith(("gpt-image", "chatgpt-image")):
        return "gpt-image"
    for family in ("dall-e-3", "dall-e-2"):
        if model.startswith(family):
            return family
    return None


def env_image_size(
    name: str,
    default: str,
    choices: tuple[str, ...] | None = None,
    *,
    allow_auto: bool = False,
    multiple: int = 1,
) -> str:
    """One of ``choices`` when given; else WIDTHxHEIGHT, each side 64 to 4096 pixels and a
    multiple of ``multiple`` (or ``auto`` when allowed)."""
    value = _raw(name)
    if value is None:
        return default
    if choices is not None:
        if value not in choices:
            raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value
    if allow_auto and value == "auto":
        return value
    width, x, height = value.lower().partition("x")
    sides = (width, height)
    if not (x and width.isdigit() and height.isdigit()) or not all(
        64 <= int(side) <= 4096 and int(side) % multiple == 0 for side in sides
    ):
        rule = "each side 64 to 4096 pixels" + (
            f" and a multiple of {multiple}" if multiple > 1 else ""
        )
        raise ImproperlyConfigured(f"{name} must be WIDTHxHEIGHT, {rule}, got {value!r}")
    return f"{int(width)}x{int(height)}"


JAIWEB_IMAGE_MODEL = env_str("JAIWEB_IMAGE_MODEL", "gpt-image-1")
JAIWEB_IMAGE_BASE_URL = env_url("JAIWEB_IMAGE_BASE_URL")
JAIWEB_IMAGE_API_KEY = env_str("JAIWEB_IMAGE_API_KEY")
JAIWEB_IMAGE_SIZE = env_image_size(
    "JAIWEB_IMAGE_SIZE",
    "1024x1024",
    OPENAI_IMAGE_SIZES.get(openai_image_family(JAIWEB_IMAGE_MODEL) or ""),
    allow_auto=True,
)
# Unset: the server's default quality.
JAIWEB_IMAGE_QUALITY = env_choice(
    "JAIWEB_IMAGE_QUALITY",
    OPENAI_IMAGE_QUALITIES.get(openai_image_family(JAIWEB_IMAGE_MODEL) or "", ANY_IMAGE_QUALITY),
    None,
)
# api.openai.com needs a key; a compatible server of one's own (JAIWEB_IMAGE_BASE_URL set)
# may need none, and then gets a placeholder.
if JAIWEB_IMAGE_BACKEND == "openai" and JAIWEB_IMAGE_BASE_URL is None and not JAIWEB_IMAGE_API_KEY:
    raise ImproperlyConfigured(
        "JAIWEB_IMAGE_API_KEY must be set when JAIWEB_IMAGE_BACKEND is openai and "
        "JAIWEB_IMAGE_BASE_URL is unset (OpenAI itself); a compatible server that needs no "
        "key: set JAIWEB_IMAGE_BASE_URL to it"
    )

# a1111: AUTOMATIC1111 / Forge started with --api (default: its own default address).
JAIWEB_A1111_URL = env_url("JAIWEB_A1111_URL") or "http://127.0.0.1:7860"
JAIWEB_A1111_SIZE = env_image_size("JAIWEB_A1111_SIZE", "512x512", multiple=8)
JAIWEB_A1111_STEPS = env_int("JAIWEB_A1111_STEPS", 20, min=1, max=150)
# ComfyUI: its address, an API-format workflow (default: the bundled SD-1.5 one) and the
# checkpoint file the bundled workflow loads. The workflow is checked at start-up.
JAIWEB_COMFYUI_URL = env_url("JAIWEB_COMFYUI_URL") or "http://127.0.0.1:8188"
JAIWEB_COMFYUI_WORKFLOW = env_str("JAIWEB_COMFYUI_WORKFLOW")
JAIWEB_COMFYUI_CHECKPOINT = env_str("JAIWEB_COMFYUI_CHECKPOINT")

JAIWEB_FEED_URL = env_url("JAIWEB_FEED_URL")
# The HMAC key of the feed webhook (jaiweb/feed), shared by publish_panel and the receiver,
# whether the feed is the studio's own or external. With DEBUG off it must be given; with
# DEBUG on it defaults to one derived from SECRET_KEY (itself random per checkout).
JAIWEB_FEED_SECRET = env_str("JAIWEB_FEED_SECRET")
if JAIWEB_FEED_SECRET is None:
    if not DEBUG:
        raise ImproperlyConfigured(
            "JAIWEB_FEED_SECRET must be set when DEBUG is off (the feed webhook's HMAC key, "
            "32+ characters, the same in every process): "
            'python -c "import secrets; print(secrets.token_urlsafe(32))"'
        )
    JAIWEB_FEED_SECRET = derived_secret(SECRET_KEY, "feed-webhook")
elif not DEBUG and len(JAIWEB_FEED_SECRET) < 32:
    raise ImproperlyConfigured(
        "JAIWEB_FEED_SECRET must have at least 32 characters when DEBUG is off "
        f"(got {len(JAIWEB_FEED_SECRET)}; the value is not shown)"
    )

JAIWEB_LEASE_SECONDS = env_int("JAIWEB_LEASE_SECONDS", 15, min=1)
# How long an unfinished render holds its key before a repeat may take it over.
JAIWEB_RENDER_LEASE_SECONDS = env_int("JAIWEB_RENDER_LEASE_SECONDS", 30, min=1)
JAIWEB_CONTEXT_BUDGET = env_int("JAIWEB_CONTEXT_BUDGET", 24000, min=1000)
JAIWEB_MAX_PROMPT_CHARS = env_int("JAIWEB_MAX_PROMPT_CHARS", 4000, min=1)
# Prompts (new runs and steering) one user may send per minute; more get 429.
JAIWEB_PROMPTS_PER_MINUTE = env_int("JAIWEB_PROMPTS_PER_MINUTE", 30, min=1)
# The niceness `runagents` gives itself at start: web processes sharing its cores answer
# first (jaiweb/ops/niceness.py). 0 leaves it as started.
JAIWEB_RUNNER_NICE = env_int("JAIWEB_RUNNER_NICE", 10, min=0, max=19)
# Views of share links (pages and their panels) one client address may make per minute.
JAIWEB_SHARE_VIEWS_PER_MINUTE = env_int("JAIWEB_SHARE_VIEWS_PER_MINUTE", 120, min=1)
# The reverse proxies whose X-Forwarded-For is believed (addresses and CIDR networks,
# comma-separated). The client's address is the one the last trusted proxy saw; with
# none (the default) X-Forwarded-For is ignored and the address is the peer's.
JAIWEB_TRUSTED_PROXIES = env_networks("JAIWEB_TRUSTED_PROXIES")
# The largest session file (a bundle with its panel images) an import takes; larger: 413.
JAIWEB_MAX_BUNDLE_BYTES = env_int("JAIWEB_MAX_BUNDLE_BYTES", 32 * 1024 * 1024, min=1024)

# /healthz reports the disk as full (503) when the filesystem of JAIWEB_MEDIA_ROOT, or of
# the SQLite database, has less than this many MiB free. 0: only writes that failed.
JAIWEB_DISK_MIN_FREE_MB = env_int("JAIWEB_DISK_MIN_FREE_MB", 64, min=0)

# GET /metrics: unset, only from loopback (and not through a proxy); set, only with
# `Authorization: Bearer <token>`. At least 16 characters of A-Z a-z 0-9 - . _ ~ + / =.
JAIWEB_METRICS_TOKEN = env_str("JAIWEB_METRICS_TOKEN")
if JAIWEB_METRICS_TOKEN is not None and (
    len(JAIWEB_METRICS_TOKEN) < 16
    or not all(c.isascii() and (c.isalnum() or c in "-._~+/=") for c in JAIWEB_METRICS_TOKEN)
):
    raise ImproperlyConfigured(
        "JAIWEB_METRICS_TOKEN must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / = "
        f"(got {len(JAIWEB_METRICS_TOKEN)} characters; the value is not shown)"
    )

# Comma-separated; by default the loopback names plus JAIWEB_PUBLIC_URL's host.
ALLOWED_HOSTS = [h.strip() for h in (env_str("ALLOWED_HOSTS") or "").split(",") if h.strip()]
if not ALLOWED_HOSTS:
    ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
    if JAIWEB_PUBLIC_URL:
        _host = urlsplit(JAIWEB_PUBLIC_URL).hostname
        ALLOWED_HOSTS.append(f"[{_host}]" if ":" in _host else _host)
CSRF_TRUSTED_ORIGINS = []
if JAIWEB_PUBLIC_URL:
    _public = urlsplit(JAIWEB_PUBLIC_URL)
    CSRF_TRUSTED_ORIGINS.append(f"{_public.scheme}://{_public.netloc}")

# --- Django ----------------------------------------------------------------------

INSTALLED_APPS = [
    "jaiweb.studio.daphne_app.DaphneConfig",  # daphne's runserver, Twisted only when serving
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "ninja",  # serves the API docs page's assets itself (no CDN)
    "jaiweb.store",
    "jaiweb.render",
    "jaiweb.feed",
    "jaiweb.accounts",
    "jaiweb.agent",
    "jaiweb.studio",
    "jaiweb.inbox",
    "jaiweb.ops",
    "jaiweb.devtools",
]

MIDDLEWARE = [
    # First: REMOTE_ADDR becomes the client's address (JAIWEB_TRUSTED_PROXIES).
    "jaiweb.ops.proxies.ClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Every answer without a policy of its own gets the site's (jaiweb/ops/csp.py): scripts,
    # styles and connections from the site only, nothing inline, no framing.
    "jaiweb.ops.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A page's write on a full disk: 503, not 500 (the API has its own handlers).
    "jaiweb.ops.disk.OutOfSpaceMiddleware",
    # Innermost: /api/v1/ writes in one transaction, every /api/v1/ answer JSON.
    "jaiweb.api.middleware.ApiMiddleware",
]

# A request that fails with a server error is written to stderr with its traceback, with
# DEBUG off too (Django's default sends it to the console only when DEBUG is on, and to
# ADMINS by mail, which no one sets): the studio's console is where its operator looks.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False}},
}

ROOT_URLCONF = "jaiweb.urls"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"
ASGI_APPLICATION = "jaiweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sign-up and password change refuse a password like the user's name, shorter than 8
# characters, a common one or digits only (sign-up took "short").
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# Rendered panels. Served by the studio's own views, only to whoever may see them.
MEDIA_ROOT = Path(env_str("JAIWEB_MEDIA_ROOT") or BASE_DIR / "media")
