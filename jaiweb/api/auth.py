"""Who is asking: a Bearer token (scripts, no CSRF) or the session cookie (the browser, CSRF).

The token is tried first. A request that sends a token stands or falls with it — a
revoked token is 401 even when a session cookie rides along — and one without falls
back to the cookie, whose unsafe requests must pass Django's CSRF check.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import AuthenticationError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from jaiweb.accounts.services import api_token_authenticate
from jaiweb.api.errors import ApiError


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = api_token_authenticate(secret=token.strip())
        if user is None:
            raise AuthenticationError()
        return user


class CookieAuth(APIKeyCookie):
    """Django's login session; ninja's own check, but anonymous is 401 before CSRF's 403."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        if not request.user.is_authenticated:
            return None
        if not getattr(request, "_ninja_csrf_exempt", False) and check_csrf(request):
            raise ApiError(403, "csrf_failed", "CSRF check failed: send the X-CSRFToken header")
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        return request.user if key is not None and request.user.is_authenticated else None


AUTH = [TokenAuth(), CookieAuth()]
