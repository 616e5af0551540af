"""jaiweb.comic: a branch drawn as PNG pages, a PDF and a CBZ, byte for byte reproducible."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest
from django.conf import settings
from PIL import Image

from jaiweb.comic import art, drawing, exports
from jaiweb.comic.errors import ExportUnavailable
from jaiweb.comic.exports import comic_export, comic_pages, comic_work, comic_work_write
from jaiweb.comic.fonts import CANDIDATES, lettering_font
from jaiweb.commands.sessions import session_rewind
from jaiweb.render.models import Image as PanelImage
from jaiweb.store.selectors import branch_rows
from journal.errors import UnknownEntry
from journal.pages import PAGE_HEIGHT, PAGE_WIDTH
from tests.support.comics import cbz_contents, draw_panels

pytestmark = pytest.mark.django_db

STORY = ["猪猪侠吃下超级棒棒糖", "the pig climbs into the ring", "降龙十巴掌", "a bow", "the end"]


def pdf_text(data: bytes) -> list[str]:
    """Each page's text (this PDF's font maps each glyph through a CMap pypdf reads with a
    NUL before each character: dropped)."""
    return [p.extract_text().replace("\x00", "") for p in pypdf.PdfReader(io.BytesIO(data)).pages]


def export(session, fmt: str, **kwargs):
    return comic_export(session=session, leaf_id=kwargs.pop("leaf_id", None), format=fmt, **kwargs)


def test_a_png_is_one_page_at_the_page_size(episode):
    draw_panels(episode, STORY)
    first = export(episode, "png")
    assert first.page_count == 2 and first.content_type == "image/png"
    with Image.open(io.BytesIO(first.data)) as page:
        assert page.format == "PNG" and page.size == (PAGE_WIDTH, PAGE_HEIGHT)
        assert "tIME" not in page.info and not page.text  # nothing of when it was made
    second = export(episode, "png", page=2)
    assert second.data != first.data and second.filename.endswith("-page-002.png")
    with pytest.raises(exports.NoSuchPage):
        export(episode, "png", page=3)


def test_a_pdf_has_a_page_per_page_with_the_lettering_as_text(episode):
    draw_panels(episode, STORY)
    pdf = export(episode, "pdf")
    assert pdf.content_type == "application/pdf" and pdf.data.startswith(b"%PDF-")
    text = pdf_text(pdf.data)
    assert len(text) == 2  # five panels, four a page
    assert "猪猪侠吃下超级棒棒糖" in text[0] and "the end" in text[1]
    splash = export(episode, "pdf", layout="splash")
    assert len(pypdf.PdfReader(io.BytesIO(splash.data)).pages) == 5


def open_files() -> list[str]:
    """What this process's file descriptors name now."""
    names = []
    for fd in os.listdir("/proc/self/fd"):
        # the descriptor listdir read the folder with is closed since
        with contextlib.suppress(OSError):
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
    return names


def test_a_pdf_holds_one_page_at_a_time(episode):
    """While a page's pictures are drawn, no earlier page is held: fpdf2 keeps a document's
    pages until it writes it, so every page is a document of its own, let go (without
    waiting for the cyclic collector) before the next is drawn."""
    from fpdf import FPDF

    draw_panels(episode, STORY)
    work = comic_work(session=episode, leaf_id=None, format="pdf", layout="splash")
    held = []

    def pictures(image_id, width, height):
        held.append(sum(len(o.pages) for o in gc.get_objects() if isinstance(o, FPDF)))
        return work.pictures(image_id, width, height)

    out, done = io.BytesIO(), []
    gc.collect()
    gc.disable()  # what is let go is let go at once, not when a collection comes by
    try:
        drawing.comic_pdf_into(out, work.pages, pictures, work.font, work.meta, done=done.append)
    finally:
        gc.enable()
    assert len(held) == 5 and max(held) == 1  # the page being drawn, alone
    assert done == [1, 2, 3, 4, 5]
    assert pdf_text(out.getvalue())[4].startswith("the end")


