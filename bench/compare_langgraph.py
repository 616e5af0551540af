"""LangGraph's SqliteSaver beside our store on the same 200-turn conversation with a fork:
time (LangGraph with its default durability and with durability="sync"), bytes on disk,
reads at both leaves. What each side does: docs/PERFORMANCE.md ("Against LangGraph").

    .venv/bin/pip install -e '.[dev,bench]'    # LangGraph is a bench-only extra
    .venv/bin/python bench/compare_langgraph.py
"""

import json
import os
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import fs_type, header, load, parser  # noqa: E402

TURNS, FORK_AT, FORK_TURNS = 200, 100, 50
SKILLS = ["超级棒棒糖", "旋风腿", "发明", "隐身", "闪电拳"]
MOODS = ["兴奋", "生气", "专注", "害怕", "骄傲", "开心", "疲惫"]


def turn_content(turn: int, branch: str) -> tuple[str, str, dict]:
    """The user text, the assistant reply and the characters after a turn (1-based)."""
    tag = "" if branch == "main" else "（分支）"
    user = f"{tag}画第{turn}格：猪猪侠和波比在屋顶上，超人强从远处飞来"
    reply = (
        f"{tag}第{turn}格画好了：夕阳下猪猪侠举起超级棒棒糖，波比在一旁调试新发明，"
        f"超人强的披风被风吹得猎猎作响。下一格要不要让他们遇到怪兽？"
    )
    characters = {
        "猪猪侠": {"buff": f"勇气+{turn % 7}", "skill": SKILLS[turn % 5], "mood": MOODS[turn % 7]},
        "波比": {"buff": f"智慧+{turn % 3}", "skill": "发明", "mood": MOODS[(turn + 2) % 7]},
        "超人强": {"buff": "力量", "skill": SKILLS[(turn + 1) % 5], "mood": MOODS[(turn + 4) % 7]},
    }
    if branch != "main":
        characters["猪猪侠"]["buff"] = f"分支勇气+{turn % 7}"
    return user, reply, characters


