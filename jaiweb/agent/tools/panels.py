"""list_panels: the panels drawn on the current branch (read-only)."""

from __future__ import annotations

from jaiweb.agent.tools.base import Args, Tool, ToolContext, ToolOutput
from journal.entries import AssistantMessage, MessageEntry, ToolResultMessage


class NoArgs(Args):
    pass


def panels_on(branch) -> list[dict]:
    """Each successful generate_image result on the branch, with the prompt it was drawn for."""
    prompts: dict[str, str] = {}
    panels = []
    for entry in branch:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.name == "generate_image":
                    prompts[call.id] = str(call.arguments.get("prompt", ""))
        elif (
            isinstance(message, ToolResultMessage)
            and message.tool_name == "generate_image"
            and not message.is_error
            and message.details.get("image_id")
        ):
            panels.append(
                {
                    "image_id": message.details["image_id"],
                    "prompt": prompts.get(message.tool_call_id, ""),
                    "entry_id": entry.id,
                }
            )
    return panels


class ListPanels(Tool):
    name = "list_panels"
    description = "List the panels drawn so far on this branch of the episode, oldest first."
    args = NoArgs

    def policy(self):
        return "read_only"

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolOutput:
        panels = panels_on(ctx.branch())
        lines = [f"{i}. {p['image_id']}: {p['prompt']}" for i, p in enumerate(panels, 1)]
        return ToolOutput(
            content="\n".join(lines) if lines else "no panels on this branch yet",
            details={"panels": panels},
        )
