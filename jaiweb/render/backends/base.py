"""What every image backend implements, and what the HTTP backends share.

A backend draws one panel from the render parameters. It declares what it can promise
after a crash (``policy``): ``idempotent`` when asking it again under the same key can do
no harm (the local renderer: the render service's ledger stores the first result), and
``at_most_once`` when a second request would draw and bill again and nothing can tell us
afterwards whether the first one ran. The agent's image tool records that declaration in
its T1, and recovery treats the call by it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from jaiweb.render.panel.variation import own_seed
from journal.cast import Cast

BackendPolicy = Literal["idempotent", "at_most_once"]
Progress = Callable[[int, int], None]  # progress(value, maximum)

PROBE_TIMEOUT = 2.0  # seconds: /healthz asks every backend within this
SERVER_MESSAGE_LIMIT = 300  # characters of a server's own error message kept


@dataclass(frozen=True, slots=True)
class RenderedImage:
    data: bytes
    content_type: str
    extension: str


@dataclass(frozen=True, slots=True)
class ReferenceImage:
    """The picture a character's look names, read by the render service from its owner's
    images for a backend that draws from a reference."""

    character: str
    image_id: str
    content_type: str
    data: bytes

    @property
    def extension(self) -> str:
        return REFERENCE_TYPES.get(self.content_type, "bin")


# What a reference may be for a backend that sends it on: the kinds image models read.
REFERENCE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


class Renderer(Protocol):
    """One image backend. ``render`` raises (any exception, its message saying what went
    wrong) when no picture came back; the render service stores that failure under the key.

    A backend with ``uses_reference`` draws from a character's reference picture and is
    given it (``reference``) when the panel has one (``panel_reference``); the others never
    are."""

    name: str
    policy: BackendPolicy
    remote: bool  # render() waits on another server (its wait costs this process no CPU)
    uses_reference: bool

    def render(
        self,
        params: dict[str, Any],
        *,
        key: str,
        progress: Progress | None = None,
        reference: ReferenceImage | None = None,
    ) -> RenderedImage: ...

    def describe(self) -> str: ...

    def probe(self) -> str | None: ...


class BackendError(Exception):
    """A backend's server refused or failed a request; the message says what it said."""


def image_prompt(params: dict[str, Any]) -> str:
    """The text an image model gets: the panel script (readable as it is) and the cast as
    the app state has it now."""
    characters = params.get("characters") or {}
    described = "; ".join(
        f"{name} ({', '.join(str(s[k]) for k in ('buff', 'skill', 'mood') if s.get(k))})"
        for name, s in characters.items()
        if isinstance(s, dict)
    )
    prompt = f"Comic book panel. {params.get('prompt', '')}".strip()
    return f"{prompt}\nCharacters: {described}" if described else prompt


def cast_order(params: dict[str, Any]) -> list[str]:
    """The characters of the render parameters in the order the panel's prompt first names
    them (by name, or by an English name the local renderer knows them by); when it names
    none of them, all of them in the state's order, as the local renderer then puts the
    whole cast on stage."""
    characters = params.get("characters")
    if not isinstance(characters, dict):
        return []
    prompt = str(params.get("prompt", ""))
    cast = Cast.of(characters)
    spots: dict[str, int] = {}
    for name in characters:
        spot = cast.first_spot(prompt, str(name))
        if spot < len(prompt):
            spots[name] = spot
    if not spots:
        return list(characters)
    return sorted(spots, key=lambda name: spots[name])


def panel_reference(params: dict[str, Any]) -> tuple[str, str] | None:
    """``(character, image id)``: the reference picture of the panel, that of the first
    character in ``cast_order`` whose look has one; None when none has."""
    characters = params.get("characters") or {}
    for name in cast_order(params):
        character = characters[name]
        image = character.get("reference_image_id") if isinstance(character, dict) else None
        if isinstance(image, str) and image:
            return name, image
    return None


def panel_look_seed(params: dict[str, Any]) -> tuple[str, int] | None:
    """``(character, seed)``: the own seed of the first character in ``cast_order`` whose
    look has one; None when none has."""
    characters = params.get("characters") or {}
    for name in cast_order(params):
        seed = own_seed(characters[name])
        if seed is not None:
            return name, seed
    return None


def server_place(url: str) -> str:
    """A server's address for people to read: scheme, host and port, never a user or a
    password written into the URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def server_said(status: int, body: bytes | str, *, keys: tuple[str, ...]) -> str:
    """What a server's error answer says, shortened: the first of ``keys`` found in a JSON
    body (a nested ``{"message": …}`` is followed), else the body's text."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    said = text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        parts = []
        for key in keys:
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("detail") or json.dumps(value)
            if value not in (None, "", [], {}):
                parts.append(value if isinstance(value, str) else json.dumps(value))
        if parts:
            said = ": ".join(dict.fromkeys(parts))
    said = " ".join(said.split()) or "(no message)"
    if len(said) > SERVER_MESSAGE_LIMIT:
        said = said[: SERVER_MESSAGE_LIMIT - 1] + "…"
    return f"HTTP {status}: {said}"


IMAGE_KINDS = (  # (magic bytes at the start, content type, extension)
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
)


def image_from_bytes(data: bytes, *, server: str) -> RenderedImage:
    """The picture a server sent, typed by its own first bytes (PNG, JPEG or WebP); any
    other answer is refused rather than stored as a panel."""
    for magic, content_type, extension in IMAGE_KINDS:
        if data.startswith(magic):
            return RenderedImage(data, content_type, extension)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return RenderedImage(data, "image/webp", "webp")
    raise BackendError(f"{server} sent {len(data)} bytes that are not a PNG, JPEG or WebP image")


def decode_base64_image(text: object, *, server: str) -> RenderedImage:
    """A base64 image from a JSON answer (a ``data:image/…;base64,`` prefix allowed)."""
    if not isinstance(text, str) or not text:
        raise BackendError(f"{server} answered without an image")
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BackendError(f"{server} sent an image that is not valid base64") from None
    return image_from_bytes(data, server=server)
