"""journal.variants: which calls make a variant set, which approval decides each, and which
variant a reader sees."""

from __future__ import annotations

from journal.entries import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage, UserMessage
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.pages import panels_on
from journal.records import (
    ApprovalDecided,
    ApprovalRequested,
    ModelAttempted,
    OperationAccepted,
    ToolDispatched,
    UsageSettled,
)
from journal.recovery import RecoveryEvidence, fold_operation
from journal.steps import HandleCall, Limits, next_step
from journal.variants import (
    approval_call_id,
    approval_size,
    choices_of,
    chosen_member,
    hidden_members,
    sets_of_reply,
    sets_on,
    with_choice,
)
from tests.support.factories import T0, at, state

OP = "op"


def draw(call_id: str, prompt: str = "a pig", **extra) -> ToolCall:
    return ToolCall(id=call_id, name="generate_image", arguments={"prompt": prompt, **extra})


def reply(entry_id: str, parent: str | None, calls: list[ToolCall]) -> MessageEntry:
    message = AssistantMessage(content="drawing", tool_calls=calls, stop_reason="tool_use")
    return MessageEntry(id=entry_id, parent_id=parent, timestamp=at(1), message=message)


def drawn(reply_id: str, call: ToolCall, parent: str, *, error: bool = False) -> MessageEntry:
    details = {} if error else {"image_id": f"img_{call.id}"}
    message = ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content="x", is_error=error, details=details
    )
    return MessageEntry(
        id=result_entry_id(reply_id, call.id), parent_id=parent, timestamp=at(2), message=message
    )


def a_set(n: int = 3, *, failed: tuple[int, ...] = ()) -> tuple[list, list[ToolCall]]:
    """A prompt, a reply drawing ``n`` variants, and their results in order."""
    calls = [draw(f"c{i}", variants=n) for i in range(1, n + 1)]
    path = [
        MessageEntry(id="u", parent_id=None, timestamp=T0, message=UserMessage(content="go")),
        reply("a", "u", calls),
    ]
    for i, call in enumerate(calls, 1):
        path.append(drawn("a", call, path[-1].id, error=i in failed))
    return path, calls


def test_the_calls_with_a_count_and_one_prompt_make_one_set():
    calls = [
        draw("c1", variants=2),
        draw("c2"),  # no count: a panel of its own
        draw("c3", variants=2),
        draw("c4", "a ring", variants=3),
        draw("c5", variants="2"),  # not a whole number: no set
        draw("c6", variants=5),  # out of range: no set
        ToolCall(id="c7", name="publish_panel", arguments={"variants": 2}),
        draw("c8", "a ring", variants=3),
    ]
    message = reply("a", "u", calls).message
    sets = sets_of_reply("a", message)
    assert [s.calls for s in sets] == [("c1", "c3"), ("c4", "c8")]
    assert [s.id for s in sets] == [result_entry_id("a", "c1"), result_entry_id("a", "c4")]
    assert approval_call_id("a", message, "c3") == "c1"
    assert approval_call_id("a", message, "c2") == "c2"
    assert [approval_size("a", message, c) for c in ("c1", "c3", "c2", "c4")] == [2, 1, 1, 2]


def test_the_members_are_the_variants_that_drew_a_picture():
    path, _ = a_set(3, failed=(2,))
    [variant_set] = sets_on(path)
    assert variant_set.calls == ("c1", "c2", "c3")
    assert variant_set.members == (result_entry_id("a", "c1"), result_entry_id("a", "c3"))


def test_a_reader_sees_the_first_variant_until_another_is_chosen():
    path, _ = a_set(3)
    [variant_set] = sets_on(path)
    first, second, third = variant_set.members
    assert [p.entry_id for p in panels_on(path)] == [first]
    assert chosen_member(variant_set, {}) == first
    chosen = {variant_set.id: third}
    assert [p.entry_id for p in panels_on(path, chosen)] == [third]
    assert hidden_members([variant_set], chosen) == {first, second}
    # a choice that is no member of the set chooses nothing
    assert [p.entry_id for p in panels_on(path, {variant_set.id: "r_else"})] == [first]
    # the choice at the path's end, from its last app_state entry
    value = with_choice({"characters": {}, "permission_mode": "ask"}, variant_set.id, second)
    assert choices_of(value) == {variant_set.id: second}
    on_path = [*path, state("s1", path[-1].id, value)]
    assert [p.entry_id for p in panels_on(on_path)] == [second]
    # choices given override the path's (an export reads the state at the node)
    assert [p.entry_id for p in panels_on(on_path, {})] == [first]


def test_a_malformed_choice_reads_as_none():
    assert choices_of({"variants": ["x"]}) == {}
    assert choices_of(None) == {}


def dispatched(call: ToolCall, reply_id: str = "a") -> ToolDispatched:
    return ToolDispatched(
        operation_id=OP,
        timestamp=T0,
        tool_call_id=call.id,
        tool_name=call.name,
        assistant_entry_id=reply_id,
        args=call.arguments,
        args_hash=args_hash(call.arguments),
        result_entry_id=result_entry_id(reply_id, call.id),
        idempotency_key=idempotency_key(OP, call.id),
        policy="idempotent",
        dispatch_attempt=1,
    )


def step_after(path: list, records: list) -> HandleCall:
    log = fold_operation(
        [
            OperationAccepted(
                operation_id=OP, timestamp=T0, input_entry_id="u", start_leaf_id=None
            ),
            ModelAttempted(
                operation_id=OP, timestamp=T0, attempt_id="m1", assistant_entry_id="a", model="x"
            ),
            UsageSettled(
                operation_id=OP,
                timestamp=T0,
                attempt_id="m1",
                usage={"input_tokens": 1, "output_tokens": 1},
            ),
            *records,
        ]
    )
    evidence = RecoveryEvidence(entry_ids=frozenset(e.id for e in path))
    step = next_step(log, evidence, path, Limits())
    assert isinstance(step, HandleCall)
    return step


def test_the_set_asks_once_and_its_other_calls_follow_that_decision():
    path, calls = a_set(3)
    path = path[:2]  # nothing drawn yet
    first = step_after(path, [])
    assert first.call.id == "c1" and first.approval is None and first.covers == 3
    asked = ApprovalRequested(operation_id=OP, timestamp=T0, tool_call_id="c1", cost=30)
    for decision in ("approved", "denied"):
        decided = ApprovalDecided(
            operation_id=OP, timestamp=T0, tool_call_id="c1", decision=decision, by="alice"
        )
        done = [asked, decided, dispatched(calls[0])]
        second = step_after([*path, drawn("a", calls[0], "a")], done)
        assert second.call.id == "c2" and second.covers == 1
        assert second.approval == decision and second.decision == decided


def test_a_call_outside_any_set_keeps_its_own_approval():
    calls = [draw("c1", variants=2), draw("c2", variants=2), draw("c3", "a ring")]
    path = [
        MessageEntry(id="u", parent_id=None, timestamp=T0, message=UserMessage(content="go")),
        reply("a", "u", calls),
    ]
    asked = ApprovalRequested(operation_id=OP, timestamp=T0, tool_call_id="c1", cost=20)
    decided = ApprovalDecided(
        operation_id=OP, timestamp=T0, tool_call_id="c1", decision="approved", by="alice"
    )
    path += [drawn("a", calls[0], "a")]
    path += [drawn("a", calls[1], path[-1].id)]
    records = [asked, decided, dispatched(calls[0]), dispatched(calls[1])]
    third = step_after(path, records)
    assert third.call.id == "c3" and third.approval is None and third.covers == 1
