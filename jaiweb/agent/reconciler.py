"""Recovery's reconciler: it settles the open at-most-once calls that evidence decides.

Before an operation is parked for an admin, each of its open at-most-once calls is looked
up where its effect would be recorded: the render service's job under the call's key
(generate_image), the feed's posts with that key (publish_panel). When that settles the
call (``journal.reconcile.settle_call``), the result entry and a ``tool_resolved`` record
by the reconciler, with the evidence, commit in one transaction through the same service
an admin's decision uses; only the calls the evidence leaves undecided are parked.
A recovery pass also looks again at operations parked earlier, so a render that was still
in progress then is settled once it has ended.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from jaiweb.feed.selectors import feed_posts_with_key
from jaiweb.render.selectors import render_job_lookup
from jaiweb.store.errors import InvalidEntry, OperationStateConflict, StoreError
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import operation_reading
from jaiweb.store.services import operation_tool_resolve
from journal.entries import MessageEntry
from journal.errors import JournalError
from journal.reconcile import (
    EVIDENCE_OF_TOOL,
    RECONCILER,
    FeedPostSeen,
    KeyEvidence,
    RenderJobSeen,
    Settled,
    Undecided,
    settle_call,
)
from journal.records import ToolDispatched

log = logging.getLogger(__name__)


@dataclass
class Reconciled:
    """What the reconciler did with some open calls: settled (with the result entries it
    wrote) and left for a person."""

    settled: list[tuple[Settled, MessageEntry]] = field(default_factory=list)
    undecided: list[tuple[ToolDispatched, Undecided]] = field(default_factory=list)

    def summary(self) -> str:
        """The calls settled, in a few words."""
        return ", ".join(
            f"{s.tool_call_id} {s.resolution} from its {s.evidence['kind'].replace('_', ' ')}"
            for s, _ in self.settled
        )


def key_evidence(dispatch: ToolDispatched, session: ComicSession, now: datetime) -> KeyEvidence:
    """What the render service or the feed recorded under the call's key."""
    kind = EVIDENCE_OF_TOOL.get(dispatch.tool_name)
    key = dispatch.idempotency_key
    if kind == "render_job":
        job = render_job_lookup(key=key)
        if job is None:
            return KeyEvidence()
        result = job["result"] if isinstance(job["result"], dict) else {}
        params = job["params"] if isinstance(job["params"], dict) else {}
        prompt = params.get("prompt")
        lease = job["lease_expires_at"]
        return KeyEvidence(
            render_job=RenderJobSeen(
                key=job["key"],
                status=job["status"],
                image_id=result.get("image_id"),
                content_type=result.get("content_type"),
                backend=str(result.get("backend") or job["backend"]),
                charged=job["charged"],
                error=job["error"],
                lease_live=job["status"] == "in_progress" and lease is not None and lease > now,
                same_owner=job["owner_id"] == session.owner_id,
                prompt=prompt if isinstance(prompt, str) else None,
            )
        )
    if kind == "feed_post":
        posts = feed_posts_with_key(key=key)
        return KeyEvidence(
            feed_posts=tuple(
                FeedPostSeen(
                    post_id=p.id,
                    image_id=p.image_id,
                    key=p.idempotency_key,
                    session_id=p.session_id,
                )
                for p in posts
            )
        )
    return KeyEvidence()


def calls_reconcile(
    *,
    operation_id: str,
    session: ComicSession,
    dispatches: Sequence[ToolDispatched],
    fencing: int | None,
    now: datetime | None = None,
) -> Reconciled:
    """Settle each open T1 in ``dispatches`` that its evidence decides, in one transaction each.

    ``fencing`` is the run's, or None for a parked operation. A call someone settled meanwhile
    is skipped, and ``LeaseLost`` propagates."""
    done = Reconciled()
    for dispatch in dispatches:
        decision = settle_call(
            dispatch, key_evidence(dispatch, session, now or timezone.now()), session_id=session.id
        )
        if isinstance(decision, Undecided):
            done.undecided.append((dispatch, decision))
            continue
        try:
            entry = operation_tool_resolve(
                operation_id=operation_id,
                tool_call_id=decision.tool_call_id,
                resolution=decision.resolution,
                by=RECONCILER,
                reason=decision.reason,
                content=decision.content,
                details=decision.details,
                resolved_by=RECONCILER,
                evidence=decision.evidence,
                fencing=fencing,
            )
        except OperationStateConflict:  # an admin settled it first, or the run moved on
            continue
        except InvalidEntry as exc:  # what the other side stored cannot go in the journal
            why = f"its evidence cannot be kept in the journal ({exc})"
            done.undecided.append((dispatch, Undecided(dispatch.tool_call_id, why)))
            continue
        assert entry is not None  # confirmed and failed always write the result
        done.settled.append((decision, entry))
    return done


def parked_reconcile() -> list[str]:
    """Look again at every parked operation's open calls and settle those the evidence now
    decides; an operation with none left open leaves the inbox. One line each it settled."""
    lines: list[str] = []
    parked = (
        Operation.objects.filter(outcome__isnull=True, parked_at__isnull=False)
        .select_related("session")
        .order_by("parked_at", "id")
    )
    for op in parked:
        try:
            reading = operation_reading(operation_id=op.id, session=op.session)
            verdict = reading.verdict()
            if verdict.status != "indeterminate_tool":
                continue
            open_calls = [reading.log.calls[d.tool_call_id].dispatch for d in verdict.dispatches]
            done = calls_reconcile(
                operation_id=op.id,
                session=op.session,
                dispatches=[d for d in open_calls if d is not None],
                fencing=None,
            )
        except (JournalError, StoreError) as exc:
            log.warning("reconciling parked operation %s: %s", op.id, exc)
            continue
        if done.settled:
            left = len(done.undecided)
            lines.append(
                f"{op.id}: settled by the reconciler ({done.summary()})"
                + (f"; {left} call(s) still wait for an admin" if left else "; a runner goes on")
            )
    return lines


def attention(undecided: Sequence[tuple[ToolDispatched, Undecided]]) -> str:
    """Why the operation waits for an admin: each call and what its evidence lacked."""
    return "may or may not have happened: " + "; ".join(
        f"{d.tool_name} ({d.tool_call_id}): {u.reason}" for d, u in undecided
    )


def as_event(entry: MessageEntry) -> dict[str, Any]:
    return {"type": "entry_committed", "entry": entry.model_dump(mode="json")}
