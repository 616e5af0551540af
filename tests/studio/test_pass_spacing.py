"""A watcher's passes spaced by how many sessions this process is catching up
(``consumers.pass_interval``): at a pass per fact, a busy process's catch-ups cost more per
operation the more sessions it served, because each run's facts came farther apart."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from jaiweb.live.push import group_name
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_grant
from jaiweb.studio import consumers
from jaiweb.studio.consumers import (
    BUSY_SECONDS,
    CATCH_UP_INTERVAL,
    MAX_INTERVAL,
    SESSIONS_PER_INTERVAL,
    pass_interval,
)
from tests.support.clocks import FakeClock
from tests.support.sockets import connect, consumer_clock, due, in_loop, nothing_sent, waiting_until


@pytest.fixture
def busy(monkeypatch) -> OrderedDict:
    """This process's sessions with a recent pass, empty for the test."""
    fresh: OrderedDict[str, float] = OrderedDict()
    monkeypatch.setattr(consumers, "_busy", fresh)
    return fresh


def test_a_few_sessions_keep_the_interval(busy):
    for i in range(SESSIONS_PER_INTERVAL):
        assert pass_interval(f"s{i}", 10.0) == CATCH_UP_INTERVAL


def test_more_sessions_space_the_passes_in_proportion_up_to_the_cap(busy):
    for i in range(2 * SESSIONS_PER_INTERVAL):
        interval = pass_interval(f"s{i}", 10.0 + i * 0.01)
    assert interval == pytest.approx(2 * CATCH_UP_INTERVAL)
    for i in range(100):
        interval = pass_interval(f"t{i}", 10.1)
    assert interval == MAX_INTERVAL


def test_sessions_gone_quiet_stop_counting(busy):
    for i in range(3 * SESSIONS_PER_INTERVAL):
        pass_interval(f"s{i}", 10.0)
    # One of them passes again later; the others had no pass in the last BUSY_SECONDS.
    assert pass_interval("s0", 10.0 + BUSY_SECONDS + 0.01) == CATCH_UP_INTERVAL
    assert list(busy) == ["s0"]


def test_a_clock_that_went_back_does_not_keep_its_sessions(busy):
    for i in range(3 * SESSIONS_PER_INTERVAL):
        pass_interval(f"s{i}", 5000.0)  # another test's clock
    assert pass_interval("mine", 1000.0) == CATCH_UP_INTERVAL


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    return consumer_clock(monkeypatch, quiet_seconds=600)  # no quiet pass within the test


@pytest.mark.django_db(transaction=True)
@in_loop
async def test_on_a_busy_process_a_burst_waits_the_longer_interval(alice, episode, busy, clock):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)  # the connect's pass
    layer = get_channel_layer()
    balance = await sync_to_async(wallet_balance)(user=alice)

    async def fact(n: int) -> None:  # a change the regions show (the credits), then its event
        await sync_to_async(credits_grant)(user=alice, amount=1)
        event = {"type": "entry_committed", "entry": {"type": "app_state"}, "n": n}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})

    clock.advance(MAX_INTERVAL)  # a quiet spell since the connect
    for i in range(3 * SESSIONS_PER_INTERVAL):  # other sessions' watchers passing now
        busy[f"other-{i}"] = clock.now
    await fact(1)
    assert f'data-balance="{balance + 1}"' in await ws.receive_from(timeout=5)  # at once
    start = clock.now
    busy_now = 3 * SESSIONS_PER_INTERVAL + 1  # with this session
    spaced = min(MAX_INTERVAL, CATCH_UP_INTERVAL * busy_now / SESSIONS_PER_INTERVAL)
    assert spaced > CATCH_UP_INTERVAL
    await fact(2)
    await waiting_until(clock, start + spaced, "the burst's pass, held to the longer interval")
    clock.advance(CATCH_UP_INTERVAL)
    assert nothing_sent(ws) and due(clock, start + spaced)  # not at the usual interval …
    clock.advance(spaced - CATCH_UP_INTERVAL)
    assert f'data-balance="{balance + 2}"' in await ws.receive_from(timeout=5)  # … but then
    await ws.disconnect()
