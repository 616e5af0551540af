"""The comic director's tools, by name."""

from __future__ import annotations

from jaiweb.agent.tools.base import Tool
from jaiweb.agent.tools.character import SetCharacterState
from jaiweb.agent.tools.image import GenerateImage
from jaiweb.agent.tools.panels import ListPanels
from jaiweb.agent.tools.publish import PublishPanel


def default_tools() -> dict[str, Tool]:
    tools: list[Tool] = [SetCharacterState(), GenerateImage(), PublishPanel(), ListPanels()]
    return {tool.name: tool for tool in tools}
