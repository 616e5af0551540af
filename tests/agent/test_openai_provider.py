"""OpenAICompatProvider against a real loopback HTTP server (nothing in openai/httpx mocked)."""

from __future__ import annotations

import time

import pytest

from jaiweb.agent.providers.base import (
    PermanentProviderError,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    TransientProviderError,
    UsageReport,
    assemble,
)
from jaiweb.agent.providers.openai_compat import OpenAICompatProvider
from journal.entries import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tests.support.model_server import MODEL, call_piece, chunk, provider, text, usage_chunk
from tests.support.model_server import fake_llm as fake_llm  # the fixture

PROMPT = "吃下超级棒棒糖，上擂台对决超人强！"
IMAGE_TOOL = ToolSpec(
    name="generate_image",
    description="Draw one comic panel.",
    parameters={
        "type": "object",
        "properties": {"prompt": {"type": "string"}},
        "required": ["prompt"],
    },
)


def user(content: str = PROMPT) -> list:
    return [UserMessage(content=content)]


# -- streaming ----------------------------------------------------------------------------


def test_text_streams_in_pieces_with_usage(fake_llm):
    fake_llm.stream(
        chunk({"role": "assistant", "content": ""}),
        text("猪猪侠"),
        text("吃下了"),
        text("棒棒糖……"),
        chunk(finish="stop"),
        usage_chunk(812, 64),
    )
    events = list(provider(fake_llm).stream(user(), []))
    assert events == [
        TextDelta("猪猪侠"),
        TextDelta("吃下了"),
        TextDelta("棒棒糖……"),
        UsageReport(Usage(input_tokens=812, output_tokens=64)),  # as soon as it is counted
        StreamEnd("stop", Usage(input_tokens=812, output_tokens=64)),
    ]


def test_tool_call_arguments_split_across_chunks_and_two_calls(fake_llm):
    fake_llm.stream(
        chunk({"role": "assistant", "content": "画两格。"}),
        call_piece(0, id="call_a", name="generate_image", arguments='{"pro'),
        call_piece(0, arguments='mpt": "猪猪侠…"}'),
        call_piece(1, id="call_b", name="generate_image", arguments='{"prompt": '),
        call_piece(1, arguments='"超人强"}'),
        chunk(finish="tool_calls"),
        usage_chunk(900, 80),
    )
    events = list(provider(fake_llm).stream(user(), [IMAGE_TOOL]))
    assert events[1:3] == [
        ToolCallDelta(0, "call_a", "generate_image", '{"pro'),
        ToolCallDelta(0, None, None, 'mpt": "猪猪侠…"}'),
    ]
    reply = assemble(events)
    assert reply.text == "画两格。"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_a", "generate_image", '{"prompt": "猪猪侠…"}'),
        ("call_b", "generate_image", '{"prompt": "超人强"}'),
    ]
    assert reply.stop_reason == "tool_use"
    assert reply.usage == Usage(input_tokens=900, output_tokens=80)
    assert reply.complete


def test_empty_ids_and_missing_index_are_passed_through(fake_llm):
    fake_llm.stream(
        call_piece(None, id="", name="generate_image", arguments='{"prompt": '),
        call_piece(None, id="", arguments='"x"}'),
        chunk(finish="tool_calls"),
    )
    events = list(provider(fake_llm).stream(user(), [IMAGE_TOOL]))
    assert events == [
        ToolCallDelta(0, "", "generate_image", '{"prompt": '),
        ToolCallDelta(0, "", None, '"x"}'),
        StreamEnd("tool_use", None),
    ]


def test_server_that_never_sends_usage(fake_llm):
    fake_llm.stream(text("好"), chunk(finish="stop"))
    assert list(provider(fake_llm).stream(user(), [])) == [TextDelta("好"), StreamEnd("stop")]


def test_minimal_chunks_without_ids_or_indexes(fake_llm):
    """Some servers send bare chunks: no id, no model, no choice index, no finish_reason key."""
    fake_llm.stream(
        {"choices": [{"delta": {"content": "a"}}]},
        {"choices": [{"delta": {}, "finish_reason": "length"}]},
    )
    assert list(provider(fake_llm).stream(user(), [])) == [TextDelta("a"), StreamEnd("length")]


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [
        ("stop", "stop"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
        ("length", "length"),
        ("content_filter", "error"),
        ("eos_token", "stop"),
    ],
)
def test_finish_reasons(fake_llm, finish, stop_reason):
    fake_llm.stream(text("x"), chunk(finish=finish))
    events = list(provider(fake_llm).stream(user(), []))
    assert events[-1] == StreamEnd(stop_reason)


# -- broken streams -----------------------------------------------------------------------


