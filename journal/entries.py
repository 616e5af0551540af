"""Session Journal entries and the messages they carry (docs/ARCHITECTURE.md §5).

Entries are immutable pydantic models with a ``type`` discriminator (messages: ``role``)
and an exact JSON round trip. Their JSON-valued fields (tool arguments, app state,
details) are plain dicts: treat them as read-only, the tree shares them between snapshots.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

from journal.jsonvalues import Id, JsonObject, Text

ToolCallId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
NonNegative = Annotated[StrictInt, Field(ge=0)]
StopReason = Literal["stop", "tool_use", "length", "error", "aborted"]


class Frozen(BaseModel):
    """Immutable, strict about unknown fields: a typo in a field name is an error, not data loss."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(Frozen):
    input_tokens: NonNegative
    output_tokens: NonNegative


class ToolCall(Frozen):
    id: ToolCallId
    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    arguments: JsonObject


class UserMessage(Frozen):
    role: Literal["user"] = "user"
    content: Text


class AssistantMessage(Frozen):
    role: Literal["assistant"] = "assistant"
    content: Text
    tool_calls: list[ToolCall] = []
    stop_reason: StopReason
    usage: Usage | None = None

    @model_validator(mode="after")
    def _unique_call_ids(self) -> AssistantMessage:
        ids = [call.id for call in self.tool_calls]
        if len(ids) != len(set(ids)):
            raise ValueError("tool call ids must be unique within a message")
        return self

    @property
    def is_final(self) -> bool:
        """Ends the turn: no tool calls and a stop reason other than ``tool_use``."""
        return not self.tool_calls and self.stop_reason != "tool_use"


class ToolResultMessage(Frozen):
    role: Literal["tool_result"] = "tool_result"
    tool_call_id: ToolCallId
    tool_name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    content: Text
    is_error: StrictBool = False
    details: JsonObject = {}


class SummaryMessage(Frozen):
    """The compaction summary as the model sees it; derived, never stored."""

    role: Literal["summary"] = "summary"
    content: Text


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]
ContextMessage = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage | SummaryMessage, Field(discriminator="role")
]


class EntryBase(Frozen):
    id: Id
    parent_id: Id | None
    timestamp: AwareDatetime


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: Message


class AppStateEntry(EntryBase):
    """The session's whole business state after a change (not a patch)."""

    type: Literal["app_state"] = "app_state"
    value: JsonObject


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: Text
    first_kept_entry_id: Id
    tokens_before: NonNegative
    tokens_after: NonNegative


class BranchEntry(EntryBase):
    """Written on a rewind: its parent is the target node, ``from_id`` the leaf that was left."""

    type: Literal["branch"] = "branch"
    parent_id: Id
    from_id: Id


Entry = Annotated[
    MessageEntry | AppStateEntry | CompactionEntry | BranchEntry, Field(discriminator="type")
]

entry_adapter: TypeAdapter[Entry] = TypeAdapter(Entry)
context_message_adapter: TypeAdapter[ContextMessage] = TypeAdapter(ContextMessage)


def parse_entry(data: str | bytes | dict[str, Any]) -> Entry:
    """An entry from its JSON text or its decoded dict; raises pydantic's ValidationError."""
    if isinstance(data, str | bytes):
        return entry_adapter.validate_json(data)
    return entry_adapter.validate_python(data)


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """The entry as plain JSON data (what is stored and exported)."""
    return entry.model_dump(mode="json")
