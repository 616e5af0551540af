"""The studio's websocket (/ws/sessions/<id>/) through the whole ASGI application.

The consumer's timers (the catch-up interval, the quiet pass) run on a fake clock in the
tests about timing (``clock``): a test moves time on and asserts on what was sent by then
(tests/support/sockets.py says when "nothing was sent" may be asserted).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from jaiweb.asgi import application
from jaiweb.commands.sessions import prompt_submit
from jaiweb.live.catch_up import CATCH_UP_INTERVAL, QUIET_SECONDS
from jaiweb.live.push import group_name
from jaiweb.studio import consumers
from tests.support.clocks import FakeClock
from tests.support.sockets import (
    connect,
    consumer_clock,
    in_loop,
    nothing_sent,
    session_cookie,
    waiting_until,
)
from tests.support.waiting import wait_until_async

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    return consumer_clock(monkeypatch)


@in_loop
async def test_the_owner_connects_and_gets_every_region_at_once(alice, episode):
    ws, ok = await connect(episode.id, alice)
    assert ok
    first = await ws.receive_from(timeout=5)
    for region in ("tree", "strip", "character-state", "credits", "session-notice", "controls"):
        assert f'id="{region}"' in first and 'hx-swap-oob="true"' in first
    await ws.disconnect()


@pytest.mark.parametrize("who", ["anonymous", "bob", "unknown-session"])
@in_loop
async def test_anyone_else_is_refused_at_the_handshake(alice, bob, episode, who):
    user = {"anonymous": None, "bob": bob, "unknown-session": alice}[who]
    sid = "s_nope" if who == "unknown-session" else episode.id
    ws, ok = await connect(sid, user)
    assert not ok
    await ws.disconnect()


@in_loop
async def test_a_foreign_origin_is_refused(alice, episode):
    ws, ok = await connect(episode.id, alice, origin=b"http://evil.example")
    assert not ok
    await ws.disconnect()


@in_loop
async def test_staff_may_watch(django_user_model, episode):
    staff = await sync_to_async(django_user_model.objects.create_user)(
        "admin", password="x", is_staff=True
    )
    ws, ok = await connect(episode.id, staff)
    assert ok
    await ws.disconnect()


@in_loop
async def test_streamed_text_is_appended_escaped_and_a_gap_catches_up(alice, episode):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()
    event = {"type": "text_delta", "text": "<img src=x onerror=1>", "n": 1}
    await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    delta = await ws.receive_from(timeout=5)
    assert delta == (
        '<div hx-swap-oob="beforeend:#stream-text"><span>&lt;img src=x onerror=1&gt;</span></div>'
    )
    event = {"type": "text_delta", "text": "later", "n": 5}  # 2…4 were lost
    await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    frames = [await ws.receive_from(timeout=5), await ws.receive_from(timeout=5)]
    # the catch-up reads the journal beside the stream: the delta need not wait for it; the
    # regions had not changed, so only the stream as the journal has it comes
    caught_up = [f for f in frames if 'id="stream-text"' in f]
    assert len(caught_up) == 1 and 'id="tree"' not in caught_up[0]
    assert sum("later" in f for f in frames) == 1
    await ws.disconnect()


@in_loop
async def test_a_committed_reply_offering_a_panel_is_in_each_watchers_language(
    alice, episode, clock
):
    chinese, _ = await connect(episode.id, alice, extra=[(b"accept-language", b"zh-hans")])
    english, _ = await connect(episode.id, alice, extra=[(b"accept-language", b"en")])
    for ws in (chinese, english):
        await ws.receive_from(timeout=5)
    reply = "[Pig-Man <bold>] Shall I draw it? /draw Pig-Man waves."
    entry = {"type": "message", "message": {"role": "assistant", "content": reply}}
    event = {"type": "entry_committed", "entry": entry, "n": 1}
    await get_channel_layer().group_send(
        group_name(episode.id), {"type": "session.event", "event": event}
    )
    zh, en = await chinese.receive_from(timeout=5), await english.receive_from(timeout=5)
    assert "画出来" in zh and "Draw it" not in zh
    assert "Draw it" in en and "画出来" not in en
    for fragment in (zh, en):  # the same reply, escaped, with its one-click line
        assert "Pig-Man &lt;bold&gt;" in fragment
        assert 'data-prompt="/draw Pig-Man waves"' in fragment
    for ws in (chinese, english):
        await ws.disconnect()


@in_loop
async def test_a_committed_reply_replaces_the_stream_healing_lost_deltas(alice, episode, clock):
    ws, _ = await connect(episode.id, alice)  # the quiet pass: not within this test
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()

    async def send(event):
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})

    await send({"type": "text_delta", "text": "Once <upon>", "n": 1})
    assert "Once &lt;upon&gt;" in await ws.receive_from(timeout=5)
    # the delta " a time" never arrives; the commit carries the whole reply
    entry = {"type": "message", "message": {"role": "assistant", "content": "Once <upon> a time"}}
    await send({"type": "entry_committed", "entry": entry, "n": 2})
    healed = await ws.receive_from(timeout=5)
    assert healed == (
        '<div id="stream-text" hx-swap-oob="true"><p>Once &lt;upon&gt; a time</p></div>'
    )
    second = {"type": "message", "message": {"role": "assistant", "content": "Done."}}
    await send({"type": "entry_committed", "entry": second, "n": 3})
    assert await ws.receive_from(timeout=5) == (
        '<div id="stream-text" hx-swap-oob="true"><p>Once &lt;upon&gt; a time</p><p>Done.</p></div>'
    )
    await ws.disconnect()


@in_loop
async def test_step_lines_escape_what_the_run_reports_and_keep_their_ids(alice, episode, clock):
    """A tool's line is appended at its start and replaced by id at its end; a retry's and
    the end's lines are appended. Whatever an event carries reaches the page as text."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()

    async def send(**event):
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})

    await send(type="tool_started", tool="<b>tool</b>", tool_call_id='c"1 <x>', n=1)
    started = await ws.receive_from(timeout=5)
    assert started.startswith(
        '<div hx-swap-oob="beforeend:#stream-steps"><li id="step-c_1__x_" '
        'data-tool="&lt;b&gt;tool&lt;/b&gt;" data-done="false">running a tool… '
        '<span class="elapsed" data-started="'
    ) and started.endswith('"></span></li></div>')
    await send(type="tool_finished", tool="<b>tool</b>", tool_call_id='c"1 <x>', n=2)
    assert await ws.receive_from(timeout=5) == (
        '<li id="step-c_1__x_" data-tool="&lt;b&gt;tool&lt;/b&gt;" data-done="true" '
        'hx-swap-oob="true">done: &lt;b&gt;tool&lt;/b&gt;</li>'
    )
    await send(type="model_retry", attempt_id="a1", operation_id="op_1", n=3)
    assert await ws.receive_from(timeout=5) == (
        '<div hx-swap-oob="beforeend:#stream-steps"><li id="retry-op_1-a1" data-tool="" '
        'data-done="true">The model&#x27;s answer broke off; asking again.</li></div>'
    )
    error = {"message": "<script>alert(1)</script>"}
    await send(type="operation_finished", outcome="failed", error=error, operation_id="op_1", n=4)
    end = await ws.receive_from(timeout=5)
    assert end == (
        '<div hx-swap-oob="beforeend:#stream-steps"><li id="end-op_1" data-tool="" '
        'data-done="true">Finished: failed — &lt;script&gt;alert(1)&lt;/script&gt;</li></div>'
    )
    await ws.disconnect()


