"""``plan`` step by step: what a watcher reads, sends and waits for, in the cases the
studio's socket meets most (tests/live/test_catch_up_machine.py runs them all together)."""

from __future__ import annotations

from jaiweb.live.catch_up import (
    CATCH_UP_INTERVAL,
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
    Watch,
    Woken,
    Writing,
    plan,
)

T = 1000.0
EVERY = tuple((name, f"{name}-1") for name in REGIONS)


def connected() -> Watch:
    """A watcher whose connect's read sent every region at version 1."""
    state, actions = plan(Watch(), Connected(), T)
    assert actions == (Read(names=REGIONS, whole=True, stream=True, kind="asked"),)
    state, actions = plan(state, ReadDone(digests=EVERY, frames=0), T)
    assert actions == (Send(names=REGIONS, stream=True),)
    return state


def test_a_change_is_read_at_once_and_the_rest_of_its_burst_after_the_interval():
    state = connected()
    later = T + 5
    state, actions = plan(state, Announced(facts=frozenset({"wallet"})), later)
    assert actions == (
        Read(names=("credits", "controls"), whole=False, stream=False, kind="changed"),
        Wake(at=later + QUIET_SECONDS),
    )
    state, _ = plan(state, Announced(facts=frozenset({"operation"})), later + 0.05)
    state, actions = plan(state, ReadDone(digests=(("credits", "credits-2"),)), later + 0.1)
    assert actions == (
        Send(names=("credits",), stream=False),  # the controls did not change
        Wake(at=later + CATCH_UP_INTERVAL),
    )
    state, actions = plan(state, Woken(), later + CATCH_UP_INTERVAL)
    assert actions[0] == Read(
        names=("character-state", "session-notice", "controls"),
        whole=False,
        stream=False,
        kind="changed",
    )


def test_streamed_text_reads_nothing_until_the_quiet_pass():
    state = connected()
    state, actions = plan(state, Announced(source="a", n=1), T + 5)
    assert actions == (Wake(at=T + 5 + QUIET_SECONDS),)
    state, actions = plan(state, Woken(last_local=("a", 1)), T + 5 + QUIET_SECONDS)
    assert actions[0] == Read(names=REGIONS, whole=True, stream=False, kind="quiet")
    state, actions = plan(state, ReadDone(digests=EVERY), T + 7)
    assert actions == ()  # the page shows every region as the journal has it


def test_an_event_of_this_process_never_received_brings_the_stream_at_the_quiet_pass():
    state = connected()
    state, _ = plan(state, Announced(source="a", n=1), T + 5)
    state, actions = plan(state, Woken(last_local=("a", 2)), T + 5 + QUIET_SECONDS)
    assert actions[0] == Read(names=REGIONS, whole=True, stream=True, kind="quiet")


def test_a_gap_reads_every_region_and_the_stream_and_sends_only_what_differs():
    state = connected()
    state, _ = plan(state, Announced(source="a", n=1), T + 5)
    state, actions = plan(state, Announced(source="a", n=4), T + 6)
    assert actions[0] == Read(names=REGIONS, whole=True, stream=True, kind="asked")
    moved = tuple((n, f"{n}-2" if n == "tree" else d) for n, d in EVERY)
    state, actions = plan(state, ReadDone(digests=moved), T + 6)
    assert actions[0] == Send(names=("tree",), stream=True)


def test_two_runners_in_turn_are_no_gap_and_a_skip_in_either_is():
    state = connected()
    state, actions = plan(state, Announced(source="a", n=1), T + 5)
    assert not any(isinstance(a, Read) for a in actions)  # the first source heard of
    state, actions = plan(state, Announced(source="b", n=1), T + 6)
    assert isinstance(actions[0], Read)  # a second one: what it numbered before may be lost
    state, _ = plan(state, ReadDone(digests=EVERY), T + 6)
    for n in (2, 3):
        for source in ("a", "b"):
            state, actions = plan(state, Announced(source=source, n=n), T + 7)
            assert not any(isinstance(a, Read) for a in actions)
    state, actions = plan(state, Announced(source="a", n=5), T + 8)
    assert isinstance(actions[0], Read) and actions[0].stream


