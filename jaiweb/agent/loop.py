"""The agent loop: a plain procedural loop whose every step leaves the facts recovery needs.

Each turn of the loop reads the operation's log and the active branch and does the next
thing the journal says is due, in this order:

1. an open dispatch (T1 without its T2 after a crash): run it again with the same key
   when its policy allows it, otherwise park the operation in the recovery inbox;
2. calls an admin sent back with ``retry``: dispatch them again, same key;
3. tool calls of the latest reply with no result yet, one by one: validate → approval →
   T1 (``tool_dispatched``) → the tool → T2 (the result entry under its pre-allocated id);
4. a stop request: remaining calls get a "not run" result, queued inputs their entries,
   and the operation finishes ``aborted``;
5. queued inputs without an entry: write them (a step boundary);
6. a final reply with nothing new to answer: ``operation_finished``;
7. otherwise: ``model_attempted`` (the reply's id fixed in advance), stream the reply,
   write it under that id, ``usage_settled``.

Because the next step is always read from the journal, the same loop continues an
operation after any crash: there is no in-memory state to lose.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from pydantic import ValidationError

from jaiweb.agent.events import EventSink, NullSink
from jaiweb.agent.faults import NO_FAULTS, Faults
from jaiweb.agent.providers.base import (
    PermanentProviderError,
    Provider,
    ProviderError,
    RawToolCall,
    Reply,
    TextDelta,
    TransientProviderError,
    add,
)
from jaiweb.agent.state import AppState
from jaiweb.agent.tools.base import Tool, ToolContext, ToolOutput
from jaiweb.store.errors import LeaseLost
from jaiweb.store.ids import new_id
from jaiweb.store.leases import Lease, lease_renew
from jaiweb.store.models import Operation
from jaiweb.store.selectors import branch_get, operation_records, recovery_evidence
from jaiweb.store.services import operation_park, run_append
from journal.context import derive_messages
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    ContextMessage,
    Entry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import (
    ApprovalRequested,
    ErrorInfo,
    ModelAttempted,
    OperationFinished,
    Record,
    ToolDispatched,
    UsageSettled,
)
from journal.recovery import AUTO_RETRY_POLICIES, OperationLog, fold_operation, verdict_for

log = logging.getLogger(__name__)

_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_OUTCOME = {"stop": "completed", "length": "completed", "error": "failed", "aborted": "aborted"}


class DeltaCoalescer:
    """Streamed text out as deltas: the first piece at once, then at most one delta per
    ``interval`` — and no piece held longer than that, even when the model stalls (a
    timer sends what waits, so text never sits behind a slow next token)."""

    def __init__(self, emit: Callable[[str], None], interval: float) -> None:
        self._emit = emit
        self._interval = interval
        self._lock = threading.Lock()  # the stream's thread and the timer's: deltas in order
        self._pending = ""
        self._last = 0.0
        self._first = True
        self._timer: threading.Timer | None = None

    def add(self, text: str) -> bool:
        """Queue ``text``; True when it was the first piece (sent at once)."""
        with self._lock:
            self._pending += text
            if self._first:
                self._first = False
                self._send()
                return True
            wait = self._last + self._interval - time.monotonic()
            if wait <= 0:
                self._send()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self._on_time)
                self._timer.daemon = True
                self._timer.start()
        return False

    def flush(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._send()

    def _on_time(self) -> None:
        with self._lock:
            self._timer = None
            self._send()

    def _send(self) -> None:
        if self._pending:
            self._emit(self._pending)
        self._pending, self._last = "", time.monotonic()


@dataclass
class LoopConfig:
    max_model_calls: int = 24  # per operation: a runaway conversation ends as failed
    max_transient_failures: int = 4  # in a row, before the operation fails
    backoff: Callable[[int], float] = lambda n: min(0.5 * 2**n, 8.0)
    approval_poll_seconds: float = 0.25
    delta_interval_seconds: float = 0.05  # text deltas are coalesced to about this
    context_budget: int = field(default_factory=lambda: settings.JAIWEB_CONTEXT_BUDGET)
    lease_seconds: int = field(default_factory=lambda: settings.JAIWEB_LEASE_SECONDS)


def estimate_tokens(messages: list[ContextMessage]) -> int:
    """About two characters a token for mixed Chinese and English: a budget, not a bill."""
    chars = 0
    for m in messages:
        chars += len(m.content)
        if isinstance(m, AssistantMessage):
            chars += sum(len(json.dumps(c.arguments, ensure_ascii=False)) for c in m.tool_calls)
    return chars // 2 + 4 * len(messages)


def _describe(verdict) -> str:
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


def normalize_calls(raw: list[RawToolCall], taken: set[str]) -> list[ToolCall]:
    """Tool calls as the journal keeps them: ids valid and unique in the operation, arguments
    a JSON object (or ``{"_unparsed": text}`` when the provider sent something else)."""
    calls = []
    counter = 0
    for call in raw:
        call_id = call.id or ""
        if not _CALL_ID.match(call_id) or call_id in taken:
            while True:
                counter += 1
                call_id = f"call_{counter}"
                if call_id not in taken:
                    break
        taken.add(call_id)
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            arguments = {"_unparsed": call.arguments}
        calls.append(ToolCall(id=call_id, name=call.name or "unknown", arguments=arguments))
    return calls


class OperationRun:
    """Runs one operation under a lease until it finishes, parks, or the lease is lost."""

    def __init__(
        self,
        *,
        lease: Lease,
        provider: Provider,
        tools: dict[str, Tool],
        events: EventSink | None = None,
        faults: Faults = NO_FAULTS,
        config: LoopConfig | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.lease = lease
        self.provider = provider
        self.tools = tools
        self.events = events or NullSink()
        self.faults = faults
        self.config = config or LoopConfig()
        self.sleep = sleep
        self.operation = Operation.objects.select_related("session", "session__owner").get(
            pk=lease.operation_id
        )
        self.session = self.operation.session
        self.leaf: str | None = None
        self.state = AppState()
        self.failures = 0  # transient provider failures in a row
        self._lease_lock = threading.Lock()

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> str:
        """``finished``, ``parked`` or ``lost`` (another runner holds the operation now)."""
        stop = threading.Event()
        heartbeat = threading.Thread(
            target=self._heartbeat, args=(stop,), daemon=True, name=f"lease-{self.operation.id}"
        )
        heartbeat.start()
        try:
            return self._run()
        except LeaseLost:
            log.info("operation %s: lease %s lost, stopping", self.operation.id, self.lease.fencing)
            return "lost"
        finally:
            stop.set()
            heartbeat.join()

    def _heartbeat(self, stop: threading.Event) -> None:
        """Keep the lease while a long step (a slow model, a slow tool) holds the loop."""
        try:
            while not stop.wait(self.config.lease_seconds / 3):
                try:
                    self._renew_if_due()
                except LeaseLost:
                    return  # the next write of the run finds out and stops it
        finally:
            connection.close()

    def _run(self) -> str:
        self._reload_session()
        self.faults.reach("after_accept")
        self._emit({"type": "operation_started", "operation_id": self.operation.id})
        while True:
            records = operation_records(operation_id=self.operation.id)
            olog = fold_operation(records)
            if olog.finished is not None:
                return "finished"
            evidence = recovery_evidence(session=self.session, records=records)
            verdict = verdict_for(olog, evidence)
            settled = self._settle(olog, verdict)
            if settled in ("finished", "parked"):
                return settled
            if settled is not None:
                continue
            if verdict.redispatch:
                self._dispatch_again(olog, verdict.redispatch[0])
                continue
            reply = self._latest_reply(olog, evidence.entry_ids)
            if reply is not None and olog.latest_attempt.attempt_id not in olog.usage:
                self._settle_usage(olog.latest_attempt.attempt_id, reply[1])  # lost in a crash
                continue
            pending = self._calls_without_result(olog, reply) if reply else []
            if olog.stop is not None:
                self._stop(olog, reply, pending)
                return "finished"
            if pending:
                self._handle_call(olog, reply, pending[0])
                continue
            unwritten = [i for i in olog.inputs if i.input_entry_id not in evidence.entry_ids]
            if unwritten:
                self._write_inputs(unwritten)
                continue
            if reply is not None and reply[1].is_final and not olog.unanswered_inputs:
                self._finish(olog, _OUTCOME.get(reply[1].stop_reason, "completed"))
                return "finished"
            if len(olog.attempts) >= self.config.max_model_calls:
                self._finish(
                    olog,
                    "failed",
                    "too_many_steps",
                    f"the director made {len(olog.attempts)} model calls; stopped",
                )
                return "finished"
            self._model_step(olog)

    def _settle(self, olog: OperationLog, verdict) -> str | None:
        """What a crash left undecided: an inferred end, or open dispatches. None: nothing."""
        if verdict.status == "terminal":  # inferred: only operation_finished is missing
            self._finish(olog, verdict.outcome or "completed")
            return "finished"
        if verdict.status != "indeterminate_tool":
            return None
        if all(d.policy in AUTO_RETRY_POLICIES for d in verdict.dispatches):
            for dispatch in verdict.dispatches:  # same key: the tool answers, nothing twice
                self._dispatch_again(olog, dispatch.tool_call_id)
            return "dispatched again"
        names = ", ".join(f"{d.tool_name} ({d.tool_call_id})" for d in verdict.dispatches)
        operation_park(
            operation_id=self.operation.id,
            fencing=self.lease.fencing,
            reason=f"may or may not have happened: {names}",
        )
        self._emit({"type": "operation_parked", "operation_id": self.operation.id})
        return "parked"

    def settle(self) -> str:
        """Recovery's decisive step, waiting for no one: what was found and what was done."""
        try:
            self._reload_session()
            records = operation_records(operation_id=self.operation.id)
            olog = fold_operation(records)
            if olog.finished is not None:
                return f"finished already ({olog.finished.outcome})"
            verdict = verdict_for(olog, recovery_evidence(session=self.session, records=records))
            found = _describe(verdict)
            done = self._settle(olog, verdict)
            if done == "finished":
                return f"{found}: wrote operation_finished ({verdict.outcome})"
            if done == "parked":
                return f"{found}: parked in the recovery inbox"
            if done == "dispatched again":
                return f"{found}: dispatched again with the same key; a runner goes on"
            return f"{found}: a runner goes on from here"
        except LeaseLost:
            return "another runner took it over meanwhile"

    # -- reading ------------------------------------------------------------------------

    def _reload_session(self) -> None:
        self.session.refresh_from_db(fields=["leaf_id", "entry_count"])
        self.leaf = self.session.leaf_id
        branch = branch_get(session=self.session) if self.leaf else []
        value = self.session.initial_app_state
        for entry in branch:
            if isinstance(entry, AppStateEntry):
                value = entry.value
        self.state = AppState.of(value)

    def _branch(self) -> list[Entry]:
        return branch_get(session=self.session, leaf_id=self.leaf) if self.leaf else []

    def _latest_reply(
        self, olog: OperationLog, present: frozenset[str]
    ) -> tuple[str, AssistantMessage] | None:
        attempt = olog.latest_attempt
        if attempt is None or attempt.assistant_entry_id not in present:
            return None
        for entry in reversed(self._branch()):
            if entry.id == attempt.assistant_entry_id:
                assert isinstance(entry, MessageEntry)
                assert isinstance(entry.message, AssistantMessage)
                return entry.id, entry.message
        raise LookupError(f"reply {attempt.assistant_entry_id!r} is not on the active branch")

    def _calls_without_result(
        self, olog: OperationLog, reply: tuple[str, AssistantMessage]
    ) -> list[ToolCall]:
        """The reply's calls with neither a result (under its pre-allocated id) nor a T1."""
        reply_id, message = reply
        written = {e.id for e in self._branch()}
        return [
            c
            for c in message.tool_calls
            if result_entry_id(reply_id, c.id) not in written
            and (olog.calls.get(c.id) is None or olog.calls[c.id].dispatch is None)
        ]

    # -- writing ------------------------------------------------------------------------

    def _write(self, *, records: list[Record] = (), entries: list[Entry] = ()) -> None:
        """One fenced transaction; the leaf and app state follow what was written."""
        self._renew_if_due()
        run_append(
            operation_id=self.operation.id,
            fencing=self.lease.fencing,
            records=list(records),
            entries=list(entries),
            expected_leaf_id=self.leaf,
            session_id=self.session.id,
            now=timezone.now(),
        )
        for entry in entries:
            self.leaf = entry.id
            if isinstance(entry, AppStateEntry):
                self.state = AppState.of(entry.value)
            self._emit({"type": "entry_committed", "entry": entry.model_dump(mode="json")})

    def _renew_if_due(self) -> None:
        with self._lease_lock:  # the heartbeat and the loop's own writes both renew
            now = timezone.now()
            if self.lease.expires_at - now < timedelta(seconds=self.config.lease_seconds * 2 / 3):
                self.lease = lease_renew(
                    lease=self.lease, now=now, lease_seconds=self.config.lease_seconds
                )

    def _emit(self, event: dict[str, Any]) -> None:
        self.events.emit(self.session.id, {**event, "operation_id": self.operation.id})

    def _message_entry(self, entry_id: str, message) -> MessageEntry:
        return MessageEntry(
            id=entry_id, parent_id=self.leaf, timestamp=timezone.now(), message=message
        )

    def _record(self, cls, **fields) -> Record:
        return cls(operation_id=self.operation.id, timestamp=timezone.now(), **fields)

    def _finish(
        self, olog: OperationLog, outcome: str, code: str | None = None, message: str | None = None
    ) -> None:
        self.faults.reach("before_finish")
        error = ErrorInfo(code=code, message=message) if code else None
        self._write(records=[self._record(OperationFinished, outcome=outcome, error=error)])
        self._emit(
            {
                "type": "operation_finished",
                "outcome": outcome,
                "error": error.model_dump() if error else None,
            }
        )

    def _write_inputs(self, inputs) -> None:
        for queued in inputs:
            self._write(
                entries=[
                    self._message_entry(queued.input_entry_id, UserMessage(content=queued.text))
                ]
            )
            self.faults.reach("after_input_entry")

    def _stop(self, olog, reply, pending: list[ToolCall]) -> None:
        """The next safe point after a stop: nothing half done, nothing left dangling."""
        if reply is not None and pending:
            results = [
                self._result_entry(
                    reply[0],
                    call,
                    ToolOutput("not run: the run was stopped before this call", is_error=True),
                )
                for call in pending
            ]
            for entry in results:  # parents chain through the leaf as each is written
                self._write(entries=[entry.model_copy(update={"parent_id": self.leaf})])
        unwritten = [
            i for i in olog.inputs if i.input_entry_id not in {e.id for e in self._branch()}
        ]
        self._write_inputs(unwritten)
        self._finish(olog, "aborted")

    # -- the model ----------------------------------------------------------------------

    def _model_step(self, olog: OperationLog) -> None:
        branch = self._branch()
        messages = derive_messages(branch, self.leaf)
        if estimate_tokens(messages) > self.config.context_budget:
            self._compact(branch, messages)
            messages = derive_messages(self._branch(), self.leaf)
        attempt_id, reply_id = new_id("att"), new_id("e")
        self._write(
            records=[
                self._record(
                    ModelAttempted,
                    attempt_id=attempt_id,
                    assistant_entry_id=reply_id,
                    model=self.provider.name,
                )
            ]
        )
        self.faults.reach("after_model_attempted")
        try:
            reply = self._stream(messages, attempt_id)
        except PermanentProviderError as exc:
            self._finish(olog, "failed", exc.code, str(exc))
            return
        except ProviderError as exc:
            self.failures += 1
            self._emit({"type": "model_retry", "attempt_id": attempt_id, "error": str(exc)})
            if self.failures > self.config.max_transient_failures:
                self._finish(olog, "failed", exc.code, f"the model server kept failing: {exc}")
            else:
                self.sleep(self.config.backoff(self.failures - 1))
            return
        self.failures = 0
        taken = {c.id for c in self._operation_calls(olog)}
        calls = normalize_calls(reply.tool_calls, taken)
        usage = reply.usage or Usage(
            input_tokens=estimate_tokens(messages),
            output_tokens=max(1, len(reply.text) // 2),
        )
        stop_reason = (
            "tool_use"
            if calls
            else (reply.stop_reason if reply.stop_reason != "tool_use" else "stop")
        )
        message = AssistantMessage(
            content=reply.text, tool_calls=calls, stop_reason=stop_reason, usage=usage
        )
        self._write(entries=[self._message_entry(reply_id, message)])
        self.faults.reach("after_assistant_entry")
        self._settle_usage(attempt_id, message)

    def _settle_usage(self, attempt_id: str, reply: AssistantMessage) -> None:
        """The bill of a reply, from the reply itself (so a crash cannot lose it)."""
        usage = reply.usage or Usage(input_tokens=0, output_tokens=max(1, len(reply.content) // 2))
        self._write(records=[self._record(UsageSettled, attempt_id=attempt_id, usage=usage)])
        self.faults.reach("after_usage")

    def _stream(self, messages: list[ContextMessage], attempt_id: str) -> Reply:
        """Stream one reply; its text goes out as deltas, coalesced to one per interval."""
        reply, parts = Reply(), {}
        specs = [tool.spec() for tool in self.tools.values()]
        deltas = DeltaCoalescer(
            lambda text: self._emit(
                {
                    "type": "text_delta",
                    "attempt_id": attempt_id,
                    "text": text,
                    "offline": self.provider.offline,
                }
            ),
            self.config.delta_interval_seconds,
        )
        try:
            for event in self.provider.stream(messages, specs):
                add(reply, parts, event)
                if isinstance(event, TextDelta):
                    if deltas.add(event.text):  # the first words went out at once
                        self.faults.reach("mid_stream")
                else:
                    deltas.flush()
        finally:
            deltas.flush()
        if not reply.complete:
            raise TransientProviderError("the stream ended before the reply was complete")
        return reply

    def _operation_calls(self, olog: OperationLog) -> list[ToolCall]:
        ids = {a.assistant_entry_id for a in olog.attempts}
        return [
            call
            for e in self._branch()
            if e.id in ids
            and isinstance(e, MessageEntry)
            and isinstance(e.message, AssistantMessage)
            for call in e.message.tool_calls
        ]

    def _compact(self, branch: list[Entry], messages: list[ContextMessage]) -> None:
        """Summarize all but the recent part of the branch into a compaction entry."""
        budget = self.config.context_budget // 2
        kept_tokens, first_kept = 0, None
        for entry in reversed(branch):
            if isinstance(entry, MessageEntry):
                kept_tokens += estimate_tokens([entry.message])
                if kept_tokens > budget:
                    break
                first_kept = entry.id
        if first_kept is None:
            return
        cut = branch[: next(i for i, e in enumerate(branch) if e.id == first_kept)]
        before = derive_messages(cut, cut[-1].id) if cut else []
        if not before:
            return
        summary = self.provider.summarize(before)
        entry = CompactionEntry(
            id=new_id("e"),
            parent_id=self.leaf,
            timestamp=timezone.now(),
            summary=summary,
            first_kept_entry_id=first_kept,
            tokens_before=estimate_tokens(messages),
            tokens_after=kept_tokens + len(summary) // 2,
        )
        self._write(entries=[entry])
        self._emit(
            {
                "type": "compaction",
                "tokens_before": entry.tokens_before,
                "tokens_after": entry.tokens_after,
            }
        )

    # -- tools --------------------------------------------------------------------------

    def _result_entry(self, reply_id: str, call: ToolCall, output: ToolOutput) -> MessageEntry:
        return self._message_entry(
            result_entry_id(reply_id, call.id),
            ToolResultMessage(
                tool_call_id=call.id,
                tool_name=call.name,
                content=output.content,
                is_error=output.is_error,
                details=output.details,
            ),
        )

    def _handle_call(
        self, olog: OperationLog, reply: tuple[str, AssistantMessage], call: ToolCall
    ) -> None:
        reply_id = reply[0]
        tool = self.tools.get(call.name)
        if tool is None:
            self._write(
                entries=[
                    self._result_entry(
                        reply_id,
                        call,
                        ToolOutput(f"there is no tool called {call.name!r}", is_error=True),
                    )
                ]
            )
            return
        if "_unparsed" in call.arguments:
            self._write(
                entries=[
                    self._result_entry(
                        reply_id,
                        call,
                        ToolOutput(
                            "invalid arguments: not a JSON object",
                            is_error=True,
                            details={"code": "invalid_arguments"},
                        ),
                    )
                ]
            )
            return
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            self._write(
                entries=[
                    self._result_entry(
                        reply_id,
                        call,
                        ToolOutput(
                            f"invalid arguments: {problems}",
                            is_error=True,
                            details={"code": "invalid_arguments"},
                        ),
                    )
                ]
            )
            return

        cost = tool.approval_cost(self.state)
        if cost is not None:
            decision = self._approval(olog, call, cost)
            if decision is None:
                return  # a stop came while waiting: the loop's stop step handles the call
            if decision.decision == "denied":
                self._write(
                    entries=[
                        self._result_entry(
                            reply_id,
                            call,
                            ToolOutput(
                                f"not run: {decision.by} denied it",
                                is_error=True,
                                details={"code": "denied"},
                            ),
                        )
                    ]
                )
                return
            if decision.auto_from_now and self.state.permission_mode != "auto":
                state = self.state.model_copy(update={"permission_mode": "auto"})
                self._write(
                    entries=[
                        AppStateEntry(
                            id=new_id("e"),
                            parent_id=self.leaf,
                            timestamp=timezone.now(),
                            value=state.as_json(),
                        )
                    ]
                )
                self._emit({"type": "state_changed", "app_state": self.state.as_json()})

        self._dispatch(tool, reply_id, call, args, attempt=1)

    def _approval(self, olog: OperationLog, call: ToolCall, cost: int):
        """The recorded decision; asks (again, after a restart) and waits durably if none."""
        known = olog.calls.get(call.id)
        if known is not None and known.approval in ("approved", "denied"):
            return known.approval_decision
        self._write(records=[self._record(ApprovalRequested, tool_call_id=call.id, cost=cost)])
        self._emit(
            {
                "type": "approval_requested",
                "tool_call_id": call.id,
                "tool": call.name,
                "arguments": call.arguments,
                "cost": cost,
            }
        )
        self.faults.reach("awaiting_approval", call.name)
        while True:  # durable: the request is in the journal; a restart asks again
            self.sleep(self.config.approval_poll_seconds)
            self._renew_if_due()
            current = fold_operation(operation_records(operation_id=self.operation.id))
            if current.stop is not None:
                return None
            state = current.calls.get(call.id)
            if state is not None and state.approval in ("approved", "denied"):
                return state.approval_decision

    def _dispatch(self, tool: Tool, reply_id: str, call: ToolCall, args, *, attempt: int) -> None:
        key = idempotency_key(self.operation.id, call.id)
        t1 = self._record(
            ToolDispatched,
            tool_call_id=call.id,
            tool_name=tool.name,
            assistant_entry_id=reply_id,
            args=call.arguments,
            args_hash=args_hash(call.arguments),
            result_entry_id=result_entry_id(reply_id, call.id),
            idempotency_key=key,
            policy=tool.policy(),
            dispatch_attempt=attempt,
        )
        self._write(records=[t1])
        self.faults.reach("after_t1", tool.name)
        self._emit(
            {
                "type": "tool_started",
                "tool_call_id": call.id,
                "tool": tool.name,
                "arguments": call.arguments,
                "dispatch_attempt": attempt,
            }
        )
        ctx = ToolContext(
            owner=self.session.owner,
            session_id=self.session.id,
            operation_id=self.operation.id,
            tool_call_id=call.id,
            idempotency_key=key,
            app_state=self.state,
            branch=self._branch,
            faults=self.faults,
        )
        try:
            output = tool.run(ctx, args)
        except Exception as exc:  # the tool said so itself: its outcome is known, not lost
            log.exception("tool %s failed", tool.name)
            output = ToolOutput(f"the tool failed: {type(exc).__name__}: {exc}", is_error=True)
        self.faults.reach("after_tool_effect", tool.name)
        entries: list[Entry] = []
        if output.app_state is not None:
            entries.append(
                AppStateEntry(
                    id=new_id("e"),
                    parent_id=self.leaf,
                    timestamp=timezone.now(),
                    value=output.app_state.as_json(),
                )
            )
        result = self._result_entry(reply_id, call, output)
        if entries:
            result = result.model_copy(update={"parent_id": entries[-1].id})
        self._write(entries=[*entries, result])  # the state and T2 commit together
        self.faults.reach("after_t2", tool.name)
        self._emit(
            {
                "type": "tool_finished",
                "tool_call_id": call.id,
                "tool": tool.name,
                "is_error": output.is_error,
                "details": output.details,
            }
        )
        if output.app_state is not None:
            self._emit({"type": "state_changed", "app_state": self.state.as_json()})

    def _dispatch_again(self, olog: OperationLog, call_id: str) -> None:
        """The same call, the same key, the next dispatch attempt (no second approval)."""
        latest = olog.calls[call_id].dispatch
        assert latest is not None
        tool = self.tools[latest.tool_name]
        call = ToolCall(id=call_id, name=latest.tool_name, arguments=latest.args)
        self._dispatch(
            tool,
            latest.assistant_entry_id,
            call,
            tool.args.model_validate(latest.args),
            attempt=latest.dispatch_attempt + 1,
        )
