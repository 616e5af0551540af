"""The studio's websocket (/ws/sessions/<id>/) through the whole ASGI application."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import Client

from jaiweb.asgi import application
from jaiweb.live.push import group_name
from jaiweb.sessions.commands import prompt_submit

pytestmark = pytest.mark.django_db(transaction=True)


def in_loop(test):
    """Run an async test body on an event loop of its own (the ORM goes to threads)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return async_to_sync(test)(*args, **kwargs)

    return run


def _cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def _connect(session_id: str, user=None, origin: bytes = b"http://127.0.0.1", extra=()):
    headers = [(b"origin", origin), *extra]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(_cookie)(user)))
    communicator = WebsocketCommunicator(application, f"/ws/sessions/{session_id}/", headers)
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected


@in_loop
async def test_the_owner_connects_and_gets_every_region_at_once(alice, episode):
    ws, ok = await _connect(episode.id, alice)
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
    ws, ok = await _connect(sid, user)
    assert not ok
    await ws.disconnect()


@in_loop
async def test_a_foreign_origin_is_refused(alice, episode):
    ws, ok = await _connect(episode.id, alice, origin=b"http://evil.example")
    assert not ok
    await ws.disconnect()


@in_loop
async def test_staff_may_watch(django_user_model, episode):
    staff = await sync_to_async(django_user_model.objects.create_user)(
        "admin", password="x", is_staff=True
    )
    ws, ok = await _connect(episode.id, staff)
    assert ok
    await ws.disconnect()


@in_loop
async def test_streamed_text_is_appended_escaped_and_a_gap_catches_up(alice, episode):
    ws, _ = await _connect(episode.id, alice)
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
    # the catch-up reads the journal beside the stream: the delta need not wait for it
    assert sum('id="tree"' in f for f in frames) == 1 and sum("later" in f for f in frames) == 1
    await ws.disconnect()


@in_loop
async def test_a_committed_reply_replaces_the_stream_healing_lost_deltas(
    alice, episode, monkeypatch
):
    from jaiweb.studio import consumers

    monkeypatch.setattr(consumers, "SETTLE_SECONDS", 60)  # not within this test
    ws, _ = await _connect(episode.id, alice)
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
async def test_a_prompt_from_another_tab_reaches_this_one_after_commit(alice, episode):
    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    await sync_to_async(prompt_submit)(session=episode, user=alice, text="from <tab> two")
    html = await ws.receive_from(timeout=5)
    assert "from &lt;tab&gt; two" in html and 'data-state="running"' in html
    await ws.disconnect()


@in_loop
async def test_a_malformed_frame_gets_a_clear_error_and_changes_nothing(alice, episode):
    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    for frame in ("not json", '{"type": "drop_tables"}', "[1,2]", "x" * 10_000):
        await ws.send_to(text_data=frame)
        answer = await ws.receive_from(timeout=5)
        assert 'id="form-error"' in answer and "did not understand" in answer
    await ws.send_to(text_data='{"type": "catch_up"}')
    assert 'id="tree"' in await ws.receive_from(timeout=5)
    assert await ws.receive_nothing(timeout=0.2)
    await ws.disconnect()


@in_loop
async def test_json_nested_deeper_than_python_recurses_is_refused_like_any_bad_frame(
    alice, episode
):
    """The websocket fuzz test's finding: 4,000 characters of "[[[…]]]" were a RecursionError
    in json.loads, which closed the socket with 1011 and logged a traceback."""
    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    for frame in ("[" * 2000 + "]" * 2000, '{"a":' * 1500 + "1" + "}" * 1500):
        await ws.send_to(text_data=frame)
        answer = await ws.receive_from(timeout=5)
        assert 'id="form-error"' in answer and "did not understand" in answer
    await ws.send_to(text_data='{"type": "catch_up"}')
    assert 'id="tree"' in await ws.receive_from(timeout=5)
    await ws.disconnect()


@in_loop
async def test_regions_come_in_the_watchers_language(alice, episode):
    ws, _ = await _connect(episode.id, alice, extra=[(b"accept-language", b"zh-CN,zh;q=0.9")])
    html = await ws.receive_from(timeout=5)
    assert "积分" in html  # "Credits"
    await ws.disconnect()
    await asyncio.sleep(0)


