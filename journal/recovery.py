"""Crash recovery: what to do with an operation, decided from its log and the session's evidence.

``fold_operation`` reads an operation's records once, refusing any log that no correct
run could have written; ``recover_operation`` adds what the Session Journal knows (which
pre-allocated entries exist, which assistant replies were final) and applies the five
ordered rules of docs/ARCHITECTURE.md §7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from journal.entries import Frozen
from journal.errors import CorruptedOperationLog
from journal.records import (
    ApprovalDecided,
    ApprovalRequested,
    InputQueued,
    ModelAttempted,
    OperationAccepted,
    OperationFinished,
    Outcome,
    Policy,
    Record,
    StopRequested,
    ToolDispatched,
    ToolResolved,
    UsageSettled,
)

Status = Literal["ready", "provider_interrupted", "indeterminate_tool", "terminal"]
AUTO_RETRY_POLICIES: frozenset[str] = frozenset({"read_only", "idempotent"})
OUTCOME_OF_STOP_REASON: dict[str, Outcome] = {
    "stop": "completed",
    "length": "completed",
    "error": "failed",
    "aborted": "aborted",
}


@dataclass(frozen=True, slots=True)
class RecoveryEvidence:
    """What the Session Journal says about the ids an operation's records name.

    ``entry_ids``: those of the named ids that exist. ``final_assistant_entries``: for
    the existing assistant entries that end a turn (no tool calls, stop reason other
    than ``tool_use``), their stop reason.
    """

    entry_ids: frozenset[str]
    final_assistant_entries: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.entry_ids, frozenset):
            object.__setattr__(self, "entry_ids", frozenset(self.entry_ids))


class Dispatch(Frozen):
    """An open T1: the tool may or may not have had its effect."""

    tool_call_id: str
    tool_name: str
    result_entry_id: str
    idempotency_key: str
    policy: Policy
    dispatch_attempt: int


class Verdict(Frozen):
    """What a runner must do with an operation after a crash."""

    status: Status
    operation_id: str
    stop_requested: bool = False
    dispatches: list[Dispatch] = []
    finalization: Literal["durable", "inferred"] | None = None
    outcome: Outcome | None = None
    attempt_id: str | None = None
    pending_inputs: list[str] = []
    redispatch: list[str] = []


@dataclass(slots=True)
class CallLog:
    """Everything the log says about one tool call."""

    tool_call_id: str
    dispatches: list[ToolDispatched] = field(default_factory=list)
    resolutions: list[ToolResolved] = field(default_factory=list)
    approval_request: ApprovalRequested | None = None  # the latest one counts
    approval_decision: ApprovalDecided | None = None  # the latest one
    resolution: ToolResolved | None = None  # the latest one after the latest dispatch
    _request_pos: int = -1
    _decision_pos: int = -1

    @property
    def dispatch(self) -> ToolDispatched | None:
        """The latest dispatch: only it counts."""
        return self.dispatches[-1] if self.dispatches else None

    @property
    def retry_after_dispatch(self) -> bool:
        """An admin chose ``retry`` after the latest dispatch: the call awaits re-dispatch."""
        return self.resolution is not None and self.resolution.resolution == "retry"

    @property
    def approval(self) -> Literal["pending", "approved", "denied"] | None:
        """``pending`` when the latest request has no decision after it."""
        if self._decision_pos > self._request_pos and self.approval_decision is not None:
            return self.approval_decision.decision
        if self.approval_request is not None:
            return "pending"
        return None


@dataclass(slots=True)
class OperationLog:
    """The fold of one operation's records."""

    accepted: OperationAccepted
    attempts: list[ModelAttempted] = field(default_factory=list)
    usage: dict[str, UsageSettled] = field(default_factory=dict)
    calls: dict[str, CallLog] = field(default_factory=dict)
    inputs: list[InputQueued] = field(default_factory=list)
    # Queued since the latest ``model_attempted``: no reply can have answered them yet.
    # (An input queued earlier is answered only if its entry exists: see ``pending_inputs``.)
    inputs_since_attempt: list[InputQueued] = field(default_factory=list)
    stop: StopRequested | None = None
    finished: OperationFinished | None = None
    dispatch_order: list[str] = field(default_factory=list)  # by latest dispatch

    @property
    def operation_id(self) -> str:
        return self.accepted.operation_id

    @property
    def latest_attempt(self) -> ModelAttempted | None:
        return self.attempts[-1] if self.attempts else None

    def named_entry_ids(self) -> set[str]:
        """Every entry id the records name: the evidence a recovery needs to look up."""
        ids = {self.accepted.input_entry_id}
        ids.update(a.assistant_entry_id for a in self.attempts)
        ids.update(i.input_entry_id for i in self.inputs)
        for call in self.calls.values():
            ids.update(d.result_entry_id for d in call.dispatches)
        return ids


