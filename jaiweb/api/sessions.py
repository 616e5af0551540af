"""/sessions…: sessions, their entries and tree, and what a person may ask of one."""

from __future__ import annotations

from typing import Annotated

from django.http import HttpRequest
from django.utils.translation import get_language
from ninja import Router, Status
from pydantic import Field

from jaiweb.api.links import SESSION_IN_PATH, entry_links, link, links
from jaiweb.api.schemas import (
    EntryOut,
    ErrorOut,
    NavigateIn,
    NavigateOut,
    PromptIn,
    PromptOut,
    SessionCreateIn,
    SessionOut,
    SessionRenameIn,
    SessionSummaryOut,
    StopOut,
)
from jaiweb.api.selectors import entries_out, session_detail, sessions_of
from jaiweb.commands.access import session_for
from jaiweb.commands.sessions import prompt_submit, session_rewind, session_stop
from jaiweb.commands.variants import variants_prompt
from jaiweb.store.selectors import branch_rows, children_rows, entries_after
from jaiweb.store.services import session_create, session_delete, session_rename
from journal.jsonvalues import Id

router = Router(tags=["sessions"])
SEQ_MAX = 2**63 - 1

E401 = {401: ErrorOut}
E404 = {401: ErrorOut, 404: ErrorOut}
E422 = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}
# A request body over DATA_UPLOAD_MAX_MEMORY_SIZE is refused before it is read (413).
E413 = {413: ErrorOut}
E409 = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut}

NEW_SESSION = "$response.body#/id"
OPERATION = "$response.body#/operation_id"


def session_links(session_id: str) -> dict[str, dict]:
    return {
        "ReadSession": link("read_session", session_id=session_id),
        "SubmitPrompt": link("submit_prompt", session_id=session_id),
        "ListEntries": link("list_entries", session_id=session_id),
        "RenameSession": link("rename_session", session_id=session_id),
        "DeleteSession": link("delete_session", session_id=session_id),
        "ReadPage": link("read_page", session_id=session_id),
        "ChoosePage": link("set_page", {"layout": "strip"}, session_id=session_id),
    }


@router.get(
    "/sessions",
    response={200: list[SessionSummaryOut], **E401},
    openapi_extra=links(200, ReadSession=link("read_session", session_id="$response.body#/0/id")),
)
def list_sessions(request: HttpRequest):
    """My sessions, the most recently changed first."""
    return sessions_of(owner=request.auth)


@router.post(
    "/sessions",
    response={201: SessionOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut, **E413, **E401},
    openapi_extra=links(201, **session_links(NEW_SESSION)),
)
def create_session(request: HttpRequest, body: SessionCreateIn):
    """A new, empty session (``initial_app_state`` defaults to no characters, mode ask).

    A request that says its language (``Accept-Language``) makes a session in it, unless
    the state sent names one: the built-ins' names and states are then written in it, as
    for a session made in the studio."""
    state = body.app_state_as_sent()
    language = _asked_language(request)
    if language and "language" not in (state or {}):
        state = {"characters": {}, "permission_mode": "ask", **(state or {}), "language": language}
    session = session_create(owner=request.auth, title=body.title, initial_app_state=state)
    return Status(201, session_detail(session=session))


def _asked_language(request: HttpRequest) -> str | None:
    """``zh`` or ``en``, the language the request was answered in, when it asked for one."""
    if not request.META.get("HTTP_ACCEPT_LANGUAGE"):
        return None
    return "zh" if (get_language() or "").lower().startswith("zh") else "en"


@router.get(
    "/sessions/{session_id}",
    response={200: SessionOut, **E404},
    openapi_extra=links(
        200,
        **entry_links("/leaf_id"),
        ReadOperation=link("read_operation", operation_id=OPERATION),
        StopSession=link("stop_session", **SESSION_IN_PATH),
    ),
)
def read_session(request: HttpRequest, session_id: str):
    """The leaf, the app state at it, and idle / running / parked with the operation's id."""
    return session_detail(session=session_for(user=request.auth, session_id=session_id))


@router.patch("/sessions/{session_id}", response={200: SessionOut, 403: ErrorOut, **E413, **E422})
def rename_session(request: HttpRequest, session_id: str, body: SessionRenameIn):
    session = session_for(user=request.auth, session_id=session_id, write=True)
    return session_detail(session=session_rename(session_id=session.id, title=body.title))


