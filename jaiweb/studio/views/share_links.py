"""The share panel of the studio: make a read-only link to a branch, list them, revoke one.

The owner manages the links; staff may see the list (never a link: only its hash is kept)
and nothing more; anyone else gets 404. HTMX requests get the panel's body back; a plain
form post gets the panel as a page of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from jaiweb.store.errors import ShareLinkNotFound
from jaiweb.store.shares import share_link_create, share_link_revoke, share_links_of
from jaiweb.studio.comparisons import last_prompts
from jaiweb.studio.views.access import is_htmx, own_session
from journal.errors import UnknownEntry
from journal.jsonvalues import check_text


@dataclass(frozen=True, slots=True)
class LinkRow:
    id: int
    leaf_id: str
    prompt: str  # the last prompt of the branch it shows
    created_at: datetime
    revoked_at: datetime | None


def _panel(
    request: HttpRequest, session, *, made_url: str = "", error: str = "", status: int = 200
) -> HttpResponse:
    shares = share_links_of(session_id=session.id)[::-1]  # the newest first
    prompts = last_prompts(session=session, node_ids=[s.leaf_id for s in shares])
    links = [
        LinkRow(s.id, s.leaf_id, prompts[s.leaf_id], s.created_at, s.revoked_at) for s in shares
    ]
    ctx = {
        "session": session,
        "links": links,
        "made_url": made_url,
        "error": error,
        "can_manage": session.owner_id == request.user.pk,
    }
    template = "studio/share-body.html" if is_htmx(request) else "studio/share-links.html"
    response = render(request, template, ctx, status=status)
    response["Cache-Control"] = "private, no-store"  # a made link is shown once
    return response


@login_required
@require_safe
@never_cache
def share_links_view(request: HttpRequest, session_id: str) -> HttpResponse:
    return _panel(request, own_session(request, session_id))


@login_required
@require_POST
def share_link_create_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """A link to root → ``leaf_id`` (left out: the leaf now), its address shown this once."""
    session = own_session(request, session_id, write=True)
    leaf = request.POST.get("leaf_id") or None
    if leaf is None and session.leaf_id is None:
        error = _("Nothing to share yet: the session has no turn.")
        return _panel(request, session, error=error, status=422)
    try:
        if leaf is not None:
            check_text(leaf)
        _share, token = share_link_create(session_id=session.id, leaf_id=leaf)
    except (UnknownEntry, ValueError):
        error = _("That node is not in this session; nothing was shared.")
        return _panel(request, session, error=error, status=422)
    url = request.build_absolute_uri(reverse("shared-branch", args=[token]))
    return _panel(request, session, made_url=url, status=201)


@login_required
@require_POST
def share_link_revoke_view(request: HttpRequest, session_id: str, link_id: int) -> HttpResponse:
    """The link opens nothing from now on: it answers 404, as one that never was."""
    session = own_session(request, session_id, write=True)
    if link_id >= 2**63:  # no row has such an id; SQLite cannot even be asked
        raise Http404("no such share link")
    try:
        share_link_revoke(session_id=session.id, link_id=link_id)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    return _panel(request, session)
