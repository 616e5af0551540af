"""A provider that plays back scripted replies, for loop tests that check exact journals."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from jaiweb.agent.providers.base import (
    PermanentProviderError,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    TransientProviderError,
)
from journal.entries import Usage


def text(t: str, stop_reason: str = "stop") -> list:
    return [
        TextDelta(t[: len(t) // 2]),
        TextDelta(t[len(t) // 2 :]),
        StreamEnd(stop_reason, Usage(input_tokens=10, output_tokens=len(t))),
    ]


def calls(*specs: tuple[str, dict] | tuple[str, dict, str], narration: str = "好的") -> list:
    """Tool calls streamed in pieces: (name, args[, id])."""
    events: list = [TextDelta(narration)]
    for index, spec in enumerate(specs):
        name, args = spec[0], spec[1]
        call_id = spec[2] if len(spec) > 2 else f"call_{index + 1}"
        raw = json.dumps(args, ensure_ascii=False) if isinstance(args, dict) else args
        half = len(raw) // 2
        events.append(ToolCallDelta(index=index, id=call_id, name=name, arguments=raw[:half]))
        events.append(ToolCallDelta(index=index, arguments=raw[half:]))
    events.append(StreamEnd("tool_use", Usage(input_tokens=20, output_tokens=8)))
    return events


class ScriptedProvider:
    """Each call to ``stream`` plays the next script; a script item may be an exception."""

    name = "scripted"
    offline = True

    def __init__(self, *scripts, on_stream: Callable[[int], None] | None = None):
        self.scripts = list(scripts)
        self.calls: list[list] = []  # the messages each call got
        self.on_stream = on_stream

    def stream(self, messages, tools, *, language=None, app_state=None) -> Iterator:
        self.calls.append(list(messages))
        if self.on_stream:
            self.on_stream(len(self.calls))
        script = self.scripts.pop(0)
        for item in script:
            if isinstance(item, Exception):
                raise item
            yield item

    def summarize(self, messages) -> str:
        return f"summary of {len(messages)} messages"


CUT = TransientProviderError("the stream was cut")
REFUSED = PermanentProviderError("the model server refused the API key (401)")
