"""Settling an open at-most-once call from what the other side recorded under its key.

A call dispatched at most once whose result never became durable may or may not have had
its effect. Often the other side can tell: the render service stores every render under
the call's idempotency key, and the feed keeps the key with every post. ``settle_call``
reads that evidence, gathered by the shell, and decides:

* a render job under the key that **succeeded** with a stored image: ``confirmed``, with the
  result the tool would have written (the stored image, marked replayed, at the cost it was
  charged once);
* a render job under the key that **failed**: ``failed``, with the stored error. A failed
  render charged nothing and made nothing, and dispatching the call again would only get
  that same stored failure back, so the evidence decides this outcome too;
* exactly **one feed post** under the key, of the panel the call named: ``confirmed``, with
  the post the tool would have reported;
* anything else is ``Undecided`` and goes to a person: no record under the key (the request
  may or may not have reached the backend), a render still in progress (``later``: while its
  lease runs, its holder may still finish it), a render that started and never finished,
  two posts under one key, or evidence that does not match the call.

Pure: the shell looks the evidence up and writes the resolution; nothing here reads a
clock, a database or a network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from journal.records import ToolDispatched

RENDER_TOOL = "generate_image"
PUBLISH_TOOL = "publish_panel"
RECONCILER = "reconciler"  # the ``by`` and ``resolved_by`` of recovery's own resolutions
# Which evidence can decide a call of each tool: the shell looks up only these.
EVIDENCE_OF_TOOL: dict[str, Literal["render_job", "feed_post"]] = {
    RENDER_TOOL: "render_job",
    PUBLISH_TOOL: "feed_post",
}


@dataclass(frozen=True, slots=True)
class RenderJobSeen:
    """The render service's job under a key, as the shell read it.

    ``lease_live``: still in progress and its lease has not run out (the shell compares
    the lease with its clock). ``same_owner``: the job was requested for the session's
    owner. ``prompt``: the prompt it was asked to draw (None when it has none).
    """

    key: str
    status: Literal["in_progress", "succeeded", "failed"]
    image_id: str | None = None
    content_type: str | None = None
    backend: str = ""
    charged: int = 0
    error: str = ""
    lease_live: bool = False
    same_owner: bool = True
    prompt: str | None = None


@dataclass(frozen=True, slots=True)
class FeedPostSeen:
    """A post the feed received with a key."""

    post_id: str
    image_id: str
    key: str
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class KeyEvidence:
    """Everything the shell found under one call's key."""

    render_job: RenderJobSeen | None = None
    feed_posts: tuple[FeedPostSeen, ...] = ()


@dataclass(frozen=True, slots=True)
class Settled:
    """The evidence decides the call: its resolution, its result entry and why."""

    tool_call_id: str
    resolution: Literal["confirmed", "failed"]
    content: str
    details: dict[str, Any]
    reason: str
    evidence: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return self.resolution == "failed"


@dataclass(frozen=True, slots=True)
class Undecided:
    """The evidence does not decide the call: a person does (the recovery inbox).

    ``later``: it may decide it once something still running ends (a render in progress
    under a live lease), so a later recovery pass looks again."""

    tool_call_id: str
    reason: str
    later: bool = False


Decision = Settled | Undecided


def settle_call(dispatch: ToolDispatched, evidence: KeyEvidence, *, session_id: str) -> Decision:
    """What the evidence under ``dispatch``'s key says about its effect (see the module)."""
    if dispatch.policy != "at_most_once":
        return Undecided(
            dispatch.tool_call_id, f"a {dispatch.policy} call is dispatched again, not settled"
        )
    kind = EVIDENCE_OF_TOOL.get(dispatch.tool_name)
    if kind == "render_job":
        return _from_render_job(dispatch, evidence.render_job)
    if kind == "feed_post":
        return _from_feed_posts(dispatch, evidence.feed_posts, session_id)
    return Undecided(
        dispatch.tool_call_id, f"nothing records what {dispatch.tool_name} did under its key"
    )


def _from_render_job(dispatch: ToolDispatched, job: RenderJobSeen | None) -> Decision:
    call, key = dispatch.tool_call_id, dispatch.idempotency_key
    if job is None:
        return Undecided(
            call,
            "the render service has no job under the call's key: the request never reached "
            "it, or the process died before it recorded the job",
        )
    asked = dispatch.args.get("prompt")
    if job.key != key or not job.same_owner or (job.prompt is not None and job.prompt != asked):
        return Undecided(call, "the render job under the call's key does not match the call")
    evidence: dict[str, Any] = {
        "kind": "render_job",
        "idempotency_key": key,
        "status": job.status,
        "backend": job.backend,
        "charged": job.charged,
    }
    if job.status == "succeeded":
        if not job.image_id or not job.content_type:
            return Undecided(call, "the render job under the call's key succeeded with no image")
        return Settled(
            tool_call_id=call,
            resolution="confirmed",
            content="panel rendered (the stored result of an earlier request)",
            details={
                "image_id": job.image_id,
                "content_type": job.content_type,
                "backend": job.backend,
                "cost": job.charged,
                "replayed": True,
            },
            reason=(
                f"the render service stored image {job.image_id} under the call's key and "
                f"charged {job.charged} credits for it once; no second request was made"
            ),
            evidence={**evidence, "image_id": job.image_id},
        )
    if job.status == "failed":
        if job.charged:
            return Undecided(call, "the render job under the call's key failed but was charged")
        error = job.error or "no reason was stored"
        return Settled(
            tool_call_id=call,
            resolution="failed",
            content=f"the render with key {key!r} failed: {error}; nothing was charged",
            details={"code": "render_failed", "backend": job.backend},
            reason=(
                "the render service recorded that the render under the call's key failed "
                f"({error}); nothing was charged, and a new request would get the same answer"
            ),
            evidence={**evidence, "error": error},
        )
    if job.lease_live:
        return Undecided(
            call,
            "a render under the call's key is still in progress: a later recovery pass "
            "settles it once it ends",
            later=True,
        )
    return Undecided(
        call,
        "a render under the call's key started and never finished: the backend may have "
        "drawn (and billed) it without anyone storing the answer",
    )


def _from_feed_posts(
    dispatch: ToolDispatched, posts: tuple[FeedPostSeen, ...], session_id: str
) -> Decision:
    call, key = dispatch.tool_call_id, dispatch.idempotency_key
    mine = [p for p in posts if p.key == key]
    if not mine:
        return Undecided(call, "the feed received no post with the call's key")
    if len(mine) > 1:
        return Undecided(call, f"the feed received {len(mine)} posts with the call's key")
    [post] = mine
    if post.image_id != dispatch.args.get("image_id") or (
        post.session_id and post.session_id != session_id
    ):
        return Undecided(call, "the feed post with the call's key does not match the call")
    return Settled(
        tool_call_id=call,
        resolution="confirmed",
        content=f"published to the feed as {post.post_id}",
        details={"post_id": post.post_id, "image_id": post.image_id},
        reason=(
            f"the feed received post {post.post_id} of panel {post.image_id} with the call's "
            "key; it was not posted again"
        ),
        evidence={
            "kind": "feed_post",
            "idempotency_key": key,
            "post_id": post.post_id,
            "image_id": post.image_id,
        },
    )
