"""What the loop needs from a model provider: a stream of text and tool-call pieces.

Providers are synchronous: the loop runs in a worker thread of its own, so a blocking
read of a stream never blocks a server's event loop. A provider never retries by itself
(the loop does, and journals each attempt as its own ``model_attempted``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from journal.entries import ContextMessage, Usage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, what it does, its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of one tool call, as streams send them: the pieces of one ``index`` add up.

    ``id`` and ``name`` usually come with the first piece; ``arguments`` is a fragment of
    the call's JSON arguments text.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The last event of a stream that completed."""

    stop_reason: str  # stop | tool_use | length | error
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class UsageReport:
    """The provider's count of the tokens spent so far (may come before the stream ends)."""

    usage: Usage


StreamEvent = TextDelta | ToolCallDelta | UsageReport | StreamEnd


class ProviderError(Exception):
    """A call to the model failed; ``transient`` says whether another attempt may succeed."""

    transient = False
    code = "provider_error"


class TransientProviderError(ProviderError):
    """Cut stream, 5xx, timeout, rate limit: the loop backs off and makes a new attempt."""

    transient = True
    code = "provider_unavailable"


class PermanentProviderError(ProviderError):
    """Bad key, unknown model, bad request: retrying cannot help; the message says what to do."""

    code = "provider_refused"


class Provider(Protocol):
    name: str  # what model_attempted records, e.g. "offline-director" or "gpt-4o-mini"
    offline: bool  # the offline director: label it wherever it speaks

    def stream(
        self,
        messages: list[ContextMessage],
        tools: list[ToolSpec],
        *,
        language: str | None = None,
        app_state: Mapping[str, Any] | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream one reply. Raises ``ProviderError`` (before or during the stream).

        ``language``: the language of the page the prompt came from (a Django language
        code); ``app_state``: the state at the branch's leaf. Hints: a provider may use
        them or not."""
        ...

    def summarize(self, messages: list[ContextMessage]) -> str:
        """A summary of these messages for a compaction entry."""
        ...


@dataclass(slots=True)
class RawToolCall:
    """A tool call put together from its pieces, arguments still as text."""

    id: str | None = None
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class Reply:
    """A whole streamed reply, put together by ``assemble``."""

    text: str = ""
    tool_calls: list[RawToolCall] = field(default_factory=list)
    stop_reason: str = "stop"
    usage: Usage | None = None
    complete: bool = False  # a StreamEnd arrived


def assemble(events: Iterable[StreamEvent]) -> Reply:
    """Add the pieces of a stream up into one reply (used by tests and by the loop)."""
    reply = Reply()
    calls: dict[int, RawToolCall] = {}
    for event in events:
        add(reply, calls, event)
    return reply


def add(reply: Reply, calls: dict[int, RawToolCall], event: StreamEvent) -> None:
    """Fold one stream event into the reply being built."""
    if isinstance(event, TextDelta):
        reply.text += event.text
    elif isinstance(event, ToolCallDelta):
        call = calls.get(event.index)
        if call is None:
            call = calls[event.index] = RawToolCall()
            reply.tool_calls.append(call)
        if event.id and not call.id:
            call.id = event.id
        if event.name:
            call.name = (
                call.name + event.name if call.name and call.name != event.name else (event.name)
            )
        call.arguments += event.arguments
    elif isinstance(event, UsageReport):
        reply.usage = event.usage
    else:
        reply.stop_reason = event.stop_reason
        reply.usage = event.usage or reply.usage
        reply.complete = True
