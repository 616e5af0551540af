"""The hot reads use the index meant for them, on SQLite and on PostgreSQL.

Each test runs the product's own code, records the statements it sends, and asks the
database for their plans (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` on PostgreSQL).
Every scan of ``store_entry`` or ``store_operation`` must be an index search, and the index
must be one whose leading columns the query pins (the children of a node through
``(session_id, parent_id, …)``, never ``(session_id, seq)`` with a filter): a change that
silently falls back to reading a whole session, or the whole table, fails here.

SQLite has no statistics here (nothing runs ``ANALYZE``, in the tests or in production),
so its plan depends on the schema and the query only: these tests assert the plan it will
use. PostgreSQL chooses by cost, and for a small session reading it whole is cheaper: the
path read hash-joins its chain ranges against a sequential scan of the session up to a few
thousand entries (at 6,000 still), and searches ``entry_chain_position`` at 20,000. So on
PostgreSQL the tree these tests read has 23,000 entries, with statistics (``ANALYZE``), and
the plans asserted are the ones a session of that size gets.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from jaiweb.store.leases import operation_claim
from jaiweb.store.models import Operation
from jaiweb.store.selectors import (
    branch_counts,
    branch_rows,
    children_rows,
    entries_after,
    latest_images,
    panel_sessions,
    tool_results_at,
)
from jaiweb.store.services import operation_accept, session_delete
from jaiweb.store.variants import line_end, prompt_siblings
from jaiweb.studio.tree import active_path_view, fork_view, path_page
from tests.support.trees import big_tree_create

pytestmark = pytest.mark.django_db

TABLES = ("store_entry", "store_operation")
# Index columns, as tuples of their leading columns, that each kind of read may use.
BY_ID = ("session_id", "entry_id")
CHILDREN = ("session_id", "parent_id")
CHAIN = ("session_id", "chain", "chain_pos")
BY_SEQ = ("session_id", "seq")
TOOL_RESULT = ("session_id", "<expr>")  # entry_tool_result: the results' tool name
UNFINISHED = ("<unfinished operations>",)
PK = ("id",)


def analyze() -> None:
    """PostgreSQL: statistics, as autovacuum keeps them on a live table."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE store_entry, store_operation")


@pytest.fixture(scope="module")
def tree(django_db_setup, django_db_blocker):
    """A main line with side branches, committed once for the module and deleted at its end.

    On PostgreSQL 20,000 entries on the line and 300 side branches of 10: the size at which
    its planner searches a session rather than reading it whole (see the module's doc). On
    SQLite, whose plans do not depend on the size, 120 and 12 of 4.
    """
    big = connection.vendor == "postgresql"
    with django_db_blocker.unblock():
        owner = get_user_model().objects.create_user("plan-owner")
        session = big_tree_create(
            owner=owner,
            depth=20_000 if big else 120,
            forks=300 if big else 12,
            fork_len=10 if big else 4,
        )
        analyze()
    yield session
    with django_db_blocker.unblock():
        session_delete(session_id=session.id)
        owner.delete()


def statements(call: Callable[[], object]) -> list[tuple[str, Any]]:
    """The statements ``call`` sends that read the journal tables, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def record(execute, sql, params, many, context):
        if any(table in sql for table in TABLES):
            seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        call()
    assert seen, "the call sent no statement on the journal tables"
    return seen


def _index_columns(name: str) -> tuple[str, tuple[str, ...]]:
    """(table, columns) of an index, read from the database's catalogue (an expression is
    "<expr>"); an index of the
    unfinished operations only (``WHERE outcome IS NULL``) counts as UNFINISHED, whatever
    its columns: any walk of it reads only them."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT tbl_name, sql FROM sqlite_master WHERE name = %s", [name])
            table, predicate = cursor.fetchone()  # no SQL for an autoindex
            cursor.execute(f'PRAGMA index_info("{name}")')
            columns = tuple(row[2] or "<expr>" for row in sorted(cursor.fetchall()))
        else:
            cursor.execute(
                "SELECT t.relname, array_agg(coalesce(a.attname, '<expr>') ORDER BY k.n), "
                "pg_get_expr(x.indpred, x.indrelid) "
                "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_class t ON t.oid = x.indrelid "
                "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) "
                "LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
                "WHERE i.relname = %s GROUP BY t.relname, x.indpred, x.indrelid",
                [name],
            )
            table, columns, predicate = cursor.fetchone()
    if re.search(r"WHERE \(?\"?outcome\"? IS NULL\)?$", predicate or "", re.I) or re.fullmatch(
        r"\(?outcome IS NULL\)?", predicate or ""
    ):
        return table, UNFINISHED
    if re.search(r"\(?\"?chain_pos\"? = 0\)?$", predicate or ""):
        return table, (*columns, "chain_pos")  # the chain index, its heads only
    return table, tuple(columns)


