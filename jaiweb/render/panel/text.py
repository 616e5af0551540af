"""Fits text into a box: wrapped on word or CJK boundaries, shrunk until it fits, never cut.

SVG has no text flow, so the lines are made here. Widths are estimated from the
characters (a CJK character is one em, a Latin letter about half of one), on the wide
side so a line never runs out of its box. A word is never split across lines; only a
"word" wider than the whole line at the smallest size (a URL, a run of one letter) is
broken, because nothing else can make it fit. Nothing is ever dropped or replaced by
"…": when even the smallest size is too tall, the caller is told how tall the text is
and makes the box that tall.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from xml.sax.saxutils import escape

LINE_HEIGHT = 1.25  # of the font size
# Characters that may not start a line (they stay with what comes before) and characters
# that may not end one (they stay with what follows): the usual CJK line-breaking rules.
NO_LINE_START = set("，。！？、；：）」』】〕》〉”’…·!?,.;:)]}%—～")
NO_LINE_END = set("（「『【〔《〈“‘([{")
_XML_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NARROW = set("il.,:;!|'`ijtf()[]")
_WIDE = set("mwMW@%&")


def clean(text: str) -> str:
    """The text as XML may hold it: characters XML 1.0 forbids are dropped."""
    return _XML_INVALID.sub("", text)


def xml(text: str) -> str:
    """Text content for an SVG element, escaped."""
    return escape(clean(text))


def attr(text: str) -> str:
    """An attribute value (double-quoted), escaped."""
    return escape(clean(text), {'"': "&quot;", "'": "&#39;"})


@functools.cache
def is_wide(char: str) -> bool:
    """CJK and other full-width characters: one em wide, and a line may break around them."""
    return unicodedata.east_asian_width(char) in ("W", "F")


@functools.cache
def char_width(char: str) -> float:
    """The width of one character, in ems (an estimate on the wide side)."""
    if is_wide(char):
        return 1.0
    if char == " ":
        return 0.32
    if char in _NARROW:
        return 0.34
    if char in _WIDE:
        return 0.9
    if char.isupper() or char.isdigit():
        return 0.68
    return 0.58


def width(text: str, size: float) -> float:
    return sum(char_width(c) for c in text) * size


@dataclass(frozen=True, slots=True)
class Token:
    """An unbreakable piece of text, and whether a space separates it from the one before."""

    text: str
    space_before: bool


def tokens(text: str) -> list[Token]:
    """Words (runs of non-space, non-CJK characters) and single CJK characters; closing
    punctuation stays with what comes before it, opening brackets with what follows."""
    out: list[Token] = []
    glue_next = False  # the last token ends with an opening bracket

    def push(piece: str, space_before: bool) -> None:
        nonlocal glue_next
        if out and (glue_next or (piece[0] in NO_LINE_START and not space_before)):
            last = out[-1]
            out[-1] = Token(last.text + (" " if space_before else "") + piece, last.space_before)
        else:
            out.append(Token(piece, space_before))
        glue_next = piece[-1] in NO_LINE_END

    word, space = "", False
    for char in " ".join(text.split()):
        if char == " " or is_wide(char):
            if word:
                push(word, space)
                word, space = "", False
            if char == " ":
                space = True
            else:
                push(char, space)
                space = False
        else:
            word += char
    if word:
        push(word, space)
    return out


def wrap(text: str, max_width: float, size: float, *, split_long: bool = False) -> list[str]:
    """Greedy lines no wider than ``max_width``. A token wider than a line makes this raise
    ``TooWide``, unless ``split_long``: then that token alone is broken by characters."""
    lines: list[str] = []
    line, line_width = "", 0.0
    space = char_width(" ") * size
    for token in tokens(text):
        piece = token.text
        piece_width = width(piece, size)
        if piece_width > max_width:
            if not split_long:
                raise TooWide(piece)
            if line:
                lines.append(line)
                line, line_width = "", 0.0
            for char in piece:
                char_w = char_width(char) * size
                if line and line_width + char_w > max_width:
                    lines.append(line)
                    line, line_width = "", 0.0
                line, line_width = line + char, line_width + char_w
            continue
        gap = space if token.space_before and line else 0.0
        if line and line_width + gap + piece_width > max_width:
            lines.append(line)
            line, line_width = piece, piece_width
        else:
            line = line + (" " if gap else "") + piece
            line_width += gap + piece_width
    if line:
        lines.append(line)
    return lines


class TooWide(ValueError):
    """A word is wider than the line: a smaller font size is needed."""


@dataclass(frozen=True, slots=True)
class Fitted:
    size: float
    lines: list[str]

    @property
    def line_height(self) -> float:
        return self.size * LINE_HEIGHT

    @property
    def height(self) -> float:
        return len(self.lines) * self.line_height

    @property
    def width(self) -> float:
        return max((width(line, self.size) for line in self.lines), default=0.0)


def fit(
    text: str, max_width: float, max_height: float, *, largest: float, smallest: float
) -> Fitted:
    """The largest font size (whole pixels, ``largest`` down to ``smallest``) at which the
    text wraps into the box with every word whole. When none fits, the smallest size: its
    lines may be taller than ``max_height`` (the caller grows the box), never cut."""
    size = largest
    while size >= smallest:
        try:
            lines = wrap(text, max_width, size)
        except TooWide:
            lines = None
        if lines is not None and len(lines) * size * LINE_HEIGHT <= max_height:
            return Fitted(size, lines)
        size -= 1
    try:
        return Fitted(smallest, wrap(text, max_width, smallest))
    except TooWide:
        return Fitted(smallest, wrap(text, max_width, smallest, split_long=True))


def text_block(
    fitted: Fitted, x: float, y: float, *, anchor: str = "start", extra: str = ""
) -> str:
    """The fitted lines as one ``<text>`` whose first baseline sits one line below ``y``."""
    if not fitted.lines:
        return ""
    first = y + fitted.size
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{first + i * fitted.line_height:.1f}">{xml(line)}</tspan>'
        for i, line in enumerate(fitted.lines)
    )
    return f'<text font-size="{fitted.size:g}" text-anchor="{anchor}"{extra}>{spans}</text>'
