"""Characters keep their look (issue 28): a look set from a panel travels in the render
parameters of every later panel, through the agent loop, to the backend's own server; a
rewind past the change of look draws with the look of that point again."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import session_rewind
from jaiweb.render.backends.comfyui import BUNDLED_WORKFLOW
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from jaiweb.render.panel.variation import figure_seed_of
from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at
from jaiweb.store.services import session_create
from tests.support.comfyui_server import comfyui as comfyui  # the fixture
from tests.support.comfyui_server import reference_workflow
from tests.support.image_servers import openai_images as openai_images  # the fixture
from tests.support.runs import Harness
from tests.support.scripted import ScriptedProvider, calls, text

PIG = "猪猪侠"
HX = {"HTTP_HX_REQUEST": "true"}


def auto_session(owner):
    return session_create(
        owner=owner, title="looks", initial_app_state={**DEFAULT_STATE, "permission_mode": "auto"}
    )


def draw(harness: Harness, scene: str) -> dict:
    """One panel of Pig-Man through the agent loop; the tool result's details."""
    harness.prompt(f"画{scene}")
    provider = ScriptedProvider(calls(("generate_image", {"prompt": scene})), text("画好了"))
    assert harness.run(provider) == "finished"
    result = [
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    ][-1]
    assert not result.is_error, result.content
    return result.details


def use_as_look(client: Client, session, image_id: str, name: str = PIG):
    session.refresh_from_db()
    answer = client.post(
        reverse("studio-character-look", args=[session.id]),
        {"name": name, "image_id": image_id, "expected_leaf_id": session.leaf_id or ""},
        **HX,
    )
    session.refresh_from_db()
    return answer


def params_of(image_id: str) -> dict:
    return RenderJob.objects.get(image__id=image_id).params


@pytest.fixture
def alice_client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.mark.django_db
def test_comfyui_gets_the_reference_in_both_renders_and_the_old_one_after_a_rewind(
    alice, alice_client, comfyui, settings, media, tmp_path
):
    flow = tmp_path / "reference.json"
    flow.write_text(json.dumps(reference_workflow(json.loads(BUNDLED_WORKFLOW.read_text()),
                                                  character=PIG)))  # fmt: skip
    settings.JAIWEB_IMAGE_BACKEND = "comfyui"
    settings.JAIWEB_COMFYUI_URL = comfyui.url
    settings.JAIWEB_COMFYUI_WORKFLOW = None  # the first panel: text to image
    settings.JAIWEB_COMFYUI_CHECKPOINT = None
    session = auto_session(alice)
    harness = Harness(session)
    first = draw(harness, f"{PIG}站在擂台上")["image_id"]

    assert use_as_look(alice_client, session, first).status_code == 200
    look = app_state_at(session=session)["characters"][PIG]
    assert look["reference_image_id"] == first
    assert look["seed"] == figure_seed_of(params_of(first), PIG)  # its pose in that panel

    settings.JAIWEB_COMFYUI_WORKFLOW = str(flow)  # from now on: drawn from the reference
    second = draw(harness, f"{PIG}吃棒棒糖")["image_id"]
    third = draw(harness, f"{PIG}挥拳")["image_id"]
    first_bytes = (media / Image.objects.get(pk=first).path).read_bytes()
    name = f"jaiweb-{first}.png"
    uploads = [u for u in comfyui.uploads if "name" in u]
    assert [(u["name"], u["data"], u["overwrite"]) for u in uploads] == [
        (name, first_bytes, "true")
    ] * 2
    queued = [body["prompt"] for body in comfyui.accepted][1:]
    assert [p["10"]["inputs"]["image"] for p in queued] == [name, name]
    assert [p["3"]["inputs"]["seed"] for p in queued] == [look["seed"]] * 2
    for image_id in (second, third):
        assert params_of(image_id)["characters"][PIG]["reference_image_id"] == first

    # A new look (the third panel), then a rewind to before it: the first panel's again.
    session.refresh_from_db()
    before_change = session.leaf_id
    assert use_as_look(alice_client, session, third).status_code == 200
    fourth = draw(harness, f"{PIG}胜利")["image_id"]
    session_rewind(session=session, entry_id=before_change)
    session.refresh_from_db()
    fifth = draw(harness, f"{PIG}回家")["image_id"]
    uploads = [u["name"] for u in comfyui.uploads if "name" in u]
    assert uploads[2:] == [f"jaiweb-{third}.png", name]
    queued = [body["prompt"]["10"]["inputs"]["image"] for body in comfyui.accepted[3:]]
    assert queued == [f"jaiweb-{third}.png", name]
    assert params_of(fourth)["characters"][PIG]["reference_image_id"] == third
    assert params_of(fifth)["characters"][PIG] == look
    assert LedgerEntry.objects.filter(kind="charge").count() == 5  # setting a look is free


@pytest.mark.django_db
def test_openai_edits_from_the_reference_in_both_renders_and_not_after_a_rewind(
    alice, alice_client, openai_images, settings, media
):
    settings.JAIWEB_IMAGE_BACKEND = "openai"
    settings.JAIWEB_IMAGE_TIMEOUT = 10
    settings.JAIWEB_IMAGE_BASE_URL = openai_images.base_url
    settings.JAIWEB_IMAGE_API_KEY = "sk-image"
    settings.JAIWEB_IMAGE_MODEL = "gpt-image-1"
    settings.JAIWEB_IMAGE_SIZE = "1024x1024"
    settings.JAIWEB_IMAGE_QUALITY = None
    session = auto_session(alice)
    harness = Harness(session)
    first = draw(harness, f"{PIG}站在擂台上")["image_id"]
    session.refresh_from_db()
    before_look = session.leaf_id
    assert use_as_look(alice_client, session, first).status_code == 200
    draw(harness, f"{PIG}吃棒棒糖")
    draw(harness, f"{PIG}挥拳")

    first_bytes = (media / Image.objects.get(pk=first).path).read_bytes()
    assert first_bytes == openai_images.sent[0]
    edits = openai_images.edits()
    assert len(edits) == 2
    for edit in edits:
        assert edit.headers["content-type"].startswith("multipart/form-data")
        image = edit.body["image"]
        assert (image.data, image.content_type) == (first_bytes, "image/png")
        assert edit.body["model"] == "gpt-image-1" and PIG in edit.body["prompt"]
        assert "response_format" not in edit.body

    session_rewind(session=session, entry_id=before_look)
    session.refresh_from_db()
    draw(harness, f"{PIG}回家")
    assert [r.path for r in openai_images.renders()] == [
        "/v1/images/generations",
        "/v1/images/edits",
        "/v1/images/edits",
        "/v1/images/generations",  # no look on this branch: no reference
    ]
    assert wallet_charges() == 4


def wallet_charges() -> int:
    return LedgerEntry.objects.filter(kind="charge").count()


@pytest.mark.django_db
def test_another_users_picture_is_refused_as_a_look_in_the_studio(
    alice, bob, alice_client, settings, media
):
    settings.JAIWEB_IMAGE_BACKEND = "local"
    bobs = Harness(auto_session(bob))
    bobs_panel = draw(bobs, f"{PIG}站在擂台上")["image_id"]
    session = auto_session(alice)
    entries = Entry.objects.filter(session=session).count()
    for image_id in (bobs_panel, "img_nosuchpicture"):
        answer = use_as_look(alice_client, session, image_id)
        assert answer.status_code == 404
        assert "That picture is not one of your images." in answer.content.decode()
    assert Entry.objects.filter(session=session).count() == entries
    assert "reference_image_id" not in app_state_at(session=session)["characters"][PIG]
