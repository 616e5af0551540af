"""The studio page's live regions, rendered from the journal for one viewer.

The page, the HTMX responses and the websocket all send these same fragments; each is a
top-level element with a stable id, swapped out of band in place. Rendering from the
journal (never from an event's payload) is what makes a missed or repeated event harmless.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from cachetools import LRUCache
from django.conf import settings
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils import translation

from jaiweb.commands.status import UNREAD
from jaiweb.live.catch_up import FACT_REGIONS, REGIONS
from jaiweb.render.backends import backend_label
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import PANEL_COST
from jaiweb.store.errors import SessionNotFound
from jaiweb.store.labels import labels_version
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import app_state_at, branch_rows, session_get, unfinished_operation
from jaiweb.studio.pass_counts import read_count
from jaiweb.studio.selectors.characters import characters_of
from jaiweb.studio.selectors.rewinds import back_target_of
from jaiweb.studio.selectors.runs import run_view
from jaiweb.studio.selectors.strip import strip_lettered, strip_view
from jaiweb.studio.stream import stream_html
from jaiweb.studio.tree import active_path_view
from journal.pages import layout_in
from journal.variants import choices_of


def studio_context(
    *, session: ComicSession, operation: object = UNREAD, balance: int | None = None
) -> dict[str, Any]:
    """Everything the regions show, read once (``operation``, the unfinished one, and
    ``balance``: when read already)."""
    rows = branch_rows(session=session, lazy=True)  # the regions touch a few hundred rows
    state = app_state_at(session=session, rows=rows)
    return {
        **_run_part(session, state, operation),
        "tree_items": active_path_view(session, rows),
        "back_target": back_target_of(session=session, rows=rows),
        "strip": strip_lettered(
            strip_view(rows, session=session, choices=choices_of(state)),
            session=session,
            state=state,
        ),
        "layout": layout_in(state),
        # no query for the owner row
        "balance": wallet_balance(user=session.owner_id) if balance is None else balance,
    }


def _run_part(session: ComicSession, state: dict, operation: object = UNREAD) -> dict[str, Any]:
    """What the controls, the notice and the character forms show (``state``: the app
    state at the leaf): the run and the leaf, nothing of the path's rows."""
    return {
        "session": session,
        "leaf_id": session.leaf_id or "",
        "characters": characters_of(state),
        "permission_mode": state.get("permission_mode", "ask"),
        "run": run_view(session=session, operation=operation),
        "offline_director": not settings.JAIWEB_LLM_MODEL,
        "llm_model": settings.JAIWEB_LLM_MODEL,
        "local_renderer": settings.JAIWEB_IMAGE_BACKEND == "local",
        "image_backend": backend_label(),
        "panel_cost": PANEL_COST,
    }


def regions_html(
    *, session: ComicSession, language: str | None = None, context: dict | None = None
) -> str:
    """Every region as out-of-band fragments, in the viewer's language."""
    ctx = context or studio_context(session=session)
    return "".join(region_parts(context=ctx, language=language, names=REGIONS).values())


@functools.lru_cache(maxsize=512)
def region_digest(html: str) -> str:
    """A short digest of one region's HTML: what a page holds of it, told back by the page.

    Kept for the regions rendered lately: every watcher of a session is sent the same
    rendering, one string whose hash Python keeps, so the watchers after the first look
    its digest up."""
    return hashlib.blake2b(html.encode(), digest_size=8).hexdigest()


def regions_header(parts: dict[str, str]) -> str:
    """The ``X-Jaiweb-Regions`` value of an answer carrying ``parts``: each region's name and
    digest, so that the page can tell its socket what it now shows."""
    return ",".join(f"{name}={region_digest(html)}" for name, html in parts.items())


def shown_regions(value: object) -> dict[str, str]:
    """The regions a page says it shows (an ``X-Jaiweb-Regions`` value it sent back), by name.

    Anything that is not a known region with a digest of the right form is left out."""
    if not isinstance(value, str) or len(value) > 1024:
        return {}
    shown = {}
    for item in value.split(","):
        name, _eq, digest = item.partition("=")
        if name in REGIONS and len(digest) == 16 and all(c in "0123456789abcdef" for c in digest):
            shown[name] = digest
    return shown