@in_loop
async def test_a_slow_catch_up_holds_no_delta_back_and_requests_fold_into_one(
    alice, episode, monkeypatch
):
    """While the journal is read, deltas flow on; catch-ups asked meanwhile fold into one."""
    from jaiweb.studio import consumers

    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    reads = []
    real = consumers._regions

    def slow_regions(session_id, language):
        reads.append(session_id)
        time.sleep(0.5)
        return real(session_id, language)

    monkeypatch.setattr(consumers, "_regions", slow_regions)
    monkeypatch.setattr(consumers, "SETTLE_SECONDS", 60)  # not within this test
    monkeypatch.setattr(consumers, "CATCH_UP_INTERVAL", 0)  # only the slow read folds them
    layer = get_channel_layer()
    started = time.monotonic()
    for n in range(1, 41):
        kind = "text_delta" if n % 2 else "entry_committed"
        event = {"type": kind, "text": f"<{n}>", "n": n, "entry": {"type": "app_state"}}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    deltas = [await ws.receive_from(timeout=5) for _ in range(20)]
    assert time.monotonic() - started < 0.5  # none waited for the first catch-up's read
    assert [f"&lt;{n}&gt;" in d for n, d in zip(range(1, 41, 2), deltas, strict=True)] == [
        True
    ] * 20
    assert await ws.receive_nothing(timeout=1.2)  # the journal did not change: no regions
    assert len(reads) == 2  # the first, then one for the 19 asked while it ran
    await ws.disconnect()


@in_loop
async def test_regions_go_out_when_the_journal_changed_at_most_once_per_interval(
    alice, episode, monkeypatch
):
    """A burst of changes costs a render at its start and one at its end."""
    from jaiweb.render.selectors import wallet_balance
    from jaiweb.render.services import credits_grant
    from jaiweb.studio import consumers

    monkeypatch.setattr(consumers, "SETTLE_SECONDS", 60)  # not within this test
    monkeypatch.setattr(consumers, "CATCH_UP_INTERVAL", 0.5)
    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()
    balance = await sync_to_async(wallet_balance)(user=alice)

    async def fact(n: int) -> None:  # a change the regions show (the credits), then its event
        await sync_to_async(credits_grant)(user=alice, amount=1)
        event = {"type": "entry_committed", "entry": {"type": "app_state"}, "n": n}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})

    await fact(1)
    assert f'data-balance="{balance + 1}"' in await ws.receive_from(timeout=5)  # at once
    started = time.monotonic()
    for n in range(2, 12):
        await fact(n)
    last = await ws.receive_from(timeout=5)
    assert time.monotonic() - started >= 0.3  # held to the end of the interval …
    assert f'data-balance="{balance + 11}"' in last  # … then the state the burst left, once
    assert await ws.receive_nothing(timeout=0.8)
    await layer.group_send(
        group_name(episode.id),
        {"type": "session.event", "event": {"type": "tool_finished", "n": 12}},
    )
    step = await ws.receive_from(timeout=5)
    assert 'id="tree"' not in step  # the step line only: the regions did not change
    assert await ws.receive_nothing(timeout=0.8)
    await ws.disconnect()


@in_loop
async def test_a_burst_is_followed_by_a_catch_up_when_it_settles(alice, episode, monkeypatch):
    """Even a burst whose last event was lost ends with the journal's state on the page."""
    from jaiweb.studio import consumers

    monkeypatch.setattr(consumers, "SETTLE_SECONDS", 0.3)
    ws, _ = await _connect(episode.id, alice)
    await ws.receive_from(timeout=5)
    layer = get_channel_layer()
    for n in (1, 2, 3):
        event = {"type": "text_delta", "text": f"t{n}", "n": n}
        await layer.group_send(group_name(episode.id), {"type": "session.event", "event": event})
    for n in (1, 2, 3):
        assert f"t{n}" in await ws.receive_from(timeout=5)
    assert 'id="tree"' in await ws.receive_from(timeout=3)  # the settle pass
    assert await ws.receive_nothing(timeout=0.6)  # once per burst
    await ws.disconnect()


@pytest.mark.parametrize("path", ["/ws/other/", "/ws/sessions/", "/ws/sessions/x/y/", "/nope"])
@in_loop
async def test_an_unrouted_path_is_refused_at_the_handshake_quietly(alice, path, caplog):
    """Issue 14.5: URLRouter raised ValueError ("No route found"), logged as a traceback."""
    headers = [(b"origin", b"http://127.0.0.1"), (b"cookie", await sync_to_async(_cookie)(alice))]
    communicator = WebsocketCommunicator(application, path, headers)
    connected, code = await communicator.connect(timeout=5)
    assert (connected, code) == (False, 4404)
    await communicator.wait(timeout=5)  # the application has ended, no exception raised
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@in_loop
async def test_a_nul_in_the_session_id_is_refused_at_the_handshake(alice, episode):
    """On PostgreSQL the lookup raised DataError (a traceback, no answer); found by the
    websocket fuzz test's /ws/sessions/%00/."""
    _ws, connected = await _connect("\x00", alice)
    assert not connected
