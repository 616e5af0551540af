"""The agent loop with the offline director and the local renderer: time per tool step,
the share of journal writes, and those writes beside the same rows committed by the raw
driver (the floor); panels per second of the renderer and of the render service. What
each figure means: docs/PERFORMANCE.md ("Journal writes of one operation").

    .venv/bin/python bench/agent_loop.py --prompts 20            # SQLite (+ PostgreSQL if named)
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
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
    short_sql,
)

PROMPT = "第{n}回合：猪猪侠吃下超级棒棒糖，上擂台对决超人强！"
INITIAL_STATE = {
    "characters": {"猪猪侠": {"buff": "无", "skill": "无", "mood": "平静"}},
    "permission_mode": "auto",
}
SCENES = ["屋顶上", "雨夜里", "擂台中央", "城市夜景前", "学校操场", "山顶日出"]
COMPONENTS = ("provider", "tools", "writes", "reads")


# --- measuring ------------------------------------------------------------------------


class Meter:
    """Time per component and per phase of an operation; only the outermost wrapper counts."""

    def __init__(self) -> None:
        self.phase = "turn"  # "model" (a model step), "tool" (a tool step), "turn" (the rest)
        self.busy = False
        self.acc: dict[tuple[str, str], float] = defaultdict(float)
        self.phase_time: dict[str, float] = defaultdict(float)
        self.stream_window = 0.0
        self.in_write = False
        self.writes: list[tuple[str, float, float]] = []  # (label, seconds, of it COMMIT)
        self.rows: list[tuple] = []  # each write's entries and records
        self.commit = 0.0
        self.detail: dict[str, list[float]] = defaultdict(list)  # per read function
        self.label: str | None = None  # the run_append under way, for the commit count

    def reset(self) -> None:
        self.detail.clear()
        self.acc.clear()
        self.phase_time.clear()
        self.stream_window = 0.0
        self.writes.clear()
        self.rows.clear()

    def timed(self, component: str, fn, detail: str | None = None):
        def wrapper(*args, **kwargs):
            if self.busy:
                return fn(*args, **kwargs)
            self.busy = True
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                self.acc[(self.phase, component)] += spent
                if detail:
                    self.detail[detail].append(spent)
                self.busy = False

        return wrapper

    def in_phase(self, phase: str, fn):
        def wrapper(*args, **kwargs):
            outer, self.phase = self.phase, phase
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.phase_time[phase] += time.perf_counter() - start
                self.phase = outer

        return wrapper

    def total(self, component: str, phase: str | None = None) -> float:
        return sum(v for (p, c), v in self.acc.items() if c == component and phase in (None, p))


class TimedProvider:
    """The provider as the loop sees it, with the time inside each ``next()`` on its stream."""

    def __init__(self, inner, meter: Meter) -> None:
        self.inner, self.meter = inner, meter
        self.name, self.offline = inner.name, inner.offline

    def stream(self, messages, tools, **hints):
        gen = self.inner.stream(messages, tools, **hints)  # language, app_state: as given
        meter = self.meter
        first = None
        while True:
            start = time.perf_counter()
            first = first or start
            try:
                event = next(gen)
            except StopIteration:
                end = time.perf_counter()
                meter.acc[(meter.phase, "provider")] += end - start
                meter.stream_window += end - first
                return
            meter.acc[(meter.phase, "provider")] += time.perf_counter() - start
            yield event

    def summarize(self, messages):
        return self.meter.timed("provider", self.inner.summarize)(messages)


def write_label(records, entries) -> str:
    if records:
        return "+".join(r.type for r in records)
    kinds = []
    for e in entries:
        if e.type != "message":
            kinds.append(e.type)
        elif e.message.role == "tool_result":
            kinds.append(f"result:{e.message.tool_name}")
        else:
            kinds.append(e.message.role)
    return "entries " + "+".join(kinds)


# The loop's journal reads, by the names it imports them under (both checkouts' names).
READS = ("operation_reading", "operation_records", "recovery_evidence", "branch_get")


def _recording_sink():
    """An event sink that keeps what a run emitted (the product has none: it is a test's)."""
    from jaiweb.agent.events import Numbered

    class RecordingSink(Numbered):
        def __init__(self) -> None:
            super().__init__()
            self.events: list = []

        def emit(self, session_id, event) -> None:
            self.events.append((session_id, self.number(session_id, event)))

    return RecordingSink


def instrument(meter: Meter, connection):
    """Wrap the loop module's journal calls and the connection's COMMIT; returns an undo."""
    from jaiweb.agent import loop
    from jaiweb.agent.loop import OperationRun

    try:  # the loop as an executor of journal.steps (writes through agent/writer.py)
        from jaiweb.agent import writer as writes_module
    except ImportError:  # the loop before it (1ffa6b8 and earlier): one class did it all
        writes_module = loop
    reads = [n for n in READS if hasattr(loop, n)]  # this checkout's loop's own reads
    saved = {name: getattr(loop, name) for name in reads}
    real_append = writes_module.run_append

    def run_append(**kwargs):
        if meter.busy:
            return real_append(**kwargs)
        meter.busy, meter.in_write, meter.commit = True, True, 0.0
        records, entries = kwargs.get("records", ()), kwargs.get("entries", ())
        label = meter.label = write_label(records, entries)
        start = time.perf_counter()
        try:
            return real_append(**kwargs)
        finally:
            spent = time.perf_counter() - start
            meter.acc[(meter.phase, "writes")] += spent
            meter.label = None
            meter.writes.append((label, spent, meter.commit))
            meter.rows.append((*entries, *records))  # for the floor, made into JSON there
            meter.busy = meter.in_write = False

    writes_module.run_append = run_append
    for name in reads:
        setattr(loop, name, meter.timed("reads", saved[name], detail=name))
    if hasattr(OperationRun, "_model_step"):
        phases = [
            (OperationRun, "_model_step", "model"),
            (OperationRun, "_handle_call", "tool"),
            (OperationRun, "_dispatch_again", "tool"),
        ]
    elif hasattr(loop, "ModelTurn"):  # the executor's steps as ModelTurn and ToolCalls
        phases = [
            (loop.ModelTurn, "ask", "model"),
            (loop.ToolCalls, "handle", "tool"),
            (loop.ToolCalls, "dispatch_again", "tool"),
        ]
    else:  # the executor calls the step functions it imported
        phases = [
            (loop, "model_call", "model"),
            (loop, "handle_call", "tool"),
            (loop, "dispatch_again", "tool"),
        ]
    saved_methods = [(owner, name, getattr(owner, name)) for owner, name, _ in phases]
    for (owner, name, phase), (_, _, fn) in zip(phases, saved_methods, strict=True):
        setattr(owner, name, meter.in_phase(phase, fn))

    connection.ensure_connection()
    real_commit = connection._commit

    def timed_commit():
        start = time.perf_counter()
        try:
            return real_commit()
        finally:
            if meter.in_write:
                meter.commit += time.perf_counter() - start

    connection._commit = timed_commit  # this connection only

    def undo():
        writes_module.run_append = real_append
        for name, fn in saved.items():
            setattr(loop, name, fn)
        for owner, name, fn in saved_methods:
            setattr(owner, name, fn)
        del connection._commit

    return undo


# --- counting transactions --------------------------------------------------------------

_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)
_WRITE_IN_WITH = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.I)
_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", re.I)


