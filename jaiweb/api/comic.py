"""/sessions/{id}/comic: a branch (root → a node) as a comic, in PNG, PDF or CBZ.

A read, and a pure projection: the same node and lettering give the same bytes, so it may
be asked for during a run, and again later for the same file (docs/EXPORTS.md).
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from jaiweb.api.errors import ApiError
from jaiweb.api.schemas import ErrorOut
from jaiweb.comic.errors import ExportUnavailable
from jaiweb.comic.exports import CONTENT_TYPES, NoSuchChapter, NoSuchPage, comic_export
from jaiweb.sessions.access import session_for
from journal.chapters import CHAPTERS_MAX
from journal.jsonvalues import Id
from journal.pages import DEFAULT_LAYOUT, LAYOUTS

router = Router(tags=["sessions"])

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
    layout: LayoutName = DEFAULT_LAYOUT,
    page: int = Query(1, ge=1, le=MAX_PAGE),
    chapter: int | None = Query(None, ge=1, le=CHAPTERS_MAX),
):
    """The branch root → ``leaf_id`` (default: the leaf) as a comic: its panels in order,
    laid out in ``layout``, each with its caption and speech; no narration, no costs.
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
