"""/sessions/{id}/chapters and /sessions/{id}/back: chapter marks on a branch, and "back to
where I was" (issue 30).

Chapters are session state (an ``app_state`` entry, docs/ARCHITECTURE.md §5 chapters), so
setting or clearing one is a hand edit of the state at the leaf: 409 unless idle or when
``expected_leaf_id`` is not the leaf. "Back" is a rewind to the leaf the latest rewind on
the active branch left, previewed by its ``GET`` like any rewind.
"""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest
from ninja import Field, Router, Schema

from jaiweb.api.schemas import BodyIn, ErrorOut, NavigateOut, RewindPreviewOut, stripped_text
from jaiweb.commands.access import session_for
from jaiweb.commands.sessions import chapter_clear, chapter_set, session_back
from jaiweb.store.comparisons import rewind_preview_at
from jaiweb.store.selectors import branch_rows, chapters_at, where_i_was_of
from journal.chapters import TITLE_MAX, Chapter
from journal.jsonvalues import TEXT_RULE, Id

router = Router(tags=["branches"])

E404 = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}
E409 = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut}

ChapterTitle = stripped_text(
    TITLE_MAX,
    f"1 to {TITLE_MAX} characters as sent, not only whitespace; kept without leading and "
    f"trailing whitespace; {TEXT_RULE}",
)


class ChapterOut(Schema):
    number: int = Field(description="from 1, in the branch's order")
    entry_id: str = Field(description="the node the chapter starts at")
    title: str


class ChaptersOut(Schema):
    leaf_id: str | None = Field(description="the node whose branch this is")
    chapters: list[ChapterOut]


class ChapterIn(BodyIn):
    entry_id: Id = Field(description="a node of the active branch: where the chapter starts")
    title: ChapterTitle
    expected_leaf_id: Id | None = None


class BackIn(BodyIn):
    expected_leaf_id: Id | None = None


class BackOut(Schema):
    target_id: str | None = Field(
        description="the leaf the latest rewind on the active branch left; null: none"
    )
    preview: RewindPreviewOut | None = Field(description="what going back there rolls back")


def _out(leaf_id: str | None, chapters: list[Chapter]) -> dict:
    return {
        "leaf_id": leaf_id,
        "chapters": [
            {"number": c.number, "entry_id": c.entry_id, "title": c.title} for c in chapters
        ],
    }


def preview_out(preview) -> dict:
    """A ``journal.branches.RewindPreview`` as the API writes it, with both choices."""
    return {
        "target_id": preview.target_id,
        "changes": [asdict(change) for change in preview.changes],
        "story_only_changes": [asdict(change) for change in preview.story_only_changes],
        "left_behind": preview.left_behind,
        "stays": asdict(preview.stays),
    }


@router.get("/sessions/{session_id}/chapters", response={200: ChaptersOut, **E404})
def list_chapters(request: HttpRequest, session_id: str, leaf_id: Id | None = None):
    """The chapters of root → ``leaf_id`` (default: the leaf), in order: the numbers
    ``GET /sessions/{id}/comic?chapter=`` exports."""
    session = session_for(user=request.auth, session_id=session_id)
    node = leaf_id or session.leaf_id
    chapters = chapters_at(session=session, leaf_id=node) if node else []
    return _out(node, chapters)


@router.post("/sessions/{session_id}/chapters", response={200: ChaptersOut, **E409})
def set_chapter(request: HttpRequest, session_id: str, body: ChapterIn):
    """Start a chapter at a node of the active branch, or rename the one there: an
    ``app_state`` entry at the leaf. 422 for a bad title or a node off the active branch,
    404 for an unknown node, 409 unless idle or when ``expected_leaf_id`` (default: the
    leaf as it is now) is not the leaf."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    chapters = chapter_set(
        session=session,
        entry_id=body.entry_id,
        title=body.title,
        expected_leaf_id=body.expected_leaf_id or session.leaf_id,
    )
    session.refresh_from_db(fields=["leaf_id"])
    return _out(session.leaf_id, chapters)


@router.delete("/sessions/{session_id}/chapters/{entry_id}", response={200: ChaptersOut, **E409})
def clear_chapter(
    request: HttpRequest, session_id: str, entry_id: str, expected_leaf_id: Id | None = None
):
    """End the chapter mark at ``entry_id``: an ``app_state`` entry without it; 404 when the
    leaf's state has no chapter there."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    chapters = chapter_clear(
        session=session, entry_id=entry_id, expected_leaf_id=expected_leaf_id or session.leaf_id
    )
    session.refresh_from_db(fields=["leaf_id"])
    return _out(session.leaf_id, chapters)


@router.get("/sessions/{session_id}/back", response={200: BackOut, **E404})
def preview_back(request: HttpRequest, session_id: str):
    """Where "back to where I was" goes (the leaf the latest rewind on the active branch
    left) and what it rolls back there; ``target_id`` null when no rewind is on it."""
    session = session_for(user=request.auth, session_id=session_id)
    target = where_i_was_of(branch_rows(session=session, lazy=True)) if session.leaf_id else None
    if target is None:
        return {"target_id": None, "preview": None}
    return {
        "target_id": target,
        "preview": preview_out(rewind_preview_at(session=session, target_id=target)),
    }


@router.post("/sessions/{session_id}/back", response={200: NavigateOut, **E409})
def go_back(request: HttpRequest, session_id: str, body: BackIn):
    """Back to where I was: a rewind to the leaf the latest rewind on the active branch
    left; 409 when there is none, unless idle, or when the leaf is stale."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    nav = session_back(session=session, expected_leaf_id=body.expected_leaf_id)
    return {"leaf_id": nav.leaf_id, "app_state": nav.app_state}
