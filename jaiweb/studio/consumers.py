"""The live socket of one session's studio page.

Only the session's owner (and staff, read-only) may watch; anyone else is refused at the
handshake, as for a session that does not exist. Events come from the runner (numbered)
and from the commands people give (unnumbered, announcing what they changed); streamed
text is appended as it comes, and the regions are rendered from the journal for this
watcher, in their language. What to read, what to send and when to wake is planned by
``jaiweb.live.catch_up.plan``; the consumer carries out its actions and tells it what came
of them. Every fragment is a template (templates/studio/stream/, studio/form-error.html),
so what the model, a tool or a user typed is escaped the one way Django escapes it.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import close_old_connections
from django.template.loader import get_template
from django.utils import translation
from django.utils.translation import gettext as _

from jaiweb.commands.access import session_for
from jaiweb.live.catch_up import (
    CATCH_UP_INTERVAL,
    Announced,
    Asked,
    Connected,
    Read,
    ReadDone,
    Send,
    Shown,
    Wake,
    Watch,
    Woken,
    Writing,
    plan,
)
from jaiweb.live.push import group_name
from jaiweb.live.versions import change_observe, event_facts, fact_counts, last_event_number
from jaiweb.requests_first import wait_turn
from jaiweb.store.errors import SessionNotFound
from jaiweb.store.selectors import session_get
from jaiweb.studio.pass_counts import pass_count
from jaiweb.studio.regions import (
    REGIONS,
    catch_up_parts,
    changed_regions_cached,
    changed_regions_html,
    region_digest,
    region_versions,
    shown_regions,
)
from jaiweb.studio.stream import end_label, progress_label, step_label
from journal.jsonvalues import json_loads

log = logging.getLogger(__name__)

MAX_FRAME = 4096  # the page sends {"type": "catch_up"}, "writing" and "shown" (regions named)


def watcher_language(scope: dict[str, Any]) -> str:
    """The watcher's language: their language cookie, else their browser's, else the default."""
    supported = {code for code, _name in settings.LANGUAGES}
    cookie = scope.get("cookies", {}).get(settings.LANGUAGE_COOKIE_NAME)
    if cookie in supported:
        return cookie
    headers = dict(scope.get("headers") or [])
    accept = headers.get(b"accept-language", b"").decode("latin-1")
    for code, _q in translation.trans_real.parse_accept_lang_header(accept):
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def _watchable(session_id: str, user: Any):
    """The session if ``user`` may watch it (``session_for``, reading), else None."""
    try:
        return session_for(user=user, session_id=session_id)
    except SessionNotFound:
        return None


# Catch-ups read the journal and render on threads of their own: channels passes every
# consumer's message dispatch through one shared thread (close_old_connections), so a
# render there would hold up the deltas of every watcher of every session.
_RENDERERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="jaiweb-regions")


# The changed passes' renderings under way in this process, by session, language and the
# regions' versions: the watchers asking for one while it runs await it (``_changed``).
_renderings: dict[tuple, asyncio.Future] = {}


def _on_a_renderer(read: Callable[..., Any], *args: Any) -> Any:
    wait_turn()  # a request being answered goes first
    close_old_connections()
    try:
        return read(*args)
    finally:
        close_old_connections()


def _changed_regions(
    session_id: str, language: str, versions: dict[str, tuple[int, ...]], names: list[str]
) -> dict[str, str]:
    """The regions ``names`` at ``versions``, rendered once for every watcher."""
    return changed_regions_html(
        session_id=session_id, language=language, versions=versions, names=names
    )


def _whole(
    session_id: str,
    language: str,
    with_stream: bool,
    versions: dict[str, tuple[int, ...]],
) -> tuple[dict[str, str], str]:
    """Every region of the session as the database has it, by name, and with
    ``with_stream`` the stream as the journal has it; nothing of a session gone.

    ``versions`` are the regions' versions read before, that is what the last passes
    rendered."""
    try:
        session = session_get(session_id=session_id)
    except SessionNotFound:  # deleted while watched
        return {}, ""
    return catch_up_parts(
        session=session, language=language, versions=versions, with_stream=with_stream
    )


# A process catching up many sessions at once spaces the passes further apart. A run's
# facts come farther apart when it shares the process with many others, and at a pass per
# fact the catch-ups' CPU per operation grew with the number of sessions. Past
# SESSIONS_PER_INTERVAL sessions with a pass in the last BUSY_SECONDS, a watcher's passes
# are spaced in proportion, up to MAX_INTERVAL, so the process renders about as many passes
# a second whatever the load.
SESSIONS_PER_INTERVAL = 4
BUSY_SECONDS = 1.0
MAX_INTERVAL = 1.0
MAX_STEPS_TIMED = 16  # running steps whose start a watcher keeps for their progress line
_busy: OrderedDict[str, float] = OrderedDict()  # session id -> its last pass (``clock``)


def pass_interval(session_id: str, now: float) -> float:
    """How far apart this session's watchers' passes go now (``now``: a pass starts)."""
    _busy[session_id] = now
    _busy.move_to_end(session_id)
    while _busy:
        oldest, at = next(iter(_busy.items()))
        if now - BUSY_SECONDS <= at <= now:
            break
        del _busy[oldest]  # gone quiet (or from another clock: a test's)
    return min(MAX_INTERVAL, CATCH_UP_INTERVAL * max(1.0, len(_busy) / SESSIONS_PER_INTERVAL))


class SessionConsumer(AsyncWebsocketConsumer):
    """Carries out a watcher's plan (``jaiweb.live.catch_up``).

    Every event goes to ``plan`` with the time; its ``Read`` runs on a renderer thread
    beside the event handlers (deltas keep flowing while the journal is read), its
    ``Send`` goes out at once, and its ``Wake`` moves the one timer the watcher has."""

    # The timers' clock: monotonic seconds, and a sleep on that clock. The real ones unless
    # given (``as_asgi(clock=…, sleep=…)``, or a test setting a fake clock's on the class).
    clock: Callable[[], float] = staticmethod(time.monotonic)
    sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    group: str | None = None

    def __init__(
        self,
        *args: Any,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if clock is not None:
            self.clock = clock
        if sleep is not None:
            self.sleep = sleep
        self._retries = itertools.count(1)
        self._step_started: dict[str, int] = {}  # a running step's start, by its call id
        self.watch = Watch()
        self.frames = 0  # frames sent, counted as the page counts them
        self.replies: list[str] = []  # the committed replies of the running operation
        self._read: tuple[dict[str, str], str] = ({}, "")  # the last read's regions, stream
        self._reading: asyncio.Task | None = None
        self._timer: asyncio.Task | None = None
        self._timer_at: float | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        if user is None or not user.is_authenticated:
            await self.close()
            return
        if await database_sync_to_async(_watchable)(session_id, user) is None:
            await self.close()  # the same refusal as for a session that does not exist
            return
        self.session_id = session_id
        self.language = watcher_language(self.scope)
        self.group = group_name(session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._plan(Connected())

    async def dispatch(self, message: dict[str, Any]) -> None:
        # A live event touches no database connection of this thread (catch-ups render on
        # their own threads), so skip channels' close_old_connections: a hop through the
        # one thread every consumer shares, for each event to each watcher.
        if message.get("type") == "session.event":
            await self.session_event(message)
            return
        await super().dispatch(message)

    async def disconnect(self, code: int) -> None:
        for task in (self._timer, self._reading):
            if task is not None:
                task.cancel()
        if self.group is not None:
            _busy.pop(self.session_id, None)  # another watcher of it puts it back
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            if text_data is None or len(text_data) > MAX_FRAME:
                raise ValueError("not a short text frame")
            message = json_loads(text_data)
            kind = message.get("type") if isinstance(message, dict) else None
            if kind not in ("catch_up", "writing", "shown"):
                raise ValueError("unknown message")
        except ValueError:
            # JSON nested deeper than Python recurses fits in MAX_FRAME ("[" * 2000): a
            # RecursionError once, a 1011 close with a traceback (the fuzz test); json_loads
            # refuses it by its depth, before it is parsed.
            with translation.override(self.language):
                text = _("The page sent a message the server did not understand; nothing changed.")
            await self.send(text_data=alert_html(text))
            return
        if kind == "writing":  # its answer will bring the regions it changes
            await self._plan(Writing())
        elif kind == "shown":  # the page swapped in an HTTP answer's regions
            seen = message.get("seen")
            regions = shown_regions(message.get("regions"))
            shown = tuple((name, regions[name]) for name in REGIONS if name in regions)
            await self._plan(Shown(regions=shown, seen=seen if isinstance(seen, int) else 0))
        else:
            await self._plan(Asked())

    async def send(self, text_data=None, bytes_data=None, close=False) -> None:
        self.frames += 1  # before any wait: a Send planned for the next frame gets it
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    # --- carrying out the plan ---------------------------------------------------------

    async def _plan(self, event: Any) -> None:
        self.watch, actions = plan(self.watch, event, self.clock())
        woken_at = None
        for action in actions:
            if isinstance(action, Send):
                await self._send_read(action)
            elif isinstance(action, Read):
                self._reading = asyncio.ensure_future(self._carry_out(action))
            elif isinstance(action, Wake):
                woken_at = action.at
        self._set_timer(woken_at)

    async def _carry_out(self, read: Read) -> None:
        """Render what ``read`` names on a renderer thread, then report it to the plan."""
        pass_count(read.kind)
        interval = pass_interval(self.session_id, self.clock())
        loop = asyncio.get_running_loop()
        # Read before the journal: a bump during the read is a change for the next pass.
        versions = region_versions(fact_counts(self.session_id))
        try:
            if read.whole:
                parts, stream = await loop.run_in_executor(
                    _RENDERERS,
                    _on_a_renderer,
                    _whole,
                    self.session_id,
                    self.language,
                    read.stream,
                    versions,
                )
            else:
                parts, stream = await self._changed(versions, read.names), ""
        except asyncio.CancelledError:
            raise
        except Exception:  # the next event's pass reads again
            log.exception("a catch-up of %s failed", self.session_id)
            parts, stream = {}, ""
        self._read = (parts, stream)
        digests = tuple((name, region_digest(parts[name])) for name in REGIONS if name in parts)
        await self._plan(ReadDone(digests=digests, interval=interval, frames=self.frames))

    async def _changed(
        self, versions: dict[str, tuple[int, ...]], names: tuple[str, ...]
    ) -> dict[str, str]:
        """The regions ``names`` at ``versions``, rendered once for every watcher.

        Most often another watcher of the session rendered them already, and they come
        from the cache with no trip to a renderer thread. When one is rendering them right
        now, this watcher awaits that rendering on its loop rather than taking a renderer
        thread to wait on: with many watchers, one thread and one trip per change."""
        parts = changed_regions_cached(
            session_id=self.session_id, language=self.language, versions=versions, names=names
        )
        if parts is not None:
            return parts
        key = (self.session_id, self.language, tuple((name, versions[name]) for name in names))
        loop = asyncio.get_running_loop()
        rendering = _renderings.get(key)
        if rendering is None or rendering.get_loop() is not loop:  # not another loop's
            rendering = loop.run_in_executor(
                _RENDERERS,
                _on_a_renderer,
                _changed_regions,
                self.session_id,
                self.language,
                versions,
                list(names),
            )
            _renderings[key] = rendering
            rendering.add_done_callback(lambda _done: _renderings.pop(key, None))
        # A watcher that goes away (its task cancelled) leaves the rendering to the others.
        return await asyncio.shield(rendering)

    async def _send_read(self, send: Send) -> None:
        parts, stream = self._read
        html = "".join(parts[name] for name in send.names) + (stream if send.stream else "")
        try:
            await self.send(text_data=html)
        except Exception:  # the socket closed while the journal was read
            log.debug("a catch-up for a closed socket of %s", self.session_id)

    def _set_timer(self, at: float | None) -> None:
        """Wake at ``at`` in place of any earlier wake (None: not at all).

        Most events move the wake later (the quiet pass comes after the last event): the
        sleeping timer then only learns the new time, and on waking sleeps on to it. A
        task is made again only for an earlier wake, not for each event to each watcher."""
        if at is None or self._timer is None or self._timer_at is None or at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None if at is None else asyncio.ensure_future(self._wake())
        self._timer_at = at

    async def _wake(self) -> None:
        while self._timer_at is not None and (left := self._timer_at - self.clock()) > 0:
            await self.sleep(left)
        self._timer, self._timer_at = None, None  # this task is done: nothing cancels it
        await self._plan(Woken(last_local=last_event_number(self.session_id)))

    # --- the run's events ---------------------------------------------------------------

    async def session_event(self, message: dict[str, Any]) -> None:
        event = message.get("event") or {}
        n = event.get("n")
        source = event.get("src") if isinstance(event.get("src"), str) else None
        change = message.get("change")
        # What changed: the facts its change names; none for a run's event that announces
        # none (streamed text, a tool's start); anything, for one that does not say.
        if change is not None and change_observe(session_id=self.session_id, change=change):
            facts: frozenset[str] | None = frozenset(change["facts"])
        elif not event_facts(event):
            facts = frozenset()
        else:
            facts = None
        await self._plan(Announced(facts=facts, source=source, n=n if isinstance(n, int) else None))
        await self._fragment_of(event)

    async def _fragment_of(self, event: dict[str, Any]) -> None:
        """Send what the run's event itself shows: streamed text, a step, a reply."""
        kind = event.get("type")
        if kind == "text_delta":
            await self.send(
                text_data=_fragment("delta", self.language, text=str(event.get("text", "")))
            )
        elif kind == "operation_started":
            self.replies = []
            await self.send(text_data=_fragment("started", self.language))
        elif kind == "entry_committed":
            reply = _assistant_text(event.get("entry"))
            if reply:
                # The journal's copy of the reply replaces what streamed, so a delta the
                # watcher missed (a full channel, a reconnect) is healed at the commit.
                # One paragraph per reply; the next reply's deltas follow the last one.
                self.replies.append(reply)
                await self.send(
                    text_data=_fragment("replies", self.language, replies=tuple(self.replies))
                )
        elif kind in ("tool_started", "tool_finished"):
            await self.send(text_data=self._step(event, finished=kind == "tool_finished"))
        elif kind == "tool_progress":
            await self.send(text_data=self._progress(event))
        elif kind == "model_retry":
            with translation.override(self.language):
                line = _("The model's answer broke off; asking again.")
            attempt = event.get("attempt_id")
            which = f"{event.get('operation_id', '')}-{attempt}" if attempt else next(self._retries)
            await self.send(text_data=_step_line(f"retry-{which}", line, self.language))
        elif kind == "operation_finished":
            with translation.override(self.language):
                error = (event.get("error") or {}).get("message")
                line = end_label(str(event.get("outcome", "")), error)
            await self.send(
                text_data=_step_line(f"end-{event.get('operation_id', '')}", line, self.language)
            )

    def _progress(self, event: dict[str, Any]) -> str:
        tool = str(event.get("tool", ""))
        value, maximum = event.get("value"), event.get("max")
        if not isinstance(value, int) or not isinstance(maximum, int):
            value, maximum = 0, 0
        with translation.override(self.language):
            label = progress_label(tool, value, maximum)
        call_id = str(event.get("tool_call_id", ""))
        started_ms = self._step_started.get(call_id)
        return _step_line(
            f"step-{call_id}",
            label,
            self.language,
            tool=tool,
            done=False,
            started_ms=started_ms,
            replace=True,
        )

    def _step(self, event: dict[str, Any], *, finished: bool) -> str:
        tool = str(event.get("tool", ""))
        call_id = str(event.get("tool_call_id", ""))
        with translation.override(self.language):
            label = step_label(tool, finished=finished, failed=bool(event.get("is_error")))
        # When it started, for the page's ticking "(n s)": the browser's clock, the epoch's.
        started_ms = None if finished else int(time.time() * 1000)
        if started_ms is not None:
            self._step_started[call_id] = started_ms
            while len(self._step_started) > MAX_STEPS_TIMED:
                del self._step_started[next(iter(self._step_started))]
        return _step_line(
            f"step-{call_id}", label, self.language, tool=tool, done=finished, started_ms=started_ms
        )


