"""The tools' side of a run: validate → approval → T1 → the tool → T2, one call at a time."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from pydantic import ValidationError

from jaiweb.agent.reconciler import Reconciled, as_event, attention, calls_reconcile
from jaiweb.agent.state import AppState
from jaiweb.agent.tools.base import Tool, ToolContext, ToolOutput
from jaiweb.store.ids import new_id
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_park
from journal.entries import AppStateEntry, Entry, MessageEntry, ToolCall, ToolResultMessage
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import ApprovalRequested, ToolDispatched
from journal.recovery import fold_operation
from journal.steps import DispatchAgain, HandleCall, Park, Stop

if TYPE_CHECKING:
    from jaiweb.agent.loop import OperationRun

log = logging.getLogger(__name__)


def planned_t1(run: OperationRun, step: HandleCall, state: AppState) -> ToolDispatched | None:
    """The call's T1 when dispatching it needs nothing but ``state`` (a known tool, valid
    arguments, no approval to ask): it can commit with the write before it."""
    tool = run.tools.get(step.call.name)
    if tool is None or "_unparsed" in step.call.arguments:
        return None
    try:
        tool.args.model_validate(step.call.arguments)
    except ValidationError:
        return None
    if tool.approval_cost(state) is not None:
        return None
    return _t1(run, tool, step.reply_id, step.call, attempt=1)


def handle_call(run: OperationRun, step: HandleCall, *, t1: ToolDispatched | None) -> str | None:
    """The reply's next call: refuse it with a result, ask for approval, or dispatch it.

    ``t1``: its T1, when ``planned_t1`` had it go in with the previous write.
    ``"waiting"`` when the approval is not decided within the hold: the loop hands the
    operation back until a decision wakes a runner."""
    call = step.call
    if t1 is not None:
        tool = run.tools[call.name]
        args = tool.args.model_validate(call.arguments)
        dispatch(run, tool, step.reply_id, call, args, attempt=1, t1=t1)
        return None
    tool = run.tools.get(call.name)
    if tool is None:
        return _refuse(run, step, f"there is no tool called {call.name!r}", None)
    if "_unparsed" in call.arguments:
        return _refuse(run, step, "invalid arguments: not a JSON object", "invalid_arguments")
    try:
        args = tool.args.model_validate(call.arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        return _refuse(run, step, f"invalid arguments: {problems}", "invalid_arguments")

    state = run.writer.state
    cost = tool.approval_cost(state)
    if cost is not None:
        cost *= step.covers  # a variant set is asked for once, at its whole cost
        if step.approval in (None, "pending"):
            if step.approval is None or call.id not in run.asked:  # a restart asks again
                _ask(run, call, cost)
            if _await_decision(run, call.id):
                return None  # the loop reads the decision (or the stop) from the journal
            return "waiting"
        decision = step.decision
        assert decision is not None
        if decision.decision == "denied":
            return _refuse(run, step, f"not run: {decision.by} denied it", "denied")
        if decision.auto_from_now and state.permission_mode != "auto":
            auto = state.model_copy(update={"permission_mode": "auto"})
            entry = AppStateEntry(
                id=new_id("e"),
                parent_id=run.writer.leaf,
                timestamp=timezone.now(),
                value=auto.as_json(),
            )
            run.writer.write(entries=[entry])
            run.emit({"type": "state_changed", "app_state": run.writer.state.as_json()})
    dispatch(run, tool, step.reply_id, call, args, attempt=1)
    return None


def _refuse(run: OperationRun, step: HandleCall, message: str, code: str | None) -> None:
    details = {"code": code} if code else {}
    output = ToolOutput(message, is_error=True, details=details)
    run.writer.write(entries=[result_entry(run, step.reply_id, step.call, output)])


def _ask(run: OperationRun, call: ToolCall, cost: int) -> None:
    run.writer.write(records=[run.record(ApprovalRequested, tool_call_id=call.id, cost=cost)])
    run.asked.add(call.id)
    run.emit(
        {
            "type": "approval_requested",
            "tool_call_id": call.id,
            "tool": call.name,
            "arguments": call.arguments,
            "cost": cost,
        }
    )
    run.faults.reach("awaiting_approval", call.name)


def _await_decision(run: OperationRun, tool_call_id: str) -> bool:
    """True once a decision or a stop is in the journal; False when the hold is over first.

    A person who answers within ``approval_hold_seconds`` sees the run go on in place;
    after that the worker is not kept waiting for them (the request is durable).
    """
    held = 0.0
    while held < run.config.approval_hold_seconds and not run.should_stop():
        run.sleep(run.config.approval_poll_seconds)
        held += max(run.config.approval_poll_seconds, 0.05)
        run.keeper.renew_if_due()
        current = fold_operation(operation_records(operation_id=run.operation_id))
        if current.stop is not None:
            return True
        call = current.calls.get(tool_call_id)
        if call is not None and call.approval in ("approved", "denied"):
            return True
    return False


def _progress_reporter(run, tool: str, call_id: str):
    """A tool's progress as live events: each change of ``value / maximum`` once (a backend
    that polls repeats itself), and nothing while the maximum is unknown."""
    last: tuple[int, int] | None = None

    def report(value: int, maximum: int) -> None:
        nonlocal last
        if maximum <= 0 or (value, maximum) == last:
            return
        last = (value, maximum)
        run.emit(
            {
                "type": "tool_progress",
                "tool_call_id": call_id,
                "tool": tool,
                "value": value,
                "max": maximum,
            }
        )

    return report


def _t1(run: OperationRun, tool: Tool, reply_id: str, call: ToolCall, *, attempt: int):
    return run.record(
        ToolDispatched,
        tool_call_id=call.id,
        tool_name=tool.name,
        assistant_entry_id=reply_id,
        args=call.arguments,
        args_hash=args_hash(call.arguments),
        result_entry_id=result_entry_id(reply_id, call.id),
        idempotency_key=idempotency_key(run.operation_id, call.id),
        policy=tool.policy(),
        dispatch_attempt=attempt,
    )


def dispatch(
    run: OperationRun,
    tool: Tool,
    reply_id: str,
    call: ToolCall,
    args: Any,
    *,
    attempt: int,
    t1: ToolDispatched | None = None,
) -> None:
    """T1, the tool's effect, T2 (with the state it changed, in one transaction).

    ``t1``: committed already, with the write before (``OperationRun.write_then``)."""
    if t1 is None:
        t1 = _t1(run, tool, reply_id, call, attempt=attempt)
        run.writer.write(records=[t1])
    key = t1.idempotency_key
    run.faults.reach("after_t1", tool.name)
    run.emit(
        {
            "type": "tool_started",
            "tool_call_id": call.id,
            "tool": tool.name,
            "arguments": call.arguments,
            "dispatch_attempt": attempt,
        }
    )
    ctx = ToolContext(
        owner=run.session.owner,
        session_id=run.session.id,
        operation_id=run.operation_id,
        tool_call_id=call.id,
        idempotency_key=key,
        app_state=run.writer.state,
        branch=run.branch,
        faults=run.faults,
        progress=_progress_reporter(run, tool.name, call.id),
    )
    try:
        output = tool.run(ctx, args)
    except Exception as exc:  # the tool said so itself: its outcome is known, not lost
        log.exception("tool %s failed", tool.name)
        output = ToolOutput(f"the tool failed: {type(exc).__name__}: {exc}", is_error=True)
    run.faults.reach("after_tool_effect", tool.name)
    entries: list[Entry] = []
    if output.app_state is not None:
        entries.append(
            AppStateEntry(
                id=new_id("e"),
                parent_id=run.writer.leaf,
                timestamp=timezone.now(),
                value=output.app_state.as_json(),
            )
        )
    result = result_entry(run, reply_id, call, output)
    if entries:
        result = result.model_copy(update={"parent_id": entries[-1].id})
    # T2 records an effect that happened: a prompt typed meanwhile must not refuse it. The
    # next step's first record (the next call's T1, the next model_attempted) goes with it.
    run.write_then(entries=[*entries, result], records=[])
    run.faults.reach("after_t2", tool.name)
    run.emit(
        {
            "type": "tool_finished",
            "tool_call_id": call.id,
            "tool": tool.name,
            "is_error": output.is_error,
            "details": output.details,
        }
    )
    if output.app_state is not None:
        run.emit({"type": "state_changed", "app_state": run.writer.state.as_json()})


def dispatch_again(run: OperationRun, step: DispatchAgain) -> None:
    """The same call, the same key, the next dispatch attempt (no second approval)."""
    latest = step.latest
    tool = run.tools[latest.tool_name]
    call = ToolCall(id=latest.tool_call_id, name=latest.tool_name, arguments=latest.args)
    args = tool.args.model_validate(latest.args)
    dispatch(run, tool, latest.assistant_entry_id, call, args, attempt=latest.dispatch_attempt + 1)


def stop_calls(run: OperationRun, step: Stop) -> None:
    """A stop's safe point: each call not yet run gets a "not run" result, nothing dangles."""
    output = ToolOutput("not run: the run was stopped before this call", is_error=True)
    for call in step.calls:  # parents chain through the leaf as each is written
        run.writer.write(entries=[result_entry(run, step.reply_id, call, output)])


