"""The Django store on SQLite and PostgreSQL: a durable append beside a raw driver
INSERT + COMMIT, the active branch at depth 10,000 of a 100,000-entry session, bytes on
disk per entry. What each figure means: docs/PERFORMANCE.md ("Durable append").

    .venv/bin/python bench/store.py              # SQLite on disk, SQLite on tmpfs, PostgreSQL
    JAIWEB_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/jaiweb_bench_store \
        .venv/bin/python bench/store.py --parts appends
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    Pass,
    Scratch,
    bench_main,
    default_passes,
    describe_database,
    figure,
    fs_type,
    load,
    pg_connect,
    ratio_line,
    scratch_django,
    short_sql,
    timed,
)
from journal.entries import (  # noqa: E402
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    entry_to_dict,
)

T0 = datetime(2026, 11, 29, tzinfo=UTC)

PROMPTS = [
    "画第{n}格：猪猪侠站在屋顶上看日落",
    "让波比生气一点，再画一格",
    "超人强用一招旋风腿，把怪兽踢飞",
    "这一格要下雨，气氛紧张一些",
    "把菲菲加进来，她刚从学校回来",
    "镜头拉远，画城市的夜景",
]
CHARACTERS = ["猪猪侠", "波比", "超人强", "菲菲"]


def db_datetime(value):
    """A datetime as the ORM itself would store it, for the raw SQL this bench sends."""
    from django.db import connection

    return connection.ops.adapt_datetimefield_value(value)


def realistic(i: int, eid: str, parent: str | None, ts: datetime):
    """The i-th entry of a realistic 9-entry cycle; an app_state is the 8th of each cycle."""
    n = i // 9 + 1
    pos = i % 9
    if pos in (0, 4):
        text = PROMPTS[(i // 4) % len(PROMPTS)].format(n=n)
        msg = UserMessage(content=text)
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    if pos == 1:
        call = ToolCall(
            id=f"call_{i}",
            name="generate_image",
            arguments={
                "prompt": f"猪猪侠站在屋顶上，夕阳，漫画风格，第{n}格",
                "style": "manga",
                "panel": n,
                "size": "1024x1024",
            },
        )
        msg = AssistantMessage(
            content=f"好的，我来画第{n}格。",
            tool_calls=[call],
            stop_reason="tool_use",
            usage=Usage(input_tokens=1800 + i % 500, output_tokens=64),
        )
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    if pos == 2:
        msg = ToolResultMessage(
            tool_call_id=f"call_{i - 1}",
            tool_name="generate_image",
            content=f"第{n}格已生成。",
            details={
                "image": f"/media/panels/s_3f2a9c0d1e/{n}.png",
                "seed": 1_000_003 * i % 2**31,
                "credits_spent": 4,
                "idempotency_key": f"k_{i:032x}",
            },
        )
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    if pos in (3, 8):
        msg = AssistantMessage(
            content=(
                f"第{n}格画好了：猪猪侠站在屋顶上，夕阳把他的影子拉得很长。"
                "要不要给他加一个「勇气」buff，让下一格更有气势？"
            ),
            stop_reason="stop",
            usage=Usage(input_tokens=2100 + i % 500, output_tokens=120),
        )
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    if pos == 5:
        call = ToolCall(
            id=f"call_{i}",
            name="update_character",
            arguments={"name": "猪猪侠", "buff": f"勇气+{n % 5}", "skill": "超级棒棒糖"},
        )
        msg = AssistantMessage(
            content="给猪猪侠加上勇气。",
            tool_calls=[call],
            stop_reason="tool_use",
            usage=Usage(input_tokens=2000 + i % 500, output_tokens=40),
        )
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    if pos == 6:
        msg = ToolResultMessage(
            tool_call_id=f"call_{i - 1}",
            tool_name="update_character",
            content=f"猪猪侠：buff=勇气+{n % 5}",
        )
        return MessageEntry(id=eid, parent_id=parent, timestamp=ts, message=msg)
    value = {
        "characters": {
            "猪猪侠": {"buff": f"勇气+{n % 5}", "skill": "超级棒棒糖", "mood": "兴奋"},
            "波比": {"buff": "智慧", "skill": "发明", "mood": "专注"},
            "超人强": {"buff": "力量", "skill": "旋风腿", "mood": "骄傲"},
        },
        "permission_mode": "ask",
        "style": "manga",
    }
    return AppStateEntry(id=eid, parent_id=parent, timestamp=ts, value=value)


def chain_entries(prefix: str, count: int) -> list:
    """``count`` realistic entries on one line from the root."""
    out, parent = [], None
    for i in range(count):
        entry = realistic(i, f"{prefix}{i}", parent, T0 + timedelta(milliseconds=i))
        out.append(entry)
        parent = entry.id
    return out


def big_session_entries(depth: int, side_branches: int, side_len: int) -> list:
    """Main line m0..m{depth-1} (the leaf), then side branches each opened by a branch entry."""
    entries = chain_entries("m", depth)
    leaf = entries[-1].id
    ts = T0 + timedelta(days=1)
    for k in range(side_branches):
        fork = f"m{(k * 7919) % depth}"
        branch = BranchEntry(id=f"b{k}", parent_id=fork, timestamp=ts, from_id=leaf)
        entries.append(branch)
        parent = branch.id
        for j in range(side_len - 1):
            entry = realistic(j, f"s{k}_{j}", parent, ts)
            entries.append(entry)
            parent = entry.id
        leaf = parent
    return entries


# --- raw driver floors ------------------------------------------------------------


def raw_rows(entries: list, session_id: str) -> list[tuple]:
    return [
        (
            session_id,
            pos + 1,
            e.id,
            e.parent_id,
            e.type,
            json.dumps(entry_to_dict(e), ensure_ascii=False),
            e.timestamp,
            1,  # chain: the workload is one straight line
            pos,  # chain_pos
        )
        for pos, e in enumerate(entries)
    ]


class RawSqlite:
    """stdlib sqlite3 on a copy of store_entry's DDL in its own file, WAL + synchronous=FULL."""

    def __init__(self, path: Path, ddl: list[str]) -> None:
        self.conn = sqlite3.connect(path)  # legacy isolation: implicit BEGIN before the INSERT
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        for stmt in ddl:
            self.conn.execute(stmt)
        self.conn.commit()

    def synchronous_commit(self, on: bool) -> None:
        raise NotImplementedError("SQLite's fsync-free figure is the tmpfs pass")

    def run(self, rows: list[tuple]) -> None:
        conn = self.conn
        sql = (
            "INSERT INTO raw_entry (session_id, seq, entry_id, parent_id, type, payload, "
            "timestamp, chain, chain_pos) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        for sid, seq, eid, parent, type_, payload, ts, chain, pos in rows:
            conn.execute(sql, (sid, seq, eid, parent, type_, payload, ts.isoformat(), chain, pos))
            conn.commit()

    def close(self) -> None:
        self.conn.close()


class RawPostgres:
    """psycopg on ``raw_entry (LIKE store_entry INCLUDING ALL)``: one INSERT + COMMIT a row."""

    def __init__(self, url: str) -> None:
        self.conn = pg_connect(url)
        self.conn.execute("CREATE TABLE IF NOT EXISTS raw_entry (LIKE store_entry INCLUDING ALL)")
        self.conn.commit()

    def synchronous_commit(self, on: bool) -> None:
        self.conn.execute(f"SET synchronous_commit TO {'on' if on else 'off'}")
        self.conn.commit()

    def run(self, rows: list[tuple]) -> None:
        conn = self.conn
        sql = (
            "INSERT INTO raw_entry (session_id, seq, entry_id, parent_id, type, payload, "
            "timestamp, chain, chain_pos) VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s)"
        )
        for row in rows:
            conn.execute(sql, row)
            conn.commit()

    def close(self) -> None:
        self.conn.close()


# --- one backend, in its own process ------------------------------------------------


def run_backend(backend: str, args: argparse.Namespace) -> None:
    with scratch_django(backend, args, prefix="jaiweb-bench-store-") as scratch:
        _bench(backend, args, scratch)


def _bench(backend: str, args: argparse.Namespace, scratch: Scratch) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from jaiweb.store.services import entry_append, session_create

    owner = get_user_model().objects.create(username="bench")
    connection.ensure_connection()
    print(f"  {describe_database(scratch.where)}")
    parts = set(args.parts.split(","))

    if "appends" in parts:
        _appends(backend, args, scratch, owner)
        # what one entry_append sends to the database
        session = session_create(owner=owner, title="bench statements")
        first, second = chain_entries("q", 2)
        entry_append(session_id=session.id, entries=[first], expected_leaf_id=None)
        statements = _statements_of(
            backend,
            connection,
            lambda: entry_append(
                session_id=session.id, entries=[second], expected_leaf_id=first.id
            ),
        )
        print(f"  SQL statements sent by one entry_append: {len(statements)}")
        for sql in statements:
            print(f"    {short_sql(sql)}")
    if "checks" in parts and backend == "sqlite":
        _check_ladder(args, owner)
    if "loads" in parts:
        _loads(backend, args, scratch, owner)


def _appends(backend: str, args: argparse.Namespace, scratch: Scratch, owner) -> None:
    """Durable appends, the product beside the raw driver floor, runs alternating."""
    from django.db import connection

    from jaiweb.store.services import entry_append, session_create

    n, runs = args.appends, args.runs
    if backend == "sqlite":
        with connection.cursor() as cur:
            ddl = [
                r[0].replace('"store_entry"', '"raw_entry"')
                for r in cur.execute(
                    "SELECT sql FROM sqlite_master WHERE tbl_name = 'store_entry' "
                    "AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type = 'index'"
                ).fetchall()
            ]
        raw = RawSqlite(scratch.tmp / "raw.sqlite3", ddl)
        raw_name = f"stdlib sqlite3, INSERT + commit() (a file beside it, {fs_type(scratch.tmp)})"
        fs = fs_type(scratch.tmp)
        bound = "CPU-bound: an fsync on tmpfs waits for no disk" if fs == "tmpfs" else "fsync-bound"
        modes = [(f"WAL, synchronous=FULL on {fs} ({bound})", True)]
    else:
        raw = RawPostgres(scratch.database_url)
        raw_name = "psycopg, INSERT + commit()"
        modes = [
            ("synchronous_commit=on (fsync-bound: COMMIT waits for the WAL fsync)", True),
            ("synchronous_commit=off on both connections (CPU-bound: no fsync wait)", False),
        ]

    def product_run(entries: list) -> float:
        session = session_create(owner=owner, title="bench appends")
        leaf = None
        start = time.perf_counter()
        for e in entries:
            entry_append(session_id=session.id, entries=[e], expected_leaf_id=leaf)
            leaf = e.id
        return time.perf_counter() - start

    sql_alone = SqlAlone(backend, connection, scratch.database_url)
    # Warm-up: the statements prepared, and on PostgreSQL the tables' statistics, as
    # autovacuum keeps them on a live database. (Planned on empty tables, the append's
    # prepared statement can keep a plan that reads the session whole: up to 2x slower.)
    # SQLite gets no ANALYZE: the product never runs one there.
    warm = chain_entries("warm_", 300)
    raw.run(raw_rows(warm, "s_raw_warm"))
    product_run(warm)
    sql_alone.run(session_create(owner=owner, title="warm").id, chain_entries("warm2_", 300))
    if backend == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE")

    ratio = 0.0
    for m, (mode, durable) in enumerate(modes):
        if backend == "postgresql":
            raw.synchronous_commit(durable)
            sql_alone.synchronous_commit(durable)
            with connection.cursor() as cur:
                cur.execute(f"SET synchronous_commit TO {'on' if durable else 'off'}")
        product_times, raw_times, sql_times = [], [], []
        for r in range(runs):
            entries = chain_entries(f"m{m}r{r}_", n)
            rows = raw_rows(entries, f"s_raw{m}_{r}")
            start = time.perf_counter()
            raw.run(rows)
            raw_times.append(time.perf_counter() - start)
            product_times.append(product_run(entries))
            session = session_create(owner=owner, title="bench sql alone")
            sql_times.append(sql_alone.run(session.id, chain_entries(f"m{m}r{r}q_", n)))
        t_product, t_raw = statistics.median(product_times), statistics.median(raw_times)
        t_sql = statistics.median(sql_times)
        ratio = max(ratio, t_product / t_raw)
        print(f"  appends, {mode}: {n:,} one-entry transactions x {runs} runs, medians:")
        print(
            "    "
            + ratio_line(
                "entry_append / raw " + raw_name, t_product / n * 1e3, t_raw / n * 1e3, 1.5
            )
        )
        figure(
            f"durable append, {mode}",
            t_product / n * 1e3,
            t_raw / n * 1e3,
            unit="ms",
            floor_name="raw " + raw_name,
            backend=backend,
            target=1.5,
        )
        per_run = ", ".join(f"{p / r:.2f}x" for p, r in zip(product_times, raw_times, strict=True))
        print(f"    ratio per run: {per_run}")
        print(
            f"    of which the append's own SQL ({sql_alone.what}, parameters made "
            f"beforehand): {t_sql / n * 1e3:.3f} ms = {t_sql / t_raw:.2f}x the floor; "
            f"Python around it {(t_product - t_sql) / n * 1e3:.3f} ms"
        )
    raw.close()
    sql_alone.close()
    if backend == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SET synchronous_commit TO on")
    if ratio > 1.5 or args.profile:
        _where_time_goes(backend, connection, owner, entry_append, session_create)


# What each of an append's checks costs on SQLite, statement by statement: from the bare
# INSERT (the floor's work, on the product's own table and connection) to what ships.
_RUNGS = (
    ("bare INSERT, seq given (the floor's work, this table)", "bare"),
    (
        "+ the leaf check: INSERT … SELECT when the last entry is the expected leaf",
        "leaf",
    ),
    ("+ the parent exists and the entry's chain (first child or a new chain)", "parent"),
    ("+ no unfinished operation (require_idle)", "idle"),
    ("what ships: UPDATE the session row (leaf, count, every check) + INSERT … SELECT", "shipped"),
)
_LAST = (
    "(SELECT seq, entry_id FROM store_entry WHERE session_id = :sid ORDER BY seq DESC LIMIT 1) l"
)
_COLUMNS = "session_id, seq, entry_id, parent_id, type, payload, timestamp, chain, chain_pos"
_FIRST = (
    "NOT EXISTS (SELECT 1 FROM store_entry c WHERE c.session_id = :sid AND c.parent_id = :parent)"
)
_RUNG_SQL = {
    "bare": f"INSERT INTO store_entry ({_COLUMNS}) VALUES "
    "(:sid, :seq, :id, :parent, :type, :payload, :ts, 0, :seq)",
    "leaf": f"INSERT INTO store_entry ({_COLUMNS}) SELECT :sid, l.seq + 1, :id, :parent, "
    f":type, :payload, :ts, 0, l.seq + 1 FROM {_LAST} WHERE l.entry_id = :leaf",
    "parent": f"INSERT INTO store_entry ({_COLUMNS}) SELECT :sid, l.seq + 1, :id, :parent, "
    f":type, :payload, :ts, CASE WHEN {_FIRST} THEN p.chain ELSE l.seq + 1 END, "
    f"CASE WHEN {_FIRST} THEN p.chain_pos + 1 ELSE 0 END FROM {_LAST}, store_entry p "
    "WHERE l.entry_id = :leaf AND p.session_id = :sid AND p.entry_id = :parent",
}
_RUNG_SQL["idle"] = _RUNG_SQL["parent"] + (
    " AND NOT EXISTS (SELECT 1 FROM store_operation o WHERE o.session_id = :sid"
    " AND o.outcome IS NULL)"
)


def _check_ladder(args: argparse.Namespace, owner) -> None:
    """Each check's cost on SQLite: the rungs take turns, run by run, on one connection."""
    from django.db import connection
    from django.utils import timezone

    from jaiweb.store import appends
    from jaiweb.store.services import entry_append, session_create

    connection.ensure_connection()
    conn = connection.connection  # the product's own file, connection and tables
    n, runs = args.appends, args.runs
    now = db_datetime(timezone.now())

    def run(rung: str, tag: str) -> float:
        session = session_create(owner=owner, title=f"ladder {tag}")
        root, *entries = chain_entries(tag, n + 1)
        first = entry_append(session_id=session.id, entries=[root], expected_leaf_id=None)
        params, leaf = [], root.id
        for seq, e in enumerate(entries, start=first + 1):
            params.append(
                {
                    "sid": session.id,
                    "id": e.id,
                    "parent": e.parent_id,
                    "leaf": leaf,
                    "now": now,
                    "no": False,
                    "seq": seq,
                    "type": e.type,
                    "payload": e.model_dump_json(),
                    "ts": db_datetime(e.timestamp),
                }
            )
            leaf = e.id
        start = time.perf_counter()
        if rung == "shipped":
            move, insert = appends._sqlite_sql(False, True)
            for p in params:
                conn.execute("BEGIN IMMEDIATE")
                p["seq"] = conn.execute(move, p).fetchone()[0]
                conn.execute(insert, p)
                conn.execute("COMMIT")
        else:
            sql = _RUNG_SQL[rung]
            for p in params:
                conn.execute("BEGIN IMMEDIATE")
                if conn.execute(sql, p).rowcount != 1:
                    raise RuntimeError(f"rung {rung}: a check refused an append it should take")
                conn.execute("COMMIT")
        return time.perf_counter() - start

    for rung, _ in ((r, None) for _, r in _RUNGS):
        run(rung, f"w{rung}_")  # statements prepared, pages cached
    times: dict[str, list[float]] = {r: [] for _, r in _RUNGS}
    for k in range(runs):
        for _, rung in _RUNGS:
            times[rung].append(run(rung, f"k{k}{rung}_"))
    bare = statistics.median(times["bare"]) / n
    print(
        f"  what each check costs (SQLite, the product's connection and tables, "
        f"{n:,} one-entry transactions x {runs} runs, rungs taking turns; medians):"
    )
    for label, rung in _RUNGS:
        each = statistics.median(times[rung]) / n
        print(f"    {each * 1e3:.3f} ms = {each / bare:.2f}x the bare INSERT   {label}")
    print(f"    {load()}")


class SqlAlone:
    """The statements one ``entry_append`` sends, sent straight through the driver: the
    append minus its Python (checks of the batch, JSON and timestamps, the wrappers)."""

    def __init__(self, backend: str, connection, url: str) -> None:
        self.backend = backend
        if backend == "sqlite":
            connection.ensure_connection()
            self.conn = connection.connection  # the product's own connection and file
            self.what = "BEGIN IMMEDIATE, UPDATE, INSERT, COMMIT"
        else:
            self.conn = pg_connect(url, autocommit=True, prepare_threshold=5)
            self.what = "one WITH … UPDATE … INSERT in autocommit, prepared"

    def synchronous_commit(self, on: bool) -> None:
        self.conn.execute(f"SET synchronous_commit TO {'on' if on else 'off'}")

    def run(self, session_id: str, entries: list) -> float:
        from django.utils import timezone

        from jaiweb.store import appends

        now = db_datetime(timezone.now())
        params, leaf = [], None
        for e in entries:
            params.append(
                {
                    "sid": session_id,
                    "id": e.id,
                    "parent": e.parent_id,
                    "leaf": leaf,
                    "now": now,
                    "no": False,
                    "type": e.type,
                    "payload": e.model_dump_json(),
                    "ts": db_datetime(e.timestamp),
                }
            )
            leaf = e.id
        conn = self.conn
        start = time.perf_counter()
        if self.backend == "sqlite":
            for p in params:
                move, insert = appends._sqlite_sql(p["parent"] is None, True)
                conn.execute("BEGIN IMMEDIATE")
                p["seq"] = conn.execute(move, p).fetchone()[0]
                conn.execute(insert, p)
                conn.execute("COMMIT")
        else:
            for p in params:
                conn.execute(appends._postgres_sql(p["parent"] is None, True), p).fetchone()
        return time.perf_counter() - start

    def close(self) -> None:
        if self.backend != "sqlite":
            self.conn.close()


def _loads(backend: str, args: argparse.Namespace, scratch: Scratch, owner) -> None:
    from django.db import connection, transaction

    from jaiweb.store.chains import entry_rows
    from jaiweb.store.entry_cache import parsed_entries
    from jaiweb.store.models import ComicSession, Entry
    from jaiweb.store.selectors import (
        app_state_at,
        branch_get,
        branch_rows,
        session_get,
    )
    from jaiweb.store.services import session_create

    db_file = scratch.db_file
    size_before = _sqlite_bytes(connection, db_file) if backend == "sqlite" else 0
    depth, sides, side_len = args.depth, args.side_branches, 10
    t = time.perf_counter()
    big = big_session_entries(depth, sides, side_len)
    session = session_create(owner=owner, title="bench 100k")
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, big), batch_size=2000)
        ComicSession.objects.filter(pk=session.id).update(
            leaf_id=f"m{depth - 1}", entry_count=len(big)
        )
    if backend == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE store_entry")  # what autovacuum would have done by now
    build = time.perf_counter() - t
    print(
        f"  built a {len(big):,}-entry session in {build:.1f} s (bulk insert): main line "
        f"{depth:,} deep to the leaf, {sides:,} side branches of {side_len}"
    )
    session = session_get(session_id=session.id)
    depth_rows = len(branch_rows(session=session))

    def cold_rows_and_state():
        parsed_entries.clear()  # a process that never read this session before
        rows = branch_rows(session=session)
        return rows, app_state_at(session=session, rows=rows)

    def cold_all_parsed():
        parsed_entries.clear()
        return branch_get(session=session)

    t_cold = timed(cold_rows_and_state, args.repeat)
    t_cold_all = timed(cold_all_parsed, args.repeat)
    t_parse = _parse_share(cold_all_parsed, args.repeat)
    branch_get(session=session)  # now every entry of the path is parsed in this process
    t_warm = timed(
        lambda: app_state_at(session=session, rows=branch_rows(session=session)), args.repeat
    )
    t_warm_all = timed(lambda: branch_get(session=session), args.repeat)
    t_at = timed(lambda: app_state_at(session=session), args.repeat)
    print(f"  loads at depth {depth_rows:,}, median of {args.repeat}   (target <= 50 ms):")
    print(
        f"    active branch + app state, cold (rows with ids and types, entries parsed when "
        f"touched; the app state parses one): {t_cold * 1e3:8.2f} ms"
    )
    print(
        f"    active branch + app state, warm (entries parsed before in this process): "
        f"{t_warm * 1e3:8.2f} ms"
    )
    print(
        f"    every entry of the branch parsed (branch_get), cold: {t_cold_all * 1e3:8.2f} ms  "
        f"(pydantic {t_parse * 1e3:.2f} ms of it); warm: {t_warm_all * 1e3:.2f} ms"
    )
    print(f"    app_state_at (walks up to the nearest app_state): {t_at * 1e3:.3f} ms")

    # 3. bytes on disk per entry -------------------------------------------------------
    kinds: dict[str, int] = {}
    for e in big:
        key = e.type if e.type != "message" else e.message.role
        kinds[key] = kinds.get(key, 0) + 1
    mix = ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items()))
    payload = sum(len(json.dumps(entry_to_dict(e), ensure_ascii=False).encode()) for e in big)
    total_entries = Entry.objects.count()
    if backend == "sqlite":
        size = _sqlite_bytes(connection, db_file)
        print(
            f"  bytes on disk per entry: {size / total_entries:.0f}  "
            f"(file + WAL after a checkpoint {size:,} B / {total_entries:,} entries); "
            f"the 100k build alone: {(size - size_before) / len(big):.0f} B/entry"
        )
    else:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT pg_total_relation_size('store_entry'), pg_relation_size('store_entry'),"
                " pg_indexes_size('store_entry')"
            )
            size, heap, indexes = cur.fetchone()
        print(
            f"  bytes on disk per entry: {size / total_entries:.0f}  "
            f"(pg_total_relation_size('store_entry') {size:,} B / {total_entries:,} entries; "
            f"heap {heap:,}, indexes {indexes:,})"
        )
    print(f"    mix of the 100k session: {mix}; JSON payload {payload / len(big):.0f} B/entry")


