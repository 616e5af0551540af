"""Start-up recovery: a restarted ``runagents`` after 100,000 finished and 1,000
unfinished operations, time to its first resumed step (<= 2 s) and until all 1,000 are
finished, and where its start-up time goes. docs/PERFORMANCE.md ("Recovery after a restart").

    .venv/bin/python bench/recovery.py                 # SQLite (+ PostgreSQL if named)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    Scratch,
    bench_main,
    describe_database,
    figure,
    load,
    pg_connect,
    scratch_django,
)


def dead_holder() -> str:
    """A runner identity of this host (and pid namespace: ``runner.HOST``, as a runner
    started here writes it) whose process is gone: pid_max is below 999999."""
    from jaiweb.agent.runner import HOST

    return f"{HOST}:999999:0"


UNFINISHED_PROMPT = "分镜列表"  # the offline director answers with list_panels: no approval
PROMPTS = [
    "画第{n}格：猪猪侠站在屋顶上看日落",
    "让波比生气一点，再画一格",
    "超人强用一招旋风腿，把怪兽踢飞",
    "这一格要下雨，气氛紧张一些",
]
KINDS = ("accepted", "provider_interrupted", "indeterminate_tool")

PROBE = """
import json, os, sys, time
t = [time.perf_counter()]
started = time.monotonic() - float(os.environ["BENCH_T0"])  # CLOCK_MONOTONIC: system-wide
import django
django.setup()
t.append(time.perf_counter())
from django.core.management import load_command_class
command = load_command_class("jaiweb.ops", "runagents")
t.append(time.perf_counter())
if command.requires_system_checks:  # what BaseCommand.execute does before handle()
    from django.core import checks
    checks.run_checks()
