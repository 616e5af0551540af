"""Another writer between the loop's read and its append, at every step of a run.

The crash matrix kills the loop at every point; this matrix lets a person act at every
point instead. A run is first made once with a hook that records the steps ``next_step``
decides; then, for each of those decisions and each write a person can make while a run
goes on (a steering prompt, Stop, an approval decision, an inbox resolution, a rewind, a
character edit), a fresh session runs the same prompt with that write made right after
that decision and before the step's first append. Deterministic: the write happens in
the loop's own thread, at a point named by the step's index, never by timing.

After each: every accepted input is exactly one entry, the operation ended (or parked,
and then finishes after the admin's resolution), ``journal_check`` finds nothing, and
``recover_operation`` agrees with the reference: terminal, ``aborted`` after a stop and
``completed`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from django.utils import timezone

from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.tools import default_tools
from jaiweb.commands.sessions import character_set
from jaiweb.render.services import credits_grant, wallet_get_or_create
from jaiweb.store.errors import OperationStateConflict, SessionBusy
from jaiweb.store.integrity import session_check
from jaiweb.store.leases import lease_release, operation_claim
from jaiweb.store.models import ComicSession, Entry, Operation
from jaiweb.store.selectors import operation_records, recovery_evidence
from jaiweb.store.services import (
    operation_accept,
    operation_approval_decide,
    operation_stop_request,
    operation_tool_resolve,
    rewind_append,
    session_create,
)
from journal.records import UsageSettled
from journal.recovery import fold_operation, recover_operation
from journal.steps import Step

pytestmark = pytest.mark.django_db


class Crash(Exception):
    """The loop died here (in-process: the lease stays with the dead run)."""


@dataclass
class CrashAt:
    """Faults that raise at one point (for one tool) the first time it is reached."""

    point: str
    tool: str | None = None
    fired: bool = False

    def reach(self, point: str, tool: str | None = None) -> None:
        if not self.fired and point == self.point and (self.tool in (None, tool)):
            self.fired = True
            raise Crash(point)


@dataclass
class CrashBeforeTheBill(CrashAt):
    """The crash older versions could have between a reply and its bill (two commits then,
    one now): the reply is written without its ``usage_settled``, then the loop dies."""

    point: str = "after_assistant_entry"

    def __post_init__(self) -> None:
        from jaiweb.agent.writer import FencedWriter

        self.real_write = FencedWriter.write
        crash = self

        def write(writer, *, records=(), entries=(), checked=True, then=()):
            if entries and any(isinstance(r, UsageSettled) for r in records) and not crash.fired:
                kept = [r for r in records if not isinstance(r, UsageSettled)]
                crash.real_write(writer, records=kept, entries=entries, checked=checked)
                crash.fired = True
                FencedWriter.write = crash.real_write
                raise Crash("between the reply and its usage")
            return crash.real_write(
                writer, records=records, entries=entries, checked=checked, then=then
            )

        FencedWriter.write = write


@dataclass
class World:
    """One session's run and what the person did to it."""

    session: ComicSession
    operation_id: str
    typed: list[str] = field(default_factory=list)
    stopped: bool = False
    steps: list[str] = field(default_factory=list)


def approve_everything(world: World):
    """The loop's ``sleep`` while it waits: the user approves whatever is asked."""

    def sleep(_seconds):
        log = fold_operation(operation_records(operation_id=world.operation_id))
        for call_id, call in log.calls.items():
            if call.approval == "pending":
                operation_approval_decide(
                    operation_id=world.operation_id,
                    tool_call_id=call_id,
                    decision="approved",
                    by="alice",
                )

    return sleep


# -- the writes a person can make while a run goes on --------------------------------------


def steer(world: World) -> None:
    text = f"/say steering {len(world.typed)}"
    accepted = operation_accept(session_id=world.session.id, text=text)
    assert accepted.queued and accepted.operation_id == world.operation_id
    world.typed.append(text)


