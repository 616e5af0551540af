"""A watcher's catch-up, planned: what to read from the journal, what of it to send, and
when to wake.

``plan`` is to the studio's socket what ``journal.steps.next_step`` is to the agent loop:
it takes the watcher's state, one thing that happened and the time, and returns the next
state and the actions to carry out. The executor
(``jaiweb.studio.consumers.SessionConsumer``) reads and renders what a ``Read`` names,
sends what a ``Send`` names, sets its one timer to a ``Wake``, and tells the planner what
came of it. No channel layer, no database, no clock: everything is passed in, so every
interleaving of announcements, lost ones, reconnects, a page's own writes and time can be
tested against it directly.

The planner knows each region the page holds by its digest: the digests this socket sent,
or that the page said it shows after swapping in an HTTP answer's regions. A pass sends
only the regions whose digest differs from the page's, so the socket never sends again
what the page has, unless the page asks for everything. The journal stays the truth: the
pass after a burst goes quiet reads every region from it, so the page ends on the
journal's state even when some announcements were lost.

What happens (the events):

* ``Connected``: the socket was accepted. The page may hold anything, so every region
  and the stream are read.
* ``Announced``: a committed change (the facts it names: the regions they can change are
  read; none named: every region) or a run's event, maybe numbered by its source. A gap
  in a source's numbers, or a source first heard of after others, means events were
  lost: every region and the stream are read.
* ``Writing`` and ``Shown``: the page has a write under way, whose answer brings the
  regions it changes; the page swapped an answer's regions in (their digests).
* ``Asked``: the page asked for every region and the stream, sent whatever it holds.
* ``ReadDone``: a read ended, with the digests of the regions it rendered.
* ``Woken``: the timer the last ``Wake`` set went off.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

REGIONS = (
    "tree",
    "strip",
    "character-state",
    "credits",
    "session-notice",
    "controls",
    "prompt-leaf",
)

# What each kind of fact (jaiweb.live.versions) can change on the page; a ``session`` fact,
# or one not named here, changes every region. An entry moves the leaf, which the tree, the
# prompt's and the character forms' leaf fields show, and may add a panel or write a
# queued input.
FACT_REGIONS: dict[str, tuple[str, ...]] = {
    "entry": ("tree", "strip", "character-state", "controls", "prompt-leaf"),
    "app_state": ("tree", "character-state", "prompt-leaf"),
    "operation": ("controls", "session-notice", "character-state"),
    "wallet": ("credits", "controls"),  # the controls show the balance by the paid buttons
}

# The pass after a burst of events comes this long after its last event. The journal's
# state then reaches the page even when the burst's last announcement was lost.
QUIET_SECONDS = 1.5
# Passes come at least this far apart unless the executor says otherwise (``ReadDone``).
# A run's facts come in bursts: the first fact of a burst is read at once, the rest
# together at the end of the interval.
CATCH_UP_INTERVAL = 0.2
# How long a page's write may hold its socket's regions back: its answer brings them,
# and the page says which once it has swapped them in. A page that never says so (its
# request failed, it went away) holds nothing for longer.
HOLD_SECONDS = 3.0
MAX_SOURCES = 16  # sources of numbered events a watcher follows (runners of a cluster)

Digests = tuple[tuple[str, str], ...]  # (region, digest), in REGIONS order


# --- what happens ---------------------------------------------------------------------


@dataclass(frozen=True)
class Connected:
    """The socket was accepted."""


@dataclass(frozen=True)
class Asked:
    """The page asked for every region and the stream."""


@dataclass(frozen=True)
class Announced:
    """A committed change or a run's event reached the watcher.

    ``facts``: the kinds of fact it says changed (empty: none, as for streamed text;
    None: it did not say, so anything may have). ``source`` and ``n``: the sink that
    numbered it and its number, for a run's events."""

    facts: frozenset[str] | None = frozenset()
    source: str | None = None
    n: int | None = None


@dataclass(frozen=True)
class Writing:
    """The page sent a write whose answer brings the regions it changes."""


@dataclass(frozen=True)
class Shown:
    """The page swapped in an HTTP answer's regions: their digests (none, when the answer
    brought none or never came), and ``seen``: how many of the socket's frames the page
    had then. A region the socket sent in a later frame replaced the answer's."""

    regions: Digests = ()
    seen: int = 0


@dataclass(frozen=True)
class ReadDone:
    """The last ``Read`` ended: the digests of the regions it rendered (none of a session
    gone), how far apart this watcher's passes go from now on, and ``frames``: how many
    frames the socket has sent (a ``Send`` now goes in the next one)."""

    digests: Digests = ()
    interval: float = CATCH_UP_INTERVAL
    frames: int = 0


@dataclass(frozen=True)
class Woken:
    """The timer went off. ``last_local``: the last event of the session a sink of this
    process numbered, as (its source, its number), if any."""

    last_local: tuple[str, int] | None = None


Event = Connected | Asked | Announced | Writing | Shown | ReadDone | Woken


