"""The local renderer: deterministic SVG comic panels drawn here, the offline default.

It draws the panel script (scene, caption, speech; see ``jaiweb.render.panel``) with the
characters' state; everything a user typed is XML-escaped. Drawing again under the same
key gives the same bytes and the render service charges once per key, so the tool may
run it again after a crash: idempotent through the ledger.
"""

from __future__ import annotations

from typing import Any

from jaiweb.render.backends.base import BackendPolicy, Progress, RenderedImage
from jaiweb.render.panel import draw_panel


class LocalRenderer:
    """SVG panels from ``jaiweb.render.panel``: no network, nothing to probe."""

    name = "local"
    policy: BackendPolicy = "idempotent"

    def render(
        self, params: dict[str, Any], *, key: str = "", progress: Progress | None = None
    ) -> RenderedImage:
        return RenderedImage(draw_panel(params).encode(), "image/svg+xml", "svg")

    def describe(self) -> str:
        return "Panels come from the local SVG renderer."

    def probe(self) -> str | None:
        return None
