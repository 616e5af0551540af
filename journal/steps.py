"""The agent loop's decision: from an operation's log and the active branch, its one next step.

``next_step`` is to the loop what a workflow's history → commands function is to a
Temporal worker: it reads facts and returns what to do, and the executor
(``jaiweb.agent.loop``) does exactly that one thing, appends what it produced and asks
again. No I/O, no clock, no ids: everything it needs is passed in, so every interleaving
of the loop with a person's writes can be tested against it directly.

The order is docs/ARCHITECTURE.md §7's, extended to the steps of a live run:

1. an open dispatch: dispatch it again under the same key when its policy allows it,
   otherwise park the operation for an admin;
2. an inferred end (the reply was final and nothing is left to answer): finish;
3. a call an admin sent back with ``retry``: dispatch it again;
4. a reply whose usage was never settled: settle it (a crash between the two);
5. a stop request: the reply's remaining calls get a "not run" result, pending inputs
   their entries, then the operation finishes ``aborted``;
6. the reply's next call with neither result nor T1: handle it (validate, approval, T1;
   a variant's approval is the one its set's first call asked for, ``journal.variants``);
7. pending inputs (queued, their entry absent, whenever queued): write them;
8. a final reply that answers everything on the branch: finish;
9. too many model calls: finish ``failed``;
10. a context over budget (and not just compacted): compact;
11. otherwise: ask the model.

Steps 5 and 7 come before every finish, so what a user typed is always in the tree
before an operation ends (only ``interrupted``, written by a runner giving up, may
leave an input pending).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from journal.context import derive_messages
from journal.entries import (
    AssistantMessage,
    CompactionEntry,
    ContextMessage,
    Entry,
    MessageEntry,
    ToolCall,
    Usage,
    UserMessage,
)
from journal.ids import result_entry_id
from journal.records import ApprovalDecided, ErrorInfo, InputQueued, Outcome, ToolDispatched
from journal.recovery import (
    AUTO_RETRY_POLICIES,
    OUTCOME_OF_STOP_REASON,
    Dispatch,
    OperationLog,
    RecoveryEvidence,
    pending_inputs,
    verdict_for,
)
from journal.variants import approval_call_id, approval_size


@dataclass(frozen=True, slots=True)
class Limits:
    """What bounds a run: model calls per operation, the context's token budget."""

    max_model_calls: int = 24
    context_budget: int = 12_000


# -- the steps ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finish:
    """Write ``operation_finished``."""

    outcome: Outcome
    error: ErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class Park:
    """At-most-once calls whose effect may or may not have happened: to the inbox."""

    dispatches: tuple[Dispatch, ...]


@dataclass(frozen=True, slots=True)
class DispatchAgain:
    """The same call, the same key, the next dispatch attempt (no second approval)."""

    latest: ToolDispatched


@dataclass(frozen=True, slots=True)
class SettleUsage:
    """``usage_settled`` for a reply that is written but was never billed."""

    attempt_id: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class Stop:
    """A stop was asked for: these calls of the reply get a "not run" result."""

    reply_id: str
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True)
class HandleCall:
    """The reply's next call: validate, ask for approval or act on the decision, T1, run."""

    reply_id: str
    call: ToolCall
    # The call's approval as the log has it: None (never asked), pending, or decided.
    approval: Literal["pending", "approved", "denied"] | None
    decision: ApprovalDecided | None
    # How many calls an approval asked here covers: a variant set's size at its first call.
    covers: int = 1


@dataclass(frozen=True, slots=True)
class WriteInputs:
    """Queued inputs whose entries are absent: write them, in the order they were queued."""

    inputs: tuple[InputQueued, ...]


@dataclass(frozen=True, slots=True)
class Compact:
    """Summarize ``summarize`` into a compaction entry keeping the path from ``first_kept``."""

    summarize: tuple[ContextMessage, ...]
    first_kept_entry_id: str
    tokens_before: int
    tokens_kept: int


@dataclass(frozen=True, slots=True)
class ModelCall:
    """``model_attempted``, then stream the reply to these messages."""

    messages: tuple[ContextMessage, ...]
    taken_call_ids: frozenset[str] = frozenset()  # the operation's calls: new ids avoid them


Step = (
    Finish
    | Park
    | DispatchAgain
    | SettleUsage
    | Stop
    | HandleCall
    | WriteInputs
    | Compact
    | ModelCall
)
DECISIVE = (Finish, Park, DispatchAgain)  # what a recovery pass does without waiting on anyone


# -- the decision -------------------------------------------------------------------------


