"""The tools' argument limits, read from their argument models (never written here again)."""

from __future__ import annotations

from jaiweb.agent.tools.base import arg_max_length
from jaiweb.agent.tools.character import CharacterStateArgs
from jaiweb.agent.tools.image import ImageArgs
from jaiweb.agent.tools.publish import PublishArgs

FIELD_LIMITS = {  # set_character_state's: character 40, buff 80, skill 80, mood 40
    name: arg_max_length(CharacterStateArgs, name)
    for name in ("character", "buff", "skill", "mood")
}
PROMPT_LIMIT = arg_max_length(ImageArgs, "prompt")  # generate_image's prompt (a panel script)
CAPTION_LIMIT = arg_max_length(PublishArgs, "caption")  # publish_panel's caption
