"""Watchers' catch-ups by this process's count of each session's facts (jaiweb.live.versions):
a change announced again costs no query, a fact re-renders only the regions it can change,
once for every watcher in each language, and the page asking still gets everything."""

from __future__ import annotations

import re
import secrets
import time

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import transaction

from jaiweb.commands.sessions import prompt_submit
from jaiweb.live import catch_up, versions
from jaiweb.live.push import ChannelLayerSink, group_name
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_grant
from jaiweb.studio import consumers, regions
from jaiweb.studio.consumers import CATCH_UP_INTERVAL, SessionConsumer
from tests.support.clocks import FakeClock
from tests.support.queries import every_query
from tests.support.sockets import connect, in_loop, nothing_sent, waiting_until
from tests.support.threads import orm_thread
from tests.support.waiting import wait_until_async

pytestmark = pytest.mark.django_db(transaction=True)

EVERY_REGION = {"tree", "strip", "character-state", "credits", "session-notice", "controls"}
EVERY_REGION |= {"prompt-leaf"}


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """The consumers' clock; no quiet pass within a test."""
    fake = FakeClock()
    monkeypatch.setattr(SessionConsumer, "clock", staticmethod(fake.monotonic))
    monkeypatch.setattr(SessionConsumer, "sleep", staticmethod(fake.sleep))
    monkeypatch.setattr(catch_up, "QUIET_SECONDS", 600)
    return fake


def region_ids(frame: str) -> set[str]:
    """The regions a frame swaps in (each a top-level element with an id, out of band)."""
    return set(re.findall(r'id="([\w-]+)"[^>]*hx-swap-oob="true"', frame)) & EVERY_REGION


class Elsewhere:
    """Another process's bumps, as its announcements carry them (a process of its own for
    each test: this one's remembers the bumps it applied)."""

    def __init__(self) -> None:
        self.process = secrets.token_hex(6)
        self.numbers = iter(range(1, 1000))

    def change(self, *facts: str) -> dict:
        return {"id": f"{self.process}-{next(self.numbers)}", "facts": list(facts)}


async def announce(session_id: str, n: int, change: dict | None, kind: str = "tool_finished"):
    event = {"type": kind, "tool": "draw", "tool_call_id": f"c{n}", "n": n}
    message = {"type": "session.event", "event": event}
    if change is not None:
        message["change"] = change
    await get_channel_layer().group_send(group_name(session_id), message)


# --- the counts ---------------------------------------------------------------------------


def test_a_command_bumps_its_session_after_its_commit_not_before(alice, episode):
    before = versions.fact_counts(episode.id)
    with transaction.atomic():
        prompt_submit(session=episode, user=alice, text="a prompt")
        assert versions.fact_counts(episode.id) == before  # not committed yet
    assert versions.fact_counts(episode.id)["session"] == before.get("session", 0) + 1


def test_a_rolled_back_command_bumps_nothing(alice, episode):
    before = versions.fact_counts(episode.id)
    with pytest.raises(RuntimeError), transaction.atomic():
        prompt_submit(session=episode, user=alice, text="a prompt")
        raise RuntimeError("rolled back")
    assert versions.fact_counts(episode.id) == before


class RecordingLayer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []

    async def group_send(self, group: str, message: dict) -> None:
        self.sent.append((group, message))


def test_a_runs_events_carry_their_bumps_which_another_process_applies_once(episode):
    sink = ChannelLayerSink()
    sink.layer = RecordingLayer()
    before = versions.fact_counts(episode.id)
    sink.emit(episode.id, {"type": "text_delta", "text": "streamed"})
    sink.emit(episode.id, {"type": "entry_committed", "entry": {"type": "app_state"}})
    assert sink.flush()
    after = versions.fact_counts(episode.id)
    assert {k: after[k] - before.get(k, 0) for k in after} == {"entry": 1, "app_state": 1}
    delta, entry = (message for _group, message in sink.layer.sent)
    assert "change" not in delta and entry["change"]["facts"] == ["app_state", "entry"]
    # Here the bump is applied already; in another process its first watcher applies it,
    # the next ones (and a repeated delivery) find it applied.
    assert versions.change_observe(session_id=episode.id, change=entry["change"])
    assert versions.fact_counts(episode.id) == after
    foreign = Elsewhere().change("wallet")
    for _watcher in range(3):
        assert versions.change_observe(session_id=episode.id, change=foreign)
    assert versions.fact_counts(episode.id)["wallet"] == after.get("wallet", 0) + 1
    for unusable in (None, {"id": 3}, {"id": "x", "facts": "wallet"}):
        assert not versions.change_observe(session_id=episode.id, change=unusable)


