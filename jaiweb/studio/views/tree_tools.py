"""Tools on the tree: what a branch spent, labels and bookmarks on a node, search.

Labels live beside the journal (``store.Label``): adding or removing one writes no entry,
so it moves no leaf and survives every rewind. A refused label or search answers with its
refusal's status and a sentence in the viewer's language; nothing is written.
"""

from __future__ import annotations

import re

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST, require_safe

from jaiweb.commands.branches import session_label_add, session_label_remove
from jaiweb.store.comparisons import effects_under
from jaiweb.store.errors import InvalidEntry, LabelNotFound
from jaiweb.store.labels import TEXT_MAX
from jaiweb.store.search import QUERY_MAX, session_search
from jaiweb.store.selectors import children_rows, entry_exists
from jaiweb.studio import tree
from jaiweb.studio.regions import regions_header
from jaiweb.studio.selectors.inspector import node_labels_context
from jaiweb.studio.views.access import own_session
from jaiweb.studio.views.answers import REGIONS_HEADER
from journal.branches import NO_EFFECTS
from journal.errors import UnknownEntry

SPENT_NODES = 50  # branches one spent badge may sum (a fork's "+n" has a few)

WHERE = {
    "prompt": gettext_lazy("prompt"),
    "narration": gettext_lazy("narration"),
    "state": gettext_lazy("characters"),
    "summary": gettext_lazy("summary"),
    "label": gettext_lazy("label"),
}


# --- what a branch spent ------------------------------------------------------------------


@login_required
@require_safe
def tree_spent(request: HttpRequest, session_id: str) -> HttpResponse:
    """Show the credits spent under some branches, every branch below them included.

    The branches are a fork's other branches (``?forks=<node>&except=<its line child>``), or
    branches named by where they start (``?under=<entry>``, repeated). A badge asks for this
    once it is in view, so the page never reads a folded subtree."""
    session = own_session(request, session_id)
    if "forks" in request.GET:
        fork, kept = request.GET["forks"], request.GET.get("except", "")
        try:
            under = [r.entry_id for r in children_rows(session=session, entry_id=fork)]
        except UnknownEntry:
            raise Http404("no such entry") from None
        under = [entry_id for entry_id in under if entry_id != kept]
    else:
        under = request.GET.getlist("under")
    if not under or len(under) > SPENT_NODES:
        return HttpResponse(_("say which branches to add up"), status=422)
    total = NO_EFFECTS
    try:
        for entry_id in under:
            total += effects_under(session=session, node_id=entry_id)
    except UnknownEntry:
        raise Http404("no such entry") from None
    return render(request, "studio/tree/spent.html", {"effects": total})


# --- labels and bookmarks -----------------------------------------------------------------


def _labels_part(request, session, entry_id: str, *, error: str = "", status: int = 200):
    ctx = {
        "session": session,
        "entry_id": entry_id,
        **node_labels_context(
            session_id=session.id,
            entry_id=entry_id,
            can_edit=session.owner_id == request.user.pk,
        ),
        "error": error,
    }
    return render(request, "studio/inspector/labels-part.html", ctx, status=status)


def _known_node(session, entry_id: str) -> None:
    if not entry_exists(session=session, entry_id=entry_id):
        raise Http404("no such entry")


