"""The inbox page's "Settled automatically": what recovery settled itself, with its evidence."""

from __future__ import annotations

import contextlib
import html
import re
from dataclasses import dataclass

import pytest
from django.utils import timezone

from jaiweb.agent.runner import Runner
from jaiweb.feed.services import feed_post_create
from jaiweb.render.errors import RenderFailed
from jaiweb.render.services import render_request
from jaiweb.store.services import session_create
from journal.ids import idempotency_key
from tests.support.builders import PANEL_ARGS, XSS, operation_stopped_at

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def session(alice):
    return session_create(owner=alice, title=f"episode <b>two</b> {XSS}")


@dataclass(frozen=True)
class Picture:
    data: bytes = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    content_type: str = "image/png"
    extension: str = "png"


class Backend:
    """An at-most-once backend that draws, or fails with what a server might say."""

    name = "openai"
    policy = "at_most_once"

    def __init__(self, fail: str | None = None):
        self.fail = fail

    def render(self, params, **_):
        if self.fail:
            raise RuntimeError(self.fail)
        return Picture()


def image_call(session, alice, backend) -> str:
    """An open at-most-once generate_image call whose render under its key ended."""
    args = {"prompt": "猪猪侠"}
    op = operation_stopped_at(
        session, "dispatched", tool="generate_image", args=args, policy="at_most_once"
    )
    key = idempotency_key(op, "call_1")
    with contextlib.suppress(RenderFailed):  # a failed render is stored as such
        render_request(user=alice, key=key, params={**args, "characters": {}}, renderer=backend)
    return op


def settled_articles(page: str) -> list[str]:
    return re.findall(r"<article[^>]*data-settled-item[^>]*>.*?</article>", page, re.S)


def section(page: str) -> str:
    return re.search(r'<section id="inbox-settled".*?</section>', page, re.S)[0]


def test_nothing_settled_says_so(client, staff):
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert "Settled automatically" in page
    assert "Nothing was settled automatically yet." in section(page)


def test_the_section_speaks_chinese(client, staff, session, alice):
    client.force_login(staff)
    page = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "已自动解决" in page and "还没有自动解决的调用。" in page
    image_call(session, alice, Backend())
    Runner().recover()
    page = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    [article] = settled_articles(page)
    assert "已确认" in article and "渲染服务在这个键下的任务" in article
    assert "Settled automatically" not in page


def test_each_settled_call_is_listed_with_its_evidence_escaped(client, staff, session, alice):
    confirmed = image_call(session, alice, Backend())
    Runner().recover()
    other = session_create(owner=alice, title="publish")
    published = operation_stopped_at(other, "dispatched", tool="publish_panel", args=PANEL_ARGS)
    post = feed_post_create(
        image_id="img_1",
        caption="第一格",
        session_id=other.id,
        idempotency_key=idempotency_key(published, "call_1"),
        now=timezone.now(),
    )
    Runner().recover()

    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert not re.search(r"data-inbox-item", section(page))  # not a parked item
    assert "Nothing is waiting." in page  # the parked list is empty
    newest, oldest = settled_articles(page)
    assert f'data-operation-id="{published}"' in newest and 'data-resolution="confirmed"' in newest
    assert 'data-evidence-kind="feed_post"' in newest
    assert f'<code data-evidence-field="post_id">{post.id}</code>' in newest
    assert "the feed's post with the key" in newest

    assert f'data-operation-id="{confirmed}"' in oldest and 'data-tool-call-id="call_1"' in oldest
    assert "<code data-tool-name>generate_image</code>" in oldest
    key = idempotency_key(confirmed, "call_1")
    assert f'<code data-evidence-field="idempotency_key">{key}</code>' in oldest
    assert '<code data-evidence-field="charged">10</code>' in oldest
    [image_id] = re.findall(r'data-evidence-field="image_id">(img_\w+)<', oldest)
    assert f'href="/panels/{image_id}" data-settled-panel' in oldest
    assert "episode &lt;b&gt;two&lt;/b&gt;" in oldest and "alice" in oldest
    assert XSS not in page


def test_what_a_failed_render_said_is_shown_as_text(client, staff, session, alice):
    op = image_call(session, alice, Backend(fail=f"the server said {XSS}"))
    Runner().recover()
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    [article] = settled_articles(page)
    assert f'data-operation-id="{op}"' in article and 'data-resolution="failed"' in article
    assert XSS not in page
    assert html.escape(XSS) in article  # in the reason and the evidence: text, not markup
    assert "data-settled-panel" not in article  # a failed render made no image


def test_evidence_naming_no_image_id_gets_no_link():
    """Evidence read from an imported file may say anything: the page still renders it."""
    from django.template.loader import render_to_string

    from jaiweb.commands.inbox import SettledItem
    from jaiweb.inbox.views import _settled_card

    item = SettledItem(
        operation_id="op_1",
        session_id="s_1",
        session_title="t",
        owner="alice",
        tool_call_id="call_1",
        tool_name="generate_image",
        resolution="confirmed",
        reason="seen",
        evidence={"kind": "render_job", "image_id": "a/../b", "charged": 10},
        settled_at=timezone.now(),
    )
    card = _settled_card(item)
    assert card.image_id == "" and ("image_id", "a/../b") in card.rows
    page = render_to_string("inbox/settled.html", {"settled": [card]})
    assert "a/../b" in page and "data-settled-panel" not in page


def test_only_staff_see_it(client, alice, session):
    image_call(session, alice, Backend())
    Runner().recover()
    client.force_login(alice)
    response = client.get("/inbox/")
    assert response.status_code == 403 and b"Settled" not in response.content