def is_write(sql: str) -> bool:
    """Whether a statement changes rows (a CTE that updates or inserts counts)."""
    if _WRITE.match(sql):
        return True
    return sql.lstrip()[:4].upper() == "WITH" and bool(_WRITE_IN_WITH.search(sql))


def statement_label(sql: str) -> str:
    """``UPDATE store_operation``, ``SELECT store_entry``: the verb and the first table."""
    words = sql.split(None, 1)
    verb = words[0].upper() if words else "?"
    if verb == "WITH":
        verb = "WITH…" + ("write" if is_write(sql) else "SELECT")
    table = _TABLE.search(sql)
    return f"{verb} {table.group(1) if table else ''}".strip()


class Transactions:
    """Every transaction the bench's own connection ends, by what it did and where.

    Fed every statement the process sends (SQLite: the driver's trace callback, which sees
    ``BEGIN``, ``COMMIT`` and the statements sqlite3 runs itself; PostgreSQL: Django's
    ``execute_wrapper`` on every cursor, and the connection's ``_commit``/``_rollback``).
    A statement outside a transaction is one of its own (autocommit). A transaction is a
    *write* when one of its statements changes rows, else a *read*.
    """

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.open = False
        self.writes = False
        self.label = ""
        self.phase = ""
        self.done: list[tuple[str, str, str, bool]] = []  # (phase, write|read, label, COMMIT)

    def statement(self, sql: str, *, in_transaction: bool) -> None:
        if not in_transaction:  # autocommitted: its own transaction, no COMMIT sent
            kind = "write" if is_write(sql) else "read"
            self.done.append((self.meter.phase, kind, self._label(sql), False))
            return
        if not self.open:
            self.open, self.writes, self.phase = True, False, self.meter.phase
            self.label = self._label(sql)
        if not self.writes and is_write(sql):
            self.writes, self.label = True, self._label(sql)

    def _label(self, sql: str) -> str:
        return self.meter.label or statement_label(sql)

    def end(self, committed: bool) -> None:
        if self.open:  # an empty transaction sends nothing to the server
            kind = "write" if self.writes else "read"
            self.done.append((self.phase, kind, self.label, committed))
        self.open = False

    def take(self) -> list[tuple[str, str, str, bool]]:
        out, self.done = self.done, []
        return out

    def install(self, connection):
        """Start counting on this connection; returns an undo."""
        connection.ensure_connection()
        if connection.vendor == "sqlite":
            raw = connection.connection

            def trace(sql: str) -> None:
                head = sql.lstrip()[:16].upper()
                if head.startswith("BEGIN"):
                    self.end(True)  # never open here; a BEGIN starts a fresh one
                    self.open, self.writes, self.phase = True, False, self.meter.phase
                    self.label = ""
                elif head.startswith(("COMMIT", "END")):
                    self.end(True)
                elif head.startswith("ROLLBACK") and not head.startswith("ROLLBACK TO"):
                    self.end(False)
                elif not head.startswith(("SAVEPOINT", "RELEASE", "ROLLBACK", "--")):
                    if self.open and not self.label:
                        self.label = self._label(sql)
                    self.statement(sql, in_transaction=self.open)

            raw.set_trace_callback(trace)
            return lambda: raw.set_trace_callback(None)

        def spy(execute, sql, params, many, context):
            self.statement(sql, in_transaction=not connection.get_autocommit())
            return execute(sql, params, many, context)

        real_commit, real_rollback = connection._commit, connection._rollback

        def commit():
            try:
                return real_commit()
            finally:
                self.end(True)

        def rollback():
            try:
                return real_rollback()
            finally:
                self.end(False)

        connection.execute_wrappers.append(spy)
        connection._commit, connection._rollback = commit, rollback

        def undo():
            connection.execute_wrappers.remove(spy)
            connection._commit, connection._rollback = real_commit, real_rollback

        return undo