@functools.cache
def _template(name: str):
    """A template loaded once: the consumer renders one per delta per watcher."""
    return get_template(name)


def _fragment(name: str, language: str, **context: Any) -> str:
    """templates/studio/stream/<name>.html in ``language``, autoescaped (its comment line
    stripped); ``context``'s values are hashable.

    Every watcher of a session gets each event at once, and each would render the same
    fragment: it is rendered once per language, most of all for the text deltas, the
    commonest event there is."""
    return _rendered_fragment(name, language, tuple(sorted(context.items())))


@functools.lru_cache(maxsize=256)
def _rendered_fragment(name: str, language: str, context: tuple[tuple[str, Any], ...]) -> str:
    with translation.override(language):
        return _template(f"studio/stream/{name}.html").render(dict(context)).strip()


def _step_line(
    element_id: str,
    label: str,
    language: str,
    *,
    tool: str = "",
    done: bool = True,
    started_ms: int | None = None,
    replace: bool | None = None,
) -> str:
    """One line of the run's progress, appended; a tool's step that ended (or reports its
    progress: ``replace``) replaces the line its start appended (the same id)."""
    safe_id = "".join(c if c.isalnum() or c in "-_" else "_" for c in element_id)
    return _fragment(
        "step",
        language,
        id=safe_id,
        tool=tool,
        done=done,
        label=label,
        started_ms=started_ms,
        replace=(done and bool(tool)) if replace is None else replace,
    )


def _assistant_text(entry: Any) -> str:
    """The text of an assistant message entry as the event carries it, else ""."""
    if not isinstance(entry, dict) or entry.get("type") != "message":
        return ""
    message = entry.get("message") or {}
    content = message.get("content") if message.get("role") == "assistant" else None
    return content if isinstance(content, str) else ""


def alert_html(message: str) -> str:
    """The page's #form-error box showing ``message`` (escaped), or emptied when it is ""."""
    return _template("studio/form-error.html").render({"message": message}).strip()