@in_loop
async def test_a_prompt_from_another_tab_reaches_this_one_after_commit(alice, episode):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    await sync_to_async(prompt_submit)(session=episode, user=alice, text="from <tab> two")
    html = await ws.receive_from(timeout=5)
    assert "from &lt;tab&gt; two" in html and 'data-state="running"' in html
    await ws.disconnect()


@in_loop
async def test_a_malformed_frame_gets_a_clear_error_and_changes_nothing(alice, episode, clock):
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    for frame in ("not json", '{"type": "drop_tables"}', "[1,2]", "x" * 10_000):
        await ws.send_to(text_data=frame)
        answer = await ws.receive_from(timeout=5)
        assert 'id="form-error"' in answer and "did not understand" in answer
        assert clock.pending() == []  # no catch-up asked for by a frame not understood
    await ws.send_to(text_data='{"type": "catch_up"}')
    await waiting_until(clock, clock.now + CATCH_UP_INTERVAL, "the asked catch-up's turn")
    clock.advance(CATCH_UP_INTERVAL)
    assert 'id="tree"' in await ws.receive_from(timeout=5)
    await ws.send_to(text_data="not json")  # a later frame: its answer is the next one sent
    assert "did not understand" in await ws.receive_from(timeout=5)
    assert nothing_sent(ws) and clock.pending() == []  # one answer to the catch-up, no more
    await ws.disconnect()


