"""SIGTERM a studio: it stops claiming, hands its runs back at a step boundary and exits
within its bound (``SHUTDOWN_SECONDS`` + start-up slack); the next studio takes the runs
over at once, not after their leases expire."""

from __future__ import annotations

import signal
import time

import pytest
from django.db import connection

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.ops.management.commands.studio import SHUTDOWN_SECONDS
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, operation_approval_decide, session_create
from journal.recovery import fold_operation
from tests.support.children import studio
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = SHUTDOWN_SECONDS + 2  # the studio's own wait, and a moment to exit
LEASE = 60  # long enough that "at once" can only mean the lease was handed back


@pytest.fixture
def env(tmp_path):
    return {"JAIWEB_MEDIA_ROOT": str(tmp_path / "media"), "JAIWEB_LEASE_SECONDS": str(LEASE)}


def sigterm(child) -> float:
    """SIGTERM, then the seconds until the process exited (it must exit by itself). What it
    wrote is read to the end before this returns: its last lines may still be in the pipes
    when it is gone."""
    started = time.monotonic()
    child.process.send_signal(signal.SIGTERM)
    code = child.process.wait(timeout=BOUND + 20)
    took = time.monotonic() - started
    child.wait_exit(timeout=10)  # drains the pipes
    assert code == 0, "\n".join(child.err[-30:])
    return took


def test_a_studio_holding_a_run_that_waits_for_approval_exits_and_the_next_takes_it(alice, env):
    session = session_create(owner=alice, title="ask", initial_app_state=DEFAULT_STATE)
    op = operation_accept(session_id=session.id, text="/draw 擂台对决").operation_id
    first = studio(connection.settings_dict, env=env)
    try:
        pending = wait_until(
            lambda: [
                c
                for c, call in fold_operation(operation_records(operation_id=op)).calls.items()
                if call.approval == "pending"
            ],
            60,
            "the approval request",
        )
        took = sigterm(first)
    finally:
        first.stop()
    assert took < BOUND, f"the studio took {took:.1f} s to exit"
    row = Operation.objects.get(pk=op)
    assert row.outcome is None and row.lease_owner is None  # nothing held by the dead one
    second = studio(connection.settings_dict, env=env)
    try:
        operation_approval_decide(
            operation_id=op, tool_call_id=pending[0], decision="approved", by="alice"
        )
        started = time.monotonic()
        wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "the run to finish")
        assert time.monotonic() - started < LEASE / 2  # at once, not after the lease
    finally:
        second.stop()
    assert Operation.objects.get(pk=op).outcome == "completed"


def test_a_studio_inside_a_step_exits_within_its_bound_and_the_next_takes_over_at_once(
    alice, env, tmp_path
):
    """A run stuck inside a tool cannot hand back: the studio exits anyway, and the next
    runner on this host sees the holder gone and takes the lease over without waiting."""
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    session = session_create(owner=alice, title="stuck", initial_app_state=state)
    op = operation_accept(session_id=session.id, text="/draw 擂台对决").operation_id
    paused = tmp_path / "paused"
    first = studio(
        connection.settings_dict,
        env={
            **env,
            "JAIWEB_PAUSE_AT": "during_tool:generate_image",
            "JAIWEB_PAUSE_FILE": str(paused),
        },
    )
    try:
        wait_until(paused.exists, 60, "the pause inside the render")
        took = sigterm(first)
    finally:
        first.stop()
    assert took < BOUND, f"the studio took {took:.1f} s to exit"
    assert any("left to the next runner" in line for line in first.out), first.out
    second = studio(connection.settings_dict, env=env)
    try:
        started = time.monotonic()
        wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "the run to finish")
        assert time.monotonic() - started < LEASE / 2
    finally:
        second.stop()
    assert Operation.objects.get(pk=op).outcome == "completed"
