"""Issue 27: an image id is no capability. Bob edits an export of his own session so that
it names Alice's panel and imports it; whatever field holds her id, the import is refused
naming the line (or, where her id is only text, accepted), and afterwards no route serves
anything of hers and the feed has no post of her image."""

from __future__ import annotations

import base64
import json

import pytest
from django.test import Client

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import prompt_submit
from jaiweb.feed.models import FeedPost
from jaiweb.render.models import Image
from jaiweb.store.models import ComicSession, Entry, Label, Operation
from jaiweb.store.services import session_create
from jaiweb.store.shares import share_link_create, share_panel_ref
from tests.api.conftest import BASE, api_for
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret-of-32-characters!"
    return settings.MEDIA_ROOT


def drawn_session(user, title: str):
    """A session with one panel, drawn from a prompt of the user's own (so its picture is
    the user's own even before the render's seed, which comes from the call's key, tells
    two renders of one prompt apart)."""
    session = session_create(owner=user, title=title, initial_app_state=DEFAULT_STATE)
    prompt_submit(session=session, user=user, text=f"/draw {user.username}的棒棒糖")
    run_pending()
    session.refresh_from_db()
    return session


@pytest.fixture
def hers(alice):
    """Alice's session, and the id and bytes of its private panel."""
    session = drawn_session(alice, "Alice's")
    image = Image.objects.get(user=alice)
    return session, image.id, (Image.objects.get(pk=image.id).path)


def her_bytes(media, path: str) -> bytes:
    return (media / path).read_bytes()


def exported(user, session) -> list[dict]:
    response = api_for(user).client.get(f"{BASE}/sessions/{session.id}/export")
    assert response.status_code == 200
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def without_records(lines: list[dict]) -> list[dict]:
    """Step 2 of the attack: the records dropped and ``operation_count`` set to 0."""
    kept = [line for line in lines if line.get("type") not in RECORD_TYPES]
    kept[0]["session"]["operation_count"] = 0
    return kept


RECORD_TYPES = {
    "operation_accepted",
    "model_attempted",
    "usage_settled",
    "approval_requested",
    "approval_decided",
    "tool_dispatched",
    "tool_resolved",
    "input_queued",
    "stop_requested",
    "operation_finished",
}


def body(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)


def result_line(lines: list[dict]) -> int:
    return next(
        i for i, line in enumerate(lines) if line.get("message", {}).get("role") == "tool_result"
    )


def counts():
    return tuple(m.objects.count() for m in (ComicSession, Entry, Operation, Label, Image))


def nothing_of_hers_anywhere(
    bob, media, image_id: str, data: bytes, *, id_as_text: bool = False
) -> None:
    """Every route that turns an image id into bytes, for Bob, a share viewer and nobody.
    Her id itself shows nowhere either, unless Bob typed it as text (``id_as_text``)."""
    secrets = (data, base64.b64encode(data), *(() if id_as_text else (image_id.encode(),)))
    as_bob = Client()
    as_bob.force_login(bob)
    pages = [as_bob.get(f"/panels/{image_id}"), Client().get(f"/panels/{image_id}")]
    for session in ComicSession.objects.filter(owner=bob):
        pages += [
            as_bob.get(f"/sessions/{session.id}/"),
            as_bob.get(f"/sessions/{session.id}/episode.html"),
            as_bob.get(f"/sessions/{session.id}/session.jsonl?images=1"),
            as_bob.get(f"{BASE}/sessions/{session.id}/export?images=true"),
        ]
        if session.leaf_id:
            token = share_link_create(session_id=session.id)[1]
            ref = share_panel_ref(token=token, image_id=image_id)
            pages += [Client().get(f"/s/{token}/"), Client().get(f"/s/{token}/panels/{ref}")]
    pages.append(Client().get("/feed/"))
    for page in pages:
        content = b"".join(page.streaming_content) if page.streaming else page.content
        assert page.status_code in (200, 404), page.status_code
        for secret in secrets:
            assert secret not in content, (page.request["PATH_INFO"], secret[:20])
    assert not FeedPost.objects.filter(image_id=image_id).exists()
    assert Image.objects.get(pk=image_id).published_at is None


def test_the_attack_step_by_step(alice, bob, hers, media):
    _, her_image, her_path = hers
    data = her_bytes(media, her_path)
    his = drawn_session(bob, "Bob's")
    # 1. Bob exports his own session.
    lines = exported(bob, his)
    # 2. He puts Alice's image id in a tool result, drops the records, sets the count to 0.
    lines = without_records(lines)
    at = result_line(lines)
    lines[at]["message"]["details"]["image_id"] = her_image
    # 3. He imports it: refused at that line, and nothing is written.
    before = counts()
    response = api_for(bob).client.post(
        f"{BASE}/sessions/import", data=body(lines), content_type="application/jsonl"
    )
    assert response.status_code == 422, response.content
    detail = response.json()["detail"]
    assert detail.startswith(f"line {at + 1}: ") and her_image in detail
    assert counts() == before
    # 4. Nothing of hers is reachable: not inlined, not shared, not published.
    nothing_of_hers_anywhere(bob, media, her_image, data)