def stop(world: World) -> None:
    operation_stop_request(operation_id=world.operation_id, by="alice")
    world.stopped = True


def decide(world: World) -> None:
    """An approval decision: taken when one is awaited, refused (409) otherwise."""
    log = fold_operation(operation_records(operation_id=world.operation_id))
    pending = [c for c, call in log.calls.items() if call.approval == "pending"]
    if pending:
        operation_approval_decide(
            operation_id=world.operation_id,
            tool_call_id=pending[0],
            decision="approved",
            by="alice",
        )
        return
    with pytest.raises(OperationStateConflict):
        operation_approval_decide(
            operation_id=world.operation_id, tool_call_id="call_1", decision="approved", by="x"
        )


def resolve(world: World) -> None:
    """An inbox resolution: refused, the operation is not parked while its loop runs."""
    with pytest.raises(OperationStateConflict):
        operation_tool_resolve(
            operation_id=world.operation_id,
            tool_call_id="call_1",
            resolution="confirmed",
            by="admin",
            reason="seen it",
        )


def rewind(world: World) -> None:
    root = Entry.objects.filter(session=world.session).order_by("seq").first()
    with pytest.raises(SessionBusy):
        rewind_append(session_id=world.session.id, target_id=root.entry_id)


def edit_character(world: World) -> None:
    world.session.refresh_from_db(fields=["leaf_id", "entry_count"])
    with pytest.raises(SessionBusy):
        character_set(
            session=world.session,
            name="猪猪侠",
            fields={"mood": "sad"},
            expected_leaf_id=world.session.leaf_id,
        )


WRITES = {
    "steer": steer,
    "stop": stop,
    "approval": decide,
    "inbox": resolve,
    "rewind": rewind,
    "character": edit_character,
}

# Each scenario: earlier turns, the prompt, and the crash (if any) that leaves the state
# the matrix runs from, so that the recovery steps (settle usage, dispatch again, park)
# are decided too.
SCENARIOS = {
    "draw": ([], "/state 猪猪侠 buff=超级棒棒糖 mood=得意\n/draw 猪猪侠吃下棒棒糖", None),
    "unbilled reply": ([], "/draw 猪猪侠上擂台", "older version's crash before the bill"),
    "open idempotent dispatch": (
        [],
        "/draw 猪猪侠对决超人强",
        CrashAt("after_t1", "generate_image"),
    ),
    "open at-most-once dispatch": (
        ["/draw 猪猪侠使出绝招"],
        "/publish 决战",
        CrashAt("after_t1", "publish_panel"),
    ),
    "compaction": ([f"/say 第{n}回" + "剧情" * 30 for n in range(3)], "/say 继续", None),
}


def start(alice, scenario: str) -> tuple[World, LoopConfig]:
    wallet_get_or_create(user=alice)
    credits_grant(user=alice, amount=500)
    earlier, prompt, crash = SCENARIOS[scenario]
    session = session_create(owner=alice, title="episode", initial_app_state=DEFAULT_STATE)
    budget = 120 if scenario == "compaction" else 100_000
    config = LoopConfig(context_budget=100_000, lease_seconds=60, approval_poll_seconds=0)
    for text in earlier:
        op = operation_accept(session_id=session.id, text=text)
        run_to_the_end(World(session, op.operation_id, typed=[text]), config)
    config.context_budget = budget
    op = operation_accept(session_id=session.id, text=prompt)
    world = World(session, op.operation_id, typed=[prompt])
    if crash is not None:
        faults = CrashBeforeTheBill() if isinstance(crash, str) else replace(crash)  # fresh
        try:
            with pytest.raises(Crash):
                run(world, config, faults=faults)
        finally:
            if isinstance(faults, CrashBeforeTheBill):
                from jaiweb.agent.writer import FencedWriter

                FencedWriter.write = faults.real_write
        lease_release(lease=_lease_of(world))
    return world, config


def _lease_of(world: World):
    from jaiweb.store.leases import Lease

    op = Operation.objects.get(pk=world.operation_id)
    return Lease(op.id, op.lease_owner, op.fencing, op.lease_expires_at)