def answer_regions(*, session: ComicSession, language: str | None) -> tuple[str, str]:
    """Every region for an HTTP answer, and its ``X-Jaiweb-Regions`` header value.

    The answer only answers: the command that made the change announced it after its commit.
    The page, once it has swapped the regions in, tells its socket their digests, so that
    the socket does not send them again. The regions are rendered as a watcher's pass
    renders them, once per database version and language: the passes that the change's
    announcement starts find them rendered, for the sender's other tabs and for this one."""
    parts, _stream = catch_up_parts(
        session=session, language=language or settings.LANGUAGE_CODE, counted_as="answer"
    )
    return "".join(parts.values()), regions_header(parts)


def region_parts(*, context: dict, language: str | None, names: Iterable[str]) -> dict[str, str]:
    """The regions ``names``, each as its out-of-band fragment, in the viewer's language."""
    ctx = {**context, "oob": True}
    language = language or settings.LANGUAGE_CODE
    with translation.override(language):
        return {name: _region_html(name, ctx, language) for name in names}


def character_state_key(context: dict) -> tuple:
    """All that the character-state region shows, from its context: the forms in it name
    no leaf, so an entry that changes none of this leaves its HTML as it was."""
    return (
        context["session"].id,
        json.dumps(context["characters"]),
        context["permission_mode"],
        context["run"].status.state == "idle",
        context["panel_cost"],
    )


# Regions whose HTML is kept by what they show rather than by the session's version, which
# moves with every entry: a run's entries change the tree and the strip, seldom these.
_KEPT_BY_CONTENT: dict[str, Callable[[dict], tuple]] = {"character-state": character_state_key}
_BY_CONTENT_KEPT = 1024
_by_content: LRUCache[tuple, str] = LRUCache(_BY_CONTENT_KEPT)


def regions_by_content_forget() -> None:
    """Forget the regions kept by what they show (a bench's cold page)."""
    with _rendered_lock:
        _by_content.clear()


def _region_html(name: str, ctx: dict, language: str) -> str:
    keyed = _KEPT_BY_CONTENT.get(name)
    if keyed is None:
        return render_to_string(f"studio/regions/{name}.html", ctx)
    key = (name, *keyed(ctx), language, get_script_prefix())
    with _rendered_lock:
        html = _by_content.get(key)
    if html is None:
        html = render_to_string(f"studio/regions/{name}.html", ctx)
        with _rendered_lock:
            _by_content[key] = html
    return html


REGION_FACTS: dict[str, tuple[str, ...]] = {
    name: ("session", *(fact for fact, names in FACT_REGIONS.items() if name in names))
    for name in REGIONS
}