@login_required
@require_safe
def node_labels(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """A node's labels and bookmarks, with a form to add one: the part the inspector draws
    with the rest, read alone."""
    session = own_session(request, session_id)
    _known_node(session, entry_id)
    return _labels_part(request, session, entry_id)


def _changed(request, session, entry_id: str) -> HttpResponse:
    """After a label changed: the node's part, and the tree redrawn with its chips (out of
    band), named with its digest for the page's socket; the command told the session's
    watchers."""
    response = _labels_part(request, session, entry_id)
    ctx = {
        "session": session,
        "leaf_id": session.leaf_id or "",
        "tree_items": tree.active_path_view(session),
        "oob": True,
    }
    tree_html = render_to_string("studio/regions/tree.html", ctx)
    response.content += tree_html.encode()
    response[REGIONS_HEADER] = regions_header({"tree": tree_html})
    return response


@login_required
@require_POST
def node_label_add(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    _known_node(session, entry_id)
    text = request.POST.get("text", "")
    kind = request.POST.get("kind", "label")
    if not text.strip():
        error = _("Write the label's words (1 to %(n)s characters).") % {"n": TEXT_MAX}
        return _labels_part(request, session, entry_id, error=error, status=422)
    if len(text.strip()) > TEXT_MAX:
        error = _("A label has at most %(n)s characters; this one has %(len)s.") % {
            "n": TEXT_MAX,
            "len": len(text.strip()),
        }
        return _labels_part(request, session, entry_id, error=error, status=422)
    if kind not in ("label", "bookmark"):
        return _labels_part(
            request, session, entry_id, error=_("A label or a bookmark?"), status=422
        )
    try:
        session_label_add(session=session, entry_id=entry_id, text=text, kind=kind)
    except InvalidEntry:  # what check_text refuses: control characters and the like
        error = _("These words cannot be kept as a label.")
        return _labels_part(request, session, entry_id, error=error, status=422)
    except UnknownEntry:
        raise Http404("no such entry") from None
    return _changed(request, session, entry_id)


@login_required
@require_POST
def node_label_remove(
    request: HttpRequest, session_id: str, entry_id: str, label_id: int
) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    _known_node(session, entry_id)
    try:
        session_label_remove(session=session, label_id=label_id)
    except LabelNotFound:
        raise Http404("no such label") from None
    return _changed(request, session, entry_id)


# --- search -------------------------------------------------------------------------------


def _marked(text: str, query: str) -> dict[str, str]:
    """A hit's text split around the match, so the template escapes each part and marks
    the middle (case-blind, as the search is)."""
    found = re.search(re.escape(query), text, re.IGNORECASE)
    if found is None:  # a match only case folding finds (ß and ss): nothing marked
        return {"before": text, "match": "", "after": ""}
    a, b = found.span()
    return {"before": text[:a], "match": text[a:b], "after": text[b:]}


@login_required
@require_safe
def tree_search(request: HttpRequest, session_id: str) -> HttpResponse:
    """The whole tree searched, abandoned branches too; each hit jumps to its node."""
    session = own_session(request, session_id)
    query = request.GET.get("q", "").strip()
    ctx: dict = {"session": session, "query": query}
    if not query:
        ctx["error"] = _("Type a word to look for in the whole tree.")
        return render(request, "studio/tree/search.html", ctx, status=422)
    if len(query) > QUERY_MAX:
        ctx["error"] = _("A search has at most %(n)s characters.") % {"n": QUERY_MAX}
        return render(request, "studio/tree/search.html", ctx, status=422)
    try:
        hits = session_search(session=session, query=query)
    except InvalidEntry:  # what check_text refuses
        ctx["error"] = _("These words cannot be searched for.")
        return render(request, "studio/tree/search.html", ctx, status=422)
    ctx["hits"] = [
        {"entry_id": h.entry_id, "where": h.where, "where_label": WHERE[h.where]}
        | _marked(h.text, query)
        for h in hits
    ]
    return render(request, "studio/tree/search.html", ctx)


@login_required
@require_safe
def tree_jump(request: HttpRequest, session_id: str) -> HttpResponse:
    """Where a hit is: the node of its turn (the page scrolls to it when it is drawn), and
    the inspector opened on it."""
    session = own_session(request, session_id)
    entry_id = request.GET.get("entry", "")
    try:
        node_id = tree.turn_node_of(session, entry_id)
    except UnknownEntry:
        raise Http404("no such entry") from None
    ctx = {"session": session, "entry_id": entry_id, "node_id": node_id}
    return render(request, "studio/tree/jump.html", ctx)
