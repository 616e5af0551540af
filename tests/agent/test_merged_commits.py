"""The writes the loop merged into one transaction come apart at no crash.

Each pair used to be two commits: a reply (or a tool's result) and the next step's first
record (the next call's T1, the next ``model_attempted``, the finish). Here the process
dies inside the merged transaction, after the first half's statements ran and before the
second half's: nothing of it may be left, recovery must decide from the state before it
as it always did, and the recovered run must end with the crash-free shape, one charge,
each reply asked of the model once it was durable, and a clean ``journal_check``.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.utils import timezone

from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.tools import default_tools
from jaiweb.render.models import LedgerEntry
from jaiweb.render.services import credits_grant
from jaiweb.store import services
from jaiweb.store.leases import Lease, lease_release, operation_claim
from jaiweb.store.models import Entry, Operation, OperationRecord
from jaiweb.store.selectors import operation_records, operation_verdict
from jaiweb.store.services import operation_accept, session_create
from tests.support.stories import STORY, STORY_SHAPE

pytestmark = pytest.mark.django_db(transaction=True)

SHAPE = STORY_SHAPE


class Died(BaseException):
    """The process ends here (BaseException: nothing in the loop may handle it)."""


# (the merged write: its entries' kinds, its records, the records committed with it),
# and what recovery must find from the state before it.
MERGED = {
    "reply + first T1": (
        ["assistant"],
        ["usage_settled"],
        ["tool_dispatched"],
        "provider_interrupted",
    ),
    "T2 + next T1": (
        ["app_state", "tool_result:set_character_state"],
        [],
        ["tool_dispatched"],
        "indeterminate_tool",
    ),
    "T2 + model_attempted": (
        ["tool_result:generate_image"],
        [],
        ["model_attempted"],
        "indeterminate_tool",
    ),
    "final reply + finish": (
        ["assistant"],
        ["usage_settled"],
        ["operation_finished"],
        "provider_interrupted",
    ),
}


def kind(entry) -> str:
    if entry.type != "message":
        return entry.type
    m = entry.message
    return f"tool_result:{m.tool_name}" if m.role == "tool_result" else m.role


def kinds(session) -> list[str]:
    return [kind(row.to_journal()) for row in Entry.objects.filter(session=session).order_by("seq")]


def run(op_id: str) -> str:
    config = LoopConfig(context_budget=100_000, lease_seconds=60)
    lease = operation_claim(owner="test-runner", now=timezone.now(), lease_seconds=60)
    assert lease is not None and lease.operation_id == op_id
    return OperationRun(
        lease=lease, provider=OfflineDirector(), tools=default_tools(), config=config
    ).run()


@pytest.mark.parametrize("merged", list(MERGED))
def test_a_crash_inside_a_merged_write_leaves_neither_half(merged, alice, monkeypatch, media):
    entry_kinds, records, then, verdict = MERGED[merged]
    credits_grant(user=alice, amount=100)
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    session = session_create(owner=alice, title="merged", initial_app_state=state)
    op = operation_accept(session_id=session.id, text=STORY).operation_id

    real_run_append, real_append_records = services.run_append, services.append_records
    seen = {"write": False, "died": False, "before": (0, 0)}

    def counts() -> tuple[int, int]:
        return (
            Entry.objects.filter(session=session).count(),
            OperationRecord.objects.filter(operation_id=op).count(),
        )

    def run_append(**kwargs):
        seen["write"] = not seen["died"] and (
            [kind(e) for e in kwargs.get("entries", ())] == entry_kinds
            and [r.type for r in kwargs.get("records", ())] == records
            and [r.type for r in kwargs.get("then", ())] == then
        )
        if seen["write"]:
            seen["before"] = counts()
        return real_run_append(**kwargs)

    def append_records(operation_id, recs, **kwargs):
        if seen["write"] and then[0] in [r.type for r in recs]:
            seen["died"], seen["write"] = True, False
            raise Died(merged)  # the first half's statements ran in this transaction
        return real_append_records(operation_id, recs, **kwargs)

    monkeypatch.setattr("jaiweb.agent.writer.run_append", run_append)
    monkeypatch.setattr(services, "append_records", append_records)
    with pytest.raises(Died):
        run(op)
    assert seen["died"], f"the run never made the merged write {merged!r}"
    monkeypatch.undo()

    assert counts() == seen["before"], "half of a merged write was left behind"
    operation = Operation.objects.get(pk=op)
    assert operation.outcome is None
    assert operation_verdict(operation=operation).status == verdict
    lease_release(
        lease=Lease(op, operation.lease_owner, operation.fencing, operation.lease_expires_at)
    )

    assert run(op) == "finished"  # a runner goes on from the state before the merged write
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert kinds(session) == SHAPE
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    types = [r.type for r in operation_records(operation_id=op)]
    lost = 1 if verdict == "provider_interrupted" else 0  # a stream whose reply was not durable
    assert types.count("model_attempted") == SHAPE.count("assistant") + lost
    assert types.count("usage_settled") == SHAPE.count("assistant")
    assert types.count("operation_finished") == 1
    call_command("journal_check", stdout=open("/dev/null", "w"))  # noqa: SIM115
