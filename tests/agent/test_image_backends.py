"""generate_image through the agent loop with each image backend, against loopback servers
speaking each backend's protocol: the backend's own policy declaration is what T1 records,
and recovery treats the call by it."""

from __future__ import annotations

import pytest

from jaiweb.agent.runner import Runner
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.render.models import Image, LedgerEntry
from jaiweb.render.selectors import wallet_balance
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from tests.support.builders import operation_stopped_at
from tests.support.image_servers import a1111 as a1111  # the fixture
from tests.support.image_servers import free_port_url
from tests.support.image_servers import openai_images as openai_images  # the fixture
from tests.support.scripted import ScriptedProvider, calls, text

BACKENDS = [("local", "idempotent"), ("openai", "at_most_once"), ("a1111", "at_most_once")]


@pytest.fixture
def backend(request, settings, openai_images, a1111):
    """Configure the backend named by the test's parameter; the server it talks to, if any."""
    name = request.param
    settings.JAIWEB_IMAGE_BACKEND = name
    settings.JAIWEB_IMAGE_TIMEOUT = 10
    settings.JAIWEB_IMAGE_BASE_URL = openai_images.base_url
    settings.JAIWEB_IMAGE_API_KEY = "sk-image"
    settings.JAIWEB_IMAGE_MODEL = "gpt-image-1"
    settings.JAIWEB_IMAGE_SIZE = "1024x1024"
    settings.JAIWEB_IMAGE_QUALITY = None
    settings.JAIWEB_A1111_URL = a1111.url
    settings.JAIWEB_A1111_SIZE = "512x512"
    settings.JAIWEB_A1111_STEPS = 4
    return {"local": None, "openai": openai_images, "a1111": a1111}[name]


def auto_session(owner):
    return session_create(
        owner=owner, title="auto", initial_app_state={**DEFAULT_STATE, "permission_mode": "auto"}
    )


def draw(harness) -> str:
    op = harness.prompt("画一格")
    provider = ScriptedProvider(calls(("generate_image", {"prompt": "擂台对决"})), text("画好了"))
    assert harness.run(provider) == "finished"
    return op


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("backend", "policy"), BACKENDS, indirect=["backend"], ids=[b for b, _ in BACKENDS]
)
def test_the_backends_declaration_is_the_policy_in_t1(backend, policy, harness, media, settings):
    harness.session = auto_session(harness.session.owner)
    op = draw(harness)
    [t1] = [r for r in operation_records(operation_id=op) if r.type == "tool_dispatched"]
    assert t1.policy == policy
    result = next(
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    )
    assert not result.is_error
    details = result.details
    assert details["backend"] == settings.JAIWEB_IMAGE_BACKEND
    assert (details["cost"], details["replayed"]) == (10, False)
    image = Image.objects.get(pk=details["image_id"])
    if backend is not None:  # the panel is the server's picture, drawn under the call's key
        [request] = backend.renders()
        assert "擂台对决" in request.body["prompt"]
        assert (media / image.path).read_bytes() == backend.sent[0]
    assert wallet_balance(user=harness.session.owner) == 90


@pytest.mark.django_db
def test_an_unreachable_backend_fails_the_call_once_and_charges_nothing(harness, settings, media):
    settings.JAIWEB_IMAGE_BACKEND = "a1111"
    settings.JAIWEB_A1111_URL = free_port_url()
    harness.session = auto_session(harness.session.owner)
    draw(harness)
    result = next(
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    )
    assert result.is_error
    assert "could not reach AUTOMATIC1111 at http://127.0.0.1:" in result.content
    assert "nothing was charged" in result.content
    assert result.details == {"code": "render_failed", "backend": "a1111"}
    assert not LedgerEntry.objects.filter(kind="charge").exists()
    assert wallet_balance(user=harness.session.owner) == 100


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("backend", "policy"), BACKENDS, indirect=["backend"], ids=[b for b, _ in BACKENDS]
)
def test_recovery_treats_an_open_render_by_the_declared_policy(
    backend, policy, alice, media, settings
):
    """A runner died after T1 of generate_image: an idempotent backend's call is dispatched
    again under the same key; an at-most-once backend's call waits in the inbox, and its
    server is never asked a second time."""
    session = auto_session(alice)
    op = operation_stopped_at(
        session, "dispatched", tool="generate_image", args={"prompt": "擂台"}, lease_seconds=1
    )
    [t1] = [r for r in operation_records(operation_id=op) if r.type == "tool_dispatched"]
    assert t1.policy == policy
    Runner().recover()
    dispatches = [r for r in operation_records(operation_id=op) if r.type == "tool_dispatched"]
    if policy == "idempotent":
        assert not Operation.objects.get(pk=op).is_parked
        assert [d.dispatch_attempt for d in dispatches] == [1, 2]
        assert {d.idempotency_key for d in dispatches} == {t1.idempotency_key}
    else:
        assert Operation.objects.get(pk=op).is_parked
        assert len(dispatches) == 1
        assert backend.renders() == []
    assert LedgerEntry.objects.filter(kind="charge").count() == (policy == "idempotent")
