"""Load: K concurrent sessions, 2 live watchers each, on the embedded studio (SQLite) and
on a 2+2 cluster (PostgreSQL + Redis). It asserts nothing; errors are counted and must
be 0. What each figure means and the last run's: docs/PERFORMANCE.md ("CPU per
operation under load").

    .venv/bin/python bench/load.py --setup embedded
    JAIWEB_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/jaiweb_bench_load \
    JAIWEB_BENCH_REDIS_URL=redis://127.0.0.1:6379/5 .venv/bin/python bench/load.py
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    figure,
    header,
    load,
    parser,
    pg_admin,
    pg_create_scratch,
    pg_drop_scratch,
    pg_parts,
)
from bench.webtools import StudioChild, percentile  # noqa: E402

STATE = {
    "characters": {"猪猪侠": {"buff": "无", "skill": "无", "mood": "平静"}},
    "permission_mode": "auto",
}
# What a watcher looks for in its frames (bytes: the frames are not decoded).
TEXT_DELTA = b'hx-swap-oob="beforeend:#stream-text"'
# The committed replies replacing what streamed (not the empty reset of operation_started).
TEXT_COMMITTED = re.compile(rb'<div id="stream-text" hx-swap-oob="true">(?!</div>)')
REGIONS = b'id="tree"'  # in a frame that re-renders every region (a catch-up)
END_LINE = re.compile(rb'<li id="end-([\w-]+)"[^>]*>Finished: (\w+)')
BASELINE_OPS = 30  # operations of the K = 1 baseline (at least: its CPU per operation is the
# denominator of the K = 50 / K = 1 ratio, and 6 moved it by a third between rounds)
ERROR_KINDS = (
    *("http", "ws_open", "ws_closed", "not_completed", "timeout", "queued"),
    *("process_died", "bench"),
)

SETUP_USERS = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from jaiweb.accounts.services import api_token_create
from jaiweb.render.services import credits_grant
from jaiweb.store.services import entry_append, session_create
from journal.entries import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage, UserMessage


def drawn_turn(n, parent, at):
    # a turn as the loop writes one: the prompt, the reply calling the renderer, its
    # result with the panel's image, the closing reply (its last entry is t<n>f)
    call = ToolCall(id="c1", name="generate_image", arguments={{"prompt": "scene %d" % n}})
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="generate_image", content="panel rendered",
        details={{"image_id": "img_history_%04d" % n}},
    )
    messages = [
        UserMessage(content="/draw scene %d" % n),
        AssistantMessage(content="drawing %d" % n, tool_calls=[call], stop_reason="tool_use"),
        result,
        AssistantMessage(content="done %d" % n, stop_reason="stop"),
    ]
    out = []
    for kind, message in zip("uarf", messages):
        out.append(MessageEntry(id="t%d%s" % (n, kind), parent_id=parent, timestamp=at,
                                message=message))
        parent = out[-1].id
    return out


out = []
for i in range({count}):
    user = get_user_model().objects.create_user("{prefix}%d" % i)
    _, token = api_token_create(user=user, name="bench load")
    credits_grant(user=user, amount=100000, note="bench load")
    client = Client()
    client.force_login(user)
    made = {{"token": token, "cookie": client.cookies["sessionid"].value}}
    if {history}:
        session = session_create(owner=user, title="load #%d" % i,
                                 initial_app_state=json.loads({state!r}))
        leaf, at = None, timezone.now() - timedelta(hours=1)
        for n in range(1, {history} + 1):
            turn = drawn_turn(n, leaf, at + timedelta(seconds=n))
            entry_append(session_id=session.id, entries=turn, expected_leaf_id=leaf)
            leaf = turn[-1].id
        made["session"] = session.id
    out.append(made)
print(json.dumps(out))
"""


def prompt_text(session: int, op: int) -> str:
    """A /draw, a /say, a /state with a /draw, … (the offline director's grammar)."""
    kind = op % 3
    if kind == 0:
        return f"/draw 猪猪侠站在屋顶上看夕阳 #{session}-{op}"
    if kind == 1:
        return f"/say 第{op}格：猪猪侠吃下超级棒棒糖，力量大增！(session {session})"
    return f"/state 猪猪侠 mood=得意 skill=降龙十巴掌\n/draw 猪猪侠使出绝招 #{session}-{op}"


# --- CPU ---------------------------------------------------------------------------------


