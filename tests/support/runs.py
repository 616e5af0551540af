"""Runs of the agent loop in the test's own thread, against the test database: the
``Harness`` (accept, claim, run, read back), the next accepted operation run to its end with
the offline director, a ``sleep`` for the loop that answers approvals as a user would, and
a runner claiming in a thread of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.utils import timezone

from jaiweb.agent.events import NullSink
from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.runner import Runner, RunnerConfig
from jaiweb.agent.tools import default_tools
from jaiweb.store.leases import operation_claim
from jaiweb.store.models import Entry
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, operation_approval_decide
from journal.recovery import fold_operation
from tests.support.sinks import RecordingSink


def run_pending(*, events=None, decision: str = "approved") -> str | None:
    """Claim the next accepted operation and run it to its end with the offline director.

    An approval it waits for is decided at once (``decision``), as a user would.
    """
    lease = operation_claim(owner="test-runner", now=timezone.now(), lease_seconds=60)
    if lease is None:
        return None

    def decide(_seconds: float) -> None:
        log = fold_operation(operation_records(operation_id=lease.operation_id))
        for call_id, call in log.calls.items():
            if call.approval == "pending":
                operation_approval_decide(
                    operation_id=lease.operation_id,
                    tool_call_id=call_id,
                    decision=decision,
                    by="test",
                )

    return OperationRun(
        lease=lease,
        provider=OfflineDirector(),
        tools=default_tools(),
        events=events or NullSink(),
        config=LoopConfig(context_budget=100_000, lease_seconds=60),
        sleep=decide,
    ).run()


class Harness:
    """Accept a prompt, claim it, run the loop; then read the journals back."""

    def __init__(self, session):
        self.session = session
        self.events = RecordingSink()

    def prompt(self, text: str) -> str:
        return operation_accept(session_id=self.session.id, text=text).operation_id

    def run(
        self, provider, *, sleep=lambda s: None, tools=None, config=None, operation_id=None
    ) -> str:
        config = config or LoopConfig(context_budget=100_000, lease_seconds=60)
        lease = operation_claim(
            owner="test-runner",
            now=timezone.now(),
            lease_seconds=config.lease_seconds,
            operation_id=operation_id,
        )
        assert lease is not None, "nothing to claim"
        return OperationRun(
            lease=lease,
            provider=provider,
            tools=tools or default_tools(),
            events=self.events,
            config=config,
            sleep=sleep,
        ).run()

    def records(self, operation_id: str) -> list:
        return operation_records(operation_id=operation_id)

    def record_types(self, operation_id: str) -> list[str]:
        return [r.type for r in self.records(operation_id)]

    def entries(self) -> list:
        return [r.to_journal() for r in Entry.objects.filter(session=self.session).order_by("seq")]

    def entry_kinds(self) -> list[str]:
        """user / assistant / tool_result:<tool> / app_state / compaction / branch."""
        out = []
        for e in self.entries():
            if e.type == "message":
                m = e.message
                out.append(f"tool_result:{m.tool_name}" if m.role == "tool_result" else m.role)
            else:
                out.append(e.type)
        return out


def decide_when_asked(op_id: str, *decisions: tuple[str, bool]):
    """A ``sleep`` for the loop that answers each approval request like a user would."""
    pending = list(decisions)

    def sleep(_seconds):
        log = fold_operation(operation_records(operation_id=op_id))
        for call_id, call in log.calls.items():
            if call.approval == "pending" and pending:
                decision, auto = pending.pop(0)
                operation_approval_decide(
                    operation_id=op_id,
                    tool_call_id=call_id,
                    decision=decision,
                    by="alice",
                    auto_from_now=auto,
                )
                return

    return sleep


@contextmanager
def runner_running(*, workers: int) -> Iterator[Runner]:
    """A ``Runner`` claiming and running in a thread of its own (as ``runagents`` does),
    polling often; stopped and joined on the way out."""
    runner = Runner(config=RunnerConfig(workers=workers, poll_seconds=0.05))
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_until, args=(stop,), daemon=True)
    thread.start()
    try:
        yield runner
    finally:
        stop.set()
        thread.join(timeout=30)
