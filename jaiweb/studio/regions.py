"""The studio page's live regions, rendered from the journal for one viewer.

The page, the HTMX responses and the websocket all send these same fragments; each is a
top-level element with a stable id, swapped out of band in place. Rendering from the
journal (never from an event's payload) is what makes a missed or repeated event harmless.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation

from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import PANEL_COST
from jaiweb.store.labels import labels_version
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import app_state_at, branch_rows, unfinished_operation
from jaiweb.studio.selectors import characters_of, run_view, strip_view
from jaiweb.studio.tree import active_path_view

REGIONS = (
    "tree",
    "strip",
    "character-state",
    "credits",
    "session-notice",
    "controls",
    "prompt-leaf",
)


def studio_context(*, session: ComicSession) -> dict[str, Any]:
    """Everything the regions show, read once."""
    rows = branch_rows(session=session, lazy=True)  # the regions touch a few hundred rows
    state = app_state_at(session=session, rows=rows)
    run = run_view(session=session)
    return {
        "session": session,
        "leaf_id": session.leaf_id or "",
        "tree_items": active_path_view(session, rows),
        "strip": strip_view(rows, session=session),
        "characters": characters_of(state),
        "permission_mode": state.get("permission_mode", "ask"),
        "balance": wallet_balance(user=session.owner),
        "run": run,
        "offline_director": not settings.JAIWEB_LLM_MODEL,
        "local_renderer": settings.JAIWEB_IMAGE_BACKEND == "local",
        "panel_cost": PANEL_COST,
    }


def regions_html(
    *, session: ComicSession, language: str | None = None, context: dict | None = None
) -> str:
    """Every region as out-of-band fragments, in the viewer's language."""
    ctx = {**(context or studio_context(session=session)), "oob": True}
    with translation.override(language or settings.LANGUAGE_CODE):
        return "".join(render_to_string(f"studio/regions/{name}.html", ctx) for name in REGIONS)


# Rendered regions by everything they show (see ``_version``): the watchers of one
# session all ask for the same HTML after each event, and it is rendered once.
_CACHE_SIZE = 256
_rendered: OrderedDict[tuple, str] = OrderedDict()
_rendered_lock = threading.Lock()
_rendering: dict[tuple, threading.Event] = {}  # versions being rendered right now


def _version(session: ComicSession) -> tuple:
    """What the regions depend on, read in three short queries besides the session's own."""
    op = unfinished_operation(session=session)
    run = None if op is None else (op.id, op.record_count, op.parked_at, op.attention)
    return (
        session.id,
        session.title,
        session.leaf_id,
        session.entry_count,
        run,
        wallet_balance(user=session.owner_id),
        labels_version(session_id=session.id),  # the tree's label chips (a side table)
    )


def regions_html_shared(*, session: ComicSession, language: str) -> str:
    """``regions_html`` for a watcher, from the cache when nothing it shows has changed;
    watchers asking for the same version at once wait for one rendering of it."""
    key = (*_version(session), language)
    with _rendered_lock:
        html = _rendered.get(key)
        if html is not None:
            _rendered.move_to_end(key)
            return html
        rendering = _rendering.get(key)
        mine = rendering is None
        if mine:
            rendering = _rendering[key] = threading.Event()
    if not mine:
        rendering.wait(timeout=10)
        with _rendered_lock:
            html = _rendered.get(key)
        return html if html is not None else regions_html(session=session, language=language)
    try:
        html = regions_html(session=session, language=language)
        with _rendered_lock:
            _rendered[key] = html
            while len(_rendered) > _CACHE_SIZE:
                _rendered.popitem(last=False)
        return html
    finally:
        with _rendered_lock:
            _rendering.pop(key, None)
        rendering.set()
