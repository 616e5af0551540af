"""The Content-Security-Policy every page of the site is served with.

Scripts, styles, pictures and connections come from the site itself only; nothing runs
inline (no ``<script>`` body, no ``on…=`` attribute, no ``hx-on``, no ``style=``
attribute, no ``<style>`` block: everything is in ``static/``), no ``eval``, no plugin,
no ``<base>`` elsewhere, no form posted elsewhere, and no other site may frame a page.
A script an attacker slips into a page therefore does not run, even where escaping failed.

``connect-src`` names the page's own websocket address (``ws://`` or ``wss://`` and the
request's host) beside ``'self'``: CSP Level 3 lets ``'self'`` cover the same host's
websockets, and Chromium does, but browsers before it did not.

A response that sets its own policy keeps it: the exported episode page and the panels
(``studio/views/files.py``) are stricter still.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"

DIRECTIVES = (
    ("default-src", "'self'"),
    ("script-src", "'self'"),
    ("style-src", "'self'"),
    ("img-src", "'self'"),
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("object-src", "'none'"),
    ("frame-src", "'none'"),
    ("frame-ancestors", "'none'"),
    ("base-uri", "'self'"),
    ("form-action", "'self'"),
)


def websocket_source(request: HttpRequest) -> str | None:
    """The page's own websocket origin as a CSP source, or None when the host cannot be
    one (not allowed, or an IPv6 literal, which CSP's grammar has no room for)."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    if not host or host.startswith("["):
        return None
    return f"{'wss' if request.is_secure() else 'ws'}://{host}"


def content_security_policy(request: HttpRequest) -> str:
    """The policy for a response to ``request``."""
    parts = []
    for directive, sources in DIRECTIVES:
        if directive == "connect-src":
            socket = websocket_source(request)
            if socket:
                sources = f"{sources} {socket}"
        parts.append(f"{directive} {sources}")
    return "; ".join(parts)


class ContentSecurityPolicyMiddleware:
    """Give every response that has no policy of its own the site's."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            response[HEADER] = content_security_policy(request)
        return response