t.append(time.perf_counter())
from django.db import connection
connection.ensure_connection()
t.append(time.perf_counter())
from jaiweb.live.push import ChannelLayerSink
from jaiweb.agent.runner import Runner, RunnerConfig
runner = Runner(events=ChannelLayerSink(), config=RunnerConfig(workers=4))
t.append(time.perf_counter())
from django.utils import timezone
from jaiweb.agent.runner import holder_is_gone
from jaiweb.store.leases import leases_of_dead_holders_release
from jaiweb.store.models import Operation
released = leases_of_dead_holders_release(is_dead=holder_is_gone, now=timezone.now())
t.append(time.perf_counter())
Operation.objects.filter(outcome__isnull=True, parked_at__isnull=True).count()
Operation.objects.filter(outcome__isnull=True, parked_at__isnull=False).count()
t.append(time.perf_counter())
Operation.objects.filter(pk__in=released).update(lease_expires_at=sys.argv[1])  # put back
steps = [b - a for a, b in zip(t, t[1:])]
print(json.dumps({"start": started, "steps": steps, "released": len(released)}))
"""


# --- one backend, in its own process ------------------------------------------------


def run_backend(backend: str, args: argparse.Namespace) -> None:
    with scratch_django(backend, args, prefix="jaiweb-bench-recovery-") as scratch:
        _bench(backend, args, scratch)


def _bench(backend: str, args: argparse.Namespace, scratch: Scratch) -> None:
    print(f"  {describe_database(scratch.where)}")

    from jaiweb.agent.runner import holder_is_gone

    dead = dead_holder()
    gone = holder_is_gone(dead)
    print(f"  dead holder {dead!r}: holder_is_gone -> {gone}")
    if not gone:  # the runner would wait out the leases instead of taking them over
        raise SystemExit(f"bench/recovery.py: {dead!r} does not look like a dead runner here")
    built = _build(args)
    start_up = _probe_startup(built, args.runner_root)
    _measure(backend, args, built, scratch, start_up)


# --- the workload -------------------------------------------------------------------


def _build(args: argparse.Namespace) -> dict:
    """Sessions, finished operations and dead runners' unfinished ones, by bulk inserts."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction
    from django.db.models import Max
    from django.utils import timezone

    from jaiweb.store.chains import entry_rows
    from jaiweb.store.ids import new_id
    from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
    from journal.entries import AssistantMessage, MessageEntry, ToolCall, Usage, UserMessage
    from journal.ids import args_hash, idempotency_key, result_entry_id
    from journal.records import (
        ModelAttempted,
        OperationAccepted,
        OperationFinished,
        ToolDispatched,
        UsageSettled,
        record_to_dict,
    )

    started = time.perf_counter()
    owner = get_user_model().objects.create(username="bench")
    now = timezone.now()
    start = now - timedelta(days=1)
    lease_until = now + timedelta(hours=1)
    unfinished_ids: list[str] = []
    kinds = dict.fromkeys(KINDS, 0)
    totals = {"entries": 0, "records": 0}
    batch = 2000

    def session_rows(i: int):
        sid = new_id("s")
        entries, ops, records = [], [], []
        leaf = None

        def add(op_id: str, recs: list) -> None:
            records.extend(
                OperationRecord(
                    operation_id=op_id,
                    seq=seq,
                    type=r.type,
                    payload=record_to_dict(r),
                    timestamp=r.timestamp,
                )
                for seq, r in enumerate(recs, 1)
            )

        for k in range(args.per_session + 1):
            t = start + timedelta(seconds=60 * k, milliseconds=i)
            op_id, att = new_id("op"), new_id("att")
            last = k == args.per_session
            text = UNFINISHED_PROMPT if last else PROMPTS[k % len(PROMPTS)].format(n=k + 1)
            user = MessageEntry(
                id=new_id("e"), parent_id=leaf, timestamp=t, message=UserMessage(content=text)
            )
            entries.append(user)
            accepted = OperationAccepted(
                operation_id=op_id, timestamp=t, input_entry_id=user.id, start_leaf_id=leaf
            )
            leaf = user.id
            reply_id = new_id("e")
            attempted = ModelAttempted(
                operation_id=op_id,
                timestamp=t + timedelta(milliseconds=1),
                attempt_id=att,
                assistant_entry_id=reply_id,
                model="offline-director",
            )
            t_reply = t + timedelta(seconds=2)
            usage = Usage(input_tokens=40 + 12 * k, output_tokens=24)
            settled = UsageSettled(
                operation_id=op_id, timestamp=t_reply, attempt_id=att, usage=usage
            )
            if not last:
                reply = AssistantMessage(
                    content=f"[离线导演] 第{k + 1}格画好了，要不要再来一格？",
                    stop_reason="stop",
                    usage=usage,
                )
                entries.append(
                    MessageEntry(id=reply_id, parent_id=leaf, timestamp=t_reply, message=reply)
                )
                leaf = reply_id
                finished = OperationFinished(
                    operation_id=op_id, timestamp=t_reply, outcome="completed"
                )
                recs = [accepted, attempted, settled, finished]
                ops.append(
                    Operation(
                        id=op_id,
                        session_id=sid,
                        created_at=t,
                        record_count=len(recs),
                        outcome="completed",
                        finished_at=t_reply,
                        fencing=1,
                        attempts=1,
                    )
                )
                add(op_id, recs)
                continue
            kind = KINDS[i % len(KINDS)]
            kinds[kind] += 1
            recs = [accepted]
            if kind == "provider_interrupted":
                recs.append(attempted)
            elif kind == "indeterminate_tool":
                call = ToolCall(id="call_1", name="list_panels", arguments={})
                reply = AssistantMessage(
                    content="[离线导演] 看看已经画了哪些分镜。",
                    tool_calls=[call],
                    stop_reason="tool_use",
                    usage=usage,
                )
                entries.append(
                    MessageEntry(id=reply_id, parent_id=leaf, timestamp=t_reply, message=reply)
                )
                leaf = reply_id
                dispatched = ToolDispatched(
                    operation_id=op_id,
                    timestamp=t_reply + timedelta(milliseconds=1),
                    tool_call_id=call.id,
                    tool_name=call.name,
                    assistant_entry_id=reply_id,
                    args=call.arguments,
                    args_hash=args_hash(call.arguments),
                    result_entry_id=result_entry_id(reply_id, call.id),
                    idempotency_key=idempotency_key(op_id, call.id),
                    policy="read_only",
                )
                recs += [attempted, settled, dispatched]
            ops.append(
                Operation(
                    id=op_id,
                    session_id=sid,
                    created_at=t,
                    record_count=len(recs),
                    lease_owner=dead_holder(),
                    lease_expires_at=lease_until,
                    fencing=1,
                    attempts=1,
                )
            )
            add(op_id, recs)
            unfinished_ids.append(op_id)
        session = ComicSession(
            id=sid,
            owner=owner,
            title=f"第{i + 1}集",
            initial_app_state={"characters": {}, "permission_mode": "ask"},
            leaf_id=leaf,
            entry_count=len(entries),
            created_at=start - timedelta(minutes=1),
            updated_at=entries[-1].timestamp,
        )
        return session, ops, list(entry_rows(sid, entries)), records

    chunk = 25
    for first in range(0, args.sessions, chunk):
        sessions, ops, entries, records = [], [], [], []
        for i in range(first, min(first + chunk, args.sessions)):
            s, o, e, r = session_rows(i)
            sessions.append(s)
            ops += o
            entries += e
            records += r
        with transaction.atomic():
            ComicSession.objects.bulk_create(sessions, batch_size=batch)
            Operation.objects.bulk_create(ops, batch_size=batch)
            Entry.objects.bulk_create(entries, batch_size=batch)
            OperationRecord.objects.bulk_create(records, batch_size=batch)
        totals["entries"] += len(entries)
        totals["records"] += len(records)
    built = time.perf_counter() - started
    n_ops = args.sessions * (args.per_session + 1)
    print(
        f"  built {args.sessions:,} sessions, {n_ops:,} operations "
        f"({len(unfinished_ids):,} unfinished: "
        + ", ".join(f"{n} {k}" for k, n in kinds.items())
        + f"), {totals['entries']:,} entries, {totals['records']:,} records in {built:.1f} s"
    )
    if args.journal_check:
        started = time.perf_counter()
        from io import StringIO

        out = StringIO()
        call_command("journal_check", stdout=out)
        took = time.perf_counter() - started
        print(f"  journal_check: {out.getvalue().strip()} ({took:.1f} s; {load()})")
    max_id = OperationRecord.objects.aggregate(m=Max("id"))["m"]
    return {
        "unfinished": unfinished_ids,
        "lease_until": lease_until,
        "max_record_id": max_id,
        "records": totals["records"],
    }


