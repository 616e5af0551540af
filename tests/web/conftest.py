"""Fixtures for the studio's views: a session, and a run of the offline director."""

from __future__ import annotations

import pytest
from django.utils import timezone

from jaiweb.agent.events import NullSink
from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.tools import default_tools
from jaiweb.render.services import wallet_get_or_create
from jaiweb.store.leases import operation_claim
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_approval_decide, operation_park, session_create
from journal.recovery import fold_operation


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret"
    return settings.MEDIA_ROOT


@pytest.fixture
def episode(alice):
    wallet_get_or_create(user=alice)
    return session_create(owner=alice, title="Kung fu <b>pig</b>", initial_app_state=DEFAULT_STATE)


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


def park(operation_id: str, reason: str = "publish_panel may have run") -> None:
    """Park an operation as a runner would: claim its lease, then hand it to the inbox."""
    lease = operation_claim(
        owner="test-runner", now=timezone.now(), lease_seconds=60, operation_id=operation_id
    )
    operation_park(operation_id=operation_id, fencing=lease.fencing, reason=reason)