def run(world: World, config: LoopConfig, *, faults=None, interleave=None) -> str:
    lease = operation_claim(
        owner="test-runner",
        now=timezone.now(),
        lease_seconds=config.lease_seconds,
        operation_id=world.operation_id,
    )
    assert lease is not None
    kwargs = {"faults": faults} if faults is not None else {}
    return OperationRun(
        lease=lease,
        provider=OfflineDirector(),
        tools=default_tools(),
        config=config,
        sleep=approve_everything(world),
        interleave=interleave,
        **kwargs,
    ).run()


def run_to_the_end(world: World, config: LoopConfig, interleave=None) -> None:
    """Run; an operation parked for an admin is confirmed by one and runs on."""
    outcome = run(world, config, interleave=interleave)
    if outcome == "parked":
        log = fold_operation(operation_records(operation_id=world.operation_id))
        for call_id, call in log.calls.items():
            if call.dispatch is not None and not call.resolutions:
                operation_tool_resolve(
                    operation_id=world.operation_id,
                    tool_call_id=call_id,
                    resolution="confirmed",
                    by="admin",
                    reason="the post is on the feed",
                )
        outcome = run(world, config, interleave=interleave)
    assert outcome == "finished"


def reference_steps(alice, scenario: str) -> list[str]:
    world, config = start(alice, scenario)

    def record(step: Step) -> None:
        world.steps.append(type(step).__name__)

    run_to_the_end(world, config, interleave=record)
    check(world)
    return world.steps


def check(world: World) -> None:
    users = [
        e.payload["message"]["content"]
        for e in Entry.objects.filter(session=world.session, type="message")
        if e.payload["message"]["role"] == "user"
    ]
    for text in world.typed:
        assert users.count(text) == 1, f"{text!r} is {users.count(text)} entries"
    records = operation_records(operation_id=world.operation_id)
    session = ComicSession.objects.get(pk=world.session.id)
    verdict = recover_operation(records, recovery_evidence(session=session, records=records))
    assert verdict.status == "terminal" and verdict.finalization == "durable"
    assert verdict.outcome == ("aborted" if world.stopped else "completed")
    assert not Operation.objects.filter(session=session, outcome__isnull=True).exists()
    assert session_check(session).problems == []


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_reference_runs_decide_every_kind_of_step(alice, scenario):
    steps = reference_steps(alice, scenario)
    expected = {
        "draw": {"ModelCall", "HandleCall", "Finish"},
        "unbilled reply": {"SettleUsage"},
        "open idempotent dispatch": {"DispatchAgain"},
        "open at-most-once dispatch": {"Park"},
        "compaction": {"Compact"},
    }[scenario]
    assert expected <= set(steps), steps


def _matrix():
    """(scenario, decision index, write) for every decision of the reference runs."""
    # The reference runs' lengths, fixed by the offline director; checked by the test above
    # and again in each case (an index past the end of a run fails loudly, it is not skipped).
    lengths = {
        "draw": 6,
        "unbilled reply": 5,
        "open idempotent dispatch": 3,
        "open at-most-once dispatch": 3,
        "compaction": 3,
    }
    return [
        pytest.param(scenario, index, write, id=f"{scenario}-{index}-{write}")
        for scenario, n in lengths.items()
        for index in range(n)
        for write in WRITES
    ]


@pytest.mark.parametrize(("scenario", "index", "write"), _matrix())
def test_a_person_writes_between_the_loops_read_and_append(alice, scenario, index, write):
    world, config = start(alice, scenario)
    made = []

    def interleave(step: Step) -> None:
        world.steps.append(type(step).__name__)
        if len(world.steps) - 1 == index:
            WRITES[write](world)
            made.append(type(step).__name__)

    run_to_the_end(world, config, interleave=interleave)
    assert made, f"the run made only {len(world.steps)} decisions: {world.steps}"
    check(world)
