"""/operations/{id}: state, verdict and records; /operations/{id}/approvals."""

from __future__ import annotations

import pytest

from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from journal.records import record_to_dict
from tests.api.conftest import await_approval, park, run_to_the_end, start_run

pytestmark = pytest.mark.django_db


def test_a_finished_operation(as_alice, session):
    op = run_to_the_end(session)
    body = as_alice.get(f"/operations/{op}").json()
    assert (body["id"], body["session_id"]) == (op, session.id)
    assert (body["state"], body["outcome"]) == ("finished", "completed")
    assert body["finished_at"] is not None and body["parked_reason"] is None
    assert body["records"] == [record_to_dict(r) for r in operation_records(operation_id=op)]
    assert body["records"][-1]["type"] == "operation_finished"
    assert body["verdict"]["status"] == "terminal"


def test_a_running_and_a_parked_operation(as_alice, alice, session):
    op = start_run(session)
    body = as_alice.get(f"/operations/{op}").json()
    assert (body["state"], body["outcome"], body["verdict"]["status"]) == ("running", None, "ready")
    parked = park(session_create(owner=alice, title="parked"))
    body = as_alice.get(f"/operations/{parked}").json()
    assert (body["state"], body["parked_reason"]) == ("parked", "the log needs a look")


def test_approve_a_call_awaiting_a_decision(as_alice, session):
    op = await_approval(session)
    response = as_alice.post(
        f"/operations/{op}/approvals",
        {"tool_call_id": "call_1", "decision": "approve", "auto_from_now": True},
    )
    assert response.status_code == 200
    assert response.json() == {"operation_id": op, "tool_call_id": "call_1", "decision": "approved"}
    decided = operation_records(operation_id=op)[-1]
    assert (decided.type, decided.decision, decided.auto_from_now) == (
        "approval_decided",
        "approved",
        True,
    )
    assert decided.by == f"user:{session.owner.pk}"


def test_deny(as_alice, session):
    op = await_approval(session)
    response = as_alice.post(
        f"/operations/{op}/approvals", {"tool_call_id": "call_1", "decision": "deny"}
    )
    assert response.status_code == 200 and response.json()["decision"] == "denied"
    assert operation_records(operation_id=op)[-1].decision == "denied"


def test_a_call_not_awaiting_a_decision_is_409(as_alice, session):
    op = await_approval(session)
    body = {"tool_call_id": "call_1", "decision": "approved"}
    assert as_alice.post(f"/operations/{op}/approvals", body).status_code == 200
    again = as_alice.post(f"/operations/{op}/approvals", body)
    assert again.status_code == 409 and again.json()["code"] == "conflict"
    other = as_alice.post(f"/operations/{op}/approvals", {**body, "tool_call_id": "call_9"})
    assert other.status_code == 409


def test_approving_on_a_finished_operation_is_409(as_alice, session):
    op = run_to_the_end(session)
    response = as_alice.post(
        f"/operations/{op}/approvals", {"tool_call_id": "call_1", "decision": "approve"}
    )
    assert response.status_code == 409


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"decision": "approve"}, "tool_call_id"),
        ({"tool_call_id": "call_1"}, "decision"),
        ({"tool_call_id": "call_1", "decision": "maybe"}, "decision"),
        ({"tool_call_id": "call_1", "decision": "deny", "auto_from_now": "often"}, "auto_from_now"),
    ],
)
def test_bad_approvals_are_422_naming_the_field(as_alice, session, payload, field):
    op = await_approval(session)
    response = as_alice.post(f"/operations/{op}/approvals", payload)
    assert response.status_code == 422 and response.json()["field"] == field
    assert operation_records(operation_id=op)[-1].type == "approval_requested"


def test_staff_read_but_do_not_decide(as_staff, session):
    op = await_approval(session)
    assert as_staff.get(f"/operations/{op}").status_code == 200
    response = as_staff.post(
        f"/operations/{op}/approvals", {"tool_call_id": "call_1", "decision": "approve"}
    )
    assert response.status_code == 404
