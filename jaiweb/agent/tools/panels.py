"""list_panels: the panels drawn on the current branch (read-only).

Of a variant set (journal/variants.py) it lists the variant a reader sees, the one the app
state chose (else the first drawn), as the strip, Read mode and the exports show it: the
director then talks of the panels the comic holds, not of drafts set aside."""

from __future__ import annotations

from jaiweb.agent.tools.base import Args, Tool, ToolContext, ToolOutput
from journal.entries import AssistantMessage, MessageEntry, ToolResultMessage
from journal.variants import VariantSet, chosen_member, hidden_members, sets_on


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


def shown_panels(branch, choices) -> list[dict]:
    """The branch's panels a reader sees (``panels_on``, less the variants not chosen by
    ``choices``); a variant chosen says which of how many it is (``variant``, ``of``)."""
    sets = sets_on(branch)
    hidden = hidden_members(sets, choices)
    shown_in: dict[str, VariantSet] = {}
    for variant_set in sets:
        member = chosen_member(variant_set, choices)
        if member is not None:
            shown_in[member] = variant_set
    panels = []
    for panel in panels_on(branch):
        if panel["entry_id"] in hidden:
            continue
        variant_set = shown_in.get(panel["entry_id"])
        if variant_set is not None:
            number = variant_set.members.index(panel["entry_id"]) + 1
            panel = {**panel, "variant": number, "of": len(variant_set.members)}
        panels.append(panel)
    return panels


def _line(number: int, panel: dict) -> str:
    chosen = f" (variant {panel['variant']} of {panel['of']}, the one chosen)"
    return f"{number}. {panel['image_id']}{chosen if 'variant' in panel else ''}: {panel['prompt']}"


class ListPanels(Tool):
    name = "list_panels"
    description = (
        "List the panels drawn so far on this branch of the episode, oldest first "
        "(of a panel drawn as variants, the one chosen)."
    )
    args = NoArgs

    def policy(self):
        return "read_only"

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolOutput:
        panels = shown_panels(ctx.branch(), ctx.app_state.variants)
        lines = [_line(i, p) for i, p in enumerate(panels, 1)]
        return ToolOutput(
            content="\n".join(lines) if lines else "no panels on this branch yet",
            details={"panels": panels},
        )
