"""One session's studio: the page, the folded parts of its tree and strip, the inspector."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from jaiweb.commands.status import session_status
from jaiweb.render.selectors import credits_view, wallet_balance
from jaiweb.render.services import MAX_REQUEST, PANEL_COST, credit_request_create
from jaiweb.store.reading import node_read_mark
from jaiweb.store.rows import index_of
from jaiweb.store.selectors import app_state_at, branch_rows, entry_get
from jaiweb.studio import tree
from jaiweb.studio.regions import studio_context
from jaiweb.studio.selectors.characters import characters_of
from jaiweb.studio.selectors.credits import credit_rows
from jaiweb.studio.selectors.forks import fork_origin
from jaiweb.studio.selectors.inspector import inspector_steps, node_labels_context, turn_prompt
from jaiweb.studio.selectors.reading import studio_reading
from jaiweb.studio.selectors.rewinds import rewind_preview_of
from jaiweb.studio.selectors.strip import strip_lettered, strip_view
from jaiweb.studio.views.access import is_htmx, own_session
from journal.errors import UnknownEntry
from journal.variants import choices_of


@login_required
@require_safe
@never_cache
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id)
    ctx = studio_context(session=session)
    ctx["max_prompt_chars"] = settings.JAIWEB_MAX_PROMPT_CHARS
    ctx["first_character"] = next(iter(ctx["characters"]), "")
    ctx["origin"] = fork_origin(session=session, viewer=request.user)
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
    session = own_session(request, session_id)
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
    session = own_session(request, session_id)
    before = request.GET.get("before")
    if not before:
        return HttpResponse(_("say which panel to load the panels before"), status=422)
    try:
        rows = branch_rows(session=session, lazy=True)
        state = app_state_at(session=session, rows=rows)
        strip = strip_view(rows, before=before, session=session, choices=choices_of(state))
    except UnknownEntry:
        raise Http404("no such panel on the active branch") from None
    strip = strip_lettered(strip, session=session, state=state)
    characters = characters_of(state)
    return render(
        request,
        "studio/strip/panels.html",
        {"session": session, "strip": strip, "characters": characters},
    )


@login_required
@require_safe
@never_cache
def read_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """The studio's Read mode: the active branch as its readers see it, in pages. The
    studio page asks for the pages alone (htmx) and swaps them in; the address opened by
    itself is a page of its own, with a way back to the studio. In the studio, the owner
    can move each panel earlier or later in the reading order."""
    session = own_session(request, session_id)
    ctx = {
        "session": session,
        "reading": studio_reading(session=session),
        "arrange": is_htmx(request) and session.owner_id == request.user.pk,
    }
    template = "studio/reading/pages.html" if is_htmx(request) else "studio/read.html"
    return render(request, template, ctx)


@login_required
@require_safe
def entry_inspect(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """Show the inspector of a node: the turn that ends at ``entry_id``, step by step.

    The turn starts at the entry ``?from=`` names. Its steps are the prompt, the replies, the
    tool calls and their results, and the state changes. The inspector also shows the state
    after the turn, "continue from here" (right after the turn) with what it would roll back,
    and the branch tools: fork, regenerate, edit and resend, cherry-pick."""
    session = own_session(request, session_id)
    ctx = inspector_context(request, session, entry_id, request.GET.get("from"))
    # the viewer has opened this node's branch (store/reading.py): its unread dot goes
    node_read_mark(
        user=request.user, session=session, entry_ids=[entry_id, request.GET.get("from") or ""]
    )
    return render(request, "studio/inspector.html", ctx)


def inspector_context(
    request: HttpRequest,
    session,
    entry_id: str,
    from_id: str | None,
    *,
    kept: dict[str, str] | None = None,
) -> dict[str, Any]:
    """What the inspector of ``entry_id`` shows (404 for a node the session does not have);
    ``kept``: text typed into its forms that a refused write gives back (by form)."""
    try:
        entry_get(session=session, entry_id=entry_id)
    except UnknownEntry:
        raise Http404("no such entry") from None
    path = branch_rows(session=session, leaf_id=entry_id, lazy=True)  # root → this node
    turn = tree.turn_entries(path, from_id)
    active = branch_rows(session=session, lazy=True)
    state = app_state_at(session=session, rows=path)
    leaf = active[-1].entry if active else None
    before = app_state_at(session=session, rows=path[: len(path) - len(turn)])
    steps = inspector_steps(turn, leaf_id=session.leaf_id or "", before=before)
    prompt = turn_prompt(turn)
    # continuing from the leaf, or from the node the leaf rewound to, does nothing
    is_leaf = leaf is not None and (
        leaf.id == entry_id or (leaf.type == "branch" and leaf.parent_id == entry_id)
    )
    owner = session.owner_id == request.user.pk
    return {
        "session": session,
        "entry_id": entry_id,
        "from_id": from_id or "",
        "timestamp": path[-1].entry.timestamp,
        "active": index_of(active, entry_id) is not None,
        "steps": steps[-INSPECTOR_STEPS:],
        "earlier_steps": max(0, len(steps) - INSPECTOR_STEPS),
        "leaf_id": session.leaf_id or "",
        "is_leaf": is_leaf,
        "characters": characters_of(state),
        "permission_mode": state.get("permission_mode", "ask"),
        "owner": owner,
        "can_continue": owner and session_status(session=session).state == "idle",
        # what "continue from here" rolls back (store.comparisons.rewind_preview_at, from
        # the paths read above)
        "preview": None
        if is_leaf
        else rewind_preview_of(session=session, target_rows=path, leaf_rows=active),
        # the turn's prompt, when it has one; the first of a session cannot be sent again
        "prompt_id": prompt.id if prompt is not None else "",
        "first_prompt": prompt is not None and prompt.parent_id is None,
        "has_reply": any(s.kind == "reply" for s in steps),
        "kept": kept or {},
        "max_prompt_chars": settings.JAIWEB_MAX_PROMPT_CHARS,
        # the balance by the regenerate button, whose reply may draw paid panels
        "balance": wallet_balance(user=session.owner_id),
        "panel_cost": PANEL_COST,
        # drawn with the rest, not fetched after it: a part that grows once the inspector
        # is on screen moves the buttons under it while the pointer is on its way
        **node_labels_context(session_id=session.id, entry_id=entry_id, can_edit=owner),
    }


INSPECTOR_STEPS = 60  # the last steps of a very long turn shown in the inspector


@login_required
@require_safe
def credits_history(request: HttpRequest) -> HttpResponse:
    """My credits: the balance, the monthly top-up, how to ask for more, and the ledger."""
    return render(request, "studio/credits.html", _credits_context(request))


def _credits_context(request: HttpRequest, **more: Any) -> dict[str, Any]:
    view = credits_view(user=request.user)
    return {
        "balance": view.balance,
        "credits": view,
        "panel_cost": PANEL_COST,
        "max_request": MAX_REQUEST,
        "ledger": credit_rows(user=request.user),
        **more,
    }


@login_required
@require_POST
def credits_ask(request: HttpRequest) -> HttpResponse:
    """Ask an admin for more credits: a request the recovery inbox lists. Asking again while
    one is open changes nothing (the open one stands)."""
    text = request.POST.get("amount", "").strip()
    message = request.POST.get("message", "")
    amount = int(text) if text.isdigit() and len(text) <= 6 else 0
    try:
        credit_request_create(user=request.user, amount=amount, message=message)
    except ValueError:
        error = _("Ask for 1 to %(max)s credits, with a message of at most 500 characters.") % {
            "max": MAX_REQUEST
        }
        context = _credits_context(request, ask_error=error, asked=text, message=message)
        return render(request, "studio/credits.html", context, status=422)
    return redirect(reverse("studio-credits") + "#ask-credits")


@require_safe
def ws_placeholder(request: HttpRequest, session_id: str) -> HttpResponse:
    """The live socket's address over plain HTTP: it only speaks websocket."""
    response = HttpResponse(_("This address only speaks websocket."), status=426)
    response["Upgrade"] = "websocket"
    return response
