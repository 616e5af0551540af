"""Render backends: the local panel renderer (the offline default) and OpenAI images.

The local renderer draws a deterministic SVG comic panel from the prompt (a panel script:
scene, caption, speech; see ``jaiweb.render.panel``) and the characters' state. Everything
a user typed is XML-escaped.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Protocol

from jaiweb.render.panel import draw_panel


@dataclass(frozen=True, slots=True)
class RenderedImage:
    data: bytes
    content_type: str
    extension: str


class Renderer(Protocol):
    name: str

    def render(self, params: dict[str, Any]) -> RenderedImage: ...


class LocalRenderer:
    """Deterministic SVG panels, drawn here: the offline default. Honours idempotency keys."""

    name = "local"

    def render(self, params: dict[str, Any]) -> RenderedImage:
        return RenderedImage(draw_panel(params).encode(), "image/svg+xml", "svg")


class OpenAIImageRenderer:
    """OpenAI images: a paid external call that does not honour our keys (at most once)."""

    name = "openai"

    def __init__(
        self, *, model: str = "gpt-image-1", base_url: str | None = None, api_key: str | None = None
    ):
        from openai import OpenAI

        # max_retries=0: the agent loop decides about retries, each one journaled
        self.client = OpenAI(base_url=base_url, api_key=api_key or "unset", max_retries=0)
        self.model = model

    def render(self, params: dict[str, Any]) -> RenderedImage:
        characters = params.get("characters") or {}
        described = "; ".join(
            f"{name}: {s.get('buff', '')}, {s.get('skill', '')}, {s.get('mood', '')}"
            for name, s in characters.items()
            if isinstance(s, dict)
        )
        prompt = f"Comic panel. {params.get('prompt', '')}. Characters: {described}"
        result = self.client.images.generate(
            model=self.model, prompt=prompt, size="1024x1024", n=1, response_format="b64_json"
        )
        return RenderedImage(base64.b64decode(result.data[0].b64_json), "image/png", "png")
