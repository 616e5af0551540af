"""The studio's pages: my sessions, one session's studio, and the HTMX calls behind it.

Every write goes through ``jaiweb.agent.actions`` or the store's services; a view only
maps a request to one of them and the outcome to a response. HTMX requests get the
changed regions back out of band; plain form posts are redirected (the page works
without JavaScript, minus the live stream).
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
)
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from jaiweb.agent.actions import (
    PromptRateLimited,
    approval_decide,
    character_set,
    permission_mode_set,
    prompt_submit,
    session_rewind,
    session_status,
    session_stop,
)
from jaiweb.render.models import Image
from jaiweb.render.selectors import image_for_viewer, ledger_for, wallet_balance
from jaiweb.store.errors import (
    InvalidEntry,
    OperationNotFound,
    OperationStateConflict,
    PromptTooLong,
    SessionBusy,
    SessionNotFound,
    SessionParked,
    StaleLeaf,
    StoreError,
)
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.selectors import (
    app_state_at,
    branch_rows,
    operation_get,
    session_get,
)
from jaiweb.store.services import session_create, session_delete, session_rename
from jaiweb.studio import tree
from jaiweb.studio.regions import regions_html, studio_context
from jaiweb.studio.selectors import characters_of, my_sessions, strip_panels, strip_view
from journal.entries import (
    AssistantMessage,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
    parse_entry,
)
from journal.errors import UnknownEntry

CHANNEL_LAYER_NAMES = {
    "channels.layers.InMemoryChannelLayer": "in-memory (this process only)",
    "channels_redis.pubsub.RedisPubSubChannelLayer": "Redis",
    "channels_redis.core.RedisChannelLayer": "Redis (list queues)",
}


def _mode() -> dict:
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    return {
        "database": connection.vendor,
        "channel_layer": CHANNEL_LAYER_NAMES.get(backend, backend),
        "llm_model": settings.JAIWEB_LLM_MODEL,
        "image_backend": settings.JAIWEB_IMAGE_BACKEND,
    }


def _own_session(request: HttpRequest, session_id: str, *, write: bool = False) -> ComicSession:
    """The session if the user may see it (its owner; staff may read): else 404, never a hint."""
    try:
        session = session_get(session_id=session_id)
    except SessionNotFound:
        raise Http404("no such session") from None
    if session.owner_id == request.user.pk:
        return session
    if request.user.is_staff and not write:
        return session
    raise Http404("no such session")


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


# --- my sessions ---------------------------------------------------------------------


class SessionForm(forms.Form):
    title = forms.CharField(label=gettext_lazy("Title"), max_length=200, strip=True)
    characters = forms.CharField(
        label=gettext_lazy("Starting characters"), required=False, max_length=2000
    )

    def clean_characters(self) -> list[str]:
        names = [n.strip() for n in self.cleaned_data["characters"].splitlines() if n.strip()]
        for name in names:
            if len(name) > 40:
                raise forms.ValidationError(_("a character's name has 1 to 40 characters"))
        return list(dict.fromkeys(names))


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """My sessions (logged in) or what this studio runs on and how to get in."""
    ctx = {"mode": _mode(), **_mode()}
    if not request.user.is_authenticated:
        return render(request, "studio/home.html", ctx)
    ctx.update(cards=my_sessions(owner=request.user), form=SessionForm())
    return render(request, "studio/sessions.html", ctx)


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    form = SessionForm(request.POST)
    if form.is_valid():
        names = form.cleaned_data["characters"]
        state = {
            "characters": {n: {"buff": "无", "skill": "无", "mood": "平静"} for n in names},
            "permission_mode": "ask",
        }
        try:
            session = session_create(
                owner=request.user, title=form.cleaned_data["title"], initial_app_state=state
            )
        except InvalidEntry as exc:
            form.add_error("title", str(exc))
        else:
            return redirect("studio-session", session.id)
    ctx = {"cards": my_sessions(owner=request.user), "form": form, "mode": _mode(), **_mode()}
    return render(request, "studio/sessions.html", ctx, status=422)


@login_required
@require_POST
def session_rename_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    try:
        session_rename(session_id=session.id, title=request.POST.get("title", ""))
    except InvalidEntry as exc:
        messages.error(request, str(exc))
    return redirect("studio-home")


@login_required
@require_http_methods(["GET", "POST"])
def session_delete_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    if request.method == "POST":
        try:
            session_delete(session_id=session.id)
        except SessionBusy:
            error = _("A run of this session is not finished; it can be deleted when it is.")
            ctx = {"session": session, "error": error}
            return render(request, "studio/session_delete.html", ctx, status=409)
        messages.info(request, _("Deleted “%(title)s”.") % {"title": session.title})
        return redirect("studio-home")
    return render(request, "studio/session_delete.html", {"session": session})


# --- the studio page -----------------------------------------------------------------


@login_required
@require_safe
@never_cache
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id)
    ctx = studio_context(session=session)
    ctx["max_prompt_chars"] = settings.JAIWEB_MAX_PROMPT_CHARS
    return render(request, "studio/session.html", ctx)


def _position(value: str) -> int:
    """A position in the tree: 0 … 2**63 - 1. A negative one would count from the end of a
    Python slice; a larger one overflows SQLite's integers."""
    number = int(value)
    if not 0 <= number < 2**63:
        raise ValueError(f"not a position: {number}")
    return number


