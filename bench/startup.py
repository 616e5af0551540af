"""Start-up of `manage.py studio` and `manage.py runagents`: wall time to their first line
and the CPU they spent until then, beside another checkout's in the same run
(docs/PERFORMANCE.md, "Recovery and start-up").

    .venv/bin/python bench/startup.py --compare /tmp/base --runs 9
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import header, load, parser  # noqa: E402

COMMANDS = {
    "studio": (["studio", "--port", "0", "--no-migrate"], "jaiweb studio listening"),
    "runagents": (["runagents", "--workers", "1"], "recovery:"),
}


def first_line(root: str, env: dict, args: list[str], prefix: str) -> tuple[float, float]:
    """Seconds from Popen to the line starting with ``prefix``, and the child's CPU then."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    wall = cpu = float("nan")
    try:
        for line in proc.stdout:
            if line.startswith(prefix):
                wall = time.monotonic() - start
                times = psutil.Process(proc.pid).cpu_times()
                cpu = times.user + times.system
                break
    finally:
        proc.terminate()
        proc.wait(10)
    return wall, cpu


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--runs", type=int, default=9, help="starts of each command per checkout")
    options.add_argument(
        "--compare", action="append", default=[], help="another checkout, started in turn"
    )
    args = options.parse_args()
    roots = [str(ROOT), *args.compare]
    header(args, f"{args.runs} starts of each command per checkout, in turn: {', '.join(roots)}")
    tmp = Path(tempfile.mkdtemp(prefix="jaiweb-bench-startup-", dir=args.sqlite_dir))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "jaiweb.settings",
    }
    env.pop("REDIS_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    seen: dict[tuple[str, str], list[tuple[float, float]]] = {}
    loads = []
    for _ in range(args.runs):
        for name, (command, prefix) in COMMANDS.items():
            for root in roots:
                seen.setdefault((name, root), []).append(first_line(root, env, command, prefix))
        loads.append(os.getloadavg()[0])
    print(f"  load (1 min) over the starts: {min(loads):.2f}-{max(loads):.2f}")
    for (name, root), values in seen.items():
        walls = [w for w, _ in values]
        cpus = [c for _, c in values]
        print(
            f"  {name:<10} {root}: first line median {statistics.median(walls) * 1e3:5.0f} ms "
            f"(min {min(walls) * 1e3:.0f}), CPU until then median "
            f"{statistics.median(cpus) * 1e3:5.0f} ms"
        )
    print(f"  ({load()} at the end)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