# --- the watchers' passes -----------------------------------------------------------------


@in_loop
async def test_a_change_announced_again_costs_no_query_and_sends_nothing(alice, episode, clock):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(CATCH_UP_INTERVAL)
    elsewhere = Elsewhere()
    wallet = elsewhere.change("wallet")
    balance = await sync_to_async(wallet_balance)(user=alice)
    await sync_to_async(credits_grant)(user=alice, amount=5)
    with every_query() as changed_pass:
        await announce(episode.id, 1, wallet)
        await ws.receive_from(timeout=5)  # the step line
        frame = await ws.receive_from(timeout=5)
    assert region_ids(frame) == {"credits", "controls"}
    assert f'data-balance="{balance + 5}"' in frame
    assert changed_pass  # the counter sees the renderers' queries
    await sync_to_async(credits_grant)(user=alice, amount=2)  # not announced yet
    start = clock.now
    with every_query() as queries:
        await announce(episode.id, 2, wallet)  # the same bump again: nothing new
        await ws.receive_from(timeout=5)  # the step line
        await waiting_until(clock, start + CATCH_UP_INTERVAL, "the repeat's pass")
        clock.advance(CATCH_UP_INTERVAL)
        await announce(episode.id, 3, elsewhere.change("wallet"))  # the grant's: the sentinel
        await ws.receive_from(timeout=5)  # its step line
        await waiting_until(clock, start + 2 * CATCH_UP_INTERVAL, "the sentinel's pass")
        assert nothing_sent(ws)  # the repeat's pass sent nothing …
    assert queries == []  # … and asked the database nothing
    clock.advance(CATCH_UP_INTERVAL)
    frame = await ws.receive_from(timeout=5)
    assert region_ids(frame) == {"credits", "controls"}
    assert f'data-balance="{balance + 7}"' in frame
    await ws.disconnect()


@pytest.mark.parametrize(
    ("fact", "read"),
    [
        ("wallet", {"credits", "controls"}),  # the controls show it by the paid buttons
        ("operation", {"controls", "session-notice", "character-state"}),
        ("app_state", {"tree", "character-state", "prompt-leaf"}),
        ("entry", {"tree", "strip", "character-state", "controls", "prompt-leaf"}),
        ("session", EVERY_REGION),
    ],
)
@in_loop
async def test_a_fact_re_renders_only_its_regions_and_the_page_asking_gets_all(
    alice, episode, clock, monkeypatch, fact, read
):
    rendered: list[set[str]] = []
    real = consumers._changed_regions

    def recording(session_id, language, versions, names):
        rendered.append(set(names))
        return real(session_id, language, versions, names)

    monkeypatch.setattr(consumers, "_changed_regions", recording)
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(CATCH_UP_INTERVAL)
    balance = await sync_to_async(wallet_balance)(user=alice)
    await sync_to_async(credits_grant)(user=alice, amount=7)  # committed, then announced
    await announce(episode.id, 1, Elsewhere().change(fact), kind="journal_changed")
    await wait_until_async(lambda: rendered, 10, "the fact's read")
    start = clock.now
    await ws.send_to(text_data='{"type": "catch_up"}')  # the page asks
    await waiting_until(clock, start + CATCH_UP_INTERVAL, "the page's catch-up's turn")
    assert rendered == [read]
    shows_balance = {"credits", "controls"} & read
    if shows_balance:  # what the fact's pass sent: only the regions the grant changed
        changed = await ws.receive_from(timeout=5)
        assert region_ids(changed) == shows_balance
        assert f'data-balance="{balance + 7}"' in changed
    assert nothing_sent(ws)
    clock.advance(CATCH_UP_INTERVAL)
    everything = await ws.receive_from(timeout=5)
    assert region_ids(everything) == EVERY_REGION
    assert f'data-balance="{balance + 7}"' in everything
    await ws.disconnect()


