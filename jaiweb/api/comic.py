"""/sessions/{id}/comic: a branch (root → a node) as a comic, in PNG, PDF or CBZ.

A read, and a pure projection: the same node and lettering give the same bytes, so it may
be asked for during a run, and again later for the same file (docs/EXPORTS.md).
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from jaiweb.api.errors import ApiError
from jaiweb.api.links import SESSION_IN_PATH, link, links
from jaiweb.api.schemas import ErrorOut, LetteringIn, LetteringOut, PageIn, PageOut
from jaiweb.comic.errors import ExportUnavailable
from jaiweb.comic.exports import CONTENT_TYPES, NoSuchChapter, NoSuchPage, comic_export
from jaiweb.comic.selectors import page_at, panel_lettering_at
from jaiweb.comic.services import page_layout_set, panel_lettering_set
from jaiweb.commands.access import session_for
from journal.chapters import CHAPTERS_MAX
from journal.jsonvalues import Id
from journal.pages import LAYOUTS

router = Router(tags=["sessions"])

E404 = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}
E409 = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut}

Format = Literal["png", "pdf", "cbz"]
LayoutName = Literal["2x2", "3-tier", "strip", "splash"]
assert set(LayoutName.__args__) == set(LAYOUTS)  # the document names every layout
MAX_PAGE = 100_000

_BINARY = {"type": "string", "format": "binary"}
_HEADERS = {
    "Content-Disposition": {
        "description": "attachment, with the file's name (session id, node id)",
        "schema": {"type": "string"},
    },
    "X-Comic-Pages": {
        "description": "how many pages the comic has in this layout",
        "schema": {"type": "integer", "minimum": 1},
    },
}


@router.get(
    "/sessions/{session_id}/comic",
    response={200: None, 401: ErrorOut, 404: ErrorOut, 422: ErrorOut, 503: ErrorOut},
    openapi_extra={
        "responses": {
            200: {
                "description": (
                    "the comic: png is one page (`page`, from 1; the header X-Comic-Pages "
                    "says how many there are), pdf one PDF page per page with the lettering "
                    "as text, cbz every page as a PNG with ComicInfo.xml naming the session "
                    "and the node"
                ),
                "headers": _HEADERS,
                "content": {media: {"schema": _BINARY} for media in CONTENT_TYPES.values()},
            },
            404: {"description": "no such session (or not yours), node, page, or chapter"},
            503: {
                "description": (
                    "this server lacks a library or font exports need (the Cairo library, "
                    "a lettering font): the detail says what to install"
                )
            },
        }
    },
)
def export_comic(
    request: HttpRequest,
    session_id: str,
    format: Format,
    leaf_id: Id | None = None,
    layout: LayoutName | None = None,
    page: int = Query(1, ge=1, le=MAX_PAGE),
    chapter: int | None = Query(None, ge=1, le=CHAPTERS_MAX),
):
    """The branch root → ``leaf_id`` (default: the leaf) as a comic: its panels in the order
    chosen at that node, laid out in ``layout`` (default: the layout chosen there, else
    2x2), each with its lettering (as edited); no narration, no costs.
    ``chapter``: only that chapter of the branch (numbered from 1 in path order, as
    ``GET /sessions/{id}/chapters`` lists them), from its start to the next one's.
    Made on request, in one worker thread (docs/EXPORTS.md has the figures)."""
    session = session_for(user=request.auth, session_id=session_id)
    try:
        comic = comic_export(
            session=session,
            leaf_id=leaf_id,
            format=format,
            layout=layout,
            page=page,
            chapter=chapter,
        )
    except NoSuchPage:
        raise ApiError(404, "not_found", "no such page") from None
    except NoSuchChapter:
        raise ApiError(404, "not_found", "no such chapter on this branch") from None
    except ExportUnavailable as exc:
        raise ApiError(503, exc.code, str(exc)) from None
    response = HttpResponse(comic.data, content_type=comic.content_type)
    response["Content-Disposition"] = f'attachment; filename="{comic.filename}"'
    response["X-Comic-Pages"] = str(comic.page_count)
    return response


@router.get(
    "/sessions/{session_id}/entries/{entry_id}/lettering", response={200: LetteringOut, **E404}
)
def read_lettering(request: HttpRequest, session_id: str, entry_id: Id, at: Id | None = None):
    """A panel's lettering at a node (default: the leaf): its caption and bubbles, as
    edited or else as its script says; 404 when the panel is not on that branch."""
    session = session_for(user=request.auth, session_id=session_id)
    return panel_lettering_at(session=session, entry_id=entry_id, leaf_id=at)


@router.post(
    "/sessions/{session_id}/entries/{entry_id}/lettering",
    response={200: LetteringOut, **E409},
)
def edit_lettering(request: HttpRequest, session_id: str, entry_id: Id, body: LetteringIn):
    """Change a panel's caption, its bubbles' words or their places (``speech`` names every
    bubble, in order): an ``app_state`` entry at the leaf; nothing is drawn or charged, and
    a rewind brings the old words back. 404 when the panel is not on the branch; 409
    unless idle, or when ``expected_leaf_id`` (default: the leaf as it is now) is stale."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    edit = body.model_dump(include={"caption", "speech"}, exclude_none=True)
    panel_lettering_set(
        session=session,
        entry_id=entry_id,
        edit=edit,
        expected_leaf_id=body.expected_leaf_id or session.leaf_id,
    )
    session.refresh_from_db(fields=["leaf_id"])
    return panel_lettering_at(session=session, entry_id=entry_id, leaf_id=None)


FIRST_PANEL = "$response.body#/order/0"


@router.get(
    "/sessions/{session_id}/page",
    response={200: PageOut, **E404},
    openapi_extra=links(
        200,
        ReadFirstLettering=link("read_lettering", entry_id=FIRST_PANEL, **SESSION_IN_PATH),
        EditFirstLettering=link(
            "edit_lettering",
            {"speech": [{"character": "猪猪侠", "text": "好！", "x": 0.5, "y": 0.1}]},
            entry_id=FIRST_PANEL,
            **SESSION_IN_PATH,
        ),
    ),
)
def read_page(request: HttpRequest, session_id: str, at: Id | None = None):
    """How the branch at a node (default: the leaf) reads as pages: its layout and the
    panels' order (every panel on the branch, in reading order)."""
    session = session_for(user=request.auth, session_id=session_id)
    return page_at(session=session, leaf_id=at)


@router.post("/sessions/{session_id}/page", response={200: PageOut, **E409})
def set_page(request: HttpRequest, session_id: str, body: PageIn):
    """Choose the page layout, the panels' order (entry ids; those left out follow in the
    branch's order), or both: app state, so a rewind brings the old pages back; 422 for an
    id that is no panel on the branch; 409 unless idle or when the leaf is stale."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    page_layout_set(
        session=session,
        layout=body.layout,
        order=body.order,
        expected_leaf_id=body.expected_leaf_id or session.leaf_id,
    )
    session.refresh_from_db(fields=["leaf_id"])
    return page_at(session=session, leaf_id=None)
