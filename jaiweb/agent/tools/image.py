"""generate_image: a panel of the scene with the characters as they are now, for 10 credits."""

from __future__ import annotations

import time
from contextlib import nullcontext

from pydantic import Field

from jaiweb.agent import slots
from jaiweb.agent.tools.base import Args, Tool, ToolContext, ToolOutput
from jaiweb.render.backends import backend_policy, renderer_for_settings
from jaiweb.render.errors import RenderError, RenderInProgress
from jaiweb.render.services import (
    PANEL_COST,
    RenderResult,
    render_lease_seconds,
    render_request,
)
from journal.ids import render_seed
from journal.records import Policy
from journal.variants import VARIANTS_MAX, VARIANTS_MIN


class ImageArgs(Args):
    prompt: str = Field(min_length=1, max_length=1000)
    # One of this many variants of the panel (docs/ARCHITECTURE.md §5, journal/variants.py):
    # the reply's calls with the same prompt and a count form one set, approved once.
    variants: int | None = Field(default=None, ge=VARIANTS_MIN, le=VARIANTS_MAX, strict=True)


class GenerateImage(Tool):
    """Draw a panel by calling the render service with the call's idempotency key.

    The tool's recovery policy is the one the configured backend declares. The local renderer
    is idempotent: a repeat under the key returns the stored panel and charges nothing more.
    OpenAI images and AUTOMATIC1111 are at most once, so an open dispatch of theirs goes to
    the recovery inbox."""

    name = "generate_image"
    description = (
        "Draw one comic panel of the scene. The characters are drawn in their current state "
        f"(buff, skill, mood). Costs {PANEL_COST} credits. To offer the reader a choice, "
        f"call it {VARIANTS_MIN} to {VARIANTS_MAX} times in one reply with the same prompt "
        "and `variants` set to the number of calls: each draws its own variant, one "
        "approval covers them all, and the reader picks one."
    )
    args = ImageArgs

    def policy(self) -> Policy:
        return backend_policy()

    def approval_cost(self, state):
        return None if state.permission_mode == "auto" else PANEL_COST

    def run(self, ctx: ToolContext, args: ImageArgs) -> ToolOutput:
        params = {
            "prompt": args.prompt,
            # Each character's state and look (its own seed, its reference picture; left
            # out when unset): the key's parameters hash covers them, so a rewind past a
            # change of look renders with the look of that point again.
            "characters": {
                n: c.model_dump(mode="json") for n, c in ctx.app_state.characters.items()
            },
            # From the call's key: a repeat of this call asks for the same picture (the ledger
            # replays it), a regenerate (a new key) for a new one; the local renderer,
            # ComfyUI and AUTOMATIC1111 draw with it.
            "seed": render_seed(ctx.idempotency_key),
        }
        renderer = renderer_for_settings()
        # A render on another server may take minutes: the run lends its worker back for it.
        with slots.lent() if renderer.remote else nullcontext():
            result = self._render(ctx, renderer, params)
        if isinstance(result, ToolOutput):
            return result
        ctx.faults.reach("during_tool", self.name)  # the render is done; its answer unused yet
        return ToolOutput(
            content="panel rendered"
            + (" (the stored result of an earlier request)" if result.replayed else ""),
            details={
                "image_id": result.image_id,
                "content_type": result.content_type,
                "backend": result.backend,
                "cost": result.cost,
                "replayed": result.replayed,
            },
        )

    def _render(self, ctx: ToolContext, renderer, params: dict) -> RenderResult | ToolOutput:
        """The render under the call's key, or the error result the call ends with."""
        deadline = time.monotonic() + render_lease_seconds() + 5
        while True:
            try:
                return render_request(
                    user=ctx.owner,
                    key=ctx.idempotency_key,
                    params=params,
                    renderer=renderer,
                    on_progress=ctx.progress,
                )
            except RenderInProgress:
                # An earlier dispatch of this call crashed mid-render: its job is taken over
                # once its lease runs out.
                if time.monotonic() > deadline:
                    return ToolOutput("the render is still in progress elsewhere", is_error=True)
                time.sleep(0.5)
            except RenderError as exc:  # not enough credits, a failed render: nothing charged
                return ToolOutput(
                    str(exc), is_error=True, details={"code": exc.code, "backend": renderer.name}
                )
