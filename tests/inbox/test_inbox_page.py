"""The recovery inbox page: who may see it, and what it shows of each parked call."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta

import pytest
from django.contrib.admin.utils import quote
from django.utils import timezone

from jaiweb.feed.services import feed_post_create
from jaiweb.render.services import render_request
from jaiweb.store.services import session_create
from journal.ids import idempotency_key
from tests.support.builders import TYPED_PANEL_ARGS, XSS, parked_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def session(alice):
    return session_create(owner=alice, title=f"episode <b>one</b> {XSS}")


@pytest.fixture
def parked(session):
    return parked_call(session)


def items(page: str) -> list[str]:
    return re.findall(r"<article[^>]*data-inbox-item[^>]*>", page)


# --- access ---------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/inbox/", "/inbox/list", "/inbox/count"])
def test_anonymous_goes_to_the_login_page(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


def test_an_anonymous_poll_sends_the_whole_page_to_the_login(client):
    response = client.get("/inbox/list", HTTP_HX_REQUEST="true")
    assert response.status_code == 401
    assert response["HX-Redirect"] == "/accounts/login/?next=/inbox/"


@pytest.mark.parametrize("url", ["/inbox/", "/inbox/list", "/inbox/count"])
def test_someone_who_is_not_staff_gets_a_bare_403(client, alice, parked, url):
    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 403
    body = response.content.decode()
    assert parked not in body and "episode" not in body and "call_1" not in body


def test_staff_see_the_page_and_an_empty_inbox_says_so(client, staff):
    client.force_login(staff)
    response = client.get("/inbox/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Nothing is waiting." in page and not items(page)
    assert 'id="inbox-list"' in page and 'data-poll-when="quiet"' in page
    assert "vendor/htmx-2.0.11.min.js" in page and "inbox/inbox.js" in page
    assert response["Cache-Control"].startswith("max-age=0")


def test_the_page_speaks_the_browsers_chinese(client, staff, session):
    client.force_login(staff)
    page = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "<title>恢复收件箱 · jaiweb</title>" in page
    assert "没有等待处理的调用。" in page and "Nothing is waiting." not in page
    parked = parked_call(session)
    page = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    (article,) = items(page)
    assert f'data-operation-id="{parked}"' in article and 'data-tool-call-id="call_1"' in article
    assert "幂等键" in page and "用同一个键重试" in page and "Retry under the same key" not in page
    assert "无：动态没有收到带这个键的帖子。" in page
    assert 'data-action="retry"' in page and 'name="reason"' in page
    assert "episode &lt;b&gt;one&lt;/b&gt;" in page and XSS not in page  # still escaped


# --- what an item shows ---------------------------------------------------------------


def test_a_parked_call_is_listed_with_everything_escaped(client, staff, parked, session):
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    [article] = items(page)
    assert f'data-operation-id="{parked}"' in article and 'data-tool-call-id="call_1"' in article
    assert XSS not in page and "<b>one</b>" not in page
    assert html.escape(XSS, quote=False) in page  # the argument, the title: text, not markup
    assert "episode &lt;b&gt;one&lt;/b&gt;" in page and "alice" in page
    assert "publish_panel" in page and "at_most_once" in page
    assert idempotency_key(parked, "call_1") in page
    assert "attempt 1" in page
    assert "waiting for an admin" in page  # the parked reason
    args = re.search(r"<pre data-args>(.*?)</pre>", page, re.S)[1]
    assert json.loads(html.unescape(args)) == TYPED_PANEL_ARGS and "\n  " in args  # pretty JSON
    for action in ("retry", "confirm", "fail"):
        assert f'data-action="{action}"' in page
    assert 'name="reason"' in page and 'name="csrfmiddlewaretoken"' in page
    assert f'hx-post="/inbox/{parked}/call_1"' in page
    assert "None: the feed received no post with this key." in page
    assert "Nothing is waiting." not in page


def test_feed_posts_under_the_key_are_offered_and_one_prefills_the_result(client, staff, parked):
    key = idempotency_key(parked, "call_1")
    now = timezone.now()
    mine = feed_post_create(image_id="img_1", caption=f"posted {XSS}", idempotency_key=key, now=now)
    other = feed_post_create(
        image_id="img_9", caption="someone else", now=now - timedelta(minutes=3)
    )
    feed_post_create(image_id="img_8", caption="long ago", now=now - timedelta(hours=2))
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert f'data-feed-post="{mine.id}"' in page and f'data-feed-post="{other.id}"' in page
    assert "long ago" not in page
    assert XSS not in page and f"posted {html.escape(XSS, quote=False)}" in page
    expected = {
        "content": f"published to the feed as {mine.id}",
        "details": {"image_id": "img_1", "post_id": mine.id},
    }
    result = re.search(r'<textarea[^>]*name="result"[^>]*>(.*?)</textarea>', page, re.S)[1]
    assert json.loads(html.unescape(result)) == expected
    picks = re.findall(r'name="pick" value="([^"]*)"', page)
    assert {json.dumps(json.loads(html.unescape(p)), sort_keys=True) for p in picks if p} == {
        json.dumps(expected, sort_keys=True),
        json.dumps(
            {
                "content": f"published to the feed as {other.id}",
                "details": {"image_id": "img_9", "post_id": other.id},
            },
            sort_keys=True,
        ),
    }


def test_two_posts_under_the_key_prefill_nothing(client, staff, parked):
    key = idempotency_key(parked, "call_1")
    for caption in ("one", "two"):
        feed_post_create(image_id="img_1", caption=caption, idempotency_key=key)
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    result = re.search(r'<textarea[^>]*name="result"[^>]*>(.*?)</textarea>', page, re.S)[1]
    assert result.strip() == ""


def test_a_render_under_the_key_is_shown_and_prefills_the_result(
    client, staff, session, alice, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    op = parked_call(session, tool="generate_image", args={"prompt": f"a cat {XSS}"})
    rendered = render_request(user=alice, key=idempotency_key(op, "call_1"), params={"p": 1})
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert 'data-render-job data-status="succeeded"' in page
    assert XSS not in page
    result = re.search(r'<textarea[^>]*name="result"[^>]*>(.*?)</textarea>', page, re.S)[1]
    details = json.loads(html.unescape(result))["details"]
    assert details["image_id"] == rendered.image_id and details["cost"] == 10


def test_a_call_the_render_service_never_saw_says_so(client, staff, session):
    parked_call(session, tool="generate_image", args={"prompt": "a cat"})
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert "no job under this key" in page


def test_an_operation_parked_as_a_whole_is_listed_without_buttons(client, staff, session):
    op = parked_call(session, dispatch=False, reason=f"the model keeps failing {XSS}")
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    [article] = items(page)
    assert f'data-operation-id="{op}"' in article and 'data-tool-call-id=""' in article
    assert "the model keeps failing &lt;script&gt;" in page and XSS not in page
    assert 'data-action="retry"' not in page and "data-whole-operation" in page
    assert f"/admin/store/operation/{quote(op)}/change/" in page


def test_the_list_fragment_and_the_count_for_polling(client, staff, parked, session):
    client.force_login(staff)
    fragment = client.get("/inbox/list", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    body = fragment.content.decode()
    assert len(items(body)) == 1 and "<html" not in body
    assert 'id="inbox-paused" hx-swap-oob="innerHTML"' in body  # clears the paused notice
    parked_call(session_create(owner=session.owner, title="second"))
    count = client.get("/inbox/count", HTTP_HX_REQUEST="true").content.decode()
    assert "2 calls waiting now" in count


def test_items_are_listed_oldest_first(client, staff, alice):
    first = parked_call(session_create(owner=alice, title="first"))
    second = parked_call(session_create(owner=alice, title="second"))
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert page.index(first) < page.index(second)


def test_someone_who_is_not_staff_gets_a_styled_403_page(client, alice):
    client.force_login(alice)
    response = client.get("/inbox/")
    assert response.status_code == 403
    body = response.content.decode()
    assert 'data-status="403"' in body and "not for you" in body
    assert 'id="account"' in body  # the site's header: a page of the studio, not a bare 403
