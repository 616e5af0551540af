"""The session's business state: characters, the permission mode, and the variants chosen.
See docs/ARCHITECTURE.md §5 app_state.

It lives in the journal as plain JSON (``app_state`` entries, a session's initial state).
The model reads it leniently (unknown fields are kept) and writes it back whole. It is
pure, so the store checks what it is given against the same model the agent reads with.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from journal.jsonvalues import Id, Text, check_json, whole_number

# An image id as the session file writes one (``journal.session_file`` uses this pattern).
IMAGE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"
SEED_LIMIT = 2**32  # a character's seed is an int from 0 to SEED_LIMIT - 1


# A seed: a whole JSON number from 0 to SEED_LIMIT - 1.
Seed = Annotated[int, Field(ge=0, lt=SEED_LIMIT, strict=True), BeforeValidator(whole_number)]
# A character's look: what keeps it the same from panel to panel. Unset, neither is written.
LOOK_FIELDS = ("seed", "reference_image_id")


class UnreadableAppState(ValueError):
    """A state this model cannot read; the message names the field and what is wrong."""


class Character(BaseModel):
    """A character's state (buff, skill, mood) and its look: its own ``seed`` and a
    ``reference_image_id`` (one of the session owner's images), each None until set.

    A look left unset is not written out, so a state from before looks existed reads and
    writes back the same."""

    model_config = ConfigDict(extra="allow")

    buff: Text = "无"
    skill: Text = "无"
    mood: Text = "平静"
    seed: Seed | None = None
    reference_image_id: str | None = Field(default=None, pattern=IMAGE_ID_PATTERN)

    @model_serializer(mode="wrap")
    def _unset_look_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for name in LOOK_FIELDS:
            if data.get(name) is None:
                data.pop(name, None)
        return data

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

    # --- variants (journal/variants.py) ----------------------------------------------
    # Which variant of each variant set a reader sees: the set's id (its first call's
    # result entry id) → the chosen variant's result entry id. Left out while empty, so a
    # state from before variants reads and writes back the same.
    variants: dict[Id, Id] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _no_choice_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if not data.get("variants"):
            data.pop("variants", None)
        return data

    # --- end of variants ---------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _plain_json_object(cls, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if not isinstance(value, dict):
            raise ValueError("the app state must be a JSON object")
        # Unknown fields are kept as they came, so they are checked as JSON here.
        check_json({k: v for k, v in value.items() if k != "characters"})
        _chapters_checked(value)
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


# --- chapters (docs/ARCHITECTURE.md §5 chapters; journal/chapters.py) -----------------------
# The chapter marks of a branch live under the state's "chapters" key. The state keeps them
# as an unknown field would be kept; this only refuses a value that does not read as marks,
# so a bad one is a 422 where any state comes in (a hand edit, a new session, an import).


def _chapters_checked(value: dict) -> None:
    from journal.chapters import CHAPTERS_KEY, BadChapter, marks_check

    if CHAPTERS_KEY in value:
        try:
            marks_check(value[CHAPTERS_KEY])
        except BadChapter as exc:
            raise ValueError(f"{CHAPTERS_KEY}: {exc}") from None