def park(run: OperationRun, step: Park) -> Reconciled:
    """Settle the open calls whose evidence decides them (the reconciler), then hand the
    operation to the recovery inbox if any is left: it keeps no lease while an admin
    decides. With none left, the loop goes on from the results just written."""
    records = operation_records(operation_id=run.operation_id)
    calls = fold_operation(records).calls
    open_calls = [calls[d.tool_call_id].dispatch for d in step.dispatches]
    done = calls_reconcile(
        operation_id=run.operation_id,
        session=run.session,
        dispatches=[d for d in open_calls if d is not None],
        fencing=run.keeper.fencing,
    )
    if done.settled:
        run.start()  # the results moved the leaf: read it and the state again
        run.view, run.ahead = None, None
        for decision, entry in done.settled:
            log.info(
                "operation %s: %s settled by the reconciler (%s)",
                run.operation_id,
                decision.tool_call_id,
                decision.reason,
            )
            run.emit(as_event(entry))
            run.emit(
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
        operation_id=run.operation_id,
        fencing=run.keeper.fencing,
        reason=attention(done.undecided),
    )
    run.emit({"type": "operation_parked", "operation_id": run.operation_id})
    return done


def result_entry(run: OperationRun, reply_id: str, call: ToolCall, output: ToolOutput):
    return MessageEntry(
        id=result_entry_id(reply_id, call.id),
        parent_id=run.writer.leaf,
        timestamp=timezone.now(),
        message=ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=output.content,
            is_error=output.is_error,
            details=output.details,
        ),
    )
