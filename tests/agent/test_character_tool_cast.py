"""set_character_state writes onto the one cast: an alias is the user's character."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import AppState
from jaiweb.agent.tools.base import ToolContext
from jaiweb.agent.tools.character import CharacterStateArgs, SetCharacterState
from journal.cast import new_cast


def context(state: dict) -> ToolContext:
    return ToolContext(
        owner=None,
        session_id="s_1",
        operation_id="op_1",
        tool_call_id="call_1",
        idempotency_key="k_1",
        app_state=AppState.model_validate(state),
        branch=lambda: [],
    )


ENGLISH = {"characters": new_cast(["Pig-Man", "Super-Strong-Man"], "en"), "language": "en"}


@pytest.mark.parametrize("said", ["猪猪侠", "GG Bond", "pig man", "Pig-Man"])
def test_a_built_in_alias_sets_the_users_character(said):
    out = SetCharacterState().run(context(ENGLISH), CharacterStateArgs(character=said, mood="sad"))
    assert not out.is_error and out.details["character"] == "Pig-Man"
    assert sorted(out.app_state.characters) == ["Pig-Man", "Super-Strong-Man"]
    assert out.app_state.characters["Pig-Man"].mood == "sad"


def test_a_new_character_starts_from_the_sessions_own_defaults():
    out = SetCharacterState().run(context(ENGLISH), CharacterStateArgs(character="Wolf", mood="x"))
    wolf = out.app_state.characters["Wolf"]
    assert (wolf.buff, wolf.skill) == ("none", "none")
    out = SetCharacterState().run(context({}), CharacterStateArgs(character="Wolf", mood="x"))
    assert out.app_state.characters["Wolf"].buff == "无"  # a session with no language


def test_a_name_that_could_be_two_changes_nothing():
    state = {"characters": {"A": {"aliases": ["twin"]}, "B": {"aliases": ["twin"]}}}
    out = SetCharacterState().run(context(state), CharacterStateArgs(character="twin", mood="x"))
    assert out.is_error and out.app_state is None and "A or B" in out.content