def cpu_seconds(pid: int, children: bool = False) -> float | None:
    """utime + stime of a process (all its threads); with ``children``, of the children it
    has waited for too (cutime + cstime)."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    spent = times.user + times.system
    return spent + times.children_user + times.children_system if children else spent


def kernel_seconds(pid: int) -> float | None:
    """stime alone: the part of ``cpu_seconds`` spent in the kernel (sockets, futexes)."""
    try:
        return psutil.Process(pid).cpu_times().system
    except psutil.Error:
        return None


def processes_named(comm: str) -> list[tuple[int, int]]:
    """(pid, ppid) of every process whose command name is ``comm``."""
    return [
        (p.info["pid"], p.info["ppid"])
        for p in psutil.process_iter(["pid", "ppid", "name"])
        if p.info["name"] == comm
    ]


def postgres_cpu() -> float | None:
    """The PostgreSQL server's CPU so far: the postmaster with the backends it reaped, plus
    the live ones (every database on the server)."""
    procs = processes_named("postgres")
    pids = {pid for pid, _ in procs}
    masters = [pid for pid, ppid in procs if ppid not in pids]
    if not masters:
        return None
    master = masters[0]
    total = cpu_seconds(master, children=True) or 0.0
    for pid, ppid in procs:
        if ppid == master:
            total += cpu_seconds(pid) or 0.0
    return total


def redis_cpu() -> float | None:
    procs = processes_named("redis-server")
    return sum(cpu_seconds(pid) or 0.0 for pid, _ in procs) if procs else None


def machine_cpu() -> tuple[int, int]:
    """(busy, total) CPU seconds of all cores since boot."""
    times = psutil.cpu_times()
    idle = times.idle + times.iowait
    total = sum(
        getattr(times, f)
        for f in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    )
    return total - idle, total


class CpuProbe:
    """CPU seconds of named processes between two snapshots."""

    def __init__(self, pids: dict[str, int], *, servers: bool) -> None:
        self.pids = pids
        self.servers = servers  # PostgreSQL and Redis are part of the setup

    def snapshot(self) -> dict[str, float | None]:
        snap: dict[str, float | None] = {n: cpu_seconds(p) for n, p in self.pids.items()}
        snap["_kernel"] = {n: kernel_seconds(p) for n, p in self.pids.items()}
        if self.servers:
            snap["postgres"] = postgres_cpu()
            snap["redis"] = redis_cpu()
        t = os.times()
        snap["load generator"] = t.user + t.system
        snap["_machine"] = machine_cpu()
        return snap

    @staticmethod
    def spent(before: dict, after: dict) -> dict[str, float | None]:
        out = {}
        for name, value in before.items():
            if name.startswith("_"):
                continue
            later = after.get(name)
            out[name] = None if value is None or later is None else later - value
        out["_kernel"] = {
            n: None if v is None or after["_kernel"].get(n) is None else after["_kernel"][n] - v
            for n, v in before["_kernel"].items()
        }
        busy0, total0 = before["_machine"]
        busy1, total1 = after["_machine"]
        out["_machine_busy"] = (busy1 - busy0) / max(total1 - total0, 1)
        return out


# --- one step: K sessions ----------------------------------------------------------------


@dataclass
class Watcher:
    ws: object
    url: str
    frames: int = 0
    size: int = 0
    regions: int = 0  # frames that re-render every region (catch-ups)
    text_at: float | None = None  # the first streamed text since the driver's last reset
    ends: dict[str, tuple[float, str]] = field(default_factory=dict)  # safe op id -> (t, outcome)
    closed: str | None = None  # why the socket ended under the bench
    closing: bool = False  # we are closing it


@dataclass
class Session:
    index: int
    id: str
    token: str
    cookie: str
    api: object  # the httpx client of the web process its prompts go to
    watchers: list[Watcher] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Step:
    k: int
    watchers: int = 2  # per session
    ops: int = 0  # completed operations
    wall: float = 0.0
    first_text: list[float] = field(default_factory=list)
    op_time: list[float] = field(default_factory=list)
    post_time: list[float] = field(default_factory=list)
    # The answers after each session's first prompt: the first ones all arrive at once
    # when the step starts, and their burst makes the p99 of post_time.
    post_later: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))
    error_notes: list[str] = field(default_factory=list)
    missed_ends: int = 0  # (operation, watcher) pairs without the end line
    missed_notes: list[str] = field(default_factory=list)
    no_text: int = 0  # (operation, watcher) pairs without streamed text
    connect: float = 0.0
    frames: int = 0
    bytes: int = 0
    regions: int = 0
    cpu: dict[str, float | None] = field(default_factory=dict)
    pg: dict[str, int] = field(default_factory=dict)
    watchers_seen: int | None = None
    catch_ups: dict[str, float] = field(default_factory=dict)  # the /metrics counters moved

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def rate(self) -> float:
        return self.ops / self.wall if self.wall else 0.0

    def error(self, kind: str, note: str) -> None:
        self.errors[kind] += 1
        if self.errors[kind] <= 3:  # the first few of each kind
            self.error_notes.append(f"{kind}: {' '.join(note.split())[:300]}")


def safe_id(op_id: str) -> str:
    """The op id as the consumer writes it into the end line's element id."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in op_id)


async def listen(w: Watcher, session: Session) -> None:
    from websockets.exceptions import ConnectionClosed

    try:
        while True:
            frame = await w.ws.recv(decode=False)
            now = time.perf_counter()
            w.frames += 1
            w.size += len(frame)
            if REGIONS in frame:
                w.regions += 1
            if w.text_at is None and (TEXT_DELTA in frame or TEXT_COMMITTED.search(frame)):
                w.text_at = now
            if b'id="end-' in frame:
                for match in END_LINE.finditer(frame):
                    w.ends.setdefault(match[1].decode(), (now, match[2].decode()))
                session.changed.set()
    except ConnectionClosed as exc:
        if not w.closing:
            w.closed = f"closed {exc.rcvd.code if exc.rcvd else 'without a close frame'}"
    except Exception as exc:  # anything else ends the watcher too: reported, never hidden
        if not w.closing:
            w.closed = f"{type(exc).__name__}: {exc}"
    finally:
        session.changed.set()


async def open_watcher(url: str, session: Session, sem: asyncio.Semaphore, timeout: float):
    from websockets.asyncio.client import connect

    ws_url = "ws" + url.removeprefix("http") + f"ws/sessions/{session.id}/"
    async with sem:
        ws = await connect(
            ws_url,
            additional_headers={
                "Cookie": f"sessionid={session.cookie}",
                "Origin": url.rstrip("/"),
                "Accept-Language": "en",
            },
            max_size=None,
            open_timeout=timeout,
            ping_interval=None,  # a busy bench must not close sockets on a late pong
            close_timeout=2,
            proxy=None,
        )
        await asyncio.wait_for(ws.recv(decode=False), timeout)  # the catch-up: not counted
    return Watcher(ws, url)


async def drive(session: Session, step: Step, ops: int, timeout: float) -> None:
    """One user: ``ops`` prompts, each after the previous one's end line on both watchers."""
    try:
        await _drive(session, step, ops, timeout)
    except Exception as exc:  # a bug of the bench: reported with the errors, never hidden
        step.error("bench", f"session {session.id}: {type(exc).__name__}: {exc}")


