"""A character's look at the render service and in each backend: the local renderer poses a
figure by its character's own seed; the service reads a reference only from the user's own
images; ComfyUI's placeholders and upload, OpenAI's edits and AUTOMATIC1111's seed."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from jaiweb.render.backends.a1111 import LOOK_VARIATION, A1111Renderer
from jaiweb.render.backends.base import BackendError, ReferenceImage, panel_reference
from jaiweb.render.backends.comfyui import (
    BUNDLED_WORKFLOW,
    ComfyUIError,
    ComfyUIRenderer,
    workflow_check,
)
from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.backends.openai import OpenAIImagesRenderer
from jaiweb.render.errors import RenderFailed
from jaiweb.render.models import LedgerEntry, RenderJob
from jaiweb.render.panel import draw_panel
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import render_request
from tests.support.comfyui_server import comfyui as comfyui  # the fixture
from tests.support.comfyui_server import png, reference_workflow
from tests.support.image_servers import openai_images as openai_images  # the fixture

PIG = "猪猪侠"
SCENE = f"{PIG}站在擂台上"


def figure(svg: str, name: str) -> str:
    """The figure's group without its placement: what it looks like, not where it stands."""
    found = re.search(rf'<g transform="[^"]*" data-character="{name}">(.*?)</g>\n', svg, re.S)
    assert found, svg
    return found.group(1)


def panel(seed: int, own: int | None = None) -> str:
    pig = {"buff": "无", "skill": "无", "mood": "平静"}
    if own is not None:
        pig["seed"] = own
    return draw_panel({"prompt": SCENE, "characters": {PIG: pig}, "seed": seed})


def test_the_local_renderer_poses_a_figure_by_its_characters_own_seed():
    seeds = range(12)
    own = {figure(panel(seed, own=77), PIG) for seed in seeds}
    assert len(own) == 1  # one pose in every panel, whatever the panel's seed
    assert len({figure(panel(seed), PIG) for seed in seeds}) > 1  # without: the poses vary
    assert len({figure(panel(3, own=o), PIG) for o in seeds}) > 1  # another look, another pose
    assert "reference" not in panel(3, own=77) and "seed:" not in panel(3, own=77)


def test_the_panels_reference_is_its_first_named_characters():
    characters = {
        "超人强": {"reference_image_id": "img_strong"},
        PIG: {"reference_image_id": "img_pig"},
        "小呆呆": {},
    }
    assert panel_reference({"prompt": "pig-man 打 超人强", "characters": characters}) == (
        PIG,
        "img_pig",
    )
    assert panel_reference({"prompt": "小呆呆哭了", "characters": characters}) is None
    assert panel_reference({"prompt": "雨天", "characters": characters}) == ("超人强", "img_strong")


class Recording(LocalRenderer):
    uses_reference = True

    def __init__(self):
        self.references = []

    def render(self, params, *, key, progress=None, reference=None):
        self.references.append(reference)
        return super().render(params, key=key)


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.mark.django_db
def test_the_service_reads_a_reference_only_from_the_users_own_images(alice, bob, media):
    renderer = Recording()
    bobs = render_request(user=bob, key="k_bob", params={"prompt": SCENE}, renderer=renderer)
    alices = render_request(user=alice, key="k_a1", params={"prompt": SCENE}, renderer=renderer)

    def look(image_id):
        return {"prompt": SCENE, "characters": {PIG: {"reference_image_id": image_id}}}

    render_request(user=alice, key="k_a2", params=look(alices.image_id), renderer=renderer)
    reference = renderer.references[-1]
    assert (reference.character, reference.image_id) == (PIG, alices.image_id)
    assert reference.data == (media / f"panels/{alice.pk}/{alices.image_id}.svg").read_bytes()

    for key, image_id in (("k_a3", bobs.image_id), ("k_a4", "img_nosuchpicture")):
        with pytest.raises(RenderFailed, match="is not one of your images") as failed:
            render_request(user=alice, key=key, params=look(image_id), renderer=renderer)
        assert "nothing was charged" in str(failed.value)
        assert RenderJob.objects.get(key=key).status == RenderJob.FAILED
    assert len(renderer.references) == 3  # the backend was never asked for those
    assert LedgerEntry.objects.filter(kind="charge", wallet__user=alice).count() == 2
    assert wallet_balance(user=alice) == 80


def reference(data: bytes, content_type: str = "image/png") -> ReferenceImage:
    return ReferenceImage(PIG, "img_pigpanel", content_type, data)


def write_flow(tmp_path, flow: dict) -> str:
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow))
    return str(path)


def bundled() -> dict:
    return json.loads(BUNDLED_WORKFLOW.read_text())


def test_the_look_placeholders_are_known_and_an_empty_character_is_not(tmp_path):
    assert workflow_check(write_flow(tmp_path, reference_workflow(bundled(), character=PIG))) == []
    flow = bundled()
    flow["3"]["inputs"]["seed"] = "{{seed:}}"
    [problem] = workflow_check(write_flow(tmp_path, flow))
    assert "unknown placeholder {{seed:}}" in problem and "{{seed:<character>}}" in problem


