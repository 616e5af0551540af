"""Pages drawn and written: a page as a Pillow image, pages as PNG, PDF and CBZ bytes.

Every writer is reproducible: PNG without time chunks, PDF with the node's own time as its
creation date (no clock), ZIP entries with a fixed date and mode, all in page order.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, BinaryIO
from xml.etree import ElementTree

from jaiweb.comic.fonts import LetteringFont
from journal.pages import PAGE_DPI, Box, Frame, Page, bubble_baseline, tail_points

BORDER = 4  # a frame's border, in page pixels
BUBBLE_LINE = 3  # a speech bubble's outline, in page pixels
EMPTY_FILL = (238, 238, 238)  # a frame whose picture is missing
INK = (0, 0, 0)
PT_PER_PX = 72 / PAGE_DPI
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a ZIP entry can say: no clock in the file
# What a frame's picture is, given its panel's image id and the art box's size (None: empty).
Pictures = Callable[[str | None, int, int], Any]


@dataclass(frozen=True, slots=True)
class ComicMeta:
    title: str
    session_id: str
    leaf_id: str
    layout: str
    created_at: datetime  # the node's own time: the PDF's creation date


@cache
def _font(path: str, index: int, size: int):
    from PIL import ImageFont

    return ImageFont.truetype(path, size, index=index)


def measure_with(font: LetteringFont) -> Callable[[str, int], float]:
    """The width of a text at a size, in the lettering font: what ``journal.pages`` wraps by."""
    return lambda text, size: _font(font.path, font.index, size).getlength(text)


def baseline(frame: Frame, line: int) -> int:
    """Where the ``line``-th line of a frame's lettering sits (its baseline)."""
    return frame.caption.y + frame.font_size + line * frame.line_height


def _centred(box: Box, picture) -> tuple[int, int]:
    return box.x + (box.width - picture.width) // 2, box.y + (box.height - picture.height) // 2


def _draw_bubbles(draw, frame: Frame, font: LetteringFont) -> None:
    for bubble in frame.bubbles:
        box = bubble.box
        tail = tail_points(bubble)
        if tail:
            draw.polygon(tail, fill="white", outline=INK, width=BUBBLE_LINE)
        draw.rounded_rectangle(
            (box.x, box.y, box.x + box.width, box.y + box.height),
            radius=bubble.font_size // 2 + bubble.pad,
            fill="white",
            outline=INK,
            width=BUBBLE_LINE,
        )
        face = _font(font.path, font.index, bubble.font_size)
        for i, line in enumerate(bubble.lines):
            draw.text(
                (box.x + box.width // 2, bubble_baseline(bubble, i)),
                line,
                font=face,
                fill=INK,
                anchor="ms",
            )


def draw_page(page: Page, pictures: Pictures, font: LetteringFont, *, lettered: bool = True):
    """The page as an RGB Pillow image: white, each frame's picture fitted in its art box
    (an empty frame is grey), a black border, the speech bubbles over the picture and the
    caption under it."""
    from PIL import Image, ImageDraw

    canvas = Image.new("RGB", (page.width, page.height), "white")
    draw = ImageDraw.Draw(canvas)
    for frame in page.frames:
        art = frame.art
        picture = pictures(frame.panel.image_id, art.width, art.height)
        if picture is None:
            draw.rectangle((art.x, art.y, art.x + art.width, art.y + art.height), fill=EMPTY_FILL)
        else:
            canvas.paste(picture, _centred(art, picture))
        draw.rectangle(
            (art.x, art.y, art.x + art.width, art.y + art.height), outline=INK, width=BORDER
        )
        if lettered:
            _draw_bubbles(draw, frame, font)
            face = _font(font.path, font.index, frame.font_size)
            for i, line in enumerate(frame.lines):
                draw.text(
                    (frame.caption.x, baseline(frame, i)), line, font=face, fill=INK, anchor="ls"
                )
    return canvas


def png_bytes(image) -> bytes:
    """The image as PNG: no time or text chunks, a fixed compression level."""
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False, compress_level=6)
    return out.getvalue()


