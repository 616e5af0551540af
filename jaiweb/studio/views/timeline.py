"""The timeline page: the whole journal replayed in append order as a slider over the tree.

The page gets the whole timeline once, as compact JSON (``journal.timeline``), and draws
each position itself: a position is a prefix of what the log made, so moving the slider
changes only what differs between two positions, with no request per position. A
10,000-entry session is ~400 KB of JSON (bench/timeline.py); past ``TIMELINE_ENTRIES``
the page replays the first that many entries, and says so.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from jaiweb.studio.labels import TAGS, TOOLS
from jaiweb.studio.selectors.timeline import timeline_of
from jaiweb.studio.views.access import own_session

TIMELINE_ENTRIES = 20_000  # entries one page replays at most (the first ones)


def _words() -> dict[str, object]:
    """What the page's script says, in the viewer's language."""
    return {
        "what": {
            "you": _("you: %(text)s"),
            "call": _("the director asks to %(tool)s"),
            "reply": _("the director answered"),
            "stopped": _("the run was stopped"),
            "failed": _("the run failed"),
            "panel": _("panel drawn"),
            "published": _("panel published"),
            "tool": _("done: %(tool)s"),
            "tool_failed": _("failed: %(tool)s"),
            "characters": _("characters changed"),
            "mode": _("permission mode changed"),
            "state": _("state written again, unchanged"),
            "rewind": _("went back to %(text)s"),
            "summary": _("the story so far was summarised"),
        },
        "step": _("Step %(n)s of %(total)s"),
        "tags": {tag: str(label) for tag, label in TAGS.items()},
        "tools": {tool: str(label) for tool, label in TOOLS.items()},
    }


def _position(value: str | None, count: int) -> int:
    """``?at=``: a whole number 1 … count (default: the end)."""
    if value is None:
        return count
    if count == 0:
        raise ValueError(_("This session has no entries yet: there is no position to show."))
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= count:
        raise ValueError(_("A position is a whole number from 1 to %(count)s.") % {"count": count})
    return int(value)


@login_required
@require_safe
@never_cache
def timeline_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id)
    replayed = min(session.entry_count, TIMELINE_ENTRIES)
    try:
        position = _position(request.GET.get("at"), replayed)
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    ctx = {
        "session": session,
        # the first ``replayed`` entries, whatever is appended while they are read
        "timeline": timeline_of(session=session, count=replayed),
        "words": _words(),
        "position": position,
        "replayed": replayed,
        "entry_count": session.entry_count,
        "capped": session.entry_count > replayed,
    }
    return render(request, "studio/timeline.html", ctx)
