"""The recovery inbox page (staff only): parked tool calls, their evidence, and the choice.

The decision itself is ``jaiweb.commands.inbox.inbox_resolve``; these views only show the
items, turn the form into its arguments, and tell the session and the runner afterwards.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from jaiweb.commands.inbox import InboxItem, SettledItem, inbox_items, settled_items
from jaiweb.commands.sessions import inbox_call_resolve
from jaiweb.inbox.forms import CreditDecisionForm, ResolveForm
from jaiweb.render.selectors import credit_requests_open
from jaiweb.render.services import (
    MAX_CREDITS,
    RequestDecided,
    credit_request_decline,
    credit_request_grant,
)
from jaiweb.store.errors import InvalidEntry, StoreError
from jaiweb.store.selectors import operation_get

IMAGE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
DONE = {
    "retry": gettext_lazy(
        "Retry recorded for call %(call)s of “%(title)s”: it is dispatched again under the "
        "same key."
    ),
    "confirmed": gettext_lazy(
        "Confirmed call %(call)s of “%(title)s”: its result is written and the run goes on."
    ),
    "failed": gettext_lazy(
        "Marked call %(call)s of “%(title)s” as failed: the agent is told its outcome is "
        "unknown and that it was not repeated."
    ),
}
GONE = gettext_lazy(
    "This call is not waiting in the inbox any more (someone else may have resolved it, or "
    "the run moved on); nothing was changed. Details: %(detail)s"
)


def staff_only(view):
    """Anonymous: to the login page. Logged in but not staff: 403, nothing else."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            if _is_htmx(request):  # a poll after logging out: send the whole page there
                response = HttpResponse(status=401)
                response["HX-Redirect"] = f"{resolve_url('login')}?next={resolve_url('inbox')}"
                return response
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


@dataclass
class Card:
    """One inbox item as the page shows it, with what the admin typed (after an error)."""

    item: InboxItem
    dom_id: str
    args: str = ""
    render_job: dict[str, Any] | None = None
    render_job_result: str = ""
    render_pick: str = ""
    posts_with_key: list[dict[str, Any]] = field(default_factory=list)
    posts_around: list[dict[str, Any]] = field(default_factory=list)
    other_evidence: str = ""
    reason: str = ""
    result: str = ""
    pick: str = ""
    errors: list[str] = field(default_factory=list)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _post_pick(post: dict[str, Any]) -> dict[str, Any]:
    """What publish_panel returns for this post, offered as the confirm result."""
    return {
        "content": f"published to the feed as {post['post_id']}",
        "details": {"post_id": post["post_id"], "image_id": post["image_id"]},
    }


def _render_pick(job: dict[str, Any] | None) -> dict[str, Any] | None:
    """What generate_image returns for a finished render, offered as the confirm result."""
    if not job or job["status"] != "succeeded" or not isinstance(job["result"], dict):
        return None
    return {"content": "panel rendered", "details": {**job["result"], "cost": job["charged"]}}


def _card(item: InboxItem) -> Card:
    digest = hashlib.sha256(f"{item.operation_id}\x00{item.tool_call_id}".encode()).hexdigest()
    card = Card(item=item, dom_id="inbox-" + digest[:12])
    if item.tool_call_id is None:
        return card
    card.args = _pretty(item.args)
    evidence = dict(item.evidence)
    matches: list[dict[str, Any]] = []
    if "render_job" in evidence:
        card.render_job = evidence.pop("render_job")
        if card.render_job:
            card.render_job_result = _pretty(card.render_job["result"])
        pick = _render_pick(card.render_job)
        if pick:
            card.render_pick = json.dumps(pick, ensure_ascii=False)
            matches.append(pick)
    if "feed_posts_with_this_key" in evidence:
        for post in evidence.pop("feed_posts_with_this_key"):
            pick = _post_pick(post)
            card.posts_with_key.append({**post, "pick": json.dumps(pick, ensure_ascii=False)})
            matches.append(pick)
    if "feed_posts_around_then" in evidence:
        seen = {p["post_id"] for p in card.posts_with_key}
        for post in evidence.pop("feed_posts_around_then"):
            if post["post_id"] not in seen:
                pick = json.dumps(_post_pick(post), ensure_ascii=False)
                card.posts_around.append({**post, "pick": pick})
    if evidence:
        card.other_evidence = _pretty(evidence)
    if len(matches) == 1:  # exactly one piece of evidence under this key: the likely result
        card.result = _pretty(matches[0])
    return card


def _cards() -> list[Card]:
    return [_card(item) for item in inbox_items()]


@dataclass
class SettledCard:
    """A call the reconciler settled, as the page shows it: the evidence as rows."""

    item: SettledItem
    kind: str
    rows: list[tuple[str, str]]
    image_id: str = ""


