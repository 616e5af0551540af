"""A run waiting for a person holds no worker: eight undecided approvals do not stall a
ninth session, and a decision (or a stop) wakes a runner that finishes the run."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import approval_decide, prompt_submit, session_stop
from jaiweb.render.services import credits_grant, wallet_get_or_create
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from journal.recovery import fold_operation
from tests.support.runs import runner_running
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runner():
    with runner_running(workers=4) as running:
        yield running


def draw_and_leave_undecided(user, n: int) -> list[str]:
    wallet_get_or_create(user=user)
    credits_grant(user=user, amount=1000)
    ops = []
    for i in range(n):
        session = session_create(owner=user, title=f"wait {i}", initial_app_state=DEFAULT_STATE)
        ops.append(prompt_submit(session=session, user=user, text=f"/draw 第{i}格").operation_id)
    return ops


def waiting(op: str) -> bool:
    return Operation.objects.get(pk=op).waiting_since is not None


def test_eight_undecided_approvals_do_not_hold_back_another_users_prompt(alice, runner):
    bob = get_user_model().objects.create_user("bob", password="bob-pass-1")
    ops = draw_and_leave_undecided(bob, 8)
    wait_until(
        lambda: all(waiting(op) for op in ops), 30, "the eight runs to wait, holding nothing"
    )
    # Not one of the runner's four workers is still on them: a run that waits holds none
    # (were they kept, even for a while, this would be the wait to see it, not alice's).
    wait_until(lambda: runner._in_hand == 0, 30, "the workers to let the waiting runs go")
    session = session_create(owner=alice, title="meanwhile")
    op = prompt_submit(session=session, user=alice, text="/say 你好").operation_id
    wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "alice's run to finish")
    assert Operation.objects.get(pk=op).outcome == "completed"
    for waited in ops:  # still waiting, and no claims spent on them meanwhile
        row = Operation.objects.get(pk=waited)
        assert row.outcome is None and row.lease_owner is None and row.attempts == 0


def test_a_decision_wakes_a_runner_that_finishes_the_run(alice, runner):
    (op,) = draw_and_leave_undecided(alice, 1)
    wait_until(lambda: waiting(op), 30, "the run to wait")
    call_id = next(
        c
        for c, call in fold_operation(operation_records(operation_id=op)).calls.items()
        if call.approval == "pending"
    )
    approval_decide(
        operation=Operation.objects.get(pk=op),
        tool_call_id=call_id,
        decision="approved",
        user=alice,
    )
    assert not waiting(op)  # cleared in the decision's own transaction
    wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "the run to finish")
    assert Operation.objects.get(pk=op).outcome == "completed"
    types = [r.type for r in operation_records(operation_id=op)]
    assert types.count("approval_requested") == 1 and "tool_dispatched" in types


def test_a_stop_wakes_a_runner_that_ends_the_run_aborted(alice, runner):
    (op,) = draw_and_leave_undecided(alice, 1)
    wait_until(lambda: waiting(op), 30, "the run to wait")
    session_stop(session=Operation.objects.get(pk=op).session, user=alice)
    wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "the run to end")
    assert Operation.objects.get(pk=op).outcome == "aborted"
