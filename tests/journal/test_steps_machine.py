"""``next_step`` against a state-machine model of the loop, with a person's writes between
every decision and the append it leads to (hypothesis ``RuleBasedStateMachine``).

The machine keeps an operation's records and the active branch as plain lists. ``decide``
asks ``next_step`` and remembers the step with the log length it read; ``act`` appends
what the step produces, but only if no record came since (the store's expected-version
check), exactly as the executor does; person rules (steer, stop, approve, deny) may run
between the two. Invariants after every rule: the log folds and gets a verdict, no entry
id repeats, and once finished, every input is in the tree, every tool call on the branch
has exactly one result, and the outcome is what the model expects.
"""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
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
    UsageSettled,
)
from journal.recovery import RecoveryEvidence, fold_operation, verdict_for
from journal.steps import (
    Compact,
    DispatchAgain,
    Finish,
    HandleCall,
    Limits,
    ModelCall,
    Park,
    SettleUsage,
    Stop,
    WriteInputs,
    next_step,
)
from tests.support.factories import T0

OP = "op"
LIMITS = Limits(max_model_calls=5, context_budget=10_000)


class LoopModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ids = itertools.count(1)
        self.branch = [
            MessageEntry(id="u0", parent_id=None, timestamp=T0, message=UserMessage(content="go"))
        ]
        self.records = [
            OperationAccepted(
                operation_id=OP, timestamp=T0, input_entry_id="u0", start_leaf_id=None
            )
        ]
        self.typed = ["u0"]
        self.decided = None  # (step, log length it was decided at)
        self.parked = False

    # -- helpers ------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids)}"

    def rec(self, cls, **fields):
        self.records.append(cls(operation_id=OP, timestamp=T0, **fields))

    def entry(self, entry_id: str, message) -> None:
        leaf = self.branch[-1].id
        self.branch.append(MessageEntry(id=entry_id, parent_id=leaf, timestamp=T0, message=message))

    def evidence(self) -> RecoveryEvidence:
        ids = {e.id for e in self.branch}
        final = {
            e.id: e.message.stop_reason
            for e in self.branch
            if isinstance(e, MessageEntry)
            and isinstance(e.message, AssistantMessage)
            and e.message.is_final
        }
        return RecoveryEvidence(entry_ids=frozenset(ids), final_assistant_entries=final)

    @property
    def log(self):
        return fold_operation(self.records)

    @property
    def finished(self) -> bool:
        return self.log.finished is not None

    # -- the loop -----------------------------------------------------------------------

    @precondition(lambda self: not self.finished and not self.parked and self.decided is None)
    @rule()
    def decide(self) -> None:
        step = next_step(self.log, self.evidence(), self.branch, LIMITS)
        self.decided = (step, len(self.records))

    @precondition(lambda self: self.decided is not None)
    @rule(data=st.data())
    def act(self, data) -> None:
        step, version = self.decided
        self.decided = None
        if len(self.records) != version:
            return  # StaleLog: nothing written, the loop decides again
        match step:
            case Finish():
                self.rec(OperationFinished, outcome=step.outcome, error=step.error)
            case Park():
                self.parked = True  # an admin's inbox; out of this model's scope
            case DispatchAgain():
                raise AssertionError("no crash in this model, so no open dispatch")
            case SettleUsage():
                self.rec(UsageSettled, attempt_id=step.attempt_id, usage=step.usage)
            case Stop():
                for call in step.calls:
                    self.result(step.reply_id, call, "not run")
            case WriteInputs():
                for queued in step.inputs:
                    self.entry(queued.input_entry_id, UserMessage(content=queued.text))
            case HandleCall():
                self.handle(step)
            case Compact():
                raise AssertionError("the budget is never reached here")
            case ModelCall():
                self.model_call(data, step)

    def model_call(self, data, step: ModelCall) -> None:
        attempt, reply = self.fresh("att"), self.fresh("e")
        self.rec(ModelAttempted, attempt_id=attempt, assistant_entry_id=reply, model="m")
        names = data.draw(st.lists(st.sampled_from(["free", "paid"]), max_size=2), label="calls")
        calls = []
        for name in names:
            call_id = self.fresh("call")
            assert call_id not in step.taken_call_ids
            calls.append(ToolCall(id=call_id, name=name, arguments={"n": call_id}))
        message = AssistantMessage(
            content="ok",
            tool_calls=calls,
            stop_reason="tool_use" if calls else "stop",
            usage=Usage(input_tokens=1, output_tokens=1),
        )
        self.entry(reply, message)
        self.rec(UsageSettled, attempt_id=attempt, usage=message.usage)

    def handle(self, step: HandleCall) -> None:
        call = step.call
        if call.name == "paid" and step.approval is None:
            self.rec(ApprovalRequested, tool_call_id=call.id, cost=10)
            return
        if call.name == "paid" and step.approval == "pending":
            return  # waiting for the person
        if step.approval == "denied":
            self.result(step.reply_id, call, "denied")
            return
        self.rec(
            ToolDispatched,
            tool_call_id=call.id,
            tool_name=call.name,
            assistant_entry_id=step.reply_id,
            args=call.arguments,
            args_hash=args_hash(call.arguments),
            result_entry_id=result_entry_id(step.reply_id, call.id),
            idempotency_key=idempotency_key(OP, call.id),
            policy="idempotent",
            dispatch_attempt=1,
        )
        if call.name == "paid":
            state = {"characters": {}, "permission_mode": "ask", "paid": call.id}
            leaf = self.branch[-1].id
            self.branch.append(
                AppStateEntry(id=self.fresh("s"), parent_id=leaf, timestamp=T0, value=state)
            )
        self.result(step.reply_id, call, "done")

    def result(self, reply_id: str, call: ToolCall, content: str) -> None:
        message = ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=content)
        self.entry(result_entry_id(reply_id, call.id), message)

    # -- a person -----------------------------------------------------------------------

    @precondition(lambda self: not self.finished and not self.parked)
    @rule()
    def steer(self) -> None:
        input_id = self.fresh("in")
        self.rec(
            InputQueued, input_id=input_id, input_entry_id=f"q{input_id}", text=f"more {input_id}"
        )
        self.typed.append(f"q{input_id}")

    @precondition(lambda self: not self.finished and not self.parked and self.log.stop is None)
    @rule()
    def stop(self) -> None:
        self.rec(StopRequested, by="alice")

    @precondition(
        lambda self: (
            not self.finished and any(c.approval == "pending" for c in self.log.calls.values())
        )
    )
    @rule(decision=st.sampled_from(["approved", "denied"]))
    def approve(self, decision: str) -> None:
        call = next(c for c in self.log.calls.values() if c.approval == "pending")
        self.rec(ApprovalDecided, tool_call_id=call.tool_call_id, decision=decision, by="alice")

    @precondition(lambda self: self.finished or self.parked)
    @rule()
    def look(self) -> None:
        """Nothing left to do: the run is over (or waits for an admin)."""

    # -- what must always hold ----------------------------------------------------------

    @invariant()
    def the_log_is_recoverable(self) -> None:
        verdict_for(self.log, self.evidence())  # raises CorruptedOperationLog otherwise

    @invariant()
    def no_entry_twice(self) -> None:
        ids = [e.id for e in self.branch]
        assert len(ids) == len(set(ids))

    @invariant()
    def a_finished_run_left_nothing_behind(self) -> None:
        log = self.log
        if log.finished is None:
            return
        present = {e.id for e in self.branch}
        assert all(entry_id in present for entry_id in self.typed), "an input was lost"
        for e in self.branch:
            if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
                for call in e.message.tool_calls:
                    results = [r for r in self.branch if r.id == result_entry_id(e.id, call.id)]
                    assert len(results) == 1, f"{call.id} has {len(results)} results"
        expected = "aborted" if log.stop is not None else None
        if expected is not None:
            assert log.finished.outcome == expected
        else:
            assert log.finished.outcome in ("completed", "failed")
            if log.finished.outcome == "failed":
                assert len(log.attempts) >= LIMITS.max_model_calls
        # the model answered everything typed before it finished (unless stopped or cut)
        if log.finished.outcome == "completed":
            last_reply = max(
                i
                for i, e in enumerate(self.branch)
                if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
            )
            later = self.branch[last_reply + 1 :]
            assert not any(
                isinstance(e, MessageEntry) and isinstance(e.message, UserMessage) for e in later
            ), "a prompt came after the last reply"
        assert not any(isinstance(e, CompactionEntry) for e in self.branch)


LoopModel.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_next_step_against_a_model_of_the_loop = LoopModel.TestCase
