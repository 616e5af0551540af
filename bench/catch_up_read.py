"""A watcher's catch-up read on a renderer thread: what opening a connection for each one
costs (the commit before issue 17 closed it around every render: CONN_MAX_AGE=0), beside
a connection the renderer keeps (SQLite since issue 17). Then a path read of a session
with a page of drawn panels, as a pass after an entry makes it: the regions' context, and
every region rendered from it; a write from the studio page on that session (its HTTP
answer) with the pass its announcement starts; and the pass after each operation of new
sessions, as a watcher of each gets it under load, each pass finding the kept HTML as the
one before left it. CPU time of this process, per read, medians of 5 runs (of every pass,
for the last); docs/PERFORMANCE.md ("CPU per operation under load").

    .venv/bin/python bench/catch_up_read.py          # SQLite (+ PostgreSQL if named)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import bench_main, describe_database, scratch_django  # noqa: E402

RUNS, READS = 5, 200
PANELS = 24  # a page of the strip (STRIP_PAGE)


def cpu_per_read(read) -> tuple[float, list[float]]:
    """The median CPU milliseconds of ``read`` over RUNS runs of READS calls, and each run's."""
    runs = []
    for _ in range(RUNS):
        started = time.process_time()
        for _ in range(READS):
            read()
        runs.append((time.process_time() - started) / READS * 1e3)
    return statistics.median(runs), runs


def drawn_session(user):
    """A session whose leaf shows PANELS panels, each drawn by the offline director."""
    from jaiweb.render.models import Wallet
    from jaiweb.render.services import wallet_get_or_create
    from jaiweb.store.services import operation_accept, session_create
    from tests.support.runs import run_pending

    wallet_get_or_create(user=user)
    Wallet.objects.filter(user=user).update(balance=10 * PANELS * 10)
    state = {"characters": {"猪猪侠": {}, "超人强": {}}, "permission_mode": "auto"}
    session = session_create(owner=user, title="drawn", initial_app_state=state)
    for n in range(PANELS):
        operation_accept(session_id=session.id, text=f"/draw 猪猪侠和超人强在擂台上，第{n + 1}回合")
        run_pending()
    return session


def path_read(user) -> None:
    """A pass's path read of a drawn session: its context, then its regions rendered."""
    from jaiweb.live.catch_up import REGIONS
    from jaiweb.store.selectors import session_get
    from jaiweb.studio.regions import region_parts, studio_context

    drawn = drawn_session(user)
    session = session_get(session_id=drawn.id)
    context = studio_context(session=session)
    shown = len(context["strip"].panels)
    print(f"  a session with {shown} panels on its leaf ({session.entry_count} entries):")
    for what, read in (
        ("studio_context", lambda: studio_context(session=session)),
        (
            "every region rendered (zh-hans)",
            lambda: region_parts(context=context, language="zh-hans", names=REGIONS),
        ),
        (
            "the strip alone rendered",
            lambda: region_parts(context=context, language="zh-hans", names=["strip"]),
        ),
    ):
        median, runs = cpu_per_read(read)
        print(
            f"    {what}: {median:.2f} ms CPU per read (runs {', '.join(f'{r:.2f}' for r in runs)})"
        )
    write_and_pass(user, drawn)


def run_backend(backend: str, args) -> None:
    with scratch_django(backend, args, prefix="jaiweb-bench-catch-up-"):
        from django.contrib.auth import get_user_model
        from django.db import close_old_connections

        from jaiweb.agent.state import DEFAULT_STATE
        from jaiweb.store.selectors import session_get
        from jaiweb.store.services import session_create
        from jaiweb.studio.regions import studio_context

        print(describe_database(backend))
        user = get_user_model().objects.create_user("bench")
        session = session_create(owner=user, title="bench", initial_app_state=DEFAULT_STATE)

        def session_row() -> None:
            session_get(session_id=session.id)

        def regions_read() -> None:
            studio_context(session=session_get(session_id=session.id))

        for what, read in (
            ("session_get", session_row),
            ("session_get + studio_context", regions_read),
        ):
            for how, closing in (("connection closed around it", True), ("connection kept", False)):

                def once(read=read, closing=closing) -> None:
                    if closing:
                        close_old_connections()
                    read()
                    if closing:
                        close_old_connections()

                median, runs = cpu_per_read(once)
                close_old_connections()
                print(
                    f"  {what}, {how}: {median:.2f} ms CPU per read "
                    f"(runs {', '.join(f'{r:.2f}' for r in runs)})"
                )
        path_read(user)
        passes_after_operations(user)