def comic_pdf(
    pages: Iterable[Page], pictures: Pictures, font: LetteringFont, meta: ComicMeta
) -> bytes:
    """One PDF page per page: the pictures as images, the borders as lines, the lettering as
    text in the embedded font (so it can be searched and copied)."""
    from fpdf import FPDF

    first = True
    pdf = None
    for page in pages:
        if first:
            pdf = FPDF(unit="pt", format=(page.width * PT_PER_PX, page.height * PT_PER_PX))
            pdf.set_auto_page_break(False)
            pdf.set_margin(0)
            pdf.set_creation_date(meta.created_at)
            pdf.set_title(_xml_text(meta.title) or meta.session_id)
            pdf.set_subject(f"jaiweb session {meta.session_id}, node {meta.leaf_id}")
            pdf.set_creator("jaiweb")
            pdf.add_font("lettering", fname=font.path, collection_font_number=font.index)
            pdf.set_line_width(BORDER * PT_PER_PX)
            first = False
        pdf.add_page()
        for frame in page.frames:
            art = frame.art
            x, y, w, h = (v * PT_PER_PX for v in (art.x, art.y, art.width, art.height))
            picture = pictures(frame.panel.image_id, art.width, art.height)
            if picture is None:
                pdf.set_fill_color(*EMPTY_FILL)
                pdf.rect(x, y, w, h, style="F")
            else:
                left, top = _centred(art, picture)
                pdf.image(
                    picture,
                    x=left * PT_PER_PX,
                    y=top * PT_PER_PX,
                    w=picture.width * PT_PER_PX,
                    h=picture.height * PT_PER_PX,
                )
            pdf.set_draw_color(*INK)
            pdf.rect(x, y, w, h, style="D")
            pdf.set_text_color(*INK)
            _pdf_bubbles(pdf, frame)
            pdf.set_font("lettering", size=frame.font_size * PT_PER_PX)
            for i, line in enumerate(frame.lines):
                pdf.text(frame.caption.x * PT_PER_PX, baseline(frame, i) * PT_PER_PX, line)
    assert pdf is not None, "a comic has at least one page"
    return bytes(pdf.output())


def _pdf_bubbles(pdf, frame: Frame) -> None:
    """The frame's speech bubbles as vector shapes with their words as text."""
    pdf.set_line_width(BUBBLE_LINE * PT_PER_PX)
    pdf.set_fill_color(255, 255, 255)
    for bubble in frame.bubbles:
        box = bubble.box
        tail = tail_points(bubble)
        if tail:
            pdf.polygon([(x * PT_PER_PX, y * PT_PER_PX) for x, y in tail], style="DF")
        pdf.rect(
            box.x * PT_PER_PX,
            box.y * PT_PER_PX,
            box.width * PT_PER_PX,
            box.height * PT_PER_PX,
            style="DF",
            round_corners=True,
            corner_radius=(bubble.font_size // 2 + bubble.pad) * PT_PER_PX,
        )
        pdf.set_font("lettering", size=bubble.font_size * PT_PER_PX)
        middle = box.x + box.width / 2
        for i, line in enumerate(bubble.lines):
            half = pdf.get_string_width(line) / 2
            pdf.text(middle * PT_PER_PX - half, bubble_baseline(bubble, i) * PT_PER_PX, line)
    pdf.set_line_width(BORDER * PT_PER_PX)


def _entry(name: str, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = compress
    info.create_system = 3  # Unix, whatever machine writes it
    info.external_attr = 0o644 << 16
    return info


def page_name(number: int) -> str:
    return f"page-{number:03d}.png"


def comic_cbz(pages: Iterable[Page], draw: Callable[[Page], Any], meta: ComicMeta) -> bytes:
    """A comic book archive: the pages as ``page-001.png``… in order, then ``ComicInfo.xml``
    naming the title, the session and the node."""
    out = io.BytesIO()
    comic_cbz_into(out, pages, draw, meta)
    return out.getvalue()


def comic_cbz_into(
    out: BinaryIO, pages: Iterable[Page], draw: Callable[[Page], Any], meta: ComicMeta
) -> None:
    """Writes the comic book archive of ``comic_cbz`` into ``out``, a page at a time: only
    one page's picture is held while it is drawn."""
    sizes: list[tuple[int, int, int]] = []
    with zipfile.ZipFile(out, "w") as archive:
        for page in pages:
            data = png_bytes(draw(page))
            archive.writestr(_entry(page_name(page.number), zipfile.ZIP_STORED), data)
            sizes.append((page.width, page.height, len(data)))
        info = comic_info(meta, sizes)
        archive.writestr(_entry("ComicInfo.xml", zipfile.ZIP_DEFLATED), info)


_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold."""
    return _NOT_XML.sub("", text)


def comic_info(meta: ComicMeta, sizes: list[tuple[int, int, int]]) -> bytes:
    """ComicInfo.xml (the ComicRack / Anansi schema, v2.0 elements in its order): the title,
    a summary and notes naming the session and the node, the page count and each page."""
    root = ElementTree.Element("ComicInfo")
    title = _xml_text(meta.title) or meta.session_id
    for tag, text in (
        ("Title", title),
        ("Series", title),
        (
            "Summary",
            f"The branch of jaiweb session {meta.session_id} from its root to node {meta.leaf_id}.",
        ),
        ("Notes", f"jaiweb session={meta.session_id} node={meta.leaf_id} layout={meta.layout}"),
        ("PageCount", str(len(sizes))),
    ):
        ElementTree.SubElement(root, tag).text = text
    listed = ElementTree.SubElement(root, "Pages")
    for i, (width, height, size) in enumerate(sizes):
        attributes = {
            "Image": str(i),
            "ImageSize": str(size),
            "ImageWidth": str(width),
            "ImageHeight": str(height),
        }
        if i == 0:
            attributes["Type"] = "FrontCover"
        ElementTree.SubElement(listed, "Page", attributes)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