def test_comfyui_fills_a_characters_seed_and_the_panels_own_for_another(tmp_path):
    flow = reference_workflow(bundled(), character=PIG)
    flow["12"] = {"class_type": "PreviewImage", "inputs": {"images": ["8", 0]}}
    renderer = ComfyUIRenderer(url="http://127.0.0.1:9", workflow_path=write_flow(tmp_path, flow))
    params = {"prompt": SCENE, "seed": 5, "characters": {PIG: {"seed": 41}}}
    assert renderer.values(params, key="k")["seed:" + PIG] == 41
    assert renderer.values({**params, "characters": {PIG: {}}}, key="k")["seed:" + PIG] == 5
    assert renderer.uses_reference
    assert not ComfyUIRenderer(url="http://127.0.0.1:9").uses_reference


def test_comfyui_uploads_the_reference_and_a_panel_without_one_fails_clearly(comfyui, tmp_path):
    path = write_flow(tmp_path, reference_workflow(bundled(), character=PIG))
    renderer = ComfyUIRenderer(url=comfyui.url, workflow_path=path, poll_seconds=0.05)
    picture = png(b"pig")
    params = {"prompt": SCENE, "seed": 5, "characters": {PIG: {"seed": 41}}}
    drawn = renderer.render(params, key="k_look", reference=reference(picture))
    assert drawn.data.startswith(b"\x89PNG")
    [upload] = comfyui.uploads
    assert (upload["name"], upload["data"], upload["type"]) == (
        "jaiweb-img_pigpanel.png",
        picture,
        "input",
    )
    assert (comfyui.input_dir / "jaiweb-img_pigpanel.png").read_bytes() == picture
    [queued] = comfyui.accepted
    assert queued["prompt"]["10"]["inputs"]["image"] == "jaiweb-img_pigpanel.png"
    assert queued["prompt"]["3"]["inputs"]["seed"] == 41

    with pytest.raises(ComfyUIError, match="no character of this panel has one"):
        renderer.render(params, key="k_nolook")
    with pytest.raises(ComfyUIError, match="image/svg"):
        renderer.render(params, key="k_svg", reference=reference(b"<svg/>", "image/svg+xml"))
    assert len(comfyui.accepted) == 1  # neither was queued


def test_the_loopback_comfyui_renames_other_bytes_under_a_taken_name_as_comfyui_does(comfyui):
    def upload(data: bytes, **fields: str) -> httpx.Response:
        files = {"image": ("pig.png", data, "image/png")}
        return httpx.post(f"{comfyui.url}/upload/image", files=files, data=fields)

    first, other = png(b"1"), png(b"2")
    assert upload(first).json() == {"name": "pig.png", "subfolder": "", "type": "input"}
    assert upload(first).json()["name"] == "pig.png"  # the same bytes: not written again
    assert upload(other).json()["name"] == "pig (1).png"
    assert upload(other, overwrite="true").json()["name"] == "pig.png"
    assert (comfyui.input_dir / "pig.png").read_bytes() == other
    assert httpx.post(f"{comfyui.url}/upload/image", data={"type": "input"}).status_code == 400
    missing = reference_workflow(bundled(), character=PIG)
    missing["10"]["inputs"]["image"] = "nobody.png"
    refused = httpx.post(f"{comfyui.url}/prompt", json={"prompt": missing})
    assert refused.status_code == 400
    assert refused.json()["node_errors"]["10"]["errors"][0]["type"] == "custom_validation_failed"


def test_openai_refuses_an_svg_reference_before_asking_the_server(openai_images):
    renderer = OpenAIImagesRenderer(base_url=openai_images.base_url, api_key="sk", timeout=5)
    with pytest.raises(BackendError, match="edits only PNG, JPEG or WebP"):
        renderer.render({"prompt": SCENE}, key="k", reference=reference(b"<svg/>", "image/svg+xml"))
    assert openai_images.requests == []


def test_openai_dall_e_2_edits_are_refused_by_the_server_for_an_rgb_picture(openai_images):
    renderer = OpenAIImagesRenderer(
        model="dall-e-2", base_url=openai_images.base_url, api_key="sk", timeout=5
    )
    with pytest.raises(BackendError, match="format must be in \\['RGBA', 'LA', 'L'\\], got RGB"):
        renderer.render({"prompt": SCENE}, key="k", reference=reference(png(b"rgb")))
    [edit] = openai_images.edits()
    assert edit.body["model"] == "dall-e-2" and edit.body["response_format"] == "b64_json"


def test_a1111_takes_the_characters_seed_and_the_panels_as_its_variation():
    renderer = A1111Renderer(url="http://127.0.0.1:9")
    look = {"seed": 41, "reference_image_id": "img_x"}
    params = {"prompt": SCENE, "seed": 5, "characters": {PIG: look}}
    body = renderer.request(params, key="k")
    assert (body["seed"], body["subseed"], body["subseed_strength"]) == (41, 5, LOOK_VARIATION)
    plain = renderer.request({**params, "characters": {PIG: {}}}, key="k")
    assert plain["seed"] == 5 and "subseed" not in plain
    assert "img_x" not in json.dumps(body)  # txt2img has no place for a reference
