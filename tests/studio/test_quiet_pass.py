"""The pass after a burst goes quiet reads every region from the database and sends only
what the page lacks; the stream too when the page missed an event this process numbered.
An HTTP answer's regions, once its page says it shows them, are not sent again."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.test import Client

from jaiweb.live import versions
from jaiweb.live.catch_up import QUIET_SECONDS
from jaiweb.live.push import ChannelLayerSink, group_name
from jaiweb.studio.consumers import MAX_INTERVAL
from jaiweb.studio.pass_counts import pass_counts
from jaiweb.studio.regions import REGIONS
from tests.support.queries import every_query
from tests.support.sockets import connect, consumer_clock, in_loop, nothing_sent, waiting_until
from tests.support.waiting import wait_until_async

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clock(monkeypatch):
    return consumer_clock(monkeypatch)


def passes() -> dict[str, int]:
    return pass_counts()["passes"]


async def quiet_pass(clock, ws, burst_end: float) -> tuple[dict[str, int], list[str]]:
    """Move the clock to the quiet pass after a burst that ended at ``burst_end``; then the
    passes it made (by kind) and the statements it ran, once it is done."""
    await waiting_until(clock, burst_end + QUIET_SECONDS, "the quiet pass's wait")
    before = passes()
    with every_query() as queries:
        clock.advance(burst_end + QUIET_SECONDS - clock.now)
        await wait_until_async(lambda: passes() != before, 10, "the quiet pass")
        await asyncio.sleep(0.05)  # a pass that reads goes on after it is counted
        made = {k: n - before[k] for k, n in passes().items() if n != before[k]}
    return made, queries


async def asked_pass(clock, ws) -> str:
    """The sentinel: the page asks for a catch-up, which always sends; its frame."""
    clock.advance(MAX_INTERVAL)  # a quiet spell since the last pass: it goes at once
    await ws.send_to(text_data='{"type": "catch_up"}')
    frame = await ws.receive_from(timeout=5)
    assert 'id="tree"' in frame
    return frame


@in_loop
async def test_a_run_of_this_process_seen_whole_ends_with_nothing_sent(alice, episode, clock):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    sink = ChannelLayerSink(loop=asyncio.get_running_loop())  # the studio's runner's sink
    for text in ("Once", " upon"):
        sink.emit(episode.id, {"type": "text_delta", "text": text})
        assert text in await ws.receive_from(timeout=5)
    made, _queries = await quiet_pass(clock, ws, clock.now)
    assert made == {"quiet": 1}
    assert nothing_sent(ws)  # (the pass is done: counted, and its read came back)
    await asked_pass(clock, ws)
    await ws.disconnect()


@in_loop
async def test_an_event_of_this_process_the_watcher_never_got_brings_the_stream(
    alice, episode, clock
):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    sink = ChannelLayerSink(loop=asyncio.get_running_loop())
    sink.emit(episode.id, {"type": "text_delta", "text": "Once"})
    assert "Once" in await ws.receive_from(timeout=5)
    # The run's last event, numbered, then dropped (a sink's full queue, a full channel).
    source, n = versions.last_event_number(episode.id)
    versions.event_numbered(session_id=episode.id, source=source, n=n + 1)
    made, queries = await quiet_pass(clock, ws, clock.now)
    assert made == {"quiet": 1} and queries
    frame = await ws.receive_from(timeout=5)
    assert 'id="stream-text"' in frame and 'id="tree"' not in frame  # the regions had it
    await ws.disconnect()


@in_loop
async def test_a_change_made_in_another_process_reaches_the_page(alice, episode, clock):
    from jaiweb.render.services import credits_grant

    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    await sync_to_async(credits_grant)(user=alice, amount=3)
    # A person's command served by another web process, announced with its bump.
    elsewhere = {"id": "another-process-1", "facts": ["wallet"]}
    clock.advance(MAX_INTERVAL)  # a quiet spell since the connect: its pass goes at once
    message = {"type": "session.event", "event": {"type": "journal_changed"}, "change": elsewhere}
    await get_channel_layer().group_send(group_name(episode.id), message)
    assert 'id="credits"' in await ws.receive_from(timeout=5)  # its changed pass
    made, _queries = await quiet_pass(clock, ws, clock.now)
    assert made == {"quiet": 1} and nothing_sent(ws)
    await asked_pass(clock, ws)
    await ws.disconnect()


def _prompt_from_the_page(alice, episode, *, htmx: bool):
    client = Client()
    client.force_login(alice)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    url = f"/sessions/{episode.id}/prompts"
    return client.post(url, {"text": "/say hi", "expected_leaf_id": ""}, **headers)


async def processed(ws) -> None:
    """Every frame sent before is handled: the answer to a frame it does not understand."""
    await ws.send_to(text_data="not json")
    assert "did not understand" in await ws.receive_from(timeout=5)


@in_loop
async def test_a_page_that_swapped_an_http_answer_gets_none_of_its_regions_again(
    alice, episode, clock
):
    """The write's regions reach its page once, in the answer: the socket held its pass
    while the write was under way, and sends nothing the page said it shows."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(MAX_INTERVAL)  # a quiet spell since the connect: a pass would go at once
    await ws.send_to(text_data='{"type": "writing"}')
    await processed(ws)
    before = passes()
    answer = await sync_to_async(_prompt_from_the_page)(alice, episode, htmx=True)
    assert answer.status_code == 202 and 'id="tree"' in answer.content.decode()
    shown = answer["X-Jaiweb-Regions"]
    assert sorted(item.partition("=")[0] for item in shown.split(",")) == sorted(REGIONS)
    # held: the next thing due is the quiet spell after the announcement, not a pass
    await waiting_until(clock, clock.now + QUIET_SECONDS, "the quiet pass's wait")
    assert passes() == before and nothing_sent(ws)
    # The page had the socket's two frames (the connect's regions, the answer to the
    # frame it did not understand) when it swapped the answer in.
    await ws.send_to(text_data=json.dumps({"type": "shown", "regions": shown, "seen": 2}))
    await wait_until_async(lambda: passes()["changed"] > before["changed"], 10, "the pass")
    await processed(ws)  # nothing came before this answer (nor after it: below)
    made, _queries = await quiet_pass(clock, ws, clock.now)
    assert made == {"quiet": 1} and nothing_sent(ws)
    await asked_pass(clock, ws)
    await ws.disconnect()


@in_loop
async def test_a_plain_forms_write_reaches_its_page_by_the_socket(alice, episode, clock):
    """A plain form's answer is a redirect: its page hears of the write like any other."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(MAX_INTERVAL)
    answer = await sync_to_async(_prompt_from_the_page)(alice, episode, htmx=False)
    assert answer.status_code == 302 and "X-Jaiweb-Regions" not in answer
    assert 'id="tree"' in await ws.receive_from(timeout=5)  # the accepted prompt's pass
    made, _queries = await quiet_pass(clock, ws, clock.now)
    assert made == {"quiet": 1} and nothing_sent(ws)
    await asked_pass(clock, ws)
    await ws.disconnect()
