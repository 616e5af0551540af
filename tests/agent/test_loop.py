"""The agent loop: the exact records and entries each kind of run leaves behind."""

from __future__ import annotations

import json

import pytest

from jaiweb.agent.loop import LoopConfig
from jaiweb.agent.providers.base import RawToolCall
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.streaming import normalize_calls
from jaiweb.render.models import LedgerEntry
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_grant, wallet_get_or_create
from jaiweb.store.selectors import app_state_at
from jaiweb.store.services import (
    operation_accept,
    operation_stop_request,
    session_create,
)
from journal.ids import idempotency_key, result_entry_id
from tests.support.deep_json import JSON_VALUE_DEPTH_MAX, nested
from tests.support.runs import decide_when_asked
from tests.support.scripted import CUT, REFUSED, ScriptedProvider, calls, text

pytestmark = pytest.mark.django_db

KUNG_FU = {
    "character": "猪猪侠",
    "buff": "超级棒棒糖(功夫大师)",
    "skill": "降龙十巴掌",
    "mood": "得意",
}


def test_plain_reply(harness):
    op = harness.prompt("你好")
    assert harness.run(ScriptedProvider(text("你好，我是导演。"))) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert harness.entry_kinds() == ["user", "assistant"]
    reply = harness.entries()[1]
    attempt = harness.records(op)[1]
    assert reply.id == attempt.assistant_entry_id and reply.message.content == "你好，我是导演。"
    assert harness.records(op)[-1].outcome == "completed"
    assert [e for e in harness.events.types() if e != "text_delta"] == [
        "operation_started",
        "entry_committed",
        "operation_finished",
    ]


def auto_mode(harness):
    """The session starts with approvals off, as after "approve, and don't ask again"."""
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    harness.session = session_create(
        owner=harness.session.owner, title="auto", initial_app_state=state
    )


def test_several_tool_calls_each_get_their_own_t1_and_t2(harness):
    auto_mode(harness)
    op = harness.prompt("吃下超级棒棒糖！")
    provider = ScriptedProvider(
        calls(("set_character_state", KUNG_FU), ("generate_image", {"prompt": "擂台吃糖"})),
        text("画好了！"),
    )
    assert harness.run(provider) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "usage_settled",
        "tool_dispatched",  # set_character_state
        "tool_dispatched",  # generate_image, after the state's T2
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert harness.entry_kinds() == [
        "user",
        "assistant",
        "app_state",
        "tool_result:set_character_state",
        "tool_result:generate_image",
        "assistant",
    ]
    records, entries = harness.records(op), harness.entries()
    first_t1, second_t1 = records[3], records[4]
    reply_id = entries[1].id
    assert first_t1.result_entry_id == result_entry_id(reply_id, "call_1") == entries[3].id
    assert second_t1.result_entry_id == entries[4].id
    assert second_t1.idempotency_key == idempotency_key(op, "call_2")
    assert (first_t1.policy, second_t1.policy) == ("idempotent", "idempotent")
    # the panel was drawn in the state the first call set
    harness.session.refresh_from_db()
    assert app_state_at(session=harness.session)["characters"]["猪猪侠"]["skill"] == "降龙十巴掌"
    assert entries[4].message.details["image_id"].startswith("img_")
    assert wallet_balance(user=harness.session.owner) == 90


def test_approval_granted(harness):
    op = harness.prompt("画一格")
    provider = ScriptedProvider(calls(("generate_image", {"prompt": "擂台"})), text("好"))
    assert harness.run(provider, sleep=decide_when_asked(op, ("approved", False))) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "usage_settled",
        "approval_requested",
        "approval_decided",
        "tool_dispatched",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert harness.records(op)[3].cost == 10
    assert "approval_requested" in harness.events.types()


def test_approval_denied_writes_a_result_and_no_t1(harness):
    op = harness.prompt("画一格")
    provider = ScriptedProvider(calls(("generate_image", {"prompt": "擂台"})), text("好吧"))
    assert harness.run(provider, sleep=decide_when_asked(op, ("denied", False))) == "finished"
    types = harness.record_types(op)
    assert "tool_dispatched" not in types and "approval_decided" in types
    result = harness.entries()[2].message
    assert result.is_error and "denied" in result.content
    assert wallet_get_or_create(user=harness.session.owner).balance == 100
    assert not LedgerEntry.objects.filter(kind="charge").exists()