def _where_time_goes(backend: str, connection, owner, entry_append, session_create) -> None:
    """300 appends timed statement by statement, then the same under cProfile."""
    count = 300
    labels: dict[str, list[float]] = {}

    def label(sql: str) -> str:
        words = re.sub(r'["`]', "", sql).split()
        verb = words[0].upper()
        if verb == "SELECT":
            table = words[words.index("FROM") + 1] if "FROM" in words else "?"
            return f"SELECT {table}" + (" FOR UPDATE" if "UPDATE" in words[-3:] else "")
        if verb == "INSERT":
            return f"INSERT {words[2]}"
        if verb == "UPDATE":
            return f"UPDATE {words[1]}"
        return " ".join(words[:2]) if verb == "BEGIN" else verb

    def timing(execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            labels.setdefault(label(sql), []).append(time.perf_counter() - t)

    def appends(session, prefix: str) -> float:
        entries = chain_entries(prefix, count)
        leaf = None
        start = time.perf_counter()
        for e in entries:
            entry_append(session_id=session.id, entries=[e], expected_leaf_id=leaf)
            leaf = e.id
        return time.perf_counter() - start

    commit_times: list[float] = []
    real_commit = connection._commit

    def timed_commit():
        t = time.perf_counter()
        try:
            return real_commit()
        finally:
            commit_times.append(time.perf_counter() - t)

    session = session_create(owner=owner, title="bench where the time goes")
    connection._commit = timed_commit  # this connection only, undone below
    try:
        with connection.execute_wrapper(timing):
            total = appends(session, "w")
    finally:
        del connection._commit
    per = total / count * 1e3
    print(f"  where the time goes: {count} appends, {per:.3f} ms each, per append:")
    if not labels and not commit_times:
        print(
            "    (the append runs on the driver's own connection, past Django's wrappers, so"
            " its statements are not timed one by one here: see the profile below)"
        )
    else:
        parts = [*labels.items(), ("COMMIT (the durable write)", commit_times)]
        accounted = 0.0
        for name, times in parts:
            ms = sum(times) / count * 1e3
            accounted += ms
            print(f"    {name:<42} {ms:7.3f} ms  ({len(times) / count:g} per append)")
        print(f"    {'Python (Django ORM, pydantic, the service)':<42} {per - accounted:7.3f} ms")

    session = session_create(owner=owner, title="bench profile")
    prof = cProfile.Profile()
    prof.enable()
    appends(session, "p")
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(14)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    head = next(i for i, ln in enumerate(lines) if "ncalls" in ln)
    total_line = next(ln for ln in lines if "function calls" in ln).strip()
    print(f"  cProfile of {count} appends ({total_line}), top 14 by cumulative time:")
    for ln in lines[head : head + 15]:
        print(f"    {ln.replace(str(ROOT) + '/', '').replace(sys.prefix + '/', '')[:150]}")


def _parse_share(fn, repeat: int) -> float:
    """Median time ``rows.parse_raw`` takes inside ``fn`` (wrapped in this process only)."""
    from jaiweb.store import rows as stored

    real = stored.parse_raw
    spent: list[float] = []

    def timed_parse(rows):
        t = time.perf_counter()
        try:
            return real(rows)
        finally:
            spent.append(time.perf_counter() - t)

    stored.parse_raw = timed_parse
    try:
        for _ in range(repeat):
            fn()
    finally:
        stored.parse_raw = real
    return statistics.median(spent)


def _sqlite_bytes(connection, db_file: Path) -> int:
    with connection.cursor() as cur:
        cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = db_file.with_name(db_file.name + "-wal")
    return db_file.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _statements_of(backend: str, connection, fn) -> list[str]:
    """Every statement the driver sends during ``fn``, BEGIN and COMMIT included."""
    raw = connection.connection
    if backend == "sqlite":
        seen: list[str] = []
        raw.set_trace_callback(seen.append)
        try:
            fn()
        finally:
            raw.set_trace_callback(None)
        return seen
    from psycopg import pq

    with tempfile.TemporaryFile() as trace:
        raw.pgconn.trace(trace.fileno())
        raw.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            fn()
        finally:
            raw.pgconn.untrace()
        trace.seek(0)
        lines = trace.read().decode(errors="replace").splitlines()
    out, parsed = [], ""
    for line in lines:
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] != "F":
            continue
        if parts[2] == "Query":
            out.append(parts[3].strip())
        elif parts[2] == "Parse":  # the text arrives once; later runs are Bind + Execute
            parsed = parts[3].strip()
        elif parts[2] == "Execute":
            out.append(parsed or "(a statement prepared earlier on this connection)")
            parsed = ""
    return out