def test_a_long_pdf_is_joined_with_few_files_open(episode, monkeypatch):
    """qpdf reads a joined page's streams from its file when it writes the join, so the
    pages are joined a few at a time, and those joins joined in turn, in order."""
    import pikepdf

    draw_panels(episode, STORY)
    monkeypatch.setattr(drawing, "PDF_JOINED", 2)
    opened = pikepdf.open
    most = []

    def counted(path, **kwargs):
        most.append(sum("jaiweb-pdf-" in name and name.endswith(".pdf") for name in open_files()))
        return opened(path, **kwargs)

    monkeypatch.setattr(pikepdf, "open", counted)
    work = comic_work(session=episode, leaf_id=None, format="pdf", layout="splash")
    out = io.BytesIO()
    comic_work_write(work, out)
    assert len(most) == 5 + 3 + 2  # five pages, three joins of them, two of those
    assert max(most) == 1  # the second of a pair is opened beside the first alone
    text = pdf_text(out.getvalue())
    assert [t.split("\n")[0] for t in text] == STORY  # one caption a page, in order
    fonts = [page["/Resources"]["/Font"] for page in pypdf.PdfReader(out).pages]
    names = [str(f.get_object()["/BaseFont"]) for page in fonts for f in page.values()]
    assert len(names) == 5 and len(set(names)) == 5  # each page's subset has a tag of its own
    assert names[0] == "/AAAAAB+NotoSansCJKSC"


def test_a_cbz_holds_the_pages_and_comicinfo_naming_the_session_and_node(episode):
    leaf = draw_panels(episode, STORY)
    cbz = export(episode, "cbz")
    names, info = cbz_contents(cbz.data)
    assert names == ["page-001.png", "page-002.png", "ComicInfo.xml"]
    assert info.tag == "ComicInfo" and info.findtext("Title") == episode.title
    assert info.findtext("PageCount") == "2"
    notes = info.findtext("Notes")
    assert f"session={episode.id}" in notes and f"node={leaf}" in notes
    assert [p.get("Image") for p in info.find("Pages")] == ["0", "1"]
    assert cbz.filename == f"{episode.id}-{leaf}.cbz"


def test_the_same_node_gives_the_same_bytes_whatever_came_after(episode):
    old = draw_panels(episode, STORY[:3])
    before = {fmt: export(episode, fmt).data for fmt in ("png", "pdf", "cbz")}
    assert {fmt: export(episode, fmt).data for fmt in before} == before  # twice: the same
    draw_panels(episode, STORY[3:])  # later turns on the same branch
    first_panel = branch_rows(session=episode)[2].entry_id
    session_rewind(session=episode, entry_id=first_panel)
    draw_panels(episode, ["another ending"])  # and a rewind to another branch
    assert episode.leaf_id != old
    after = {fmt: export(episode, fmt, leaf_id=old).data for fmt in before}
    assert after == before
    assert export(episode, "pdf").data != before["pdf"]  # the leaf now is another comic


def test_the_same_bytes_from_another_process(episode, tmp_path):
    """Nothing of the process goes into a file (no clock, no random subset name)."""
    draw_panels(episode, STORY[:2])
    here = {fmt: export(episode, fmt).data for fmt in ("pdf", "cbz")}
    assert _in_a_fresh_process(episode, tmp_path) == here