@in_loop
async def test_json_nested_deeper_than_python_recurses_is_refused_like_any_bad_frame(
    alice, episode, clock
):
    """The websocket fuzz test's finding: 4,000 characters of "[[[…]]]" were a RecursionError
    in json.loads, which closed the socket with 1011 and logged a traceback."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    for frame in ("[" * 2000 + "]" * 2000, '{"a":' * 1500 + "1" + "}" * 1500):
        await ws.send_to(text_data=frame)
        answer = await ws.receive_from(timeout=5)
        assert 'id="form-error"' in answer and "did not understand" in answer
    await ws.send_to(text_data='{"type": "catch_up"}')
    clock.advance(CATCH_UP_INTERVAL)
    assert 'id="tree"' in await ws.receive_from(timeout=5)
    await ws.disconnect()


@in_loop
async def test_regions_come_in_the_watchers_language(alice, episode):
    ws, _ = await connect(episode.id, alice, extra=[(b"accept-language", b"zh-CN,zh;q=0.9")])
    html = await ws.receive_from(timeout=5)
    assert "积分" in html  # "Credits"
    await ws.disconnect()
    await asyncio.sleep(0)


@in_loop
async def test_a_slow_catch_up_holds_no_delta_back_and_requests_fold_into_one(
    alice, episode, monkeypatch, clock
):
    """While the journal is read, deltas flow on; changes announced meanwhile fold into one
    more read."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    clock.advance(CATCH_UP_INTERVAL)  # a quiet spell: the next catch-up goes at once
    reads = []
    read_may_end = threading.Event()
    real = consumers._whole  # the events do not say what changed: every region is read

    def held_read(session_id, *args):  # held until the test says
        reads.append(session_id)
        assert read_may_end.wait(10), "the test never let the read end"
        return real(session_id, *args)

    monkeypatch.setattr(consumers, "_whole", held_read)
    layer = get_channel_layer()
    for n in range(1, 42):  # 21 deltas; 20 facts, each asking for a catch-up
        kind = "text_delta" if n % 2 else "entry_committed"
        event = {"type": kind, "text": f"<{n}>", "n": n, "entry": {"type": "app_state"}}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    # Every delta arrives while the first catch-up's read cannot end: none waited for it.
    deltas = [await ws.receive_from(timeout=5) for _ in range(21)]
    assert [f"&lt;{n}&gt;" in d for n, d in zip(range(1, 42, 2), deltas, strict=True)] == [
        True
    ] * 21
    await wait_until_async(lambda: reads, 10, "the first catch-up's read")
    assert len(reads) == 1  # the 19 facts after the first were announced while it read
    start = clock.now
    read_may_end.set()
    # Then one more read for all 19, at the end of the interval.
    await waiting_until(clock, start + CATCH_UP_INTERVAL, "the folded pass's turn")
    assert nothing_sent(ws)  # the journal did not change: the first pass sent no regions
    clock.advance(CATCH_UP_INTERVAL)
    await wait_until_async(lambda: len(reads) == 2, 10, "the folded read")
    await ws.send_to(text_data='{"type": "catch_up"}')  # the sentinel: the page asks
    await waiting_until(clock, start + 2 * CATCH_UP_INTERVAL, "the page's catch-up's turn")
    assert nothing_sent(ws)  # the folded pass sent nothing either …
    assert len(reads) == 2  # … and it was one read for the 19
    clock.advance(CATCH_UP_INTERVAL)
    assert 'id="tree"' in await ws.receive_from(timeout=5)  # asked for: sent unchanged
    assert len(reads) == 3
    await ws.disconnect()