def timed_tools(tools: dict, meter: Meter) -> dict:
    for tool in tools.values():
        tool.run = meter.timed("tools", tool.run)  # an instance attribute: this run's tools only
    return tools


# --- one backend, in its own process ----------------------------------------------------


def run_backend(backend: str, args: argparse.Namespace) -> None:
    with scratch_django(
        backend,
        args,
        prefix="jaiweb-bench-loop-",
        env={
            "JAIWEB_IMAGE_BACKEND": "local",
            "JAIWEB_LLM_MODEL": "",  # the offline director
            "JAIWEB_FEED_URL": "",
        },
    ) as scratch:
        _bench(backend, args, scratch)


def _bench(backend: str, args: argparse.Namespace, scratch: Scratch) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from jaiweb.agent.loop import LoopConfig, OperationRun
    from jaiweb.agent.providers.offline import OfflineDirector
    from jaiweb.agent.tools import default_tools
    from jaiweb.render.services import credits_grant
    from jaiweb.store.leases import operation_claim
    from jaiweb.store.services import operation_accept, session_create

    RecordingSink = _recording_sink()

    owner = get_user_model().objects.create(username="bench")
    credits_grant(user=owner, amount=10 * (args.runs * args.prompts + 10) + 10_000)
    connection.ensure_connection()
    print(f"  {describe_database(scratch.where)}")

    config = LoopConfig()
    meter = Meter()
    provider = TimedProvider(OfflineDirector(), meter)
    events = RecordingSink()
    counter = iter(range(1, 10**9))

    def one_operation(session) -> dict:
        """Accept, claim and run one prompt; the figures of its run."""
        n = next(counter)
        text = PROMPT.format(n=n) + f"场景：{SCENES[n % len(SCENES)]}。"
        transactions.take()
        start = time.perf_counter()
        meter.phase = "accept"
        op_id = operation_accept(session_id=session.id, text=text).operation_id
        meter.phase = "claim"
        lease = operation_claim(
            owner="bench-runner",
            now=timezone.now(),
            lease_seconds=config.lease_seconds,
            operation_id=op_id,
        )
        meter.phase = "turn"
        assert lease is not None
        ready, cpu0 = time.perf_counter(), time.process_time()
        meter.reset()
        before = len(events.events)
        status = OperationRun(
            lease=lease,
            provider=provider,
            tools=timed_tools(default_tools(), meter),
            events=events,
            config=config,
        ).run()
        end, cpu1 = time.perf_counter(), time.process_time()
        out = {
            "transactions": transactions.take(),
            "cpu": cpu1 - cpu0,
            "accept+claim": ready - start,
            "total": end - ready,
            "status": status,
            "events": len(events.events) - before,
            "tool_steps": sum(1 for _, e in events.events[before:] if e["type"] == "tool_started"),
            "compactions": sum(1 for _, e in events.events[before:] if e["type"] == "compaction"),
            "writes_n": len(meter.writes),
            "window": meter.stream_window,
            "write_calls": list(meter.writes),
            "write_rows": list(meter.rows),
            "phase_time": dict(meter.phase_time),
            "read_calls": {k: list(v) for k, v in meter.detail.items()},
            "floor": bare.run(meter.rows),
        }
        for c in COMPONENTS:
            out[c] = meter.total(c)
            for phase in ("model", "tool", "turn"):
                out[f"{phase}.{c}"] = meter.total(c, phase)
        return out

    bare = BareCommits(backend, scratch)
    undo = instrument(meter, connection)
    transactions = Transactions(meter)
    uncount = transactions.install(connection)
    try:
        warm = session_create(owner=owner, title="warm-up", initial_app_state=INITIAL_STATE)
        one_operation(warm)
        runs: list[list[dict]] = []
        for r in range(args.runs):
            session = session_create(
                owner=owner, title=f"bench run {r}", initial_app_state=INITIAL_STATE
            )
            runs.append([one_operation(session) for _ in range(args.prompts)])
    finally:
        uncount()
        undo()

    ops = [op for run in runs for op in run]
    bad = [op["status"] for op in ops if op["status"] != "finished"]
    compactions = sum(op["compactions"] for op in ops)
    tool_steps = statistics.fmean(op["tool_steps"] for op in ops)
    events_per_op = statistics.fmean(op["events"] for op in ops)

    def per_op(key: str) -> float:
        """Median over runs of the run's mean per operation, in ms."""
        return statistics.median(statistics.fmean(op[key] for op in run) for run in runs) * 1e3

    total = per_op("total")
    parts = {c: per_op(c) for c in COMPONENTS}
    rest = total - sum(parts.values())
    share = parts["writes"] / total
    print(
        f"  agent loop: {args.runs} runs x {args.prompts} operations (+1 warm-up), each 2 model "
        f"calls + 2 tool steps (set_character_state, generate_image); {len(ops)} ops, "
        f"{len(bad)} not finished, {tool_steps:g} tool steps/op, "
        f"{compactions} compactions; RecordingSink, {events_per_op:.0f} events/op; "
        f"LoopConfig() defaults (delta_interval {config.delta_interval_seconds}s, "
        f"context_budget {config.context_budget}, lease {config.lease_seconds}s)"
    )
    head = (
        f"    {'ms':<34}{'total':>8}{'provider':>10}{'tools':>8}{'j.writes':>10}"
        f"{'j.reads':>9}{'rest':>8}{'writes':>8}"
    )
    print(head)

    def row(name: str, tot: float, comp: dict[str, float]) -> None:
        other = tot - sum(comp.values())
        print(
            f"    {name:<34}{tot:8.2f}{comp['provider']:10.2f}{comp['tools']:8.2f}"
            f"{comp['writes']:10.2f}{comp['reads']:9.2f}{other:8.2f}"
            f"{comp['writes'] / tot:8.0%}"
        )

    row("per operation", total, parts)
    row("per tool step (operation / 2)", total / 2, {c: v / 2 for c, v in parts.items()})
    phase_names = {
        "model": "  in model steps (2/op)",
        "tool": "  in tool steps (2/op)",
        "turn": "  in loop turns (reads, finish)",
    }
    for phase, name in phase_names.items():
        comp = {c: per_op(f"{phase}.{c}") for c in COMPONENTS}
        if phase == "turn":
            ptot = total - sum(
                statistics.median(
                    statistics.fmean(op["phase_time"].get(p, 0.0) for op in run) for run in runs
                )
                * 1e3
                for p in ("model", "tool")
            )
        else:
            ptot = (
                statistics.median(
                    statistics.fmean(op["phase_time"].get(phase, 0.0) for op in run) for run in runs
                )
                * 1e3
            )
        row(name, ptot, comp)
    op_totals = sorted(op["total"] * 1e3 for op in ops)
    print(
        f"    CPU per operation (this process, every thread; steadier than wall time on a "
        f"busy box): {per_op('cpu'):.2f} ms, {per_op('cpu') / total:.0%} of its wall time"
    )
    print(
        f"    operation total over all {len(ops)} ops: median {statistics.median(op_totals):.2f} "
        f"ms, p90 {op_totals[int(len(op_totals) * 0.9)]:.2f} ms; first/last op of a run: "
        f"{statistics.median(r[0]['total'] for r in runs) * 1e3:.2f} / "
        f"{statistics.median(r[-1]['total'] for r in runs) * 1e3:.2f} ms"
    )
    print(
        f"    rest = the loop itself ({rest:.2f} ms/op: Operation load, session refresh, "
        f"derive_messages, pydantic, events); stream window (provider + the loop's handling "
        f"of the deltas) {per_op('window'):.2f} ms/op; outside the loop: accept + claim "
        f"{per_op('accept+claim'):.2f} ms/op"
    )
    reads = ", ".join(
        f"{name} {len(times) / len(ops):g}x {statistics.median(times) * 1e3:.3f} ms"
        for name in READS
        for times in [[t for op in ops for t in op["read_calls"].get(name, [])]]
        if times
    )
    print(f"    journal reads per op (calls x median ms): {reads}")
    verdict = "met" if share <= 0.25 else "MISSED"
    print(f"    journal writes / tool step: {share:.0%}   (target <= 25% on SQLite) {verdict}")
    floor = per_op("floor")
    calls = statistics.fmean(len(op["write_rows"]) for op in ops)
    rows = statistics.fmean(sum(map(len, op["write_rows"])) for op in ops)
    print(
        f"    journal writes per operation: {parts['writes']:.2f} ms in {calls:g} transactions "
        f"({rows:g} rows); the same rows through the raw driver, one transaction of bare "
        f"INSERTs per write, right after each operation (the floor): {floor:.2f} ms = "
        f"{parts['writes'] / floor:.2f}x; {load()}"
    )
    figure(
        "journal writes of one operation",
        parts["writes"],
        floor,
        unit="ms",
        floor_name="the same rows as bare INSERTs",
        backend=backend,
    )
    print(
        f"    the whole operation ({total:.2f} ms) / its bare commits: {total / floor:.1f}x; "
        f"the loop's own work besides provider, tools and journal ({rest:.2f} ms): "
        f"{rest / total:.0%} of it"
    )
    _commits(ops)
    if share > 0.25:
        _where_writes_go(backend, connection, ops, one_operation, session_create, owner, meter)
    bare.close()

    _render_bench(args, owner)


