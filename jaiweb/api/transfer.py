"""/sessions/…/export and /sessions/import: a session as a file, and a file as a new session.

The export streams the session file (docs/BUNDLES.md), with ``images=true`` a bundle with
its panel images. The import takes a file — jaiweb's own (any readable version), a pi
session or a Claude Code transcript — as ``multipart/form-data`` (field ``file``) or as
the raw body, up to ``JAIWEB_MAX_BUNDLE_BYTES``: 201 with the new session, 422 naming
the line of the first problem, 413 over the limit, 415 for any other body; refused, it
writes nothing (the request is one transaction, ``ApiMiddleware``).
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from itertools import chain

from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from django.http.multipartparser import MultiPartParserError
from ninja import Router, Status

from jaiweb.api.errors import ApiError
from jaiweb.api.links import link
from jaiweb.api.schemas import ErrorOut, ImportRefusedOut, SessionOut
from jaiweb.api.selectors import session_detail
from jaiweb.commands.access import session_for
from jaiweb.store.errors import BundleTooLarge, ImportRefused
from jaiweb.store.transfer import IMPORTED_TITLE, session_export, session_import
from journal.ids import canonical_json
from journal.session_file import header_line, label_line

router = Router(tags=["sessions"])

IMPORT_PATH = "/sessions/import"
# The raw bodies an import takes (a JSON-lines file); multipart/form-data besides.
RAW_TYPES = ("application/jsonl", "application/x-ndjson", "application/octet-stream")
NEW_SESSION = "$response.body#/id"


# A whole session file, for the document's readers (and the fuzzer's examples phase): one
# prompt and its reply, as export_session writes them.
EXAMPLE_FILE = "".join(
    line + "\n"
    for line in (
        header_line(
            {
                "id": "s_example",
                "title": "猪猪侠大战超人强",
                "initial_app_state": {"characters": {}, "permission_mode": "ask"},
                "leaf_id": "e1",
                "created_at": "2026-11-30T12:00:00Z",
                "updated_at": "2026-11-30T12:00:01Z",
                "entry_count": 2,
                "operation_count": 0,
            },
            label_count=1,
            image_count=0,
        ),
        canonical_json(
            {
                "type": "message",
                "id": "e0",
                "parent_id": None,
                "timestamp": "2026-11-30T12:00:00Z",
                "message": {"role": "user", "content": "画一格：猪猪侠吃下超级棒棒糖"},
            }
        ),
        canonical_json(
            {
                "type": "message",
                "id": "e1",
                "parent_id": "e0",
                "timestamp": "2026-11-30T12:00:01Z",
                "message": {
                    "role": "assistant",
                    "content": "好的！",
                    "tool_calls": [],
                    "stop_reason": "stop",
                    "usage": None,
                },
            }
        ),
        label_line(
            entry_id="e0",
            kind="bookmark",
            text="★",
            created_at=datetime(2026, 11, 30, 12, 0, 2, tzinfo=UTC),
        ),
    )
)


def bundle_limit() -> int:
    return settings.JAIWEB_MAX_BUNDLE_BYTES


def _file_schema() -> dict:
    return {
        "type": "string",
        "format": "binary",
        "maxLength": bundle_limit(),
        "description": (
            "a session file: jaiweb's (a bundle of version 2, or version 1), a pi session "
            "(JSONL v3) or a Claude Code transcript; at most JAIWEB_MAX_BUNDLE_BYTES "
            f"({bundle_limit()}) bytes"
        ),
    }


def _import_openapi() -> dict:
    raw = {media: {"schema": _file_schema()} for media in RAW_TYPES}
    # Where a client (schemathesis among them) knows how to send an example as it is.
    raw["application/octet-stream"]["example"] = EXAMPLE_FILE
    return {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {"file": _file_schema()},
                    },
                    "example": {"file": EXAMPLE_FILE},
                },
                **raw,
            },
        },
        "responses": {
            201: {
                "links": {
                    "ReadSession": link("read_session", session_id=NEW_SESSION),
                    "ListEntries": link("list_entries", session_id=NEW_SESSION),
                    "ExportSession": link("export_session", session_id=NEW_SESSION),
                }
            },
            400: {
                "description": (
                    "a multipart/form-data body that is not a well-formed form: refused by the "
                    "HTTP server (daphne's Twisted parses every form it is sent) before the "
                    "application sees it, with no body"
                )
            },
        },
    }


@router.post(
    IMPORT_PATH,
    response={
        201: SessionOut,
        401: ErrorOut,
        403: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,
        415: ErrorOut,
        422: ImportRefusedOut,
    },
    openapi_extra=_import_openapi(),
)
def import_session(request: HttpRequest):
    """A new session of mine from a session file; 422 names the line of the first problem.

    Entries keep their ids; panel images keep theirs unless another image has it (then
    each takes a derived id, written wherever the entries name it). An import charges
    nothing and grants nothing.
    """
    data = _file_of(request, bundle_limit())
    try:
        session = session_import(
            owner=request.auth, lines=io.BytesIO(data), title_format=str(IMPORTED_TITLE)
        )
    except ImportRefused as exc:
        return Status(422, {"detail": str(exc), "code": exc.code, "line": exc.line_no})
    return Status(201, session_detail(session=session))


def _file_of(request: HttpRequest, limit: int) -> bytes:
    """The file's bytes, from the form's ``file`` field or the raw body; 413 past ``limit``."""
    media = (request.content_type or "").lower()
    if media == "multipart/form-data":
        try:
            upload = request.FILES.get("file")
        except MultiPartParserError as exc:
            raise ApiError(422, "invalid_body", f"the form could not be read: {exc}") from exc
        if upload is None:
            raise ApiError(422, "invalid", "file: send the session file in the form field 'file'")
        if upload.size > limit:
            raise BundleTooLarge(limit)
        return upload.read()
    if media in RAW_TYPES:
        data = request.read(limit + 1)
        if len(data) > limit:
            raise BundleTooLarge(limit)
        return data
    raise ApiError(
        415,
        "unsupported_media_type",
        "send the session file as multipart/form-data (field 'file') or as the body, "
        f"with Content-Type {', '.join(RAW_TYPES)}",
    )


@router.get(
    "/sessions/{session_id}/export",
    response={200: None, 401: ErrorOut, 404: ErrorOut, 422: ErrorOut},
    openapi_extra={
        "responses": {
            200: {
                "description": (
                    "the session as canonical JSON lines (`export_session`); with images=true "
                    "a bundle that carries the panel images too (docs/BUNDLES.md)"
                ),
                "content": {"application/jsonl": {"schema": {"type": "string"}}},
            }
        }
    },
)
def export_session(request: HttpRequest, session_id: str, images: bool = False):
    """The JSONL of ``manage.py export_session`` (``--images`` with ``images=true``), streamed."""
    session = session_for(user=request.auth, session_id=session_id)
    lines = session_export(session=session, images=images)
    # The header line is read now, so a session deleted meanwhile is a 404, not a cut stream.
    first = next(lines)
    response = StreamingHttpResponse(
        (line + "\n" for line in chain([first], lines)),
        content_type="application/jsonl; charset=utf-8",
    )
    name = f"{session.id}.bundle.jsonl" if images else f"{session.id}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
