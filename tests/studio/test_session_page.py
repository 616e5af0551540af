"""GET /sessions/<id>/: the studio page of one session."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.demo import article_session_create
from jaiweb.store.services import entry_append
from tests.support.builders import park_operation, parked_call
from tests.support.factories import panel, user
from tests.support.runs import run_pending
from tests.support.trees import big_tree_create

pytestmark = pytest.mark.django_db


def test_an_empty_session_has_every_hook(client, alice, episode):
    client.force_login(alice)
    r = client.get(f"/sessions/{episode.id}/")
    assert r.status_code == 200
    body = r.content.decode()
    for hook in (
        'id="tree"',
        'id="inspector"',
        'id="strip"',
        'id="character-state"',
        'id="credits"',
        'id="prompt-form"',
        'name="text"',
        'id="stream"',
        'id="session-notice"',
        f'ws-connect="/ws/sessions/{episode.id}/"',
    ):
        assert hook in body, hook
    assert "Kung fu &lt;b&gt;pig&lt;/b&gt;" in body and "<b>pig</b>" not in body
    assert "offline director" in body  # the stand-in is labelled as such
    assert 'data-balance="100"' in body
    assert "猪猪侠" in body


def test_a_run_shows_in_tree_strip_and_credits(client, alice, episode):
    prompt_submit(session=episode, user=alice, text="/draw 猪猪侠 eats a <script>x</script>")
    assert run_pending() == "finished"
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    nodes = re.findall(r'<div class="node"[^>]* data-type="(\w+)"', body)
    assert nodes == ["message"]  # one node for the turn, ending at the director's reply
    assert 'data-role="assistant"' in body and 'data-first-id="' in body
    assert body.count('data-active="true"') == len(nodes)
    panel = r'data-panel="img_[^"]+"[^>]*>\s*<div class="art"><img src="/panels/img_'
    assert re.search(panel, body)
    assert 'data-balance="90"' in body
    assert "<script>x</script>" not in body and "&lt;script&gt;x&lt;/script&gt;" in body


def test_a_parked_operation_says_waiting_for_an_admin(client, alice, episode):
    accepted = prompt_submit(session=episode, user=alice, text="hello")
    park_operation(accepted.operation_id)
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    assert 'data-notice="parked"' in body and "waiting for an admin" in body


def three_panels(session) -> None:
    """Three panels on the session's branch: img_p1, img_p2, img_p3."""
    entries = [user("u", None), panel("p1", "u"), panel("p2", "p1"), panel("p3", "p2")]
    entry_append(session_id=session.id, entries=entries, expected_leaf_id=None)


@pytest.mark.parametrize(
    "tool,args,label",
    [
        ("publish_panel", {"image_id": "img_p3", "caption": "x"}, "Publish panel 3"),
        ("generate_image", {"prompt": "a pig"}, "Draw panel 4"),
        ("publish_panel", {"image_id": "img_gone", "caption": "x"}, "Publish a panel"),
    ],
)
def test_the_waiting_notice_names_the_step_as_a_person_would(
    client, alice, episode, tool, args, label
):
    """Issue 29: the notice showed the admins' reason, "publish_panel (call_1): …"."""
    three_panels(episode)
    parked_call(episode, tool=tool, args=args)
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    notice = body.split('id="session-notice"')[1].split("</div>")[0]
    assert f'data-parked-step="{tool}">{label}<' in notice
    assert "call_1" not in notice and tool not in notice.replace(f'"{tool}"', "")
    with translation.override("zh-hans"):
        zh = client.get(f"/sessions/{episode.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "Publish" not in zh.content.decode().split('id="session-notice"')[1].split("</div>")[0]


def test_the_prompt_box_is_closed_while_parked_saying_why(client, alice, episode):
    client.force_login(alice)
    idle = client.get(f"/sessions/{episode.id}/").content.decode()
    assert re.search(r'<p id="prompt-parked"[^>]* hidden>', idle)
    assert not re.search(r'<textarea name="text"[^>]* disabled', idle)
    accepted = prompt_submit(session=episode, user=alice, text="hello")
    park_operation(accepted.operation_id)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    assert re.search(r'<textarea name="text"[^>]* disabled></textarea>', body)
    assert 'data-action="send" disabled' in body
    why = re.search(r'<p id="prompt-parked"([^>]*)>([^<]+)</p>', body)
    assert "hidden" not in why[1] and "admin" in why[2]
    assert "studio/prompt-lock.js" in body  # keeps it in step with the live controls


def test_the_rewound_branch_stays_in_sight_grey(client, alice):
    session = article_session_create(owner=alice)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/").content.decode()
    assert 'data-via="e5"' in body  # the rewind is the edge to the turn after it
    off_path = re.findall(
        r'<div class="node"[^>]*data-entry-id="([^"]+)"(?![^>]*data-active)', body
    )
    assert off_path, "the article's first draft is drawn, off the active path"


def test_a_10000_entry_session_is_a_small_page(client, alice):
    session = big_tree_create(owner=alice, depth=8000, forks=400, fork_len=5)
    assert session.entry_count == 10_000
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/").content.decode()
    assert len(body) < 200_000
    assert "main line &lt;7998&gt;" in body and 'data-leaf="true"' in body
    assert re.search(r"… \d+ more", body)  # the long middle is folded
    assert re.search(r">\+\d+</button>", body) or 'ol class="forks"' in body


def test_others_get_404_and_anonymous_the_login(client, bob, episode):
    assert client.get(f"/sessions/{episode.id}/").status_code == 302
    client.force_login(bob)
    assert client.get(f"/sessions/{episode.id}/").status_code == 404
    assert client.get("/sessions/s_nope/").status_code == 404


@pytest.mark.parametrize(
    ("backend", "extra", "english", "chinese"),
    [
        (
            "comfyui",
            {
                "JAIWEB_COMFYUI_URL": "http://me:secret@gpu-box:8188",
                "JAIWEB_COMFYUI_WORKFLOW": None,
            },
            "Panels come from ComfyUI at http://gpu-box:8188. Workflow: sd15-default.",
            "分镜由 http://gpu-box:8188 上的 ComfyUI 生成。 工作流：sd15-default。",
        ),
        (
            "a1111",
            {"JAIWEB_A1111_URL": "http://gpu-box:7860"},
            "Panels come from AUTOMATIC1111 at http://gpu-box:7860.",
            "分镜由 http://gpu-box:7860 上的 AUTOMATIC1111 生成。",
        ),
        (
            "openai",
            {"JAIWEB_IMAGE_BASE_URL": None, "JAIWEB_IMAGE_MODEL": "gpt-image-1"},
            "Panels come from OpenAI Images at https://api.openai.com. Model: gpt-image-1.",
            "分镜由 https://api.openai.com 上的 OpenAI Images 生成。 模型：gpt-image-1。",
        ),
    ],
)
def test_the_notice_names_the_image_backend_in_the_pages_language(
    client, alice, episode, settings, backend, extra, english, chinese
):
    """Issue 28: the notice says what draws the panels, never a password in its address."""
    settings.JAIWEB_IMAGE_BACKEND = backend
    for name, value in extra.items():
        setattr(settings, name, value)
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    assert english in body and "local SVG renderer" not in body and "secret" not in body
    zh = client.get(f"/sessions/{episode.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert chinese in zh