def fold_operation(records: Sequence[Record]) -> OperationLog:
    """Read one operation's records in order; ``CorruptedOperationLog`` for an impossible log."""
    if not records:
        raise CorruptedOperationLog("the log is empty")
    first = records[0]
    if not isinstance(first, OperationAccepted):
        raise CorruptedOperationLog(
            f"the first record is {first.type}, not operation_accepted",
            operation_id=first.operation_id,
        )
    op_id = first.operation_id

    def corrupt(reason: str) -> CorruptedOperationLog:
        return CorruptedOperationLog(reason, operation_id=op_id)

    log = OperationLog(accepted=first)
    attempts_by_id: dict[str, ModelAttempted] = {}
    assistant_ids: set[str] = set()
    input_ids: set[str] = set()
    input_entry_ids = {first.input_entry_id}
    result_owners: dict[str, str] = {}  # result entry id → the one call it belongs to

    for pos, record in enumerate(records[1:], start=1):
        if record.operation_id != op_id:
            raise corrupt(f"record {pos} belongs to operation {record.operation_id!r}")
        if log.finished is not None:
            raise corrupt(f"{record.type} after operation_finished")
        match record:
            case OperationAccepted():
                raise corrupt("a second operation_accepted")
            case ModelAttempted():
                if record.attempt_id in attempts_by_id:
                    raise corrupt(f"repeated attempt id {record.attempt_id!r}")
                if record.assistant_entry_id in assistant_ids:
                    raise corrupt(f"repeated assistant entry id {record.assistant_entry_id!r}")
                attempts_by_id[record.attempt_id] = record
                assistant_ids.add(record.assistant_entry_id)
                log.attempts.append(record)
                log.inputs_since_attempt.clear()
            case UsageSettled():
                if record.attempt_id not in attempts_by_id:
                    raise corrupt(f"usage_settled names unknown attempt {record.attempt_id!r}")
                if record.attempt_id in log.usage:
                    raise corrupt(f"usage_settled twice for attempt {record.attempt_id!r}")
                log.usage[record.attempt_id] = record
            case ApprovalRequested():
                call = _call(log, record.tool_call_id)
                call.approval_request = record
                call._request_pos = pos
            case ApprovalDecided():
                call = _call(log, record.tool_call_id)
                call.approval_decision = record
                call._decision_pos = pos
            case ToolDispatched():
                if record.assistant_entry_id not in assistant_ids:
                    raise corrupt(
                        f"dispatch of {record.tool_call_id!r} names unknown assistant entry "
                        f"{record.assistant_entry_id!r}"
                    )
                owner = result_owners.setdefault(record.result_entry_id, record.tool_call_id)
                if owner != record.tool_call_id:
                    raise corrupt(
                        f"calls {owner!r} and {record.tool_call_id!r} share the result entry "
                        f"{record.result_entry_id!r}"
                    )
                call = _call(log, record.tool_call_id)
                _check_redispatch(call, record, corrupt)
                call.dispatches.append(record)
                call.resolution = None
                if record.tool_call_id in log.dispatch_order:
                    log.dispatch_order.remove(record.tool_call_id)
                log.dispatch_order.append(record.tool_call_id)
            case ToolResolved():
                call = log.calls.get(record.tool_call_id)
                if call is None or not call.dispatches:
                    raise corrupt(f"tool_resolved for {record.tool_call_id!r}, never dispatched")
                call.resolutions.append(record)
                call.resolution = record
            case InputQueued():
                if record.input_id in input_ids:
                    raise corrupt(f"repeated input id {record.input_id!r}")
                if record.input_entry_id in input_entry_ids:
                    raise corrupt(f"repeated input entry id {record.input_entry_id!r}")
                input_ids.add(record.input_id)
                input_entry_ids.add(record.input_entry_id)
                log.inputs.append(record)
                log.inputs_since_attempt.append(record)
            case StopRequested():
                if log.stop is None:
                    log.stop = record
            case OperationFinished():
                log.finished = record
    return log


def _call(log: OperationLog, tool_call_id: str) -> CallLog:
    call = log.calls.get(tool_call_id)
    if call is None:
        call = log.calls[tool_call_id] = CallLog(tool_call_id)
    return call


def _check_redispatch(call: CallLog, record: ToolDispatched, corrupt) -> None:
    previous = call.dispatch
    if previous is None:
        if record.dispatch_attempt != 1:
            raise corrupt(
                f"first dispatch of {record.tool_call_id!r} has attempt {record.dispatch_attempt}"
            )
        return
    if call.resolution is not None and call.resolution.resolution != "retry":
        raise corrupt(
            f"{record.tool_call_id!r} dispatched again after it was {call.resolution.resolution}"
        )
    if not call.retry_after_dispatch and previous.policy not in AUTO_RETRY_POLICIES:
        raise corrupt(
            f"{record.tool_call_id!r} ({previous.policy}) dispatched again without a retry"
        )
    for name in ("result_entry_id", "idempotency_key", "tool_name", "assistant_entry_id"):
        if getattr(record, name) != getattr(previous, name):
            raise corrupt(f"dispatch of {record.tool_call_id!r} again with another {name}")
    if record.dispatch_attempt != previous.dispatch_attempt + 1:
        raise corrupt(
            f"dispatch of {record.tool_call_id!r} again with attempt {record.dispatch_attempt}, "
            f"expected {previous.dispatch_attempt + 1}"
        )


