"""Writers on one SQLite file from the threads of one process: what ships
(jaiweb.store.sqlite: the threads take turns on a lock) beside Django's own SQLite backend
(each waiter polls in SQLite's busy handler), the same transactions in the same run.

Each thread repeats: a little Python (the work a step does between writes), `BEGIN
IMMEDIATE` as transaction.atomic() sends it, one `INSERT` of a 300-byte row, `COMMIT`. The
file is in WAL mode with `synchronous=FULL`, as settings configure the product's. Printed:
transactions a second and the wait at `BEGIN` (p50 / p99), medians of --runs runs, the two
backends alternating run by run; docs/PERFORMANCE.md ("SQLite writers").

    .venv/bin/python bench/sqlite_writers.py
    .venv/bin/python bench/sqlite_writers.py --sqlite-dir /dev/shm     # no fsync: the CPU's
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import figure, header, load, parser, sqlite_scratch_dir  # noqa: E402

SHIPPED, DJANGO = "jaiweb.store.sqlite", "django.db.backends.sqlite3"
ROW = "x" * 300


def work(n: int) -> int:
    return sum(range(n))  # Python holding the GIL, as a step does between its writes


def one_run(
    config: dict, threads: int, transactions: int, outside: int, inside: int
) -> tuple[float, list[float]]:
    from django.db.utils import ConnectionHandler

    handler = ConnectionHandler({"default": config})
    waits: list[float] = []
    start = threading.Barrier(threads + 1)

    def writer(count: int) -> None:
        conn = handler["default"]
        conn.ensure_connection()
        mine = []
        start.wait()
        for _ in range(count):
            work(outside)
            asked = time.perf_counter()
            conn._start_transaction_under_autocommit()  # what atomic() does first on SQLite
            mine.append(time.perf_counter() - asked)
            conn.connection.execute("INSERT INTO t (v) VALUES (?)", (ROW,))
            work(inside)
            conn.commit()
        waits.extend(mine)
        conn.close()

    each = transactions // threads
    pool = [threading.Thread(target=writer, args=(each,)) for _ in range(threads)]
    for t in pool:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in pool:
        t.join()
    wall = time.perf_counter() - began
    return each * threads / wall, waits


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--threads", default="1,4,8", help="thread counts (default 1,4,8)")
    p.add_argument("--transactions", type=int, default=2000, help="per run (default 2000)")
    p.add_argument("--runs", type=int, default=3, help="runs per backend and count (default 3)")
    p.add_argument(
        "--outside",
        type=int,
        default=50_000,
        help="Python between transactions (default 50000 additions)",
    )
    p.add_argument(
        "--inside",
        type=int,
        default=50_000,
        help="Python inside each, between the INSERT and the COMMIT (default 50000)",
    )
    args = p.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jaiweb.settings")
    import django

    django.setup()
    from django.db.utils import ConnectionHandler

    from jaiweb.settings import parse_database_url

    header(args, "threads of one process writing one SQLite file, the shipped backend and Django's")
    tmp = sqlite_scratch_dir(args, "jaiweb-bench-writers-")
    try:
        counts = [int(x) for x in args.threads.split(",")]
        print(f"\n{args.transactions} transactions per run, {args.runs} runs; medians")
        print(f"  {'threads':>7}  {'backend':<34} {'tx/s':>7}  BEGIN wait p50 / p99")
        for threads in counts:
            figures: dict[str, list[tuple[float, float, float]]] = {SHIPPED: [], DJANGO: []}
            for run in range(args.runs):
                for engine in (SHIPPED, DJANGO) if run % 2 == 0 else (DJANGO, SHIPPED):
                    file = tmp / f"{engine.rsplit('.', 1)[-1]}-{threads}-{run}.sqlite3"
                    config = parse_database_url(f"sqlite:///{file}", tmp)
                    config["ENGINE"] = engine
                    setup = ConnectionHandler({"default": config})["default"]
                    with setup.cursor() as cursor:
                        cursor.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
                    setup.close()
                    rate, waits = one_run(
                        config, threads, args.transactions, args.outside, args.inside
                    )
                    waits.sort()
                    p50, p99 = waits[len(waits) // 2], waits[int(len(waits) * 0.99)]
                    figures[engine].append((rate, p50, p99))
            for engine, label in (
                (SHIPPED, "shipped (in turn on a lock)"),
                (DJANGO, "floor: Django's (busy handler)"),
            ):
                rows = figures[engine]
                rate = statistics.median(r[0] for r in rows)
                p50 = statistics.median(r[1] for r in rows) * 1e3
                p99 = statistics.median(r[2] for r in rows) * 1e3
                print(f"  {threads:>7}  {label:<34} {rate:>7.0f}  {p50:.2f} / {p99:.1f} ms")
            ratio = statistics.median(r[0] for r in figures[SHIPPED]) / statistics.median(
                r[0] for r in figures[DJANGO]
            )
            print(f"  {'':>7}  shipped / floor: {ratio:.2f}x the transactions a second; {load()}")
            figure(
                f"SQLite write transactions a second, {threads} threads",
                statistics.median(r[0] for r in figures[SHIPPED]),
                statistics.median(r[0] for r in figures[DJANGO]),
                unit="tx/s (more is better)",
                floor_name="Django's own SQLite backend",
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
