"""A branch (root → a node) exported as a comic: PNG pages, a PDF, or a CBZ.

A pure projection: it reads the path, which no later append changes, and the owner's panel
files, and writes nothing. The same node and the same lettering give the same bytes.
"""

from __future__ import annotations

import functools
import io
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings

from jaiweb.comic.art import fitted
from jaiweb.comic.drawing import (
    ComicMeta,
    Pictures,
    comic_cbz_into,
    comic_pdf_into,
    draw_page,
    measure_with,
    page_name,
    png_bytes,
)
from jaiweb.comic.fonts import LetteringFont, lettering_font
from jaiweb.render.panel.script import parse
from jaiweb.render.selectors import images_by_id
from jaiweb.store.models import ComicSession
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import app_state_at, branch_rows, chapters_at
from journal.chapters import chapter_numbered
from journal.pages import (
    ComicPanel,
    Lettering,
    Page,
    PathPanel,
    layout_in,
    lettered,
    paginate,
    panels_on,
)
from journal.variants import choices_of

log = logging.getLogger("jaiweb.comic")

FORMATS = ("png", "pdf", "cbz")
CONTENT_TYPES = {
    "png": "image/png",
    "pdf": "application/pdf",
    "cbz": "application/vnd.comicbook+zip",
}
PICTURES_KEPT = 8  # pictures an export keeps drawn: more than a page of any layout
PICKED_DEPTH = 4  # how far a placed panel's words are followed back through other placements


class NoSuchPage(LookupError):
    """A page number past the comic's last page."""


class NoSuchChapter(LookupError):
    """A chapter number the branch does not have (journal/chapters.py numbers them)."""


@dataclass(frozen=True, slots=True)
class ComicFile:
    data: bytes
    content_type: str
    filename: str
    page_count: int


def _panel_rows(rows: list[StoredEntry]) -> list[StoredEntry]:
    """The message rows that may be a panel or the call that drew it, parsed at once."""
    kept = [
        r
        for r in rows
        if r.type == "message" and (r.may_contain('"image_id"') or r.may_contain("generate_image"))
    ]
    parse_rows(kept)
    return kept


def _path_panels(
    session: ComicSession, leaf_id: str | None, *, with_state: bool = False
) -> tuple[list[PathPanel], Any, dict | None]:
    """The path's panels, the node's time and (``with_state``) the app state at the node."""
    rows = list(branch_rows(session=session, leaf_id=leaf_id))
    state = app_state_at(session=session, rows=rows)
    # Of a variant set, the one chosen in the state at the node (journal/variants.py).
    panels = panels_on([r.entry for r in _panel_rows(rows)], choices_of(state))
    when = rows[-1].entry.timestamp if rows else session.created_at
    return panels, when, state if with_state else None


def prompt_of_placed(session: ComicSession, panel: PathPanel) -> str:
    """The prompt a placed panel was first drawn from, found on its origin's branch."""
    for _ in range(PICKED_DEPTH):
        if panel.from_entry_id is None:
            return panel.prompt
        try:
            origins, _when, _state = _path_panels(session, panel.from_entry_id)
        except LookupError:  # the origin is not in this session: no words to show
            return ""
        if not origins or origins[-1].entry_id != panel.from_entry_id:
            return ""
        panel = origins[-1]
    return panel.prompt


@functools.lru_cache(maxsize=2048)
def lettering_of(prompt: str) -> Lettering:
    """What readers read on a panel: its script's caption (the scene when it has none) and
    speech lines. The director's narration and costs are never part of it. Kept by the
    prompt (a frozen value): the strip reads each of its panels' words on every pass."""
    script = parse(prompt)
    return Lettering(script.shown_caption, tuple(script.speech))


def _chapter(session: ComicSession, leaf_id: str | None, number: int) -> tuple[set[str], str]:
    """The entry ids of chapter ``number`` of root → ``leaf_id``, from its start up to the
    next chapter's, and its title (``NoSuchChapter`` when the branch has no such one)."""
    rows = branch_rows(session=session, leaf_id=leaf_id, lazy=True)
    chapter = chapter_numbered(chapters_at(session=session, rows=rows), number)
    if chapter is None:
        raise NoSuchChapter(number)
    return {rows[i].entry_id for i in range(chapter.start, chapter.stop)}, chapter.title


def comic_panels(
    *, session: ComicSession, leaf_id: str | None, chapter: int | None = None
) -> tuple[list[ComicPanel], str, Any]:
    """The comic's panels on root → ``leaf_id`` (default: the session's leaf) in the order
    the app state there chose, each with its lettering (edited, else its script's); the
    layout the state chose; and the node's time. The one list the exports and the reading
    view (share page, episode page, Read mode) are drawn from. ``chapter``: only that
    chapter's panels (``NoSuchChapter`` when the branch has no such chapter).
    ``UnknownEntry`` for a node not in the session. Panels whose image is not the owner's
    are left as empty frames."""
    path, when, state = _path_panels(session, leaf_id, with_state=True)
    if chapter is not None:
        inside, _title = _chapter(session, leaf_id, chapter)
        path = [p for p in path if p.entry_id in inside]
    owned = images_by_id(ids=sorted({p.image_id for p in path}), owner_id=session.owner_id)
    panels = lettered(
        path,
        lambda p: lettering_of(prompt_of_placed(session, p) if p.from_entry_id else p.prompt),
        state,
        lambda p: p.image_id if p.image_id in owned else None,
    )
    return panels, layout_in(state), when


