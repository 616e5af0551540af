"""Any OpenAI-compatible chat completions server (OpenAI, vLLM, llama.cpp, Ollama, …).

Configured only from the arguments (JAIWEB_LLM_MODEL, JAIWEB_LLM_BASE_URL,
JAIWEB_LLM_API_KEY), never from the SDK's OPENAI_* variables. The client never retries by
itself (``max_retries=0``): each attempt is the loop's to journal. Every failure leaves as
a ``ProviderError`` whose message says what a user can do about it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import openai

from jaiweb.agent.providers.base import (
    PermanentProviderError,
    ProviderError,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    TransientProviderError,
    UsageReport,
)
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "not-needed"  # keyless local servers: the SDK insists on some key
SERVER_MESSAGE_LIMIT = 300

STOP_REASONS = {
    "stop": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "content_filter": "error",
}

SUMMARY_SYSTEM_PROMPT = (
    "You keep the memory of a comic-drawing session between a user and an assistant who "
    "draws the panels. You are given the earlier part of the conversation as a transcript."
)
SUMMARY_REQUEST = (
    "Write a concise summary of the story so far; it replaces the transcript above in the "
    "assistant's memory. Keep every character's current state (buffs, skills, mood and "
    "anything else that changed), the list of panels drawn so far in order with what each "
    "shows, and anything the user asked for that is not done yet. Write in the language of "
    "the conversation. Answer with the summary only."
)


class OpenAICompatProvider:
    """The ``Provider`` for a model behind an OpenAI-compatible chat completions API."""

    offline = False

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout: float = 60.0,
        system_prompt: str | None = None,
    ) -> None:
        self.name = model
        self.model = model
        self.base_url = base_url or DEFAULT_BASE_URL
        self.timeout = timeout
        self.system_prompt = system_prompt
        # Always a string key: given None, the SDK would read OPENAI_API_KEY instead.
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=timeout,
        )
        # The SDK also picks these up from OPENAI_ORG_ID / OPENAI_PROJECT_ID: never send
        # them to whatever server JAIWEB_LLM_BASE_URL names.
        self._client.organization = None
        self._client.project = None

    # -- Provider ---------------------------------------------------------------------

    def stream(
        self,
        messages: list[ContextMessage],
        tools: list[ToolSpec],
        *,
        language: str | None = None,
        app_state: Mapping[str, Any] | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream one reply; raises ``ProviderError`` before or during the stream."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": self._chat_messages(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = [tool_to_chat(tool) for tool in tools]
        try:
            with self._client.chat.completions.create(**request) as chunks:
                yield from self._events(chunks)
        except ProviderError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc

    def summarize(self, messages: list[ContextMessage]) -> str:
        """A summary of these messages, from one non-streaming completion."""
        transcript = "\n\n".join(transcript_line(message) for message in messages)
        request = [
            {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
            {
                "role": "user",
                "content": f"<transcript>\n{transcript}\n</transcript>\n\n{SUMMARY_REQUEST}",
            },
        ]
        try:
            response = self._client.chat.completions.create(model=self.model, messages=request)
        except Exception as exc:
            raise self._translate(exc) from exc
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = getattr(message, "content", None)
        if not isinstance(text, str) or not text.strip():
            raise TransientProviderError("the model server returned an empty summary")
        return text.strip()

    # -- conversions ------------------------------------------------------------------

    def _chat_messages(self, messages: list[ContextMessage]) -> list[dict[str, Any]]:
        chat: list[dict[str, Any]] = []
        if self.system_prompt:
            chat.append({"role": "system", "content": self.system_prompt})
        chat.extend(message_to_chat(message) for message in messages)
        return chat

    def _events(self, chunks: Any) -> Iterator[StreamEvent]:
        finish: str | None = None
        usage: Usage | None = None
        for chunk in chunks:
            reported = usage_of(chunk)
            if reported is not None:
                usage = reported
                yield UsageReport(reported)  # spent even if the stream is cut after this
            for choice in getattr(chunk, "choices", None) or []:
                if getattr(choice, "index", 0) not in (0, None):
                    continue  # only one reply was asked for
                delta = getattr(choice, "delta", None)
                if delta is not None:
                    yield from delta_events(delta)
                reason = getattr(choice, "finish_reason", None)
                if reason:
                    finish = reason
        if finish is None:
            raise TransientProviderError("the stream ended before the reply was complete")
        yield StreamEnd(STOP_REASONS.get(finish, "stop"), usage)

    # -- errors -----------------------------------------------------------------------

    def _translate(self, exc: Exception) -> ProviderError:
        """The ``ProviderError`` for an exception from the SDK or the transport."""
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc.status_code, server_message(exc))
        if isinstance(exc, openai.APITimeoutError):
            return TransientProviderError(
                f"the model server at {self.base_url} did not answer within {self.timeout:g}s"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return TransientProviderError(
                f"could not reach the model server at {self.base_url}: {describe(cause)}"
            )
        if isinstance(exc, httpx.TimeoutException):
            return TransientProviderError(
                f"the model server stopped sending mid-reply (nothing for {self.timeout:g}s)"
            )
        if isinstance(exc, httpx.TransportError):
            return TransientProviderError(
                f"the connection to the model server broke mid-reply: {describe(exc)}"
            )
        if isinstance(exc, openai.APIError):  # e.g. an {"error": …} event inside the stream
            return TransientProviderError(
                f"the model server reported an error: {server_message(exc)}"
            )
        if isinstance(exc, ValueError):  # a chunk that is not JSON
            return TransientProviderError(
                f"the model server sent a malformed reply: {describe(exc)}"
            )
        return TransientProviderError(f"the model call failed: {describe(exc)}")

    def _status_error(self, status: int, message: str) -> ProviderError:
        if status == 401:
            return PermanentProviderError(
                "the model server refused the API key (401): check JAIWEB_LLM_API_KEY"
            )
        if status == 404:
            return PermanentProviderError(
                f"the model server does not know the model {self.model!r} (404: {message}): "
                f"check JAIWEB_LLM_MODEL, and that JAIWEB_LLM_BASE_URL ({self.base_url}) is "
                "the API's address (usually ending in /v1)"
            )
        if status == 429:
            return TransientProviderError(
                f"the model server is rate limiting requests (429): {message}"
            )
        if status in (408, 409) or status >= 500:
            return TransientProviderError(f"the model server failed ({status}): {message}")
        if status == 403:
            return PermanentProviderError(
                f"the model server refused the request (403: {message}): check that "
                "JAIWEB_LLM_API_KEY may use this model"
            )
        if status == 400:
            return PermanentProviderError(f"the model server rejected the request (400): {message}")
        return PermanentProviderError(f"the model server refused the request ({status}): {message}")


# -- helpers (pure) ----------------------------------------------------------------------


def tool_to_chat(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def arguments_text(call: ToolCall) -> str:
    """The call's arguments as the model wrote them: unparsed text goes back verbatim."""
    raw = call.arguments.get("_unparsed")
    if len(call.arguments) == 1 and isinstance(raw, str):
        return raw
    return json.dumps(call.arguments, ensure_ascii=False)


