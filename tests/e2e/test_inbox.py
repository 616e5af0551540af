"""A crash after a publish waits for an admin; the admin resolves it from /inbox/.

The studio is started with ``JAIWEB_CRASH_AT=after_tool_effect:publish_panel``: the post
reaches the feed, then the process dies (exit 137) before the result is written. The
restarted studio (without the variable) cannot know whether the at-most-once call ran, so
it parks the operation; the user's page says so, and a staff user confirms it from the
inbox, after which the user's run finishes.
"""

from __future__ import annotations

import pytest

from tests.e2e.helpers import (
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


def test_a_crash_after_publishing_waits_for_an_admin_who_confirms_it(own_studio, new_page):
    from jaiweb.feed.models import FeedPost
    from jaiweb.store.models import Entry, Operation

    own_studio.start({"JAIWEB_CRASH_AT": "after_tool_effect:publish_panel"})
    base = own_studio.url
    user = new_page()
    session_id = open_new_session(user, base, "to the feed")
    run_with_approval(user, session_id, "Draw a panel: the hero bows to the crowd")
    panels(user).first.wait_for()

    send_prompt(user, "/publish The hero takes a bow")
    approve_next(user)  # publishing is public: always asked
    assert own_studio.wait_exit(60) == 137, own_studio.output()
    [post] = FeedPost.objects.all()  # the post was made before the crash
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
    shot(admin, "inbox")

    # the evidence shows the post the feed received under this call's key: confirm with it
    evidence = item.locator(f'[data-feed-post="{post.id}"] input[type="radio"]')
    if evidence.count():
        evidence.check()
    item.locator('textarea[name="reason"]').fill("the post is on the feed: it was made")
    item.locator('[data-action="confirm"]').click()

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
    assert FeedPost.objects.count() == 1  # confirmed, never posted twice
    results = [
        row.to_journal().message
        for row in Entry.objects.filter(session_id=session_id).order_by("seq")
        if row.to_journal().type == "message" and row.to_journal().message.role == "tool_result"
    ]
    assert results[-1].tool_name == "publish_panel"
    assert results[-1].details.get("post_id") == post.id
    admin.reload()
    assert admin.locator(f'[data-inbox-item][data-operation-id="{op.id}"]').count() == 0