def test_cut_mid_stream_raises_transient_after_the_first_delta(fake_llm):
    """The socket closes inside chunked framing: httpx raises, not openai."""
    fake_llm.cut(text("猪猪侠"), text("吃下"))
    events = provider(fake_llm).stream(user(), [])
    assert next(events) == TextDelta("猪猪侠")
    assert next(events) == TextDelta("吃下")
    with pytest.raises(TransientProviderError, match="broke mid-reply") as caught:
        next(events)
    assert caught.value.transient


def test_close_delimited_stream_ending_early_is_transient(fake_llm):
    """No framing to break: the body just ends, without a finish_reason or [DONE]."""
    fake_llm.cut(text("猪猪侠"), chunked=False)
    events = provider(fake_llm).stream(user(), [])
    assert next(events) == TextDelta("猪猪侠")
    with pytest.raises(TransientProviderError, match="ended before the reply was complete"):
        next(events)


def test_done_without_finish_reason_is_transient(fake_llm):
    fake_llm.stream(text("a"))
    with pytest.raises(TransientProviderError, match="ended before the reply was complete"):
        list(provider(fake_llm).stream(user(), []))


def test_stalled_stream_times_out_as_transient(fake_llm):
    fake_llm.stall(text("a"))
    p = OpenAICompatProvider(model=MODEL, base_url=fake_llm.base_url, api_key=None, timeout=0.5)
    events = p.stream(user(), [])
    assert next(events) == TextDelta("a")
    started = time.monotonic()
    with pytest.raises(TransientProviderError, match="stopped sending"):
        next(events)
    assert time.monotonic() - started < 3


def test_error_event_inside_the_stream_is_transient(fake_llm):
    fake_llm.stream(text("a"), {"error": {"message": "model overloaded", "type": "server_error"}})
    events = provider(fake_llm).stream(user(), [])
    assert next(events) == TextDelta("a")
    with pytest.raises(TransientProviderError, match="model overloaded"):
        next(events)


def test_malformed_chunk_is_transient(fake_llm):
    fake_llm.stream("{not json", chunk(finish="stop"))
    with pytest.raises(TransientProviderError, match="malformed"):
        list(provider(fake_llm).stream(user(), []))


def test_unreachable_server_is_transient():
    p = OpenAICompatProvider(model=MODEL, base_url="http://127.0.0.1:9/v1", api_key=None, timeout=2)
    with pytest.raises(TransientProviderError, match=r"could not reach the model server"):
        list(p.stream(user(), []))


# -- HTTP errors --------------------------------------------------------------------------


def test_500_then_success(fake_llm):
    fake_llm.json(500, {"error": {"message": "upstream exploded", "type": "server_error"}})
    fake_llm.stream(text("ok"), chunk(finish="stop"))
    p = provider(fake_llm)
    with pytest.raises(TransientProviderError, match=r"\(500\): upstream exploded"):
        list(p.stream(user(), []))
    assert assemble(p.stream(user(), [])).text == "ok"
    assert len(fake_llm.requests) == 2  # no hidden retry inside the SDK


def test_429_is_transient(fake_llm):
    fake_llm.json(429, {"error": {"message": "slow down", "type": "rate_limit"}})
    with pytest.raises(TransientProviderError, match=r"rate limiting.*slow down"):
        list(provider(fake_llm).stream(user(), []))
    assert len(fake_llm.requests) == 1


def test_401_is_permanent_and_names_the_key_setting(fake_llm):
    fake_llm.json(401, {"error": {"message": "Incorrect API key provided: sk-test"}})
    with pytest.raises(PermanentProviderError) as caught:
        list(provider(fake_llm).stream(user(), []))
    assert str(caught.value) == (
        "the model server refused the API key (401): check JAIWEB_LLM_API_KEY"
    )
    assert not caught.value.transient


def test_404_unknown_model_is_permanent_and_names_it(fake_llm):
    fake_llm.json(
        404,
        {
            "error": {
                "message": f"The model `{MODEL}` does not exist",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        },
    )
    with pytest.raises(PermanentProviderError) as caught:
        list(provider(fake_llm).stream(user(), []))
    message = str(caught.value)
    assert MODEL in message
    assert "JAIWEB_LLM_MODEL" in message


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, {"error": {"message": "tools[0] is invalid"}}, r"rejected the request \(400\)"),
        (403, {"error": {"message": "no access to this model"}}, r"\(403: no access"),
        (422, {"detail": "unprocessable thing"}, r"\(422\): unprocessable thing"),
    ],
)
def test_other_4xx_are_permanent_with_the_servers_message(fake_llm, status, body, expected):
    fake_llm.json(status, body)
    with pytest.raises(PermanentProviderError, match=expected):
        list(provider(fake_llm).stream(user(), []))


# -- what is sent -------------------------------------------------------------------------