# --- the measurement ----------------------------------------------------------------


class Poller:
    """The bench's own driver connection: new records, unfinished and parked operations."""

    def __init__(self, backend: str, scratch: Scratch, ids: list[str]) -> None:
        self.backend = backend
        if backend == "sqlite":
            import sqlite3

            self.conn = sqlite3.connect(scratch.db_file, isolation_level=None, timeout=20)
            self.mark = "?"
        else:
            self.conn = pg_connect(scratch.database_url, autocommit=True)
            self.mark = "%s"
        self.ids = ids
        from django.db import connection

        self.stamp = connection.ops.adapt_datetimefield_value  # as the ORM stores them

    def poll(self) -> tuple[int, int, int]:
        sql = (
            "SELECT (SELECT max(id) FROM store_operationrecord), "
            "(SELECT count(*) FROM store_operation WHERE outcome IS NULL AND parked_at IS NULL), "
            "(SELECT count(*) FROM store_operation WHERE outcome IS NULL "
            "AND parked_at IS NOT NULL)"
        )
        return self.conn.execute(sql).fetchone()

    def outcomes(self, base_id: int) -> tuple[dict[str, int], int]:
        marks = ", ".join([self.mark] * len(self.ids))
        rows = self.conn.execute(
            f"SELECT coalesce(outcome, 'unfinished'), count(*) FROM store_operation "
            f"WHERE id IN ({marks}) GROUP BY 1 ORDER BY 2 DESC",
            self.ids,
        ).fetchall()
        new = self.conn.execute(
            f"SELECT count(*) FROM store_operationrecord WHERE id > {self.mark}", [base_id]
        ).fetchone()[0]
        return dict(rows), new

    def redead(self, holder: str, until) -> None:
        """Every unfinished operation's lease back to a dead runner, as the bench left it."""
        self.conn.execute(
            f"UPDATE store_operation SET lease_owner = {self.mark}, lease_expires_at = "
            f"{self.mark} WHERE outcome IS NULL AND parked_at IS NULL",
            [holder, self.stamp(until)],
        )

    def close(self) -> None:
        self.conn.close()


