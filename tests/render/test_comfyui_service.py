"""ComfyUI behind the render service: configured by its settings, refused at start-up when
its workflow is broken, and reconciled under the key when a render is taken over."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError
from django.utils import timezone

from jaiweb.render.backends import backend_policy, image_backend_problems, renderer_for_settings
from jaiweb.render.backends.comfyui import ComfyUIRenderer, prompt_id_for
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from jaiweb.render.services import params_hash, render_request
from tests.support.comfyui_server import comfyui as comfyui  # the fixture

pytestmark = pytest.mark.django_db
PARAMS = {"prompt": "Pig-Man in the ring", "characters": {}}


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def configured(settings, comfyui):
    settings.JAIWEB_IMAGE_BACKEND = "comfyui"
    settings.JAIWEB_COMFYUI_URL = comfyui.url
    settings.JAIWEB_COMFYUI_WORKFLOW = None
    settings.JAIWEB_COMFYUI_CHECKPOINT = None
    return comfyui


def fast(renderer: ComfyUIRenderer) -> ComfyUIRenderer:
    renderer.poll_seconds = 0.02
    return renderer


def test_the_factory_builds_comfyui_from_its_settings(configured):
    renderer = renderer_for_settings()
    assert isinstance(renderer, ComfyUIRenderer) and renderer.url == configured.url
    assert backend_policy() == renderer.policy == "idempotent"
    assert image_backend_problems() == []


def test_the_stored_panel_is_the_servers_picture_and_charged_once(configured, alice, media):
    renderer = fast(renderer_for_settings())
    first = render_request(user=alice, key="k_one", params=PARAMS, renderer=renderer)
    again = render_request(user=alice, key="k_one", params=PARAMS, renderer=renderer)
    image = Image.objects.get(pk=first.image_id)
    name = f"{prompt_id_for('k_one')}_00001_.png"
    assert (media / image.path).read_bytes() == (
        configured.output_dir / "jaiweb" / name
    ).read_bytes()
    assert first.backend == "comfyui" and again.replayed and again.image_id == first.image_id
    assert configured.executions[prompt_id_for("k_one")] == 1
    assert LedgerEntry.objects.filter(kind="charge").count() == 1


def test_a_render_taken_over_after_a_crash_takes_the_finished_picture(configured, alice, media):
    """The first holder crashed after ComfyUI drew the panel and before the service stored
    it: the job is taken over once its lease is out, and the picture ComfyUI made is the
    one stored. ComfyUI executed the prompt once, and one charge was made."""
    renderer = fast(renderer_for_settings())
    prompt_id = prompt_id_for("k_crash")
    renderer.render(PARAMS, key="k_crash")  # the crashed holder's render, done on the GPU
    configured.restart()  # and ComfyUI restarted meanwhile: its history is gone
    now = timezone.now()
    RenderJob.objects.create(
        key="k_crash",
        user=alice,
        params=PARAMS,
        params_hash=params_hash(PARAMS),
        backend="comfyui",
        cost=10,
        status=RenderJob.IN_PROGRESS,
        created_at=now - timedelta(minutes=5),
        lease_expires_at=now - timedelta(seconds=1),
    )
    got = render_request(user=alice, key="k_crash", params=PARAMS, renderer=renderer)
    stored = (media / Image.objects.get(pk=got.image_id).path).read_bytes()
    assert stored == (configured.output_dir / "jaiweb" / f"{prompt_id}_00001_.png").read_bytes()
    assert configured.executions[prompt_id] == 1
    assert LedgerEntry.objects.filter(kind="charge", job_key="k_crash").count() == 1


def broken_workflow(tmp_path):
    path = tmp_path / "ui-export.json"
    path.write_text(json.dumps({"1": {"class_type": "KSampler", "inputs": {}}}))
    return path


def test_check_and_start_up_refuse_a_broken_workflow_naming_the_file(settings, tmp_path):
    settings.JAIWEB_IMAGE_BACKEND = "comfyui"
    settings.JAIWEB_COMFYUI_URL = "http://127.0.0.1:9"
    settings.JAIWEB_COMFYUI_WORKFLOW = str(broken_workflow(tmp_path))
    [problem] = image_backend_problems()
    assert "JAIWEB_COMFYUI_WORKFLOW" in problem and "ui-export.json" in problem
    assert "SaveImage" in problem
    with pytest.raises(SystemCheckError, match=r"ui-export\.json"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    for command in ("studio", "runagents"):
        with pytest.raises(CommandError, match=r"ui-export\.json"):
            call_command(command, stdout=io.StringIO(), stderr=io.StringIO())
