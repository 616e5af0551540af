"""A watcher's catch-up read on a renderer thread: what opening a connection for each one
costs (the commit before issue 17 closed it around every render: CONN_MAX_AGE=0), beside
a connection the renderer keeps (SQLite since issue 17). CPU time of this process, per
read, medians of 5 runs of 200; docs/PERFORMANCE.md ("CPU per operation under load").

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
                runs = []
                for _ in range(RUNS):
                    started = time.process_time()
                    for _ in range(READS):
                        if closing:
                            close_old_connections()
                        read()
                        if closing:
                            close_old_connections()
                    runs.append((time.process_time() - started) / READS * 1e3)
                close_old_connections()
                print(
                    f"  {what}, {how}: {statistics.median(runs):.2f} ms CPU per read "
                    f"(runs {', '.join(f'{r:.2f}' for r in runs)})"
                )


def main() -> None:
    bench_main(
        __file__,
        __doc__,
        lambda parser: None,
        run_backend,
        workload=lambda args: f"{RUNS} runs of {READS} reads of a fresh session",
    )


if __name__ == "__main__":
    main()
