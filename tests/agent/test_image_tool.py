"""generate_image: each call renders under a seed of its own key, so a repeat of the call is
the stored panel and another call (a regenerate's) is another picture."""

from __future__ import annotations

import pytest
from django.conf import settings

from jaiweb.agent.state import DEFAULT_STATE, AppState
from jaiweb.agent.tools.base import ToolContext
from jaiweb.agent.tools.image import GenerateImage, ImageArgs
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from journal.ids import idempotency_key, render_seed

pytestmark = pytest.mark.django_db
PROMPT = ImageArgs(prompt="猪猪侠在擂台上对决超人强")


def draw(owner, key: str):
    ctx = ToolContext(
        owner=owner,
        session_id="s_1",
        operation_id="op_1",
        tool_call_id="call_1",
        idempotency_key=key,
        app_state=AppState.model_validate(DEFAULT_STATE),
        branch=lambda: [],
    )
    out = GenerateImage().run(ctx, PROMPT)
    assert not out.is_error, out.content
    return out


def picture(image_id: str) -> bytes:
    return (settings.MEDIA_ROOT / Image.objects.get(pk=image_id).path).read_bytes()


def test_the_render_params_carry_the_seed_of_the_calls_key(alice):
    key = idempotency_key("op_1", "call_1")
    out = draw(alice, key)
    job = RenderJob.objects.get(key=key)
    state = AppState.model_validate(DEFAULT_STATE)
    assert job.params == {
        "prompt": PROMPT.prompt,
        "characters": {n: c.model_dump(mode="json") for n, c in state.characters.items()},
        "seed": render_seed(key),
    }
    assert job.result["image_id"] == out.details["image_id"]


def test_the_same_call_again_is_the_stored_panel_and_another_call_another_picture(alice):
    key, regenerated = idempotency_key("op_1", "call_1"), idempotency_key("op_2", "call_1")
    first = draw(alice, key)
    again = draw(alice, key)  # the call dispatched again after a crash: the same params
    assert again.details["replayed"] and again.details["image_id"] == first.details["image_id"]
    other = draw(alice, regenerated)
    assert not other.details["replayed"]
    assert RenderJob.objects.get(key=regenerated).params["seed"] == render_seed(regenerated)
    assert render_seed(regenerated) != render_seed(key)
    assert picture(other.details["image_id"]) != picture(first.details["image_id"])
    assert LedgerEntry.objects.filter(kind="charge").count() == 2