async def _drive(session: Session, step: Step, ops: int, timeout: float) -> None:
    for j in range(ops):
        frames_before = []
        for w in session.watchers:
            w.text_at = None  # every frame of the previous operation has arrived
            frames_before.append(w.frames)
        start = time.perf_counter()
        try:
            r = await session.api.post(
                f"sessions/{session.id}/prompts",
                json={"text": prompt_text(session.index, j)},
                headers={"Authorization": f"Bearer {session.token}"},
            )
        except Exception as exc:
            step.error("http", f"POST prompt: {type(exc).__name__}: {exc}")
            return
        step.post_time.append(time.perf_counter() - start)
        if j:
            step.post_later.append(step.post_time[-1])
        if r.status_code != 202:
            title = re.search(r"<title>(.*?)</title>", r.text, re.S)
            step.error("http", f"POST prompt: {r.status_code} {title[1] if title else r.text}")
            return
        answer = r.json()
        op_id = answer["operation_id"]
        if answer.get("queued"):
            step.error("queued", f"{op_id} was queued as steering (the session was running)")
            return
        key = safe_id(op_id)
        deadline = start + timeout
        while True:
            session.changed.clear()
            if all(key in w.ends or w.closed for w in session.watchers):
                break
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            try:
                await asyncio.wait_for(session.changed.wait(), left)
            except TimeoutError:
                break
        for w, before in zip(session.watchers, frames_before, strict=True):
            if w.closed:
                continue
            if w.text_at is not None:
                step.first_text.append(w.text_at - start)
            else:
                step.no_text += 1
            if key in w.ends:
                step.op_time.append(w.ends[key][0] - start)
            else:
                step.missed_ends += 1
                if len(step.missed_notes) < 5:
                    step.missed_notes.append(
                        f"{op_id} (session {session.id}) on {w.url}: "
                        f"{w.frames - before} frames after the prompt, none with its end line"
                    )
        seen = [w.ends[key][1] for w in session.watchers if key in w.ends]
        if seen:
            outcome = seen[0]
        else:  # no watcher showed the end: ask the API
            try:
                r = await session.api.get(
                    f"operations/{op_id}", headers={"Authorization": f"Bearer {session.token}"}
                )
                state = r.json() if r.status_code == 200 else {}
            except Exception as exc:
                state = {"error": f"{type(exc).__name__}: {exc}"}
            if state.get("state") != "finished":
                step.error("timeout", f"{op_id} not finished after {timeout:g} s: {state}")
                return
            outcome = state.get("outcome")
        if outcome != "completed":
            step.error("not_completed", f"{op_id} finished {outcome}")
            continue
        step.ops += 1


async def create_session(api, token: str, title: str) -> str:
    r = await api.post(
        "sessions",
        json={"title": title, "initial_app_state": STATE},
        headers={"Authorization": f"Bearer {token}"},
    )
    if r.status_code != 201:
        raise RuntimeError(f"POST /sessions: {r.status_code} {r.text[:300]}")
    return r.json()["id"]


async def metrics_of(urls: list[str]) -> dict[str, float] | None:
    """Every sample of the web processes' /metrics, summed over them ("name{labels}": value),
    or None when one did not answer."""
    import httpx

    total: dict[str, float] = {}
    async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
        for url in urls:
            try:
                r = await http.get(url + "metrics")
            except httpx.HTTPError:
                return None
            if r.status_code != 200:
                return None
            for match in re.finditer(r"^(jaiweb_\S+) (\S+)$", r.text, re.M):
                total[match[1]] = total.get(match[1], 0.0) + float(match[2])
    return total


async def watchers_on(urls: list[str]) -> int | None:
    """jaiweb_websocket_watchers summed over the web processes (their /metrics)."""
    found = await metrics_of(urls)
    if found is None or "jaiweb_websocket_watchers" not in found:
        return None
    return int(found["jaiweb_websocket_watchers"])


def catch_up_spent(before: dict | None, after: dict | None) -> dict[str, float]:
    """The catch-up counters (jaiweb_catch_up_*_total) that moved between two scrapes."""
    if not before or not after:
        return {}
    out = {}
    for name, value in after.items():
        if name.startswith("jaiweb_catch_up_") and value - before.get(name, 0.0):
            out[name] = value - before.get(name, 0.0)
    return out


async def run_step(
    k: int,
    ops: int,
    users: list[dict],
    urls: list[str],
    args,
    probe: CpuProbe,
    pg_counter,
    profiling: tuple[Profiles, str] | None = None,
) -> Step:
    """One step: K sessions made and watched, then their operations driven. CPU (and,
    with ``profiling``, the py-spy record) covers the operations only: the watchers'
    first catch-ups, which draw each whole page once, are done before it starts."""
    import httpx

    step = Step(k, watchers=args.watchers)
    limits = httpx.Limits(max_connections=k + 20, max_keepalive_connections=k + 20)
    clients = [
        httpx.AsyncClient(
            base_url=url + "api/v1/", timeout=args.timeout, limits=limits, trust_env=False
        )
        for url in urls
    ]
    sessions: list[Session] = []
    try:
        sem = asyncio.Semaphore(20)

        async def make(i: int) -> Session:
            api = clients[i % len(clients)]
            sid = users[i].get("session")  # made with its history (--history)
            if sid is None:
                async with sem:
                    sid = await create_session(api, users[i]["token"], f"load K={k} #{i}")
            return Session(i, sid, users[i]["token"], users[i]["cookie"], api)

        made = await asyncio.gather(*(make(i) for i in range(k)), return_exceptions=True)
        for result in made:
            if isinstance(result, BaseException):
                step.error("http", f"creating a session: {type(result).__name__}: {result}")
            else:
                sessions.append(result)
        start = time.perf_counter()
        ws_sem = asyncio.Semaphore(20)  # daphne gives a handshake 5 s
        wanted = [
            (s, urls[(s.index + n) % len(urls)]) for s in sessions for n in range(args.watchers)
        ]
        opened = await asyncio.gather(
            *(open_watcher(url, s, ws_sem, args.timeout) for s, url in wanted),
            return_exceptions=True,
        )
        for (s, url), result in zip(wanted, opened, strict=True):
            if isinstance(result, BaseException):
                step.error("ws_open", f"{url} session {s.id}: {type(result).__name__}: {result}")
            else:
                s.watchers.append(result)
        sessions = [s for s in sessions if s.watchers]  # nothing would see their runs end
        step.connect = time.perf_counter() - start
        listeners = [asyncio.create_task(listen(w, s)) for s in sessions for w in s.watchers]
        step.watchers_seen = await watchers_on(urls)
        counts0 = await metrics_of(urls)
        pg0 = pg_counter() if pg_counter else None
        if profiling:
            profiling[0].start(profiling[1])
        cpu0 = probe.snapshot()
        start = time.perf_counter()
        await asyncio.gather(*(drive(s, step, ops, args.timeout) for s in sessions))
        step.wall = time.perf_counter() - start
        cpu1 = probe.snapshot()
        if profiling:
            profiling[0].stop()
        if pg_counter:
            pg1 = pg_counter()
            step.pg = {name: pg1[name] - pg0[name] for name in PG_COUNTS}
            step.pg["database"] = pg1["database"]
        step.cpu = CpuProbe.spent(cpu0, cpu1)
        step.catch_ups = catch_up_spent(counts0, await metrics_of(urls))
        for s in sessions:
            for w in s.watchers:
                if w.closed:
                    step.error("ws_closed", f"session {s.id} on {w.url}: {w.closed}")
                w.closing = True
                step.frames += w.frames
                step.bytes += w.size
                step.regions += w.regions
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)
    finally:
        await asyncio.gather(
            *(w.ws.close() for s in sessions for w in s.watchers), return_exceptions=True
        )
        for c in clients:
            await c.aclose()
    return step


