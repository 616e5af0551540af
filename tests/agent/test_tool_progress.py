"""A slow tool's progress becomes live events: the render backend's reports reach the tool's
context, and each change of how far it is becomes one ``tool_progress`` event."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import DEFAULT_STATE, AppState
from jaiweb.agent.tool_calls import progress_reporter
from jaiweb.agent.tools.base import ToolContext
from jaiweb.agent.tools.image import GenerateImage, ImageArgs
from jaiweb.render.backends.base import RenderedImage

pytestmark = pytest.mark.django_db
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


class Emitted:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def emit(self, event: dict) -> None:
        self.events.append(event)


def test_each_change_of_progress_is_one_event_and_unknown_maximums_none():
    run = Emitted()
    report = progress_reporter(run.emit, "generate_image", "call_1")
    for value, maximum in ((0, 0), (3, 20), (3, 20), (8, 20), (8, 20), (0, 0), (20, 20)):
        report(value, maximum)
    assert [(e["value"], e["max"]) for e in run.events] == [(3, 20), (8, 20), (20, 20)]
    assert {e["type"] for e in run.events} == {"tool_progress"}
    assert {(e["tool"], e["tool_call_id"]) for e in run.events} == {("generate_image", "call_1")}


class Reporting:
    """A remote backend that reports two sampler steps before its picture."""

    name, policy, remote = "reporting", "idempotent", True

    def render(self, params, *, key, progress=None):
        for step in (1, 2):
            progress(step, 2)
        return RenderedImage(PNG, "image/png", "png")

    def describe(self) -> str:
        return "reporting"

    def probe(self) -> None:
        return None


def test_the_image_tool_hands_the_backends_reports_to_its_context(
    alice, monkeypatch, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr("jaiweb.agent.tools.image.renderer_for_settings", Reporting)
    heard = []
    ctx = ToolContext(
        owner=alice,
        session_id="s_1",
        operation_id="op_1",
        tool_call_id="call_1",
        idempotency_key="k_progress",
        app_state=AppState.model_validate(DEFAULT_STATE),
        branch=lambda: [],
        progress=lambda value, maximum: heard.append((value, maximum)),
    )
    out = GenerateImage().run(ctx, ImageArgs(prompt="a slow panel"))
    assert not out.is_error, out.content
    assert heard == [(1, 2), (2, 2)]