def test_request_body(fake_llm):
    fake_llm.stream(text("ok"), chunk(finish="stop"))
    messages = [
        SummaryMessage(content="猪猪侠上了擂台。"),
        UserMessage(content=PROMPT),
        AssistantMessage(
            content="",
            tool_calls=[
                ToolCall(id="call_1", name="generate_image", arguments={"prompt": "猪猪侠出拳"}),
                ToolCall(id="call_2", name="generate_image", arguments={"_unparsed": '{"prom'}),
            ],
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="generate_image", content="panel rendered"
        ),
        ToolResultMessage(
            tool_call_id="call_2",
            tool_name="generate_image",
            content="invalid arguments",
            is_error=True,
        ),
        AssistantMessage(content="画好了。", stop_reason="stop"),
    ]
    p = provider(fake_llm, system_prompt="You draw comics.")
    list(p.stream(messages, [IMAGE_TOOL]))

    (request,) = fake_llm.requests
    body = request.body
    assert request.path == "/v1/chat/completions"
    assert body["model"] == MODEL
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "generate_image",
                "description": "Draw one comic panel.",
                "parameters": IMAGE_TOOL.parameters,
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "You draw comics."},
        {"role": "system", "content": "Summary of the story so far: 猪猪侠上了擂台。"},
        {"role": "user", "content": PROMPT},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "generate_image",
                        "arguments": '{"prompt": "猪猪侠出拳"}',
                    },
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "generate_image", "arguments": '{"prom'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "panel rendered"},
        {"role": "tool", "tool_call_id": "call_2", "content": "invalid arguments"},
        {"role": "assistant", "content": "画好了。"},
    ]
    assert request.headers["authorization"] == "Bearer sk-test"


def test_no_tools_key_when_there_are_no_tools(fake_llm):
    fake_llm.stream(text("ok"), chunk(finish="stop"))
    list(provider(fake_llm).stream(user(), []))
    assert "tools" not in fake_llm.requests[0].body
    assert fake_llm.requests[0].body["messages"] == [{"role": "user", "content": PROMPT}]


def test_placeholder_key_and_no_openai_environment(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-leak")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-leak")
    fake_llm.stream(text("ok"), chunk(finish="stop"))
    p = OpenAICompatProvider(model=MODEL, base_url=fake_llm.base_url, api_key=None, timeout=2)
    assert p.name == MODEL
    assert p.offline is False
    list(p.stream(user(), []))
    headers = fake_llm.requests[0].headers
    assert headers["authorization"] == "Bearer not-needed"
    assert "openai-organization" not in headers
    assert "openai-project" not in headers


def test_closing_the_stream_early_releases_the_connection(fake_llm):
    fake_llm.stream(text("a"), text("b"), chunk(finish="stop"))
    events = provider(fake_llm).stream(user(), [])
    assert next(events) == TextDelta("a")
    events.close()  # the loop aborting a reply: no error, nothing left open
    fake_llm.stream(text("c"), chunk(finish="stop"))
    assert assemble(provider(fake_llm).stream(user(), [])).text == "c"


# -- summarize ----------------------------------------------------------------------------


def completion(content: str | None) -> dict:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
    }


def test_summarize(fake_llm):
    fake_llm.json(200, completion("  猪猪侠吃了棒棒糖，第1格：出拳。  "))
    messages = [
        UserMessage(content=PROMPT),
        AssistantMessage(
            content="画一格。",
            tool_calls=[ToolCall(id="c1", name="generate_image", arguments={"prompt": "出拳"})],
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="generate_image", content="panel rendered"),
    ]
    summary = provider(fake_llm, system_prompt="ignored here").summarize(messages)
    assert summary == "猪猪侠吃了棒棒糖，第1格：出拳。"

    body = fake_llm.requests[0].body
    assert body.get("stream") in (None, False)
    assert "tools" not in body
    system, request = body["messages"]
    assert system["role"] == "system"
    assert request["role"] == "user"
    assert PROMPT in request["content"]
    assert 'generate_image({"prompt": "出拳"})' in request["content"]
    assert "panel rendered" in request["content"]
    assert "character" in request["content"]
    assert "panels" in request["content"]


def test_summarize_errors(fake_llm):
    fake_llm.json(401, {"error": {"message": "bad key"}})
    fake_llm.json(503, {"error": {"message": "loading model"}})
    fake_llm.json(200, completion(None))
    p = provider(fake_llm)
    with pytest.raises(PermanentProviderError, match="JAIWEB_LLM_API_KEY"):
        p.summarize(user())
    with pytest.raises(TransientProviderError, match="loading model"):
        p.summarize(user())
    with pytest.raises(TransientProviderError, match="empty summary"):
        p.summarize(user())
