"""The session's business state as the agent sees it: characters and the permission mode.

It lives in the journal as plain JSON (``app_state`` entries); this model reads it
leniently (unknown fields are kept) and writes it back whole.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Character(BaseModel):
    model_config = ConfigDict(extra="allow")

    buff: str = "无"
    skill: str = "无"
    mood: str = "平静"


class AppState(BaseModel):
    model_config = ConfigDict(extra="allow")

    characters: dict[str, Character] = Field(default_factory=dict)
    permission_mode: Literal["ask", "auto"] = "ask"

    @classmethod
    def of(cls, value: dict) -> AppState:
        return cls.model_validate(value or {})

    def as_json(self) -> dict:
        return self.model_dump(mode="json")


DEFAULT_STATE = AppState(characters={"猪猪侠": Character()}).as_json()
