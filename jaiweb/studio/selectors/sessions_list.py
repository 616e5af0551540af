"""Reads behind the sessions list: the owner's sessions as cards, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Paginator

from jaiweb.store.models import ComicSession, Operation, operation_state
from jaiweb.store.selectors import branch_counts, latest_images

# Cards on one page of the list: a few rows of thumbnails on a wide screen.
SESSIONS_PAGE = 24


@dataclass(frozen=True, slots=True)
class SessionCard:
    session: ComicSession
    branches: int
    thumbnail: str | None
    state: str  # idle / running / parked


@dataclass(frozen=True, slots=True)
class SessionsPage:
    """One page of the owner's sessions, and the pages on either side of it."""

    cards: list[SessionCard]
    number: int  # counted from 1, the newest activity first
    pages: int
    newer: int | None  # the page before this one, if any
    older: int | None  # the page after this one, if any


def page_number(asked: str | None) -> int:
    """The page a ``?page=`` value asks for: 1 for anything but a positive whole number."""
    try:
        number = int(asked or 1)
    except ValueError:
        return 1
    return max(number, 1)


def my_sessions(*, owner: Any, page: int = 1) -> SessionsPage:
    """A page of the owner's sessions, latest activity first, each with its latest panel.

    The number of queries does not grow with the number of sessions: one counts them, one
    reads the page, and one each reads its cards' branch counts, runs and thumbnails. A
    number past the last page shows the last page."""
    sessions = ComicSession.objects.filter(owner=owner, deleting=False)
    paginator = Paginator(sessions.order_by("-updated_at", "-id"), SESSIONS_PAGE)
    shown = paginator.get_page(page)
    return SessionsPage(
        cards=_cards(list(shown.object_list)),
        number=shown.number,
        pages=paginator.num_pages,
        newer=shown.previous_page_number() if shown.has_previous() else None,
        older=shown.next_page_number() if shown.has_next() else None,
    )


def _cards(sessions: list[ComicSession]) -> list[SessionCard]:
    """The cards of ``sessions``: three queries, whatever their number."""
    ids = [session.id for session in sessions]
    branches = branch_counts(session_ids=ids)
    thumbnails = latest_images(session_ids=ids)
    unfinished = dict(
        Operation.objects.filter(session_id__in=ids, outcome__isnull=True).values_list(
            "session_id", "parked_at"
        )
    )
    cards = []
    for session in sessions:
        if session.id in unfinished:
            state = operation_state(outcome=None, parked_at=unfinished[session.id])
        else:
            state = "idle"
        cards.append(
            SessionCard(session, branches.get(session.id, 0), thumbnails.get(session.id), state)
        )
    return cards
