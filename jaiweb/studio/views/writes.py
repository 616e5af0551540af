"""The writes behind the studio page: prompt, rewind, stop, approvals, character and mode edits.

Each answers as every studio write does (``answers``): the changed regions out of band, or
its refusal's ``http_status`` and a sentence in the viewer's language.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jaiweb.commands.sessions import (
    approval_decide,
    character_set,
    permission_mode_set,
    prompt_submit,
    session_rewind,
    session_stop,
)
from jaiweb.commands.variants import variants_count, variants_prompt
from jaiweb.render.selectors import image_look_seed
from jaiweb.store.errors import OperationNotFound, StoreError
from jaiweb.store.selectors import operation_get
from jaiweb.studio.views.access import own_session
from jaiweb.studio.views.answers import (
    emptied_inspector_html,
    input_refused,
    write_done,
    write_refused,
)
from journal.errors import UnknownEntry


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
        return write_refused(request, session, exc)  # a stale one keeps the typed text
    return write_done(request, session, status=202)


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
        return write_refused(request, session, exc)
    return write_done(request, session, also=lambda: emptied_inspector_html(request, session))


@login_required
@require_POST
def stop_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    try:
        session_stop(session=session, user=request.user)
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session, status=202)


@login_required
@require_POST
def approval_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "approve_auto", "deny"):
        return input_refused(request, session, _("decision is approve, approve_auto or deny"))
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
        return write_refused(request, session, exc)
    return write_done(request, session)


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
        return write_refused(request, session, exc)
    return write_done(request, session)


@login_required
@require_POST
def character_look_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """Use a panel as a character's look ("Use as <name>'s look").

    The panel becomes the character's reference picture. The seed the character's figure was
    drawn with there becomes the character's own seed; a picture no render drew, such as an
    import, leaves the seed as it is. The edit is an app_state entry like any hand edit, so it
    costs nothing and rolls back with a rewind. An image that is not the session owner's is
    refused (422) and nothing is written."""
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
        return write_refused(request, session, exc)
    return write_done(request, session)


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
        return write_refused(request, session, exc)
    return write_done(request, session)
