"""Reads of the characters a state holds, and of which ones an edit changed."""

from __future__ import annotations

from typing import Any

from jaiweb.agent.state import AppState, UnreadableAppState
from journal.branches import state_changes


def edited_characters(before: dict, after: dict) -> list[str]:
    """The characters whose buff, skill or mood differ between two states, in the stable
    order of ``state_changes``: each read with its defaults, so a character the first state
    names without its fields is not "changed" by a state that writes them out."""
    changes = state_changes(
        {"characters": characters_of(before)}, {"characters": characters_of(after)}
    )
    return list(dict.fromkeys(c.character for c in changes if c.character))


def characters_of(state: dict) -> dict[str, dict[str, Any]]:
    """The characters to show; none for a state the agent cannot read (a row from before
    states were checked): the page shows the rest, and a run says what is wrong."""
    try:
        characters = AppState.of(state).characters
    except UnreadableAppState:
        return {}
    return {name: character.model_dump(mode="json") for name, character in characters.items()}
