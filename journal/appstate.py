"""The session's business state: characters and the permission mode.
See docs/ARCHITECTURE.md §5 app_state.

It lives in the journal as plain JSON (``app_state`` entries, a session's initial state).
The model reads it leniently (unknown fields are kept) and writes it back whole. It is
pure, so the store checks what it is given against the same model the agent reads with.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from journal.jsonvalues import Text, check_json


class UnreadableAppState(ValueError):
    """A state this model cannot read; the message names the field and what is wrong."""


class Character(BaseModel):
    model_config = ConfigDict(extra="allow")

    buff: Text = "无"
    skill: Text = "无"
    mood: Text = "平静"

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict | BaseModel):
            raise ValueError("a character must be a JSON object")
        return value


class AppState(BaseModel):
    model_config = ConfigDict(extra="allow")

    characters: dict[Text, Character] = Field(default_factory=dict)
    permission_mode: Literal["ask", "auto"] = "ask"

    @model_validator(mode="before")
    @classmethod
    def _plain_json_object(cls, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if not isinstance(value, dict):
            raise ValueError("the app state must be a JSON object")
        # Unknown fields are kept as they came, so they are checked as JSON here.
        check_json({k: v for k, v in value.items() if k != "characters"})
        characters = value.get("characters")
        if isinstance(characters, dict):
            for name, character in characters.items():
                # As it sits in the state, so its depth counts from the state's.
                kept = None if isinstance(character, BaseModel) else character
                check_json({"characters": {name: kept}})
        return value

    @classmethod
    def of(cls, value: dict | None) -> AppState:
        """The state, or ``UnreadableAppState`` naming what does not fit."""
        try:
            return cls.model_validate({} if value is None else value)
        except ValidationError as exc:
            raise UnreadableAppState(describe(exc)) from None

    def as_json(self) -> dict:
        return self.model_dump(mode="json")


def describe(exc: ValidationError) -> str:
    """``characters.猪猪侠.mood: Input should be a valid string; …``"""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def app_state_check(value: Any) -> dict:
    """``value`` itself when the model can read it; ``UnreadableAppState`` otherwise."""
    AppState.of(value)
    return value
