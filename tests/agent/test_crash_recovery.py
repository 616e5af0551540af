"""Real crashes: a `manage.py studio` child dies at a fault point; a new one recovers.

After recovery the session's tree has the shape of a crash-free run, each rendered panel
was charged once, no durable reply was asked of the model again, and an at-most-once
call that may have happened is settled from the feed post under its key, or, with none,
waits in the recovery inbox instead of running twice.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.feed.models import FeedPost
from jaiweb.render.models import LedgerEntry
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create
from tests.support.children import studio
from tests.support.stories import FINISHER, LAXATIVE, LOLLIPOP, STORY, STORY_SHAPE, entry_kinds
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

CRASH_FREE_SHAPE = STORY_SHAPE


@pytest.fixture
def env(tmp_path):
    return {"JAIWEB_MEDIA_ROOT": str(tmp_path / "media"), "JAIWEB_LEASE_SECONDS": "5"}


@pytest.fixture
def admin(django_user_model):
    return django_user_model.objects.create_user("root", password="x", is_staff=True)


@pytest.fixture
def auto_session(alice):
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    return session_create(owner=alice, title="crash", initial_app_state=state)


POINTS = [
    "after_accept",
    "after_model_attempted",
    "mid_stream",
    "after_assistant_entry",
    "after_usage",
    "after_t1:generate_image",
    "during_tool:generate_image",
    "after_tool_effect:generate_image",
    "after_t2:generate_image",
    "after_input_entry",
    "before_finish",
]

# Points where a ``model_attempted`` is durable and its reply is not, so recovery asks the
# model again under a new attempt: during the stream; after the last tool's T2, which
# commits with the next attempt (its call not made yet); before the finish, which commits
# with the final reply (so that reply's stream is lost with it).
LOST_ATTEMPT = (
    "after_model_attempted",
    "mid_stream",
    "after_t2:generate_image",
    "before_finish",
)


@pytest.mark.parametrize("point", POINTS)
def test_a_crash_at_each_point_recovers_to_the_crash_free_shape(point, auto_session, env):
    op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    if point == "after_input_entry":  # a steering input, so that point is reached
        operation_accept(session_id=auto_session.id, text="再画得热闹一点")
    first = studio(connection.settings_dict, env={**env, "JAIWEB_CRASH_AT": point})
    try:
        assert first.wait_exit(60) == 137, "\n".join(first.err[-20:])
        assert any(f"JAIWEB_CRASHED {point.split(':')[0]}" in line for line in first.err)
    finally:
        first.stop()
    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()

    assert Operation.objects.get(pk=op).outcome == "completed"
    shape = entry_kinds(auto_session)
    if point == "after_input_entry":
        # queued before the first model call, the input joins at that first step boundary
        assert shape == ["user", "user", "assistant", "tool_result:generate_image", "assistant"]
    else:
        assert shape == CRASH_FREE_SHAPE
    assert LedgerEntry.objects.filter(kind="charge").count() == 1  # one panel, one charge
    types = [r.type for r in operation_records(operation_id=op)]
    replies = shape.count("assistant")
    lost_stream = point in LOST_ATTEMPT  # no durable reply yet
    assert types.count("model_attempted") == replies + (1 if lost_stream else 0), (
        "a reply that was already durable was asked of the model again"
    )
    assert types.count("usage_settled") == replies  # every reply's usage settled once
    call_command("journal_check", stdout=open("/dev/null", "w"))  # noqa: SIM115


def approve_when_asked(op: str, timeout: float = 60) -> None:
    """Play the user: approve the pending call of ``op`` once it is asked."""
    from jaiweb.store.services import operation_approval_decide
    from journal.recovery import fold_operation

    def pending():
        calls = fold_operation(operation_records(operation_id=op)).calls
        return next((c for c, s in calls.items() if s.approval == "pending"), None)

    wait_until(lambda: pending() is not None, timeout, "the approval request")
    operation_approval_decide(
        operation_id=op, tool_call_id=pending(), decision="approved", by="alice"
    )


PUBLISH_POINTS = ["awaiting_approval", "after_t1", "during_tool", "after_tool_effect", "after_t2"]


@pytest.mark.parametrize("point", PUBLISH_POINTS)
def test_publish_panel_crashes_post_at_most_once(point, auto_session, env, admin):
    from jaiweb.commands.inbox import inbox_items, inbox_resolve

    first_op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    runner = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=first_op).outcome is not None, 60, "panel")
    finally:
        runner.stop()
    op = operation_accept(session_id=auto_session.id, text="/publish 第一格").operation_id
    crashing = studio(
        connection.settings_dict, env={**env, "JAIWEB_CRASH_AT": f"{point}:publish_panel"}
    )
    try:
        if point != "awaiting_approval":
            approve_when_asked(op)
        assert crashing.wait_exit(60) == 137, "\n".join(crashing.err[-20:])
    finally:
        crashing.stop()
    posted_before_restart = FeedPost.objects.count()
    assert posted_before_restart == (
        1 if point in ("during_tool", "after_tool_effect", "after_t2") else 0
    )
    second = studio(connection.settings_dict, env=env)
    try:
        if point == "awaiting_approval":
            approve_when_asked(op)  # asked again after the restart
        if point == "after_t1":  # nothing arrived: a person sends it again, same key
            wait_until(lambda: Operation.objects.get(pk=op).is_parked, 60, "parking")
            [item] = inbox_items()
            assert item.evidence["feed_posts_with_this_key"] == []
            inbox_resolve(
                user=admin,
                operation_id=op,
                tool_call_id=item.tool_call_id,
                resolution="retry",
                reason="nothing arrived on the feed",
            )
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert FeedPost.objects.count() == 1  # at most one post per publish_panel call
    resolved = [r for r in operation_records(operation_id=op) if r.type == "tool_resolved"]
    if point in ("during_tool", "after_tool_effect"):
        # the post was made under the call's key: recovery confirmed it from that post
        [settled] = resolved
        assert (settled.resolved_by, settled.resolution) == ("reconciler", "confirmed")
        assert settled.evidence["post_id"] == FeedPost.objects.get().id
        messages = [
            row.to_journal().message
            for row in Entry.objects.filter(session=auto_session, type="message").order_by("seq")
        ]
        result = [m for m in messages if m.role == "tool_result"][-1]
        assert result.details == {
            "post_id": FeedPost.objects.get().id,
            "image_id": FeedPost.objects.get().image_id,
        }
    else:
        assert [r.resolved_by for r in resolved] == (["admin"] if point == "after_t1" else [])
    assert entry_kinds(auto_session)[-3:] == ["assistant", "tool_result:publish_panel", "assistant"]
    call_command("journal_check", stdout=open("/dev/null", "w"))  # noqa: SIM115


def test_sigkill_while_paused_inside_the_render_charges_once(auto_session, env, tmp_path):
    op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    pause_file = tmp_path / "paused"
    first = studio(
        connection.settings_dict,
        env={
            **env,
            "JAIWEB_PAUSE_AT": "during_tool:generate_image",
            "JAIWEB_PAUSE_FILE": str(pause_file),
        },
    )
    try:
        wait_until(pause_file.exists, 60, "the pause inside the tool")
        assert any("JAIWEB_PAUSED during_tool" in line for line in first.err)
        assert LedgerEntry.objects.filter(kind="charge").count() == 1  # rendered and charged
    finally:
        first.stop()  # SIGKILL, from outside
    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()
    assert entry_kinds(auto_session) == CRASH_FREE_SHAPE
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    t1s = [
        r
        for r in operation_records(operation_id=op)
        if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    ]
    assert [t.dispatch_attempt for t in t1s] == [1, 2]  # same key, the stored panel returned


@pytest.mark.parametrize("decided_while_down", [False, True])
def test_a_restart_asks_a_pending_approval_again_unless_it_was_decided(
    decided_while_down, alice, env
):
    from jaiweb.store.services import operation_approval_decide
    from journal.recovery import fold_operation

    session = session_create(owner=alice, title="ask", initial_app_state=DEFAULT_STATE)
    op = operation_accept(session_id=session.id, text=STORY).operation_id
    first = studio(
        connection.settings_dict, env={**env, "JAIWEB_CRASH_AT": "awaiting_approval:generate_image"}
    )
    try:
        assert first.wait_exit(60) == 137
    finally:
        first.stop()

    def call_id():
        calls = fold_operation(operation_records(operation_id=op)).calls
        return next(c for c, s in calls.items() if s.approval is not None)

    if decided_while_down:
        operation_approval_decide(
            operation_id=op, tool_call_id=call_id(), decision="approved", by="alice"
        )
    second = studio(connection.settings_dict, env=env)
    try:
        if not decided_while_down:

            def asked_again():
                types = [r.type for r in operation_records(operation_id=op)]
                return types.count("approval_requested") == 2

            wait_until(asked_again, 60, "the approval asked again")
            operation_approval_decide(
                operation_id=op, tool_call_id=call_id(), decision="approved", by="alice"
            )
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()
    types = [r.type for r in operation_records(operation_id=op)]
    assert types.count("approval_requested") == (1 if decided_while_down else 2)
    assert types.count("approval_decided") == 1
    assert entry_kinds(session) == CRASH_FREE_SHAPE
    assert LedgerEntry.objects.filter(kind="charge").count() == 1


def run_here(op: str) -> None:
    """Run an operation in this process, crash-free (the parts of the story before a crash)."""
    from django.utils import timezone

    from jaiweb.agent.loop import OperationRun
    from jaiweb.agent.providers.offline import OfflineDirector
    from jaiweb.agent.tools import default_tools
    from jaiweb.store.leases import operation_claim

    lease = operation_claim(owner="test", now=timezone.now(), lease_seconds=60, operation_id=op)
    assert OperationRun(lease=lease, provider=OfflineDirector(), tools=default_tools()).run() == (
        "finished"
    )


STORY_POINTS = [
    "after_accept",
    "after_model_attempted",
    "mid_stream",
    "after_assistant_entry",
    "after_usage",
    "after_t1:generate_image",
    "during_tool:generate_image",
    "after_tool_effect:generate_image",
    "after_t2:generate_image",
    "before_finish",
]


@pytest.mark.parametrize("point", STORY_POINTS)
def test_a_crash_in_the_finishing_move_of_the_whole_story(point, auto_session, env):
    """Lollipop → the laxative side story → rewind → the finishing move, crashed at ``point``."""
    from jaiweb.agent.tools.panels import panels_on
    from jaiweb.render.models import RenderJob
    from jaiweb.store.selectors import app_state_at, branch_get
    from jaiweb.store.services import rewind_append

    run_here(operation_accept(session_id=auto_session.id, text=LOLLIPOP).operation_id)
    auto_session.refresh_from_db()
    lollipop_end = auto_session.leaf_id
    run_here(operation_accept(session_id=auto_session.id, text=LAXATIVE).operation_id)
    auto_session.refresh_from_db()
    side_story_tip = auto_session.leaf_id
    rewind_append(session_id=auto_session.id, target_id=lollipop_end)
    op = operation_accept(session_id=auto_session.id, text=FINISHER).operation_id

    first = studio(connection.settings_dict, env={**env, "JAIWEB_CRASH_AT": point})
    try:
        assert first.wait_exit(60) == 137, "\n".join(first.err[-20:])
    finally:
        first.stop()
    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()

    assert Operation.objects.get(pk=op).outcome == "completed"
    auto_session.refresh_from_db()
    branch = branch_get(session=auto_session)
    shape = entry_kinds(auto_session)
    assert shape[-5:] == [
        "branch",
        "user",
        "assistant",
        "tool_result:generate_image",
        "assistant",
    ]  # the finishing move, as in a crash-free run
    panels = panels_on(branch)
    assert len(panels) == 2
    final = RenderJob.objects.get(result__image_id=panels[-1]["image_id"])
    assert final.params["characters"]["猪猪侠"]["skill"] == "降龙十巴掌"
    assert "拉肚子" not in str(final.params)  # the side story's state never leaks
    assert "拉肚子" in str(app_state_at(session=auto_session, leaf_id=side_story_tip))
    assert LedgerEntry.objects.filter(kind="charge").count() == 3  # three panels, three charges
    types = [r.type for r in operation_records(operation_id=op)]
    lost_stream = point in LOST_ATTEMPT
    assert types.count("model_attempted") == 2 + (1 if lost_stream else 0)
    call_command("journal_check", stdout=open("/dev/null", "w"))  # noqa: SIM115
