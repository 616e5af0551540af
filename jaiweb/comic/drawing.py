"""Pages drawn and written: a page as a Pillow image, pages as PNG, PDF and CBZ bytes.

Every writer is reproducible: PNG without time chunks, PDF with the node's own time as its
creation date (no clock) and an id made from its content, ZIP entries with a fixed date
and mode, all in page order. The PDF and the CBZ are written a page at a time: what they
hold while drawing is one page's composition, however many pages the comic has.
"""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
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
PDF_JOINED = 64  # page files joined at once: qpdf keeps each open until the join is written
FPDF_SUBSET_TAG = "MPDFAA"  # the tag fpdf2 gives every font subset it writes
# Tables of the lettering font fpdf2 never reads (it writes horizontal text, unshaped):
# left out of the cut-down font, so that no page's document subsets them again.
_UNUSED_TABLES = ["BASE", "GDEF", "GPOS", "GSUB", "vhea", "vmtx", "VORG"]
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
    """The PDF of ``comic_pdf_into`` as bytes."""
    out = io.BytesIO()
    comic_pdf_into(out, list(pages), pictures, font, meta)
    return out.getvalue()


def comic_pdf_into(
    out: BinaryIO,
    pages: Sequence[Page],
    pictures: Pictures,
    font: LetteringFont,
    meta: ComicMeta,
    *,
    done: Callable[[int], None] = lambda number: None,
) -> None:
    """Writes one PDF page per page into ``out``: the pictures as images, the borders as
    lines, the lettering as text in the embedded font (so it can be searched and copied).
    ``done`` is called with the count of pages drawn after each.

    A page at a time: fpdf2 keeps every page of a document, pictures included, until it
    writes the file, so each page is a document of its own, written to a temporary file
    and let go before the next is drawn. qpdf (pikepdf) then joins the files, copying each
    page's streams from its file as it writes. The lettering font is cut down once to
    the characters the pages letter, so that each page's document reads a small font
    rather than the whole CJK face."""
    with tempfile.TemporaryDirectory(prefix="jaiweb-pdf-") as folder:
        lettering = _lettering_subset(font, pages, Path(folder) / "lettering.otf")
        files = []
        for number, page in enumerate(pages, start=1):
            files.append(Path(folder) / f"page-{number:06d}.pdf")
            _pdf_page_into(files[-1], page, pictures, lettering, meta)
            done(number)
        assert files, "a comic has at least one page"
        _pdf_joined(files, out, Path(folder))


def _lettered(pages: Sequence[Page]) -> set[int]:
    """The characters the pages letter, their captions' and their bubbles' lines, and the
    space: fpdf2 refuses a font whose character map is empty, as a comic with no lettering
    would cut it down to."""
    return {ord(" ")} | {
        ord(character)
        for page in pages
        for frame in page.frames
        for line in (*frame.lines, *(said for bubble in frame.bubbles for said in bubble.lines))
        for character in line
    }


def _lettering_subset(font: LetteringFont, pages: Sequence[Page], path: Path) -> LetteringFont:
    """The lettering font cut down to the characters the pages letter, saved at ``path``
    (fontTools, with the options fpdf2 subsets with). fpdf2 reads the font it is given
    once per document, which for the whole CJK face takes a third of a second."""
    from fontTools import subset, ttLib

    face = ttLib.TTFont(font.path, fontNumber=font.index, lazy=True)
    options = subset.Options(notdef_outline=True, recommended_glyphs=True, layout_features=[])
    options.drop_tables += _UNUSED_TABLES
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=_lettered(pages))
    subsetter.subset(face)
    face.save(path)
    face.close()
    return LetteringFont(str(path), 0, font.cjk)


