"""GET /metrics: Prometheus text format, figures from the database, loopback or a token."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from jaiweb import requests_first
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.ops.watchers import CountWebsockets, open_websockets
from jaiweb.requests_first import answering, wait_turn
from jaiweb.store.leases import lease_release, operation_claim
from jaiweb.store.models import Entry, OperationRecord
from jaiweb.store.services import operation_accept, operation_park, session_create
from jaiweb.studio.pass_counts import PASS_KINDS, READ_KINDS, pass_count, read_count
from tests.support.children import settings_child, settings_of
from tests.support.runs import Harness

SAMPLE = re.compile(
    r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)"
    r"(?:\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\n]|\\.)*\",?)*)\})?"
    r" (?P<value>[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN|Inf))$"
)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')
TOKEN = "metrics-token-0123456789"


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    """Each line is a HELP, a TYPE or a sample; a metric has its HELP and TYPE before samples."""
    assert text.endswith("\n")
    samples: dict[tuple[str, frozenset], float] = {}
    helped, typed = set(), {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("counter", "gauge", "untyped"), line
            typed[name] = kind
            continue
        assert not line.startswith("#"), line
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name = m["name"]
        assert name in helped and name in typed, f"{name} has no HELP/TYPE before it"
        labels = frozenset(LABEL.findall(m["labels"] or ""))
        assert (name, labels) not in samples, f"duplicate sample {line!r}"
        samples[(name, labels)] = float(m["value"])
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_METRICS_TOKEN = None


@pytest.fixture
def journals(alice, media):
    """A running, a parked and a finished operation (that rendered and paid for one panel)."""
    auto = {**DEFAULT_STATE, "permission_mode": "auto"}
    finished = Harness(session_create(owner=alice, title="done", initial_app_state=auto))
    done = finished.prompt("/draw 擂台")
    assert finished.run(OfflineDirector()) == "finished"

    running_session = session_create(owner=alice, title="run", initial_app_state=DEFAULT_STATE)
    running = operation_accept(session_id=running_session.id, text="/say hi").operation_id

    parked_session = session_create(owner=alice, title="park", initial_app_state=DEFAULT_STATE)
    parked = operation_accept(session_id=parked_session.id, text="/say hi").operation_id
    now = timezone.now()
    first = operation_claim(owner="r1", now=now, lease_seconds=30, operation_id=parked)
    lease_release(lease=first)  # given back: the next claim is a re-claim
    second = operation_claim(owner="r2", now=now, lease_seconds=30, operation_id=parked)
    operation_park(operation_id=parked, fencing=second.fencing, reason="test")
    return {"done": done, "running": running, "parked": parked}


@pytest.mark.django_db
def test_the_figures_match_the_database(client, journals):
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "no-cache" in r["Cache-Control"]
    s = parse(r.content.decode())

    assert value(s, "jaiweb_operations", state="running") == 1
    assert value(s, "jaiweb_operations", state="parked") == 1
    assert value(s, "jaiweb_operations", state="completed") == 1
    for outcome in ("failed", "aborted", "interrupted"):
        assert value(s, "jaiweb_operations", state=outcome) == 0
    assert value(s, "jaiweb_operations_waiting_for_runner") == 1  # never claimed
    assert value(s, "jaiweb_operation_oldest_running_age_seconds") >= 0
    # claims: the finished one once, the parked one twice; the running one never
    assert value(s, "jaiweb_operation_claims") == 3
    assert value(s, "jaiweb_operation_reclaims") == 1
    assert value(s, "jaiweb_operation_records") == OperationRecord.objects.count()
    assert value(s, "jaiweb_sessions") == 3
    assert value(s, "jaiweb_entries") == Entry.objects.count()
    assert value(s, "jaiweb_render_charges") == 1
    assert value(s, "jaiweb_render_charged_credits") == 10
    assert value(s, "jaiweb_process_uptime_seconds") > 0
    assert value(s, "jaiweb_process_start_time_seconds") > 1_600_000_000
    assert value(s, "jaiweb_websocket_watchers") == 0
    [info] = [k for k in s if k[0] == "jaiweb_process_info"]
    assert dict(info[1])["database"] in ("sqlite", "postgresql")


@pytest.mark.django_db
def test_an_empty_database_has_every_series(client, media):
    s = parse(client.get("/metrics").content.decode())
    for state in ("running", "parked", "completed", "failed", "aborted", "interrupted"):
        assert value(s, "jaiweb_operations", state=state) == 0
    assert value(s, "jaiweb_render_charged_credits") == 0
    assert value(s, "jaiweb_entries") == 0


@pytest.mark.django_db
def test_the_catch_up_counters_count_this_processs_passes_and_reads(client, media):
    before = parse(client.get("/metrics").content.decode())
    for kind in PASS_KINDS:
        assert ("jaiweb_catch_up_passes_total", frozenset({("kind", kind)})) in before
    for kind in READ_KINDS:
        assert ("jaiweb_catch_up_reads_total", frozenset({("read", kind)})) in before
    pass_count("quiet")
    read_count("path")
    read_count("path")
    after = parse(client.get("/metrics").content.decode())
    moved = {k: v - before[k] for k, v in after.items() if k[0].startswith("jaiweb_catch_up_")}
    assert {k: v for k, v in moved.items() if v} == {
        ("jaiweb_catch_up_passes_total", frozenset({("kind", "quiet")})): 1,
        ("jaiweb_catch_up_reads_total", frozenset({("read", "path")})): 2,
    }


@pytest.mark.django_db
def test_queries_are_few(client, media, journals, django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        assert client.get("/metrics").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("remote", "headers", "status"),
    [
        ("127.0.0.1", {}, 200),
        ("::1", {}, 200),
        ("203.0.113.5", {}, 403),
        ("10.0.0.7", {}, 403),
        # a proxy on this machine connects from loopback; its forwarding headers give it away
        ("127.0.0.1", {"HTTP_X_FORWARDED_FOR": "203.0.113.5"}, 403),
        ("127.0.0.1", {"HTTP_X_REAL_IP": "203.0.113.5"}, 403),
        ("127.0.0.1", {"HTTP_FORWARDED": "for=203.0.113.5"}, 403),
    ],
)
def test_without_a_token_only_loopback(client, media, remote, headers, status):
    assert client.get("/metrics", REMOTE_ADDR=remote, **headers).status_code == status


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("remote", "authorization", "status"),
    [
        ("203.0.113.5", f"Bearer {TOKEN}", 200),
        ("203.0.113.5", f"bearer {TOKEN}", 200),
        ("127.0.0.1", None, 403),  # with a token set, loopback alone is not enough
        ("203.0.113.5", None, 403),
        ("203.0.113.5", "Bearer wrong-token-0123456789", 403),
        ("203.0.113.5", f"Basic {TOKEN}", 403),
        ("203.0.113.5", f"Bearer {TOKEN}x", 403),
    ],
)
def test_with_a_token_only_the_token(client, media, settings, remote, authorization, status):
    settings.JAIWEB_METRICS_TOKEN = TOKEN
    extra = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    r = client.get("/metrics", REMOTE_ADDR=remote, **extra)
    assert r.status_code == status
    if status == 200:
        parse(r.content.decode())


@pytest.mark.django_db
def test_it_refuses_post(client, media):
    assert client.post("/metrics").status_code == 405


@pytest.mark.parametrize("token", ["short", "has space in the middle!", "ünïcödé-token-0123456789"])
def test_a_bad_token_stops_start_up_without_showing_it(token):
    r = settings_child(JAIWEB_METRICS_TOKEN=token)
    assert r.returncode != 0
    assert "ImproperlyConfigured: JAIWEB_METRICS_TOKEN must be at least 16 characters" in r.stderr
    assert token not in r.stderr


def test_a_good_token_parses():
    assert settings_of(JAIWEB_METRICS_TOKEN=TOKEN)["JAIWEB_METRICS_TOKEN"] == TOKEN
    assert settings_of()["JAIWEB_METRICS_TOKEN"] is None


class Accepting(AsyncWebsocketConsumer):
    async def connect(self):
        await self.accept()


class Refusing(AsyncWebsocketConsumer):
    async def connect(self):
        await self.close()


@pytest.mark.django_db  # consumers close stale connections as they start and end
def test_open_websockets_are_counted():
    async_to_sync(_open_websockets_are_counted)()


async def _open_websockets_are_counted():
    before = open_websockets()
    first = WebsocketCommunicator(CountWebsockets(Accepting.as_asgi()), "/ws/x/")
    second = WebsocketCommunicator(CountWebsockets(Accepting.as_asgi()), "/ws/y/")
    assert (await first.connect())[0]
    assert (await second.connect())[0]
    assert open_websockets() == before + 2
    await first.disconnect()
    assert open_websockets() == before + 1
    await second.disconnect()
    assert open_websockets() == before

    refused = WebsocketCommunicator(CountWebsockets(Refusing.as_asgi()), "/ws/z/")
    assert not (await refused.connect())[0]
    assert open_websockets() == before
    await refused.wait()


@pytest.mark.django_db
def test_background_waits_for_requests_are_counted(client, media, monkeypatch):
    monkeypatch.setattr(requests_first, "MAX_WAIT_SECONDS", 0.001)
    before = parse(client.get("/metrics").content.decode())
    with answering():
        wait_turn()
    after = parse(client.get("/metrics").content.decode())
    assert after[("jaiweb_background_waits_total", frozenset())] == (
        before[("jaiweb_background_waits_total", frozenset())] + 1
    )
    assert (
        after[("jaiweb_background_wait_seconds_total", frozenset())]
        > (before[("jaiweb_background_wait_seconds_total", frozenset())])
    )
