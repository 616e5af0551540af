"""How every studio write answers, done or refused: the one place the write views share.

An HTMX write gets the changed regions back out of band, with the #form-error box emptied;
a plain form post is redirected to the page (it works without JavaScript, minus the live
stream). A refused write answers with its refusal's ``http_status`` and its
``user_message()`` in #form-error (a plain form: a flash message and the redirect). A
refusal for a stale leaf also brings the page up to date, so the next click names the
current leaf. An answer carrying the regions names them and their digests in its
``X-Jaiweb-Regions`` header (``REGIONS_HEADER``): the page tells its socket what it now
shows, so the socket does not send the same regions again.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.utils.translation import get_language

from jaiweb.store.errors import InvalidEntry, PromptRateLimited, StaleLeaf, StoreError
from jaiweb.studio.regions import answer_regions
from jaiweb.studio.views.access import is_htmx

REGIONS_HEADER = "X-Jaiweb-Regions"


def form_error_html(message: str) -> str:
    """Render the page's #form-error box with ``message``, or emptied for ""."""
    return render_to_string("studio/form-error.html", {"message": message})


def caught_up_html(session) -> tuple[str, str]:
    """Render every region at the session's current leaf, for a stale-leaf refusal; with
    the answer's ``X-Jaiweb-Regions`` value.

    A write is refused as stale when the page showed an older leaf (another tab moved
    on, or a run's last update is still on its way). The refusal carries the regions as
    they are now, so the page's next click names the current leaf."""
    session.refresh_from_db()
    return answer_regions(session=session, language=get_language())


def emptied_inspector_html(request: HttpRequest, session) -> str:
    """Render the inspector emptied, for a write after which its node is off the path."""
    return render_to_string(
        "studio/inspector.html", {"session": session, "oob": True}, request=request
    )


def write_done(
    request: HttpRequest, session, *, status: int = 200, also: Callable[[], str] | None = None
) -> HttpResponse:
    """Answer a done write: the regions, then what ``also`` renders (HTMX), else the page.

    ``also`` (more out-of-band HTML) runs only for an HTMX answer, after the session is
    read again."""
    if not is_htmx(request):
        return redirect("studio-session", session.id)
    session.refresh_from_db()
    html, shown = answer_regions(session=session, language=get_language())
    html += form_error_html("")
    if also is not None:
        html += also()
    response = HttpResponse(html, status=status)
    response[REGIONS_HEADER] = shown
    return response


def write_refused(
    request: HttpRequest,
    session,
    refusal: StoreError,
    *,
    message: str = "",
    also_when_stale: Callable[[], str] | None = None,
) -> HttpResponse:
    """Answer a refused write with its status and ``message`` (by default its own words).

    After a stale leaf the regions come as they are now, then ``also_when_stale``; a
    rate-limited prompt says when to try again (``Retry-After``)."""
    message = message or refusal.user_message()
    if not is_htmx(request):
        messages.error(request, message)
        response = redirect("studio-session", session.id)
    else:
        html, shown = form_error_html(message), ""
        if isinstance(refusal, StaleLeaf):
            regions, shown = caught_up_html(session)
            html += regions
            if also_when_stale is not None:
                html += also_when_stale()
        response = HttpResponse(html, status=refusal.http_status)
        if shown:
            response[REGIONS_HEADER] = shown
    if isinstance(refusal, PromptRateLimited):
        response["Retry-After"] = str(refusal.retry_after)
    return response


def input_refused(request: HttpRequest, session, message: str) -> HttpResponse:
    """Answer a write whose input the view refused itself (422) with ``message``."""
    return write_refused(request, session, InvalidEntry(message), message=message)
