"""journal.recovery: the five ordered rules of docs/ARCHITECTURE.md §7 and every impossible
log it names."""

from __future__ import annotations

import pytest

from journal.errors import CorruptedOperationLog
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import (
    ApprovalDecided,
    ApprovalRequested,
    InputQueued,
    ModelAttempted,
    OperationAccepted,
    OperationFinished,
    StopRequested,
    ToolDispatched,
    ToolResolved,
    UsageSettled,
)
from journal.recovery import (
    Dispatch,
    RecoveryEvidence,
    Verdict,
    fold_operation,
    recover_operation,
)
from tests.support.factories import T0

OP = "op1"


def accepted(op=OP):
    return OperationAccepted(operation_id=op, timestamp=T0, input_entry_id="u", start_leaf_id=None)


def attempt(n, entry, op=OP):
    return ModelAttempted(
        operation_id=op, timestamp=T0, attempt_id=f"a{n}", assistant_entry_id=entry, model="m"
    )


def usage(n):
    return UsageSettled(
        operation_id=OP,
        timestamp=T0,
        attempt_id=f"a{n}",
        usage={"input_tokens": 1, "output_tokens": 1},
    )


def t1(call, assistant="A", policy="at_most_once", n=1, **over):
    fields = dict(
        operation_id=OP,
        timestamp=T0,
        tool_call_id=call,
        tool_name="generate_image",
        assistant_entry_id=assistant,
        args={"prompt": call},
        args_hash=args_hash({"prompt": call}),
        result_entry_id=result_entry_id(assistant, call),
        idempotency_key=idempotency_key(OP, call),
        policy=policy,
        dispatch_attempt=n,
    )
    return ToolDispatched(**(fields | over))


def resolved(call, resolution):
    return ToolResolved(
        operation_id=OP,
        timestamp=T0,
        tool_call_id=call,
        resolution=resolution,
        by="admin",
        reason="checked",
    )


def queued(n):
    return InputQueued(
        operation_id=OP, timestamp=T0, input_id=f"i{n}", input_entry_id=f"q{n}", text="more"
    )


def stop():
    return StopRequested(operation_id=OP, timestamp=T0, by="alice")


def finished(outcome="completed"):
    return OperationFinished(operation_id=OP, timestamp=T0, outcome=outcome)


def R(call, assistant="A"):
    return result_entry_id(assistant, call)


def ev(*ids, final=None):
    return RecoveryEvidence(entry_ids=frozenset({"u", *ids}), final_assistant_entries=final or {})


def verdict(status, **kw):
    return Verdict(status=status, operation_id=OP, **kw)


# -- the rules, in order ----------------------------------------------------------------


def test_just_accepted_is_ready():
    assert recover_operation([accepted()], ev()) == verdict("ready")


def test_rule1_open_dispatch_is_indeterminate_even_when_other_rules_match():
    records = [accepted(), attempt(1, "A"), t1("c1"), queued(1), stop()]
    got = recover_operation(records, ev("A"))
    assert got == verdict(
        "indeterminate_tool",
        stop_requested=True,
        dispatches=[
            Dispatch(
                tool_call_id="c1",
                tool_name="generate_image",
                result_entry_id=R("c1"),
                idempotency_key=idempotency_key(OP, "c1"),
                policy="at_most_once",
                dispatch_attempt=1,
            )
        ],
    )


def test_rule1_lists_each_open_call_in_dispatch_order():
    records = [accepted(), attempt(1, "A"), t1("c2", policy="idempotent"), t1("c1")]
    got = recover_operation(records, ev("A"))
    assert [d.tool_call_id for d in got.dispatches] == ["c2", "c1"]


def test_rule1_only_the_latest_dispatch_counts():
    records = [
        accepted(),
        attempt(1, "A"),
        t1("c1", policy="idempotent"),
        t1("c1", policy="idempotent", n=2),
    ]
    got = recover_operation(records, ev("A"))
    assert got.status == "indeterminate_tool" and got.dispatches[0].dispatch_attempt == 2
    assert recover_operation(records, ev("A", R("c1"))).status == "ready"


def test_rule2_finished_is_terminal_durable():
    records = [accepted(), attempt(1, "A"), finished("failed")]
    assert recover_operation(records, ev()) == verdict(
        "terminal", finalization="durable", outcome="failed"
    )


def test_rule3_reply_not_durable_is_provider_interrupted():
    records = [accepted(), attempt(1, "A"), attempt(2, "B")]
    assert recover_operation(records, ev("A")) == verdict("provider_interrupted", attempt_id="a2")
    # inputs queued or a stop while streaming do not change that; the inputs are listed
    records += [queued(1), stop()]
    assert recover_operation(records, ev("A")) == verdict(
        "provider_interrupted", attempt_id="a2", stop_requested=True, pending_inputs=["i1"]
    )


