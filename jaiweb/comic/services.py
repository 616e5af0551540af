"""Edits of the comic's layer: a panel's lettering, the page layout and the panels' order.

Each is an ``app_state`` entry at the leaf (docs/ARCHITECTURE.md §5): it costs nothing,
draws nothing and rolls back with a rewind. Refused like every hand edit of the state
while a run goes on or when the caller's leaf is stale; a panel not on the branch is an
``UnknownEntry``; words or a layout this model cannot keep are an ``InvalidEntry`` and
nothing is written.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jaiweb.comic.exports import comic_panels
from jaiweb.commands.sessions import state_edit_append, state_to_edit
from jaiweb.store.errors import InvalidEntry
from jaiweb.store.models import ComicSession
from journal.appstate import UnreadableAppState, app_state_check
from journal.errors import UnknownEntry
from journal.lettering import (
    Bubble,
    LetteringEdit,
    PageChoice,
    PanelLettering,
    UnreadableLettering,
    moved,
    page_choice,
    read,
    with_lettering,
    with_page,
)
from journal.pages import Lettering


def _as_kept(lettering: Lettering) -> PanelLettering:
    """A panel's lettering as the state keeps it (the script's words as they are)."""
    bubbles = []
    for index, (name, words) in enumerate(lettering.speech):
        place = lettering.place_of(index)
        x, y = place if place is not None else (None, None)
        bubbles.append(Bubble.model_construct(character=name, text=words, x=x, y=y))
    return PanelLettering.model_construct(caption=lettering.caption, speech=tuple(bubbles))


def _checked(state: dict) -> dict:
    try:
        return app_state_check(state)
    except UnreadableAppState as exc:
        raise InvalidEntry(str(exc)) from None


def panel_lettering_set(
    *,
    session: ComicSession,
    entry_id: str,
    edit: dict[str, Any],
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Change a panel's caption, its bubbles' words or their places (``edit``: ``caption``
    and/or ``speech``, every bubble in order). Nothing is drawn or charged: readers and
    exports letter the panel with the new words."""
    try:
        change = read(LetteringEdit, edit)
    except UnreadableLettering as exc:
        raise InvalidEntry(str(exc)) from None
    state = state_to_edit(session=session, expected_leaf_id=expected_leaf_id).as_json()
    panels, _layout, _when = comic_panels(session=session, leaf_id=expected_leaf_id)
    panel = next((p for p in panels if p.entry_id == entry_id), None)
    if panel is None:
        raise UnknownEntry(entry_id)
    try:
        lettering = change.applied_to(_as_kept(panel.lettering))
    except ValueError as exc:
        raise InvalidEntry(str(exc)) from None
    value = _checked(with_lettering(state, entry_id, lettering))
    return state_edit_append(
        session=session, state=value, expected_leaf_id=expected_leaf_id, now=now
    )


def page_layout_set(
    *,
    session: ComicSession,
    layout: str | None = None,
    order: list[str] | None = None,
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Choose how the branch reads as pages: a layout, the panels' order (their entry ids;
    those left out follow in the branch's order), or both."""
    if layout is None and order is None:
        raise InvalidEntry("say what to change: layout, order or both")
    state = state_to_edit(session=session, expected_leaf_id=expected_leaf_id).as_json()
    current = page_choice(state)
    try:
        choice = read(
            PageChoice,
            {
                "layout": current.layout if layout is None else layout,
                "order": list(current.order) if order is None else order,
            },
        )
    except UnreadableLettering as exc:
        raise InvalidEntry(str(exc)) from None
    if order is not None:
        panels, _layout, _when = comic_panels(session=session, leaf_id=expected_leaf_id)
        on_branch = {p.entry_id for p in panels}
        stray = [entry for entry in choice.order if entry not in on_branch]
        if stray:
            raise InvalidEntry(f"order: {stray[0]} is no panel on this branch")
    value = _checked(with_page(state, choice))
    return state_edit_append(
        session=session, state=value, expected_leaf_id=expected_leaf_id, now=now
    )


def panel_move(
    *,
    session: ComicSession,
    entry_id: str,
    step: int,
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Move a panel one place earlier (``step`` -1) or later (1) in the reading order; the
    whole order is kept (``page_layout_set``). ``UnknownEntry`` for a panel not on the
    branch, ``InvalidEntry`` for a move past either end."""
    panels, _layout, _when = comic_panels(session=session, leaf_id=expected_leaf_id)
    order = [p.entry_id for p in panels]
    if entry_id not in order:
        raise UnknownEntry(entry_id)
    new = moved(order, entry_id, step)
    if new == order:
        raise InvalidEntry("this panel is already at that end of the order")
    return page_layout_set(session=session, order=new, expected_leaf_id=expected_leaf_id, now=now)
