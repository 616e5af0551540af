"""journal.entries and journal.records: the shapes of docs/ARCHITECTURE.md §5 and §6, exact
JSON, clear errors."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    entry_to_dict,
    parse_entry,
)
from journal.jsonvalues import check_json, check_text
from journal.records import OperationFinished, ToolDispatched, parse_record, record_to_dict

CONTRACT_ENTRIES = [
    {
        "type": "message",
        "id": "e0",
        "parent_id": None,
        "timestamp": "2026-11-29T12:00:00Z",
        "message": {"role": "user", "content": "吃下超级棒棒糖，上擂台对决超人强！"},
    },
    {
        "type": "message",
        "id": "e2",
        "parent_id": "e1",
        "timestamp": "2026-11-29T12:00:02Z",
        "message": {
            "role": "assistant",
            "content": "猪猪侠吃下了棒棒糖……",
            "tool_calls": [
                {"id": "call_1", "name": "generate_image", "arguments": {"prompt": "…"}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 812, "output_tokens": 64},
        },
    },
    {
        "type": "message",
        "id": "r_1",
        "parent_id": "e2",
        "timestamp": "2026-11-29T12:00:03Z",
        "message": {
            "role": "tool_result",
            "tool_call_id": "call_1",
            "tool_name": "generate_image",
            "content": "panel rendered",
            "is_error": False,
            "details": {"image_id": "img_1"},
        },
    },
    {
        "type": "app_state",
        "id": "e1",
        "parent_id": "e0",
        "timestamp": "2026-11-29T12:00:01Z",
        "value": {
            "characters": {
                "猪猪侠": {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}
            },
            "permission_mode": "ask",
        },
    },
    {
        "type": "compaction",
        "id": "c1",
        "parent_id": "e40",
        "timestamp": "2026-11-29T12:00:04Z",
        "summary": "……",
        "first_kept_entry_id": "e31",
        "tokens_before": 9100,
        "tokens_after": 2300,
    },
    {
        "type": "branch",
        "id": "e5",
        "parent_id": "e2",
        "timestamp": "2026-11-29T12:00:05Z",
        "from_id": "e4",
    },
]


@pytest.mark.parametrize("data", CONTRACT_ENTRIES, ids=lambda d: d["type"] + ":" + d["id"])
def test_contract_examples_round_trip_exactly(data):
    entry = parse_entry(data)
    assert entry_to_dict(entry) == data
    assert parse_entry(json.dumps(data, ensure_ascii=False)) == entry
    assert parse_entry(entry.model_dump_json()) == entry


def test_defaults_of_optional_fields():
    a = parse_entry(
        {
            "type": "message",
            "id": "a",
            "parent_id": None,
            "timestamp": "2026-11-29T12:00:00+08:00",
            "message": {"role": "assistant", "content": "x", "stop_reason": "stop"},
        }
    )
    assert a.message.tool_calls == [] and a.message.usage is None and a.message.is_final
    r = ToolResultMessage(tool_call_id="c", tool_name="t", content="x")
    assert r.details == {} and r.is_error is False


def test_discriminators_pick_the_class():
    kinds = [type(parse_entry(d)) for d in CONTRACT_ENTRIES]
    assert kinds == [
        MessageEntry,
        MessageEntry,
        MessageEntry,
        AppStateEntry,
        CompactionEntry,
        BranchEntry,
    ]
    assert isinstance(parse_entry(CONTRACT_ENTRIES[1]).message, AssistantMessage)


def _error(data) -> str:
    with pytest.raises(ValidationError) as err:
        parse_entry(data)
    return str(err.value)


def test_unknown_type_is_a_clear_error():
    msg = _error({**CONTRACT_ENTRIES[5], "type": "bookmark"})
    assert "bookmark" in msg and "'message', 'app_state', 'compaction', 'branch'" in msg


def test_unknown_field_is_refused_not_dropped():
    assert "colour" in _error({**CONTRACT_ENTRIES[5], "colour": "red"})


def test_naive_timestamp_is_refused():
    assert "timezone" in _error({**CONTRACT_ENTRIES[5], "timestamp": "2026-11-29T12:00:00"})


def test_nul_character_is_refused_anywhere():
    assert "NUL" in _error({**CONTRACT_ENTRIES[0], "message": {"role": "user", "content": "a\x00"}})
    bad_state = {**CONTRACT_ENTRIES[3], "value": {"deep": [{"k": "x\x00y"}]}}
    assert "NUL" in _error(bad_state)
    assert "NUL" in _error({**CONTRACT_ENTRIES[3], "value": {"k\x00": 1}})
    assert "NUL" in _error({**CONTRACT_ENTRIES[5], "id": "e\x005"})


def test_lone_surrogates_are_refused_anywhere():
    """A JSON "\\udfff" escape decodes to one; no UTF-8 writer can encode it (issue 14.4)."""
    lone = "lone surrogate"
    user = {"role": "user", "content": "a\udfff"}
    assert lone in _error({**CONTRACT_ENTRIES[0], "message": user})
    assert lone in _error({**CONTRACT_ENTRIES[3], "value": {"deep": [{"k": "猪\ud800"}]}})
    assert lone in _error({**CONTRACT_ENTRIES[3], "value": {"k\udc00": 1}})
    # Ids have length bounds, and pydantic's own constrained strings refuse surrogates too.
    assert "valid string" in _error({**CONTRACT_ENTRIES[5], "id": "e\udfff"})
    paired = "猪🐷\u00e9"  # a pair written as two escapes decodes to one character: fine
    assert json.loads('"\\ud83d\\udc37"') == "🐷"
    assert check_text(paired) == paired and check_json({paired: [paired]}) == {paired: [paired]}


def test_non_finite_numbers_are_refused():
    assert "finite" in _error({**CONTRACT_ENTRIES[3], "value": {"x": float("nan")}})


def test_tool_call_ids_follow_the_pattern_and_are_unique_per_message():
    msg = dict(CONTRACT_ENTRIES[1]["message"])
    bad_id = {**msg, "tool_calls": [{"id": "call 1", "name": "g", "arguments": {}}]}
    assert "tool_calls" in _error({**CONTRACT_ENTRIES[1], "message": bad_id})
    call = {"id": "c", "name": "g", "arguments": {}}
    dup = {**msg, "tool_calls": [call, call]}
    assert "unique" in _error({**CONTRACT_ENTRIES[1], "message": dup})


def test_arguments_must_be_an_object_unparsed_kept_as_text():
    msg = dict(CONTRACT_ENTRIES[1]["message"])
    as_list = {**msg, "tool_calls": [{"id": "c", "name": "g", "arguments": [1]}]}
    assert "arguments" in _error({**CONTRACT_ENTRIES[1], "message": as_list})
    raw = {**msg, "tool_calls": [{"id": "c", "name": "g", "arguments": {"_unparsed": "{oops"}}]}
    entry = parse_entry({**CONTRACT_ENTRIES[1], "message": raw})
    assert entry.message.tool_calls[0].arguments == {"_unparsed": "{oops"}


def test_branch_needs_a_parent_and_counts_are_non_negative():
    assert "parent_id" in _error({**CONTRACT_ENTRIES[5], "parent_id": None})
    assert "tokens_after" in _error({**CONTRACT_ENTRIES[4], "tokens_after": -1})
    assert "tokens_after" in _error({**CONTRACT_ENTRIES[4], "tokens_after": "12"})


def test_entries_are_frozen():
    entry = parse_entry(CONTRACT_ENTRIES[5])
    with pytest.raises(ValidationError):
        entry.from_id = "x"


RECORDS = [
    {
        "type": "operation_accepted",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "kind": "prompt",
        "input_entry_id": "e0",
        "start_leaf_id": None,
    },
    {
        "type": "model_attempted",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "attempt_id": "a1",
        "assistant_entry_id": "e2",
        "model": "offline-director",
    },
    {
        "type": "usage_settled",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "attempt_id": "a1",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    },
    {
        "type": "approval_requested",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "tool_call_id": "call_1",
        "cost": 10,
    },
    {
        "type": "approval_decided",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "tool_call_id": "call_1",
        "decision": "approved",
        "auto_from_now": True,
        "by": "alice",
    },
    {
        "type": "tool_dispatched",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "tool_call_id": "call_1",
        "tool_name": "generate_image",
        "assistant_entry_id": "e2",
        "args": {"prompt": "p"},
        "args_hash": "ab" * 32,
        "result_entry_id": "r_1",
        "idempotency_key": "k_1",
        "policy": "idempotent",
        "dispatch_attempt": 1,
    },
    {
        "type": "tool_resolved",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "tool_call_id": "call_1",
        "resolution": "confirmed",
        "by": "admin",
        "reason": "seen",
    },
    {
        "type": "input_queued",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "input_id": "i1",
        "delivery": "steer",
        "input_entry_id": "e9",
        "text": "faster",
    },
    {
        "type": "stop_requested",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "by": "alice",
    },
    {
        "type": "operation_finished",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "outcome": "failed",
        "error": {"code": "provider_auth", "message": "401"},
    },
    {  # recovery's own resolution, decided by what the render service stored
        "type": "tool_resolved",
        "operation_id": "op",
        "timestamp": "2026-11-29T12:00:00Z",
        "tool_call_id": "call_1",
        "resolution": "confirmed",
        "by": "reconciler",
        "reason": "the render service stored image img_7 under the call's key",
        "resolved_by": "reconciler",
        "evidence": {"kind": "render_job", "idempotency_key": "k_1", "image_id": "img_7"},
    },
]


@pytest.mark.parametrize("data", RECORDS, ids=lambda d: d["type"])
def test_records_round_trip_exactly(data):
    record = parse_record(data)
    assert record_to_dict(record) == data
    assert parse_record(record.model_dump_json()) == record


def test_record_errors_are_clear():
    with pytest.raises(ValidationError, match="policy"):
        parse_record({**RECORDS[5], "policy": "maybe"})
    with pytest.raises(ValidationError, match="dispatch_attempt"):
        parse_record({**RECORDS[5], "dispatch_attempt": 0})
    with pytest.raises(ValidationError, match="outcome"):
        parse_record({**RECORDS[9], "outcome": "exploded"})
    assert isinstance(parse_record(RECORDS[5]), ToolDispatched)
    assert parse_record({**RECORDS[9], "error": None}) == OperationFinished(
        operation_id="op", timestamp=parse_record(RECORDS[9]).timestamp, outcome="failed"
    )