@pytest.mark.parametrize(
    ("stop_reason", "outcome"),
    [("stop", "completed"), ("length", "completed"), ("error", "failed"), ("aborted", "aborted")],
)
def test_rule4_final_reply_is_terminal_inferred(stop_reason, outcome):
    records = [accepted(), attempt(1, "A"), usage(1)]
    assert recover_operation(records, ev("A", final={"A": stop_reason})) == verdict(
        "terminal", finalization="inferred", outcome=outcome
    )


def test_rule4_not_with_an_unanswered_input():
    records = [accepted(), attempt(1, "A"), queued(1)]
    got = recover_operation(records, ev("A", final={"A": "stop"}))
    assert got == verdict("ready", pending_inputs=["i1"])
    # written but unanswered: still ready, nothing pending to write
    assert recover_operation(records, ev("A", "q1", final={"A": "stop"})) == verdict("ready")


def test_rule4_an_input_answered_by_a_later_attempt_does_not_count():
    records = [accepted(), attempt(1, "A"), queued(1), attempt(2, "B")]
    got = recover_operation(records, ev("A", "B", "q1", final={"B": "stop"}))
    assert got == verdict("terminal", finalization="inferred", outcome="completed")


def test_rule4_not_with_a_stop_request():
    records = [accepted(), attempt(1, "A"), stop()]
    got = recover_operation(records, ev("A", final={"A": "stop"}))
    assert got == verdict("ready", stop_requested=True)


def test_rule4_not_when_the_reply_has_tool_calls():
    records = [accepted(), attempt(1, "A")]
    assert recover_operation(records, ev("A")) == verdict("ready")


def test_rule5_retry_awaits_redispatch():
    records = [accepted(), attempt(1, "A"), t1("c1"), resolved("c1", "retry")]
    assert recover_operation(records, ev("A")) == verdict("ready", redispatch=["c1"])
    redo = [*records, t1("c1", n=2)]
    assert recover_operation(redo, ev("A")).status == "indeterminate_tool"
    assert recover_operation(redo, ev("A", R("c1"))) == verdict("ready")


def test_rule5_redispatch_blocks_inferred_terminal():
    records = [accepted(), attempt(1, "A"), t1("c1"), resolved("c1", "retry")]
    got = recover_operation(records, ev("A", final={"A": "stop"}))
    assert got.status == "ready" and got.redispatch == ["c1"]


@pytest.mark.parametrize("resolution", ["confirmed", "failed"])
def test_confirmed_or_failed_with_its_result_goes_on(resolution):
    records = [accepted(), attempt(1, "A"), t1("c1"), resolved("c1", resolution)]
    assert recover_operation(records, ev("A", R("c1"))) == verdict("ready")


def test_approvals_are_folded_and_do_not_block():
    records = [
        accepted(),
        attempt(1, "A"),
        ApprovalRequested(operation_id=OP, timestamp=T0, tool_call_id="c1", cost=10),
    ]
    assert recover_operation(records, ev("A")) == verdict("ready")
    assert fold_operation(records).calls["c1"].approval == "pending"
    records.append(
        ApprovalDecided(
            operation_id=OP, timestamp=T0, tool_call_id="c1", decision="denied", by="alice"
        )
    )
    assert fold_operation(records).calls["c1"].approval == "denied"
    records.append(ApprovalRequested(operation_id=OP, timestamp=T0, tool_call_id="c1", cost=10))
    assert fold_operation(records).calls["c1"].approval == "pending"  # the latest request counts


def test_named_entry_ids_are_what_evidence_needs():
    records = [accepted(), attempt(1, "A"), t1("c1"), queued(1)]
    assert fold_operation(records).named_entry_ids() == {"u", "A", R("c1"), "q1"}


# -- impossible logs ---------------------------------------------------------------------