def test_the_page_asking_gets_every_region_whatever_it_holds():
    state = connected()
    state, actions = plan(state, Asked(), T + 5)
    read = Read(names=REGIONS, whole=True, stream=True, kind="asked", everything=True)
    assert actions == (read,)
    state, actions = plan(state, ReadDone(digests=EVERY, frames=1), T + 5)
    assert actions == (Send(names=REGIONS, stream=True),)


def test_a_write_of_the_page_holds_its_regions_back_and_none_the_answer_brought_is_sent():
    state = connected()
    state, actions = plan(state, Writing(), T + 5)
    assert actions == ()
    state, actions = plan(state, Announced(facts=frozenset({"session"})), T + 5.1)
    assert actions == (Wake(at=T + 5.1 + QUIET_SECONDS),)  # held: no read yet
    answer = tuple((name, f"{name}-2") for name in REGIONS)
    state, actions = plan(state, Shown(regions=answer, seen=1), T + 5.3)
    assert actions[0] == Read(names=REGIONS, whole=False, stream=False, kind="changed")
    state, actions = plan(state, ReadDone(digests=answer, frames=1), T + 5.4)
    assert actions == (Wake(at=T + 5.3 + QUIET_SECONDS),)  # nothing sent


def test_a_write_whose_answer_never_comes_holds_the_regions_no_longer_than_the_hold():
    state = connected()
    state, _ = plan(state, Writing(), T + 5)
    state, _ = plan(state, Announced(facts=frozenset({"wallet"})), T + 5.1)
    state, actions = plan(state, Woken(), T + 5.1 + QUIET_SECONDS)
    assert actions == (Wake(at=T + 5 + HOLD_SECONDS),)  # quiet, and still held
    state, actions = plan(state, Woken(), T + 5 + HOLD_SECONDS)
    assert actions == (Read(names=REGIONS, whole=True, stream=False, kind="quiet"),)


def test_a_region_the_socket_sent_after_the_answer_arrived_is_not_taken_from_the_answer():
    state = connected()  # its regions came in frame 1
    state, _ = plan(state, Announced(facts=frozenset({"wallet"})), T + 5)
    state, actions = plan(state, ReadDone(digests=(("credits", "credits-3"),), frames=1), T + 5)
    assert actions[0] == Send(names=("credits",), stream=False)  # frame 2
    # The answer (credits-2) was swapped in when the page had frame 1 only: frame 2 came
    # after it, so the page shows credits-3; the tree the answer brought is taken.
    shown = (("tree", "tree-2"), ("credits", "credits-2"))
    state, _ = plan(state, Shown(regions=shown, seen=1), T + 5.2)
    assert dict(state.page)["credits"] == "credits-3" and dict(state.page)["tree"] == "tree-2"


def test_an_answer_swapped_in_during_a_read_has_its_regions_read_again():
    state = connected()
    state, actions = plan(state, Announced(facts=frozenset({"wallet"})), T + 5)
    assert isinstance(actions[0], Read)
    state, _ = plan(state, Shown(regions=(("credits", "credits-3"),), seen=1), T + 5.1)
    # The read may have read the journal before the answer's write: its credits are not
    # sent, and are read again.
    state, actions = plan(
        state, ReadDone(digests=(("credits", "credits-2"), ("controls", "controls-2"))), T + 5.2
    )
    assert actions[:2] == (
        Send(names=("controls",), stream=False),
        Read(names=("credits",), whole=False, stream=False, kind="changed"),
    )


def test_a_change_that_does_not_say_what_changed_reads_every_region_from_the_database():
    state = connected()
    state, actions = plan(state, Announced(facts=None), T + 5)
    assert actions[0] == Read(names=REGIONS, whole=True, stream=False, kind="unannounced")