def file_bytes(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


# --- LangGraph ------------------------------------------------------------------------


def run_langgraph(path: Path, durability: str | None) -> dict:
    """One run; ``durability`` None is LangGraph's default, else passed to every invoke."""
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    # The node's "model": the reply and the characters for each user text, known in advance.
    replies: dict[str, tuple[str, dict]] = {}
    for branch, turns in (
        ("main", range(1, TURNS + 1)),
        ("fork", range(FORK_AT + 1, FORK_AT + FORK_TURNS + 1)),
    ):
        for turn in turns:
            user, reply, characters = turn_content(turn, branch)
            replies[user] = (reply, characters)

    class State(TypedDict):  # no postponed annotations in this module: LangGraph reads these
        messages: Annotated[list, add_messages]
        characters: dict

    def turn_node(state: dict) -> dict:
        reply, characters = replies[state["messages"][-1].content]
        return {"messages": [AIMessage(content=reply)], "characters": characters}

    builder = StateGraph(State)
    builder.add_node("turn", turn_node)
    builder.add_edge(START, "turn")
    builder.add_edge("turn", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = builder.compile(checkpointer=saver)
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    empty = file_bytes(path)
    thread = {"configurable": {"thread_id": "episode-1"}}

    options = {} if durability is None else {"durability": durability}

    def say(turn: int, branch: str, config: dict) -> None:
        user, _, _ = turn_content(turn, branch)
        graph.invoke({"messages": [HumanMessage(content=user)]}, config, **options)

    statements: list[str] = []
    start = time.perf_counter()
    for turn in range(1, TURNS + 1):
        if turn == 50:
            conn.set_trace_callback(statements.append)
        say(turn, "main", thread)
        if turn == 50:
            conn.set_trace_callback(None)
        if turn == FORK_AT:
            fork_from = graph.get_state(thread).config
    main_leaf = graph.get_state(thread).config
    t_build = time.perf_counter() - start

    start = time.perf_counter()
    say(FORK_AT + 1, "fork", fork_from)  # time travel: a new branch from turn 100's checkpoint
    for turn in range(FORK_AT + 2, FORK_AT + FORK_TURNS + 1):
        say(turn, "fork", thread)
    t_fork = time.perf_counter() - start

    start = time.perf_counter()
    at_main = graph.get_state(main_leaf)
    at_fork = graph.get_state(thread)
    t_read = time.perf_counter() - start

    checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = file_bytes(path)
    conn.close()
    return {
        "build": t_build,
        "fork": t_fork,
        "read": t_read,
        "bytes": size,
        "empty": empty,
        "rows": f"{checkpoints} checkpoints, {writes} writes",
        "statements_per_turn": len(statements),
        "commits_per_turn": sum(s.strip().upper().startswith("COMMIT") for s in statements),
        "main_messages": len(at_main.values["messages"]),
        "fork_messages": len(at_fork.values["messages"]),
        "main_characters": at_main.values["characters"],
        "fork_characters": at_fork.values["characters"],
        "pragmas": f"journal_mode={mode}, synchronous={sync}, "
        + (f"durability={durability}" if durability else "default durability"),
    }


# --- ours, in a child process -----------------------------------------------------------


def run_ours(path: Path) -> dict:
    os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # DEBUG=0 wants real ones
    os.environ.setdefault("JAIWEB_FEED_SECRET", secrets.token_urlsafe(32))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jaiweb.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from jaiweb.store.selectors import app_state_at, branch_rows, session_get
    from jaiweb.store.services import entry_append, rewind_append, session_create
    from journal.entries import AppStateEntry, AssistantMessage, MessageEntry, UserMessage

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create(username="bench")
    session = session_create(owner=owner, title="episode 1")
    with connection.cursor() as cur:
        cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    empty = file_bytes(path)
    t0 = datetime(2026, 11, 29, tzinfo=UTC)
    leaf: list[str | None] = [None]

    def say(turn: int, branch: str) -> str:
        user, reply, characters = turn_content(turn, branch)
        now = t0 + timedelta(seconds=turn)
        uid, aid, sid = (f"{branch}{turn}{kind}" for kind in ("u", "a", "s"))
        prompt = MessageEntry(
            id=uid, parent_id=leaf[0], timestamp=now, message=UserMessage(content=user)
        )
        entry_append(session_id=session.id, entries=[prompt], expected_leaf_id=leaf[0])
        msg = AssistantMessage(content=reply, stop_reason="stop")
        entry_append(
            session_id=session.id,
            entries=[
                MessageEntry(id=aid, parent_id=uid, timestamp=now, message=msg),
                AppStateEntry(
                    id=sid,
                    parent_id=aid,
                    timestamp=now,
                    value={"characters": characters, "permission_mode": "ask"},
                ),
            ],
            expected_leaf_id=uid,
        )
        leaf[0] = sid
        return sid

    connection.ensure_connection()
    statements: list[str] = []
    start = time.perf_counter()
    for turn in range(1, TURNS + 1):
        if turn == 50:
            connection.connection.set_trace_callback(statements.append)
        last = say(turn, "main")
        if turn == 50:
            connection.connection.set_trace_callback(None)
        if turn == FORK_AT:
            fork_from = last
    main_leaf = leaf[0]
    t_build = time.perf_counter() - start

    start = time.perf_counter()
    nav = rewind_append(session_id=session.id, target_id=fork_from, expected_leaf_id=main_leaf)
    leaf[0] = nav.leaf_id
    for turn in range(FORK_AT + 1, FORK_AT + FORK_TURNS + 1):
        say(turn, "fork")
    fork_leaf = leaf[0]
    t_fork = time.perf_counter() - start

    start = time.perf_counter()
    fresh = session_get(session_id=session.id)
    state_main = app_state_at(session=fresh, leaf_id=main_leaf)
    branch_main = branch_rows(session=fresh, leaf_id=main_leaf)
    state_fork = app_state_at(session=fresh, leaf_id=fork_leaf)
    branch_fork = branch_rows(session=fresh, leaf_id=fork_leaf)
    t_read = time.perf_counter() - start

    def messages(rows) -> int:
        return sum(r.entry.type == "message" for r in rows)

    with connection.cursor() as cur:
        cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cur.execute("SELECT count(*) FROM store_entry")
        entries = cur.fetchone()[0]
        mode = cur.execute("PRAGMA journal_mode").fetchone()[0]
        sync = cur.execute("PRAGMA synchronous").fetchone()[0]
    connection.close()
    return {
        "build": t_build,
        "fork": t_fork,
        "read": t_read,
        "bytes": file_bytes(path),
        "empty": empty,
        "rows": f"{entries} entries",
        "statements_per_turn": len(statements),
        "commits_per_turn": sum(s.strip().upper().startswith("COMMIT") for s in statements),
        "main_messages": messages(branch_main),
        "fork_messages": messages(branch_fork),
        "main_characters": state_main["characters"],
        "fork_characters": state_fork["characters"],
        "pragmas": f"journal_mode={mode}, synchronous={sync}, BEGIN IMMEDIATE",
    }


# --- the default run ---------------------------------------------------------------------


def main() -> None:
    parser_ = parser(__doc__)
    parser_.add_argument("--side", choices=["ours"], help="internal: one run of ours, as JSON")
    parser_.add_argument("--path")
    parser_.add_argument("--runs", type=int, default=3)
    args = parser_.parse_args()
    if args.side == "ours":
        print(json.dumps(run_ours(Path(args.path)), ensure_ascii=False))
        return
    try:
        import langgraph  # noqa: F401
        from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: F401
    except ImportError:
        print("langgraph and langgraph-checkpoint-sqlite are missing: pip install -e '.[bench]'")
        sys.exit(1)
    from importlib.metadata import version

    where = args.sqlite_dir or tempfile.gettempdir()
    header(
        None,
        f"{TURNS} turns (user + assistant + characters), fork at turn {FORK_AT} continued "
        f"{FORK_TURNS} turns, state read at both leaves; each side on its own fresh SQLite "
        f"file in {where} ({fs_type(where)}); median of {args.runs} runs; langgraph "
        f"{version('langgraph')}, langgraph-checkpoint-sqlite "
        f"{version('langgraph-checkpoint-sqlite')}, sqlite {sqlite3.sqlite_version}",
    )
    sides = {"LangGraph (default)": None, 'LangGraph durability="sync"': "sync"}
    results: dict[str, list[dict]] = {name: [] for name in [*sides, "ours"]}
    for run in range(args.runs):
        tmp = Path(tempfile.mkdtemp(prefix="jaiweb-lg-", dir=args.sqlite_dir))
        try:
            for name, durability in sides.items():
                path = tmp / f"langgraph{run}-{durability}.sqlite3"
                results[name].append(run_langgraph(path, durability))
            child = subprocess.run(
                [sys.executable, __file__, "--side", "ours", "--path", str(tmp / "ours.sqlite3")],
                capture_output=True,
                text=True,
                check=False,
            )
            if child.returncode != 0:
                print(child.stdout + child.stderr)
                sys.exit(1)
            results["ours"].append(json.loads(child.stdout.strip().splitlines()[-1]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def med(side: str, key: str) -> float:
        return statistics.median(r[key] for r in results[side])

    last = {side: runs[-1] for side, runs in results.items()}
    for side, r in last.items():
        print(
            f"  {side}: {r['pragmas']}; {r['rows']}; per turn {r['statements_per_turn']} "
            f"SQL statements, {r['commits_per_turn']} commits; messages at the leaves: "
            f"main {r['main_messages']}, fork {r['fork_messages']}"
        )
    us = last["ours"]
    for side in sides:
        agree = (
            last[side]["main_characters"] == us["main_characters"]
            and last[side]["fork_characters"] == us["fork_characters"]
        )
        print(f"  characters at both leaves, {side} and ours agree: {'yes' if agree else 'NO'}")
    names = [*sides, "ours"]
    print("  " + " " * 34 + "".join(f"{n:>28}" for n in names))
    rows = [
        ("200 turns (s)", "build", 1.0),
        ("fork at 100 + 50 turns (s)", "fork", 1.0),
        ("state at both leaves (ms)", "read", 1e3),
    ]

    def cells(values: list[float], fmt: str) -> str:
        base = values[-1]
        return "".join(
            f"{format(v, fmt):>16} ({v / base:5.2f}x)"
            if i < len(values) - 1
            else f"{format(v, fmt):>28}"
            for i, v in enumerate(values)
        )

    for label, key, scale in rows:
        print(f"  {label:<34}" + cells([med(n, key) * scale for n in names], ".3f"))
    totals = [sum(med(n, k) for k in ("build", "fork", "read")) for n in names]
    print(f"  {'total time (s)':<34}" + cells(totals, ".3f"))
    print(f"  {'bytes on disk, file + WAL':<34}" + cells([med(n, "bytes") for n in names], ",.0f"))
    net = [med(n, "bytes") - med(n, "empty") for n in names]
    print(f"  {'bytes on disk minus empty schema':<34}" + cells(net, ",.0f"))
    print(f"  (x: that LangGraph figure / ours; {load()} at the end)")


if __name__ == "__main__":
    main()
