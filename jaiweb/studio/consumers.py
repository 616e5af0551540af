"""The live socket of one session's studio page.

Only the session's owner (and staff, read-only) may watch; anyone else is refused at the
handshake, as for a session that does not exist. Events come from the runner (numbered)
and from web requests (unnumbered: "re-read"); streamed text is appended as it comes,
everything else is re-rendered from the journal for this watcher, in their language. A
gap in the numbers, a restarted runner, a reconnect: all end in the same re-read.
Every fragment is a template (templates/studio/stream/, studio/form-error.html), so what
the model, a tool or a user typed is escaped the one way Django escapes it.
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
from django.template.loader import get_template
from django.utils import translation
from django.utils.translation import gettext as _

from jaiweb.commands.access import session_for
from jaiweb.live.push import group_name
from jaiweb.live.versions import (
    change_is_local,
    change_observe,
    fact_counts,
    last_event_number,
)
from jaiweb.store.connections import connection_done
from jaiweb.store.errors import SessionNotFound
from jaiweb.store.selectors import session_get
from jaiweb.studio.pass_counts import pass_count
from jaiweb.studio.regions import (
    REGIONS,
    catch_up_html,
    changed_regions_html,
    region_digest,
    region_versions,
    shown_regions,
)
from jaiweb.studio.stream import end_label, progress_label, step_label
from journal.jsonvalues import json_loads

log = logging.getLogger(__name__)

MAX_FRAME = 4096  # the page sends {"type": "catch_up"}, "writing" and "shown" (regions named)
# How long a page's write may hold its socket's regions back: its answer brings them, and
# the page says which once it has swapped them in ("shown"). A page that never says so
# (its request failed, it went away) holds nothing for longer.
HOLD_SECONDS = 3.0


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


def _on_a_renderer(read: Callable[..., Any], *args: Any) -> Any:
    connection_done()
    try:
        return read(*args)
    finally:
        connection_done()


def _changed_regions(
    session_id: str, language: str, versions: dict[str, tuple[int, ...]], names: list[str]
) -> dict[str, str]:
    """The regions ``names`` at ``versions``, rendered once for every watcher."""
    return changed_regions_html(
        session_id=session_id, language=language, versions=versions, names=names
    )


def _regions(
    session_id: str,
    language: str,
    with_stream: bool = False,
    versions: dict[str, tuple[int, ...]] | None = None,
) -> str:
    """Render every region of the session, and with ``with_stream`` the stream too.

    The stream is read as the journal has it, for a watcher that may have missed the run's
    events: after a connect, a gap, or a quiet spell after a burst. ``versions`` are the
    regions' versions read before, that is what the last passes rendered."""
    try:
        session = session_get(session_id=session_id)
    except SessionNotFound:  # deleted while watched
        return ""
    html, stream = catch_up_html(
        session=session, language=language, versions=versions, with_stream=with_stream
    )
    if with_stream:  # after the regions, and not part of what "unchanged" compares
        html += STREAM_MARK + stream
    return html


STREAM_MARK = "<!--stream-->"  # between the regions and the stream in a pass's HTML