def message_to_chat(message: ContextMessage) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, SummaryMessage):
        return {"role": "system", "content": f"Summary of the story so far: {message.content}"}
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    return {
        "role": "assistant",
        # Servers differ on "" beside tool calls; null is what the OpenAI API itself sends.
        "content": message.content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            }
            for call in message.tool_calls
        ],
    }


def transcript_line(message: ContextMessage) -> str:
    """One message as a line of the plain-text transcript given to ``summarize``."""
    if isinstance(message, UserMessage):
        return f"User: {message.content}"
    if isinstance(message, SummaryMessage):
        return f"Summary of what came before: {message.content}"
    if isinstance(message, ToolResultMessage):
        outcome = "failed" if message.is_error else "returned"
        return f"Tool {message.tool_name} {outcome}: {message.content}"
    assert isinstance(message, AssistantMessage)
    lines = [f"Assistant: {message.content}"] if message.content else []
    lines += [
        f"Assistant called {call.name}({arguments_text(call)})" for call in message.tool_calls
    ]
    return "\n".join(lines) or "Assistant: (no text)"


def delta_events(delta: Any) -> Iterator[StreamEvent]:
    """The events in one chunk's delta; tolerant of servers that omit fields."""
    content = getattr(delta, "content", None)
    if isinstance(content, str) and content:
        yield TextDelta(content)
    for call in getattr(delta, "tool_calls", None) or []:
        index = getattr(call, "index", None)
        function = getattr(call, "function", None)
        call_id = getattr(call, "id", None)
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", None)
        yield ToolCallDelta(
            index=index if isinstance(index, int) and not isinstance(index, bool) else 0,
            id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
            arguments=arguments if isinstance(arguments, str) else "",
        )


def usage_of(chunk: Any) -> Usage | None:
    usage = getattr(chunk, "usage", None)
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not (count(prompt) and count(completion)):
        return None
    return Usage(input_tokens=prompt, output_tokens=completion)


def count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def server_message(exc: openai.APIError) -> str:
    """What the server said, short: the ``message`` of its error body if it has one."""
    body = exc.body
    text: Any = None
    if isinstance(body, dict):
        text = body.get("message") or body.get("detail") or body.get("error")
    elif isinstance(body, str):
        text = body
    if not isinstance(text, str) or not text.strip():
        text = exc.message
    text = " ".join(text.split())
    if len(text) > SERVER_MESSAGE_LIMIT:
        text = text[: SERVER_MESSAGE_LIMIT - 1] + "…"
    return text


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__
