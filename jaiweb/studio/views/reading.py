"""The studio's chapters, reading state and "back to where I was" (issue 30).

Reading state is each viewer's own (``store/reading.py``): the tree region is one drawing
for every watcher, so the page asks for its viewer's unread branches apart
(``reading_view``) and puts the dots on the nodes it names. Chapters and "back" are writes
of the session, answered with the regions like any other.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from jaiweb.commands.sessions import chapter_clear, chapter_set, session_back
from jaiweb.store.errors import StoreError
from jaiweb.store.reading import path_read_mark, unread_branches
from jaiweb.studio import tree
from jaiweb.studio.selectors.rewinds import back_preview_of
from jaiweb.studio.views.access import own_session
from jaiweb.studio.views.answers import input_refused, write_done, write_refused
from journal.chapters import TITLE_MAX, BadChapter, title_check
from journal.errors import UnknownEntry


@login_required
@require_POST
def reading_view(request: HttpRequest, session_id: str) -> JsonResponse:
    """The viewer looks at the active path (its leaf's branch is read now) and gets the
    branches they have not opened: each one's head, its first entry off the active path
    (where the tree draws it) and the node that entry hangs from."""
    session = own_session(request, session_id)
    path_read_mark(user=request.user, session=session)
    unread = unread_branches(user=request.user, session=session)
    return JsonResponse(
        {
            "unread": [
                {"head_id": b.head_id, "start_id": b.start_id, "parent_id": b.parent_id or ""}
                for b in unread
            ]
        }
    )


@login_required
@require_safe
def unread_next_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """ "Next unread": a jump (``tree/jump.html``) to the first branch the viewer has not
    opened, the inspector opening on it (which reads it); an empty jump when all are read."""
    session = own_session(request, session_id)
    unread = unread_branches(user=request.user, session=session)
    if not unread:
        return HttpResponse('<div id="tree-jump" data-node=""></div>')
    start = unread[0].start_id
    node_id = tree.turn_node_of(session, start)
    ctx = {"session": session, "entry_id": start, "node_id": node_id}
    return render(request, "studio/tree/jump.html", ctx)


@login_required
@require_safe
def back_preview_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """What "back to where I was" rolls back, loaded when its preview is opened (the tree
    region draws the button alone, on every drawing)."""
    session = own_session(request, session_id)
    preview = back_preview_of(session=session)
    if preview is None:
        return HttpResponse("")
    ctx = {"preview": preview, "back": True, "session": session}
    return render(request, "studio/inspector/rewind-preview.html", ctx)


@login_required
@require_POST
def back_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """ "Back to where I was": a rewind to the leaf the latest rewind left."""
    session = own_session(request, session_id, write=True)
    expected = request.POST.get("expected_leaf_id") or None
    try:
        session_back(session=session, expected_leaf_id=expected)
    except UnknownEntry:
        raise Http404("no such entry") from None
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session)


@login_required
@require_POST
def chapter_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """Start a chapter at a node of the active branch (or rename it); with ``clear``, end
    the mark there instead."""
    session = own_session(request, session_id, write=True)
    entry_id = request.POST.get("entry_id", "")
    expected = request.POST.get("expected_leaf_id") or None
    try:
        if request.POST.get("clear"):
            chapter_clear(session=session, entry_id=entry_id, expected_leaf_id=expected)
        else:
            title = request.POST.get("title", "")
            try:
                title_check(title)
            except BadChapter:
                message = _("A chapter’s title has 1 to %(n)s characters, and not only spaces.") % {
                    "n": TITLE_MAX
                }
                return input_refused(request, session, message)
            chapter_set(session=session, entry_id=entry_id, title=title, expected_leaf_id=expected)
    except UnknownEntry:
        raise Http404("no such entry") from None
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session)
