"""The reconciler: an at-most-once call left open by a crash settles itself where the render
service or the feed recorded what happened under its key; the rest waits for a person.

The operations are "left by a crash" through the real store (tests/support/builders.py);
generate_image is made at most once by its T1's policy, as an OpenAI or AUTOMATIC1111
backend declares it. The render under the call's key is the render service's own
(``render_request``), drawn by a stand-in backend.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.utils import timezone

from jaiweb.agent.runner import Runner
from jaiweb.agent.tools import default_tools
from jaiweb.agent.tools.base import ToolOutput
from jaiweb.agent.tools.image import GenerateImage
from jaiweb.agent.tools.publish import PublishPanel
from jaiweb.commands.inbox import inbox_items
from jaiweb.feed.services import feed_post_create
from jaiweb.render.errors import RenderFailed
from jaiweb.render.models import LedgerEntry, RenderJob
from jaiweb.render.services import render_request
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from journal.ids import idempotency_key
from tests.support.builders import PANEL_ARGS, operation_stopped_at
from tests.support.scripted import ScriptedProvider, text
from tests.support.threads import orm_thread

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = "猪猪侠吃下超级棒棒糖"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@dataclass(frozen=True)
class Picture:
    data: bytes
    content_type: str = "image/png"
    extension: str = "png"


class AtMostOnceBackend:
    """A backend that cannot be asked afterwards whether it drew (like OpenAI Images): it
    counts its renders, and may hold one until ``release`` is set or fail it."""

    name = "openai"
    policy = "at_most_once"

    def __init__(self, *, hold: bool = False, fail: bool = False):
        self.renders = 0
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.fail = fail

    def render(self, params, **_):
        self.renders += 1
        self.started.set()
        assert self.release.wait(30), "the test never released the render"
        if self.fail:
            raise RuntimeError("the image server answered 500")
        return Picture(PNG)


class CountingImage(GenerateImage):
    """generate_image that must never run again: the reconciler settles it."""

    runs = 0

    def policy(self):
        return "at_most_once"

    def run(self, ctx, args):
        CountingImage.runs += 1
        return ToolOutput("drawn again", is_error=True)


class CountingPublish(PublishPanel):
    posts = 0

    def run(self, ctx, args):
        CountingPublish.posts += 1
        return ToolOutput("published again", details={"post_id": "post_again"})


@pytest.fixture
def session(alice):
    CountingImage.runs = CountingPublish.posts = 0
    return session_create(owner=alice, title="reconcile")


def image_call_left_open(session) -> str:
    """A generate_image call of an at-most-once backend: T1 written, then the crash."""
    return operation_stopped_at(
        session, "dispatched", tool="generate_image", args={"prompt": PROMPT}, policy="at_most_once"
    )


def publish_left_open(session) -> str:
    return operation_stopped_at(session, "dispatched", tool="publish_panel", args=PANEL_ARGS)


def render_under_key(user, op: str, backend: AtMostOnceBackend):
    """What the crashed dispatch asked the render service (generate_image's parameters)."""
    key = idempotency_key(op, "call_1")
    return render_request(
        user=user, key=key, params={"prompt": PROMPT, "characters": {}}, renderer=backend
    )


def records(op: str):
    return operation_records(operation_id=op)


def resolutions(op: str):
    return [r for r in records(op) if r.type == "tool_resolved"]


def result_of(harness):
    return next(
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    )


def go_on(harness, op: str) -> str:
    tools = {
        **default_tools(),
        "generate_image": CountingImage(),
        "publish_panel": CountingPublish(),
    }
    return harness.run(ScriptedProvider(text("画好了")), tools=tools, operation_id=op)


def journal_clean() -> None:
    out = io.StringIO()
    call_command("journal_check", stdout=out)  # exits 1 on any problem


# -- a stored render ---------------------------------------------------------------------


def test_a_stored_render_settles_the_call_in_the_recovery_pass(alice, session, harness):
    harness.session = session
    op = image_call_left_open(session)
    backend = AtMostOnceBackend()
    stored = render_under_key(alice, op, backend)

    [line] = Runner().recover()
    assert "settled by the reconciler (call_1 confirmed from its render job)" in line, line
    assert "a runner goes on" in line
    assert not Operation.objects.get(pk=op).is_parked and inbox_items() == []

    [resolved] = resolutions(op)
    assert (resolved.by, resolved.resolved_by, resolved.resolution) == (
        "reconciler",
        "reconciler",
        "confirmed",
    )
    assert resolved.evidence == {
        "kind": "render_job",
        "idempotency_key": idempotency_key(op, "call_1"),
        "status": "succeeded",
        "backend": "openai",
        "charged": 10,
        "image_id": stored.image_id,
    }
    assert stored.image_id in resolved.reason

    assert go_on(harness, op) == "finished"
    assert Operation.objects.get(pk=op).outcome == "completed"
    result = result_of(harness)
    assert not result.is_error
    assert result.details == {
        "image_id": stored.image_id,
        "content_type": "image/png",
        "backend": "openai",
        "cost": 10,
        "replayed": True,
    }
    assert CountingImage.runs == 0 and backend.renders == 1
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    journal_clean()


def test_a_runner_that_claims_the_call_settles_it_and_goes_on(alice, session, harness):
    """The studio's path: no recovery pass, the runner's loop meets the open call."""
    harness.session = session
    op = image_call_left_open(session)
    stored = render_under_key(alice, op, AtMostOnceBackend())

    assert go_on(harness, op) == "finished"
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert result_of(harness).details["image_id"] == stored.image_id
    types = harness.events.types()
    assert "operation_parked" not in types
    finished = next(e for _, e in harness.events.events if e["type"] == "tool_finished")
    assert finished["details"]["image_id"] == stored.image_id and not finished["is_error"]
    [resolved] = resolutions(op)
    assert resolved.resolved_by == "reconciler"
    assert [r.type for r in records(op)].count("tool_dispatched") == 1  # never dispatched again
    assert CountingImage.runs == 0
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    journal_clean()


def test_a_failed_render_fails_the_call_with_its_stored_error(alice, session, harness):
    harness.session = session
    op = image_call_left_open(session)
    with pytest.raises(RenderFailed):
        render_under_key(alice, op, AtMostOnceBackend(fail=True))

    [line] = Runner().recover()
    assert "call_1 failed from its render job" in line, line
    [resolved] = resolutions(op)
    assert resolved.resolution == "failed" and resolved.resolved_by == "reconciler"
    assert "the image server answered 500" in resolved.evidence["error"]
    assert go_on(harness, op) == "finished"
    result = result_of(harness)
    assert result.is_error and "the image server answered 500" in result.content
    assert "nothing was charged" in result.content
    assert result.details == {"code": "render_failed", "backend": "openai"}
    assert LedgerEntry.objects.filter(kind="charge").count() == 0
    journal_clean()


# -- nothing stored: for a person --------------------------------------------------------


def test_a_call_with_no_render_under_its_key_is_parked_for_a_person(session):
    op = image_call_left_open(session)

    [line] = Runner().recover()
    assert line.endswith("parked in the recovery inbox"), line
    assert Operation.objects.get(pk=op).is_parked
    [item] = inbox_items()
    assert (item.operation_id, item.tool_call_id, item.tool_name) == (
        op,
        "call_1",
        "generate_image",
    )
    assert "the render service has no job under the call's key" in item.attention
    assert item.evidence["render_job"] is None
    assert resolutions(op) == []
    assert LedgerEntry.objects.filter(kind="charge").count() == 0
    journal_clean()


def test_a_render_still_running_is_parked_and_settled_by_a_later_pass(alice, session, harness):
    harness.session = session
    op = image_call_left_open(session)
    backend = AtMostOnceBackend(hold=True)
    rendering = orm_thread(render_under_key, alice, op, backend)
    rendering.start()
    try:
        assert backend.started.wait(30)
        [line] = Runner().recover()
        assert "parked in the recovery inbox" in line, line
        [item] = inbox_items()
        assert "still in progress" in item.attention
        assert item.evidence["render_job"]["status"] == "in_progress"
        assert Runner().parked_settle() == []  # still drawing: nothing decided yet
    finally:
        backend.release.set()
        rendering.join(30)
    assert RenderJob.objects.get(key=idempotency_key(op, "call_1")).status == "succeeded"

    [line] = Runner().recover()  # the next pass looks at the inbox again
    assert line.startswith(f"{op}: settled by the reconciler"), line
    assert line.endswith("a runner goes on")
    assert inbox_items() == [] and not Operation.objects.get(pk=op).is_parked
    assert go_on(harness, op) == "finished"
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert backend.renders == 1 and CountingImage.runs == 0
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    journal_clean()


# -- a feed post -------------------------------------------------------------------------


def test_a_feed_post_under_the_key_settles_the_publish(session, harness):
    harness.session = session
    op = publish_left_open(session)
    post = feed_post_create(
        image_id="img_1",
        caption="第一格",
        session_id=session.id,
        idempotency_key=idempotency_key(op, "call_1"),
        now=timezone.now(),
    )

    [line] = Runner().recover()
    assert "call_1 confirmed from its feed post" in line, line
    [resolved] = resolutions(op)
    assert resolved.evidence == {
        "kind": "feed_post",
        "idempotency_key": idempotency_key(op, "call_1"),
        "post_id": post.id,
        "image_id": "img_1",
    }
    assert go_on(harness, op) == "finished"
    result = result_of(harness)
    assert result.details == {"post_id": post.id, "image_id": "img_1"}
    assert result.content == f"published to the feed as {post.id}"
    assert CountingPublish.posts == 0
    journal_clean()


def test_two_posts_under_one_key_go_to_a_person(session):
    op = publish_left_open(session)
    for _ in range(2):
        feed_post_create(
            image_id="img_1",
            caption="第一格",
            session_id=session.id,
            idempotency_key=idempotency_key(op, "call_1"),
        )
    Runner().recover()
    [item] = inbox_items()
    assert "2 posts" in item.attention and resolutions(op) == []


def test_a_post_of_another_panel_under_the_key_goes_to_a_person(session):
    op = publish_left_open(session)
    feed_post_create(
        image_id="img_2",
        caption="第二格",
        session_id=session.id,
        idempotency_key=idempotency_key(op, "call_1"),
    )
    Runner().recover()
    [item] = inbox_items()
    assert "does not match" in item.attention and resolutions(op) == []


def test_an_admin_who_resolved_first_wins(alice, session, django_user_model):
    """The reconciler and an admin race for a parked call: one resolution, no error."""
    from jaiweb.commands.inbox import inbox_resolve

    op = image_call_left_open(session)
    Runner().recover()  # parked: nothing under the key yet
    render_under_key(alice, op, AtMostOnceBackend())
    admin = django_user_model.objects.create_user("root", password="x", is_staff=True)
    inbox_resolve(
        user=admin, operation_id=op, tool_call_id="call_1", resolution="failed", reason="gone"
    )
    assert Runner().parked_settle() == []
    [resolved] = resolutions(op)
    assert resolved.resolved_by == "admin" and resolved.by == "root"


def test_evidence_the_journal_cannot_keep_leaves_the_call_for_a_person(session, monkeypatch):
    """What a backend said may hold a character no journal text may (a NUL): the call is
    parked saying so, instead of a run that fails at every claim."""
    from jaiweb.agent import reconciler
    from journal.reconcile import KeyEvidence, RenderJobSeen

    op = image_call_left_open(session)
    seen = RenderJobSeen(
        key=idempotency_key(op, "call_1"), status="failed", error="bad\x00byte", prompt=PROMPT
    )
    monkeypatch.setattr(reconciler, "key_evidence", lambda *a: KeyEvidence(render_job=seen))
    [line] = Runner().recover()
    assert line.endswith("parked in the recovery inbox"), line
    [item] = inbox_items()
    assert "cannot be kept in the journal" in item.attention
    assert resolutions(op) == []