# --- the default run: one child per backend -------------------------------------------


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--parts", default="appends,loads", help="appends,checks,loads")
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--depth", type=int, default=10_000)
    parser.add_argument("--side-branches", type=int, default=9_000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument(
        "--profile", action="store_true", help="where an append's time goes, even when met"
    )
    parser.add_argument(
        "--tmpfs", default="/dev/shm", help="a tmpfs directory for the fsync-free SQLite pass"
    )


def _passes(args: argparse.Namespace) -> list[Pass]:
    passes = default_passes(args)
    wanted = [part for part in ("appends", "checks") if part in args.parts.split(",")]
    if args.tmpfs and Path(args.tmpfs).is_dir() and wanted:
        tmpfs = Pass(
            f"sqlite on {args.tmpfs} ({fs_type(args.tmpfs)}): no fsync, CPU-bound",
            "sqlite",
            (("sqlite_dir", args.tmpfs), ("parts", ",".join(wanted))),
        )
        passes.insert(1, tmpfs)
    return passes


def main() -> None:
    bench_main(
        __file__,
        __doc__,
        _options,
        run_backend,
        workload=lambda a: (
            f"{a.appends:,} appends x {a.runs} runs per side, alternating; a "
            f"{a.depth + a.side_branches * 10:,}-entry session, leaf at depth {a.depth:,}; "
            f"medians; parts {a.parts}"
        ),
        passes=_passes,
    )


if __name__ == "__main__":
    main()