def plan(sql: str, params: Any) -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
            return [row[3] for row in cursor.fetchall()]
        cursor.execute("EXPLAIN " + sql, params)
        return [row[0] for row in cursor.fetchall()]


def scans(lines: list[str], sql: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """A plan's reads of the journal tables: (table, index columns), None for no index."""
    found: list[tuple[str, tuple[str, ...] | None]] = []
    if connection.vendor == "sqlite":
        ctes = set(re.findall(r"(?:WITH RECURSIVE|,)\s*(\w+)\s*\(", sql))
        for line in lines:
            m = re.match(r"(SCAN|SEARCH) (\w+)(?: USING (?:COVERING )?INDEX (\w+))?", line)
            if m is None or m[2] in ctes or "VIRTUAL TABLE" in line:  # json_each
                continue
            if m[3] is None:
                found.append((m[2], None))
            elif m[1] == "SCAN" and _index_columns(m[3])[1] != UNFINISHED:
                found.append((_index_columns(m[3])[0], None))  # a walk of a whole index
            else:
                found.append(_index_columns(m[3]))
        return [(t, c) for t, c in found if t in TABLES or c is None]
    for line in lines:
        m = re.search(r"Seq Scan on (\w+)", line)
        if m and m[1] in TABLES:
            found.append((m[1], None))
        m = re.search(r"Index (?:Only )?Scan (?:Backward )?using (\w+) on (\w+)", line)
        if m and m[2] in TABLES:
            found.append(_index_columns(m[1]))
        m = re.search(r"Bitmap Index Scan on (\w+)", line)
        if m:
            table, columns = _index_columns(m[1])
            if table in TABLES:
                found.append((table, columns))
    return found


def assert_plans(call: Callable[[], object], allowed: set[tuple[str, ...]], must: tuple[str, ...]):
    """Every read of the journal tables by ``call`` uses an index that starts with one of
    ``allowed``, and at least one uses ``must`` (so the test cannot pass by reading nothing)."""
    used: list[tuple[str, ...]] = []
    for sql, params in statements(call):
        # A read of a node's children goes through entry_children, whatever else the call does.
        by_parent = re.search(r'\bparent_id"?\s+(=|IN\b|IS\b)', sql) is not None
        lines = plan(sql, params)
        shown = "\n".join([sql.strip(), "-- plan:", *lines])
        for table, columns in scans(lines, sql):
            # The tree's "waiting for an admin" badge also reads the session's parked
            # operations; these tests are about the journal's entries (PostgreSQL scans a
            # near-empty operations table whatever its indexes), the claim test about those.
            if table.startswith("store_operation") and UNFINISHED not in allowed:
                continue
            assert columns is not None, f"a full scan of {table}:\n{shown}"
            assert not by_parent or columns[:2] == CHILDREN, (
                f"the children of a node read through an index on {columns}:\n{shown}"
            )
            assert any(columns[: len(a)] == a for a in allowed), (
                f"{table} read through an index on {columns}, not one of {sorted(allowed)}:\n"
                + shown
            )
            used.append(columns)
    assert any(c[: len(must)] == must for c in used), f"no read through {must}: {used}"


def test_children_of_a_node(tree):
    assert_plans(
        lambda: children_rows(session=tree, entry_id="m0"), {BY_ID, CHILDREN}, must=CHILDREN
    )


def test_children_of_the_root(tree):
    assert_plans(lambda: children_rows(session=tree, entry_id=None), {CHILDREN}, must=CHILDREN)


def test_the_children_index_also_orders_them(tree):
    """(session_id, parent_id, seq): a node's children come in append order with no sort."""
    assert _index_columns("entry_children") == ("store_entry", (*CHILDREN, "seq"))


def test_fork_view(tree):
    """The children of a fork point, then a page of each side branch's chain."""
    assert_plans(
        lambda: fork_view(tree, parent_id="m0", exclude="m1"), {CHILDREN, CHAIN}, must=CHILDREN
    )


def test_active_path_view(tree):
    """The tree part: the path, the children of the nodes shown, the open forks."""
    assert_plans(lambda: active_path_view(tree), {BY_ID, CHILDREN, CHAIN, BY_SEQ}, must=CHILDREN)


def test_path_page(tree):
    assert_plans(
        lambda: path_page(tree, leaf_id="m119", start=10, stop=60),
        {BY_ID, CHILDREN, CHAIN, BY_SEQ},
        must=CHILDREN,
    )


def test_branch_rows(tree):
    """The recursive path read: one search by id, then chain ranges."""
    for lazy in (False, True):
        assert_plans(
            lambda lazy=lazy: branch_rows(session=tree, leaf_id="s3_2", lazy=lazy),
            {BY_ID, CHAIN, BY_SEQ},
            must=CHAIN,
        )


def test_the_sibling_prompts_of_some_nodes(tree):
    """The strip's switcher: the prompts and rewinds hanging from the nodes of a page."""
    assert_plans(
        lambda: prompt_siblings(session=tree, parents=["m0", "m10", "m20", "m30"]),
        {CHILDREN},
        must=CHILDREN,
    )


def test_the_end_of_a_line(tree):
    """Where a sibling turn's line was left: its chain's index, from its far end."""
    assert_plans(lambda: line_end(session=tree, entry_id="s3_2"), {BY_ID, CHAIN}, must=CHAIN)


def test_entries_after(tree):
    assert_plans(lambda: entries_after(session=tree, after_seq=50, limit=20), {BY_SEQ}, BY_SEQ)


def test_the_claim(alice):
    """A runner's claim reads the unfinished operations only (through an index of them),
    however many finished ones the table holds."""
    sessions = [
        big_tree_create(owner=alice, depth=2, forks=0, fork_len=0, title=f"s{i}") for i in range(3)
    ]
    now = timezone.now()
    Operation.objects.bulk_create(
        Operation(
            id=f"op_done_{i}",
            session=sessions[i % 3],
            created_at=now,
            outcome="completed",
            finished_at=now,
        )
        for i in range(5000)
    )
    for session in sessions:
        operation_accept(session_id=session.id, text="画")
    analyze()
    later = now + timedelta(seconds=1)
    assert_plans(
        lambda: operation_claim(owner="test", now=later, lease_seconds=60),
        {UNFINISHED, PK},
        must=UNFINISHED,
    )


def test_fork_view_of_several_branches(tree):
    """Each branch's run is a range of the chain index, however many branches are read at
    once (given a ``seq`` range besides, SQLite walked the session by seq for two)."""
    assert_plans(lambda: fork_view(tree, parent_id="m0", exclude=None), {CHILDREN, CHAIN}, CHAIN)


def test_lazy_path_rows(tree):
    """A lazy path's rows are read as ranges of the chain index when touched (its two ends,
    a slice, all of it), and an entry is placed on it by one search by id."""

    def touch():
        rows = branch_rows(session=tree, leaf_id="s3_2", lazy=True)
        assert rows[-1].entry_id == "s3_2" and rows[0].entry_id == "m0"
        assert [r.entry_id for r in rows[5:8]] == ["m5", "m6", "m7"]
        assert len(list(rows)) == len(rows)
        assert rows.position("m1") == 1 and rows.position("s0_0") is None
        assert rows.positions(["m5", "s0_0", "m1", "m5"]) == {"m5": 5, "s0_0": None, "m1": 1}

    assert_plans(touch, {BY_ID, CHAIN}, must=CHAIN)


def test_tool_results_by_name(tree):
    """The strip's "published?" over a long stretch: a search of the results by tool name,
    not a read of every entry's JSON in the session."""
    assert _index_columns("entry_tool_result") == ("store_entry", (*TOOL_RESULT, "seq"))
    assert_plans(
        lambda: tool_results_at(session=tree, tools=("publish_panel", "generate_image")),
        {TOOL_RESULT},
        must=TOOL_RESULT,
    )


def test_latest_panel_by_name(tree):
    """The sessions list's thumbnails: each session's latest panel found by a search of its
    results by tool name, however far back, all of a page's sessions in one query."""
    assert_plans(
        lambda: latest_images(session_ids=[tree.id]),
        {TOOL_RESULT},
        must=TOOL_RESULT,
    )


def test_branch_counts_by_chain_heads(tree):
    """The sessions list's "N branches": a search of the chains' heads, not a walk of every
    entry of the session in the (session, chain, chain_pos) index."""
    assert _index_columns("entry_chain_head") == ("store_entry", CHAIN)
    heads = 1 + (300 if connection.vendor == "postgresql" else 12)
    assert branch_counts(session_ids=[tree.id]) == {tree.id: heads}
    [(sql, params)] = statements(lambda: branch_counts(session_ids=[tree.id]))
    lines = plan(sql, params)
    assert any("entry_chain_head" in line for line in lines), "\n".join(lines)
    assert not any(re.search(r"Seq Scan|SCAN store_entry", line) for line in lines), lines


def test_panel_sessions_by_name(tree):
    """The credits page: which session drew each charged panel, a search of the owner's
    sessions' panels, not a read of every entry they hold."""
    assert_plans(
        lambda: panel_sessions(owner=tree.owner, image_ids=["img_a", "img_b"]),
        {TOOL_RESULT},
        must=TOOL_RESULT,
    )
