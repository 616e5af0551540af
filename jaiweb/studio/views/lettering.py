"""The comic's layer in the studio: a panel's lettering editor, and the page layout.

Clicking a panel's caption or one of its bubbles opens the editor under it; saving it
appends an ``app_state`` entry (no drawing, no charge) and the regions come back out of
band, as for every hand edit of the state (``answers``).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from jaiweb.comic.selectors import panel_layer, panel_lettering_at
from jaiweb.comic.services import page_layout_set, panel_lettering_set, panel_move
from jaiweb.store.errors import InvalidEntry, StoreError
from jaiweb.studio.views.access import own_session
from jaiweb.studio.views.answers import input_refused, write_done, write_refused
from journal.errors import UnknownEntry
from journal.lettering import BUBBLES_MAX, CAPTION_MAX, SPEECH_MAX
from journal.pages import Lettering

CLOSED_EDITOR = '<div id="lettering-editor" class="lettering-editor" hx-swap-oob="true"></div>'


def _place(raw: str, field: str) -> float | None:
    """A place typed in percent, as the fraction the state keeps."""
    if not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidEntry(f"{field}: give a number from 0 to 100") from None
    if not 0 <= value <= 100:
        raise InvalidEntry(f"{field}: give a number from 0 to 100")
    return value / 100


def _edit_of(post, current: dict) -> dict:
    """The edit a submitted form asks for: the caption (left out when it had none and
    still has none) and every bubble in order."""
    edit: dict = {}
    caption = post.get("caption", "")
    if caption.strip() or current["caption"].strip():
        edit["caption"] = caption
    speech = []
    for index in range(BUBBLES_MAX):
        if f"speech-{index}-text" not in post:
            break
        speech.append(
            {
                "character": post.get(f"speech-{index}-character", ""),
                "text": post.get(f"speech-{index}-text", ""),
                "x": _place(post.get(f"speech-{index}-x", ""), f"speech.{index}.x"),
                "y": _place(post.get(f"speech-{index}-y", ""), f"speech.{index}.y"),
            }
        )
    if speech or current["speech"]:
        edit["speech"] = speech
    return edit


@login_required
@require_http_methods(["GET", "POST"])
def lettering_view(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """GET: the editor of a panel's words on the active branch. POST: save them."""
    session = own_session(request, session_id, write=request.method == "POST")
    if len(entry_id) > 64:
        raise Http404("no such panel")
    try:
        current = panel_lettering_at(session=session, entry_id=entry_id)
    except UnknownEntry:
        raise Http404("no such panel on the active branch") from None
    if request.method == "GET" and request.GET.get("close"):
        return HttpResponse("")
    if request.method == "GET":
        lettering = Lettering(
            current["caption"],
            tuple((b["character"], b["text"]) for b in current["speech"]),
            tuple(
                None if b["x"] is None or b["y"] is None else (b["x"], b["y"])
                for b in current["speech"]
            ),
        )
        context = {
            "session": session,
            "entry_id": entry_id,
            "layer": panel_layer(lettering, edited=current["edited"]),
            "leaf_id": session.leaf_id or "",
            "caption_max": CAPTION_MAX,
            "speech_max": SPEECH_MAX,
            "opened": request.GET.get("from", "caption")[:20],
            "number": current["number"],
        }
        return render(request, "studio/strip/lettering-editor.html", context)
    try:
        panel_lettering_set(
            session=session,
            entry_id=entry_id,
            edit=_edit_of(request.POST, current),
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except UnknownEntry:
        raise Http404("no such panel on the active branch") from None
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session, also=lambda: CLOSED_EDITOR)  # saved: the editor closes


@login_required
@require_POST
def page_layout_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """Choose the page layout (``layout``) the exports and Read mode use. The reading
    order is rearranged in Read mode (``panel_move_view``) and through the API
    (``POST /api/v1/sessions/{id}/page``)."""
    session = own_session(request, session_id, write=True)
    try:
        page_layout_set(
            session=session,
            layout=request.POST.get("layout", ""),
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session)


MOVES = {"earlier": -1, "later": 1}


@login_required
@require_POST
def panel_move_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """Move a panel (``entry_id``) one place ``earlier`` or ``later`` in the reading order
    (``move``), from Read mode: free, and it rolls back with a rewind."""
    session = own_session(request, session_id, write=True)
    step = MOVES.get(request.POST.get("move", ""))
    if step is None:
        return input_refused(request, session, _("Say which way to move the panel."))
    try:
        panel_move(
            session=session,
            entry_id=request.POST.get("entry_id", ""),
            step=step,
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except UnknownEntry:
        raise Http404("no such panel on the active branch") from None
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session)