def _run_runner(command, root, env, lines, stderr, poller, base_id, total, cap, first_only=False):
    """Start the runner at t0, poll until every operation is finished or ``cap`` s passed
    (``first_only``: until its first resumed step)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
    )

    def read() -> None:
        for line in proc.stdout:
            lines.append((time.monotonic() - t0, line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    first_step = all_done = None
    left = parked = total
    marks: dict[float, float] = {}
    try:
        while True:
            now = time.monotonic() - t0
            max_id, left, parked = poller.poll()
            if first_step is None and max_id is not None and max_id > base_id:
                first_step = now
                if first_only:
                    break
            done = total - left - parked
            for share in (0.25, 0.5, 0.75):
                if share not in marks and done >= share * total:
                    marks[share] = now
            if left == 0:
                all_done = now
                break
            if now > cap or proc.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(2)
    return first_step, all_done, left, parked, marks, now, proc.returncode


def _measure(
    backend: str, args: argparse.Namespace, built: dict, scratch: Scratch, start_up: float
) -> None:
    from django.db import connections

    connections.close_all()
    poller = Poller(backend, scratch, built["unfinished"])
    base_id = built["max_record_id"]
    total = len(built["unfinished"])
    env = {
        **os.environ,
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "DEBUG": "0",
        "SECRET_KEY": os.environ["SECRET_KEY"],
        "DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"],
        "PYTHONUNBUFFERED": "1",  # the recovery line is timed when written, not when flushed
    }
    lines: list[tuple[float, str]] = []
    command = [sys.executable, "manage.py", "runagents", "--workers", str(args.workers)]
    roots = [args.runner_root, *(args.compare or [])]
    if args.trials:
        base_id = _trials(args, roots, command, env, poller, built, total)
    with tempfile.TemporaryFile(mode="w+") as stderr:
        result = _run_runner(
            command, args.runner_root, env, lines, stderr, poller, base_id, total, args.cap
        )
        stderr.seek(0)
        errors = [ln.rstrip() for ln in stderr if ln.strip()]
    first_step, all_done, left, parked, marks, end, returncode = result
    outcomes, new_records = poller.outcomes(base_id)
    poller.close()

    recovery = next((t for t, line in lines if line.startswith("recovery:")), None)
    print(f"  runagents --workers {args.workers} (offline director), t0 = just before Popen:")
    for t, line in lines:
        print(f"    [{t:6.3f} s] {line}")
    for line in errors[:12]:
        print(f"    stderr: {line[:160]}")
    if len(errors) > 12:
        print(f"    stderr: ... {len(errors) - 12} more line(s)")

    def at(value: float | None) -> str:
        return "never" if value is None else f"{value:.3f} s"

    print(f"  time to the 'recovery:' line:   {at(recovery)}")
    verdict = "met" if first_step is not None and first_step <= 2.0 else "MISSED"
    print(
        f"  time to the first resumed step: {at(first_step)}   (target <= 2 s) {verdict}; {load()}"
    )
    if first_step is not None:
        figure(
            f"recovery: first resumed step ({total:,} unfinished operations)",
            first_step,
            start_up,
            unit="s",
            floor_name="a process doing what runagents does before its first claim",
            backend=backend,
        )
    quarter = ", ".join(f"{int(s * 100)}% at {t:.2f} s" for s, t in sorted(marks.items()))
    if all_done is not None:
        print(f"  all {total:,} unfinished operations finished at {all_done:.3f} s ({quarter})")
    else:
        print(
            f"  after {end:.1f} s: {total - left - parked:,} of {total:,} "
            f"finished, {left:,} still unfinished ({quarter or 'no milestone'})"
            + ("" if returncode in (None, -15, 0) else f"; runner exit {returncode}")
        )
    if parked:
        print(f"  parked in the recovery inbox: {parked:,}")
    print(f"  outcomes of the resumed operations: {outcomes}")
    finished = total - left - parked
    if first_step is not None and finished:
        span = (all_done if all_done is not None else end) - first_step
        print(
            f"  throughput from the first step: {finished / span:.0f} operations/s, "
            f"{new_records / span:.0f} records/s ({new_records:,} records appended)"
        )


def _trials(args, roots, command, env, poller, built, total) -> int:
    """Each trial starts each root's runagents on the same data, the leases of a dead
    runner put back before each, and stops it at its first resumed step; the roots take
    turns, so they share the box's load. Returns the last record id after them."""
    seen: dict[str, list[tuple[float | None, float | None]]] = {root: [] for root in roots}
    loads = []
    for _ in range(args.trials):
        for root in roots:
            poller.redead(dead_holder(), built["lease_until"])
            base_id = poller.poll()[0]
            lines: list[tuple[float, str]] = []
            with tempfile.TemporaryFile(mode="w+") as stderr:
                first, *_ = _run_runner(
                    command, root, env, lines, stderr, poller, base_id, total, 20, True
                )
            recovery = next((t for t, line in lines if line.startswith("recovery:")), None)
            seen[root].append((recovery, first))
            loads.append(os.getloadavg()[0])
    print(
        f"  {args.trials} trial(s), each root's runagents on the same data in turn, stopped at "
        f"its first resumed step (load {min(loads):.2f}-{max(loads):.2f} over them):"
    )
    for root, values in seen.items():
        firsts = [f for _, f in values if f is not None]
        recs = [r for r, _ in values if r is not None]
        med = statistics.median(firsts) if firsts else float("nan")
        print(
            f"    {root}: first resumed step median {med:.3f} s "
            f"({', '.join(f'{f:.2f}' for f in firsts)}); 'recovery:' line median "
            f"{statistics.median(recs) if recs else float('nan'):.3f} s"
        )
    poller.redead(dead_holder(), built["lease_until"])
    return poller.poll()[0]