def recover_operation(records: Sequence[Record], evidence: RecoveryEvidence) -> Verdict:
    """The verdict for one operation (docs/ARCHITECTURE.md §7), or ``CorruptedOperationLog``."""
    log = fold_operation(records)
    return verdict_for(log, evidence)


def verdict_for(log: OperationLog, evidence: RecoveryEvidence) -> Verdict:
    """Apply the ordered rules of docs/ARCHITECTURE.md §7 to a folded log."""
    op_id = log.operation_id
    present = evidence.entry_ids

    def corrupt(reason: str) -> CorruptedOperationLog:
        return CorruptedOperationLog(reason, operation_id=op_id)

    if log.accepted.input_entry_id not in present:
        raise corrupt(f"input entry {log.accepted.input_entry_id!r} is absent")
    # usage_settled is a ledger fact: it may stand for a reply that was never written.
    pending = pending_inputs(log, present)

    open_calls: list[Dispatch] = []
    redispatch: list[str] = []
    for call_id in log.dispatch_order:
        call = log.calls[call_id]
        latest = call.dispatch
        assert latest is not None
        if latest.assistant_entry_id not in present:
            raise corrupt(
                f"dispatch of {call_id!r} names absent entry {latest.assistant_entry_id!r}"
            )
        has_result = latest.result_entry_id in present
        if call.retry_after_dispatch:
            if has_result:
                raise corrupt(f"{call_id!r} has a result but awaits re-dispatch after a retry")
            redispatch.append(call_id)
        elif not has_result:
            if call.resolution is not None:  # confirmed / failed commit with the result
                raise corrupt(f"{call_id!r} was {call.resolution.resolution}, its result is absent")
            open_calls.append(_dispatch_of(latest))

    stop_requested = log.stop is not None
    base = {"operation_id": op_id, "stop_requested": stop_requested}

    # 1. an open dispatch: nobody knows whether its effect happened
    if open_calls:
        if log.finished is not None:
            raise corrupt("finished with an open dispatch")
        return Verdict(status="indeterminate_tool", dispatches=open_calls, **base)

    # 2. the run finished durably
    if log.finished is not None:
        if pending and log.finished.outcome != "interrupted":
            raise corrupt(
                f"finished {log.finished.outcome} while input {pending[0]!r} has no entry"
            )
        return Verdict(
            status="terminal", finalization="durable", outcome=log.finished.outcome, **base
        )

    # 3. the provider was called and its reply never became durable
    latest = log.latest_attempt
    if latest is not None and latest.assistant_entry_id not in present:
        return Verdict(
            status="provider_interrupted",
            attempt_id=latest.attempt_id,
            pending_inputs=pending,
            **base,
        )

    # 4. the turn had ended; only operation_finished is missing
    unanswered = pending or log.inputs_since_attempt
    if latest is not None and not unanswered and not redispatch and not stop_requested:
        stop_reason = evidence.final_assistant_entries.get(latest.assistant_entry_id)
        outcome = OUTCOME_OF_STOP_REASON.get(stop_reason) if stop_reason else None
        if outcome is not None:
            return Verdict(status="terminal", finalization="inferred", outcome=outcome, **base)

    # 5. safe to go on from the journal without asking the model again
    return Verdict(status="ready", pending_inputs=pending, redispatch=redispatch, **base)


def describe(verdict: Verdict) -> str:
    """A verdict in a few words, for the recovery report."""
    extra = ""
    if verdict.status == "indeterminate_tool":
        extra = ", ".join(
            f"{d.tool_name} {d.tool_call_id} ({d.policy}, dispatch {d.dispatch_attempt})"
            for d in verdict.dispatches
        )
    elif verdict.status == "provider_interrupted":
        extra = f"attempt {verdict.attempt_id}"
    elif verdict.status == "terminal":
        extra = f"{verdict.outcome}, {verdict.finalization}"
    elif verdict.pending_inputs or verdict.redispatch or verdict.stop_requested:
        parts = [f"{len(verdict.pending_inputs)} queued input(s)"] if verdict.pending_inputs else []
        parts += [f"re-dispatch {', '.join(verdict.redispatch)}"] if verdict.redispatch else []
        parts += ["stop requested"] if verdict.stop_requested else []
        extra = "; ".join(parts)
    return f"found {verdict.status}" + (f" ({extra})" if extra else "")


def pending_inputs(log: OperationLog, present: frozenset[str]) -> list[str]:
    """Input ids whose entry is absent, whenever they were queued: not in the tree yet."""
    return [i.input_id for i in log.inputs if i.input_entry_id not in present]


def _dispatch_of(record: ToolDispatched) -> Dispatch:
    return Dispatch(
        tool_call_id=record.tool_call_id,
        tool_name=record.tool_name,
        result_entry_id=record.result_entry_id,
        idempotency_key=record.idempotency_key,
        policy=record.policy,
        dispatch_attempt=record.dispatch_attempt,
    )
