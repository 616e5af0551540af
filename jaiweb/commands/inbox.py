"""The recovery inbox: parked calls with their evidence, and the admin's three choices.

A call is parked when it may or may not have had its effect, cannot safely be run again
(at most once), and what the other side recorded under its key does not decide it (when
it does, recovery's reconciler settles the call itself). The inbox shows what both sides
know — the call, its key, when it was dispatched, and what the render service or the
feed received under that key — and records the admin's choice, with who and why, as a
``tool_resolved`` fact. It also lists what the reconciler settled, to look back at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.core.exceptions import PermissionDenied

from jaiweb.feed.models import FeedPost
from jaiweb.render.selectors import render_job_lookup
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_reading, reconciler_resolutions
from jaiweb.store.services import operation_tool_resolve
from journal.errors import CorruptedOperationLog


@dataclass
class InboxItem:
    operation_id: str
    session_id: str
    session_title: str
    owner: str
    attention: str
    parked_at: Any
    claims: int
    tool_call_id: str | None = None  # None: the operation needs attention as a whole
    tool_name: str = ""
    args: dict = field(default_factory=dict)
    idempotency_key: str = ""
    policy: str = ""
    dispatch_attempt: int = 0
    dispatched_at: Any = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class SettledItem:
    """A call recovery settled itself from evidence: what it decided, why, and from what."""

    operation_id: str
    session_id: str
    session_title: str
    owner: str
    tool_call_id: str
    tool_name: str
    resolution: str
    reason: str
    evidence: dict[str, Any]
    settled_at: Any


def settled_items(*, limit: int = 50) -> list[SettledItem]:
    """The latest calls the reconciler settled, newest first."""
    return [
        SettledItem(
            operation_id=op.id,
            session_id=op.session_id,
            session_title=op.session.title,
            owner=op.session.owner.get_username(),
            tool_call_id=resolved.tool_call_id,
            tool_name=tool_name,
            resolution=resolved.resolution,
            reason=resolved.reason,
            evidence=dict(resolved.evidence or {}),
            settled_at=resolved.timestamp,
        )
        for op, resolved, tool_name in reconciler_resolutions(limit=limit)
    ]


def _evidence(tool_name: str, key: str, dispatched_at) -> dict[str, Any]:
    """What the other side knows about this call."""
    if tool_name == "generate_image":
        return {"render_job": render_job_lookup(key=key)}
    if tool_name == "publish_panel":
        window = (dispatched_at - timedelta(minutes=10), dispatched_at + timedelta(minutes=10))
        posts = FeedPost.objects.filter(received_at__range=window).order_by("received_at")
        return {
            "feed_posts_with_this_key": [_post(p) for p in posts if p.idempotency_key == key],
            "feed_posts_around_then": [_post(p) for p in posts[:20]],
        }
    return {}


def _post(post: FeedPost) -> dict[str, Any]:
    return {
        "post_id": post.id,
        "image_id": post.image_id,
        "caption": post.caption,
        "received_at": post.received_at,
        "key": post.idempotency_key,
    }


def inbox_items() -> list[InboxItem]:
    """Every parked call (or parked operation), oldest first."""
    items: list[InboxItem] = []
    parked = (
        Operation.objects.filter(outcome__isnull=True, parked_at__isnull=False)
        .select_related("session", "session__owner")
        .order_by("parked_at", "id")
    )
    for op in parked:
        base = dict(
            operation_id=op.id,
            session_id=op.session_id,
            session_title=op.session.title,
            owner=op.session.owner.get_username(),
            attention=op.attention,
            parked_at=op.parked_at,
            claims=op.attempts,
        )
        try:
            reading = operation_reading(operation_id=op.id, session=op.session)
            log, verdict = reading.log, reading.verdict()
        except CorruptedOperationLog:
            items.append(InboxItem(**base))
            continue
        if verdict.status != "indeterminate_tool":
            items.append(InboxItem(**base))
            continue
        for open_call in verdict.dispatches:
            t1 = log.calls[open_call.tool_call_id].dispatch
            items.append(
                InboxItem(
                    **base,
                    tool_call_id=t1.tool_call_id,
                    tool_name=t1.tool_name,
                    args=t1.args,
                    idempotency_key=t1.idempotency_key,
                    policy=t1.policy,
                    dispatch_attempt=t1.dispatch_attempt,
                    dispatched_at=t1.timestamp,
                    evidence=_evidence(t1.tool_name, t1.idempotency_key, t1.timestamp),
                )
            )
    return items


def inbox_resolve(
    *,
    user: Any,
    operation_id: str,
    tool_call_id: str,
    resolution: str,
    reason: str,
    result: dict[str, Any] | None = None,
) -> None:
    """Staff only. ``result`` (for ``confirmed``): ``content`` and ``details`` of the result."""
    if not getattr(user, "is_staff", False):
        raise PermissionDenied("only staff resolve calls in the recovery inbox")
    result = result or {}
    operation_tool_resolve(
        operation_id=operation_id,
        tool_call_id=tool_call_id,
        resolution=resolution,
        by=user.get_username(),
        reason=reason,
        content=str(result.get("content", "")),
        details=result.get("details") if isinstance(result.get("details"), dict) else None,
    )
