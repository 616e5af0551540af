"""set_character_state: change a character's buff, skill or mood (app state)."""

from __future__ import annotations

from pydantic import Field

from jaiweb.agent.state import Character
from jaiweb.agent.tools.base import Args, Tool, ToolContext, ToolOutput, arg_max_length
from journal.cast import DEFAULT_STATE, Ambiguous, Cast


class CharacterStateArgs(Args):
    """The limits of a character's fields, for the agent and for a person's hand edit alike."""

    character: str = Field(min_length=1, max_length=40)
    buff: str | None = Field(default=None, max_length=80)
    skill: str | None = Field(default=None, max_length=80)
    mood: str | None = Field(default=None, max_length=40)


class SetCharacterState(Tool):
    """The new state and the tool result commit in one transaction: an open dispatch of this
    tool means nothing happened, so running it again is safe."""

    name = "set_character_state"
    description = (
        "Set a character's buff, skill and/or mood. The state is remembered for every later "
        "panel on this branch and rolls back with a rewind."
    )
    args = CharacterStateArgs

    def policy(self):
        return "idempotent"

    def run(self, ctx: ToolContext, args: CharacterStateArgs) -> ToolOutput:
        """The state lands on the character the name stands for in the one cast (猪猪侠 on
        the user's "Pig-Man"); a name that could be two characters changes nothing."""
        state = ctx.app_state.model_copy(deep=True)
        language = getattr(state, "language", None)
        cast = Cast.of(state.as_json()["characters"], language if language == "en" else "zh")
        try:
            name = cast.resolve(args.character) or args.character
        except Ambiguous as exc:
            return ToolOutput(f"not changed: {exc}; name the character", is_error=True, details={})
        args = args.model_copy(update={"character": name})
        fresh = DEFAULT_STATE["en"] if language == "en" else {}
        before = state.characters.get(args.character, Character(**fresh))
        changes = {
            k: v
            for k, v in (("buff", args.buff), ("skill", args.skill), ("mood", args.mood))
            if v is not None
        }
        after = before.model_copy(update=changes)
        state.characters[args.character] = after
        summary = f"{args.character}: buff={after.buff}, skill={after.skill}, mood={after.mood}"
        return ToolOutput(
            content=f"state set — {summary}",
            details={"character": args.character, "state": after.model_dump(mode="json")},
            app_state=state,
        )


def max_length(field: str) -> int:
    """A field's limit in ``CharacterStateArgs`` (for forms that check before they send)."""
    return arg_max_length(CharacterStateArgs, field)
