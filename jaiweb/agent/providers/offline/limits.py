"""The tools' argument limits, read from their argument models (never written here again)."""

from __future__ import annotations

from typing import Any

from jaiweb.agent.tools.character import CharacterStateArgs
from jaiweb.agent.tools.image import ImageArgs
from jaiweb.agent.tools.publish import PublishArgs


def max_length(model: Any, name: str) -> int:
    """The longest value a tool argument takes, as its argument model declares it."""
    for rule in model.model_fields[name].metadata:
        if getattr(rule, "max_length", None) is not None:
            return rule.max_length
    raise LookupError(f"{model.__name__}.{name} declares no max_length")


FIELD_LIMITS = {  # set_character_state's: character 40, buff 80, skill 80, mood 40
    name: max_length(CharacterStateArgs, name) for name in ("character", "buff", "skill", "mood")
}
PROMPT_LIMIT = max_length(ImageArgs, "prompt")  # generate_image's prompt (a panel script)
CAPTION_LIMIT = max_length(PublishArgs, "caption")  # publish_panel's caption