PHASES = ("accept", "claim", "model", "tool", "turn")


def _commits(ops: list[dict]) -> None:
    """The transactions of an operation: writes and reads, by phase, and which they were."""
    n = len(ops)

    def count(kind: str, phase: str | None = None, committed: bool | None = None) -> float:
        return (
            sum(
                1
                for op in ops
                for p, k, _label, c in op["transactions"]
                if k == kind and phase in (None, p) and committed in (None, c)
            )
            / n
        )

    for kind in ("write", "read"):
        by_phase = ", ".join(
            f"{phase} {count(kind, phase):g}" for phase in PHASES if count(kind, phase)
        )
        print(
            f"    {kind} transactions per operation: {count(kind):g} ({by_phase}); of them "
            f"ended by a COMMIT {count(kind, committed=True):g}, autocommitted single "
            f"statements {count(kind, committed=False):g}"
        )
    writes = count("write")
    verdict = "met" if writes / 2 <= 6 else "MISSED"
    print(
        f"    commits per tool step (write transactions per operation / 2): {writes / 2:g}"
        f"   (target <= 6) {verdict}; read transactions per tool step: {count('read') / 2:g}; "
        f"{load()}"
    )
    labels: dict[tuple[str, str], int] = defaultdict(int)
    for op in ops:
        for phase, kind, label, _c in op["transactions"]:
            if kind == "write":
                labels[(phase, label)] += 1
    print("    the write transactions of an operation (phase: what, per operation):")
    for (phase, label), times in sorted(labels.items(), key=lambda kv: PHASES.index(kv[0][0])):
        print(f"      {phase:<7}{times / n:5g} x {label}")


