"""The writes behind the studio page: prompt, rewind, stop, approvals, character and mode edits.

HTMX requests get the changed regions back out of band; plain form posts are redirected
(the page works without JavaScript, minus the live stream). A refused write answers with
its refusal's ``http_status`` and a sentence in the viewer's language.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jaiweb.render.selectors import image_look_seed
from jaiweb.sessions.commands import (
    approval_decide,
    character_set,
    permission_mode_set,
    prompt_submit,
    session_rewind,
    session_stop,
)
from jaiweb.sessions.variants import variants_count, variants_prompt
from jaiweb.store.errors import (
    OperationNotFound,
    OperationStateConflict,
    PromptRateLimited,
    PromptTooLong,
    SessionBusy,
    SessionParked,
    StaleLeaf,
    StoreError,
)
from jaiweb.store.selectors import operation_get
from jaiweb.studio.regions import answer_regions_html
from jaiweb.studio.views.access import is_htmx, own_session
from journal.errors import UnknownEntry


def _done(request: HttpRequest, session, status: int = 200) -> HttpResponse:
    """After a write: the regions (HTMX) or back to the page (a plain form)."""
    if not is_htmx(request):
        return redirect("studio-session", session.id)
    session.refresh_from_db()
    html = answer_regions_html(session=session, language=get_language())
    html += render_to_string("studio/form-error.html", {"message": ""})
    return HttpResponse(html, status=status)


def _refused(request: HttpRequest, session, message: str, status: int) -> HttpResponse:
    if not is_htmx(request):
        messages.error(request, message)
        return redirect("studio-session", session.id)
    html = render_to_string("studio/form-error.html", {"message": message})
    return HttpResponse(html, status=status)


def refusal_message(exc: StoreError) -> str:
    """What a refused write says to the person who made it (its status: ``http_status``)."""
    if isinstance(exc, SessionParked):
        return _("This session is waiting for an admin; try again once it is resolved.")
    if isinstance(exc, SessionBusy):
        return _("A run is going; wait for it to finish or stop it.")
    if isinstance(exc, StaleLeaf):
        return _("The session moved on in another tab; the page shows where it is now.")
    if isinstance(exc, PromptTooLong):
        return _("The prompt is %(n)s characters long; at most %(limit)s are allowed.") % {
            "n": exc.length,
            "limit": exc.limit,
        }
    if isinstance(exc, PromptRateLimited):
        return _("Too many prompts: at most %(limit)s a minute. Try again in %(s)s s.") % {
            "limit": exc.limit,
            "s": exc.retry_after,
        }
    if isinstance(exc, OperationStateConflict):
        return _("That is not possible now: %(why)s") % {"why": str(exc)}
    return str(exc)


def caught_up_html(session) -> str:
    """Render every region at the session's current leaf, for a stale-leaf refusal.

    A write is refused as stale when the page showed an older leaf (another tab moved
    on, or a run's last update is still on its way). The refusal carries the regions as
    they are now, so the page's next click names the current leaf."""
    session.refresh_from_db()
    return answer_regions_html(session=session, language=get_language())


def _refusal(request: HttpRequest, session, exc: StoreError) -> HttpResponse:
    response = _refused(request, session, refusal_message(exc), exc.http_status)
    if isinstance(exc, StaleLeaf) and is_htmx(request):
        response.content += caught_up_html(session).encode()
    return response


@login_required
@require_POST
def prompt_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    typed = request.POST.get("text", "")
    expected = request.POST.get("expected_leaf_id") or None  # the leaf this page shows
    try:
        # "Draw N variants" beside Send: the prompt goes in as that request.
        text = variants_prompt(
            text=typed, count=variants_count(request.POST.get("variants")), language=get_language()
        )
        prompt_submit(
            session=session,
            user=request.user,
            text=text,
            expected_leaf_id=expected,
            framing=len(text) - len(typed),
        )
    except StoreError as exc:
        response = _refusal(request, session, exc)  # a stale one keeps the typed text
        if isinstance(exc, PromptRateLimited):
            response["Retry-After"] = str(exc.retry_after)
        return response
    return _done(request, session, status=202)


@login_required
@require_POST
def rewind_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    entry_id = request.POST.get("entry_id", "")
    expected = request.POST.get("expected_leaf_id") or None
    keep = request.POST.get("keep") == "characters"  # "story only: keep today's characters"
    try:
        session_rewind(
            session=session, entry_id=entry_id, expected_leaf_id=expected, keep_characters=keep
        )
    except UnknownEntry:
        raise Http404("no such entry") from None
    except StoreError as exc:
        return _refusal(request, session, exc)
    response = _done(request, session)
    if is_htmx(request):
        empty = render_to_string(
            "studio/inspector.html", {"session": session, "oob": True}, request=request
        )
        response.content += empty.encode()
    return response


@login_required
@require_POST
def stop_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    try:
        session_stop(session=session, user=request.user)
    except StoreError as exc:
        return _refusal(request, session, exc)
    return _done(request, session, status=202)


@login_required
@require_POST
def approval_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "approve_auto", "deny"):
        return _refused(request, session, _("decision is approve, approve_auto or deny"), 422)
    try:
        operation = operation_get(operation_id=request.POST.get("operation_id", ""))
        if operation.session_id != session.id:
            raise OperationNotFound(operation.id)
        approval_decide(
            operation=operation,
            tool_call_id=request.POST.get("tool_call_id", ""),
            decision="denied" if decision == "deny" else "approved",
            user=request.user,
            auto_from_now=decision == "approve_auto",
        )
    except OperationNotFound:
        raise Http404("no such operation") from None
    except StoreError as exc:
        return _refusal(request, session, exc)
    return _done(request, session)


@login_required
@require_POST
def character_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    fields = {k: request.POST[k].strip() for k in ("buff", "skill", "mood") if request.POST.get(k)}
    try:
        character_set(
            session=session,
            name=request.POST.get("name", ""),
            fields=fields,
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except StoreError as exc:
        return _refusal(request, session, exc)
    return _done(request, session)


@login_required
@require_POST
def character_look_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """ "Use as <name>'s look" on a panel: the panel becomes the character's reference
    picture, and the seed its figure was drawn with there becomes the character's own (a
    picture no render drew, an import, leaves the seed as it is). An app_state entry like
    any hand edit: it costs nothing and rolls back with a rewind. An image that is not the
    session owner's is refused (422) and nothing is written."""
    session = own_session(request, session_id, write=True)
    name = request.POST.get("name", "").strip()
    image_id = request.POST.get("image_id", "")
    seed = image_look_seed(image_id=image_id, owner_id=session.owner_id, name=name)
    try:
        character_set(
            session=session,
            name=name,
            fields={"reference_image_id": image_id, "seed": seed},
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except StoreError as exc:
        return _refusal(request, session, exc)
    return _done(request, session)


@login_required
@require_POST
def permission_mode_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    try:
        permission_mode_set(
            session=session,
            mode=request.POST.get("mode", ""),
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except StoreError as exc:
        return _refusal(request, session, exc)
    return _done(request, session)