def region_versions(counts: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Each region's version: the counts of the facts that can change it."""
    return {name: tuple(counts.get(f, 0) for f in facts) for name, facts in REGION_FACTS.items()}


def _credits_context(session: ComicSession, shared: dict) -> dict[str, Any]:
    balance = shared.get("balance")
    return {"balance": wallet_balance(user=session.owner_id) if balance is None else balance}


def _run_context(session: ComicSession, shared: dict) -> dict[str, Any]:
    # the leaf's state, no path read; the balance the controls show by the paid buttons
    return {
        **_run_part(session, app_state_at(session=session), shared.get("operation", UNREAD)),
        **_credits_context(session, shared),
    }


# Regions that need a small part of ``studio_context``, read alone when only they changed:
# an operation's fact (a tool finished, an approval asked) reads no tree and no strip.
_SMALL_CONTEXTS = {
    "credits": _credits_context,
    "controls": _run_context,
    "session-notice": _run_context,
    "character-state": _run_context,
}


# Rendered regions: every region by everything it shows (``_version``, read from the
# database), or one region by its version (``region_versions``, read from this process's
# counts). The watchers of one session ask for the same HTML after each event, and it is
# rendered once per language.
_CACHE_SIZE = 1024
_rendered: OrderedDict[tuple, Any] = OrderedDict()
_rendered_lock = threading.Lock()
_rendering: dict[tuple, threading.Event] = {}  # keys being rendered right now


def _version(session: ComicSession) -> tuple[tuple, dict[str, Any]]:
    """What the regions depend on, read in three short queries besides the session's own;
    and what of it a rendering reads too (the unfinished operation, the balance), for
    ``studio_context`` and the small contexts to render exactly what the version says."""
    read_count("version")
    op = unfinished_operation(session=session)
    balance = wallet_balance(user=session.owner_id)
    run = None if op is None else (op.id, op.record_count, op.parked_at, op.attention)
    version = (
        session.id,
        session.title,
        session.leaf_id,
        session.entry_count,
        run,
        balance,
        labels_version(session_id=session.id),  # the tree's label chips (a side table)
    )
    return version, {"operation": op, "balance": balance}


def _cached(key: tuple) -> Any:
    with _rendered_lock:
        value = _rendered.get(key)
        if value is not None:
            _rendered.move_to_end(key)
        return value


def _store(items: dict[tuple, Any]) -> None:
    with _rendered_lock:
        _rendered.update(items)
        while len(_rendered) > _CACHE_SIZE:
            _rendered.popitem(last=False)


def _once(key: tuple, render: Callable[[], None]) -> None:
    """``render`` (which stores what it rendered), or wait for whoever renders ``key``."""
    with _rendered_lock:
        rendering = _rendering.get(key)
        mine = rendering is None
        if mine:
            rendering = _rendering[key] = threading.Event()
    if not mine:
        rendering.wait(timeout=10)
        return
    try:
        render()
    finally:
        with _rendered_lock:
            _rendering.pop(key, None)
        rendering.set()


def regions_html_shared(
    *, session: ComicSession, language: str, versions: dict[str, tuple[int, ...]] | None = None
) -> str:
    """Return ``regions_html`` for a watcher, from the cache when nothing it shows has changed.

    Watchers asking for the same version at once wait for one rendering of it. ``versions``
    are the ``region_versions`` read before ``session``. The regions the last changed passes
    rendered at those versions serve too, when each was rendered from this same database
    version, and what is rendered here serves those passes in turn."""
    return catch_up_html(session=session, language=language, versions=versions)[0]


def catch_up_html(
    *,
    session: ComicSession,
    language: str,
    versions: dict[str, tuple[int, ...]] | None = None,
    with_stream: bool = False,
) -> tuple[str, str]:
    """``catch_up_parts`` with the regions joined into one HTML string."""
    parts, stream = catch_up_parts(
        session=session, language=language, versions=versions, with_stream=with_stream
    )
    return "".join(parts.values()), stream


def catch_up_parts(
    *,
    session: ComicSession,
    language: str,
    versions: dict[str, tuple[int, ...]] | None = None,
    with_stream: bool = False,
    counted_as: str = "path",
) -> tuple[dict[str, str], str]:
    """Render every region, by name, and with ``with_stream`` the stream as the journal has it.

    The regions are those of ``regions_html_shared`` and the stream is ``stream_html``. Each
    is rendered once per database version and language, because the quiet passes after a run
    all read the same finished run. The stream moves with the unfinished operation's records,
    or with the entries a new operation appends. ``counted_as``: the read kind a rendering
    from the database counts as (``pass_counts``)."""
    state, shared = _version(session)
    key = (*state, language)
    html: dict[str, str] | None = _cached(key)
    if html is None and versions is not None:
        html = _composed(session.id, language, versions, state)
        if html is not None:
            read_count("cached")
            _store({key: html})
    if html is None:

        def render() -> None:
            read_count(counted_as)
            parts = region_parts(
                context=studio_context(session=session, **shared),
                language=language,
                names=REGIONS,
            )
            items: dict[tuple, Any] = {key: parts}
            for name, part in (parts if versions is not None else {}).items():
                items[(session.id, name, versions[name], language)] = (part, state)
            _store(items)

        _once(key, render)
        html = _cached(key)
    if html is None:
        html = region_parts(
            context=studio_context(session=session), language=language, names=REGIONS
        )
    if not with_stream:
        return html, ""
    stream_key = ("stream", *key)
    stream = _cached(stream_key)
    if stream is None:  # a session's watchers go quiet together: one read for them all
        _once(
            stream_key,
            lambda: _store({stream_key: _stream_read(session, language)}),
        )
        stream = _cached(stream_key)
    if stream is None:  # whoever read it failed
        stream = stream_html(session=session, language=language)
    return html, stream


def _stream_read(session: ComicSession, language: str) -> str:
    read_count("stream")
    return stream_html(session=session, language=language)


def _composed(
    session_id: str, language: str, versions: dict, state: tuple
) -> dict[str, str] | None:
    """Every region from the per-version cache, if each was rendered from ``state``."""
    parts = {}
    for name in REGIONS:
        cached = _cached((session_id, name, versions[name], language))
        if cached is None or cached[1] != state:
            return None
        parts[name] = cached[0]
    return parts


def changed_regions_cached(
    *, session_id: str, language: str, versions: dict[str, tuple[int, ...]], names: Iterable[str]
) -> dict[str, str] | None:
    """The regions ``names`` at ``versions`` when each is rendered already, else None: no
    database, so a watcher's loop may ask before it sends the pass to a renderer thread."""
    parts = _kept_regions(session_id, language, versions, names)
    if any(cached is None for cached in parts.values()):
        return None
    return {name: cached[0] for name, cached in parts.items()}


def _kept_regions(
    session_id: str, language: str, versions: dict[str, tuple[int, ...]], names: Iterable[str]
) -> dict[str, Any]:
    """Each of the regions ``names`` as kept at its version (its HTML and the database
    version it was rendered from), or None for one not rendered yet."""
    return {name: _cached((session_id, name, versions[name], language)) for name in names}


def changed_regions_html(
    *,
    session_id: str,
    language: str,
    versions: dict[str, tuple[int, ...]],
    names: Iterable[str],
) -> dict[str, str]:
    """Render the regions ``names`` at ``versions``; return {} when the session is gone.

    ``versions`` are read from this process's counts before this call, after their facts'
    commits. Each region is rendered once per version and language, whoever asks. Only a
    region not rendered yet reads the database, and it reads only what it shows: the credits
    alone read the balance alone."""
    parts = _kept_regions(session_id, language, versions, names)
    missing = tuple(name for name, cached in parts.items() if cached is None)
    if not missing:
        return {name: cached[0] for name, cached in parts.items()}
    keys = {name: (session_id, name, versions[name], language) for name in parts}
    found: dict[str, tuple[str, tuple | None]] = {}

    def render() -> None:
        try:
            session = session_get(session_id=session_id)
        except SessionNotFound:  # deleted while watched
            return
        small = [_SMALL_CONTEXTS.get(name) for name in missing]
        if all(small):
            # The credits alone: two queries, and no whole page comes of them. Else the
            # database version too, for a forced pass to find these by.
            state, shared = (None, {}) if set(missing) == {"credits"} else _version(session)
            read_count("credits" if state is None else "run")
            context = {
                k: v for read in dict.fromkeys(small) for k, v in read(session, shared).items()
            }
        else:  # the database version too, for a forced pass to find these by (above)
            state, shared = _version(session)
            whole = _cached((*state, language))
            if whole is not None:  # an answer or a whole pass rendered this version already
                read_count("cached")
                found.update({name: (whole[name], state) for name in missing})
                _store({keys[name]: value for name, value in found.items()})
                return
            read_count("path")
            context = studio_context(session=session, **shared)
        rendered = region_parts(context=context, language=language, names=missing)
        found.update({name: (html, state) for name, html in rendered.items()})
        _store({keys[name]: value for name, value in found.items()})

    _once((session_id, language, tuple((n, versions[n]) for n in missing)), render)
    for name in missing:
        parts[name] = found.get(name) or _cached(keys[name])
    if any(cached is None for cached in parts.values()):
        return {}  # gone, or another watcher's rendering failed: the next pass reads again
    return {name: cached[0] for name, cached in parts.items()}
