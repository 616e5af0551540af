"""Reads of the comic's layer at a node: a panel's lettering, the pages' layout and order.

The one place faces read them (the studio's strip and Read mode, the API, the exports):
each is a projection of the path root → node and the app state there.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jaiweb.comic.exports import comic_panels, lettering_of, prompt_of_placed
from jaiweb.render.panel.text import width
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import app_state_at
from journal.errors import UnknownEntry
from journal.lettering import lettering_in
from journal.pages import (
    Box,
    ComicPanel,
    Lettering,
    PathPanel,
    PlacedBubble,
    bubbles_over,
    layout_in,
)


def comic_layout_at(*, session: ComicSession, leaf_id: str | None = None) -> str:
    """The page layout chosen at a node (default: the leaf): ``2x2`` unless one was."""
    return layout_in(app_state_at(session=session, leaf_id=leaf_id))


def comic_panels_at(*, session: ComicSession, leaf_id: str | None = None) -> list[ComicPanel]:
    """The panels of root → node in reading order, each with its lettering."""
    panels, _layout, _when = comic_panels(session=session, leaf_id=leaf_id)
    return panels


def _lettering_out(panel: ComicPanel, edited: bool, number: int) -> dict[str, Any]:
    lettering = panel.lettering
    speech = []
    for index, (name, words) in enumerate(lettering.speech):
        place = lettering.place_of(index)
        x, y = place if place is not None else (None, None)
        speech.append({"character": name, "text": words, "x": x, "y": y})
    return {
        "entry_id": panel.entry_id,
        "caption": lettering.caption,
        "speech": speech,
        "edited": edited,
        "number": number,
    }


def panel_lettering_at(
    *, session: ComicSession, entry_id: str, leaf_id: str | None = None
) -> dict[str, Any]:
    """A panel's lettering on root → node: caption, bubbles (with their places when they
    were moved) and whether it was edited; ``UnknownEntry`` for a panel not on it."""
    node = leaf_id or session.leaf_id
    panels = comic_panels_at(session=session, leaf_id=node)
    number = next((i for i, p in enumerate(panels, 1) if p.entry_id == entry_id), None)
    if number is None:
        raise UnknownEntry(entry_id)
    edited = entry_id in lettering_in(app_state_at(session=session, leaf_id=node))
    return {"leaf_id": node, **_lettering_out(panels[number - 1], edited, number)}


def page_at(*, session: ComicSession, leaf_id: str | None = None) -> dict[str, Any]:
    """The layout chosen at a node and every panel's entry id in reading order."""
    node = leaf_id or session.leaf_id
    panels, layout, _when = comic_panels(session=session, leaf_id=node)
    return {"entry_id": node, "layout": layout, "order": [p.entry_id for p in panels]}


# --- the studio's layer over a panel's picture ---------------------------------------------

# The picture's frame in the studio, in the overlay's own units: the local renderer's
# panel size, so its pictures fill the frame; any other shape fits inside, as in exports.
STUDIO_ART = Box(0, 0, 640, 400)
STUDIO_BUBBLE_SIZE = 20


@dataclass(frozen=True, slots=True)
class BubbleWords:
    """One bubble's words as its editor shows them: who says what, and where the bubble's
    tail points (in percent of the picture)."""

    index: int
    character: str
    text: str
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class PanelLayer:
    """What the studio draws over and under a panel's picture, and what its editor shows:
    the caption, each bubble placed over the frame, and the words as they can be edited
    (places in percent of the picture). A frozen value, so that the strip can keep a
    panel's HTML by what it shows."""

    caption: str
    bubbles: tuple[PlacedBubble, ...]
    speech: tuple[BubbleWords, ...]
    edited: bool
    width: int = STUDIO_ART.width
    height: int = STUDIO_ART.height


def _estimate(text: str, size: int) -> float:
    """A text's width on the wide side, whatever font the browser has (the page measures
    nothing: the server breaks the lines)."""
    return width(text, size)


@functools.lru_cache(maxsize=2048)
def panel_layer(lettering: Lettering, *, edited: bool) -> PanelLayer:
    """The layer drawn over a panel with ``lettering``: its bubbles placed and broken into
    lines. Kept by the lettering (frozen values both), as every pass lays out the strip's
    panels again."""
    bubbles = bubbles_over(lettering, STUDIO_ART, STUDIO_BUBBLE_SIZE, _estimate)
    speech = []
    for index, ((name, words), bubble) in enumerate(zip(lettering.speech, bubbles, strict=False)):
        place = lettering.place_of(index)
        box = bubble.box
        x, y = (
            place
            if place is not None
            else (
                (box.x + box.width / 2) / STUDIO_ART.width,
                box.y / STUDIO_ART.height,
            )
        )
        speech.append(BubbleWords(index, name, words, round(x * 100), round(y * 100)))
    return PanelLayer(lettering.caption, bubbles, tuple(speech), edited)


def panel_layers(
    *, session: ComicSession, panels: Sequence[Any], state: dict | None
) -> dict[str, PanelLayer]:
    """The layer of each strip panel (``entry_id``, ``prompt``, ``from_entry_id``): its
    edited lettering in ``state`` (the app state at the leaf), else its script's words; a
    panel placed from another branch takes the words of the panel it came from."""
    edits = lettering_in(state)
    layers = {}
    for panel in panels:
        if panel.entry_id in edits:
            layers[panel.entry_id] = panel_layer(
                Lettering.edited(edits[panel.entry_id]), edited=True
            )
            continue
        prompt = panel.prompt
        if getattr(panel, "from_entry_id", None):
            prompt = prompt_of_placed(
                session, PathPanel(panel.entry_id, panel.image_id, "", panel.from_entry_id)
            )
        layers[panel.entry_id] = panel_layer(lettering_of(prompt), edited=False)
    return layers
