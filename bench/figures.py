"""Runs the benches that feed docs/PERFORMANCE.md's table and writes the table (./dev bench).

Each bench runs as its own process with ``JAIWEB_BENCH_FIGURES`` naming a file; its
headline figures land there beside their floors (``bench.common.figure``), with the load
and the commit at the moment each was taken. The table between the two markers of
docs/PERFORMANCE.md is then replaced by one row per figure, so the page always shows
the last run, and the history stays in git. The rows' data is kept in
bench/figures.json, so that a partial run (``--only``) replaces only its own rows.
Every bench's own printout goes to the terminal as it runs.

    ./dev bench                          # every bench below, then the table
    ./dev bench --only journal_core,store
    ./dev bench --table-only FILE        # write the table from a kept figures file

PostgreSQL and Redis are used for the benches that measure them: a scratch database
``jaiweb_bench_figures`` and Redis db 13, unless ``JAIWEB_BENCH_DATABASE_URL`` /
``JAIWEB_BENCH_REDIS_URL`` name others (bench/common.py says what a bench may drop).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "PERFORMANCE.md"
DATA = ROOT / "bench" / "figures.json"  # the table's figures, for a partial run
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
DATABASE_URL = "postgres://postgres@127.0.0.1:5432/jaiweb_bench_figures"
REDIS_URL = "redis://127.0.0.1:6379/13"

# (name, arguments): sizes chosen so the whole run takes well under an hour on 2 cores.
BENCHES = [
    ("journal_core", []),
    ("director_memory", []),
    ("store", ["--parts", "appends"]),
    ("agent_loop", ["--prompts", "20", "--renders", "100", "--service-renders", "20"]),
    ("sqlite_writers", ["--threads", "1,8", "--runs", "3"]),
    ("timeline", []),
    ("web", ["--parts", "growth,sessions,fanout", "--repeat", "5"]),
    ("recovery", ["--no-journal-check", "--cap", "90"]),
    ("long_renders", ["--renders", "6", "--seconds", "10"]),
    ("load", ["--quick"]),
    ("prompt_requests", []),
    ("export", []),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated bench names (default: all)")
    parser.add_argument("--table-only", metavar="FILE", help="write the table from FILE")
    args = parser.parse_args()
    if args.table_only:
        write_table(read_figures(Path(args.table_only)))
        return
    wanted = set(args.only.split(",")) if args.only else None
    runs = [(n, a) for n, a in BENCHES if wanted is None or n in wanted]
    unknown = (wanted or set()) - {n for n, _ in BENCHES}
    if unknown:
        parser.error(f"no bench named {', '.join(sorted(unknown))}")
    kept = Path(tempfile.mkstemp(prefix="jaiweb-figures-", suffix=".jsonl")[1])
    env = {
        **os.environ,
        "JAIWEB_BENCH_FIGURES": str(kept),
        "JAIWEB_BENCH_DATABASE_URL": os.environ.get("JAIWEB_BENCH_DATABASE_URL", DATABASE_URL),
        "JAIWEB_BENCH_REDIS_URL": os.environ.get("JAIWEB_BENCH_REDIS_URL", REDIS_URL),
    }
    failed = []
    for name, extra in runs:
        script = ROOT / "bench" / f"{name}.py"
        if not script.exists():
            print(f"\n=== {name}: no bench/{name}.py here, left out", flush=True)
            continue
        print(f"\n=== bench/{name}.py {' '.join(extra)}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script), *extra], cwd=ROOT, env=env)
        print(f"=== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        if code != 0:
            failed.append(name)
    figures = read_figures(kept)
    if wanted is not None:  # a partial run replaces only its own benches' rows
        figures = [f for f in previous_figures() if f["bench"][:-3] not in wanted] + figures
    write_table(figures)
    print(f"\n{len(figures)} figures written to {PAGE.relative_to(ROOT)} (kept in {kept})")
    if failed:
        raise SystemExit(f"these benches failed: {', '.join(failed)}")


def read_figures(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def previous_figures() -> list[dict]:
    """The figures of the table on the page now (kept in bench/figures.json)."""
    if not DATA.exists():
        return []
    return json.loads(DATA.read_text(encoding="utf-8"))


def write_table(figures: list[dict]) -> None:
    text = PAGE.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{PAGE} has no {START} … {END} markers for the table")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    table = render(figures)
    PAGE.write_text(f"{head}{START}\n{table}{END}{tail}", encoding="utf-8")
    DATA.write_text(json.dumps(figures, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def render(figures: list[dict]) -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    commits = sorted({f["commit"] for f in figures})
    lines = [
        f"Last refreshed {datetime.now(UTC):%Y-%m-%d} on {cores} cores "
        f"({platform.machine()}, Python {platform.python_version()}), "
        f"commit {', '.join(commits) or '?'}.",
        "",
        "| figure | backend | value | floor (same run) | ratio | target | bench | load |",
        "|---|---|--:|---|--:|--:|---|--:|",
    ]
    for f in figures:
        ratio = f"{f['ratio']:.2f}×" if f["ratio"] is not None else "–"
        target = f"≤ {f['target']:g}×" if f["target"] is not None else ""
        lines.append(
            f"| {f['name']} | {f['backend'] or '–'} | {_number(f['value'])} {f['unit']} | "
            f"{_number(f['floor'])} {f['unit'].split()[0]}: {f['floor_name']} | {ratio} | "
            f"{target} | "
            f"`bench/{f['bench']}` | {f['load']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


if __name__ == "__main__":
    main()