def _pdf_page_into(
    path: Path, page: Page, pictures: Pictures, font: LetteringFont, meta: ComicMeta
) -> None:
    """The page as a one-page PDF at ``path``, with the document's metadata (the joined
    file takes its catalog and metadata from the first page's)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(page.width * PT_PER_PX, page.height * PT_PER_PX))
    pdf.set_auto_page_break(False)
    pdf.set_margin(0)
    pdf.set_creation_date(meta.created_at)
    pdf.set_title(_xml_text(meta.title) or meta.session_id)
    pdf.set_subject(f"jaiweb session {meta.session_id}, node {meta.leaf_id}")
    pdf.set_creator("jaiweb")
    pdf.add_font("lettering", fname=font.path, collection_font_number=font.index)
    pdf.set_line_width(BORDER * PT_PER_PX)
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
    pdf.output(str(path), output_producer_class=_letting_go())


@cache
def _letting_go():
    """fpdf2's writer, made to forget the document once its bytes are made: the objects it
    lists point back at it, a cycle that would keep the page, pictures and all, until the
    cyclic collector came by, pages later."""
    from fpdf.output import OutputProducer

    class LettingGo(OutputProducer):
        def bufferize(self) -> bytearray:
            try:
                return super().bufferize()
            finally:
                self.__dict__.clear()

    return LettingGo


def _pdf_joined(files: list[Path], out: BinaryIO, folder: Path) -> None:
    """The one-page PDFs in ``files`` joined in order into ``out``. qpdf reads a copied
    page's streams from its file only when it writes the join, so every file of a join is
    open until then: at most ``PDF_JOINED`` are joined at once, into files joined in turn
    (a 4,096-page comic is joined twice)."""
    level = 0
    while len(files) > PDF_JOINED:
        level += 1
        groups = [files[i : i + PDF_JOINED] for i in range(0, len(files), PDF_JOINED)]
        joined = [folder / f"join-{level}-{n:06d}.pdf" for n in range(len(groups))]
        for group, target in zip(groups, joined, strict=True):
            _pdf_join(group, target)
        files = joined
    _pdf_join(files, out, last=True)


def _pdf_join(files: list[Path], target: Path | BinaryIO, *, last: bool = False) -> None:
    """The pages of ``files`` in order, in the first file's document (its catalog and
    metadata), saved at ``target`` with an id made from the content (no clock, no random);
    ``last``: the font subsets renamed, each page's its own (below)."""
    import pikepdf

    with ExitStack() as opened:
        pdfs = [opened.enter_context(pikepdf.open(path)) for path in files]
        joined = pdfs[0]
        for other in pdfs[1:]:
            joined.pages.extend(other.pages)
        if last:
            for number, page in enumerate(joined.pages, start=1):
                _subsets_tagged(page, _subset_tag(number))
        joined.save(target, deterministic_id=True)
    for path in files:
        path.unlink()


def _subset_tag(number: int) -> str:
    """Six capital letters of their own for page ``number``: AAAAAB for 1."""
    letters = ""
    for _ in range(6):
        number, digit = divmod(number, 26)
        letters = chr(ord("A") + digit) + letters
    return letters


def _subsets_tagged(page, tag: str) -> None:
    """fpdf2 tags every font subset it writes MPDFAA, and each page is a document of its
    own with its own subset, so a joined file would hold many subsets of one name; PDF
    wants different subsets in a file to have different tags (ISO 32000-1, 9.6.4)."""
    import pikepdf

    fonts = page.obj.get("/Resources", pikepdf.Dictionary()).get("/Font", pikepdf.Dictionary())
    for font in fonts.values():
        for part in (font, *font.get("/DescendantFonts", pikepdf.Array())):
            described = part.get("/FontDescriptor")
            for holder, key in ((part, "/BaseFont"), (described, "/FontName")):
                name = holder.get(key) if holder is not None else None
                if name is not None and str(name).startswith(f"/{FPDF_SUBSET_TAG}+"):
                    holder[key] = pikepdf.Name(f"/{tag}+{str(name)[len(FPDF_SUBSET_TAG) + 2 :]}")


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