SESSIONS, OPERATIONS = 10, 8  # the passes part: new sessions, and /draw prompts in each


def passes_after_operations(user) -> None:
    """The pass after each operation of a new session: the database version and the
    regions' context read, then every region rendered from it. Between passes an operation
    adds a turn and a panel, so each pass draws the new turn and panel and keeps the rest."""
    from jaiweb.live.catch_up import REGIONS
    from jaiweb.store.selectors import session_get
    from jaiweb.store.services import operation_accept, session_create
    from jaiweb.studio.regions import _version, region_parts, studio_context
    from tests.support.runs import run_pending

    state = {"characters": {"猪猪侠": {"mood": "平静"}}, "permission_mode": "auto"}
    reads: list[float] = []
    renders: list[float] = []
    for s in range(SESSIONS):
        session = session_create(owner=user, title=f"passes {s}", initial_app_state=state)
        for n in range(OPERATIONS):
            operation_accept(session_id=session.id, text=f"/draw 猪猪侠在擂台上，第{n + 1}回合")
            run_pending()
            started = time.process_time()
            watched = session_get(session_id=session.id)
            context = studio_context(session=watched, **_version(watched)[1])
            read = time.process_time()
            region_parts(context=context, language="zh-hans", names=REGIONS)
            reads.append(read - started)
            renders.append(time.process_time() - read)
    print(f"  the pass after each operation ({SESSIONS} new sessions, {OPERATIONS} /draw each):")
    for what, times in (("version and context read", reads), ("every region rendered", renders)):
        print(
            f"    {what}: {statistics.median(times) * 1e3:.2f} ms CPU per pass (median of "
            f"{len(times)}; mean {statistics.mean(times) * 1e3:.2f})"
        )


WRITES = 60  # writes a run of the studio-write part


def write_and_pass(user, session) -> None:
    """A studio write and its pass: the permission mode switched from the page (an
    ``app_state`` entry, answered with every region), then the changed pass that the
    write's announcement starts for the sender's socket."""
    from django.test import Client

    from jaiweb.live import versions
    from jaiweb.store.selectors import app_state_at, session_get
    from jaiweb.studio.pass_counts import pass_counts
    from jaiweb.studio.regions import changed_regions_html, region_versions

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    names = ["tree", "strip", "character-state", "controls", "prompt-leaf"]  # an entry's

    def write() -> None:
        session = session_get(session_id=session_id)
        mode = "ask" if app_state_at(session=session)["permission_mode"] == "auto" else "auto"
        answer = client.post(
            f"/sessions/{session_id}/permission-mode",
            {"mode": mode, "expected_leaf_id": session.leaf_id},
            HTTP_HX_REQUEST="true",
            HTTP_ACCEPT_LANGUAGE="en",
        )
        if answer.status_code != 200:
            raise RuntimeError(f"the write answered {answer.status_code}")
        moved = region_versions(versions.fact_counts(session_id))
        if not changed_regions_html(session_id=session_id, language="en", versions=moved,
                                    names=names):  # fmt: skip
            raise RuntimeError("the pass after the write rendered nothing")

    session_id = session.id
    before = pass_counts()["reads"]
    runs = []
    for _ in range(RUNS):
        started = time.process_time()
        for _ in range(WRITES):
            write()
        runs.append((time.process_time() - started) / WRITES * 1e3)
    after = pass_counts()["reads"]
    reads = ", ".join(
        f"{kind} {(after[kind] - before[kind]) / (RUNS * WRITES):.1f}"
        for kind in after
        if after[kind] != before[kind]
    )
    print(
        f"    a studio write and its pass: {statistics.median(runs):.2f} ms CPU per write "
        f"(runs {', '.join(f'{r:.2f}' for r in runs)}; the session grows an entry a "
        f"write); reads per write: {reads}"
    )


def main() -> None:
    bench_main(
        __file__,
        __doc__,
        lambda parser: None,
        run_backend,
        workload=lambda args: (
            f"{RUNS} runs of {READS} reads of a fresh session, then of one with {PANELS} "
            f"panels; {RUNS} runs of {WRITES} studio writes on it"
        ),
    )


if __name__ == "__main__":
    main()
