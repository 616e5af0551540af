"""Records the golden operation logs of ``tests/fixtures/oplogs/`` (see tests/support/oplogs.py).

Not collected by a normal run: it rewrites the fixtures, so it runs only when named:

    .venv/bin/python -m pytest tests/agent/oplog_recording.py -p no:cacheprovider

Each case plays a real run of the loop in this process, with the offline director, the
local renderer and a SQLite or PostgreSQL database, and stops it at one moment: a crash
point of the crash matrix (the loop raises there, so what it had committed stays and what
it had not is rolled back, as after a SIGKILL), or a person's write between the loop's
decision and its append (the interleavings that once lost a prompt). It then writes the
operation's records, the branch and the evidence as they are in the database, with the
decision the core takes from them. Ids come from a counter while recording, and
timestamps are steadied, so re-recording an unchanged run gives the same files.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.utils import timezone

from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.tools import default_tools
from jaiweb.render.services import credits_grant, wallet_get_or_create
from jaiweb.store.leases import Lease, lease_release, operation_claim
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import branch_get, operation_records, recovery_evidence
from jaiweb.store.services import (
    operation_accept,
    operation_approval_decide,
    operation_stop_request,
    operation_tool_resolve,
    session_create,
)
from journal.records import UsageSettled
from journal.recovery import fold_operation
from journal.steps import Finish, HandleCall, Step
from tests.support.oplogs import FIXTURES, decide, dumps, steady_timestamps
from tests.support.stories import STORY

pytestmark = pytest.mark.django_db(transaction=True)  # the feed answers from another thread

CONFIG = {"context_budget": 100_000, "max_model_calls": 24}
CRASH_POINTS = (
    "after_accept",
    "after_model_attempted",
    "mid_stream",
    "after_assistant_entry",
    "after_usage",
    "after_t1:generate_image",
    "during_tool:generate_image",
    "after_tool_effect:generate_image",
    "after_t2:generate_image",
    "after_input_entry",
    "before_finish",
)
PUBLISH_POINTS = ("after_t1", "during_tool", "after_tool_effect", "after_t2")


class Crash(BaseException):
    """The loop died here (a BaseException, so that no tool's error handling catches it)."""


@dataclass
class CrashAt:
    """Faults that raise at one point (for one tool) the first time it is reached."""

    point: str
    tool: str | None = None
    fired: bool = False

    def reach(self, point: str, tool: str | None = None) -> None:
        if not self.fired and point == self.point and self.tool in (None, tool):
            self.fired = True
            raise Crash(point)


class NoFaults:
    def reach(self, point: str, tool: str | None = None) -> None:
        return None


@pytest.fixture(autouse=True)
def counted_ids(monkeypatch):
    """Ids from a counter, so a re-recorded log names the same ids."""
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter) << 48))


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.JAIWEB_MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def feed(settings, live_server):
    """The studio's own feed, served over real HTTP, for publish_panel to post to."""
    settings.JAIWEB_FEED_URL = live_server.url + "/feed/webhook"


def _session(owner, *, mode: str = "auto", budget: int = CONFIG["context_budget"]):
    wallet_get_or_create(user=owner)
    credits_grant(user=owner, amount=500)
    state = {**DEFAULT_STATE, "permission_mode": mode}
    return session_create(owner=owner, title="golden", initial_app_state=state)


def _run(
    operation_id: str,
    *,
    faults=None,
    interleave: Callable[[Step], None] | None = None,
    approve: bool = True,
    budget: int = CONFIG["context_budget"],
) -> str:
    """Run the operation; with ``approve``, a run waiting for approval is approved and
    runs on, as a user at the page would."""
    config = LoopConfig(
        context_budget=budget,
        lease_seconds=60,
        approval_poll_seconds=0,
        approval_hold_seconds=0,
    )
    faults = faults or NoFaults()
    while True:
        lease = operation_claim(
            owner="recorder", now=timezone.now(), lease_seconds=60, operation_id=operation_id
        )
        assert lease is not None, "the operation could not be claimed"
        outcome = OperationRun(
            lease=lease,
            provider=OfflineDirector(),
            tools=default_tools(),
            config=config,
            sleep=lambda _seconds: None,
            interleave=interleave,
            faults=faults,
        ).run()
        if outcome != "waiting" or not approve:
            return outcome
        _approve_pending(operation_id)


def _approve_pending(operation_id: str) -> None:
    log = fold_operation(operation_records(operation_id=operation_id))
    for call_id, call in log.calls.items():
        if call.approval == "pending":
            operation_approval_decide(
                operation_id=operation_id, tool_call_id=call_id, decision="approved", by="u"
            )


def _crashed(operation_id: str, **kwargs) -> None:
    with pytest.raises(Crash):
        _run(operation_id, **kwargs)
    op = Operation.objects.get(pk=operation_id)
    lease_release(lease=Lease(op.id, op.lease_owner, op.fencing, op.lease_expires_at))


def _record(name: str, about: str, operation_id: str, *, budget: int = CONFIG["context_budget"]):
    op = Operation.objects.get(pk=operation_id)
    session = ComicSession.objects.get(pk=op.session_id)
    records = operation_records(operation_id=operation_id)
    evidence = recovery_evidence(session=session, records=records)
    golden = {
        "name": name,
        "about": about,
        "records": steady_timestamps([r.model_dump(mode="json") for r in records]),
        "branch": steady_timestamps(
            [e.model_dump(mode="json") for e in branch_get(session=session)]
        ),
        "evidence": {
            "entry_ids": sorted(evidence.entry_ids),
            "final_assistant_entries": dict(sorted(evidence.final_assistant_entries.items())),
        },
        "limits": {**CONFIG, "context_budget": budget},
    }
    golden["decision"] = decide(golden)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    (FIXTURES / f"{name}.json").write_text(dumps(golden), encoding="utf-8")


