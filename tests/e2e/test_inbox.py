"""A crash around a publish: what evidence decides settles itself, the rest waits for an admin.

With ``JAIWEB_CRASH_AT=after_t1:publish_panel`` the studio dies (exit 137) after the call's
T1, before anything is posted. The restarted studio (without the variable) cannot know
whether the at-most-once call ran and the feed has no post under its key, so it parks the
operation; the user's page says so, and a staff user, seeing nothing arrived, sends it again
from /inbox/, after which the user's run finishes with one post.

With ``after_tool_effect:publish_panel`` the post reaches the feed before the crash. The
restarted studio finds it under the call's key and settles the call itself: the run finishes
without anyone, and the inbox lists it under "Settled automatically" with that post.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    approve_next,
    branch_entry_ids,
    login,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    shot,
    unfinished_operations,
    unique,
    user_for_the_studio,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WAITING = "waiting for an admin"


def test_a_crash_before_publishing_waits_for_an_admin_who_retries_it(own_studio, new_page):
    from jaiweb.feed.models import FeedPost
    from jaiweb.store.models import Entry, Operation

    own_studio.start({"JAIWEB_CRASH_AT": "after_t1:publish_panel"})
    base = own_studio.url
    user = new_page()
    session_id = open_new_session(user, base, "to the feed")
    run_with_approval(user, session_id, "Draw a panel: the hero bows to the crowd")
    panels(user).first.wait_for()

    send_prompt(user, "/publish The hero takes a bow")
    approve_next(user)  # publishing is public: always asked
    assert own_studio.wait_exit(60) == 137, own_studio.output()
    assert FeedPost.objects.count() == 0  # the crash came before the post
    [op] = unfinished_operations(session_id)
    # the page sees its socket go away
    wait_until(
        lambda: user.evaluate("document.body.dataset.ws") != "open", 15, "data-ws to leave 'open'"
    )

    own_studio.restart()  # the same database and port, without the crash variable
    wait_until(lambda: Operation.objects.get(pk=op.id).is_parked, 60, "the run to be parked")
    user.reload()
    wait_ws_open(user)
    user.locator("#session-notice").filter(has_text=WAITING).wait_for()

    staff_name = unique("staff_")
    user_for_the_studio(staff_name, "staff-Pass-1", is_staff=True)
    admin = new_page()
    login(admin, base, staff_name, "staff-Pass-1")
    admin.goto(f"{base}/inbox/")
    item = admin.locator(f'[data-inbox-item][data-operation-id="{op.id}"]')
    item.wait_for()
    assert item.get_attribute("data-tool-call-id")
    for action in ("retry", "confirm", "fail"):
        assert item.locator(f'[data-action="{action}"]').count() == 1, action
    assert item.locator('[data-feed-posts="none"]').count() == 1  # nothing under its key
    shot(admin, "inbox")

    item.locator('textarea[name="reason"]').fill("nothing arrived on the feed: send it again")
    item.locator('[data-action="retry"]').click()

    # the user's page follows live: the notice goes, the run finishes with the result
    wait_run_finished(session_id, 60)
    assert Operation.objects.get(pk=op.id).outcome == "completed"
    wait_until(
        lambda: WAITING not in user.locator("#session-notice").inner_text(),
        20,
        "the 'waiting for an admin' notice to go",
    )
    wait_tree_has(user, branch_entry_ids(session_id))
    published = user.locator('#tree .node [data-badge="published"]')  # the turn's badge
    assert published.count() == 1
    [post] = FeedPost.objects.all()  # sent once, after the retry
    results = [
        row.to_journal().message
        for row in Entry.objects.filter(session_id=session_id).order_by("seq")
        if row.to_journal().type == "message" and row.to_journal().message.role == "tool_result"
    ]
    assert results[-1].tool_name == "publish_panel"
    assert results[-1].details.get("post_id") == post.id
    admin.reload()
    assert admin.locator(f'[data-inbox-item][data-operation-id="{op.id}"]').count() == 0


def test_a_crash_after_publishing_settles_itself_from_the_post(own_studio, new_page):
    from jaiweb.feed.models import FeedPost
    from jaiweb.store.models import Operation
    from jaiweb.store.selectors import operation_records

    own_studio.start({"JAIWEB_CRASH_AT": "after_tool_effect:publish_panel"})
    base = own_studio.url
    user = new_page()
    session_id = open_new_session(user, base, "to the feed, settled")
    run_with_approval(user, session_id, "Draw a panel: the hero bows to the crowd")
    panels(user).first.wait_for()

    send_prompt(user, "/publish The hero takes a bow")
    approve_next(user)
    assert own_studio.wait_exit(60) == 137, own_studio.output()
    [post] = FeedPost.objects.all()  # the post was made before the crash
    [op] = unfinished_operations(session_id)

    own_studio.restart()
    wait_run_finished(session_id, 60)  # no one had to decide anything
    assert Operation.objects.get(pk=op.id).outcome == "completed"
    assert FeedPost.objects.count() == 1  # never posted twice
    [resolved] = [r for r in operation_records(operation_id=op.id) if r.type == "tool_resolved"]
    assert resolved.resolved_by == "reconciler" and resolved.evidence["post_id"] == post.id
    user.reload()
    wait_ws_open(user)
    assert WAITING not in user.locator("#session-notice").inner_text()

    staff_name = unique("staff_")
    user_for_the_studio(staff_name, "staff-Pass-1", is_staff=True)
    admin = new_page()
    login(admin, base, staff_name, "staff-Pass-1")
    admin.goto(f"{base}/inbox/")
    assert admin.locator(f'[data-inbox-item][data-operation-id="{op.id}"]').count() == 0
    settled = admin.locator(f'[data-settled-item][data-operation-id="{op.id}"]')
    settled.wait_for()
    assert settled.get_attribute("data-resolution") == "confirmed"
    assert settled.locator('[data-evidence-field="post_id"]').inner_text() == post.id
