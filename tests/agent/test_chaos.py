"""Chaos: runner processes SIGKILLed at random moments, and a paused lease holder.

1. Several auto-mode sessions get prompts over time while ``runagents`` children are
   started and SIGKILLed at random (seeded) moments; a last runner then finishes the
   work. Nothing may be stuck, charged twice, answered twice or left dangling.
2. A runner is SIGSTOPped while its run waits for an approval: being alive, it keeps the
   operation until its lease expires; a second runner then takes it over, asks again and
   finishes it. Resumed, the first runner must write nothing (fencing). Neither "leaves it
   alone" nor "writes nothing" is waited out: each is checked when a later prompt, which
   only that runner could run and only after what must not happen, has been run.

Set ``JAIWEB_CHAOS_SEED`` to replay a chaos run; the seed is printed (``-s``) and named
in every failure message.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.render.models import LedgerEntry, RenderJob
from jaiweb.render.services import PANEL_COST, credits_grant
from jaiweb.store.errors import SessionParked
from jaiweb.store.models import Entry, Operation, OperationRecord
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, operation_approval_decide, session_create
from journal.entries import AssistantMessage, MessageEntry, ToolResultMessage
from journal.ids import result_entry_id
from journal.recovery import fold_operation
from tests.support.children import Child
from tests.support.stories import STORY
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

PROMPTS = [
    STORY,
    "/draw 擂台上的最后决战",
    "/draw 超人强被一巴掌打飞",
    "/draw 观众席上的菲菲在欢呼",
    "小呆呆也吃下超级棒棒糖，跳上擂台！",
]


def runagents(workers: int, env: dict) -> Child:
    return Child(connection.settings_dict, "runagents", "--workers", str(workers), env=env)


def identity_of(child: Child, timeout: float = 30) -> str:
    """The runner's ``host:pid:start``, from its start-up line."""
    child.wait_for("jaiweb runner ", timeout)
    line = next(x for x in child.out if x.startswith("jaiweb runner "))
    return line.split()[2]


def _entries(session) -> dict[str, object]:
    rows = Entry.objects.filter(session=session).order_by("seq")
    return {e.id: e for e in (r.to_journal() for r in rows)}


def result_counts(session) -> tuple[Counter, list[str]]:
    """How many result entries each (reply, call) has; and what is wrong with any result.

    A result belongs to the nearest reply above it that made its call; its id must be the
    one fixed for that call before the tool ran.
    """
    entries = _entries(session)
    counts: Counter = Counter()
    problems = []
    for entry in entries.values():
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)):
            continue
        call_id, parent = entry.message.tool_call_id, entries.get(entry.parent_id)
        while parent is not None and not (
            isinstance(parent, MessageEntry)
            and isinstance(parent.message, AssistantMessage)
            and any(c.id == call_id for c in parent.message.tool_calls)
        ):
            parent = entries.get(parent.parent_id)
        if parent is None:
            problems.append(f"{session.id}: result {entry.id} answers no reply's call {call_id}")
            continue
        counts[(parent.id, call_id)] += 1
        if entry.id != result_entry_id(parent.id, call_id):
            problems.append(f"{session.id}: result {entry.id} of {call_id} has a foreign id")
    return counts, problems


def dangling_calls(op: Operation, counts: Counter) -> list[str]:
    """Calls of the operation's replies without exactly one result under the fixed id."""
    present = set(Entry.objects.filter(session=op.session).values_list("entry_id", flat=True))
    out = []
    for rec in operation_records(operation_id=op.id):
        if rec.type != "model_attempted" or rec.assistant_entry_id not in present:
            continue
        reply = Entry.objects.get(session=op.session, entry_id=rec.assistant_entry_id)
        for call in reply.to_journal().message.tool_calls:
            n = counts[(rec.assistant_entry_id, call.id)]
            rid = result_entry_id(rec.assistant_entry_id, call.id)
            if n != 1 or rid not in present:
                out.append(f"{op.id}: call {call.id} ({call.name}) has {n} result(s)")
    return out


def held_by(child: Child) -> int:
    """Unfinished operations the child runner holds (its identity is ``host:pid:start``)."""
    return Operation.objects.filter(
        outcome__isnull=True, lease_owner__contains=f":{child.process.pid}:"
    ).count()


def unsettled() -> int:
    return Operation.objects.filter(outcome__isnull=True, parked_at__isnull=True).count()


