"""The recovery inbox: evidence for a parked call, and retry / confirm / mark failed."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from jaiweb.agent.runner import Runner
from jaiweb.agent.tools import default_tools
from jaiweb.agent.tools.base import ToolOutput
from jaiweb.agent.tools.publish import PublishPanel
from jaiweb.commands.inbox import inbox_items, inbox_resolve
from jaiweb.feed.services import feed_post_create
from jaiweb.store.errors import InvalidEntry, OperationStateConflict, SessionParked
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create
from tests.support.builders import left_by_a_crash
from tests.support.scripted import ScriptedProvider, text

pytestmark = pytest.mark.django_db(transaction=True)


class CountingPublish(PublishPanel):
    """publish_panel without the network: counts the posts it would make."""

    posts = 0

    def run(self, ctx, args):
        CountingPublish.posts += 1
        return ToolOutput("published", details={"post_id": "post_again"})


@pytest.fixture
def admin(django_user_model):
    return django_user_model.objects.create_user("root", password="x", is_staff=True)


@pytest.fixture
def parked(alice, harness):
    harness.session = session_create(owner=alice, title="inbox")
    op = left_by_a_crash(harness.session, call="publish_panel")
    Runner().recover()
    assert Operation.objects.get(pk=op).is_parked
    CountingPublish.posts = 0
    return op


def continue_run(harness, op):
    tools = {**default_tools(), "publish_panel": CountingPublish()}
    return harness.run(ScriptedProvider(text("好的")), tools=tools, operation_id=op)


def types(op):
    return [r.type for r in operation_records(operation_id=op)]


def test_the_inbox_lists_the_call_with_what_the_feed_received(parked, harness):
    t1 = next(r for r in operation_records(operation_id=parked) if r.type == "tool_dispatched")
    feed_post_create(
        image_id="img_1", caption="第一格", idempotency_key=t1.idempotency_key, now=timezone.now()
    )
    [item] = inbox_items()
    assert (item.operation_id, item.tool_call_id, item.tool_name) == (
        parked,
        "call_1",
        "publish_panel",
    )
    assert item.idempotency_key == t1.idempotency_key and item.policy == "at_most_once"
    assert item.owner == "alice" and "publish_panel" in item.attention
    [post] = item.evidence["feed_posts_with_this_key"]
    assert post["caption"] == "第一格"
    with pytest.raises(SessionParked, match="waiting for an admin"):
        operation_accept(session_id=harness.session.id, text="再来")


def test_confirm_writes_the_result_and_the_run_goes_on(parked, harness, admin):
    inbox_resolve(
        user=admin,
        operation_id=parked,
        tool_call_id="call_1",
        resolution="confirmed",
        reason="the post is on the feed",
        result={"details": {"post_id": "post_1"}},
    )
    assert types(parked)[-1] == "tool_resolved"
    assert not Operation.objects.get(pk=parked).is_parked and inbox_items() == []
    assert continue_run(harness, parked) == "finished"
    assert CountingPublish.posts == 0  # never posted again
    result = next(
        e for e in harness.entries() if e.type == "message" and e.message.role == "tool_result"
    ).message
    assert result.details == {"post_id": "post_1"} and not result.is_error
    assert "confirmed by root" in result.content
    assert Operation.objects.get(pk=parked).outcome == "completed"


def test_retry_dispatches_again_with_the_same_key(parked, harness, admin):
    inbox_resolve(
        user=admin,
        operation_id=parked,
        tool_call_id="call_1",
        resolution="retry",
        reason="nothing arrived on the feed",
    )
    assert continue_run(harness, parked) == "finished"
    assert CountingPublish.posts == 1
    t1s = [r for r in operation_records(operation_id=parked) if r.type == "tool_dispatched"]
    assert [t.dispatch_attempt for t in t1s] == [1, 2]
    assert t1s[0].idempotency_key == t1s[1].idempotency_key
    assert types(parked)[-1] == "operation_finished"


def test_mark_failed_answers_with_an_error_and_goes_on(parked, harness, admin):
    inbox_resolve(
        user=admin,
        operation_id=parked,
        tool_call_id="call_1",
        resolution="failed",
        reason="cannot tell",
    )
    assert continue_run(harness, parked) == "finished"
    result = next(
        e for e in harness.entries() if e.type == "message" and e.message.role == "tool_result"
    ).message
    assert result.is_error and "outcome is unknown" in result.content
    assert CountingPublish.posts == 0


def test_refusals(parked, alice, admin):
    with pytest.raises(PermissionDenied):
        inbox_resolve(
            user=alice, operation_id=parked, tool_call_id="call_1", resolution="failed", reason="x"
        )
    with pytest.raises(InvalidEntry, match="reason"):
        inbox_resolve(
            user=admin, operation_id=parked, tool_call_id="call_1", resolution="failed", reason="  "
        )
    with pytest.raises(OperationStateConflict, match="not waiting"):
        inbox_resolve(
            user=admin, operation_id=parked, tool_call_id="call_9", resolution="failed", reason="x"
        )
    inbox_resolve(
        user=admin, operation_id=parked, tool_call_id="call_1", resolution="failed", reason="x"
    )
    with pytest.raises(OperationStateConflict, match="not in the inbox"):
        inbox_resolve(
            user=admin, operation_id=parked, tool_call_id="call_1", resolution="failed", reason="x"
        )
    assert types(parked).count("tool_resolved") == 1