def _probe_startup(built: dict, root: str) -> float:
    """What runagents does before its first claim, timed step by step in a process of its own;
    the dead holder's leases are put back after, so the runner then finds them as left."""
    from django.db import connections

    connections.close_all()
    t0 = time.monotonic()
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, built["lease_until"].isoformat()],
        cwd=root,
        env={**os.environ, "BENCH_T0": repr(t0)},
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise RuntimeError(f"the start-up probe failed:\n{probe.stderr.strip()}")
    out = probe.stdout
    got = json.loads(out.strip().splitlines()[-1])
    names = [
        "django.setup()",
        "import runagents (runner, loop, tools, channels)",
        "system checks (when the command asks for them)",
        "connect",
        "Runner()",
        f"takeover: release {got['released']:,} dead leases (1 SELECT + 1 UPDATE)",
        "takeover: 2 counts",
    ]
    total = got["start"] + sum(got["steps"])
    print("  start-up probe (a process doing what runagents does before its first claim):")
    print(f"    {'interpreter start':<70} {got['start'] * 1e3:6.0f} ms")
    for name, took in zip(names, got["steps"], strict=True):
        print(f"    {name:<70} {took * 1e3:6.0f} ms")
    print(f"    {'in all':<70} {total * 1e3:6.0f} ms")
    return total


# --- the default run: one child per backend -------------------------------------------


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--per-session", type=int, default=100, help="finished operations")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds to wait for the end")
    parser.add_argument(
        "--no-journal-check",
        dest="journal_check",
        action="store_false",
        help="do not check the built data first (a minute at full size)",
    )
    parser.add_argument(
        "--runner-root",
        default=str(ROOT),
        help="the checkout whose manage.py runagents runs (default: this one)",
    )
    parser.add_argument(
        "--compare",
        action="append",
        help="another checkout whose runagents takes turns with it in the trials",
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=0,
        help="first-step trials per checkout before the full run (they take turns)",
    )


def main() -> None:
    bench_main(
        __file__,
        __doc__,
        _options,
        run_backend,
        workload=lambda a: (
            f"{a.sessions:,} sessions x {a.per_session} finished operations (+1 unfinished "
            f"each, left by a dead runner of this host: accepted / provider_interrupted / "
            f"indeterminate list_panels); runagents --workers {a.workers}"
        ),
    )


if __name__ == "__main__":
    main()