def test_runners_killed_at_random_leave_nothing_stuck_doubled_or_dangling(alice, tmp_path):
    seed = int(os.environ.get("JAIWEB_CHAOS_SEED") or random.SystemRandom().randrange(10**6))
    rng = random.Random(seed)
    tag = f"[chaos seed {seed}]"
    print(tag)
    env = {
        "JAIWEB_MEDIA_ROOT": str(tmp_path / "media"),
        "JAIWEB_LEASE_SECONDS": "3",
        "JAIWEB_RENDER_LEASE_SECONDS": "2",
    }
    credits_grant(user=alice, amount=1000, note="chaos")  # never short of credits
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    sessions = [
        session_create(owner=alice, title=f"chaos {i}", initial_app_state=state) for i in range(4)
    ]
    iterations = rng.randint(8, 12)
    runs = [rng.uniform(0.2, 1.5) for _ in range(iterations)]  # from start to SIGKILL
    aimed = [rng.random() < 0.5 for _ in range(iterations)]  # or: at a run, once one starts
    # (iteration, seconds after the start, session, text): each session's first prompt
    # early, the others any time; each lands shortly before its runner's kill, so the
    # kill finds the run (about 0.1-0.3 s long) under way more often than not
    prompts = []
    for session in sessions:
        texts = rng.sample(PROMPTS, rng.choice([2, 3]))
        at = sorted([rng.randrange(3)] + [rng.randrange(iterations) for _ in texts[1:]])
        for i, text in zip(at, texts, strict=True):
            prompts.append((i, max(0.0, runs[i] - rng.uniform(0.1, 0.35)), session, text))
    prompts.sort(key=lambda p: (p[0], p[1]))
    print(
        f"{tag} {iterations} kills after "
        + ", ".join(f"{'~' if a else ''}{r:.2f}s" for r, a in zip(runs, aimed, strict=True))
    )

    refused, hits = [], 0
    children: list[Child] = []
    started = time.monotonic()
    try:
        for i, run_for in enumerate(runs):
            child = runagents(2, env)
            children.append(child)
            t0 = time.monotonic()
            if any(p[0] == i for p in prompts) and run_for > 0.6:
                identity_of(child)  # up: the prompts come to a runner that polls
            for _, after, session, text in (p for p in prompts if p[0] == i):
                time.sleep(max(0.0, t0 + after - time.monotonic()))
                try:  # on a running session it queues as steering
                    operation_accept(session_id=session.id, text=text)
                except SessionParked:
                    refused.append((session.id, text))
            if aimed[i]:  # kill inside a run: wait (briefly) for one, then a little into it
                into = rng.uniform(0.0, 0.1)
                while not held_by(child) and time.monotonic() < t0 + run_for + 0.5:
                    time.sleep(0.01)
                time.sleep(into)
            else:
                time.sleep(max(0.0, t0 + run_for - time.monotonic()))
            child.stop()  # SIGKILL
            hits += held_by(child)
        final = runagents(2, env)
        children.append(final)
        wait_until(lambda: unsettled() == 0, 40, f"every operation to finish or park {tag}")
    finally:
        for child in children:
            child.stop()
    print(f"{tag} settled {time.monotonic() - started:.1f}s after the first runner")

    ops = list(Operation.objects.select_related("session"))
    print(
        f"{tag} outcomes: "
        + str(Counter(op.outcome or "parked" for op in ops))
        + f"; claims {sorted(op.attempts for op in ops)}; {hits} kills found a run under way"
        + f"; refused prompts {len(refused)}; re-dispatches "
        + str(
            sum(
                r.type == "tool_dispatched" and r.dispatch_attempt > 1
                for op in ops
                for r in operation_records(operation_id=op.id)
            )
        )
    )
    print(
        f"{tag} run times: "
        + ", ".join(
            f"{(op.finished_at - op.created_at).total_seconds():.2f}s" for op in ops if op.outcome
        )
    )
    assert ops and unsettled() == 0
    call_command("journal_check", stdout=open(os.devnull, "w"))  # noqa: SIM115

    succeeded = set(
        RenderJob.objects.filter(status=RenderJob.SUCCEEDED).values_list("key", flat=True)
    )
    charges = list(LedgerEntry.objects.filter(kind="charge"))
    per_key = Counter(c.job_key for c in charges)
    assert all(n == 1 for n in per_key.values()), f"{tag} charged twice: {per_key}"
    assert set(per_key) == succeeded, f"{tag} charges {set(per_key)} vs renders {succeeded}"
    assert -sum(c.amount for c in charges) == PANEL_COST * len(succeeded), tag
    assert succeeded, f"{tag} no panel was ever rendered"

    problems = []
    counts_by_session = {}
    for session in sessions:
        counts, wrong = result_counts(session)
        counts_by_session[session.id] = counts
        problems += wrong
        problems += [f"{session.id}: {k} answered {n} times" for k, n in counts.items() if n > 1]
    for op in ops:
        if op.outcome == "completed":
            problems += dangling_calls(op, counts_by_session[op.session_id])
    assert not problems, f"{tag}\n" + "\n".join(problems)


