"""The loop with the OpenAI-compatible provider against a real loopback SSE server."""

from __future__ import annotations

import pytest

from tests.support.model_server import call_piece, chunk, provider, text, usage_chunk
from tests.support.model_server import fake_llm as fake_llm  # the fixture

pytestmark = pytest.mark.django_db


def test_a_cut_stream_and_a_500_are_new_attempts_then_the_reply_lands(harness, fake_llm):
    op = harness.prompt("你好")
    fake_llm.cut(text("猪猪"), text("侠"))  # the connection drops mid-reply
    fake_llm.json(500, {"error": {"message": "overloaded"}})
    fake_llm.stream(text("猪猪侠"), text("来了"), chunk(finish="stop"), usage_chunk(12, 3))
    slept = []
    assert harness.run(provider(fake_llm), sleep=slept.append) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "model_attempted",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert len(slept) == 2  # backed off before each retry
    reply = harness.entries()[-1].message
    assert reply.content == "猪猪侠来了" and reply.usage.input_tokens == 12
    assert harness.records(op)[-1].outcome == "completed"


def test_tool_call_arguments_in_pieces_and_an_empty_id_run_the_tool(harness, fake_llm):
    op = harness.prompt("设定状态")
    fake_llm.stream(
        call_piece(0, id="", name="set_character_state", arguments='{"charac'),
        call_piece(0, arguments='ter": "猪猪侠", "mood": "得意"}'),
        chunk(finish="tool_calls"),
    )
    fake_llm.stream(text("好了"), chunk(finish="stop"))
    assert harness.run(provider(fake_llm)) == "finished"
    reply = harness.entries()[1].message
    [call] = reply.tool_calls
    assert call.id == "call_1" and call.arguments == {"character": "猪猪侠", "mood": "得意"}
    assert "tool_dispatched" in harness.record_types(op)
    assert harness.entry_kinds()[2:4] == ["app_state", "tool_result:set_character_state"]


def test_a_refused_key_fails_the_operation_with_a_message_to_act_on(harness, fake_llm):
    op = harness.prompt("你好")
    fake_llm.json(401, {"error": {"message": "Incorrect API key provided"}})
    assert harness.run(provider(fake_llm)) == "finished"
    finished = harness.records(op)[-1]
    assert finished.outcome == "failed" and "JAIWEB_LLM_API_KEY" in finished.error.message
    assert harness.record_types(op).count("model_attempted") == 1  # not retried
