"""The session a request may see, as a view needs it: 404 for anything else, never a hint."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest

from jaiweb.commands.access import session_for
from jaiweb.store.errors import SessionNotFound


def own_session(request: HttpRequest, session_id: str, *, write: bool = False) -> Any:
    """The session if the user may see it (``session_for``); else 404."""
    try:
        return session_for(user=request.user, session_id=session_id, write=write)
    except SessionNotFound:
        raise Http404("no such session") from None


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"