@login_required
@require_safe
def tree_part(request: HttpRequest, session_id: str) -> HttpResponse:
    """A folded part of the tree: a fork's branches, or the next page of a long run."""
    session = _own_session(request, session_id)
    q = request.GET
    try:
        if "forks" in q:
            branches = tree.fork_view(
                session, parent_id=q["forks"], exclude=q.get("except") or None
            )
            ctx = {"session": session, "branches": branches, "leaf_id": session.leaf_id}
            return render(request, "studio/tree/forks.html", ctx)
        if "path" in q:
            start, stop = _position(q["start"]), _position(q["stop"])
            if stop < start:
                raise ValueError("start after stop")
            items = tree.path_page(session, leaf_id=q["path"], start=start, stop=stop)
        elif "chain" in q:
            items = tree.chain_view(
                session, chain=_position(q["chain"]), from_pos=_position(q["from"])
            )
        else:
            return HttpResponse(_("say which part of the tree"), status=422)
    except (KeyError, ValueError):
        return HttpResponse(_("a malformed tree request"), status=422)
    except UnknownEntry:
        raise Http404("no such entry") from None
    ctx = {"session": session, "tree_items": items, "leaf_id": session.leaf_id}
    return render(request, "studio/tree/items.html", ctx)


@login_required
@require_safe
def strip_part(request: HttpRequest, session_id: str) -> HttpResponse:
    """The page of panels before ``?before=<entry id>`` on the active branch."""
    session = _own_session(request, session_id)
    before = request.GET.get("before")
    if not before:
        return HttpResponse(_("say which panel to load the panels before"), status=422)
    try:
        strip = strip_view(branch_rows(session=session, lazy=True), before=before)
    except UnknownEntry:
        raise Http404("no such panel on the active branch") from None
    return render(request, "studio/strip/panels.html", {"session": session, "strip": strip})