@router.delete("/sessions/{session_id}", response={204: None, 403: ErrorOut, 409: ErrorOut, **E404})
def delete_session(request: HttpRequest, session_id: str):
    """Delete the session and all its facts; 409 unless it is idle."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    session_delete(session_id=session.id)
    return Status(204, None)


@router.get(
    "/sessions/{session_id}/entries",
    response={200: list[EntryOut], **E422},
    openapi_extra=links(200, **entry_links("/0/id")),
)
def list_entries(
    request: HttpRequest,
    session_id: str,
    # A seq is a 64-bit integer in both databases; a larger one was an OverflowError.
    after_seq: Annotated[int, Field(ge=0, le=SEQ_MAX)] = 0,
    limit: Annotated[int, Field(ge=1, le=1000)] = 1000,
):
    """Entries in append order after ``after_seq``; ask again from the last seq for more."""
    session = session_for(user=request.auth, session_id=session_id)
    return entries_out(entries_after(session=session, after_seq=after_seq, limit=limit))


@router.get(
    "/sessions/{session_id}/branch",
    response={200: list[EntryOut], **E422},
    openapi_extra=links(200, **entry_links("/0/id")),
)
def read_branch(request: HttpRequest, session_id: str, leaf: Id | None = None):
    """Root → ``leaf`` (default: the session's leaf)."""
    session = session_for(user=request.auth, session_id=session_id)
    return entries_out(branch_rows(session=session, leaf_id=leaf))


@router.get(
    "/sessions/{session_id}/children/{entry_id}",
    response={200: list[EntryOut], **E404},
    openapi_extra=links(200, **entry_links("/0/id")),
)
def list_children(request: HttpRequest, session_id: str, entry_id: str):
    """A node's children in append order (the tree view opens one level at a time)."""
    session = session_for(user=request.auth, session_id=session_id)
    return entries_out(children_rows(session=session, entry_id=entry_id))


@router.post(
    "/sessions/{session_id}/prompts",
    response={202: PromptOut, 429: ErrorOut, **E409},
    openapi_extra=links(
        202,
        **entry_links("/input_entry_id"),
        ReadOperation=link("read_operation", operation_id=OPERATION),
        DecideApproval=link("decide_approval", operation_id=OPERATION),
        StopSession=link("stop_session", **SESSION_IN_PATH),
    ),
)
def submit_prompt(request: HttpRequest, session_id: str, body: PromptIn):
    """Idle: starts a run (``queued`` false). Running: steers it (``queued`` true).

    Parked: 409, the session is waiting for an admin. Idle with a stale ``expected_leaf_id``:
    409 with the current ``leaf_id``. Too many prompts: 429 with Retry-After.
    """
    session = session_for(user=request.auth, session_id=session_id, write=True)
    text = variants_prompt(text=body.text, count=body.variants, language=get_language())
    accepted = prompt_submit(
        session=session,
        user=request.auth,
        text=text,
        expected_leaf_id=body.expected_leaf_id,
        framing=len(text) - len(body.text),
    )
    return Status(202, accepted)


@router.post(
    "/sessions/{session_id}/navigate",
    response={200: NavigateOut, **E409},
    openapi_extra=links(
        200,
        **entry_links("/leaf_id"),
        PromptHere=link(
            "submit_prompt", {"expected_leaf_id": "$response.body#/leaf_id"}, **SESSION_IN_PATH
        ),
    ),
)
def navigate_session(request: HttpRequest, session_id: str, body: NavigateIn):
    """Continue from any node (a ``branch`` entry); 409 unless idle or when the leaf is stale.
    ``keep_characters``: story only, today's characters are written back after it."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    nav = session_rewind(
        session=session,
        entry_id=body.entry_id,
        expected_leaf_id=body.expected_leaf_id,
        keep_characters=body.keep_characters,
    )
    return {"leaf_id": nav.leaf_id, "app_state": nav.app_state}


@router.post(
    "/sessions/{session_id}/stop",
    response={202: StopOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    openapi_extra=links(202, ReadOperation=link("read_operation", operation_id=OPERATION)),
)
def stop_session(request: HttpRequest, session_id: str):
    """Ask the run to stop at its next safe point; 409 when idle or parked."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    return Status(202, {"operation_id": session_stop(session=session, user=request.auth)})