# --- what to do -----------------------------------------------------------------------

PassKind = Literal["asked", "quiet", "unannounced", "changed"]


@dataclass(frozen=True)
class Read:
    """Render the regions ``names`` from the journal, and with ``stream`` the stream as the
    journal has it. ``whole``: every region as the database has it now, else each named
    region at its version. Then report ``ReadDone``."""

    names: tuple[str, ...]
    whole: bool
    stream: bool
    kind: PassKind
    everything: bool = False  # sent whole, whatever the page holds (the page asked)


@dataclass(frozen=True)
class Send:
    """Send the page the regions ``names`` of the last read, and with ``stream`` its stream."""

    names: tuple[str, ...]
    stream: bool


@dataclass(frozen=True)
class Wake:
    """Report ``Woken`` at ``at`` (the executor's clock), in place of any earlier wake."""

    at: float


Action = Read | Send | Wake


# --- the watcher's state --------------------------------------------------------------


@dataclass(frozen=True)
class Watch:
    """What the planner knows of one watcher.

    ``page``: the digest of each region the page holds, as far as this socket knows, and
    ``page_frames``: the frame of the socket's that last brought each. ``frames``: the
    frames the socket sent. ``dirty``: regions announced changed since they were last
    read. ``whole``: the next pass reads every region from the database (a connect, lost
    events, the page asking), and so do ``quiet``, the pass after a burst, and
    ``unannounced``, after a change that did not say what it changed; ``stream``:
    and the stream; ``everything``: and sends every region, whatever the page holds.
    ``quiet_at``: when the pass after the last burst is due. ``writes``: the page's writes
    under way, which hold the regions back until their answers are shown, or at the
    latest until ``held_until``. ``reading``: the read under way, and
    ``shown_meanwhile``: the regions an answer brought while it was. ``last_pass`` and
    ``interval``: when the last pass started, and how long after it the next one may.
    ``sources``: the last number seen from each source of numbered events, oldest first."""

    page: Digests = ()
    page_frames: tuple[tuple[str, int], ...] = ()
    dirty: frozenset[str] = frozenset()
    whole: bool = False
    quiet: bool = False
    unannounced: bool = False
    stream: bool = False
    everything: bool = False
    quiet_at: float | None = None
    writes: int = 0
    held_until: float | None = None
    reading: Read | None = None
    shown_meanwhile: frozenset[str] = frozenset()
    last_pass: float = float("-inf")
    interval: float = CATCH_UP_INTERVAL
    sources: tuple[tuple[str | None, int], ...] = field(default=())


def regions_of(facts: Iterable[str] | None) -> frozenset[str]:
    """The regions facts of these kinds can change (None, or a kind not known: every one)."""
    if facts is None:
        return frozenset(REGIONS)
    names: set[str] = set()
    for fact in facts:
        if fact not in FACT_REGIONS:
            return frozenset(REGIONS)
        names.update(FACT_REGIONS[fact])
    return frozenset(names)


def _ordered(digests: dict[str, str]) -> Digests:
    return tuple((name, digests[name]) for name in REGIONS if name in digests)


