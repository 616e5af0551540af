"""publish_panel: post a panel and its caption to the episode feed's webhook."""

from __future__ import annotations

import json

from django.conf import settings
from pydantic import Field

from jaiweb.agent.tools.base import Args, Tool, ToolContext, ToolOutput
from jaiweb.agent.tools.panels import panels_on
from jaiweb.feed.signing import HEADER, sign
from jaiweb.render.selectors import image_owned


class PublishArgs(Args):
    image_id: str = Field(min_length=1, max_length=40)
    caption: str = Field(min_length=1, max_length=500)


def feed_url() -> str:
    if settings.JAIWEB_FEED_URL:
        return settings.JAIWEB_FEED_URL
    if settings.JAIWEB_PUBLIC_URL:
        return settings.JAIWEB_PUBLIC_URL.rstrip("/") + "/feed/webhook"
    raise RuntimeError("set JAIWEB_FEED_URL or JAIWEB_PUBLIC_URL so publish_panel knows where")


class PublishPanel(Tool):
    """A webhook does not deduplicate: a repeat is a second post. At most once, and always
    asked first. The HTTP call runs in the loop's own worker thread, so even when the studio
    posts to itself its server loop is never blocked."""

    name = "publish_panel"
    description = "Publish one panel of this branch, with a caption, to the public episode feed."
    args = PublishArgs

    def policy(self):
        return "at_most_once"

    def approval_cost(self, state):
        return 0  # free, but public: always asked

    def run(self, ctx: ToolContext, args: PublishArgs) -> ToolOutput:
        on_branch = args.image_id in {p["image_id"] for p in panels_on(ctx.branch())}
        if not on_branch or not image_owned(image_id=args.image_id, owner_id=ctx.owner.pk):
            return ToolOutput(f"there is no panel {args.image_id!r} on this branch", is_error=True)
        body = json.dumps(
            {
                "image_id": args.image_id,
                "owner": ctx.owner.pk,
                "caption": args.caption,
                "session_id": ctx.session_id,
                "idempotency_key": ctx.idempotency_key,
            },
            ensure_ascii=False,
        ).encode()
        headers = {
            "Content-Type": "application/json",
            HEADER: sign(settings.JAIWEB_FEED_SECRET, body),
        }
        import httpx  # here, not at the top: its import (rich, click) slows every start

        try:
            response = httpx.post(feed_url(), content=body, headers=headers, timeout=10.0)
        except httpx.HTTPError as exc:
            return ToolOutput(f"the feed could not be reached: {exc}", is_error=True)
        ctx.faults.reach("during_tool", self.name)  # the post is made; its answer unused yet
        if response.status_code != 201:
            return ToolOutput(
                f"the feed refused the post ({response.status_code}): {response.text[:200]}",
                is_error=True,
            )
        post_id = response.json().get("post_id", "")
        return ToolOutput(
            content=f"published to the feed as {post_id}",
            details={"post_id": post_id, "image_id": args.image_id},
        )
