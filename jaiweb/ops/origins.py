"""Which pages may open the studio's websocket: those of the site's own origin.

A socket carries the session cookie, so a page of any other origin that opens one reads
the owner's live events. Channels' ``AllowedHostsOriginValidator`` compared only the
Origin's host with ``ALLOWED_HOSTS``: a page on ``http://localhost:9999`` was let in to a
studio on ``127.0.0.1:8200``. Here the Origin must equal, scheme, host and port, one of:

* the site's own origin as this handshake names it: the ``Host`` header (checked against
  ``ALLOWED_HOSTS``) with ``https`` when the connection is secure (``wss``, or the
  proxy's ``SECURE_PROXY_SSL_HEADER`` when it is set, as Django's CSRF check believes it)
  and ``http`` otherwise;
* ``JAIWEB_PUBLIC_URL``'s origin, read at each handshake (``manage.py studio`` fills it
  in after the settings are loaded);
* an entry of ``CSRF_TRUSTED_ORIGINS``, including its ``https://*.example.com`` patterns,
  as Django's CSRF check reads them.

A handshake with no Origin, more than one, or ``null`` is refused: every browser sends
one on a websocket handshake, and the project's own scripts (``tests/support/clusters.py``,
``bench/``) send the studio's. Refused sockets are closed before they are accepted, which
the server answers with 403.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host


def _headers(scope: dict, name: bytes) -> list[str]:
    return [v.decode("latin1") for k, v in scope.get("headers", []) if k.lower() == name]


def _one(scope: dict, name: bytes) -> str | None:
    values = _headers(scope, name)
    return values[0] if len(values) == 1 else None


def _secure(scope: dict) -> bool:
    """Whether the browser reached this site over TLS, as Django's ``is_secure`` decides."""
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        header, secure_value = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode()
        value = _one(scope, name)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") == "wss"


def _own_origin(scope: dict) -> str | None:
    """``scheme://host[:port]`` of the handshake itself, or None without a valid Host."""
    host = None
    if settings.USE_X_FORWARDED_HOST:
        host = _one(scope, b"x-forwarded-host")
    if host is None:
        host = _one(scope, b"host")
    if not host:
        return None
    host = host.strip().lower()
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, allowed):
        return None
    return f"{'https' if _secure(scope) else 'http'}://{host}"


def _trusted(origin: str) -> bool:
    """``origin`` is JAIWEB_PUBLIC_URL's or one that CSRF_TRUSTED_ORIGINS names."""
    public = settings.JAIWEB_PUBLIC_URL
    if public:
        parts = urlsplit(public)
        if origin == f"{parts.scheme}://{parts.netloc}".lower():
            return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    for pattern in settings.CSRF_TRUSTED_ORIGINS:
        if "*" not in pattern:
            if origin == pattern.lower():
                return True
            continue
        allowed = urlsplit(pattern)
        if parts.scheme == allowed.scheme and is_same_domain(
            parts.netloc, allowed.netloc.lstrip("*").lower()
        ):
            return True
    return False


def origin_allowed(scope: dict) -> bool:
    """Whether the handshake's page is of the site's own origin or a trusted one."""
    origin = _one(scope, b"origin")
    if origin is None or len(_headers(scope, b"origin")) != 1:
        return False
    origin = origin.strip().lower()
    if not origin or origin == "null":
        return False
    own = _own_origin(scope)
    return origin == own or _trusted(origin)


async def _refuse(receive: Any, send: Any) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 403})


class SameOriginOnly:
    """Wrap the websocket side of the ASGI application: a handshake from another origin is
    refused before anything else (the session, the user) is looked at."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            await _refuse(receive, send)
            return
        await self.app(scope, receive, send)
