"""The a1111 image backend against a real loopback server speaking AUTOMATIC1111's web API."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jaiweb.render.backends import renderer_for_settings
from jaiweb.render.backends.a1111 import A1111Renderer, seed_for
from jaiweb.render.errors import RenderFailed
from jaiweb.render.models import WELCOME_CREDITS, Image, LedgerEntry, RenderJob
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import PANEL_COST, render_request
from tests.support.image_servers import FakeA1111, a1111_error, free_port_url

pytestmark = pytest.mark.django_db
PARAMS = {"prompt": "猪猪侠决战超人强", "characters": {"猪猪侠": {"buff": "超级棒棒糖"}}}


@pytest.fixture
def configured(settings, a1111):
    settings.JAIWEB_IMAGE_BACKEND = "a1111"
    settings.JAIWEB_A1111_URL = a1111.url
    settings.JAIWEB_A1111_SIZE = "512x768"
    settings.JAIWEB_A1111_STEPS = 7
    settings.JAIWEB_IMAGE_TIMEOUT = 10
    return settings


def charges() -> int:
    return LedgerEntry.objects.filter(kind="charge").count()


def test_a_render_sends_the_panel_and_stores_the_servers_png(configured, a1111, alice, media):
    got = render_request(user=alice, key="k1", params=PARAMS)
    [request] = a1111.renders()
    assert request.method == "POST"
    body = request.body
    assert "猪猪侠决战超人强" in body["prompt"] and "超级棒棒糖" in body["prompt"]
    assert body["negative_prompt"]
    assert (body["width"], body["height"], body["steps"]) == (512, 768, 7)
    assert body["seed"] == seed_for(PARAMS, "k1") and isinstance(body["seed"], int)
    assert (body["batch_size"], body["n_iter"]) == (1, 1)
    stored = (media / Image.objects.get(pk=got.image_id).path).read_bytes()
    assert stored == a1111.sent[0]  # the server's PNG, byte for byte
    assert (got.backend, got.content_type, got.cost) == ("a1111", "image/png", PANEL_COST)
    assert charges() == 1


def test_the_seed_follows_the_call_unless_the_panel_names_one(configured, a1111, alice):
    render_request(user=alice, key="k1", params=PARAMS)
    render_request(user=alice, key="k2", params=PARAMS)
    render_request(user=alice, key="k3", params={**PARAMS, "seed": 1234})
    seeds = [r.body["seed"] for r in a1111.renders()]
    assert seeds[0] != seeds[1]  # another call, another picture
    assert seeds[2] == 1234
    assert seed_for(PARAMS, "k1") == seeds[0]  # the same call: the same seed, every time


def test_a_500_fails_once_with_what_the_web_ui_said_and_charges_nothing(configured, a1111, alice):
    a1111.answer_next(
        500,
        a1111_error("OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB"),
    )
    with pytest.raises(RenderFailed, match="nothing was charged") as failed:
        render_request(user=alice, key="k1", params=PARAMS)
    message = str(failed.value)
    assert f"AUTOMATIC1111 at {a1111.url} failed the render: HTTP 500: OutOfMemoryError" in message
    assert "CUDA out of memory. Tried to allocate 2.00 GiB" in message
    assert RenderJob.objects.get(key="k1").status == RenderJob.FAILED
    assert charges() == 0 and wallet_balance(user=alice) == WELCOME_CREDITS
    with pytest.raises(RenderFailed, match="OutOfMemoryError"):  # stored: not asked again
        render_request(user=alice, key="k1", params=PARAMS)
    assert len(a1111.renders()) == 1


def test_a_validation_error_says_which_field(configured, a1111, alice):
    a1111.answer_next(
        422,
        {"detail": [{"loc": ["body", "steps"], "msg": "value is not a valid integer"}]},
    )
    with pytest.raises(RenderFailed, match=r"HTTP 422: .*value is not a valid integer"):
        render_request(user=alice, key="k1", params=PARAMS)
    assert charges() == 0


def test_an_answer_without_a_picture_is_refused(configured, a1111, alice):
    a1111.answer_next(200, "<html>a proxy's page</html>")
    with pytest.raises(RenderFailed, match="answered with something other than JSON"):
        render_request(user=alice, key="k1", params=PARAMS)
    a1111.answer_next(200, {"images": [], "parameters": {}, "info": "{}"})
    with pytest.raises(RenderFailed, match="answered with no image"):
        render_request(user=alice, key="k2", params=PARAMS)
    a1111.answer_next(200, {"images": ["not base64!"], "parameters": {}, "info": "{}"})
    with pytest.raises(RenderFailed, match="not valid base64"):
        render_request(user=alice, key="k3", params=PARAMS)
    assert charges() == 0 and not Image.objects.exists()


def test_a_web_ui_started_without_api_says_so(configured, alice):
    server = FakeA1111(api=False)
    server.start()
    try:
        configured.JAIWEB_A1111_URL = server.url
        with pytest.raises(RenderFailed, match="start the web UI with --api"):
            render_request(user=alice, key="k1", params=PARAMS)
        assert renderer_for_settings().probe() == (
            "no API at this address (start the web UI with --api)"
        )
    finally:
        server.stop()
    assert charges() == 0


def test_an_unreachable_web_ui_fails_once_and_charges_nothing(configured, alice):
    configured.JAIWEB_A1111_URL = free_port_url()
    with pytest.raises(RenderFailed, match="could not reach AUTOMATIC1111 at http://127"):
        render_request(user=alice, key="k1", params=PARAMS)
    assert charges() == 0 and wallet_balance(user=alice) == WELCOME_CREDITS
    assert renderer_for_settings().probe().startswith("unreachable: ")


def test_progress_renews_the_lease_while_the_web_ui_draws(configured, a1111, alice):
    """Each sampling step the web UI reports renews the render's lease (issue 28: a render
    that takes minutes must not be taken over while its backend still works on it)."""
    a1111.step_seconds = 0.03
    renderer = A1111Renderer(url=a1111.url, steps=10, poll_seconds=0.01)
    started = timezone.now() - timedelta(minutes=5)  # the first lease ran out long ago
    seen: list[tuple[int, int, object]] = []

    def heard(value: int, maximum: int) -> None:
        lease = RenderJob.objects.get(key="k1").lease_expires_at
        seen.append((value, maximum, lease))

    got = render_request(
        user=alice, key="k1", params=PARAMS, renderer=renderer, now=started, on_progress=heard
    )
    assert not got.replayed and charges() == 1
    assert seen, "the web UI's progress never reached the render service"
    assert {maximum for _, maximum, _ in seen} == {10}
    steps = [value for value, _, _ in seen]
    assert steps == sorted(steps) and steps[-1] > steps[0]
    first_lease = started + timedelta(seconds=30)
    assert all(lease > first_lease + timedelta(minutes=4) for _, _, lease in seen)
    assert RenderJob.objects.get(key="k1").lease_expires_at is None  # finished: no lease


def test_the_backend_declares_at_most_once_and_describes_itself(configured, a1111):
    renderer = renderer_for_settings()
    assert isinstance(renderer, A1111Renderer)
    assert (renderer.name, renderer.policy) == ("a1111", "at_most_once")
    assert renderer.describe() == (
        f"Panels come from AUTOMATIC1111 at {a1111.url} (512x768, 7 steps)."
    )
    assert renderer.probe() is None
    assert a1111.requests[-1].path == "/sdapi/v1/progress?skip_current_image=true"
    assert not a1111.renders()  # a probe never draws


def test_credentials_in_the_url_are_sent_and_never_shown(configured, a1111):
    port = a1111.url.rsplit(":", 1)[1]
    configured.JAIWEB_A1111_URL = f"http://jai:s3cret@127.0.0.1:{port}"
    renderer = renderer_for_settings()
    assert "s3cret" not in renderer.describe() and "jai" not in renderer.describe()
    assert renderer.probe() is None
    assert a1111.requests[-1].headers["authorization"].startswith("Basic ")
