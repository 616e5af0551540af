"""The agent loop: an executor of what ``journal.steps.next_step`` decides, one step a turn.

Each turn reads the operation's records and the active branch once, asks the pure core
for the next step, does that one thing and appends what it produced (``ModelTurn``,
``ToolCalls``). A step's first append names the log version it was decided from, so a
prompt, a stop or an approval that lands meanwhile makes the store refuse it
(``StaleLog``) and the loop simply decides again. Because the next step is always read
from the journal, the same loop continues an operation after any crash: there is no
in-memory state to lose.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone

from jaiweb.agent.events import EventSink, NullSink
from jaiweb.agent.faults import NO_FAULTS, Faults
from jaiweb.agent.lease_keeper import LeaseKeeper
from jaiweb.agent.model_turn import ModelTurn
from jaiweb.agent.providers.base import Provider
from jaiweb.agent.reconciler import Reconciled
from jaiweb.agent.recovery_pass import recover_once
from jaiweb.agent.state import AppState
from jaiweb.agent.tool_calls import ToolCalls
from jaiweb.agent.tools.base import Tool
from jaiweb.agent.view import View, acted_on_from_view
from jaiweb.agent.writer import FencedWriter
from jaiweb.requests_first import wait_turn
from jaiweb.store.errors import LeaseLost, StaleLog
from jaiweb.store.leases import Lease, lease_release, operation_wait
from jaiweb.store.selectors import (
    app_state_at,
    branch_get,
    operation_reading,
    operation_session_get,
    session_position,
)
from journal import steps
from journal.entries import AppStateEntry, Entry, UserMessage
from journal.records import OperationFinished, Record
from journal.recovery import fold_operation
from journal.steps import Limits, Step, next_step

log = logging.getLogger(__name__)


@dataclass
class LoopConfig:
    max_model_calls: int = 24  # per operation: a runaway conversation ends as failed
    max_transient_failures: int = 4  # in a row, before the operation fails
    backoff: Callable[[int], float] = lambda n: min(0.5 * 2**n, 8.0)
    approval_poll_seconds: float = 0.25
    # How long a run keeps its worker while an approval is undecided; then it is handed
    # back (Operation.waiting_since) and the decision wakes a runner.
    approval_hold_seconds: float = 0.25
    delta_interval_seconds: float = 0.05  # text deltas are coalesced to about this
    context_budget: int = field(default_factory=lambda: settings.JAIWEB_CONTEXT_BUDGET)
    lease_seconds: int = field(default_factory=lambda: settings.JAIWEB_LEASE_SECONDS)


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
        interleave: Callable[[Step], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.faults = faults
        self.events = events or NullSink()
        self.config = config or LoopConfig()
        self.limits = Limits(self.config.max_model_calls, self.config.context_budget)
        self.interleave = interleave  # tests: another writer acts between decision and append
        self.should_stop = should_stop  # the process is shutting down: hand back at a boundary
        self.operation_id = lease.operation_id
        self.session, language = operation_session_get(operation_id=lease.operation_id)
        self.keeper = LeaseKeeper(lease, self.config.lease_seconds)
        self.writer = FencedWriter(
            operation_id=self.operation_id,
            session_id=self.session.id,
            keeper=self.keeper,
            emit=self.emit,
            wrote=self._wrote,
        )
        # What the loop knows of the operation (None: read it again), and the step whose
        # first records went in with the last write (``write_facts_and_begin_next``), to be
        # done next.
        self.view: View | None = None
        self.begun: tuple[Step, list[Record]] | None = None
        self.model_turn = ModelTurn(
            provider=provider,
            tool_specs=[tool.spec() for tool in tools.values()],
            language=language or None,  # the page's language the prompt came from
            writer=self.writer,
            write_facts=self.write_facts_and_begin_next,
            emit=self.emit,
            faults=faults,
            config=self.config,
            sleep=sleep,
        )
        self.tool_calls = ToolCalls(
            tools=tools,
            session=self.session,
            branch=self.branch,
            keeper=self.keeper,
            writer=self.writer,
            write_facts=self.write_facts_and_begin_next,
            emit=self.emit,
            faults=faults,
            config=self.config,
            sleep=sleep,
            should_stop=should_stop,
        )

    def run(self) -> str:
        """Run the operation until it stops, and return why it stopped.

        The answer is ``finished``, ``parked``, ``waiting`` (for a person's decision, holding
        nothing), ``handed back`` (the process is stopping) or ``lost`` (another runner has the
        operation now)."""
        try:
            with self.keeper.heartbeat():
                self.start()
                self.faults.reach("after_accept")
                self.emit({"type": "operation_started", "operation_id": self.operation_id})
                while True:
                    # A step boundary: nothing is half done here, unless the next step's
                    # first records are written already (then it is done first).
                    if self.begun is None and self.should_stop():
                        lease_release(lease=self.keeper.lease)
                        return "handed back"
                    wait_turn()  # a request this process is answering goes first
                    step = self._decide()
                    if step is None:
                        return "finished"
                    if self.interleave is not None and self.begun is None:
                        self.interleave(step)  # (a begun step's came before its write)
                    try:
                        done = self.execute(step)
                        if done == "waiting":
                            operation_wait(
                                lease=self.keeper.lease,
                                expected_seq=self.writer.version,
                                now=timezone.now(),
                            )
                    except StaleLog:  # someone wrote meanwhile: read again, decide again
                        self.view, self.begun = None, None
                        continue
                    if done is not None:
                        return done
        except LeaseLost:
            log.info(
                "operation %s: lease %s lost, stopping", self.operation_id, self.keeper.fencing
            )
            return "lost"

    def recover(self) -> str:
        """Recovery's decisive step, waiting for no one: what was found and what was done."""
        return recover_once(self)

    # -- reading ------------------------------------------------------------------------

    def start(self) -> None:
        self.session.leaf_id, self.session.entry_count = session_position(
            session_id=self.session.id
        )
        self.writer.leaf = self.session.leaf_id
        self.writer.state = AppState.of(app_state_at(session=self.session))

    def _decide(self) -> Step | None:
        """Return the next step, or None when the operation has finished.

        A step begun by the last write comes first. Otherwise the step is decided from the view
        the loop keeps, when the step's first write is checked, since a person's write meanwhile
        makes the store refuse it. Any other step is decided from a fresh read."""
        if self.begun is not None:
            return self.begun[0]
        if self.view is not None:
            step = self._next(self.view)
            if step is None or acted_on_from_view(step):
                self.writer.seen(len(self.view.records))
                return step
        reading = operation_reading(operation_id=self.operation_id, session=self.session)
        self.view = View(tuple(reading.records), reading.evidence, tuple(self.branch()))
        self.writer.seen(len(reading.records))
        return self._next(self.view, reading.log)

    def _next(self, view: View, log=None) -> Step | None:
        log = fold_operation(view.records) if log is None else log
        if log.finished is not None:
            return None
        return next_step(log, view.evidence, view.branch, self.limits)

    def _wrote(self, entries, records) -> None:
        if self.view is not None:
            self.view = self.view.extended(entries, records)

    def write_facts_and_begin_next(self, *, entries: list[Entry], records: list[Record]) -> None:
        """Write the facts of an effect that happened, and begin the next step in the same commit.

        The entries and records are facts (a reply, a tool's result), so they are written
        without the leaf check. The loop then decides the next step from what this write
        leaves. When that step's first records need nothing from outside (a T1, a
        ``model_attempted``, a finish), they join this transaction. That saves a commit
        and leaves no crash point between the two writes, while a T1 still commits before
        its tool runs and an attempt before its model call. The joined records go in only
        if the log is still the one the loop knows; otherwise the loop reads it again and
        decides afresh. A step begun this way is the loop's next step (``begun``)."""
        step, first = None, []
        if self.view is not None and not self.should_stop():
            step = self._next(self.view.extended(entries, records))
            first = self._first_records(step, entries) if step is not None else []
        if first and self.interleave is not None:
            self.interleave(step)  # between the step's decision and its first append, as ever
        if first and isinstance(step, steps.Finish):
            self.faults.reach("before_finish")  # the finish commits with this write
        joined = self.writer.write(entries=entries, records=records, checked=False, then=first)
        if first and joined:
            self.begun = (step, first)
        elif first:
            self.view = None

    def _first_records(self, step: Step, entries: list[Entry]) -> list[Record]:
        match step:
            case steps.Finish():
                return [
                    self.writer.record(OperationFinished, outcome=step.outcome, error=step.error)
                ]
            case steps.ModelCall():
                return [self.model_turn.new_attempt()]
            case steps.HandleCall():
                state = self.writer.state
                for entry in entries:
                    if isinstance(entry, AppStateEntry):
                        state = AppState.of(entry.value)
                t1 = self.tool_calls.planned_t1(step, state)
                return [t1] if t1 is not None else []
        return []

    def _begun_records(self, step: Step) -> list[Record] | None:
        """The first records of ``step`` if they went in with the previous write."""
        if self.begun is not None and self.begun[0] is step:
            first = self.begun[1]
            self.begun = None
            return first
        return None

    def branch(self) -> list[Entry]:
        leaf = self.writer.leaf
        return branch_get(session=self.session, leaf_id=leaf) if leaf else []

    # -- doing --------------------------------------------------------------------------

    def execute(self, step: Step) -> str | None:
        first = self._begun_records(step)
        match step:
            case steps.Finish():
                self.finish(step, written=first is not None)
                return "finished"
            case steps.Park():
                # The reconciler may settle every call from its evidence: then go on.
                return "parked" if self.park(step).undecided else None
            case steps.DispatchAgain():
                self.tool_calls.dispatch_again(step)
            case steps.SettleUsage():
                self.model_turn.settle_usage(step)
            case steps.Stop():
                self.tool_calls.stop(step)
            case steps.HandleCall():
                return self.tool_calls.handle(step, t1=first[0] if first else None)
            case steps.WriteInputs():
                for queued in step.inputs:
                    content = UserMessage(content=queued.text)
                    entry = self.writer.message_entry(queued.input_entry_id, content)
                    self.writer.write(entries=[entry])
                    self.faults.reach("after_input_entry")
            case steps.Compact():
                self.model_turn.compact(step)
            case steps.ModelCall():
                failed = self.model_turn.ask(step, attempt=first[0] if first else None)
                if failed is not None:
                    self.finish(failed)
        return None

    def park(self, step: steps.Park) -> Reconciled:
        """Settle or park the open calls; after a settled one, read the leaf and the state again.

        The results the reconciler wrote moved the leaf, so what the loop knew is dropped."""
        done = self.tool_calls.park(step)
        if done.settled:
            self.start()
            self.view, self.begun = None, None
        return done

    def finish(self, step: steps.Finish, *, written: bool = False) -> None:
        """``written``: the record went in with the last entry (``write_facts_and_begin_next``)."""
        if not written:
            self.faults.reach("before_finish")
            record = self.writer.record(OperationFinished, outcome=step.outcome, error=step.error)
            self.writer.write(records=[record])
        error = step.error.model_dump() if step.error else None
        self.emit({"type": "operation_finished", "outcome": step.outcome, "error": error})

    def emit(self, event: dict[str, Any]) -> None:
        self.events.emit(self.session.id, {**event, "operation_id": self.operation_id})
