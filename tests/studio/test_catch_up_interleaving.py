"""A fact that commits while a watcher's pass is under way is never missed: the pass reads
this process's counts before the journal, so a fact committed after that read is a change
at the next pass, whether the render saw it or not."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from jaiweb.live import versions
from jaiweb.live.push import group_name
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_grant
from jaiweb.studio import consumers
from jaiweb.studio.consumers import CATCH_UP_INTERVAL
from tests.support.clocks import FakeClock
from tests.support.sockets import connect, consumer_clock, in_loop, nothing_sent, waiting_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    return consumer_clock(monkeypatch, quiet_seconds=600)  # no quiet pass within the test


def balances(frame: str) -> list[int]:
    """The balances the credits region shows (the controls repeat it by the paid buttons)."""
    return [int(b) for b in re.findall(r'<strong data-balance="(\d+)"', frame)]


async def announce(session_id: str, n: int, change: dict) -> None:
    event = {"type": "journal_changed", "n": n}
    message = {"type": "session.event", "event": event, "change": change}
    await get_channel_layer().group_send(group_name(session_id), message)


def fact(session_id: str, user, amount: int) -> dict:
    """A charge committed, then counted, as a command does (its change, to announce)."""
    credits_grant(user=user, amount=amount)
    return versions.facts_bump(session_id=session_id, facts=["wallet"])


@pytest.mark.parametrize("when", ["before the render reads", "after the render read"])
@in_loop
async def test_a_fact_between_the_versions_read_and_the_render_is_never_missed(
    alice, episode, clock, monkeypatch, when
):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(CATCH_UP_INTERVAL)
    balance = await sync_to_async(wallet_balance)(user=alice)
    real = consumers._changed_regions
    late: list[dict] = []

    def interleaved(session_id, language, at, names):
        # On a renderer, after the pass read the counts (``at``): another fact commits.
        if late:
            return real(session_id, language, at, names)
        if when == "before the render reads":
            late.append(fact(session_id, alice, 5))
            return real(session_id, language, at, names)
        parts = real(session_id, language, at, names)
        late.append(fact(session_id, alice, 5))
        return parts

    monkeypatch.setattr(consumers, "_changed_regions", interleaved)
    first = await sync_to_async(fact)(episode.id, alice, 1)
    await announce(episode.id, 1, first)
    frame = await ws.receive_from(timeout=5)
    shown = balances(frame)
    assert late, "the interleaved fact was committed during the pass"
    expected_first = balance + 6 if when == "before the render reads" else balance + 1
    assert shown == [expected_first]
    start = clock.now
    await announce(episode.id, 2, late[0])  # its announcement, after its commit and bump
    await waiting_until(clock, start + CATCH_UP_INTERVAL, "the next pass's turn")
    clock.advance(CATCH_UP_INTERVAL)
    if when == "before the render reads":
        # The render saw it already: the next pass renders the same and sends nothing.
        await ws.send_to(text_data='{"type": "catch_up"}')  # a sentinel: the page asks
        await waiting_until(clock, clock.now + CATCH_UP_INTERVAL, "the page's pass")
        assert nothing_sent(ws)
        clock.advance(CATCH_UP_INTERVAL)
    last = await ws.receive_from(timeout=5)
    assert balances(last) == [balance + 6]  # the journal's state, in the end, every time
    await ws.disconnect()