def _finished_story(owner) -> ComicSession:
    session = _session(owner)
    assert _run(operation_accept(session_id=session.id, text=STORY).operation_id) == "finished"
    return session


# -- the cases ------------------------------------------------------------------------------


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_record_a_crash_at_each_point(alice, point):
    session = _session(alice)
    op = operation_accept(session_id=session.id, text=STORY).operation_id
    if point == "after_input_entry":
        operation_accept(session_id=session.id, text="再画得热闹一点")
    where, _, tool = point.partition(":")
    _crashed(op, faults=CrashAt(where, tool or None))
    _record(
        f"crash-{where}" + (f"-{tool}" if tool else ""),
        f"The story's prompt in auto mode; the process dies at {point}.",
        op,
    )


@pytest.mark.parametrize("point", PUBLISH_POINTS)
def test_record_a_publish_crash(alice, feed, point):
    session = _finished_story(alice)
    op = operation_accept(session_id=session.id, text="/publish 第一格").operation_id
    _crashed(op, faults=CrashAt(point, "publish_panel"))
    _record(
        f"publish-crash-{point}",
        f"Publishing a drawn panel (at most once); the process dies at {point}.",
        op,
    )


@pytest.mark.parametrize("resolution", ["retry", "confirmed", "failed"])
def test_record_an_admin_resolution_of_a_parked_publish(alice, feed, resolution):
    session = _finished_story(alice)
    op = operation_accept(session_id=session.id, text="/publish 第一格").operation_id
    _crashed(op, faults=CrashAt("after_t1", "publish_panel"))  # no post: nothing settles it
    assert _run(op) == "parked"
    operation_tool_resolve(
        operation_id=op, tool_call_id="call_1", resolution=resolution, by="admin", reason="seen"
    )
    _record(
        f"parked-publish-{resolution}",
        f"A publish that may have happened is parked; an admin resolves it as {resolution}.",
        op,
    )


def test_record_a_wait_for_approval(alice):
    session = _session(alice, mode="ask")
    op = operation_accept(session_id=session.id, text=STORY).operation_id
    assert _run(op, approve=False) == "waiting"
    _record("awaiting-approval", "Ask mode: the panel waits for the user's approval.", op)


def test_record_a_reply_without_its_bill(alice, monkeypatch):
    """The crash older versions could have between a reply and its usage record."""
    from jaiweb.agent.writer import FencedWriter

    real = FencedWriter.write

    def write(writer, *, records=(), entries=(), checked=True, then=()):
        if entries and any(isinstance(r, UsageSettled) for r in records):
            kept = [r for r in records if not isinstance(r, UsageSettled)]
            real(writer, records=kept, entries=entries, checked=checked)
            monkeypatch.setattr(FencedWriter, "write", real)
            raise Crash("between the reply and its usage")
        return real(writer, records=records, entries=entries, checked=checked, then=then)

    monkeypatch.setattr(FencedWriter, "write", write)
    session = _session(alice)
    op = operation_accept(session_id=session.id, text="/draw 猪猪侠上擂台").operation_id
    _crashed(op)
    _record("unbilled-reply", "A reply is durable and its usage is not.", op)


def test_record_a_prompt_typed_just_before_the_finish(alice):
    """The interleaving that once lost a prompt: input queued between the final reply and
    the finish."""
    session = _session(alice)
    op = operation_accept(session_id=session.id, text=STORY).operation_id

    def type_then_die(step: Step) -> None:
        if isinstance(step, Finish):
            operation_accept(session_id=session.id, text="再加一格")
            raise Crash("after the finish was decided, before it was written")

    _crashed(op, interleave=type_then_die)
    _record(
        "input-queued-before-finish",
        "The user types while the run decides to finish; the process dies before the finish.",
        op,
    )


def test_record_a_stop_instead_of_an_approval(alice):
    session = _session(alice, mode="ask")
    op = operation_accept(session_id=session.id, text=STORY).operation_id
    assert _run(op, approve=False) == "waiting"
    operation_stop_request(operation_id=op, by="alice")
    _record(
        "stop-instead-of-approval",
        "Ask mode: the user presses Stop while the panel waits for approval.",
        op,
    )


def test_record_a_stop_before_the_reply_is_written(alice):
    """Stop pressed between the model's reply and its first write: the reply goes with the
    crash, and the run ends aborted without asking the model again."""
    session = _session(alice)
    op = operation_accept(session_id=session.id, text=STORY).operation_id

    def stop_then_die(step: Step) -> None:
        if isinstance(step, HandleCall):
            operation_stop_request(operation_id=op, by="alice")
            raise Crash("after the stop, before the reply's first write")

    _crashed(op, interleave=stop_then_die)
    _record("stop-before-the-reply-is-written", "Stop between the reply and its write.", op)


def test_record_a_compaction(alice):
    session = _session(alice)
    for n in range(3):
        earlier = operation_accept(session_id=session.id, text=f"/say 第{n}回" + "剧情" * 30)
        assert _run(earlier.operation_id) == "finished"
    op = operation_accept(session_id=session.id, text="/say 继续").operation_id

    def die_before_compacting(step: Step) -> None:
        if type(step).__name__ == "Compact":
            raise Crash("before the compaction")

    _crashed(op, interleave=die_before_compacting, budget=120)
    _record("compaction-due", "The context is over budget: the core compacts.", op, budget=120)
