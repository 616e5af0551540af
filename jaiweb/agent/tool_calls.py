"""A run's tool calls, one at a time: validate → approval → T1 → the tool → T2."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from pydantic import ValidationError

from jaiweb.agent.faults import Faults
from jaiweb.agent.lease_keeper import LeaseKeeper
from jaiweb.agent.reconciler import Reconciled, as_event, attention, calls_reconcile
from jaiweb.agent.state import AppState
from jaiweb.agent.tools.base import Tool, ToolContext, ToolOutput
from jaiweb.agent.writer import FactsWrite, FencedWriter
from jaiweb.store.ids import new_id
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_park
from journal.entries import AppStateEntry, Entry, MessageEntry, ToolCall, ToolResultMessage
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import ApprovalRequested, ToolDispatched
from journal.recovery import fold_operation
from journal.steps import DispatchAgain, HandleCall, Park, Stop

if TYPE_CHECKING:
    from jaiweb.agent.loop import LoopConfig

log = logging.getLogger(__name__)


class ToolCalls:
    """Handles a run's tool calls: refuses, asks approval for, dispatches and settles them.

    It remembers the calls it asked approval for, so a restarted run asks again."""

    def __init__(
        self,
        *,
        tools: dict[str, Tool],
        session: ComicSession,
        branch: Callable[[], list[Entry]],
        keeper: LeaseKeeper,
        writer: FencedWriter,
        write_facts: FactsWrite,
        emit: Callable[[dict[str, Any]], None],
        faults: Faults,
        config: LoopConfig,
        sleep: Callable[[float], None],
        should_stop: Callable[[], bool],
    ) -> None:
        self.tools, self.session, self.branch, self.keeper = tools, session, branch, keeper
        self.writer, self.write_facts, self.emit = writer, write_facts, emit
        self.faults, self.config, self.sleep, self.should_stop = faults, config, sleep, should_stop
        self.operation_id = writer.operation_id
        self.asked: set[str] = set()

    def planned_t1(self, step: HandleCall, state: AppState) -> ToolDispatched | None:
        """Make the call's T1 when dispatching it needs nothing but ``state``.

        That is a known tool, valid arguments and no approval to ask. Such a T1 can commit
        with the write before it."""
        tool = self.tools.get(step.call.name)
        if tool is None or "_unparsed" in step.call.arguments:
            return None
        try:
            tool.args.model_validate(step.call.arguments)
        except ValidationError:
            return None
        if tool.approval_cost(state) is not None:
            return None
        return self._t1(tool, step.reply_id, step.call, attempt=1)

    def handle(self, step: HandleCall, *, t1: ToolDispatched | None) -> str | None:
        """Refuse the reply's next call with a result, ask approval for it, or dispatch it.

        ``t1`` is its T1 when ``planned_t1`` had it go in with the previous write. It returns
        ``"waiting"`` when the approval is not decided within the hold: the loop hands the
        operation back until a decision wakes a runner."""
        call = step.call
        if t1 is not None:
            tool = self.tools[call.name]
            args = tool.args.model_validate(call.arguments)
            self._dispatch(tool, step.reply_id, call, args, attempt=1, t1=t1)
            return None
        tool = self.tools.get(call.name)
        if tool is None:
            return self._refuse(step, f"there is no tool called {call.name!r}", None)
        if "_unparsed" in call.arguments:
            return self._refuse(step, "invalid arguments: not a JSON object", "invalid_arguments")
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            return self._refuse(step, f"invalid arguments: {problems}", "invalid_arguments")

        state = self.writer.state
        cost = tool.approval_cost(state)
        if cost is not None:
            cost *= step.covers  # a variant set is asked for once, at its whole cost
            if step.approval in (None, "pending"):
                if step.approval is None or call.id not in self.asked:  # a restart asks again
                    self._ask(call, cost)
                if self._await_decision(call.id):
                    return None  # the loop reads the decision (or the stop) from the journal
                return "waiting"
            decision = step.decision
            assert decision is not None
            if decision.decision == "denied":
                return self._refuse(step, f"not run: {decision.by} denied it", "denied")
            if decision.auto_from_now and state.permission_mode != "auto":
                auto = state.model_copy(update={"permission_mode": "auto"})
                entry = AppStateEntry(
                    id=new_id("e"),
                    parent_id=self.writer.leaf,
                    timestamp=timezone.now(),
                    value=auto.as_json(),
                )
                self.writer.write(entries=[entry])
                self.emit({"type": "state_changed", "app_state": self.writer.state.as_json()})
        self._dispatch(tool, step.reply_id, call, args, attempt=1)
        return None

    def _refuse(self, step: HandleCall, message: str, code: str | None) -> None:
        details = {"code": code} if code else {}
        output = ToolOutput(message, is_error=True, details=details)
        self.writer.write(entries=[self._result_entry(step.reply_id, step.call, output)])

    def _ask(self, call: ToolCall, cost: int) -> None:
        request = self.writer.record(ApprovalRequested, tool_call_id=call.id, cost=cost)
        self.writer.write(records=[request])
        self.asked.add(call.id)
        self.emit(
            {
                "type": "approval_requested",
                "tool_call_id": call.id,
                "tool": call.name,
                "arguments": call.arguments,
                "cost": cost,
            }
        )
        self.faults.reach("awaiting_approval", call.name)

    def _await_decision(self, tool_call_id: str) -> bool:
        """Wait for a decision or a stop in the journal; False when the hold is over first.

        A person who answers within ``approval_hold_seconds`` sees the run go on in place.
        After that the worker is not kept waiting for them, since the request is durable."""
        held = 0.0
        while held < self.config.approval_hold_seconds and not self.should_stop():
            self.sleep(self.config.approval_poll_seconds)
            held += max(self.config.approval_poll_seconds, 0.05)
            self.keeper.renew_if_due()
            current = fold_operation(operation_records(operation_id=self.operation_id))
            if current.stop is not None:
                return True
            call = current.calls.get(tool_call_id)
            if call is not None and call.approval in ("approved", "denied"):
                return True
        return False

    def _t1(self, tool: Tool, reply_id: str, call: ToolCall, *, attempt: int) -> ToolDispatched:
        return self.writer.record(
            ToolDispatched,
            tool_call_id=call.id,
            tool_name=tool.name,
            assistant_entry_id=reply_id,
            args=call.arguments,
            args_hash=args_hash(call.arguments),
            result_entry_id=result_entry_id(reply_id, call.id),
            idempotency_key=idempotency_key(self.operation_id, call.id),
            policy=tool.policy(),
            dispatch_attempt=attempt,
        )

    def _dispatch(
        self,
        tool: Tool,
        reply_id: str,
        call: ToolCall,
        args: Any,
        *,
        attempt: int,
        t1: ToolDispatched | None = None,
    ) -> None:
        """Write T1, run the tool's effect, then write T2 with the state it changed.

        ``t1`` is the T1 when it committed already, with the write before."""
        if t1 is None:
            t1 = self._t1(tool, reply_id, call, attempt=attempt)
            self.writer.write(records=[t1])
        key = t1.idempotency_key
        self.faults.reach("after_t1", tool.name)
        self.emit(
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
            operation_id=self.operation_id,
            tool_call_id=call.id,
            idempotency_key=key,
            app_state=self.writer.state,
            branch=self.branch,
            faults=self.faults,
            progress=progress_reporter(self.emit, tool.name, call.id),
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
                    parent_id=self.writer.leaf,
                    timestamp=timezone.now(),
                    value=output.app_state.as_json(),
                )
            )
        result = self._result_entry(reply_id, call, output)
        if entries:
            result = result.model_copy(update={"parent_id": entries[-1].id})
        # T2 records an effect that happened: a prompt typed meanwhile must not refuse it. The
        # next step's first record (the next call's T1, the next model_attempted) goes with it.
        self.write_facts(entries=[*entries, result], records=[])
        self.faults.reach("after_t2", tool.name)
        self.emit(
            {
                "type": "tool_finished",
                "tool_call_id": call.id,
                "tool": tool.name,
                "is_error": output.is_error,
                "details": output.details,
            }
        )
        if output.app_state is not None:
            self.emit({"type": "state_changed", "app_state": self.writer.state.as_json()})

    def dispatch_again(self, step: DispatchAgain) -> None:
        """Dispatch the same call again, under the same key, as the next attempt.

        It asks no second approval."""
        latest = step.latest
        tool = self.tools[latest.tool_name]
        call = ToolCall(id=latest.tool_call_id, name=latest.tool_name, arguments=latest.args)
        args = tool.args.model_validate(latest.args)
        self._dispatch(
            tool, latest.assistant_entry_id, call, args, attempt=latest.dispatch_attempt + 1
        )

    def stop(self, step: Stop) -> None:
        """Give each call not yet run a "not run" result at a stop, so nothing dangles."""
        output = ToolOutput("not run: the run was stopped before this call", is_error=True)
        for call in step.calls:  # parents chain through the leaf as each is written
            self.writer.write(entries=[self._result_entry(step.reply_id, call, output)])

    def park(self, step: Park) -> Reconciled:
        """Settle the open calls their evidence decides, and park the operation if any is left.

        The reconciler settles them. A parked operation waits in the recovery inbox and
        keeps no lease while an admin decides. With none left, the loop goes on from the
        results just written, after it reads the leaf and the state again."""
        records = operation_records(operation_id=self.operation_id)
        calls = fold_operation(records).calls
        open_calls = [calls[d.tool_call_id].dispatch for d in step.dispatches]
        done = calls_reconcile(
            operation_id=self.operation_id,
            session=self.session,
            dispatches=[d for d in open_calls if d is not None],
            fencing=self.keeper.fencing,
        )
        for decision, entry in done.settled:
            log.info(
                "operation %s: %s settled by the reconciler (%s)",
                self.operation_id,
                decision.tool_call_id,
                decision.reason,
            )
            self.emit(as_event(entry))
            self.emit(
                {
                    "type": "tool_finished",
                    "tool_call_id": decision.tool_call_id,
                    "tool": entry.message.tool_name,
                    "is_error": decision.is_error,
                    "details": decision.details,
                }
            )
        if not done.undecided:
            return done
        operation_park(
            operation_id=self.operation_id,
            fencing=self.keeper.fencing,
            reason=attention(done.undecided),
        )
        self.emit({"type": "operation_parked", "operation_id": self.operation_id})
        return done

    def _result_entry(self, reply_id: str, call: ToolCall, output: ToolOutput) -> MessageEntry:
        result = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=output.content,
            is_error=output.is_error,
            details=output.details,
        )
        return self.writer.message_entry(result_entry_id(reply_id, call.id), result)


def progress_reporter(
    emit: Callable[[dict[str, Any]], None], tool: str, call_id: str
) -> Callable[[int, int], None]:
    """Report a tool's progress as live events, each change of ``value / maximum`` once.

    A backend that polls repeats itself, and nothing is reported while the maximum is
    unknown."""
    last: tuple[int, int] | None = None

    def report(value: int, maximum: int) -> None:
        nonlocal last
        if maximum <= 0 or (value, maximum) == last:
            return
        last = (value, maximum)
        emit(
            {
                "type": "tool_progress",
                "tool_call_id": call_id,
                "tool": tool,
                "value": value,
                "max": maximum,
            }
        )

    return report