def test_approve_and_dont_ask_again_switches_the_mode_in_app_state(harness):
    op = harness.prompt("画两格")
    provider = ScriptedProvider(
        calls(("generate_image", {"prompt": "一"}), ("generate_image", {"prompt": "二"})),
        text("两格都画好了"),
    )
    assert harness.run(provider, sleep=decide_when_asked(op, ("approved", True))) == "finished"
    types = harness.record_types(op)
    assert types.count("approval_requested") == 1 and types.count("tool_dispatched") == 2
    assert harness.entry_kinds() == [
        "user",
        "assistant",
        "app_state",
        "tool_result:generate_image",
        "tool_result:generate_image",
        "assistant",
    ]
    harness.session.refresh_from_db()
    assert app_state_at(session=harness.session)["permission_mode"] == "auto"


def test_invalid_arguments_get_an_error_result_without_t1(harness):
    op = harness.prompt("乱来")
    provider = ScriptedProvider(
        calls(
            ("set_character_state", {"character": "猪猪侠", "colour": "red"}),
            ("set_character_state", "{not json"),
            ("teleport", {}),
        ),
        text("参数不对"),
    )
    assert harness.run(provider) == "finished"
    assert "tool_dispatched" not in harness.record_types(op)
    results = [e.message for e in harness.entries()[2:5]]
    assert all(r.is_error for r in results)
    assert "colour" in results[0].content
    assert "not a JSON object" in results[1].content
    assert "no tool called 'teleport'" in results[2].content
    reply = harness.entries()[1].message
    assert reply.tool_calls[1].arguments == {"_unparsed": "{not json"}


def test_steering_joins_at_the_next_step_boundary(harness):
    op = harness.prompt("吃糖")
    session_id = harness.session.id

    def steer(call_number):
        if call_number == 1:  # typed while the first reply streams
            assert operation_accept(session_id=session_id, text="再加一格！").queued

    provider = ScriptedProvider(
        calls(("set_character_state", KUNG_FU)), text("收到，再加一格"), on_stream=steer
    )
    assert harness.run(provider) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "input_queued",
        "usage_settled",
        "tool_dispatched",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert harness.entry_kinds() == [
        "user",
        "assistant",
        "app_state",
        "tool_result:set_character_state",
        "user",
        "assistant",
    ]
    steer_entry = harness.entries()[4]
    assert steer_entry.id == harness.records(op)[2].input_entry_id
    assert steer_entry.message.content == "再加一格！"
    assert provider.calls[1][-1].content == "再加一格！"  # the model saw it


def test_stop_with_a_queued_input(harness):
    op = harness.prompt("画三格")
    session_id = harness.session.id

    def stop_after_first(call_number):
        operation_accept(session_id=session_id, text="还有这个")
        operation_stop_request(operation_id=op, by="alice")

    provider = ScriptedProvider(
        calls(("set_character_state", KUNG_FU), ("list_panels", {})),
        on_stream=stop_after_first,
    )
    assert harness.run(provider) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "input_queued",
        "stop_requested",
        "usage_settled",
        "operation_finished",
    ]
    assert harness.records(op)[-1].outcome == "aborted"
    assert harness.entry_kinds() == [
        "user",
        "assistant",
        "tool_result:set_character_state",
        "tool_result:list_panels",
        "user",
    ]
    assert all("stopped" in e.message.content for e in harness.entries()[2:4])
    assert harness.entries()[-1].message.content == "还有这个"


def test_insufficient_credits_is_a_tool_error_without_charge(harness):
    owner = harness.session.owner
    wallet_get_or_create(user=owner)
    auto_mode(harness)
    op = harness.prompt("画十一格")
    panels = [("generate_image", {"prompt": f"第{i}格"}) for i in range(11)]
    assert harness.run(ScriptedProvider(calls(*panels), text("画不动了"))) == "finished"
    results = [
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    ]
    assert [r.is_error for r in results] == [False] * 10 + [True]
    assert "not enough credits" in results[-1].content
    assert wallet_balance(user=owner) == 0
    assert LedgerEntry.objects.filter(kind="charge").count() == 10
    credits_grant(user=owner, amount=10)
    assert harness.record_types(op).count("tool_dispatched") == 11


