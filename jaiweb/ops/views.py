"""GET /healthz (is this process able to serve?) and GET /metrics (Prometheus text format).

/healthz checks what a web process cannot work without: its database (``SELECT 1``), its
channel layer (a message sent to a fresh channel and received back) and room on its
disks (``jaiweb.ops.disk``), and answers 503 naming the part that failed. It also
reports the cache (a value written and read back): without it the process still serves,
each process counting the rate limits on its own, so the cache alone never makes it 503.
It names what the About page shows people: the database's vendor, the channel layer, the
director (the model, or "offline") and the image backend.
/metrics reports the journals' figures from the database — so every process tells the
same truth — and this process's own uptime and open sockets.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import secrets

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.db import connection
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from jaiweb.ops.disk import short_of_space
from jaiweb.ops.metrics import CONTENT_TYPE, exposition
from jaiweb.render.backends import renderer_for_settings

LAYER_TIMEOUT = 2.0  # seconds for the channel layer's round trip


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() is not None
    except Exception:
        return False


def _cache_ok() -> bool:
    """Write a value to the cache and read it back (each call bounded by the cache's own
    socket timeouts, settings.CACHES)."""
    key = f"jaiweb:healthz:{secrets.token_hex(8)}"
    try:
        cache.set(key, key, timeout=10)
        ok = cache.get(key) == key
        cache.delete(key)
        return ok
    except Exception:  # refused, timed out, a broken backend: all "error"
        return False


def layer_backend() -> str:
    """The configured channel layer's backend, as written in settings ("none" if unset)."""
    config = getattr(settings, "CHANNEL_LAYERS", {}).get("default") or {}
    return str(config.get("BACKEND", "none"))


async def _channel_layer_ok() -> bool:
    """Send a message to a fresh channel and receive it back, within LAYER_TIMEOUT."""
    try:
        layer = get_channel_layer()
        if layer is None:
            return False
        nonce = secrets.token_hex(8)

        async def round_trip() -> bool:
            channel = await layer.new_channel()
            await layer.send(channel, {"type": "healthz.ping", "nonce": nonce})
            message = await layer.receive(channel)
            return message.get("nonce") == nonce

        return await asyncio.wait_for(round_trip(), LAYER_TIMEOUT)
    except Exception:  # a timeout, a refused connection, a broken backend: all "error"
        return False


def image_backend_status() -> dict[str, str]:
    """The configured image backend and whether it answers its probe (bounded in time). A
    backend that does not answer leaves the process able to serve: it never makes a 503."""
    name = str(settings.JAIWEB_IMAGE_BACKEND)
    try:
        reason = renderer_for_settings().probe()
    except Exception as exc:  # a backend that cannot even be built is not answering
        reason = f"{type(exc).__name__}: {exc}"
    if reason is None:
        return {"image_backend": name, "image": "ok"}
    return {"image_backend": name, "image": "error", "image_error": reason[:200]}


@never_cache
@require_safe
async def healthz(request: HttpRequest) -> JsonResponse:
    database = await sync_to_async(_database_ok)()
    layer = await _channel_layer_ok()
    cached = await sync_to_async(_cache_ok)()
    short = await sync_to_async(short_of_space)()
    ok = database and layer and not short
    body = {
        "ok": ok,
        "database": "ok" if database else "error",
        "channel_layer": "ok" if layer else "error",
        "layer": layer_backend(),
        "database_vendor": connection.vendor,
        "director": settings.JAIWEB_LLM_MODEL or "offline",
        "cache": "ok" if cached else "error",
        "disk": "full" if short else "ok",
        "disk_full": short,
        **await sync_to_async(image_backend_status, thread_sensitive=False)(),
    }
    return JsonResponse(body, status=200 if ok else 503)


_FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED")


def _from_loopback(request: HttpRequest) -> bool:
    """The peer is a loopback address and no proxy says it forwarded someone else's request.

    A reverse proxy on the same machine connects from 127.0.0.1 too; the forwarding headers
    it adds (X-Forwarded-For, X-Real-IP, Forwarded) are what tell its requests apart.
    """
    if any(request.META.get(h) for h in _FORWARDING_HEADERS):
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def _metrics_allowed(request: HttpRequest) -> bool:
    token = settings.JAIWEB_METRICS_TOKEN
    if token is None:
        return _from_loopback(request)
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    if not _metrics_allowed(request):
        why = (
            "send Authorization: Bearer <JAIWEB_METRICS_TOKEN>\n"
            if settings.JAIWEB_METRICS_TOKEN
            else "only from loopback without JAIWEB_METRICS_TOKEN\n"
        )
        return HttpResponse("forbidden: " + why, status=403, content_type="text/plain")
    return HttpResponse(exposition(layer=layer_backend()), content_type=CONTENT_TYPE)


@require_safe
def favicon(request: HttpRequest) -> FileResponse:
    """The site's icon at /favicon.ico, where browsers and feed readers look for it
    without reading the page (pages name static/favicon.svg)."""
    path = finders.find("favicon.ico")
    if path is None:
        raise Http404("no favicon")
    response = FileResponse(open(path, "rb"), content_type="image/x-icon")  # noqa: SIM115
    response["Cache-Control"] = "public, max-age=86400"
    return response
