"""The answer time of POST /api/v1/sessions/{id}/prompts on a cluster (PostgreSQL + Redis,
2 daphne and N runagents): K concurrent sessions, each with its live watchers, sending
prompts one after the other as bench/load.py's users do, beside one session alone (the
floor) on the same cluster in the same run. It asserts nothing. What the figures mean and
the last run's: docs/PERFORMANCE.md ("The cluster's request path").

    JAIWEB_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/jaiweb_bench_prompts \
    JAIWEB_BENCH_REDIS_URL=redis://127.0.0.1:6379/5 \
    .venv/bin/python bench/prompt_requests.py --sessions 50 --runners 2
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    figure,
    header,
    load,
    parser,
    pg_admin,
    pg_drop_scratch,
)
from bench.load import (  # noqa: E402
    CpuProbe,
    Step,
    bench_cluster,
    flush_redis,
    make_users,
    other_load,
    run_step,
)
from bench.webtools import percentile  # noqa: E402

FLOOR_OPS = 12  # prompts of the one session alone: enough for a median and a worst case


def answer_times(step: Step) -> str:
    """The POST answers' p50 / p99 / max in ms, and how many there were."""
    times = step.post_time
    if not times:
        return "no answers"
    return (
        f"p50 {statistics.median(times) * 1e3:,.0f} ms, p99 {percentile(times, 0.99) * 1e3:,.0f}"
        f" ms, max {max(times) * 1e3:,.0f} ms ({len(times)} answers)"
        + (
            f"; after each session's first prompt p50 {statistics.median(later) * 1e3:,.0f} ms,"
            f" p99 {percentile(later, 0.99) * 1e3:,.0f} ms"
            if (later := step.post_later)
            else ""
        )
    )


def web_cpu(step: Step, names: list[str]) -> str:
    parts = [
        f"{n} {step.cpu[n] / step.wall:.0%}"
        for n in [*names, "postgres", "redis"]
        if step.cpu.get(n) is not None and step.wall
    ]
    return "; ".join(parts)


def run(args) -> None:
    cluster, tmp = bench_cluster(args, "jaiweb-bench-prompts-")
    try:
        cluster.start()
        names = list(cluster.members)
        version = pg_admin(args.database_url, "SELECT version()")[0][0].split(" on ")[0]
        print(
            f"  cluster: {', '.join(names)}; runagents --workers {args.workers}; {version}; "
            f"Redis {args.redis_url}",
            flush=True,
        )
        probe = CpuProbe({n: m.pid for n, m in cluster.members.items()}, servers=True)
        steps: dict[int, Step] = {}
        for n, k in enumerate([1, args.sessions]):
            users = make_users(cluster.manage, k, f"prompts{n}k{k}u")
            ops = max(args.ops_per_session, FLOOR_OPS) if k == 1 else args.ops_per_session
            before = os.getloadavg()
            step = asyncio.run(run_step(k, ops, users, cluster.urls, args, probe, None))
            after = os.getloadavg()
            steps[k] = step
            label = "one session (the floor)" if k == 1 else f"{k} sessions"
            print(
                f"  K={k:<3} {label}: POST /prompts {answer_times(step)}; {step.ops} operations "
                f"completed in {step.wall:.1f} s, errors {step.error_count}; load (1 min) "
                f"{before[0]:.1f} before, {after[0]:.1f} after; machine "
                f"{step.cpu['_machine_busy']:.0%} of {os.cpu_count()} cores busy",
                flush=True,
            )
            print(f"        CPU, % of one core: {web_cpu(step, names)}")
            for note in step.error_notes:
                print(f"        ! {note}")
        busy, alone = steps[args.sessions], steps[1]
        if busy.post_time and alone.post_time:
            p50, floor = statistics.median(busy.post_time), statistics.median(alone.post_time)
            print(
                f"\n  POST /prompts at K={args.sessions}: p50 {p50 * 1e3:,.0f} ms, p99 "
                f"{percentile(busy.post_time, 0.99) * 1e3:,.0f} ms; floor (K=1, same run) p50 "
                f"{floor * 1e3:,.0f} ms, p99 {percentile(alone.post_time, 0.99) * 1e3:,.0f} ms; "
                f"{args.runners} runner processes; {load()}"
            )
            figure(
                f"POST /prompts answer, {args.sessions} busy sessions (cluster, p50; "
                "target ≤ 150 ms)",
                p50 * 1e3,
                floor * 1e3,
                unit="ms",
                floor_name="the same with 1 busy session",
                backend="PostgreSQL + Redis",
            )
            figure(
                f"POST /prompts answer, {args.sessions} busy sessions (cluster, p99; "
                "target ≤ 500 ms)",
                percentile(busy.post_time, 0.99) * 1e3,
                percentile(alone.post_time, 0.99) * 1e3,
                unit="ms",
                floor_name="the same with 1 busy session",
                backend="PostgreSQL + Redis",
            )
    finally:
        cluster.stop()
        for m in cluster.members.values():
            text = m.log.read_text(errors="replace") if m.log.exists() else ""
            errors = [ln for ln in text.splitlines() if "Traceback" in ln or " ERROR " in ln]
            if errors:
                print(f"  {m.name} logged {len(errors)} error(s); its last lines:")
                for ln in text.splitlines()[-10:]:
                    print(f"    | {ln}")
        pg_drop_scratch(args.database_url)
        flush_redis(args.redis_url)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser_ = parser(__doc__, redis=True)
    parser_.add_argument("--sessions", type=int, default=50, help="K, the busy step (50)")
    parser_.add_argument("--runners", type=int, default=2, help="runagents processes (2)")
    parser_.add_argument("--workers", type=int, default=4, help="runagents --workers (4)")
    parser_.add_argument(
        "--runner-nice",
        help="JAIWEB_RUNNER_NICE for the runagents (default: the studio's own)",
    )
    parser_.add_argument(
        "--ops-per-session", type=int, default=3, help="prompts each busy session sends (3)"
    )
    parser_.add_argument("--watchers", type=int, default=2, help="websockets per session (2)")
    parser_.add_argument(
        "--timeout", type=float, default=120, help="seconds an operation (or a request) may take"
    )
    args = parser_.parse_args()
    if not (args.database_url and args.redis_url):
        parser_.error(
            "the cluster needs a scratch PostgreSQL database and a Redis db it may flush: "
            "--database-url / $JAIWEB_BENCH_DATABASE_URL and --redis-url / "
            "$JAIWEB_BENCH_REDIS_URL"
        )
    if args.sessions < 2 or args.watchers < 1:
        parser_.error("--sessions must be at least 2 and --watchers at least 1")
    header(
        args,
        f"K=1 then K={args.sessions}, {args.runners} runner processes, JAIWEB_RUNNER_NICE "
        + (args.runner_nice or "unset (the default)"),
    )
    print(f"before the run, over 2 s: {other_load()}", flush=True)
    started = time.monotonic()
    run(args)
    print(f"  (whole run {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
