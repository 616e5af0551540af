"""A branch as comic pages: which panel goes in which frame, lettered with which lines.

Everything here is a projection of a path (root → a node): the panels are found on the
path in its order, laid out by a named layout on a page of fixed size, and their lettering
(the caption, then each speech line) is broken into lines by a measure the caller gives,
so that the shell can measure with the font it draws with. Nothing here reads a file or
a clock: the same path, lettering and measure give the same pages.

Geometry is in page pixels: a page is A4 at 150 dots per inch. The art of a frame keeps
the local renderer's 8:5 shape (other pictures fit inside it, never cropped); the caption
goes in a box under it and the speech bubbles over it (``bubbles_over``), the same layer
the studio draws over every backend's picture.

The words, the layout and the order can be edited (``journal.lettering``): what is read
here is the script's words unless the app state at the node says otherwise.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from journal.entries import AppStateEntry, AssistantMessage, Entry, MessageEntry, ToolResultMessage
from journal.lettering import DEFAULT_LAYOUT as DEFAULT_LAYOUT
from journal.lettering import LAYOUT_NAMES, PanelLettering, in_order, lettering_in, page_choice
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
assert tuple(LAYOUTS) == LAYOUT_NAMES  # the state's names are the layouts drawn
# Four panels a page (``DEFAULT_LAYOUT``): big enough to read a caption, few enough pages
# for a short episode.
BUBBLE_SCALE = 0.8  # a bubble's font size, of the layout's lettering size
BUBBLE_PAD = 0.45  # a bubble's inner margin, in its font sizes
BUBBLE_WIDEST = 0.46  # a bubble's greatest width, of the picture's
BUBBLE_TALLEST = 0.5  # a bubble's greatest height, of the picture's
BUBBLE_TOP = 0.05  # where a bubble the layer places sits, down the picture
TAIL = 0.12  # how far a bubble's tail reaches below it, of the picture's height


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
    """What a reader reads on a panel: its caption, then who says what, and where each
    bubble sits on the picture (its centre across and top down, fractions of the picture;
    None, or no place given: the layer places it)."""

    caption: str = ""
    speech: tuple[tuple[str, str], ...] = ()
    places: tuple[tuple[float, float] | None, ...] = ()

    def paragraphs(self) -> list[str]:
        """The caption, as the paragraphs of the box under the picture."""
        return [self.caption] if self.caption.strip() else []

    def bubble_texts(self) -> list[str]:
        """Each bubble's words, ``name: words`` when a speaker is named."""
        return [f"{name}: {words}" if name else words for name, words in self.speech if words]

    def place_of(self, index: int) -> tuple[float, float] | None:
        return self.places[index] if index < len(self.places) else None

    @classmethod
    def edited(cls, edit: PanelLettering) -> Lettering:
        """The lettering an edit in the app state gives."""
        return cls(
            edit.caption,
            tuple((b.character, b.text) for b in edit.speech),
            tuple(None if b.x is None or b.y is None else (b.x, b.y) for b in edit.speech),
        )


@dataclass(frozen=True, slots=True)
class ComicPanel:
    image_id: str | None  # None: drawn as an empty frame
    lettering: Lettering
    entry_id: str = ""  # the panel's entry: what its edited lettering and order are kept by


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class PlacedBubble:
    """A speech bubble over a frame's picture: its box, its lines, and its tail's tip."""

    box: Box
    font_size: int
    line_height: int
    pad: int
    lines: tuple[str, ...]
    tail: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Frame:
    number: int  # the panel's place on the branch, from 1
    panel: ComicPanel
    art: Box
    caption: Box
    font_size: int
    line_height: int
    lines: tuple[str, ...]  # the caption, broken to the caption box's width
    bubbles: tuple[PlacedBubble, ...] = ()  # the speech, over the picture


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
            bubbles = bubbles_over(
                panel.lettering, art, round(chosen.font_size * BUBBLE_SCALE), measure
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
                    bubbles,
                )
            )
        pages.append(Page(len(pages) + 1, PAGE_WIDTH, PAGE_HEIGHT, tuple(frames)))
    return pages


def bubbles_over(
    lettering: Lettering, art: Box, size: int, measure: Measure
) -> tuple[PlacedBubble, ...]:
    """Place the lettering's speech bubbles over a picture drawn in ``art``.

    A bubble with a place of its own goes there. The others stand side by side near the top,
    in the speakers' order. Each bubble's words are broken to its width, with an ellipsis once
    they pass its greatest height. Its box stays inside the picture and its tail points down
    towards the speaker."""
    texts = lettering.bubble_texts()
    if not texts:
        return ()
    pad = max(round(size * BUBBLE_PAD), 2)
    line_height = round(size * LINE_SPACING)
    slot = art.width / len(texts)
    widest = int(min(art.width * BUBBLE_WIDEST, slot - pad))
    tallest = int(art.height * BUBBLE_TALLEST)
    placed = []
    for index, text in enumerate(texts):
        inner = max(widest - 2 * pad, size)
        lines = fit_lines(
            [text],
            width=inner,
            max_lines=max((tallest - 2 * pad) // line_height, 1),
            size=size,
            measure=measure,
        )
        width = min(
            max(max((measure(line, size) for line in lines), default=0) + 2 * pad, 3 * size),
            art.width,
        )
        width = round(width)
        height = min(len(lines) * line_height + 2 * pad, art.height)
        place = lettering.place_of(index)
        if place is None:
            centre = art.x + slot * (index + 0.5)
            top = art.y + art.height * BUBBLE_TOP
        else:
            centre = art.x + art.width * place[0]
            top = art.y + art.height * place[1]
        left = round(min(max(centre - width / 2, art.x), art.x + art.width - width))
        top = round(min(max(top, art.y), art.y + art.height - height))
        tip_x = left + width // 2
        tip_y = min(top + height + int(art.height * TAIL), art.y + art.height)
        placed.append(
            PlacedBubble(
                Box(left, top, width, height), size, line_height, pad, tuple(lines), (tip_x, tip_y)
            )
        )
    return tuple(placed)


def tail_points(bubble: PlacedBubble) -> list[tuple[int, int]]:
    """A bubble's tail: a narrow triangle from its bottom edge to its tip (none when the
    tip is not below the bubble: an empty list)."""
    box = bubble.box
    base = box.y + box.height
    if bubble.tail[1] <= base:
        return []
    half = max(min(box.width // 8, bubble.font_size // 2), 3)
    middle = box.x + box.width // 2
    return [(middle - half, base - 2), bubble.tail, (middle + half, base - 2)]


def bubble_baseline(bubble: PlacedBubble, line: int) -> int:
    """Where the ``line``-th line of a bubble's words sits (its baseline)."""
    return bubble.box.y + bubble.pad + bubble.font_size + line * bubble.line_height - 2


def lettered(
    panels: Sequence[PathPanel],
    scripted: Callable[[PathPanel], Lettering],
    state: dict | None,
    images: Callable[[PathPanel], str | None] = lambda p: p.image_id,
) -> list[ComicPanel]:
    """The comic's panels: a path's panels in the order the app state ``state`` chose, each
    with its edited lettering when the state has one, else its script's (``scripted``)."""
    edits = lettering_in(state)
    chosen = page_choice(state)
    ordered = in_order(list(panels), chosen.order, key=lambda p: p.entry_id)
    return [
        ComicPanel(
            images(p),
            Lettering.edited(edits[p.entry_id]) if p.entry_id in edits else scripted(p),
            p.entry_id,
        )
        for p in ordered
    ]


def layout_in(state: dict | None) -> str:
    """The page layout an app state chose (the default when none)."""
    return page_choice(state).layout


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