@login_required
@require_safe
def entry_inspect(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """The inspector for one node: its text, tool arguments, and the state at that point."""
    session = _own_session(request, session_id)
    row = Entry.objects.filter(session=session, entry_id=entry_id).values("payload").first()
    if row is None:
        raise Http404("no such entry")
    entry = parse_entry(row["payload"])
    on_path = {r.entry_id for r in branch_rows(session=session, lazy=True)}
    role, icon, label, image = tree.describe(entry)
    node = tree.Node(
        entry.id, entry.parent_id, entry.type, role, icon, label, entry.id in on_path, image
    )
    state = app_state_at(session=session, leaf_id=entry.id)
    ctx = {
        "session": session,
        "node": node,
        "entry": entry,
        "leaf_id": session.leaf_id or "",
        "is_leaf": entry.id == session.leaf_id,
        "characters": characters_of(state),
        "permission_mode": state.get("permission_mode", "ask"),
        "can_continue": session_status(session=session).state == "idle"
        and session.owner_id == request.user.pk,
        **_entry_details(entry),
    }
    return render(request, "studio/inspector.html", ctx)


def _entry_details(entry) -> dict:
    if not isinstance(entry, MessageEntry):
        if entry.type == "compaction":
            return {"text": entry.summary}
        if entry.type == "branch":
            return {"text": _("Continued from here (left %(leaf)s).") % {"leaf": entry.from_id}}
        return {}
    message = entry.message
    if isinstance(message, UserMessage):
        return {"text": message.content}
    if isinstance(message, AssistantMessage):
        calls = [
            {
                "name": c.name,
                "arguments_json": json.dumps(c.arguments, ensure_ascii=False, indent=2),
            }
            for c in message.tool_calls
        ]
        return {"text": message.content, "tool_calls": calls}
    if isinstance(message, ToolResultMessage):
        details = (
            json.dumps(message.details, ensure_ascii=False, indent=2) if message.details else ""
        )
        return {"text": message.content, "result": message, "details_json": details}
    return {}


# --- writes from the page ------------------------------------------------------------


def _done(request: HttpRequest, session: ComicSession, status: int = 200) -> HttpResponse:
    """After a write: the regions (HTMX) or back to the page (a plain form)."""
    if not _is_htmx(request):
        return redirect("studio-session", session.id)
    session.refresh_from_db()
    html = regions_html(session=session, language=get_language())
    html += '<div id="form-error" role="alert" hx-swap-oob="true"></div>'
    return HttpResponse(html, status=status)


def _refused(
    request: HttpRequest, session: ComicSession, message: str, status: int
) -> HttpResponse:
    if not _is_htmx(request):
        messages.error(request, message)
        return redirect("studio-session", session.id)
    html = f'<div id="form-error" role="alert" hx-swap-oob="true"><p>{escape(message)}</p></div>'
    return HttpResponse(html, status=status)


def _error_message(exc: Exception) -> tuple[str, int]:
    """A user-facing message and the status for a refused write."""
    if isinstance(exc, SessionParked):
        return _("This session is waiting for an admin; try again once it is resolved."), 409
    if isinstance(exc, SessionBusy):
        return _("A run is going; wait for it to finish or stop it."), 409
    if isinstance(exc, StaleLeaf):
        return _("The session moved on in another tab; the page shows where it is now."), 409
    if isinstance(exc, PromptTooLong):
        return (
            _("The prompt is %(n)s characters long; at most %(limit)s are allowed.")
            % {"n": exc.length, "limit": exc.limit},
            422,
        )
    if isinstance(exc, PromptRateLimited):
        return (
            _("Too many prompts: at most %(limit)s a minute. Try again in %(s)s s.")
            % {"limit": exc.limit, "s": exc.retry_after},
            429,
        )
    if isinstance(exc, OperationStateConflict):
        return _("That is not possible now: %(why)s") % {"why": str(exc)}, 409
    if isinstance(exc, InvalidEntry | ValueError):
        return str(exc), 422
    return str(exc), 409


@login_required
@require_POST
def prompt_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    text = request.POST.get("text", "")
    expected = request.POST.get("expected_leaf_id") or None  # the leaf this page shows
    try:
        prompt_submit(session=session, user=request.user, text=text, expected_leaf_id=expected)
    except (StoreError, PromptRateLimited) as exc:
        message, status = _error_message(exc)
        response = _refused(request, session, message, status)
        if isinstance(exc, PromptRateLimited):
            response["Retry-After"] = str(exc.retry_after)
        if isinstance(exc, StaleLeaf) and _is_htmx(request):
            # The page was behind (another tab moved on): bring it to where the session is
            # now, so the next send carries the current leaf. The typed text stays.
            session.refresh_from_db()
            response.content += regions_html(session=session, language=get_language()).encode()
        return response
    return _done(request, session, status=202)


@login_required
@require_POST
def navigate_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    entry_id = request.POST.get("entry_id", "")
    expected = request.POST.get("expected_leaf_id") or None
    try:
        session_rewind(session=session, entry_id=entry_id, expected_leaf_id=expected)
    except UnknownEntry:
        raise Http404("no such entry") from None
    except StoreError as exc:
        message, status = _error_message(exc)
        return _refused(request, session, message, status)
    response = _done(request, session)
    if _is_htmx(request):
        empty = render_to_string(
            "studio/inspector.html", {"session": session, "oob": True}, request=request
        )
        response.content += empty.encode()
    return response


@login_required
@require_POST
def stop_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    try:
        session_stop(session=session, user=request.user)
    except StoreError as exc:
        message, status = _error_message(exc)
        return _refused(request, session, message, status)
    return _done(request, session, status=202)


@login_required
@require_POST
def approval_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
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
        message, status = _error_message(exc)
        return _refused(request, session, message, status)
    return _done(request, session)


@login_required
@require_POST
def character_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    fields = {k: request.POST[k].strip() for k in ("buff", "skill", "mood") if request.POST.get(k)}
    try:
        character_set(
            session=session,
            name=request.POST.get("name", ""),
            fields=fields,
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except (StoreError, ValueError) as exc:
        message, status = _error_message(exc)
        return _refused(request, session, message, status)
    return _done(request, session)


@login_required
@require_POST
def permission_mode_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _own_session(request, session_id, write=True)
    try:
        permission_mode_set(
            session=session,
            mode=request.POST.get("mode", ""),
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except (StoreError, ValueError) as exc:
        message, status = _error_message(exc)
        return _refused(request, session, message, status)
    return _done(request, session)


# --- exports, credits, health, panels ------------------------------------------------


@login_required
@require_safe
def episode_export(request: HttpRequest, session_id: str) -> HttpResponse:
    """The active branch as one self-contained HTML page: panels inlined, no outside links."""
    session = _own_session(request, session_id)
    strip = strip_panels(branch_rows(session=session))
    images = {i.id: i for i in Image.objects.filter(id__in=[p.image_id for p in strip])}
    panels = []
    for panel in strip:
        image = images.get(panel.image_id)
        data_uri = None
        if image is not None:
            path = Path(settings.MEDIA_ROOT) / image.path
            if path.is_file():
                encoded = base64.b64encode(path.read_bytes()).decode()
                data_uri = f"data:{image.content_type};base64,{encoded}"
        panels.append({**asdict(panel), "data_uri": data_uri})
    ctx = {"session": session, "panels": panels, "exported_at": timezone.now()}
    response = render(request, "studio/episode.html", ctx)
    response["Content-Disposition"] = f'attachment; filename="episode-{session.id}.html"'
    # Panels are inline SVG data: nothing in the page may run or load from elsewhere.
    response["Content-Security-Policy"] = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    )
    return response


@login_required
@require_safe
def credits_history(request: HttpRequest) -> HttpResponse:
    ctx = {
        "balance": wallet_balance(user=request.user),
        "ledger": ledger_for(user=request.user),
    }
    return render(request, "studio/credits.html", ctx)


@require_safe
def panel_image(request: HttpRequest, image_id: str) -> FileResponse:
    """A rendered panel: to its owner, or to anyone once it was published to the feed."""
    viewer = request.user if request.user.is_authenticated else None
    image = image_for_viewer(image_id=image_id, viewer=viewer)
    if image is None:
        raise Http404("no such panel")
    path = Path(settings.MEDIA_ROOT) / image.path
    if not path.is_file():
        raise Http404("no such panel")
    response = FileResponse(path.open("rb"), content_type=image.content_type)
    # A panel is a picture, never a page: no script in it may run, whatever it holds.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = (
        "private, max-age=3600" if image.published_at is None else ("public, max-age=86400")
    )
    return response


@require_safe
def ws_placeholder(request: HttpRequest, session_id: str) -> HttpResponse:
    """The live socket's address over plain HTTP: it only speaks websocket."""
    response = HttpResponse(_("This address only speaks websocket."), status=426)
    response["Upgrade"] = "websocket"
    return response
