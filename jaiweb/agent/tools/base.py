"""What a tool is: its arguments, its recovery policy, whether it needs approval, its effect."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from jaiweb.agent.faults import NO_FAULTS, Faults
from jaiweb.agent.providers.base import ToolSpec
from jaiweb.agent.state import AppState
from journal.entries import Entry
from journal.records import Policy


class Args(BaseModel):
    """Arguments of a tool call; unknown arguments are refused, not ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def arg_max_length(model: type[Args], name: str) -> int:
    """The longest value a tool argument takes, as its argument model declares it: the one
    place a limit is written, for the agent, a person's hand edit and a form alike."""
    for rule in model.model_fields[name].metadata:
        if getattr(rule, "max_length", None) is not None:
            return rule.max_length
    raise LookupError(f"{model.__name__}.{name} declares no max_length")


@dataclass
class ToolContext:
    """Everything a tool may use: who, which call, under which key, in which state."""

    owner: Any
    session_id: str
    operation_id: str
    tool_call_id: str
    idempotency_key: str
    app_state: AppState
    branch: Callable[[], list[Entry]]  # the active branch, loaded when asked
    faults: Faults = field(default_factory=lambda: NO_FAULTS)
    # progress(value, maximum) of a slow effect (a render's sampler steps), for the page
    progress: Callable[[int, int], None] = field(default=lambda value, maximum: None)


@dataclass
class ToolOutput:
    """What becomes the tool result entry (T2) — and, for a state change, the new app state."""

    content: str
    is_error: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    app_state: AppState | None = None  # committed with the result, in one transaction


class Tool:
    """A tool of the comic director. Subclasses set the class attributes and ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    args: ClassVar[type[Args]]

    def policy(self) -> Policy:
        """How recovery treats an open dispatch of this tool (recorded in T1)."""
        raise NotImplementedError

    def approval_cost(self, state: AppState) -> int | None:
        """Credits to show when asking for approval; None when no approval is needed."""
        return None

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        raise NotImplementedError

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, _schema_of(self.args))


@functools.cache
def _schema_of(args: type[Args]) -> dict[str, Any]:
    """The arguments' JSON schema, made once per class: pydantic's schema generation took
    a fifth of a runner's time when every model step asked for it again."""
    schema = args.model_json_schema()
    schema.pop("title", None)
    return schema
