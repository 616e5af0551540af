"""The openai image backend against a real loopback server speaking OpenAI's Images API."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from jaiweb.render.backends import renderer_for_settings
from jaiweb.render.backends.openai import OpenAIImagesRenderer
from jaiweb.render.errors import RenderFailed
from jaiweb.render.models import WELCOME_CREDITS, Image, LedgerEntry, RenderJob
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import PANEL_COST, render_request
from tests.support.image_servers import free_port_url, openai_error

pytestmark = pytest.mark.django_db
PARAMS = {"prompt": "猪猪侠决战超人强", "characters": {"猪猪侠": {"buff": "超级棒棒糖"}}}


@pytest.fixture
def configured(settings, openai_images):
    """The studio pointed at the loopback server as at OpenAI: its own base URL and key."""
    settings.JAIWEB_IMAGE_BACKEND = "openai"
    settings.JAIWEB_IMAGE_BASE_URL = openai_images.base_url
    settings.JAIWEB_IMAGE_API_KEY = "sk-image"
    settings.JAIWEB_IMAGE_MODEL = "gpt-image-1"
    settings.JAIWEB_IMAGE_SIZE = "1024x1024"
    settings.JAIWEB_IMAGE_QUALITY = None
    settings.JAIWEB_IMAGE_TIMEOUT = 10
    return settings


def stored_bytes(image_id: str, media: Path) -> bytes:
    return (media / Image.objects.get(pk=image_id).path).read_bytes()


def charges() -> int:
    return LedgerEntry.objects.filter(kind="charge").count()


def test_a_gpt_image_model_is_asked_without_response_format(
    configured, openai_images, alice, media
):
    got = render_request(user=alice, key="k1", params=PARAMS)
    [request] = openai_images.renders()
    assert "response_format" not in request.body
    assert request.body["model"] == "gpt-image-1"
    assert (request.body["n"], request.body["size"]) == (1, "1024x1024")
    assert "quality" not in request.body  # unset: the server's default
    assert "猪猪侠决战超人强" in request.body["prompt"]
    assert "超级棒棒糖" in request.body["prompt"]  # the cast as the state has it
    assert request.headers["authorization"] == "Bearer sk-image"
    # the stored panel is the server's picture, byte for byte
    assert stored_bytes(got.image_id, media) == openai_images.sent[0]
    assert (got.backend, got.content_type, got.cost, got.replayed) == (
        "openai",
        "image/png",
        PANEL_COST,
        False,
    )
    assert wallet_balance(user=alice) == WELCOME_CREDITS - PANEL_COST


def test_a_dall_e_model_is_asked_for_b64_json(configured, openai_images, alice, media):
    configured.JAIWEB_IMAGE_MODEL = "dall-e-3"
    configured.JAIWEB_IMAGE_SIZE = "1792x1024"
    configured.JAIWEB_IMAGE_QUALITY = "hd"
    got = render_request(user=alice, key="k1", params=PARAMS)
    [request] = openai_images.renders()
    assert request.body["response_format"] == "b64_json"
    assert (request.body["model"], request.body["size"], request.body["quality"]) == (
        "dall-e-3",
        "1792x1024",
        "hd",
    )
    assert stored_bytes(got.image_id, media) == openai_images.sent[0]


def test_a_repeat_under_the_key_asks_the_server_nothing(configured, openai_images, alice):
    first = render_request(user=alice, key="k1", params=PARAMS)
    again = render_request(user=alice, key="k1", params=PARAMS)
    assert again.replayed and again.image_id == first.image_id
    assert len(openai_images.renders()) == 1 and charges() == 1


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (
            400,
            openai_error(
                "Your request was rejected as a result of our safety system.",
                type="image_generation_user_error",
                param=None,
                code="moderation_blocked",
            ),
            "HTTP 400: Your request was rejected as a result of our safety system.",
        ),
        (
            500,
            openai_error(
                "The server had an error while processing your request. Sorry about that!",
                type="server_error",
                param=None,
                code=None,
            ),
            "HTTP 500: The server had an error while processing your request.",
        ),
        (502, "<html>Bad Gateway</html>", "HTTP 502: <html>Bad Gateway</html>"),
    ],
)
def test_a_refusal_fails_once_with_what_the_server_said_and_charges_nothing(
    configured, openai_images, alice, status, body, said
):
    openai_images.answer_next(status, body)
    with pytest.raises(RenderFailed, match="nothing was charged") as failed:
        render_request(user=alice, key="k1", params=PARAMS)
    assert said in str(failed.value)
    assert "BackendError" not in str(failed.value)  # a message for people, not a class name
    job = RenderJob.objects.get(key="k1")
    assert job.status == RenderJob.FAILED and said in job.error
    assert charges() == 0 and wallet_balance(user=alice) == WELCOME_CREDITS
    # the failure is stored under the key: a repeat is told the same, the server not asked
    with pytest.raises(RenderFailed, match="HTTP"):
        render_request(user=alice, key="k1", params=PARAMS)
    assert len(openai_images.renders()) == 1


def test_a_refused_key_says_so(configured, openai_images, alice):
    openai_images.api_key = "sk-the-right-one"
    with pytest.raises(RenderFailed, match=r"HTTP 401: Incorrect API key provided\."):
        render_request(user=alice, key="k1", params=PARAMS)
    assert charges() == 0


def test_an_unreachable_server_fails_once_and_charges_nothing(configured, alice):
    configured.JAIWEB_IMAGE_BASE_URL = free_port_url() + "/v1"
    with pytest.raises(RenderFailed, match="could not reach the image server at http://127"):
        render_request(user=alice, key="k1", params=PARAMS)
    assert RenderJob.objects.get(key="k1").status == RenderJob.FAILED
    assert charges() == 0 and wallet_balance(user=alice) == WELCOME_CREDITS


def test_an_answer_that_is_not_a_picture_is_refused(configured, openai_images, alice):
    not_a_picture = base64.b64encode(b"<html>hello</html>").decode()
    openai_images.answer_next(200, {"created": 1, "data": [{"b64_json": not_a_picture}]})
    with pytest.raises(RenderFailed, match="not a PNG, JPEG or WebP image"):
        render_request(user=alice, key="k1", params=PARAMS)
    openai_images.answer_next(200, {"created": 1, "data": [{"url": "https://x.example/a.png"}]})
    with pytest.raises(RenderFailed, match=r"no base64 image \(only a URL\)"):
        render_request(user=alice, key="k2", params=PARAMS)
    openai_images.answer_next(200, "<html>a proxy's page</html>")
    with pytest.raises(RenderFailed, match="answered with no image"):
        render_request(user=alice, key="k3", params=PARAMS)
    assert charges() == 0 and not Image.objects.exists()


def test_the_llm_settings_and_the_sdk_environment_are_never_used(
    configured, openai_images, alice, monkeypatch
):
    """Issue 28: image requests went to the director's server with the director's key."""
    configured.JAIWEB_LLM_BASE_URL = free_port_url() + "/v1"
    configured.JAIWEB_LLM_API_KEY = "llm-key"
    configured.JAIWEB_IMAGE_API_KEY = None  # a server of one's own that needs no key
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("OPENAI_BASE_URL", free_port_url() + "/v1")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-leak")
    render_request(user=alice, key="k1", params=PARAMS)
    [request] = openai_images.renders()
    assert request.headers["authorization"] == "Bearer not-needed"
    assert "openai-organization" not in request.headers


def test_the_backend_declares_at_most_once_and_describes_itself(configured, openai_images):
    renderer = renderer_for_settings()
    assert isinstance(renderer, OpenAIImagesRenderer)
    assert (renderer.name, renderer.policy) == ("openai", "at_most_once")
    assert renderer.describe() == (
        f"Panels come from the OpenAI-compatible image server at {openai_images.url} (gpt-image-1)."
    )
    assert OpenAIImagesRenderer(model="gpt-image-1", api_key="k").describe() == (
        "Panels come from OpenAI Images (gpt-image-1)."
    )


def test_the_probe_says_whether_the_server_answers(configured, openai_images):
    assert renderer_for_settings().probe() is None
    assert openai_images.requests[-1].path == "/v1/models"
    openai_images.api_key = "sk-the-right-one"
    assert renderer_for_settings().probe() == "the server refused the API key (HTTP 401)"
    configured.JAIWEB_IMAGE_BASE_URL = free_port_url() + "/v1"
    assert renderer_for_settings().probe().startswith("unreachable: ")
    assert not openai_images.renders()  # a probe never draws