@in_loop
async def test_a_burst_is_followed_by_a_catch_up_when_it_goes_quiet(alice, episode, clock):
    """Even a burst whose last event was lost ends with the journal's state on the page."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()
    for n in (1, 2, 3):
        event = {"type": "text_delta", "text": f"t{n}", "n": n}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    for n in (1, 2, 3):
        assert f"t{n}" in await ws.receive_from(timeout=5)
    quiet_at = clock.now + QUIET_SECONDS  # after the burst's last event
    assert clock.pending() == pytest.approx([quiet_at])
    clock.advance(QUIET_SECONDS * 0.99)
    assert nothing_sent(ws) and clock.pending() == pytest.approx([quiet_at])
    clock.advance(QUIET_SECONDS * 0.01)
    # the quiet pass: the stream as the journal has it, as the burst's events came from no
    # sink of this process; the regions had not changed
    quiet = await ws.receive_from(timeout=5)
    assert 'id="stream-text"' in quiet and 'id="tree"' not in quiet
    passed = clock.now
    await ws.send_to(text_data='{"type": "catch_up"}')  # the sentinel: the page asks
    await waiting_until(clock, passed + CATCH_UP_INTERVAL, "the page's catch-up's turn")
    # no second quiet pass: one a burst
    assert clock.pending() == pytest.approx([passed + CATCH_UP_INTERVAL])
    await ws.disconnect()


@pytest.mark.parametrize("path", ["/ws/other/", "/ws/sessions/", "/ws/sessions/x/y/", "/nope"])
@in_loop
async def test_an_unrouted_path_is_refused_at_the_handshake_quietly(alice, path, caplog):
    """Issue 14.5: URLRouter raised ValueError ("No route found"), logged as a traceback."""
    headers = [
        (b"host", b"127.0.0.1"),
        (b"origin", b"http://127.0.0.1"),
        (b"cookie", await sync_to_async(session_cookie)(alice)),
    ]
    communicator = WebsocketCommunicator(application, path, headers)
    connected, code = await communicator.connect(timeout=5)
    assert (connected, code) == (False, 4404)
    await communicator.wait(timeout=5)  # the application has ended, no exception raised
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@in_loop
async def test_a_nul_in_the_session_id_is_refused_at_the_handshake(alice, episode):
    """On PostgreSQL the lookup raised DataError (a traceback, no answer); found by the
    websocket fuzz test's /ws/sessions/%00/."""
    _ws, connected = await connect("\x00", alice)
    assert not connected


@in_loop
async def test_a_renders_progress_replaces_its_step_line(alice, episode, clock):
    """Issue 28: ComfyUI's sampler steps reach the page as "rendering panel… 40 %" on the
    line the render's start appended, in the watcher's language, still ticking."""
    ws, _ = await connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()

    async def send(**event):
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})

    await send(type="tool_started", tool="generate_image", tool_call_id="call_1", n=1)
    started = await ws.receive_from(timeout=5)
    assert 'id="step-call_1"' in started and "rendering panel…" in started
    ticking = started.split('data-started="')[1].split('"')[0]
    await send(
        type="tool_progress", tool="generate_image", tool_call_id="call_1", value=8, max=20, n=2
    )
    assert await ws.receive_from(timeout=5) == (
        '<li id="step-call_1" data-tool="generate_image" data-done="false" '
        f'hx-swap-oob="true">rendering panel… 40 % <span class="elapsed" data-started="{ticking}">'
        "</span></li>"
    )
    await send(
        type="tool_progress", tool="generate_image", tool_call_id="call_1", value="<x>", max=20, n=3
    )  # a bad value reads as no progress, never as text
    assert "rendering panel… 0 %" in await ws.receive_from(timeout=5)
    await ws.disconnect()