# --- profiles (--profile) -----------------------------------------------------------------


def py_spy() -> str | None:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return found if Path(found).exists() else None


class Profiles:
    """``py-spy record --gil`` of each server process during a step (raw collapsed stacks):
    where the Python CPU goes, the one thing a process cannot spread over two cores."""

    def __init__(self, folder: Path, pids: dict[str, int]) -> None:
        self.folder = folder
        self.pids = pids
        self.running: list[tuple[str, subprocess.Popen, Path]] = []

    def start(self, label: str) -> None:
        spy = py_spy()
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, pid in self.pids.items():
            out = self.folder / f"{label}-{name}.txt"
            argv = [spy, "record", "-r", "100", "--gil", "--nonblocking", "-p", str(pid)]
            proc = subprocess.Popen(
                [*argv, "-f", "raw", "-o", str(out)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.running.append((name, proc, out))

    def stop(self) -> None:
        for _, proc, _ in self.running:
            proc.send_signal(signal.SIGINT)  # py-spy writes what it has and exits
        for _, proc, _ in self.running:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def report(self) -> None:
        for name, _, out in self.running:
            if out.exists():
                print(f"    py-spy, {name} ({out}):")
                for line in profile_lines(out):
                    print(f"      {line}")
        self.running = []


def profile_lines(path: Path, top: int = 8) -> list[str]:
    """Where a process's samples are: its busiest project frames (inclusive) and leaves."""
    inclusive: dict[str, int] = {}
    leaves: dict[str, int] = {}
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        leaves[frames[-1]] = leaves.get(frames[-1], 0) + n
        for frame in set(frames):
            if re.search(r"\((jaiweb|journal)/|Connection\.connect \(psycopg", frame):
                inclusive[frame] = inclusive.get(frame, 0) + n
    if not total:
        return ["no samples"]
    out = [f"{total} samples of the thread holding the GIL; project frames, inclusive:"]
    for frame, n in sorted(inclusive.items(), key=lambda x: -x[1])[:top]:
        out.append(f"  {n / total:5.1%}  {frame[:110]}")
    out.append("leaf frames (own time):")
    for frame, n in sorted(leaves.items(), key=lambda x: -x[1])[: top // 2]:
        out.append(f"  {n / total:5.1%}  {frame[:110]}")
    return out


# --- reporting ----------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds == seconds else "—"


def p50_p99(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{ms(statistics.median(values))} / {ms(percentile(values, 0.99))}"


def report_step(setup: str, step: Step, names: list[str]) -> None:
    ops_total = step.ops + sum(step.errors[k] for k in ("not_completed", "timeout"))
    print(
        f"  K={step.k:<4} {step.ops} operations completed in {step.wall:.1f} s: "
        f"{step.rate:.1f} ops/s   ({step.watchers * step.k} watchers connected in "
        f"{step.connect:.1f} s"
        + (f"; /metrics says {step.watchers_seen}" if step.watchers_seen is not None else "")
        + ")"
    )
    print(
        f"    first text p50/p99 {p50_p99(step.first_text)};  operation time p50/p99 "
        f"{p50_p99(step.op_time)};  POST /prompts answer p50/p99 {p50_p99(step.post_time)} "
        f"(after each session's first prompt {p50_p99(step.post_later)})"
    )
    errors = ", ".join(f"{k} {v}" for k, v in step.errors.items() if v) or "none"
    print(
        f"    errors: {step.error_count} ({errors});  not errors: end lines missed by a "
        f"watcher {step.missed_ends}, watchers that saw no streamed text {step.no_text}; "
        f"{step.frames / max(ops_total * step.watchers, 1):.1f} frames (of them "
        f"{step.regions / max(ops_total * step.watchers, 1):.1f} with every region), "
        f"{step.bytes / max(ops_total * step.watchers, 1) / 1024:.0f} KiB per operation and "
        "watcher"
    )
    if step.catch_ups and step.ops:
        # e.g. jaiweb_catch_up_passes_total{kind="quiet"} -> passes quiet
        moved = sorted(
            (re.sub(r'jaiweb_catch_up_(\w+)_total\{\w+="(\w+)"\}', r"\1 \2", k), v)
            for k, v in step.catch_ups.items()
        )
        print(
            "    catch-ups per operation (passes: per operation and watcher; reads: shared "
            "by a session's watchers): "
            + ", ".join(
                f"{name} {v / step.ops / (step.watchers if name.startswith('passes') else 1):.2f}"
                for name, v in moved
            )
        )
    for note in step.error_notes:
        print(f"      ! {note}")
    for note in step.missed_notes:
        print(f"      end line missed: {note}")
    parts = []
    for name in [*names, "postgres", "redis", "load generator"]:
        spent = step.cpu.get(name)
        if spent is None:
            continue
        parts.append(f"{name} {spent:.1f} s ({spent / step.wall:.0%})")
    print(f"    CPU (s, % of one core): {'; '.join(parts)}")
    per_op = {n: step.cpu.get(n) for n in names if step.cpu.get(n) is not None}
    if step.ops:
        print(
            "    CPU per completed operation: "
            + "; ".join(
                f"{n} {v / step.ops * 1e3:.0f} ms{kernel_part(step, n)}" for n, v in per_op.items()
            )
            + (
                f"; with PostgreSQL and Redis {server_cpu_per_op(step, names)}"
                if "postgres" in step.cpu
                else ""
            )
        )
    ours = sum(v for n, v in step.cpu.items() if not n.startswith("_") and v is not None)
    busy = step.cpu["_machine_busy"]
    print(
        f"    machine: {busy:.0%} of {os.cpu_count()} cores busy; the processes above "
        f"{ours / step.wall / os.cpu_count():.0%}, other work on the box "
        f"{max(busy - ours / step.wall / os.cpu_count(), 0):.0%}"
    )
    if step.pg:
        print(
            f"    PostgreSQL ({step.pg['database']}): {step.pg['sessions']:,} connections opened "
            f"({step.pg['sessions'] / max(step.ops, 1):.1f} per operation), "
            f"{step.pg['xact_commit']:,} commits ({step.pg['xact_commit'] / step.wall:,.0f}/s); "
            f"per operation {step.pg['wal_bytes'] / max(step.ops, 1) / 1024:,.0f} KiB of WAL "
            "(the whole server's) and the database "
            f"{step.pg['database_bytes'] / max(step.ops, 1) / 1024:+,.0f} KiB on disk"
        )


def kernel_part(step: Step, name: str) -> str:
    """ " (x ms of it in the kernel)" for one process, or "" when unknown."""
    kernel = step.cpu.get("_kernel", {}).get(name)
    return "" if kernel is None else f" ({kernel / step.ops * 1e3:.0f} ms of it in the kernel)"


def server_cpu_per_op(step: Step, names: list[str]) -> str:
    """CPU of every server process (ours, PostgreSQL, Redis) per completed operation."""
    spent = [step.cpu.get(n) for n in [*names, "postgres", "redis"]]
    if not step.ops:
        return "—"
    return f"{sum(v for v in spent if v is not None) / step.ops * 1e3:.0f} ms"


def busiest(step: Step, names: list[str]) -> str:
    spent = {n: step.cpu.get(n) for n in [*names, "postgres", "load generator"]}
    spent = {n: v for n, v in spent.items() if v is not None}
    if not spent or not step.wall:
        return "—"
    name = max(spent, key=spent.get)
    return f"{name} {spent[name] / step.wall:.0%}"


def saturation(steps: list[Step]) -> str | None:
    """Why the climb stops after the last step, or None to go on."""
    last = steps[-1]
    if last.error_count:
        return f"{last.error_count} error(s) at K={last.k}"
    earlier = [s for s in steps[:-1] if s.k > 1]
    if earlier:
        best = max(s.rate for s in earlier)
        if last.rate < 1.1 * best:
            return f"ops/s stopped growing: {last.rate:.1f} at K={last.k} against {best:.1f} before"
        first = earlier[0].op_time
        if first and last.op_time:
            p99, p99_first = percentile(last.op_time, 0.99), percentile(first, 0.99)
            if p99 > 10 * p99_first:
                return (
                    f"p99 operation time exploded: {ms(p99)} at K={last.k}, "
                    f"{ms(p99_first)} at K={earlier[0].k}"
                )
    return None


def print_summary(rows: list[tuple[str, Step, list[str]]]) -> None:
    print(
        "\nsummary (first text and operation time per operation and watcher; CPU/op: every "
        "server process, PostgreSQL and Redis included, per completed operation; busiest: % "
        "of one core)"
    )
    head = (
        f"  {'setup':<9} {'K':>4} {'ops':>5} {'ops/s':>6}  {'first text p50/p99':>19}  "
        f"{'op time p50/p99':>19}  {'errors':>6}  {'CPU/op':>7}  {'busiest process':<22} "
        "machine"
    )
    print(head)
    for setup, step, names in rows:
        print(
            f"  {setup:<9} {step.k:>4} {step.ops:>5} {step.rate:>6.1f}  "
            f"{p50_p99(step.first_text):>19}  {p50_p99(step.op_time):>19}  "
            f"{step.error_count:>6}  {server_cpu_per_op(step, names):>7}  "
            f"{busiest(step, names):<22} "
            f"{step.cpu.get('_machine_busy', 0):.0%}"
        )
    print("\nCPU per process, % of one core over each step's wall time")
    for setup in dict.fromkeys(r[0] for r in rows):
        ours = [r for r in rows if r[0] == setup]
        names = [
            n
            for n in [*ours[0][2], "postgres", "redis", "load generator"]
            if any(n in step.cpu for _, step, _ in ours)
        ]
        print(f"  {setup:<9} {'K':>4}  " + "  ".join(f"{n:>14}" for n in names))
        for _, step, _ in ours:
            cells = []
            for n in names:
                v = step.cpu.get(n)
                cells.append(f"{'—' if v is None else f'{v / step.wall:.0%}':>14}")
            print(f"  {'':<9} {step.k:>4}  " + "  ".join(cells))


# --- the setups ---------------------------------------------------------------------------


BENCH_KEY = secrets.token_urlsafe(50)
BENCH_FEED_SECRET = secrets.token_urlsafe(32)


def base_env(extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without jaiweb's settings, plus ``extra``."""
    ours = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"}
    env = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith("JAIWEB_")}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return {
        **env,
        "DEBUG": "0",
        "SECRET_KEY": BENCH_KEY,  # DEBUG=0 wants real secrets, the same in every process
        "JAIWEB_FEED_SECRET": BENCH_FEED_SECRET,
        "JAIWEB_HTTPS": "0",  # plain http on the loopback: cookies without Secure
        "JAIWEB_PROMPTS_PER_MINUTE": "1000000",
        "JAIWEB_IMAGE_BACKEND": "local",
        "DJANGO_SETTINGS_MODULE": "jaiweb.settings",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def manage(env: dict[str, str], *args: str, timeout: float = 600, root: Path = ROOT) -> str:
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


def make_users(run_manage, count: int, prefix: str, history: int = 0) -> list[dict]:
    """``count`` users with a token, a logged-in cookie and credits; with ``history``, each
    with a session whose branch holds that many drawn panels (written as the loop writes a
    turn, through the store's append), which the step then prompts in."""
    script = SETUP_USERS.format(
        count=count, prefix=prefix, history=history, state=json.dumps(STATE)
    )
    out = run_manage("shell", "-c", script)
    return json.loads(out.strip().splitlines()[-1])


def climb(setup: str, urls: list[str], run_manage, probe: CpuProbe, names, args, pg_counter, gone):
    profiles = (
        Profiles(Path(args.profile), {n: probe.pids[n] for n in names}) if args.profile else None
    )
    """The steps of one setup: K = 1, then each of --sessions until it saturates."""
    steps: list[Step] = []
    for n, k in enumerate([1, *args.ks]):
        t = time.perf_counter()
        users = make_users(run_manage, k, f"load{n}k{k}u", args.history)
        label = "baseline, 1 session" if k == 1 else f"{k} sessions"
        ops = max(args.ops_per_session, BASELINE_OPS) if k == 1 else args.ops_per_session
        print(
            f"  [{label}, {args.watchers * k} watchers, {ops} operations each; "
            f"{k} users made in {time.perf_counter() - t:.1f} s; load "
            f"{os.getloadavg()[0]:.1f}]",
            flush=True,
        )
        profiling = (profiles, f"{setup}-K{k}") if profiles else None
        step = asyncio.run(run_step(k, ops, users, urls, args, probe, pg_counter, profiling))
        for note in gone():
            step.error("process_died", note)
        report_step(setup, step, names)
        if profiles:
            profiles.report()
        steps.append(step)
        if k == 1:
            continue
        why = saturation(steps)
        rest = [x for x in args.ks if x > k]
        if why and rest:
            if args.no_stop:
                print(f"  saturated ({why}); --no-stop: going on to K={rest[0]}")
            else:
                print(f"  saturated: {why}; not going on to K={','.join(map(str, rest))}")
                break
        elif why:
            print(f"  saturated: {why}")
    return steps


def run_embedded(args, root: Path = ROOT) -> list[Step]:
    tmp = Path(tempfile.mkdtemp(prefix="jaiweb-bench-load-", dir=args.sqlite_dir))
    env = base_env(
        {
            "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
            "JAIWEB_MEDIA_ROOT": str(tmp / "media"),
        }
    )
    child = None
    try:
        manage(env, "migrate", "--noinput", "-v", "0", root=root)
        # StudioChild lays its variables over os.environ: an empty value unsets one.
        overrides = {k: "" for k in os.environ if k not in env}
        child = StudioChild({**overrides, **env}, root=root)
        print(
            f"  studio child pid {child.pid} of {root} on {child.url}/, "
            f"SQLite {tmp / 'bench.sqlite3'}, "
            "in-memory channel layer, the in-process runner (4 worker threads)",
            flush=True,
        )
        probe = CpuProbe({"studio": child.pid}, servers=False)
        steps = climb(
            "embedded",
            [child.url + "/"],
            lambda *a: manage(env, *a, root=root),
            probe,
            ["studio"],
            args,
            None,
            lambda: (
                []
                if child.process.poll() is None
                else [f"the studio exited with code {child.process.returncode}"]
            ),
        )
    finally:
        if child is not None:
            child.stop()
            errors = [ln for ln in child.err if "Traceback" in ln or "ERROR" in ln]
            if errors:
                print(f"  the studio child logged {len(errors)} error(s); last lines:")
                for ln in child.err[-15:]:
                    print(f"    | {ln}")
        shutil.rmtree(tmp, ignore_errors=True)
    return steps


PG_COUNTS = ("sessions", "xact_commit", "wal_bytes", "database_bytes")


def pg_counter(url: str) -> dict[str, int | str]:
    """The bench database's connections opened, commits and size on disk, and the WAL
    position of the whole server (other databases' writes move it too)."""
    name = pg_parts(url)[1]
    rows = pg_admin(
        url,
        "SELECT sessions, xact_commit, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0'), "
        "pg_database_size(datname) FROM pg_stat_database WHERE datname = %s",
        (name,),
    )
    return {**dict(zip(PG_COUNTS, map(int, rows[0]), strict=True)), "database": name}


def flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def bench_cluster(args, prefix: str, logs: Path | None = None):
    """A 2-web cluster of ``args.runners`` runners (not started) on a fresh scratch
    database and a flushed Redis db, and the folder that holds its media and logs."""
    from jaiweb.devtools.cluster import Cluster

    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    pg_create_scratch(args.database_url)
    flush_redis(args.redis_url)
    env = base_env(
        {
            "DATABASE_URL": args.database_url,
            "REDIS_URL": args.redis_url,
            "JAIWEB_MEDIA_ROOT": str(tmp / "media"),
            **({"JAIWEB_RUNNER_NICE": args.runner_nice} if args.runner_nice else {}),
        }
    )
    cluster = Cluster(
        web=2,
        runners=args.runners,
        port=0,
        logs=logs or tmp / "logs",
        env=env,
        workers=args.workers,
        stop_timeout=5,
    )
    return cluster, tmp


def run_cluster(args) -> list[Step]:
    cluster, tmp = bench_cluster(args, "jaiweb-bench-load-", Path(args.logs) if args.logs else None)
    try:
        started = time.perf_counter()
        cluster.start()
        version = pg_admin(args.database_url, "SELECT version()")[0][0].split(" on ")[0]
        print(
            f"  cluster up in {time.perf_counter() - started:.1f} s: "
            + "; ".join(
                f"{m.name} pid {m.pid}" + (f" {m.url}" if m.url else "")
                for m in cluster.members.values()
            )
            + f"; {version}, Redis {args.redis_url}; runagents --workers {args.workers}",
            flush=True,
        )
        names = list(cluster.members)
        probe = CpuProbe({n: m.pid for n, m in cluster.members.items()}, servers=True)
        steps = climb(
            "cluster",
            cluster.urls,
            cluster.manage,
            probe,
            names,
            args,
            lambda: pg_counter(args.database_url),
            lambda: [
                f"{m.name} exited with code {m.process.returncode}; its log: "
                + " | ".join(m.log_tail(3).splitlines())[-300:]
                for m in cluster.members.values()
                if not m.running
            ],
        )
    finally:
        cluster.stop()
        for m in cluster.members.values():
            text = m.log.read_text(errors="replace") if m.log.exists() else ""
            errors = [ln for ln in text.splitlines() if "Traceback" in ln or " ERROR " in ln]
            if errors:
                print(f"  {m.name} logged {len(errors)} error(s); the end of {m.log}:")
                for ln in text.splitlines()[-15:]:
                    print(f"    | {ln}")
        pg_drop_scratch(args.database_url)
        flush_redis(args.redis_url)
        shutil.rmtree(tmp, ignore_errors=True)
    return steps


def all_cpu() -> dict[int, tuple[float, str]]:
    """CPU seconds so far and the command line of every process."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            spent = cpu_seconds(int(entry.name))
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if spent is not None:
            out[int(entry.name)] = (spent, cmd.strip())
    return out


def other_load(seconds: float = 2.0) -> str:
    """What else is using the CPU over the next ``seconds`` (a test suite, another bench)."""
    before, machine0 = all_cpu(), machine_cpu()
    time.sleep(seconds)
    after, machine1 = all_cpu(), machine_cpu()
    busy = (machine1[0] - machine0[0]) / max(machine1[1] - machine0[1], 1)
    used = sorted(
        ((after[p][0] - before[p][0], after[p][1]) for p in after if p in before),
        reverse=True,
    )
    top = [f"{cmd[:70]} {t / seconds:.0%}" for t, cmd in used[:4] if t / seconds >= 0.05]
    return f"machine {busy:.0%} busy; " + ("; ".join(top) or "no process above 5 % of a core")


def main() -> None:
    parser_ = parser(__doc__, redis=True)
    parser_.add_argument("--setup", choices=["embedded", "cluster", "both"], default="both")
    parser_.add_argument("--sessions", help="the K steps, ascending (10,50,200; quick 10,50)")
    parser_.add_argument(
        "--ops-per-session", type=int, help="prompts each session sends in a step (3; quick 2)"
    )
    parser_.add_argument("--quick", action="store_true", help="K = 10,50 and 2 operations each")
    parser_.add_argument(
        "--timeout", type=float, default=120, help="seconds an operation (or a request) may take"
    )
    parser_.add_argument("--workers", type=int, default=4, help="runagents --workers (cluster)")
    parser_.add_argument(
        "--runner-nice",
        help="JAIWEB_RUNNER_NICE for the cluster's runagents (default: the studio's own)",
    )
    parser_.add_argument(
        "--runners", type=int, default=2, help="runagents processes of the cluster (2)"
    )
    parser_.add_argument(
        "--watchers", type=int, default=2, help="websockets per session (2; at least 1)"
    )
    parser_.add_argument(
        "--no-stop", action="store_true", help="run every K even after it saturates"
    )
    parser_.add_argument(
        "--history",
        type=int,
        default=0,
        help="drawn panels each session holds before its step (0: a new session)",
    )
    parser_.add_argument("--logs", help="keep the cluster's logs in this folder (default: removed)")
    parser_.add_argument(
        "--profile",
        metavar="DIR",
        help="py-spy record each server process during each step into DIR (py-spy needed)",
    )
    parser_.add_argument(
        "--compare",
        metavar="CHECKOUT",
        help="embedded only: the same steps on another checkout's studio (its code, this "
        "venv), in turn with this one's, --rounds times; then the medians side by side",
    )
    parser_.add_argument(
        "--rounds", type=int, default=3, help="rounds of each checkout with --compare (3)"
    )
    args = parser_.parse_args()
    if args.compare:
        compare_main(parser_, args)
        return
    if args.profile and not py_spy():
        parser_.error("--profile needs py-spy: .venv/bin/pip install py-spy (not a dependency)")
    if args.watchers < 1:
        parser_.error("--watchers must be at least 1: operations end when a watcher sees them end")
    args.ks = sorted(
        {int(x) for x in (args.sessions or ("10,50" if args.quick else "10,50,200")).split(",")}
        - {1}
    )
    if args.ops_per_session is None:
        args.ops_per_session = 2 if args.quick else 3
    header(
        args,
        f"setup {args.setup}, K {','.join(map(str, args.ks))}, {args.ops_per_session} "
        "operations per session" + history_note(args) + ("; --quick" if args.quick else ""),
    )
    print(f"before the run, over 2 s: {other_load()}")
    started = time.monotonic()
    rows: list[tuple[str, Step, list[str]]] = []
    if args.setup in ("embedded", "both"):
        print("\n[embedded: manage.py studio, SQLite, in-memory layer]", flush=True)
        rows += [("embedded", s, ["studio"]) for s in run_embedded(args)]
    if args.setup in ("cluster", "both"):
        if not (args.database_url and args.redis_url):
            print(
                "\n[cluster] skipped: it needs a scratch PostgreSQL database and a Redis db it "
                "may flush: --database-url / $JAIWEB_BENCH_DATABASE_URL and --redis-url / "
                "$JAIWEB_BENCH_REDIS_URL"
            )
        else:
            print(
                f"\n[cluster: 2 daphne + {args.runners} runagents, PostgreSQL, Redis]", flush=True
            )
            names = ["web-1", "web-2", *(f"runner-{i}" for i in range(1, args.runners + 1))]
            rows += [("cluster", s, names) for s in run_cluster(args)]
    print_summary(rows)
    keep_cpu_growth(rows)
    keep_answer_times(rows)
    total = sum(s.error_count for _, s, _ in rows)
    print(f"\n  errors over the whole run: {total}" + ("" if not total else "  (must be 0)"))
    print(f"  (whole run {time.monotonic() - started:.0f} s; {load()} at the end)")


def history_note(args) -> str:
    return f", each in a session of {args.history} drawn panels" if args.history else ""


def keep_cpu_growth(rows: list[tuple[str, Step, list[str]]]) -> None:
    """Keep each setup's CPU per operation at its largest K beside the same at K = 1."""
    for setup in ("embedded", "cluster"):
        steps = {s.k: (s, names) for kind, s, names in rows if kind == setup}
        top = max(steps, default=1)
        if 1 not in steps or top == 1:
            continue
        figure(
            f"CPU per operation, {top} busy sessions ({setup})",
            cpu_per_op(*steps[top]) * 1e3,
            cpu_per_op(*steps[1]) * 1e3,
            unit="ms",
            floor_name="the same with 1 busy session",
            backend="SQLite" if setup == "embedded" else "PostgreSQL + Redis",
            target=1.3,
        )


def keep_answer_times(rows: list[tuple[str, Step, list[str]]]) -> None:
    """Keep the embedded studio's POST /prompts p99 at its largest K beside K = 1's: of all
    the answers (the step's start sends every session's first prompt at once), and of
    those after each session's first."""
    steps = {s.k: s for kind, s, _ in rows if kind == "embedded"}
    top = max(steps, default=1)
    if 1 not in steps or top == 1:
        return
    for label, times in (
        ("every answer", lambda s: s.post_time),
        ("after each session's first prompt", lambda s: s.post_later),
    ):
        busy, alone = times(steps[top]), times(steps[1])
        if busy and alone:
            figure(
                f"POST /prompts answer p99, {top} busy sessions, {label} (embedded; "
                "target ≤ 300 ms)",
                percentile(busy, 0.99) * 1e3,
                percentile(alone, 0.99) * 1e3,
                unit="ms",
                floor_name="the same with 1 busy session",
                backend="SQLite",
            )


def cpu_per_op(step: Step, names: list[str]) -> float:
    """CPU of the server processes per completed operation, in seconds (nan: none done)."""
    spent = [step.cpu.get(n) for n in [*names, "postgres", "redis"]]
    return sum(v for v in spent if v is not None) / step.ops if step.ops else float("nan")


def compare_main(parser_, args) -> None:
    """A/B on the embedded setup: this checkout and ``--compare``'s, one after the other
    in each round, so that both see the same load on the box; medians over the rounds."""
    other = Path(args.compare).resolve()
    if not (other / "manage.py").is_file():
        parser_.error(f"--compare {other}: no manage.py there")
    args.ks = sorted({int(x) for x in (args.sessions or "10,50").split(",")} - {1})
    args.no_stop = True  # every K in every round: the medians compare the same steps
    if args.ops_per_session is None:
        args.ops_per_session = 2 if args.quick else 3
    roots = {"this": ROOT, "other": other}
    header(
        args,
        f"embedded A/B: this checkout ({ROOT}) and {other}, {args.rounds} rounds, K "
        f"{','.join(map(str, args.ks))}, {args.ops_per_session} operations per session"
        + history_note(args),
    )
    seen: dict[tuple[str, int], list[tuple[float, float, int, float, float, float]]] = {}
    loads = []
    for round_ in range(1, args.rounds + 1):
        for name, root in roots.items():
            print(f"\n[round {round_}: {name} ({root}), {load()}]", flush=True)
            for step in run_embedded(args, root):
                posts = step.post_time or [float("nan")]
                later = step.post_later or [float("nan")]
                row = (
                    step.rate,
                    cpu_per_op(step, ["studio"]),
                    step.error_count,
                    statistics.median(posts),
                    percentile(posts, 0.99),
                    percentile(later, 0.99),
                )
                seen.setdefault((name, step.k), []).append(row)
            loads.append(os.getloadavg()[0])
    print(
        f"\nmedians over {args.rounds} rounds (load average 1 min during the run: "
        f"{min(loads):.1f}–{max(loads):.1f})"
    )
    print(
        f"  {'K':>4}  {'ops/s this / other':>20}  {'ratio':>6}  {'CPU/op this / other':>22}  "
        f"{'POST p50 this / other':>22}  {'POST p99 this / other':>22}  "
        f"{'p99 after the first':>22}  errors"
    )
    for k in [1, *args.ks]:
        this, that = seen.get(("this", k), []), seen.get(("other", k), [])
        if not this or not that:
            continue
        rate = (statistics.median(r[0] for r in this), statistics.median(r[0] for r in that))
        cpu = (statistics.median(r[1] for r in this), statistics.median(r[1] for r in that))
        errors = sum(r[2] for r in this + that)
        p50 = (statistics.median(r[3] for r in this), statistics.median(r[3] for r in that))
        p99 = (statistics.median(r[4] for r in this), statistics.median(r[4] for r in that))
        p99_later = (
            statistics.median(r[5] for r in this),
            statistics.median(r[5] for r in that),
        )
        print(
            f"  {k:>4}  {rate[0]:>8.1f} / {rate[1]:<9.1f}  {rate[0] / rate[1]:>5.2f}x  "
            f"{cpu[0] * 1e3:>8.0f} / {cpu[1] * 1e3:<4.0f} ms{'':<6}  "
            f"{p50[0] * 1e3:>8.0f} / {p50[1] * 1e3:<4.0f} ms{'':<6}  "
            f"{p99[0] * 1e3:>8.0f} / {p99[1] * 1e3:<4.0f} ms{'':<6}  "
            f"{p99_later[0] * 1e3:>8.0f} / {p99_later[1] * 1e3:<4.0f} ms{'':<6}  {errors}"
        )
    for name in roots:
        one, fifty = seen.get((name, 1)), seen.get((name, max(args.ks)))
        if one and fifty:
            growth = statistics.median(r[1] for r in fifty) / statistics.median(r[1] for r in one)
            print(f"  {name}: CPU/op at K={max(args.ks)} / K=1 = {growth:.2f}x")
    print_ranges(seen, [1, *args.ks])
    print(f"  (each round's rows: {json.dumps({f'{n} K={k}': v for (n, k), v in seen.items()})})")


def print_ranges(seen: dict, ks: list[int]) -> None:
    """Each side's lowest and highest CPU/op and POST p99 over the rounds, and whether the
    two sides' ranges overlap: a difference of medians inside overlapping ranges is one
    this bench cannot tell from its spread. Ranges apart are no proof either: a commit
    compared with itself over two rounds came out apart in two cells of six."""
    print("\nranges over the rounds (lowest–highest): overlap, the medians' difference is")
    print("within the rounds' spread; apart, the ranges do not meet (over a few rounds, chance")
    print("can do that)")
    print(f"  {'K':>4}  {'CPU/op this | other':>26}  {'POST p99 this | other':>28}")
    for k in ks:
        this, that = seen.get(("this", k), []), seen.get(("other", k), [])
        if not this or not that:
            continue
        cells = []
        for column in (1, 4):
            mine = [r[column] * 1e3 for r in this]
            theirs = [r[column] * 1e3 for r in that]
            apart = max(mine) < min(theirs) or max(theirs) < min(mine)
            cells.append(
                f"{min(mine):.0f}–{max(mine):.0f} | {min(theirs):.0f}–{max(theirs):.0f} ms "
                f"{'apart' if apart else 'overlap'}"
            )
        print(f"  {k:>4}  {cells[0]:>26}  {cells[1]:>28}")


if __name__ == "__main__":
    main()
