"""A render on another server lends its worker back while it waits: with every worker of a
runner on renders held at the server, another user's chat prompt is still answered, and
each render goes on to its own panel once the server lets it finish."""

from __future__ import annotations

import threading

import pytest

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import prompt_submit
from jaiweb.render.backends.base import RenderedImage
from jaiweb.render.models import LedgerEntry
from jaiweb.store.models import Operation
from jaiweb.store.services import session_create
from tests.support.runs import runner_running
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


class HeldRenderer:
    """A remote backend whose server draws nothing until ``gate`` opens."""

    name = "held"
    policy = "idempotent"
    remote = True

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.waiting = 0
        self.lock = threading.Lock()

    def render(self, params, *, key, progress=None):
        with self.lock:
            self.waiting += 1
        assert self.gate.wait(60), "the test never opened the gate"
        return RenderedImage(PNG + key.encode(), "image/png", "png")

    def describe(self) -> str:
        return "held"

    def probe(self) -> None:
        return None


@pytest.fixture
def held(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    renderer = HeldRenderer()
    monkeypatch.setattr("jaiweb.agent.tools.image.renderer_for_settings", lambda: renderer)
    monkeypatch.setattr("jaiweb.agent.tools.image.backend_policy", lambda: "idempotent")
    yield renderer
    renderer.gate.set()


@pytest.fixture
def runner():
    with runner_running(workers=1) as running:
        yield running


def finished(op: str) -> str | None:
    return Operation.objects.get(pk=op).outcome


def test_renders_held_at_the_server_do_not_hold_back_a_chat(alice, bob, held, runner):
    auto = {**DEFAULT_STATE, "permission_mode": "auto"}
    renders = []
    for i in range(3):
        session = session_create(owner=bob, title=f"render {i}", initial_app_state=auto)
        renders.append(prompt_submit(session=session, user=bob, text=f"/draw 第{i}格").operation_id)
    # One worker, and all three renders are at the server at once: each lent it back.
    wait_until(lambda: held.waiting == 3, 30, "the three renders to reach the server")
    chat = session_create(owner=alice, title="meanwhile")
    op = prompt_submit(session=chat, user=alice, text="/say 你好").operation_id
    wait_until(lambda: finished(op), 30, "alice's chat to be answered")
    assert finished(op) == "completed"
    assert [finished(r) for r in renders] == [None, None, None]  # still drawing
    held.gate.set()
    wait_until(lambda: all(finished(r) for r in renders), 30, "the renders to finish")
    assert [finished(r) for r in renders] == ["completed"] * 3
    assert LedgerEntry.objects.filter(kind="charge").count() == 3