# A catch-up runs this long after the last event of a burst. The journal's final state then
# reaches the watcher even when the burst's last event was lost, as a full channel drops
# messages.
QUIET_SECONDS = 1.5
# A watcher gets at most one catch-up this often. A run's journal facts come in bursts, and
# each pass re-renders every region, so the first fact of a burst is rendered at once and
# the rest together at the end of it.
CATCH_UP_INTERVAL = 0.2
# A process catching up many sessions at once spaces the passes further apart. A run's
# facts come farther apart when it shares the process with many others, and at a pass per
# fact the catch-ups' CPU per operation grew with the number of sessions. Past
# SESSIONS_PER_INTERVAL sessions with a pass in the last BUSY_SECONDS, a watcher's passes
# are spaced in proportion, up to MAX_INTERVAL, so the process renders about as many passes
# a second whatever the load.
SESSIONS_PER_INTERVAL = 4
BUSY_SECONDS = 1.0
MAX_INTERVAL = 1.0
MAX_SOURCES = 16  # sources of numbered events a watcher follows (runners of a cluster)
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
    # The timers' clock: monotonic seconds, and a sleep on that clock. The real ones unless
    # given (``as_asgi(clock=…, sleep=…)``, or a test setting a fake clock's on the class).
    clock: Callable[[], float] = staticmethod(time.monotonic)
    sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    group: str | None = None
    catching_up: asyncio.Task | None = None
    # The task that catches up once a burst of events has gone quiet, and when it is due on
    # ``clock``: QUIET_SECONDS after the last event.
    quiet: asyncio.Task | None = None
    quiet_at = 0.0
    # The hash of the regions last sent whole. A pass that finds them unchanged sends nothing.
    sent: int | None = None
    # Each region's version (``region_versions``) as last read, and the digest of what the
    # page holds of it (``region_digest``: sent here, or told by the page after it swapped
    # in an HTTP answer). An unforced pass renders only the regions whose facts moved, runs
    # no query when none did, and sends only those whose digest differs.
    sent_versions: dict[str, tuple[int, ...]] = {}
    sent_parts: dict[str, str] = {}
    # Until when a write of the page holds its regions back (``HOLD_SECONDS``), on ``clock``.
    held_until = float("-inf")
    shown: asyncio.Event | None = None
    # Frames sent on this socket, and the frame that last carried each region: a page's
    # "shown" says how many frames it had when it swapped the answer in, and a region
    # sent after that replaced the answer's.
    frames = 0
    region_frames: dict[str, int] = {}
    # Set when an event announced a change without its version bump. The next pass then
    # reads every region from the database.
    unknown_change = False
    # Set when the next pass must send every region, even those this watcher already has.
    force = False
    # Set with ``force`` when a connect, a gap or the page asked for the pass. The pass is
    # then counted as asked for, not as a quiet pass.
    asked = False
    # Set when a change bumped in another process came: this process's counts know it only
    # from its announcement, and an earlier one may have been lost. A forced pass reads
    # through it and clears the flag. While it is set, the pass after a quiet spell is forced.
    elsewhere = False
    # When the last catch-up pass started on ``clock``, and how long after it the next pass
    # may start (``pass_interval``).
    last_pass = float("-inf")
    interval = CATCH_UP_INTERVAL

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
        # The last number seen from each source of numbered events (a sink: the studio's
        # runner, or each runner of a cluster); ``None`` for events that name none.
        self.last_n: dict[str | None, int] = {}
        self.replies: list[str] = []  # the committed replies of the running operation
        self.again = False  # another catch-up was asked for while one ran
        self.group = group_name(session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.catch_up()

    async def dispatch(self, message: dict[str, Any]) -> None:
        # A live event touches no database connection of this thread (catch-ups render on
        # their own threads), so skip channels' close_old_connections: a hop through the
        # one thread every consumer shares, for each event to each watcher.
        if message.get("type") == "session.event":
            await self.session_event(message)
            return
        await super().dispatch(message)

    async def disconnect(self, code: int) -> None:
        if self.quiet is not None:
            self.quiet.cancel()
        if self.catching_up is not None:
            self.catching_up.cancel()
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
            self.held_until = self.clock() + HOLD_SECONDS
            return
        if kind == "shown":  # the page swapped in an HTTP answer's regions
            seen = message.get("seen")
            seen = seen if isinstance(seen, int) else 0
            shown = {
                name: digest
                for name, digest in shown_regions(message.get("regions")).items()
                if self.region_frames.get(name, 0) <= seen
            }
            self.sent_parts = {**self.sent_parts, **shown}
            self.sent = None
            self.held_until = float("-inf")
            if self.shown is not None:
                self.shown.set()
            return
        await self.catch_up()

    async def catch_up(self) -> None:
        """Asked for (a connect, a gap, the page): sent even when nothing changed."""
        self.force = self.asked = True
        self._catch_up_soon()

    def _catch_up_soon(self) -> None:
        """Re-read the journal and send every region: the journal is the truth.

        Runs beside the event handlers, so deltas keep flowing while the database is read
        (a blocked handler lets the channel fill up and drop events); requests arriving
        meanwhile are folded into one more pass.
        """
        if self.catching_up is not None and not self.catching_up.done():
            self.again = True
            return
        self.catching_up = asyncio.ensure_future(self._catch_up_passes())

    async def _catch_up_passes(self) -> None:
        loop = asyncio.get_running_loop()
        self.again = True
        while self.again:
            # The rest of a burst waits out the interval since the last pass, then goes
            # in one pass; a change after a quiet spell goes at once.
            wait = self.last_pass + self.interval - self.clock()
            if wait > 0:
                await self.sleep(wait)
            await self._held()
            self.again = False
            force, self.force = self.force, False
            asked, self.asked = self.asked, False
            whole, self.unknown_change = force or self.unknown_change, False
            if force:  # what made the page unknowable before now, this pass reads through
                self.elsewhere = False
            self.last_pass = self.clock()
            self.interval = pass_interval(self.session_id, self.last_pass)
            # Read before the journal: a bump during the read is a change for the next pass.
            versions = region_versions(fact_counts(self.session_id))
            if whole:
                pass_count("asked" if asked else "quiet" if force else "unannounced")
                sent = await self._whole_pass(loop, versions, force)
            else:
                sent = await self._changed_pass(loop, versions)
            if not sent:
                return

    async def _held(self) -> None:
        """Wait while a write of the page holds the regions back (until it says "shown")."""
        while (left := self.held_until - self.clock()) > 0:
            self.shown = asyncio.Event()
            sleeping = asyncio.ensure_future(self.sleep(left))
            shown = asyncio.ensure_future(self.shown.wait())
            try:
                await asyncio.wait((sleeping, shown), return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeping.cancel()
                shown.cancel()

    async def _whole_pass(self, loop, versions: dict[str, tuple[int, ...]], force: bool) -> bool:
        """Every region read from the database (forced: and the stream; sent unchanged too)."""
        html = await loop.run_in_executor(
            _RENDERERS, _on_a_renderer, _regions, self.session_id, self.language, force, versions
        )
        regions, _mark, stream = html.partition(STREAM_MARK)
        if regions and (force or hash(regions) != self.sent):
            if not await self._send(regions + stream):
                return False
            self.sent = hash(regions)
            self.region_frames = dict.fromkeys(REGIONS, self.frames)
        if regions:
            self.sent_versions, self.sent_parts = versions, {}
        return True

    async def _changed_pass(self, loop, versions: dict[str, tuple[int, ...]]) -> bool:
        """Only the regions whose facts moved since they were sent; none moved: no query."""
        names = [name for name in REGIONS if versions[name] != self.sent_versions.get(name)]
        pass_count("changed" if names else "unchanged")
        if not names:
            return True
        parts = await loop.run_in_executor(
            _RENDERERS,
            _on_a_renderer,
            _changed_regions,
            self.session_id,
            self.language,
            versions,
            names,
        )
        if not parts:  # the session is gone
            return True
        fresh = {
            name: html
            for name, html in parts.items()
            if region_digest(html) != self.sent_parts.get(name)
        }
        if fresh and not await self._send("".join(fresh.values())):
            return False
        self.region_frames = {**self.region_frames, **dict.fromkeys(fresh, self.frames)}
        self.sent_versions = {**self.sent_versions, **{n: versions[n] for n in parts}}
        self.sent_parts = {**self.sent_parts, **{n: region_digest(h) for n, h in parts.items()}}
        self.sent = None  # the page no longer holds the whole HTML last hashed
        return True

    async def send(self, text_data=None, bytes_data=None, close=False) -> None:
        self.frames += 1  # counted as the page counts them
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def _send(self, html: str) -> bool:
        try:
            await self.send(text_data=html)
        except Exception:  # the socket closed while the journal was read
            log.debug("a catch-up for a closed socket of %s", self.session_id)
            return False
        return True

    def _catch_up_when_quiet(self) -> None:
        """Schedule a catch-up QUIET_SECONDS after the last event.

        Each event moves the catch-up on. One task per burst waits for it, not one timer per
        event."""
        self.quiet_at = self.clock() + QUIET_SECONDS
        if self.quiet is None or self.quiet.done():
            self.quiet = asyncio.ensure_future(self._wait_for_quiet())

    async def _wait_for_quiet(self) -> None:
        while (left := self.quiet_at - self.clock()) > 0:
            await self.sleep(left)
        self._gone_quiet()

    def _gone_quiet(self) -> None:
        # From the database (forced), unless this process's counts and event numbers tell
        # everything the page holds: then the page has every event since its last pass,
        # and a pass of the regions whose counts moved (none, mostly: no query) is enough.
        if self.elsewhere or not self._saw_every_local_event():
            self.force = True
        self._catch_up_soon()

    def _saw_every_local_event(self) -> bool:
        """Say whether this page missed none of the run's events.

        It missed none when every numbered event it got came from this process, and the last one
        a sink here numbered is among them."""
        local = last_event_number(self.session_id)
        if local is None:
            return not self.last_n
        source, n = local
        return set(self.last_n) <= {source} and self.last_n.get(source) == n

    async def session_event(self, message: dict[str, Any]) -> None:
        self._catch_up_when_quiet()
        event = message.get("event") or {}
        n = event.get("n")
        if isinstance(n, int):
            source = event.get("src") if isinstance(event.get("src"), str) else None
            last = self.last_n.get(source)
            # A dropped event; or a source first heard of after others (a restarted runner,
            # a runner's first run of this session while this page watched): what it
            # numbered before may never have come here.
            missed = n != last + 1 if last is not None else bool(self.last_n)
            self.last_n[source] = n
            while len(self.last_n) > MAX_SOURCES:  # runners restarted many times over
                del self.last_n[next(iter(self.last_n))]
            if missed:
                await self.catch_up()
        kind = event.get("type")
        if kind == "text_delta":
            await self.send(text_data=_fragment("delta", text=str(event.get("text", ""))))
            return
        if kind == "operation_started":  # the regions show nothing new (versions.EVENT_FACTS)
            self.replies = []
            await self.send(text_data=_fragment("started"))
            return
        if kind == "entry_committed":
            reply = _assistant_text(event.get("entry"))
            if reply:
                # The journal's copy of the reply replaces what streamed, so a delta the
                # watcher missed (a full channel, a reconnect) is healed at the commit.
                # One paragraph per reply; the next reply's deltas follow the last one.
                self.replies.append(reply)
                await self.send(text_data=_fragment("replies", replies=self.replies))
        elif kind == "tool_started":
            await self.send(text_data=self._step(event, finished=False))
            return  # nothing in the journal changed that the regions show
        elif kind == "tool_progress":
            await self.send(text_data=self._progress(event))
            return  # a render's progress is no journal fact
        elif kind == "tool_finished":
            await self.send(text_data=self._step(event, finished=True))
        elif kind == "model_retry":
            with translation.override(self.language):
                line = _("The model's answer broke off; asking again.")
            attempt = event.get("attempt_id")
            which = f"{event.get('operation_id', '')}-{attempt}" if attempt else next(self._retries)
            await self.send(text_data=_step_line(f"retry-{which}", line))
            return
        elif kind == "operation_finished":
            with translation.override(self.language):
                error = (event.get("error") or {}).get("message")
                line = end_label(str(event.get("outcome", "")), error)
            await self.send(text_data=_step_line(f"end-{event.get('operation_id', '')}", line))
        change = message.get("change")
        if not change_observe(session_id=self.session_id, change=change):
            self.unknown_change = True  # a sender that does not say what changed
        if not change_is_local(change):
            self.elsewhere = True
        self._catch_up_soon()

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
            f"step-{call_id}", label, tool=tool, done=False, started_ms=started_ms, replace=True
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
        return _step_line(f"step-{call_id}", label, tool=tool, done=finished, started_ms=started_ms)


@functools.cache
def _template(name: str):
    """A template loaded once: the consumer renders one per delta per watcher."""
    return get_template(name)


def _fragment(name: str, **context: Any) -> str:
    """templates/studio/stream/<name>.html, autoescaped (its comment line stripped)."""
    return _template(f"studio/stream/{name}.html").render(context).strip()


def _step_line(
    element_id: str,
    label: str,
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