def _settled_card(item: SettledItem) -> SettledCard:
    evidence = dict(item.evidence)
    kind = str(evidence.pop("kind", ""))
    image_id = evidence.get("image_id") if kind == "render_job" else None
    if not isinstance(image_id, str) or not IMAGE_ID.fullmatch(image_id):
        image_id = None  # evidence read from an imported file may name anything: no link
    rows = [
        (name, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for name, value in sorted(evidence.items())
    ]
    return SettledCard(item=item, kind=kind, rows=rows, image_id=str(image_id or ""))


def _settled() -> list[SettledCard]:
    return [_settled_card(item) for item in settled_items()]


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


@never_cache
@require_safe
@staff_only
def page(request: HttpRequest) -> HttpResponse:
    """The inbox: every parked call, oldest first; the users' credit requests; then what
    recovery settled itself."""
    return render(request, "inbox/page.html", _page_context())


def _page_context(**more: Any) -> dict[str, Any]:
    return {
        "cards": _cards(),
        "settled": _settled(),
        "credit_requests": credit_requests_open(),
        "max_credits": MAX_CREDITS,
        **more,
    }


@require_POST
@staff_only
def credits_decide(request: HttpRequest, request_id: int) -> HttpResponse:
    """Grant or decline one credit request. A grant is one ledger entry keyed by the
    request: a second click, or another admin's, finds it granted and adds nothing (409)."""
    form = CreditDecisionForm(request.POST)
    if not form.is_valid():
        errors = " ".join(e for errs in form.errors.values() for e in errs)
        return render(request, "inbox/page.html", _page_context(notice=errors), status=422)
    data, by = form.cleaned_data, request.user.get_username()
    try:
        if data["action"] == "grant":
            entry, granted_now = credit_request_grant(
                request_id=request_id, amount=data["amount"], by=by, reason=data["reason"]
            )
            if not granted_now:
                raise RequestDecided(request_id)
            done = _("Granted %(amount)s credits: the balance is now %(balance)s.") % {
                "amount": entry.amount,
                "balance": entry.balance_after,
            }
        else:
            credit_request_decline(request_id=request_id, by=by, reason=data["reason"])
            done = _("Declined the request; no credits moved.")
    except RequestDecided:
        notice = _("This request was decided already; nothing was changed.")
        return render(request, "inbox/page.html", _page_context(notice=notice), status=409)
    messages.success(request, done)
    return redirect("inbox")


@never_cache
@require_safe
@staff_only
def item_list(request: HttpRequest) -> HttpResponse:
    """The list alone, for the page's polling."""
    return render(request, "inbox/list.html", {"cards": _cards()})


@never_cache
@require_safe
@staff_only
def count(request: HttpRequest) -> HttpResponse:
    """How many calls wait now, shown while the list is paused for typing."""
    return render(request, "inbox/count.html", {"count": len(inbox_items())})


@require_POST
@staff_only
def resolve(request: HttpRequest, operation_id: str, tool_call_id: str) -> HttpResponse:
    """Retry, confirm or mark failed one parked call; 409 when it is not parked any more."""
    form = ResolveForm(request.POST)
    if not form.is_valid():
        errors = [e for errs in form.errors.values() for e in errs]
        return _refused(request, operation_id, tool_call_id, errors)
    data = form.cleaned_data
    try:
        op = operation_get(operation_id=operation_id)
        inbox_call_resolve(
            user=request.user,
            operation=op,
            tool_call_id=tool_call_id,
            resolution=data["resolution"],
            reason=data["reason"],
            result=data["result_value"],
        )
    except InvalidEntry as exc:
        return _refused(request, operation_id, tool_call_id, [str(exc)])
    except StoreError as exc:
        return _gone(request, GONE % {"detail": exc})
    done = DONE[data["resolution"]] % {"call": tool_call_id, "title": op.session.title}
    if not _is_htmx(request):
        messages.success(request, done)
        return redirect("inbox")
    return render(
        request,
        "inbox/resolved.html",
        {"message": done, "level": "success", "cards": _cards()},
    )


def _refused(
    request: HttpRequest, operation_id: str, tool_call_id: str, errors: list[str]
) -> HttpResponse:
    """400: the item again, with what was typed and why it was refused."""
    cards = _cards()
    card = next(
        (
            c
            for c in cards
            if (c.item.operation_id, c.item.tool_call_id) == (operation_id, tool_call_id)
        ),
        None,
    )
    if card is None:
        detail = _("call %(call)s is not waiting") % {"call": repr(tool_call_id)}
        return _gone(request, GONE % {"detail": detail})
    card.reason = request.POST.get("reason", "")
    card.result = request.POST.get("result", card.result)
    card.pick = request.POST.get("pick", "")
    card.errors = errors
    if _is_htmx(request):
        return render(request, "inbox/item.html", {"card": card}, status=400)
    return render(request, "inbox/page.html", _page_context(cards=cards), status=400)


def _gone(request: HttpRequest, message: str) -> HttpResponse:
    """409: the call is not parked; say so, and show the list as it is now."""
    cards = _cards()
    context = {"message": message, "level": "error", "cards": cards}
    if _is_htmx(request):
        return render(request, "inbox/resolved.html", context, status=409)
    return render(request, "inbox/page.html", _page_context(notice=message), status=409)