def comic_pages(
    *,
    session: ComicSession,
    leaf_id: str | None,
    layout: str | None = None,
    chapter: int | None = None,
) -> tuple[list[Page], ComicMeta]:
    """The pages of root → ``leaf_id`` (default: the session's leaf) in ``layout`` (default:
    the one the app state at that node chose), and the file's metadata; ``chapter``: only
    that chapter's panels, titled with it. ``UnknownEntry`` for a node not in the session;
    ``ValueError`` for an unknown layout."""
    panels, chosen, when = comic_panels(session=session, leaf_id=leaf_id, chapter=chapter)
    layout = layout or chosen
    title = session.title
    if chapter is not None:
        title = f"{session.title} · {_chapter(session, leaf_id, chapter)[1]}"
    font = lettering_font()
    pages = paginate(panels, layout, measure_with(font))
    leaf = leaf_id or session.leaf_id or ""
    meta = ComicMeta(title, session.id, leaf, layout, when)
    return pages, meta


def _pictures(session: ComicSession, pages: list[Page]):
    """Reads a frame's picture from the owner's panel file (None: an empty frame). The
    owner's images on the pages are looked up at once, and the last few pictures drawn are
    kept, so a panel shown twice in a row is drawn once."""
    ids = sorted({f.panel.image_id for page in pages for f in page.frames if f.panel.image_id})
    owned = images_by_id(ids=ids, owner_id=session.owner_id)

    @functools.lru_cache(maxsize=PICTURES_KEPT)
    def picture(image_id: str | None, width: int, height: int):
        image = owned.get(image_id) if image_id is not None else None
        if image is None:
            return None
        path = Path(settings.MEDIA_ROOT) / image.path
        try:
            data = path.read_bytes()
        except OSError:
            log.warning("panel file %s is missing for an export", image.path)
            return None
        return fitted(data, image.content_type, width, height)

    return picture


@dataclass(frozen=True, slots=True)
class ComicWork:
    """A PDF or CBZ export ready to be drawn: drawing it reads panel files and no database,
    so any thread may do it."""

    format: str
    pages: list[Page]
    meta: ComicMeta
    pictures: Pictures
    font: LetteringFont
    filename: str

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.format]


def _stem(session: ComicSession, meta: ComicMeta, chapter: int | None) -> str:
    stem = f"{session.id}-{meta.leaf_id}" if meta.leaf_id else session.id
    return f"{stem}-chapter{chapter}" if chapter is not None else stem


def comic_work(
    *,
    session: ComicSession,
    leaf_id: str | None,
    format: str,
    layout: str | None = None,
    chapter: int | None = None,
) -> ComicWork:
    """What a PDF or CBZ of root → ``leaf_id`` draws: its pages, metadata and the owner's
    pictures on them (refused as ``comic_pages`` refuses)."""
    if format not in ("pdf", "cbz"):
        raise ValueError("format must be pdf or cbz")
    pages, meta = comic_pages(session=session, leaf_id=leaf_id, layout=layout, chapter=chapter)
    name = f"{_stem(session, meta, chapter)}.{format}"
    return ComicWork(format, pages, meta, _pictures(session, pages), lettering_font(), name)


def _counted(pages: list[Page], done: Callable[[int], None]) -> Iterator[Page]:
    """The pages, saying after each how many are drawn."""
    for number, page in enumerate(pages, start=1):
        yield page
        done(number)


def comic_work_write(
    work: ComicWork, out: BinaryIO, *, done: Callable[[int], None] = lambda number: None
) -> None:
    """Draws the export into ``out``, calling ``done`` with the count of pages drawn after
    each page."""
    if work.format == "pdf":
        comic_pdf_into(out, work.pages, work.pictures, work.font, work.meta, done=done)
    else:
        draw = functools.partial(draw_page, pictures=work.pictures, font=work.font)
        comic_cbz_into(out, _counted(work.pages, done), draw, work.meta)


def comic_export(
    *,
    session: ComicSession,
    leaf_id: str | None,
    format: str,
    layout: str | None = None,
    page: int = 1,
    chapter: int | None = None,
) -> ComicFile:
    """The comic of root → ``leaf_id`` as ``format``: ``png`` is page ``page`` alone
    (``NoSuchPage`` past the last), ``pdf`` one PDF page per page, ``cbz`` every page as a
    PNG with ``ComicInfo.xml``. ``layout`` defaults to the one chosen at that node."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    if format != "png":
        work = comic_work(
            session=session, leaf_id=leaf_id, format=format, layout=layout, chapter=chapter
        )
        out = io.BytesIO()
        comic_work_write(work, out)
        return ComicFile(out.getvalue(), work.content_type, work.filename, len(work.pages))
    pages, meta = comic_pages(session=session, leaf_id=leaf_id, layout=layout, chapter=chapter)
    if not 1 <= page <= len(pages):
        raise NoSuchPage(page)
    data = png_bytes(draw_page(pages[page - 1], _pictures(session, pages), lettering_font()))
    name = f"{_stem(session, meta, chapter)}-{page_name(page)}"
    return ComicFile(data, CONTENT_TYPES[format], name, len(pages))