def _ordered_frames(frames: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((name, frames[name]) for name in REGIONS if name in frames)


# --- the plan -------------------------------------------------------------------------


def plan(state: Watch, event: Event, now: float) -> tuple[Watch, tuple[Action, ...]]:
    """The watcher's next state after ``event`` at ``now``, and what to do about it: at
    most one ``Read`` (one read at a time), the ``Send`` of a read that ended, and the
    next ``Wake`` (none: no timer is needed)."""
    sends: tuple[Action, ...] = ()
    if isinstance(event, Connected):
        state = Watch(whole=True, stream=True)
    elif isinstance(event, Asked):
        state = replace(state, whole=True, stream=True, everything=True)
    elif isinstance(event, Announced):
        state = _announced(state, event, now)
    elif isinstance(event, Writing):
        state = replace(state, writes=state.writes + 1, held_until=now + HOLD_SECONDS)
    elif isinstance(event, Shown):
        state = _shown(state, event, now)
    elif isinstance(event, ReadDone):
        state, sends = _read_done(state, event, now)
    elif isinstance(event, Woken):
        state = _woken(state, event, now)
    state, next_actions = _next(state, now)
    return state, (*sends, *next_actions)


def _announced(state: Watch, event: Announced, now: float) -> Watch:
    sources = dict(state.sources)
    lost = False
    if event.n is not None:
        last = sources.get(event.source)
        # A skip in a source's numbers; or a source first heard of after others (a
        # restarted runner, a runner's first run of this session while this page watched):
        # what it numbered before may never have come here.
        lost = event.n != last + 1 if last is not None else bool(sources)
        sources[event.source] = event.n
        while len(sources) > MAX_SOURCES:  # runners restarted many times over
            del sources[next(iter(sources))]
    return replace(
        state,
        sources=tuple(sources.items()),
        dirty=state.dirty | regions_of(event.facts),
        # not said what changed: the regions' versions may not have moved either
        unannounced=state.unannounced or event.facts is None,
        whole=state.whole or lost,
        stream=state.stream or lost,
        quiet_at=now + QUIET_SECONDS,
    )


def _shown(state: Watch, event: Shown, now: float) -> Watch:
    """The page holds the answer's regions now. Those that differ from what this socket
    knew of are read again: the answer may have come after a newer pass."""
    page, frames = dict(state.page), dict(state.page_frames)
    told = {
        name: digest
        for name, digest in event.regions
        if name in REGIONS and frames.get(name, 0) <= event.seen
    }
    moved = frozenset(name for name, digest in told.items() if page.get(name) != digest)
    page.update(told)
    writes = max(0, state.writes - 1)
    return replace(
        state,
        page=_ordered(page),
        writes=writes,
        held_until=state.held_until if writes else None,
        dirty=state.dirty | moved,
        shown_meanwhile=state.shown_meanwhile | frozenset(told) if state.reading else frozenset(),
        quiet_at=now + QUIET_SECONDS if moved else state.quiet_at,
    )


def _read_done(state: Watch, event: ReadDone, now: float) -> tuple[Watch, tuple[Action, ...]]:
    read, meanwhile = state.reading, state.shown_meanwhile
    state = replace(state, reading=None, shown_meanwhile=frozenset(), interval=event.interval)
    if read is None:  # nothing was asked for: a report of an earlier socket's read
        return state, ()
    if _held(state, now):
        # The page's write may bring newer regions than these: read them again after it.
        return replace(
            state,
            dirty=state.dirty | (frozenset() if read.whole else frozenset(read.names)),
            whole=state.whole or read.kind == "asked",
            quiet=state.quiet or read.kind == "quiet",
            unannounced=state.unannounced or read.kind == "unannounced",
            stream=state.stream or read.stream,
            everything=state.everything or read.everything,
        ), ()
    # An answer swapped in during the read may be older or newer than what it rendered:
    # those regions are read again, and sent if they still differ.
    got = {name: digest for name, digest in event.digests if name not in meanwhile}
    state = replace(state, dirty=state.dirty | (meanwhile & frozenset(read.names)))
    page, frames = dict(state.page), dict(state.page_frames)
    names = tuple(
        name
        for name in read.names
        if name in got and (read.everything or got[name] != page.get(name))
    )
    stream = read.stream and bool(event.digests)
    if not names and not stream:
        return state, ()
    page.update({name: got[name] for name in names})
    frames.update(dict.fromkeys(names, event.frames + 1))
    state = replace(state, page=_ordered(page), page_frames=_ordered_frames(frames))
    return state, (Send(names=names, stream=stream),)


def _woken(state: Watch, event: Woken, now: float) -> Watch:
    if state.quiet_at is None or now < state.quiet_at:
        return state
    # Quiet: every region from the database, and the stream too unless the page got every
    # event this process numbered, and only those.
    stream = not _saw_every_local_event(state.sources, event.last_local)
    return replace(state, quiet_at=None, quiet=True, stream=state.stream or stream)


def _saw_every_local_event(
    sources: tuple[tuple[str | None, int], ...], last_local: tuple[str, int] | None
) -> bool:
    if last_local is None:
        return not sources
    source, n = last_local
    seen = dict(sources)
    return set(seen) <= {source} and seen.get(source) == n


def _held(state: Watch, now: float) -> bool:
    return state.held_until is not None and now < state.held_until


def _next(state: Watch, now: float) -> tuple[Watch, tuple[Action, ...]]:
    """Start the next pass when one is due and may go; and say when to wake next."""
    if state.held_until is not None and not _held(state, now):
        state = replace(state, writes=0, held_until=None)  # the answers never came in time
    actions: list[Action] = []
    wakes: list[float] = []
    if state.reading is None and (state.whole or state.quiet or state.unannounced or state.dirty):
        may_start = state.last_pass + state.interval
        if state.held_until is not None:
            wakes.append(max(state.held_until, may_start))
        elif now < may_start:
            wakes.append(may_start)
        else:
            read = _read_for(state)
            state = replace(
                state,
                reading=read,
                dirty=frozenset(),
                whole=False,
                quiet=False,
                unannounced=False,
                stream=False,
                everything=False,
                last_pass=now,
            )
            actions.append(read)
    if state.quiet_at is not None:
        wakes.append(state.quiet_at)
    if wakes:
        actions.append(Wake(at=min(wakes)))
    return state, tuple(actions)


def _read_for(state: Watch) -> Read:
    if state.whole or state.quiet or state.unannounced:
        kind: PassKind = "asked" if state.whole else "quiet" if state.quiet else "unannounced"
        return Read(
            names=REGIONS, whole=True, stream=state.stream, kind=kind, everything=state.everything
        )
    names = tuple(name for name in REGIONS if name in state.dirty)
    return Read(names=names, whole=False, stream=False, kind="changed")
