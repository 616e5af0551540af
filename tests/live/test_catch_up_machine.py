"""``plan`` against a model of a studio page, its socket and the journal (hypothesis
``RuleBasedStateMachine``).

The model keeps the journal as a version per region, and a region's digest names its
version. Between any two steps: a run's changes, announced, lost or numbered out of
order; the page's own writes, whose answers come back over HTTP in their own time; the
socket's frames and the page's messages on their way; reads that end late; reconnects;
and the clock moving on. The executor part does what the consumer does: it reads the
journal for a ``Read`` (when the read ends), sends a ``Send`` as one frame, and wakes the
planner at its ``Wake``.

A write's answer reaches the page, and the page's word of it the socket, within the hold
(``HOLD_SECONDS``) of the write's start: the planner relies on it. Past the hold the
socket sends the write's regions itself, so a page whose answer came later yet would take
them twice (the same digests, swapped again): the clock is not moved past it.

Invariants: the page never takes a region from the socket that it already shows, unless
the page asked for everything or the socket has just connected; once everything on its
way has arrived, what the planner believes the page shows is what it shows; and after
the last event the watcher heard of, the page shows the journal's state within one pass
of the quiet spell after it.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from jaiweb.live import catch_up
from jaiweb.live.catch_up import (
    HOLD_SECONDS,
    QUIET_SECONDS,
    REGIONS,
    Announced,
    Asked,
    Connected,
    Read,
    ReadDone,
    Send,
    Shown,
    Wake,
    Woken,
    Writing,
    plan,
    regions_of,
)

LOCAL, OTHER = "here-1", "elsewhere-1"  # a sink of this process, and of another one
FACTS = (*catch_up.FACT_REGIONS, "session")
INTERVALS = (0.2, 0.5, 1.0)  # what the executor may say passes are spaced by
LONGEST_PASS_WAIT = max(INTERVALS)


def digest(name: str, version: int) -> str:
    return f"{name}@{version:06d}"  # digests of one region sort by version


class PageAndSocket(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.now = 1000.0
        self.journal = dict.fromkeys(REGIONS, 0)
        self.numbers = {LOCAL: 0, OTHER: 0}  # the last number each sink gave
        self.page: dict[str, str] = {}  # what the page shows
        self.page_frames = 0  # frames the page took from this socket
        self.frames: list[tuple[dict[str, str], bool]] = []  # on their way: (regions, exempt)
        self.upstream: list[object] = []  # the page's messages on their way to the socket
        self.requests: list[float] = []  # writes the server is doing (when each began)
        self.writes_ready = 0  # of them, those whose "writing" the socket has taken
        # answers on their way: (every region, those the write changed, when it began)
        self.answers: list[tuple[dict[str, str], frozenset[str], float]] = []
        self.shown_began: list[float] = []  # when the writes of the Shown on their way began
        self.reading: Read | None = None
        self.rendered: dict[str, str] = {}
        self.wake: float | None = None
        self.sent = 0  # frames this socket sent
        self.unheard = False  # a change the watcher has had no event since
        self.again: list[tuple[str, str]] = []  # regions the page got again from the socket
        self.older: list[str] = []  # regions sent older than the page was known to show
        self.from_socket: dict[str, str] = {}  # what the socket last sent of each region
        self.twice: list[str] = []  # a write's regions the socket sent before its answer
        self.last_event = self.now
        self.connect()

    # --- the executor ------------------------------------------------------------------

    def feed(self, event: object) -> None:
        known = dict(self.state.page)
        self.state, actions = plan(self.state, event, self.now)
        self.wake = None
        for action in actions:
            if isinstance(action, Read):
                assert self.reading is None, "a second read while one is under way"
                self.reading, self.snapshot = action, dict(self.journal)
            elif isinstance(action, Send):
                self.sent += 1
                regions = {name: self.rendered[name] for name in action.names}
                self.older += [n for n, d in regions.items() if n in known and d < known[n]]
                self.frames.append((regions, self.exempt))
            elif isinstance(action, Wake):
                assert action.at > self.now, "a wake that is already due"
                self.wake = action.at
        if isinstance(event, (Announced, Connected, Asked, Shown, Writing)):
            self.last_event = self.now

    def connect(self) -> None:
        self.frames.clear()  # the old socket's frames and messages are gone with it
        self.upstream.clear()
        self.shown_began.clear()
        self.writes_ready = 0
        self.reading, self.page_frames, self.sent = None, 0, 0
        self.state = catch_up.Watch()
        self.exempt = True  # the connect's read: the socket knows nothing of the page
        self.connect_read = True
        self.unheard = False
        self.feed(Connected())
        for _ in self.requests:  # the page says again, first thing, what is under way
            self.feed(Writing())
        self.writes_ready = len(self.requests)

    def announce(self, facts: frozenset[str] | None, source: str | None, heard: bool) -> None:
        n = None
        if source is not None:
            self.numbers[source] += 1
            n = self.numbers[source]
        if heard:
            self.unheard = False
            self.feed(Announced(facts=facts, source=source, n=n))
        elif facts is None or facts:  # a change no event told the watcher of
            self.unheard = True

    def change(self, fact: str) -> None:
        for name in regions_of([fact]):
            self.journal[name] += 1

    def now_shown(self) -> dict[str, str]:
        return {name: digest(name, v) for name, v in self.journal.items()}

    # --- the run and other pages ---------------------------------------------------------

    @rule(
        fact=st.sampled_from(FACTS),
        source=st.sampled_from([LOCAL, OTHER, None]),
        heard=st.booleans(),
        says=st.booleans(),
    )
    def a_change_is_committed(self, fact, source, heard, says):
        """A change, announced with what it changed (``says``) or without."""
        self.change(fact)
        self.announce(frozenset({fact}) if says else None, source, heard)

    @rule(source=st.sampled_from([LOCAL, OTHER]), heard=st.booleans())
    def text_streams(self, source, heard):
        self.announce(frozenset(), source, heard)

    # --- the page's own writes -----------------------------------------------------------

    @rule()
    def the_page_sends_a_write(self):
        self.upstream.append(Writing())
        self.requests.append(self.now)

    @precondition(lambda self: self.writes_ready)
    @rule(fact=st.sampled_from(FACTS), heard=st.booleans())
    def the_server_commits_it(self, fact, heard):
        self.writes_ready -= 1
        began = self.requests.pop(0)
        self.change(fact)
        # every region, as the answer renders it; and those the write changed
        self.answers.append((self.now_shown(), regions_of([fact]), began))
        self.announce(frozenset({fact}), None, heard)

    @precondition(lambda self: self.answers)
    @rule(swapped=st.booleans())
    def an_answer_arrives(self, swapped):
        answer, changed, began = self.answers.pop(0)
        if swapped:
            self.twice += [n for n in changed if self.from_socket.get(n) == answer[n]]
            self.page.update(answer)
        regions = tuple(answer.items()) if swapped else ()  # a failed request shows nothing
        self.upstream.append(Shown(regions=regions, seen=self.page_frames))
        self.shown_began.append(began)

    @rule()
    def the_page_asks_for_everything(self):
        self.upstream.append(Asked())

    # --- on the wire ---------------------------------------------------------------------

    @precondition(lambda self: self.upstream)
    @rule()
    def the_socket_takes_a_message(self):
        message = self.upstream.pop(0)
        if isinstance(message, Writing):
            self.writes_ready += 1
        if isinstance(message, Asked):
            self.unheard = False
        if isinstance(message, Shown):
            self.shown_began.pop(0)
        self.feed(message)

    @precondition(lambda self: self.frames)
    @rule()
    def the_page_takes_a_frame(self):
        regions, exempt = self.frames.pop(0)
        self.page_frames += 1
        for name, got in regions.items():
            if not exempt and self.page.get(name) == got:
                self.again.append((name, got))
            self.page[name] = got
            if not exempt:
                self.from_socket[name] = got

    @precondition(lambda self: self.reading is not None)
    @rule(interval=st.sampled_from(INTERVALS), early=st.booleans())
    def a_read_ends(self, interval, early):
        """The read ends; it read the journal as it was when it began (``early``), or now."""
        read, self.reading = self.reading, None
        journal = self.snapshot if early else self.journal
        self.rendered = {name: digest(name, journal[name]) for name in read.names}
        self.exempt = read.everything or self.connect_read
        self.connect_read = False
        self.feed(
            ReadDone(digests=tuple(self.rendered.items()), interval=interval, frames=self.sent)
        )

    @rule()
    def the_socket_reconnects(self):
        self.connect()

    @rule(seconds=st.floats(min_value=0.01, max_value=2.0))
    def time_passes(self, seconds):
        until = self.now + seconds
        # a write's answer, and the page's word of it, come within the hold
        under_way = [*self.requests, *(began for _, _, began in self.answers), *self.shown_began]
        if under_way:
            until = min(until, min(under_way) + HOLD_SECONDS * 0.9)
        while self.wake is not None and self.wake <= until:
            self.now = self.wake
            self.feed(
                Woken(last_local=(LOCAL, self.numbers[LOCAL]) if self.numbers[LOCAL] else None)
            )
        self.now = max(self.now, until)

    # --- everything arrives ----------------------------------------------------------------

    @rule()
    def everything_arrives_and_the_page_converges(self):
        start = self.now
        for _ in range(200):
            if self.upstream:
                self.the_socket_takes_a_message()
            elif self.writes_ready:
                self.the_server_commits_it("session", heard=True)
            elif self.answers:
                self.an_answer_arrives(swapped=True)
            elif self.frames:
                self.the_page_takes_a_frame()
            elif self.reading is not None:
                self.a_read_ends(LONGEST_PASS_WAIT, early=False)
            elif self.wake is not None:
                self.now = self.wake
                self.feed(
                    Woken(last_local=(LOCAL, self.numbers[LOCAL]) if self.numbers[LOCAL] else None)
                )
            else:
                break
        else:
            raise AssertionError("the socket never went quiet")
        assert not self.requests
        if not self.unheard:
            assert self.page == self.now_shown()
            # one pass after the quiet spell, which waited at most the longest interval
            assert self.now <= max(start, self.last_event + QUIET_SECONDS + LONGEST_PASS_WAIT)

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def no_region_is_sent_again(self):
        assert self.again == []

    @invariant()
    def a_writes_regions_come_once(self):
        assert self.twice == []

    @invariant()
    def no_region_is_sent_older_than_the_page_said_it_shows(self):
        assert self.older == []

    @invariant()
    def the_planner_knows_what_the_page_shows(self):
        if self.frames or self.upstream or self.answers:
            return
        for name, known in self.state.page:
            assert self.page.get(name) == known, name


PageAndSocket.TestCase.settings = settings(max_examples=800, stateful_step_count=50, deadline=None)
test_plan_against_a_page_and_its_socket = PageAndSocket.TestCase
