"""A branch as its readers see it: pages of panels with their captions and speech.

The share page, the exported episode page and the studio's Read mode all show this, and
nothing else of the session: no director's narration, no costs, no tool talk. It is read
from the same panel list as the PNG / PDF / CBZ exports (``comic_panels``) and laid out by
the same page layouts (``journal.pages``), so a reader sees on screen what a download
holds. A pure read: it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from jaiweb.comic.exports import comic_panels
from jaiweb.comic.selectors import PanelLayer, panel_layer
from jaiweb.store.models import ComicSession
from journal.pages import ComicPanel, Layout, layout_named


@dataclass(frozen=True, slots=True)
class ReadFrame:
    """One panel on a page: its place on the branch (from 1), its picture (None: missing,
    drawn as an empty frame), its words, the layer that draws its bubbles over the picture
    (the studio strip's), and where the page loads the picture from."""

    number: int
    image_id: str | None
    caption: str
    speech: tuple[tuple[str, str], ...]
    layer: PanelLayer | None = None
    src: str = ""
    entry_id: str = ""  # the panel's entry: what a move in the reading order names


@dataclass(frozen=True, slots=True)
class ReadPage:
    number: int  # from 1
    frames: tuple[ReadFrame, ...]


@dataclass(frozen=True, slots=True)
class Reading:
    layout: Layout
    pages: tuple[ReadPage, ...]  # none for a branch with no panel

    @property
    def panel_count(self) -> int:
        return sum(len(page.frames) for page in self.pages)

    def sourced(self, source: Callable[[str], str]) -> Reading:
        """The same pages with each picture's address as ``source(image_id)`` gives it: the
        studio, a share link and the self-contained episode page each load panels their
        own way."""
        pages = tuple(
            replace(
                page,
                frames=tuple(
                    replace(f, src=source(f.image_id) if f.image_id else "") for f in page.frames
                ),
            )
            for page in self.pages
        )
        return replace(self, pages=pages)


def reading_pages(panels: list[ComicPanel], layout: Layout) -> tuple[ReadPage, ...]:
    """``panels`` in reading order, ``layout.per_page`` to a page, each with the bubbles
    the studio's strip draws over its picture."""
    frames = [
        ReadFrame(
            n,
            panel.image_id,
            panel.lettering.caption.strip(),
            _said(panel),
            panel_layer(panel.lettering, edited=False),
            entry_id=panel.entry_id,
        )
        for n, panel in enumerate(panels, 1)
    ]
    step = layout.per_page
    return tuple(
        ReadPage(i // step + 1, tuple(frames[i : i + step])) for i in range(0, len(frames), step)
    )


def _said(panel: ComicPanel) -> tuple[tuple[str, str], ...]:
    return tuple((name.strip(), words.strip()) for name, words in panel.lettering.speech if words)


def reading_of(
    *, session: ComicSession, leaf_id: str | None = None, layout: str | None = None
) -> Reading:
    """The branch root → ``leaf_id`` (default: the session's leaf) as pages in ``layout``
    (default: the one the app state at that node chose). ``UnknownEntry`` for a node not
    in the session, ``ValueError`` for an unknown layout."""
    panels, own, _when = comic_panels(session=session, leaf_id=leaf_id)
    chosen = layout_named(layout or own)
    return Reading(chosen, reading_pages(panels, chosen))
