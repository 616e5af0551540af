"""Runs of the agent loop in the test's own thread, against the test database."""

from __future__ import annotations

from django.utils import timezone

from jaiweb.agent.events import NullSink
from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.tools import default_tools
from jaiweb.store.leases import operation_claim
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_approval_decide
from journal.recovery import fold_operation


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
