"""POST /sessions/<id>/approvals: approve or deny a paid tool call the run is waiting on."""

from __future__ import annotations

import threading

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.selectors import operation_records
from journal.recovery import fold_operation
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

HX = {"HTTP_HX_REQUEST": "true"}


def _wait_for_request(op: str, timeout: float = 10) -> str:
    def pending() -> str | None:
        calls = fold_operation(operation_records(operation_id=op)).calls
        return next((c for c, call in calls.items() if call.approval == "pending"), None)

    return wait_until(pending, timeout, "the run to ask for an approval")


@pytest.mark.parametrize(
    ("decision", "charged", "mode"),
    [("approve", 10, "ask"), ("approve_auto", 10, "auto"), ("deny", 0, "ask")],
)
def test_a_decision_lets_the_run_go_on(client, alice, episode, decision, charged, mode):
    op = prompt_submit(session=episode, user=alice, text="/draw a pig").operation_id
    run = threading.Thread(target=_run_waiting, daemon=True)
    run.start()
    call_id = _wait_for_request(op)
    client.force_login(alice)
    page = client.get(f"/sessions/{episode.id}/").content.decode()
    assert 'data-action="approve"' in page and "It costs 10 credits." in page
    r = client.post(
        f"/sessions/{episode.id}/approvals",
        {"operation_id": op, "tool_call_id": call_id, "decision": decision},
        **HX,
    )
    assert r.status_code == 200
    run.join(20)
    from jaiweb.render.selectors import wallet_balance
    from jaiweb.store.selectors import app_state_at

    assert wallet_balance(user=alice) == 100 - charged
    episode.refresh_from_db()
    assert app_state_at(session=episode)["permission_mode"] == mode
    again = client.post(
        f"/sessions/{episode.id}/approvals",
        {"operation_id": op, "tool_call_id": call_id, "decision": "approve"},
        **HX,
    )
    assert again.status_code == 409


def _run_waiting() -> None:
    """The loop waiting for the page's decision (polls the journal like a real runner).

    It holds its worker for the decision as long as the test may take to send it (a real
    runner hands the run back after a moment and the decision wakes another runner; this
    test has none, and a page slower than the default hold left the run undecided)."""
    import time

    from django.db import connection
    from django.utils import timezone

    from jaiweb.agent.events import NullSink
    from jaiweb.agent.loop import LoopConfig, OperationRun
    from jaiweb.agent.providers.offline import OfflineDirector
    from jaiweb.agent.tools import default_tools
    from jaiweb.store.leases import operation_claim

    try:
        lease = operation_claim(owner="test-runner", now=timezone.now(), lease_seconds=60)
        OperationRun(
            lease=lease,
            provider=OfflineDirector(),
            tools=default_tools(),
            events=NullSink(),
            # Held until the page decides: no runner here takes a run handed back.
            config=LoopConfig(
                context_budget=100_000,
                lease_seconds=60,
                approval_poll_seconds=0.05,
                approval_hold_seconds=30,
            ),
            sleep=time.sleep,
        ).run()
    finally:
        connection.close()


def test_bad_decisions_are_422_and_unknown_operations_404(client, alice, episode):
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/approvals", {"decision": "maybe"}, **HX)
    assert r.status_code == 422
    r = client.post(
        f"/sessions/{episode.id}/approvals",
        {"operation_id": "op_nope", "tool_call_id": "c", "decision": "approve"},
        **HX,
    )
    assert r.status_code == 404


def test_someone_elses_operation_is_404(client, alice, bob, episode):
    op = prompt_submit(session=episode, user=alice, text="/draw a pig").operation_id
    client.force_login(bob)
    r = client.post(
        f"/sessions/{episode.id}/approvals",
        {"operation_id": op, "tool_call_id": "call_1", "decision": "approve"},
        **HX,
    )
    assert r.status_code == 404
