"""Render backends: the local panel renderer (the offline default) and OpenAI images.

The local renderer draws a deterministic SVG panel: the prompt's scene as a caption,
each character with its buff, skill and mood. Everything a user typed is XML-escaped.
"""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Protocol
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 400


@dataclass(frozen=True, slots=True)
class RenderedImage:
    data: bytes
    content_type: str
    extension: str


class Renderer(Protocol):
    name: str

    def render(self, params: dict[str, Any]) -> RenderedImage: ...


def _attr(text: str) -> str:
    return escape(text, {'"': "&quot;", "'": "&#39;"})


def _wrap(text: str, width: int, lines: int) -> list[str]:
    """Wrap by characters (CJK has no spaces); the last line ends with … when cut."""
    text = " ".join(text.split())
    out = [text[i : i + width] for i in range(0, len(text), width)] or [""]
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: width - 1] + "…"
    return out


def _hue(seed: str) -> int:
    return int(hashlib.sha256(seed.encode()).hexdigest()[:4], 16) % 360


SMILES = {"得意": "M -14 14 Q 0 28 14 14", "开心": "M -14 14 Q 0 28 14 14"}
FROWNS = {"狼狈": "M -14 22 Q 0 10 14 22", "难过": "M -14 22 Q 0 10 14 22"}


def _character(name: str, state: dict[str, Any], x: int, y: int, hue: int) -> str:
    buff = str(state.get("buff", "无"))
    skill = str(state.get("skill", "无"))
    mood = str(state.get("mood", ""))
    mouth = SMILES.get(mood) or FROWNS.get(mood) or "M -12 18 L 12 18"
    sweat = (
        '<path d="M 34 -30 q 6 10 0 14 q -6 -4 0 -14" fill="#7cc4ff"/>'
        if mood in FROWNS or "虚脱" in buff
        else ""
    )
    burst = ""
    if skill and skill != "无":
        points = " ".join(
            f"{70 + (26 if i % 2 else 12) * math.cos(i * 0.6283):.1f},"
            f"{-40 + (26 if i % 2 else 12) * math.sin(i * 0.6283):.1f}"
            for i in range(10)
        )
        burst = (
            f'<polygon points="{points}" fill="hsl({(hue + 40) % 360},90%,60%)" '
            'stroke="#333" stroke-width="1.5"/>'
        )
    return f"""<g transform="translate({x},{y})">
  {burst}
  <ellipse cx="0" cy="70" rx="34" ry="42" fill="#f6a5c0" stroke="#333" stroke-width="2"/>
  <path d="M -30 -30 L -40 -60 L -12 -40 Z" fill="#f6a5c0" stroke="#333" stroke-width="2"/>
  <path d="M 30 -30 L 40 -60 L 12 -40 Z" fill="#f6a5c0" stroke="#333" stroke-width="2"/>
  <circle cx="0" cy="0" r="44" fill="#f9b8cf" stroke="#333" stroke-width="2"/>
  <circle cx="-15" cy="-10" r="5" fill="#222"/><circle cx="15" cy="-10" r="5" fill="#222"/>
  <ellipse cx="0" cy="6" rx="13" ry="9" fill="#f48fb1" stroke="#333" stroke-width="1.5"/>
  <path d="{mouth}" fill="none" stroke="#333" stroke-width="2.5"/>
  {sweat}
  <text x="0" y="132" text-anchor="middle" font-size="15" font-weight="bold">{escape(name)}</text>
  <text x="0" y="150" text-anchor="middle" font-size="12">{escape(buff)}</text>
  <text x="0" y="166" text-anchor="middle" font-size="12">{escape(skill)}{
        (" · " + escape(mood)) if mood else ""
    }</text>
</g>"""


class LocalRenderer:
    """Deterministic SVG panels, drawn here: the offline default. Honours idempotency keys."""

    name = "local"

    def render(self, params: dict[str, Any]) -> RenderedImage:
        prompt = str(params.get("prompt", ""))
        characters: dict[str, Any] = params.get("characters") or {}
        hue = _hue(prompt)
        names = list(characters)[:4]
        step = WIDTH // (len(names) + 1) if names else WIDTH // 2
        figures = "\n".join(
            _character(
                n,
                characters[n] if isinstance(characters[n], dict) else {},
                step * (i + 1),
                120,
                hue,
            )
            for i, n in enumerate(names)
        )
        caption = "".join(
            f'<text x="20" y="{322 + 20 * i}" font-size="15">{escape(line)}</text>'
            for i, line in enumerate(_wrap(prompt, 38, 3))
        )
        sky, sky2, floor = hue, (hue + 30) % 360, (hue + 180) % 360
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" role="img" '
            f'aria-label="{_attr(prompt[:120])}">',
            '<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">'
            f'<stop offset="0" stop-color="hsl({sky},70%,85%)"/>'
            f'<stop offset="1" stop-color="hsl({sky2},60%,70%)"/></linearGradient></defs>',
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="url(#sky)"/>',
            f'<rect y="250" width="{WIDTH}" height="50" fill="hsl({floor},35%,55%)"/>',
            figures,
            f'<rect x="10" y="302" width="{WIDTH - 20}" height="88" rx="8" fill="#fffdf5" '
            'stroke="#333" stroke-width="2"/>',
            caption,
            f'<text x="{WIDTH - 12}" y="16" text-anchor="end" font-size="10" fill="#333">'
            "local renderer · offline</text>",
            "</svg>",
        ]
        svg = "\n".join(parts)
        return RenderedImage(svg.encode(), "image/svg+xml", "svg")


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