CORRUPT = {
    "empty": ([], ev()),
    "first is not accepted": ([attempt(1, "A")], ev("A")),
    "a second accepted": ([accepted(), accepted()], ev()),
    "input entry absent": ([accepted()], RecoveryEvidence(entry_ids=frozenset())),
    "record after finished": ([accepted(), finished(), stop()], ev()),
    "usage of unknown attempt": ([accepted(), usage(1)], ev()),
    "dispatch of unknown assistant entry": ([accepted(), attempt(1, "A"), t1("c", "Z")], ev("A")),
    "dispatch of absent assistant entry": ([accepted(), attempt(1, "A"), t1("c")], ev()),
    "repeated attempt id": ([accepted(), attempt(1, "A"), attempt(1, "B")], ev("A", "B")),
    "repeated assistant entry": ([accepted(), attempt(1, "A"), attempt(2, "A")], ev("A")),
    "repeated input id": (
        [
            accepted(),
            queued(1),
            InputQueued(
                operation_id=OP, timestamp=T0, input_id="i1", input_entry_id="q9", text="x"
            ),
        ],
        ev(),
    ),
    "repeated input entry id": (
        [
            accepted(),
            queued(1),
            InputQueued(
                operation_id=OP, timestamp=T0, input_id="i2", input_entry_id="q1", text="x"
            ),
        ],
        ev(),
    ),
    "input entry id of the accepted input": (
        [
            accepted(),
            InputQueued(operation_id=OP, timestamp=T0, input_id="i2", input_entry_id="u", text="x"),
        ],
        ev(),
    ),
    "redispatch of at_most_once without retry": (
        [accepted(), attempt(1, "A"), t1("c"), t1("c", n=2)],
        ev("A"),
    ),
    "redispatch with another result id": (
        [
            accepted(),
            attempt(1, "A"),
            t1("c", policy="idempotent"),
            t1("c", policy="idempotent", n=2, result_entry_id="r_other"),
        ],
        ev("A"),
    ),
    "redispatch with another key": (
        [
            accepted(),
            attempt(1, "A"),
            t1("c"),
            resolved("c", "retry"),
            t1("c", n=2, idempotency_key="k_other"),
        ],
        ev("A"),
    ),
    "redispatch with a skipped attempt number": (
        [
            accepted(),
            attempt(1, "A"),
            t1("c", policy="read_only"),
            t1("c", policy="read_only", n=3),
        ],
        ev("A"),
    ),
    "first dispatch with attempt 2": ([accepted(), attempt(1, "A"), t1("c", n=2)], ev("A")),
    "resolution of a call never dispatched": (
        [accepted(), attempt(1, "A"), resolved("c", "retry")],
        ev("A"),
    ),
    "finished with an open dispatch": (
        [accepted(), attempt(1, "A"), t1("c"), finished()],
        ev("A"),
    ),
    "confirmed without its result": (
        [accepted(), attempt(1, "A"), t1("c"), resolved("c", "confirmed")],
        ev("A"),
    ),
    "another operation's record": (
        [accepted(), attempt(1, "A", op="op2")],
        ev("A"),
    ),
    "usage settled twice for one attempt": (
        [accepted(), attempt(1, "A"), usage(1), usage(1)],
        ev("A"),
    ),
    "two calls sharing one result entry": (
        [accepted(), attempt(1, "A"), t1("c1"), t1("c2", result_entry_id=R("c1"))],
        ev("A", R("c1")),
    ),
    "completed while an input queued before the last attempt has no entry": (
        [accepted(), attempt(1, "A"), queued(1), attempt(2, "B"), finished("completed")],
        ev("A", "B", final={"B": "stop"}),
    ),
    "failed while an input has no entry": (
        [accepted(), attempt(1, "A"), queued(1), finished("failed")],
        ev("A", final={"A": "stop"}),
    ),
    "aborted by a stop while an input has no entry": (
        [accepted(), attempt(1, "A"), queued(1), stop(), finished("aborted")],
        ev("A", final={"A": "stop"}),
    ),
}


def test_a_pending_input_counts_whenever_it_was_queued():
    """The runner decided from a read before the input came and asked the model again: the
    input is still pending (its entry is absent), so the turn is not over."""
    records = [accepted(), attempt(1, "A"), queued(1), attempt(2, "B"), usage(2)]
    got = recover_operation(records, ev("A", "B", final={"B": "stop"}))
    assert got == verdict("ready", pending_inputs=["i1"])


def test_interrupted_may_leave_an_input_pending():
    records = [accepted(), attempt(1, "A"), queued(1), finished("interrupted")]
    got = recover_operation(records, ev("A"))
    assert got == verdict("terminal", finalization="durable", outcome="interrupted")


def test_usage_may_stand_for_a_reply_never_written():
    """A cut stream whose provider had counted the tokens: the bill is a fact, the reply is not."""
    records = [accepted(), attempt(1, "A"), usage(1)]
    got = recover_operation(records, ev())
    assert got == verdict("provider_interrupted", attempt_id="a1")
    records += [queued(1)]
    assert recover_operation(records, ev()) == verdict(
        "provider_interrupted", attempt_id="a1", pending_inputs=["i1"]
    )


@pytest.mark.parametrize("case", CORRUPT, ids=str)
def test_impossible_logs_raise(case):
    records, evidence = CORRUPT[case]
    with pytest.raises(CorruptedOperationLog) as err:
        recover_operation(records, evidence)
    assert err.value.reason and "corrupted operation log" in str(err.value)


def test_corruption_names_the_operation():
    with pytest.raises(CorruptedOperationLog) as err:
        recover_operation([accepted(), accepted()], ev())
    assert err.value.operation_id == OP and "second operation_accepted" in str(err.value)
