"""The session's business state as the agent sees it: characters and the permission mode.

The model is journal.appstate's (pure, so the store validates with it too); this module
keeps the agent's default cast.
"""

from __future__ import annotations

from journal.appstate import AppState, Character, UnreadableAppState

__all__ = ["DEFAULT_STATE", "AppState", "Character", "UnreadableAppState"]

DEFAULT_STATE = AppState(characters={"猪猪侠": Character()}).as_json()
