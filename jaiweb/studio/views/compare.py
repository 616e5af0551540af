"""Two branches side by side: /sessions/<id>/compare?left=<node>&right=<node>."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from jaiweb.store.selectors import entry_exists
from jaiweb.studio.comparisons import branch_ends, compare_view
from jaiweb.studio.views.access import own_session
from journal.errors import UnknownEntry
from journal.jsonvalues import check_text


def _node(value: str) -> str:
    """A node id from the address, or ``UnknownEntry``: no stored id is longer than 128
    characters or holds a NUL (which PostgreSQL refuses in a query)."""
    try:
        check_text(value)
    except ValueError:
        raise UnknownEntry(value) from None
    if len(value) > 128:
        raise UnknownEntry(value)
    return value


@login_required
@require_safe
def compare_page(request: HttpRequest, session_id: str) -> HttpResponse:
    """Both branches from where they part (their panels, prompts, state and spending), and
    a picker of the session's branch ends; without both nodes, the picker and what to do."""
    session = own_session(request, session_id)
    left, right = request.GET.get("left", ""), request.GET.get("right", "")
    whole = request.GET.get("all") == "1"
    comparison = None
    try:
        if left and right:
            comparison = compare_view(
                session=session, left_id=_node(left), right_id=_node(right), whole=whole
            )
        else:
            for given in (left, right):
                if given and not entry_exists(session=session, entry_id=_node(given)):
                    raise UnknownEntry(given)
    except UnknownEntry:
        raise Http404("no such node in this session") from None
    ends = branch_ends(session=session)
    listed = {end.entry_id for end in ends}
    ctx = {
        "session": session,
        "comparison": comparison,
        "ends": ends,
        "left_id": left,
        "right_id": right,
        "whole": whole,
        # a node picked elsewhere (the inspector) that is no branch end gets its own option
        "extra_ids": [n for n in dict.fromkeys((left, right)) if n and n not in listed],
    }
    return render(request, "studio/compare.html", ctx)