class BareCommits:
    """The floor of an operation's writes: the rows they wrote, as bare INSERTs, one
    transaction a write, on a table of their own (SQLite: a file beside the bench's, WAL,
    synchronous=FULL; PostgreSQL: the bench's database), right after the operation, so
    both see the same disk and the same load."""

    def __init__(self, backend: str, scratch: Scratch) -> None:
        ddl = (
            "CREATE TABLE raw_row (op TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, "
            "payload {json} NOT NULL, PRIMARY KEY (op, seq))"
        )
        if backend == "sqlite":
            import sqlite3

            self.conn = sqlite3.connect(scratch.tmp / "raw.sqlite3", isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute(ddl.format(json="TEXT"))
            self.sql, self.begin = "INSERT INTO raw_row VALUES (?, ?, ?, ?)", "BEGIN IMMEDIATE"
        else:
            self.conn = pg_connect(scratch.database_url, autocommit=True)
            self.conn.execute(ddl.format(json="JSONB"))
            self.sql = "INSERT INTO raw_row VALUES (%s, %s, %s, %s::jsonb)"
            self.begin = "BEGIN"
        self.ops = 0

    def run(self, writes: list[tuple]) -> float:
        """Seconds to write one operation's rows (their JSON made first, not timed)."""
        self.ops += 1
        conn, sql, op, seq = self.conn, self.sql, f"o{self.ops}", 0
        writes = [[(x.type, x.model_dump_json()) for x in write] for write in writes]
        start = time.perf_counter()
        for write in writes:
            conn.execute(self.begin)
            for kind, payload in write:
                seq += 1
                conn.execute(sql, (op, seq, kind, payload))
            conn.execute("COMMIT")
        return time.perf_counter() - start

    def close(self) -> None:
        self.conn.close()


def _where_writes_go(backend, connection, ops, one_operation, session_create, owner, meter):
    from jaiweb.agent import loop

    by_label: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for op in ops:
        for label, spent, commit in op["write_calls"]:
            by_label[label].append((spent, commit))
    n_ops = len(ops)
    calls = sum(len(v) for v in by_label.values())
    all_times = [s for v in by_label.values() for s, _ in v]
    print(
        f"  where the write time goes: {calls / n_ops:g} run_append calls/op, median "
        f"{statistics.median(all_times) * 1e3:.3f} ms each (COMMIT median "
        f"{statistics.median(c for v in by_label.values() for _, c in v) * 1e3:.3f} ms):"
    )

    # the statements of each kind of write, from one more operation traced (not timed)
    statements: dict[str, list[str]] = {}
    try:
        from jaiweb.agent import writer as writes_module
    except ImportError:  # before the executor (1ffa6b8 and earlier)
        writes_module = loop
    real = writes_module.run_append
    if backend == "sqlite":
        raw = connection.connection

        def traced(**kwargs):
            seen: list[str] = []
            raw.set_trace_callback(seen.append)
            try:
                return real(**kwargs)
            finally:
                raw.set_trace_callback(None)
                label = write_label(kwargs.get("records", ()), kwargs.get("entries", ()))
                statements.setdefault(label, seen)

    else:

        def traced(**kwargs):
            seen: list[str] = []

            def spy(execute, sql, params, many, context):
                seen.append(sql)
                return execute(sql, params, many, context)

            try:
                with connection.execute_wrapper(spy):
                    return real(**kwargs)
            finally:
                label = write_label(kwargs.get("records", ()), kwargs.get("entries", ()))
                statements.setdefault(label, [*seen, "(COMMIT by the driver)"])

    writes_module.run_append = traced
    try:
        one_operation(session_create(owner=owner, title="traced", initial_app_state=INITIAL_STATE))
    finally:
        writes_module.run_append = real

    print(
        f"    {'run_append of':<42}{'calls/op':>9}{'median ms':>11}{'COMMIT ms':>11}"
        f"{'other ms':>10}{'stmts':>7}"
    )
    for label, values in sorted(by_label.items(), key=lambda kv: -sum(s for s, _ in kv[1])):
        spent = statistics.median(s for s, _ in values)
        commit = statistics.median(c for _, c in values)
        print(
            f"    {label:<42}{len(values) / n_ops:9.2f}{spent * 1e3:11.3f}{commit * 1e3:11.3f}"
            f"{(spent - commit) * 1e3:10.3f}{len(statements.get(label, [])):7d}"
        )
    if backend == "sqlite":
        print("    (the SQLite trace repeats a statement once for each trigger it fires)")
    for label, sqls in statements.items():
        print(f"    statements of one '{label}':")
        for sql in sqls:
            print(f"      {short_sql(sql)}")


def _render_bench(args: argparse.Namespace, owner) -> None:
    from jaiweb.agent.state import AppState
    from jaiweb.render.backends.local import LocalRenderer
    from jaiweb.render.services import render_request

    characters = AppState.of(INITIAL_STATE).as_json()["characters"]
    characters["猪猪侠"] = {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}

    def params(i: int) -> dict:  # a seed per panel, as generate_image gives each call's key
        prompt = PROMPT.format(n=i) + SCENES[i % len(SCENES)]
        return {"prompt": prompt, "characters": characters, "seed": i}

    renderer = LocalRenderer()
    n, runs = args.renders, args.render_runs
    alone = []
    for r in range(runs):
        batch = [params(r * n + i) for i in range(n)]
        start = time.perf_counter()
        for p in batch:
            renderer.render(p)
        alone.append(time.perf_counter() - start)
    t_alone = statistics.median(alone)

    m = args.service_renders
    served, cpu = [], []
    for r in range(runs):
        batch = [(f"bench-{r}-{i}", params(10**6 + r * m + i)) for i in range(m)]
        start, started_cpu = time.perf_counter(), time.process_time()
        for key, p in batch:
            result = render_request(user=owner, key=key, params=p)
            assert not result.replayed
        served.append(time.perf_counter() - start)
        cpu.append(time.process_time() - started_cpu)
    t_served = statistics.median(served)
    size = len(renderer.render(params(0)).data)
    print(f"  panels/s, median of {runs} runs (SVG of {size:,} B, 1 character):")
    print(
        f"    LocalRenderer().render alone, {n} a run:  {n / t_alone:8.0f} panels/s "
        f"({t_alone / n * 1e3:.3f} ms each)"
    )
    print(
        f"    render_request, fresh key, {m} a run:     {m / t_served:8.0f} panels/s "
        f"({t_served / m * 1e3:.3f} ms each: job + render + file fsync + charge commit)"
    )
    print(
        f"    render_request's CPU, of this process:   {statistics.median(cpu) / m * 1e3:8.3f} ms "
        f"each (runs {', '.join(f'{c / m * 1e3:.3f}' for c in cpu)})"
    )


# --- the default run: one child per backend ---------------------------------------------


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--renders", type=int, default=500)
    parser.add_argument("--service-renders", type=int, default=100)
    parser.add_argument("--render-runs", type=int, default=5)


def main() -> None:
    bench_main(
        __file__,
        __doc__,
        _options,
        run_backend,
        workload=lambda a: (
            f"{a.runs} runs x {a.prompts} prompts (offline director, local renderer); "
            f"renderer {a.renders} panels x {a.render_runs} runs; render_request "
            f"{a.service_renders} panels x {a.render_runs} runs; medians of repeated runs"
        ),
    )


if __name__ == "__main__":
    main()