# --- one rendering for every watcher ------------------------------------------------------


@in_loop
async def test_watchers_await_the_one_rendering_under_way_on_their_loop(
    alice, episode, clock, monkeypatch
):
    trips: list[tuple[str, ...]] = []
    real = consumers._changed_regions

    def slow(session_id, language, versions, names):  # one trip to a renderer thread
        trips.append(tuple(names))
        time.sleep(0.3)  # long enough for every watcher's pass to start meanwhile
        return real(session_id, language, versions, names)

    monkeypatch.setattr(consumers, "_changed_regions", slow)
    watchers = [(await connect(episode.id, alice))[0] for _ in range(6)]
    for ws in watchers:
        await ws.receive_from(timeout=5)
    clock.advance(CATCH_UP_INTERVAL)
    await sync_to_async(credits_grant)(user=alice, amount=4)
    balance = await sync_to_async(wallet_balance)(user=alice)
    await announce(episode.id, 1, Elsewhere().change("wallet"))
    for ws in watchers:
        await ws.receive_from(timeout=5)  # the step line
        frame = await ws.receive_from(timeout=5)
        assert region_ids(frame) == {"credits", "controls"}
        assert f'data-balance="{balance}"' in frame
    assert trips == [("credits", "controls")]  # one thread's trip for all six
    assert consumers._renderings == {}  # nothing left under way
    for ws in watchers:
        await ws.disconnect()


def test_watchers_share_one_rendering_per_version_and_language(alice, episode, monkeypatch):
    renders: list[tuple[str, tuple]] = []
    real = regions.region_parts

    def slow(*, context, language, names):
        renders.append((language, tuple(names)))
        time.sleep(0.2)
        return real(context=context, language=language, names=names)

    monkeypatch.setattr(regions, "region_parts", slow)
    counts = versions.fact_counts(episode.id)

    def ask(language: str, names=("tree", "credits")) -> dict[str, str]:
        return regions.changed_regions_html(
            session_id=episode.id,
            language=language,
            versions=regions.region_versions(counts),
            names=list(names),
        )

    results: list[dict[str, str]] = []
    threads = [orm_thread(lambda: results.append(ask("en"))) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert renders == [("en", ("tree", "credits"))]
    assert len({tuple(r.items()) for r in results}) == 1 and 'id="tree"' in results[0]["tree"]
    assert "积分" in ask("zh-hans")["credits"] and len(renders) == 2  # another language
    with every_query() as queries:
        assert ask("en") == results[0]  # the same version: the cache, no query
    assert queries == [] and len(renders) == 2
    credits_grant(user=alice, amount=3)
    counts = {**counts, "wallet": counts.get("wallet", 0) + 1}  # as the bump after it
    with every_query() as queries:
        parts = ask("en")
    assert renders[-1] == ("en", ("credits",))  # only the region whose version moved
    assert parts["tree"] == results[0]["tree"] and parts["credits"] != results[0]["credits"]
    assert len(queries) == 2  # the session and the balance: the credits read nothing else


def test_a_forced_pass_reuses_what_the_changed_passes_rendered_only_if_the_database_agrees(
    alice, episode, monkeypatch
):
    renders: list[tuple[str, ...]] = []
    real = regions.region_parts

    def counted(*, context, language, names):
        renders.append(tuple(names))
        return real(context=context, language=language, names=names)

    monkeypatch.setattr(regions, "region_parts", counted)
    at = regions.region_versions(versions.fact_counts(episode.id))
    parts = regions.changed_regions_html(
        session_id=episode.id, language="en", versions=at, names=list(regions.REGIONS)
    )
    assert len(renders) == 1
    # The quiet pass after the burst: the database says what those renders saw.
    whole = regions.regions_html_shared(session=episode, language="en", versions=at)
    assert whole == "".join(parts[name] for name in regions.REGIONS) and len(renders) == 1
    # A change no announcement told this process of (a lost one): the forced pass sees it.
    credits_grant(user=alice, amount=9)
    balance = wallet_balance(user=alice)
    episode.refresh_from_db()
    whole = regions.regions_html_shared(session=episode, language="en", versions=at)
    assert f'data-balance="{balance}"' in whole and len(renders) == 2