def test_compaction_summarizes_the_old_part(harness):
    for i in range(3):
        harness.prompt(f"第{i}轮 " + "很长的剧情" * 20)
        harness.run(ScriptedProvider(text("好的" * 40)))
    op = harness.prompt("继续")
    provider = ScriptedProvider(text("继续画"))
    harness.run(provider, config=LoopConfig(context_budget=200, lease_seconds=60))
    kinds = harness.entry_kinds()
    assert kinds[-3:] == ["user", "compaction", "assistant"]
    compaction = harness.entries()[-2]
    assert compaction.summary.startswith("summary of")
    assert compaction.tokens_after < compaction.tokens_before
    seen = provider.calls[0]
    assert seen[0].role == "summary" and len(seen) < 8
    assert harness.record_types(op)[-1] == "operation_finished"


def test_transient_failures_are_new_attempts_then_success(harness):
    op = harness.prompt("你好")
    slept = []
    provider = ScriptedProvider([CUT], [CUT], text("终于好了"))
    assert harness.run(provider, sleep=slept.append) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "model_attempted",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]
    assert slept == [0.5, 1.0]
    assert harness.entry_kinds() == ["user", "assistant"]


def test_a_permanent_failure_finishes_failed_with_the_reason(harness):
    op = harness.prompt("你好")
    assert harness.run(ScriptedProvider([REFUSED])) == "finished"
    finished = harness.records(op)[-1]
    assert finished.outcome == "failed" and "API key" in finished.error.message
    assert harness.entry_kinds() == ["user"]


def test_tool_call_ids_are_normalised_unique_in_the_operation():
    raw = [
        RawToolCall(id="", name="a", arguments="{}"),
        RawToolCall(id="call_1", name="b", arguments="{}"),
        RawToolCall(id="bad id!", name="c", arguments="[1]"),
        RawToolCall(id="x" * 65, name="d", arguments=""),
    ]
    got = normalize_calls(raw, taken={"call_2"})
    ids = [c.id for c in got]
    assert len(set(ids)) == 4 and "call_2" not in ids
    assert got[2].arguments == {"_unparsed": "[1]"} and got[3].arguments == {}


def test_stop_while_waiting_for_an_approval(harness):
    op = harness.prompt("画一格")
    provider = ScriptedProvider(calls(("generate_image", {"prompt": "擂台"})))

    def user_stops(_seconds):  # the approval is never given: the user presses Stop
        operation_stop_request(operation_id=op, by="alice")

    assert harness.run(provider, sleep=user_stops) == "finished"
    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "usage_settled",
        "approval_requested",
        "stop_requested",
        "operation_finished",
    ]
    assert harness.records(op)[-1].outcome == "aborted"
    result = harness.entries()[-1].message
    assert result.is_error and "stopped" in result.content
    assert not LedgerEntry.objects.filter(kind="charge").exists()


@pytest.mark.django_db(transaction=True)
def test_a_slow_step_keeps_its_lease(harness):
    """A model slower than the lease: the heartbeat (its own connection) renews it meanwhile."""
    import time as clock

    from jaiweb.store.models import Operation

    op = harness.prompt("慢慢来")
    seen = []

    def slow(call_number):
        before = Operation.objects.get(pk=op).lease_expires_at
        clock.sleep(1.6)  # the lease below is 1 s
        seen.append((before, Operation.objects.get(pk=op).lease_expires_at))

    provider = ScriptedProvider(text("好了"), on_stream=slow)
    config = LoopConfig(context_budget=100_000, lease_seconds=1)
    assert harness.run(provider, config=config) == "finished"
    before, after = seen[0]
    assert after > before  # renewed while the model was slow
    assert harness.record_types(op)[-1] == "operation_finished"


def test_tool_arguments_too_deep_to_keep_are_kept_as_text():
    """A model's arguments nested past what the journal keeps: as unparsed text, as any other
    arguments that are no JSON object, not a RecursionError or a refused entry."""
    kept = '{"a":' + nested(JSON_VALUE_DEPTH_MAX - 1) + "}"
    raw = [
        RawToolCall(id="call_1", name="a", arguments=nested(3_000)),
        RawToolCall(id="call_2", name="b", arguments='{"a":' + nested(JSON_VALUE_DEPTH_MAX) + "}"),
        RawToolCall(id="call_3", name="c", arguments=kept),
    ]
    got = normalize_calls(raw, taken=set())
    assert [c.arguments for c in got[:2]] == [{"_unparsed": r.arguments} for r in raw[:2]]
    assert got[2].arguments == json.loads(kept)