def _in_a_fresh_process(session, tmp_path) -> dict[str, bytes]:
    """The exports made again by a new interpreter, from the same font and panel files."""
    panels = {
        p.id: (Path(settings.MEDIA_ROOT) / p.path).read_bytes()
        for p in PanelImage.objects.filter(user_id=session.owner_id)
    }
    pages, meta = comic_pages(session=session, leaf_id=None)
    job = tmp_path / "job.pickle"
    job.write_bytes(pickle.dumps((pages, meta, panels)))
    code = (
        "import pickle, sys\n"
        "from jaiweb.comic import art, drawing\n"
        "from jaiweb.comic.fonts import lettering_font\n"
        "pages, meta, panels = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "font = lettering_font()\n"
        "pics = lambda i, w, h: None if i is None else "
        "art.fitted(panels[i], 'image/svg+xml', w, h)\n"
        "draw = lambda p: drawing.draw_page(p, pics, font)\n"
        "out = {'pdf': drawing.comic_pdf(pages, pics, font, meta),\n"
        "       'cbz': drawing.comic_cbz(pages, draw, meta)}\n"
        "open(sys.argv[1], 'wb').write(pickle.dumps(out))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(job)], check=True, timeout=120)
    return pickle.loads(job.read_bytes())


def test_a_chinese_caption_is_lettered_in_the_cjk_font(episode):
    font = lettering_font()
    assert font.cjk and font.path == CANDIDATES[0][0]  # Debian's Noto Sans CJK, SC face
    draw_panels(episode, ["猪猪侠吃下超级棒棒糖"])
    pages, _meta = comic_pages(session=episode, leaf_id=None)
    frame = pages[0].frames[0]
    assert frame.lines == ("猪猪侠吃下超级棒棒糖",)
    with Image.open(io.BytesIO(export(episode, "png").data)) as page:
        box = frame.caption
        area = page.convert("L").crop((box.x, box.y, box.x + box.width, box.y + box.height))
        inked = sum(area.histogram()[:128])  # dark pixels
    assert inked > 200  # the characters are drawn


def test_no_narration_or_costs_reach_a_reader(episode):
    draw_panels(episode, STORY[:2])
    text = " ".join(pdf_text(export(episode, "pdf").data))
    assert "credit" not in text.lower() and "积分" not in text
    narrations = [
        r.entry.message.content
        for r in branch_rows(session=episode)
        if r.type == "message" and r.entry.message.role == "assistant" and r.entry.message.content
    ]
    assert narrations and not any(n in text for n in narrations)


def test_a_panel_not_the_owners_is_an_empty_frame_with_its_caption(episode, bob):
    draw_panels(episode, STORY[:2])
    PanelImage.objects.filter(user_id=episode.owner_id).update(user=bob)  # no longer hers
    pages, _ = comic_pages(session=episode, leaf_id=None)
    assert [f.panel.image_id for f in pages[0].frames] == [None, None]
    assert pages[0].frames[0].lines  # the caption stays
    with Image.open(io.BytesIO(export(episode, "png").data)) as page:
        art_box = pages[0].frames[0].art
        middle = page.getpixel((art_box.x + art_box.width // 2, art_box.y + art_box.height // 2))
    assert middle == (238, 238, 238)  # the empty frame's grey


def test_a_missing_panel_file_is_an_empty_frame(episode, media):
    draw_panels(episode, STORY[:1])
    for image in PanelImage.objects.all():
        (Path(media) / image.path).unlink()
    assert export(episode, "pdf").page_count == 1


def test_an_unknown_node_is_refused(episode, alice):
    draw_panels(episode, STORY[:1])
    with pytest.raises(UnknownEntry):
        export(episode, "pdf", leaf_id="e_not_here")


def test_an_empty_session_is_one_empty_page(episode):
    cbz = export(episode, "cbz")
    assert cbz_contents(cbz.data)[0] == ["page-001.png", "ComicInfo.xml"]
    pdf = pypdf.PdfReader(io.BytesIO(export(episode, "pdf").data))
    assert len(pdf.pages) == 1 and pdf.pages[0].extract_text() == ""


def test_an_svg_panel_draws_nothing_from_outside_itself(tmp_path):
    red = tmp_path / "red.png"
    Image.new("RGB", (40, 40), (255, 0, 0)).save(red)
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'width="40" height="40"><rect width="40" height="40" fill="hsl(240,100%,50%)"/>'
        f'<image href="file://{red}" xlink:href="file://{red}" width="40" height="40"/></svg>'
    ).encode()
    picture = art.fitted(svg, "image/svg+xml", 40, 40)
    assert picture.getpixel((20, 20)) == (0, 0, 255)  # the hsl() fill, and no red file


def test_without_the_cairo_library_an_svg_export_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import fails as with no libcairo2
    with pytest.raises(ExportUnavailable, match="libcairo2"):
        art.svg_drawn(b"<svg/>", width=10)


def test_without_any_font_the_error_names_the_package(tmp_path):
    with pytest.raises(ExportUnavailable, match="fonts-noto-cjk"):
        lettering_font(((str(tmp_path / "none.ttc"), "Noto Sans CJK SC"),))