def test_the_import_page_and_the_command_refuse_it_too(alice, bob, hers, media, tmp_path):
    from django.core.management import CommandError, call_command

    _, her_image, her_path = hers
    lines = without_records(exported(bob, drawn_session(bob, "Bob's")))
    lines[result_line(lines)]["message"]["details"]["image_id"] = her_image
    before = counts()
    as_bob = Client()
    as_bob.force_login(bob)
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = as_bob.post("/sessions/import", {"file": SimpleUploadedFile("s.jsonl", body(lines))})
    assert page.status_code == 422 and her_image in page.content.decode()
    path = tmp_path / "poisoned.jsonl"
    path.write_bytes(body(lines))
    with pytest.raises(CommandError, match="neither in this file nor one of yours"):
        call_command("import_session", str(path), "--owner", "bob")
    assert counts() == before
    nothing_of_hers_anywhere(bob, media, her_image, her_bytes(media, her_path))


def _as_place_panel(lines: list[dict], image_id: str) -> list[dict]:
    """A cherry-pick's shape: the call and its result are ``place_panel`` of her image."""
    at = result_line(lines)
    result = lines[at]["message"]
    call_id = result["tool_call_id"]
    for line in lines:
        for call in line.get("message", {}).get("tool_calls", []) or []:
            if call["id"] == call_id:
                call["name"] = "place_panel"
                call["arguments"] = {"image_id": image_id, "from_entry_id": lines[at]["id"]}
    result["tool_name"] = "place_panel"
    result["details"] = {"image_id": image_id, "from_entry_id": lines[at]["id"]}
    return lines


def _in_tool_arguments(lines: list[dict], image_id: str) -> list[dict]:
    """Only a tool call's arguments name her image (a publish the model asked for)."""
    for line in lines:
        for call in line.get("message", {}).get("tool_calls", []) or []:
            call["arguments"]["image_id"] = image_id
    return lines


def _as_initial_look(lines: list[dict], image_id: str) -> list[dict]:
    """Only the header's initial state names her image: a character's look."""
    characters = lines[0]["session"]["initial_app_state"]["characters"]
    characters["猪猪侠"]["reference_image_id"] = image_id
    return lines


@pytest.mark.parametrize("poison", [_as_place_panel, _in_tool_arguments, _as_initial_look])
def test_her_id_in_any_field_that_holds_an_image_is_refused(alice, bob, hers, media, poison):
    _, her_image, her_path = hers
    lines = poison(without_records(exported(bob, drawn_session(bob, "Bob's"))), her_image)
    before = counts()
    response = api_for(bob).client.post(
        f"{BASE}/sessions/import", data=body(lines), content_type="application/jsonl"
    )
    assert response.status_code == 422, response.content
    assert her_image in response.json()["detail"]
    assert counts() == before
    nothing_of_hers_anywhere(bob, media, her_image, her_bytes(media, her_path))


def test_her_id_in_a_label_is_only_text(alice, bob, hers, media):
    """A label's text may say anything; it is never turned into a picture."""
    _, her_image, her_path = hers
    lines = exported(bob, drawn_session(bob, "Bob's"))
    leaf = lines[0]["session"]["leaf_id"]
    label = {"type": "label", "entry_id": leaf, "kind": "label", "text": her_image}
    label["created_at"] = lines[1]["timestamp"]
    lines.append(label)
    lines[0]["session"]["label_count"] += 1
    response = api_for(bob).client.post(
        f"{BASE}/sessions/import", data=body(lines), content_type="application/jsonl"
    )
    assert response.status_code == 201, response.content
    nothing_of_hers_anywhere(bob, media, her_image, her_bytes(media, her_path), id_as_text=True)


def test_a_publish_of_her_panel_from_his_session_posts_nothing(alice, bob, hers, settings):
    """Even a session that names her panel (one imported before imports checked) cannot
    publish it: the tool refuses before any post is sent."""
    from jaiweb.agent.tools.base import ToolContext
    from jaiweb.agent.tools.publish import PublishArgs, PublishPanel
    from jaiweb.store.selectors import branch_get
    from jaiweb.store.services import entry_append
    from tests.support.factories import assistant, panel, user

    _, her_image, _ = hers
    settings.JAIWEB_FEED_URL = "http://127.0.0.1:9/feed/webhook"  # nothing may be sent
    his = session_create(owner=bob, title="legacy")
    entry_append(
        session_id=his.id,
        entries=[
            user("u", None, "画"),
            assistant("a", "u", calls=[("c_p", "generate_image")]),
            panel("p", "a", image=her_image),
        ],
        expected_leaf_id=None,
    )
    ctx = ToolContext(
        owner=bob,
        session_id=his.id,
        operation_id="op_x",
        tool_call_id="call_1",
        idempotency_key="k_x",
        app_state=default_app_state(),
        branch=lambda: branch_get(session=ComicSession.objects.get(pk=his.id)),
    )
    out = PublishPanel().run(ctx, PublishArgs(image_id=her_image, caption="hers"))
    assert out.is_error and "no panel" in out.content
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=her_image).published_at is None


def default_app_state():
    from jaiweb.agent.state import AppState

    return AppState.model_validate(DEFAULT_STATE)