def _holder_in_a_transaction(db_path: str | None) -> bool:
    """Whether the paused runner was stopped holding a transaction (and so row locks)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%%'"
            )
            return cursor.fetchone()[0] > 0
    probe = sqlite3.connect(db_path, timeout=0)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        probe.close()


def _pause(child: Child, db_path: str | None) -> None:
    """SIGSTOP the child outside a transaction, so it pauses holding its lease, not locks."""
    for _ in range(50):
        os.kill(child.process.pid, signal.SIGSTOP)
        time.sleep(0.05)
        if not _holder_in_a_transaction(db_path):
            return
        os.kill(child.process.pid, signal.SIGCONT)
        time.sleep(0.01)
    raise AssertionError("could not pause the runner outside a transaction")


def say_hello(owner, title: str) -> str:
    """A prompt in a session of its own that any runner finishes at once (no paid tool)."""
    session = session_create(owner=owner, title=title, initial_app_state=DEFAULT_STATE)
    return operation_accept(session_id=session.id, text="/say 你好").operation_id


def first_record_at(op_id: str, kind: str):
    return next(r.timestamp for r in operation_records(operation_id=op_id) if r.type == kind)


def written(op_id: str, session) -> tuple:
    """The operation's row (its claims, its lease), how many records it has, and how many
    entries its session has."""
    row = Operation.objects.values_list(
        "fencing", "lease_owner", "lease_expires_at", "outcome", "record_count"
    ).get(pk=op_id)
    return (
        row,
        OperationRecord.objects.filter(operation_id=op_id).count(),
        Entry.objects.filter(session=session).count(),
    )


def test_a_paused_holder_is_taken_over_after_its_lease_and_then_writes_nothing(alice, tmp_path):
    env = {"JAIWEB_MEDIA_ROOT": str(tmp_path / "media"), "JAIWEB_LEASE_SECONDS": "2"}
    session = session_create(owner=alice, title="ask", initial_app_state=DEFAULT_STATE)
    op_id = operation_accept(session_id=session.id, text=STORY).operation_id

    def types() -> list[str]:
        return [r.type for r in operation_records(operation_id=op_id)]

    db_path = None if connection.vendor == "postgresql" else str(connection.settings_dict["NAME"])
    a = runagents(1, env)
    b = None
    try:
        a_id = identity_of(a)
        wait_until(lambda: "approval_requested" in types(), 30, "A's approval request")
        op = Operation.objects.get(pk=op_id)
        assert op.lease_owner == a_id
        a_fencing = op.fencing
        _pause(a, db_path)
        a_expiry = Operation.objects.get(pk=op_id).lease_expires_at  # A's last renewal

        # B's first claim finds the paused run and a newer prompt: claims take the oldest
        # claimable operation, so B claims the newer one only if it leaves A's alone.
        newer = say_hello(alice, "while A holds its lease")
        b = runagents(1, env)
        identity_of(b)  # up and claiming
        wait_until(lambda: Operation.objects.get(pk=newer).outcome, 30, "B's run of the newer")
        claimed_newer_at = first_record_at(newer, "model_attempted")

        # Claimed again: by B, the one runner not paused. Not "B holds it": having asked
        # again, B hands the run back to wait for the decision within a moment.
        wait_until(lambda: Operation.objects.get(pk=op_id).fencing > a_fencing, 20, "B's takeover")
        taken = Operation.objects.get(pk=op_id)
        assert taken.fencing == a_fencing + 1

        wait_until(lambda: types().count("approval_requested") == 2, 20, "B asking again")
        asked = [r for r in operation_records(operation_id=op_id) if r.type == "approval_requested"]
        asked_again_at = asked[1].timestamp  # B's first write once it held the operation
        # B asked again after A's lease ran out (it took the operation over before that) …
        assert asked_again_at >= a_expiry, "B took the operation from a live holder"
        if claimed_newer_at < a_expiry:
            # … and while that lease held, B's claim passed the older operation over for the
            # newer one; its one worker took A's only once the newer run had ended.
            assert asked_again_at > Operation.objects.get(pk=newer).finished_at
        else:
            print("B's first claim came after A's lease expired: the pass-over is not shown")
        calls = fold_operation(operation_records(operation_id=op_id)).calls
        [call_id] = [c for c, s in calls.items() if s.approval == "pending"]
        operation_approval_decide(
            operation_id=op_id, tool_call_id=call_id, decision="approved", by="alice"
        )
        wait_until(lambda: Operation.objects.get(pk=op_id).outcome is not None, 30, "B's finish")
        assert Operation.objects.get(pk=op_id).outcome == "completed"

        b.stop()  # B is done: A is now the only runner
        before = written(op_id, session)
        os.kill(a.process.pid, signal.SIGCONT)
        # The sentinel: a prompt only A can run, and A's one worker is its old run's until
        # that run ends. Once A has run it, the old run has written all it ever will.
        later = say_hello(alice, "after A woke up")
        wait_until(lambda: Operation.objects.get(pk=later).outcome, 60, "A's run of the later")
        assert Operation.objects.get(pk=later).outcome == "completed"
        assert a.process.poll() is None, "A died on waking:\n" + "\n".join(a.err[-20:])
        assert written(op_id, session) == before, "A wrote after its lease was taken over"
    finally:
        a.stop()
        if b is not None:
            b.stop()
    print("A's stderr after waking:\n" + "\n".join(a.err[-10:]))

    records = operation_records(operation_id=op_id)
    dispatched = [
        r for r in records if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    ]
    assert len(dispatched) == 1
    assert [r.type for r in records].count("approval_decided") == 1
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    call_command("journal_check", stdout=open(os.devnull, "w"))  # noqa: SIM115
