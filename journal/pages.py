"""A branch as comic pages: which panel goes in which frame, lettered with which lines.

Everything here is a projection of a path (root → a node): the panels are found on the
path in its order, laid out by a named layout on a page of fixed size, and their lettering
(the caption, then each speech line) is broken into lines by a measure the caller gives,
so that the shell can measure with the font it draws with. Nothing here reads a file or
a clock: the same path, lettering and measure give the same pages.

Geometry is in page pixels: a page is A4 at 150 dots per inch. The art of a frame keeps
the local renderer's 8:5 shape (other pictures fit inside it, never cropped); the
lettering goes in a box under it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from journal.entries import AppStateEntry, AssistantMessage, Entry, MessageEntry, ToolResultMessage
from journal.variants import choices_of, hidden_members, sets_on

PAGE_WIDTH = 1240
PAGE_HEIGHT = 1754
PAGE_DPI = 150
MARGIN = 60
GUTTER = 30
CAPTION_GAP = 12  # between a frame's art and its lettering
ART_RATIO = (8, 5)  # width : height of a frame's art: the local renderer's panels (640 × 400)
LINE_SPACING = 1.3  # a line's height, in font sizes
ELLIPSIS = "…"

# What a measure answers: the width in pixels of ``text`` at ``size`` pixels.
Measure = Callable[[str, int], float]


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    columns: int
    rows: int
    font_size: int  # the lettering's, in pixels
    min_caption: int  # the least height the lettering box gets, in pixels

    @property
    def per_page(self) -> int:
        return self.columns * self.rows


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout("2x2", columns=2, rows=2, font_size=26, min_caption=120),
        Layout("3-tier", columns=2, rows=3, font_size=22, min_caption=96),
        Layout("strip", columns=1, rows=2, font_size=28, min_caption=140),
        Layout("splash", columns=1, rows=1, font_size=34, min_caption=200),
    )
}
# Four panels a page: big enough to read a caption, few enough pages for a short episode.
DEFAULT_LAYOUT = "2x2"


@dataclass(frozen=True, slots=True)
class PathPanel:
    """A panel on a path: its image, the prompt it was drawn from, and, for a panel placed
    from another branch (a cherry-pick), the panel entry it came from."""

    entry_id: str
    image_id: str
    prompt: str
    from_entry_id: str | None = None


@dataclass(frozen=True, slots=True)
class Lettering:
    """What a reader reads on a panel: its caption, then who says what."""

    caption: str = ""
    speech: tuple[tuple[str, str], ...] = ()

    def paragraphs(self) -> list[str]:
        """The caption, then one paragraph per speech line (``name: words``)."""
        said = [f"{name}: {words}" if name else words for name, words in self.speech if words]
        return ([self.caption] if self.caption.strip() else []) + said


@dataclass(frozen=True, slots=True)
class ComicPanel:
    image_id: str | None  # None: drawn as an empty frame
    lettering: Lettering


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Frame:
    number: int  # the panel's place on the branch, from 1
    panel: ComicPanel
    art: Box
    caption: Box
    font_size: int
    line_height: int
    lines: tuple[str, ...]  # the lettering, broken to the caption box's width


@dataclass(frozen=True, slots=True)
class Page:
    number: int  # from 1
    width: int
    height: int
    frames: tuple[Frame, ...]


def panels_on(path: Sequence[Entry], choices: Mapping[str, Any] | None = None) -> list[PathPanel]:
    """The panels of a path in order: each successful ``generate_image`` or ``place_panel``
    result that names an image, with the prompt of the call that drew it. The director's
    narration and the costs are not kept: readers see the panel's own words only.

    Of a variant set, only the variant chosen is kept (``journal/variants.py``): by
    ``choices`` (the app state's ``variants`` at the path's end), else by the last
    ``app_state`` entry on the path."""
    panels = _all_panels_on(path)
    if choices is None:
        states = [e for e in path if isinstance(e, AppStateEntry)]
        choices = choices_of(states[-1].value) if states else {}
    hidden = hidden_members(sets_on(path), choices)
    return [p for p in panels if p.entry_id not in hidden] if hidden else panels


def _all_panels_on(path: Sequence[Entry]) -> list[PathPanel]:
    prompts: dict[str, str] = {}  # tool call id → the prompt it drew from
    panels: list[PathPanel] = []
    for entry in path:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.name == "generate_image":
                    prompt = call.arguments.get("prompt", "")
                    prompts[call.id] = prompt if isinstance(prompt, str) else ""
            continue
        if not isinstance(message, ToolResultMessage) or message.is_error:
            continue
        image = (message.details or {}).get("image_id")
        if not isinstance(image, str) or not image:
            continue
        if message.tool_name == "generate_image":
            panels.append(PathPanel(entry.id, image, prompts.get(message.tool_call_id, "")))
        elif message.tool_name == "place_panel":
            origin = message.details.get("from_entry_id")
            panels.append(
                PathPanel(entry.id, image, "", origin if isinstance(origin, str) else None)
            )
    return panels


def layout_named(name: str) -> Layout:
    """The layout called ``name``; ``ValueError`` naming the known ones otherwise."""
    layout = LAYOUTS.get(name)
    if layout is None:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}")
    return layout


def paginate(panels: Sequence[ComicPanel], layout: str, measure: Measure) -> list[Page]:
    """The pages of ``panels`` in ``layout``: frames filled in reading order (left to right,
    top to bottom), each panel's lettering broken into the lines its box holds. No panel
    still gives one page, empty: every export has at least one page."""
    chosen = layout_named(layout)
    cells = _cells(chosen)
    pages: list[Page] = []
    for start in range(0, max(len(panels), 1), chosen.per_page):
        frames = []
        for offset, panel in enumerate(panels[start : start + chosen.per_page]):
            art, caption = cells[offset]
            line_height = round(chosen.font_size * LINE_SPACING)
            lines = fit_lines(
                panel.lettering.paragraphs(),
                width=caption.width,
                max_lines=caption.height // line_height,
                size=chosen.font_size,
                measure=measure,
            )
            frames.append(
                Frame(
                    start + offset + 1,
                    panel,
                    art,
                    caption,
                    chosen.font_size,
                    line_height,
                    tuple(lines),
                )
            )
        pages.append(Page(len(pages) + 1, PAGE_WIDTH, PAGE_HEIGHT, tuple(frames)))
    return pages


def _cells(layout: Layout) -> list[tuple[Box, Box]]:
    """Each frame's art box and lettering box on a page, in reading order."""
    cell_w = (PAGE_WIDTH - 2 * MARGIN - (layout.columns - 1) * GUTTER) // layout.columns
    cell_h = (PAGE_HEIGHT - 2 * MARGIN - (layout.rows - 1) * GUTTER) // layout.rows
    wide, high = ART_RATIO
    art_h = min(cell_w * high // wide, cell_h - CAPTION_GAP - layout.min_caption)
    art_w = art_h * wide // high
    boxes = []
    for row in range(layout.rows):
        for column in range(layout.columns):
            x = MARGIN + column * (cell_w + GUTTER)
            y = MARGIN + row * (cell_h + GUTTER)
            art = Box(x + (cell_w - art_w) // 2, y, art_w, art_h)
            top = y + art_h + CAPTION_GAP
            boxes.append((art, Box(art.x, top, art_w, y + cell_h - top)))
    return boxes


def fit_lines(
    paragraphs: Sequence[str], *, width: int, max_lines: int, size: int, measure: Measure
) -> list[str]:
    """The paragraphs broken into lines no wider than ``width``; past ``max_lines`` the last
    line kept ends with an ellipsis."""
    lines: list[str] = []
    for paragraph in paragraphs:
        lines += wrap(paragraph, width=width, size=size, measure=measure)
    if len(lines) <= max_lines:
        return lines
    if max_lines <= 0:
        return []
    kept = lines[:max_lines]
    last = kept[-1]
    while last and measure(last + ELLIPSIS, size) > width:
        last = last[:-1]
    kept[-1] = last.rstrip() + ELLIPSIS
    return kept


def wrap(text: str, *, width: int, size: int, measure: Measure) -> list[str]:
    """``text`` on lines no wider than ``width``: broken between words, and between any two
    CJK characters (never before closing punctuation); a word wider than a line is broken
    between its characters."""
    lines: list[str] = []
    line = ""
    for unit in _units(" ".join(text.split())):
        if measure((line + unit).rstrip(), size) <= width:
            line += unit
            continue
        if line:
            lines.append(line.rstrip())
            line = ""
        if measure(unit.rstrip(), size) <= width:
            line = unit
            continue
        for char in unit:  # wider than a line alone: cut between its characters
            if line and measure((line + char).rstrip(), size) > width:
                lines.append(line.rstrip())
                line = ""
            line += char
    if line.strip():
        lines.append(line.rstrip())
    return lines


CLOSING = set("，。、！？；：）」』】》〉…,.!?;:)]}'\"”’")


def _is_cjk(char: str) -> bool:
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return True
    return "\u3000" <= char <= "\u303f"


def _units(text: str) -> list[str]:
    """The pieces a line may break between: words with their trailing space, single CJK
    characters, closing punctuation kept with what it closes."""
    units: list[str] = []
    word = ""
    for char in text:
        if char in CLOSING and (word or units):
            if word:
                word += char
            else:
                units[-1] += char
            continue
        if char == " ":
            if word:
                units.append(word + " ")
                word = ""
            elif units:
                units[-1] += " "
            continue
        if _is_cjk(char):
            if word:
                units.append(word)
                word = ""
            units.append(char)
            continue
        word += char
    if word:
        units.append(word)
    return units
