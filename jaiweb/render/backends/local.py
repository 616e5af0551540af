"""The local renderer: deterministic SVG comic panels drawn here, the offline default.

It draws the panel script (scene, caption, speech; see ``jaiweb.render.panel``) with the
characters' state; everything a user typed is XML-escaped. A character's own seed (its
look) picks its figure's pose, so the figure stands the same way from panel to panel; a
reference picture means nothing to an SVG drawn here. Drawing again under the same
key gives the same bytes and the render service charges once per key, so the tool may
run it again after a crash: idempotent through the ledger.
"""

from __future__ import annotations

from typing import Any

from jaiweb.render.backends.base import BackendPolicy, Progress, ReferenceImage, RenderedImage
from jaiweb.render.panel import draw_panel


class LocalRenderer:
    """SVG panels from ``jaiweb.render.panel``: no network, nothing to probe."""

    name = "local"
    remote = False
    policy: BackendPolicy = "idempotent"
    uses_reference = False  # a character's look reaches it as its own seed only

    def render(
        self,
        params: dict[str, Any],
        *,
        key: str = "",
        progress: Progress | None = None,
        reference: ReferenceImage | None = None,
    ) -> RenderedImage:
        return RenderedImage(draw_panel(params).encode(), "image/svg+xml", "svg")

    def describe(self) -> str:
        return "Panels come from the local SVG renderer."

    def probe(self) -> str | None:
        return None
