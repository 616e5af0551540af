"""The inspector's branch tools: fork into a new session, regenerate a reply, edit and
resend a prompt, put a panel from another branch on this one (a cherry-pick).

Each answers as every studio write does (``answers``): the changed regions out of band, or
a refusal with its ``http_status`` and a sentence in #form-error. A write that found the
leaf moved (another tab) also brings the inspector up to date, with what was typed kept in
its box.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jaiweb.commands.branches import (
    panel_cherry_pick,
    prompt_resend,
    reply_regenerate,
    session_fork,
)
from jaiweb.store.errors import NotApplicable, StoreError
from jaiweb.studio.views.access import is_htmx, own_session
from jaiweb.studio.views.answers import (
    emptied_inspector_html,
    input_refused,
    write_done,
    write_refused,
)
from jaiweb.studio.views.pages import inspector_context
from journal.errors import UnknownEntry

TITLE_MAX = 200  # a session's title (store.services.session_create)


def _inspector(request: HttpRequest, session, entry_id: str, kept=None) -> str:
    """The inspector again, out of band, for the node it showed (its forms name it: ``node``
    and ``from``; else ``entry_id``), with the leaf as it is now."""
    node = request.POST.get("node") or entry_id
    ctx = inspector_context(request, session, node, request.POST.get("from"), kept=kept)
    ctx["oob"] = True
    return render_to_string("studio/inspector.html", ctx, request=request)


def _refused(
    request: HttpRequest,
    session,
    exc: StoreError,
    *,
    entry_id: str,
    message: str = "",
    kept: dict[str, str] | None = None,
) -> HttpResponse:
    """A refusal; after a stale leaf, the inspector caught up too, with ``kept`` typed text."""
    return write_refused(
        request,
        session,
        exc,
        message=message,
        also_when_stale=lambda: _inspector(request, session, entry_id, kept),
    )


def _expected(request: HttpRequest) -> str | None:
    return request.POST.get("expected_leaf_id") or None  # the leaf the page shows


def _attempt(
    request: HttpRequest,
    session,
    write: Callable[[], object],
    *,
    entry_id: str,
    not_applicable: str,
    kept: dict[str, str] | None = None,
) -> HttpResponse | None:
    """Run ``write``: None when it was done, else the refusal to answer with.

    An unknown node is a 404; a tool that does not apply to the node says
    ``not_applicable``; any other refusal says what the store said.
    """
    try:
        write()
    except UnknownEntry:
        raise Http404("no such entry") from None
    except NotApplicable as exc:
        return _refused(request, session, exc, entry_id=entry_id, message=not_applicable, kept=kept)
    except StoreError as exc:
        return _refused(request, session, exc, entry_id=entry_id, kept=kept)
    return None


@login_required
@require_POST
def fork_view(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """A new session holding root → ``entry_id``; the browser goes to it."""
    session = own_session(request, session_id, write=True)
    title = request.POST.get("title", "").strip()
    kept = {"title": title}
    if len(title) > TITLE_MAX:
        message = _("A title has at most %(limit)s characters.") % {"limit": TITLE_MAX}
        return input_refused(request, session, message)
    try:
        fork = session_fork(
            session=session, user=request.user, entry_id=entry_id, title=title or None
        )
    except UnknownEntry:
        raise Http404("no such entry") from None
    except StoreError as exc:
        return _refused(request, session, exc, entry_id=entry_id, kept=kept)
    url = reverse("studio-session", args=[fork.id])
    if not is_htmx(request):
        return redirect(url)
    response = HttpResponse(status=200)
    response["HX-Redirect"] = url
    return response


@login_required
@require_POST
def regenerate_view(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """Another reply to the prompt of ``entry_id``'s turn: a sibling branch; a run starts."""
    session = own_session(request, session_id, write=True)
    refused = _attempt(
        request,
        session,
        lambda: reply_regenerate(
            session=session,
            user=request.user,
            entry_id=entry_id,
            expected_leaf_id=_expected(request),
        ),
        entry_id=entry_id,
        not_applicable=_(
            "The reply to the first prompt cannot be drawn again in this session; fork "
            "into a new session from it instead."
        ),
    )
    if refused is not None:
        return refused
    return write_done(
        request, session, status=202, also=lambda: emptied_inspector_html(request, session)
    )


@login_required
@require_POST
def resend_view(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """The prompt ``entry_id`` edited and sent again: a new branch at its parent."""
    session = own_session(request, session_id, write=True)
    text = request.POST.get("text", "")
    kept = {"text": text}
    if not text.strip():
        return input_refused(request, session, _("Write the prompt to send."))
    refused = _attempt(
        request,
        session,
        lambda: prompt_resend(
            session=session,
            user=request.user,
            entry_id=entry_id,
            text=text,
            expected_leaf_id=_expected(request),
        ),
        entry_id=entry_id,
        not_applicable=_(
            "Only a prompt after the first can be edited and sent again; fork into a new "
            "session to start over from the first."
        ),
        kept=kept,
    )
    if refused is not None:
        return refused
    return write_done(
        request, session, status=202, also=lambda: emptied_inspector_html(request, session)
    )


@login_required
@require_POST
def cherry_pick_view(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """The panel ``entry_id`` put on the active branch (not drawn or charged again)."""
    session = own_session(request, session_id, write=True)
    take_state = request.POST.get("take_state") in ("on", "true", "1")
    refused = _attempt(
        request,
        session,
        lambda: panel_cherry_pick(
            session=session,
            entry_id=entry_id,
            expected_leaf_id=_expected(request),
            take_state=take_state,
        ),
        entry_id=entry_id,
        not_applicable=_("Only a panel can be put on another branch."),
    )
    if refused is not None:
        return refused
    # the inspector stays on the turn picked from, so its other panels can follow
    return write_done(request, session, also=lambda: _inspector(request, session, entry_id))