def next_step(
    log: OperationLog, evidence: RecoveryEvidence, branch: Sequence[Entry], limits: Limits
) -> Step:
    """The one next thing to do for an unfinished operation (``ValueError`` if finished).

    ``branch`` is the active path root → leaf; ``evidence`` says which entries the log
    names exist. ``CorruptedOperationLog`` propagates from the verdict.
    """
    if log.finished is not None:
        raise ValueError(f"operation {log.operation_id!r} is finished")
    verdict = verdict_for(log, evidence)
    if verdict.status == "indeterminate_tool":
        if all(d.policy in AUTO_RETRY_POLICIES for d in verdict.dispatches):
            return DispatchAgain(_latest(log, verdict.dispatches[0].tool_call_id))
        return Park(tuple(verdict.dispatches))
    if verdict.status == "terminal":  # inferred: only operation_finished is missing
        return Finish(verdict.outcome or "completed")
    if verdict.redispatch:
        return DispatchAgain(_latest(log, verdict.redispatch[0]))

    reply = _latest_reply(log, evidence, branch)
    attempt = log.latest_attempt
    if reply is not None and attempt is not None and attempt.attempt_id not in log.usage:
        reply_message = reply[1]
        usage = reply_message.usage or Usage(
            input_tokens=0, output_tokens=max(1, len(reply_message.content) // 2)
        )
        return SettleUsage(attempt.attempt_id, usage)

    on_branch = {e.id for e in branch}
    calls = _calls_without_result(log, reply, on_branch) if reply is not None else []
    waiting = set(pending_inputs(log, evidence.entry_ids))
    pending = tuple(i for i in log.inputs if i.input_id in waiting)
    if log.stop is not None:
        if calls:
            return Stop(reply[0], tuple(calls))
        if pending:
            return WriteInputs(pending)
        return Finish("aborted")
    if calls:
        # A variant's approval is its set's: one decision covers the set's total cost.
        known = log.calls.get(approval_call_id(reply[0], reply[1], calls[0].id))
        return HandleCall(
            reply_id=reply[0],
            call=calls[0],
            approval=known.approval if known is not None else None,
            decision=known.approval_decision if known is not None else None,
            covers=approval_size(reply[0], reply[1], calls[0].id),
        )
    if pending:
        return WriteInputs(pending)
    if reply is not None and reply[1].is_final and not _asked_since(reply[0], branch):
        return Finish(OUTCOME_OF_STOP_REASON.get(reply[1].stop_reason, "completed"))
    if len(log.attempts) >= limits.max_model_calls:
        return Finish(
            "failed",
            ErrorInfo(
                code="too_many_steps",
                message=f"the director made {len(log.attempts)} model calls; stopped",
            ),
        )
    leaf = branch[-1].id if branch else None
    messages = derive_messages(branch, leaf)
    if estimate_tokens(messages) > limits.context_budget and not isinstance(
        branch[-1], CompactionEntry
    ):
        plan = _compaction(branch, messages, limits.context_budget // 2)
        if plan is not None:
            return plan
    return ModelCall(tuple(messages), _operation_call_ids(log, branch))


def estimate_tokens(messages: Sequence[ContextMessage]) -> int:
    """About two characters a token for mixed Chinese and English: a budget, not a bill."""
    chars = 0
    for m in messages:
        chars += len(m.content)
        if isinstance(m, AssistantMessage):
            chars += sum(len(json.dumps(c.arguments, ensure_ascii=False)) for c in m.tool_calls)
    return chars // 2 + 4 * len(messages)


def _latest(log: OperationLog, tool_call_id: str) -> ToolDispatched:
    latest = log.calls[tool_call_id].dispatch
    assert latest is not None  # the verdict named it because it was dispatched
    return latest


def _latest_reply(
    log: OperationLog, evidence: RecoveryEvidence, branch: Sequence[Entry]
) -> tuple[str, AssistantMessage] | None:
    attempt = log.latest_attempt
    if attempt is None or attempt.assistant_entry_id not in evidence.entry_ids:
        return None
    for entry in reversed(branch):
        if entry.id == attempt.assistant_entry_id:
            if not isinstance(entry, MessageEntry) or not isinstance(
                entry.message, AssistantMessage
            ):
                raise ValueError(f"entry {entry.id!r} is not an assistant reply")
            return entry.id, entry.message
    raise ValueError(f"reply {attempt.assistant_entry_id!r} is not on the active branch")


def _calls_without_result(
    log: OperationLog, reply: tuple[str, AssistantMessage], on_branch: set[str]
) -> list[ToolCall]:
    """The reply's calls with neither a result (under its pre-allocated id) nor a T1."""
    reply_id, message = reply
    return [
        c
        for c in message.tool_calls
        if result_entry_id(reply_id, c.id) not in on_branch
        and (log.calls.get(c.id) is None or log.calls[c.id].dispatch is None)
    ]


def _operation_call_ids(log: OperationLog, branch: Sequence[Entry]) -> frozenset[str]:
    replies = {a.assistant_entry_id for a in log.attempts}
    return frozenset(
        call.id
        for e in branch
        if e.id in replies
        and isinstance(e, MessageEntry)
        and isinstance(e.message, AssistantMessage)
        for call in e.message.tool_calls
    )


def _asked_since(reply_id: str, branch: Sequence[Entry]) -> bool:
    """A user message comes after the reply on the branch: the model has not answered it."""
    for entry in reversed(branch):
        if entry.id == reply_id:
            return False
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            return True
    return False


def _compaction(
    branch: Sequence[Entry], messages: Sequence[ContextMessage], keep_budget: int
) -> Compact | None:
    """Keep the recent messages that fit ``keep_budget``; summarize what comes before."""
    kept_tokens, first_kept = 0, None
    for entry in reversed(branch):
        if isinstance(entry, MessageEntry):
            cost = estimate_tokens([entry.message])
            if kept_tokens + cost > keep_budget:
                break
            kept_tokens += cost
            first_kept = entry.id
    if first_kept is None:
        return None
    cut = list(branch[: next(i for i, e in enumerate(branch) if e.id == first_kept)])
    before = derive_messages(cut, cut[-1].id) if cut else []
    if not before:
        return None
    return Compact(
        summarize=tuple(before),
        first_kept_entry_id=first_kept,
        tokens_before=estimate_tokens(messages),
        tokens_kept=kept_tokens,
    )
