"""What every bench shares: its options, the machine header, scratch databases, timing.

Settings are read once per process, so a bench runs each backend in a child process of
its own (``python bench/X.py --backend sqlite``) and calls ``scratch_django`` there. Which
databases a bench may create and remove is always named by the person running it:

* PostgreSQL: ``--database-url`` or ``JAIWEB_BENCH_DATABASE_URL``, a URL whose database
  the bench creates, migrates and drops at the end. A database of that name that is
  already there is dropped only when an earlier bench made it (it carries the bench's
  comment); anything else is refused. Without a URL the PostgreSQL pass is skipped.
* SQLite: a file in a new temporary directory under ``--sqlite-dir`` /
  ``JAIWEB_BENCH_SQLITE_DIR`` (default: the system's temp dir); ``/dev/shm`` is tmpfs,
  where a COMMIT's fsync costs nothing and what is left is CPU.
* Redis (bench/load.py's cluster): ``--redis-url`` / ``JAIWEB_BENCH_REDIS_URL``, a db the
  bench flushes before and after; without it the cluster setup is skipped.

See docs/PERFORMANCE.md for what each bench measures and the figures of its last run.
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATABASE_ENV, SQLITE_DIR_ENV, REDIS_ENV = (
    "JAIWEB_BENCH_DATABASE_URL",
    "JAIWEB_BENCH_SQLITE_DIR",
    "JAIWEB_BENCH_REDIS_URL",
)
SCRATCH_COMMENT = "jaiweb bench scratch database: dropped by the next bench that names it"
# Names a bench never creates or drops: the server's own and the test suite's default.
RESERVED = {"postgres", "template0", "template1", "test"}


# --- options -------------------------------------------------------------------------


def parser(doc: str | None, *, redis: bool = False) -> argparse.ArgumentParser:
    """An argument parser with the options every bench takes (see the module docstring)."""
    out = argparse.ArgumentParser(
        description=(doc or "").strip().split("\n")[0],
        epilog="Figures and what they mean: docs/PERFORMANCE.md",
    )
    group = out.add_argument_group("databases (named by you: the bench drops or flushes them)")
    group.add_argument(
        "--backend",
        choices=["sqlite", "postgresql"],
        help="one backend in this process (the default run starts a child for each)",
    )
    group.add_argument(
        "--database-url",
        default=os.environ.get(DATABASE_ENV) or None,
        help=f"PostgreSQL database to create, use and drop (${DATABASE_ENV}); "
        "unset: the PostgreSQL pass is skipped",
    )
    group.add_argument(
        "--sqlite-dir",
        default=os.environ.get(SQLITE_DIR_ENV) or None,
        help=f"directory for the scratch SQLite file (${SQLITE_DIR_ENV}; default: the "
        "temp dir; /dev/shm for tmpfs)",
    )
    if redis:
        group.add_argument(
            "--redis-url",
            default=os.environ.get(REDIS_ENV) or None,
            help=f"Redis db to flush and use (${REDIS_ENV}); unset: no Redis part",
        )
    return out


def pg_parts(url: str) -> tuple[dict, str]:
    """psycopg connection keywords for the server of ``url``, and its database name."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise SystemExit(f"--database-url / {DATABASE_ENV} must be a postgres:// URL, got {url!r}")
    name = unquote(parts.path.lstrip("/"))
    if not name or "/" in name or not name.replace("_", "").isalnum():
        raise SystemExit(f"name a scratch database of letters, digits and _ in {url!r}")
    if name in RESERVED:
        raise SystemExit(f"{name!r} is not a scratch database: name one the bench may drop")
    server = {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 5432,
        "user": unquote(parts.username or "postgres"),
    }
    if parts.password:
        server["password"] = unquote(parts.password)
    return server, name


def pg_admin(url: str, sql: str, params: tuple = ()) -> list[tuple] | None:
    """One statement on the maintenance database of ``url``'s server."""
    import psycopg

    server, _ = pg_parts(url)
    with psycopg.connect(**server, dbname="postgres", autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def pg_connect(url: str, **kwargs):
    """A psycopg connection to ``url``'s own database."""
    import psycopg

    server, name = pg_parts(url)
    return psycopg.connect(**server, dbname=name, **kwargs)


def pg_create_scratch(url: str) -> str:
    """Create the database of ``url`` (dropping a scratch one an earlier bench left)."""
    _, name = pg_parts(url)
    found = pg_admin(
        url,
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
        (name,),
    )
    if found:
        if found[0][0] != SCRATCH_COMMENT:
            raise SystemExit(
                f"database {name!r} exists and no bench made it: name another in "
                f"--database-url / {DATABASE_ENV}"
            )
        pg_admin(url, f'DROP DATABASE "{name}" WITH (FORCE)')
    pg_admin(url, f'CREATE DATABASE "{name}"')
    pg_admin(url, f"COMMENT ON DATABASE \"{name}\" IS '{SCRATCH_COMMENT}'")
    return name


def pg_drop_scratch(url: str) -> None:
    _, name = pg_parts(url)
    pg_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- the machine header ----------------------------------------------------------------


def load() -> str:
    """The load average now (1, 5, 15 min): how busy the box is beside a figure."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}/{fifteen:.2f}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _git() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + (" + uncommitted changes" if dirty else "")


def fs_type(path: Path | str) -> str:
    """The file system holding ``path`` (what a SQLite COMMIT's fsync costs depends on it)."""
    best, kind = "", "?"
    path = str(Path(path).resolve())
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _, target, fstype, *_ = line.split()
                inside = path == target or path.startswith(target.rstrip("/") + "/")
                if inside and len(target) > len(best):
                    best, kind = target, fstype
    except OSError:
        pass
    return kind


def header(args: argparse.Namespace | None = None, workload: str = "") -> None:
    """The lines every bench starts with: machine, load, commit, databases, workload."""
    import sqlite3

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"machine: {_cpu_model()}, {cpus} cores, python {sys.version.split()[0]}, "
        f"{platform.platform()}"
    )
    print(f"commit {_git()}; {load()} at the start")
    if args is not None:
        sqlite_dir = Path(getattr(args, "sqlite_dir", None) or tempfile.gettempdir())
        dbs = [f"SQLite {sqlite3.sqlite_version} in {sqlite_dir} ({fs_type(sqlite_dir)})"]
        url = getattr(args, "database_url", None)
        if url:
            server, name = pg_parts(url)
            dbs.append(f"PostgreSQL {server['host']}:{server['port']}/{name} (scratch)")
        elif hasattr(args, "database_url"):
            dbs.append(f"PostgreSQL: skipped (no --database-url / ${DATABASE_ENV})")
        redis = getattr(args, "redis_url", None)
        if redis:
            dbs.append(f"Redis {redis} (flushed)")
        elif hasattr(args, "redis_url"):
            dbs.append(f"Redis: none (no --redis-url / ${REDIS_ENV})")
        print("databases: " + "; ".join(dbs))
    if workload:
        print(f"workload: {workload}")
    sys.stdout.flush()


# --- scratch Django -------------------------------------------------------------------


@dataclass(frozen=True)
class Scratch:
    """Where one backend's run lives: a temp dir, and its SQLite file or its PG URL."""

    backend: str
    tmp: Path
    db_file: Path | None
    database_url: str

    @property
    def where(self) -> str:
        if self.db_file is not None:
            return f"file {self.db_file} ({fs_type(self.db_file.parent)})"
        return pg_parts(self.database_url)[1]


def sqlite_scratch_dir(args: argparse.Namespace, prefix: str) -> Path:
    base = getattr(args, "sqlite_dir", None)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


@contextmanager
def scratch_django(
    backend: str, args: argparse.Namespace, *, prefix: str, env: dict[str, str] | None = None
) -> Iterator[Scratch]:
    """Django set up on a fresh, migrated scratch database of ``backend``.

    ``DEBUG=0`` (no query log on every cursor); ``env`` adds or, with an empty value,
    removes variables. Everything made is removed on the way out.
    """
    tmp = sqlite_scratch_dir(args, prefix)
    db_file = None
    if backend == "sqlite":
        db_file = tmp / "bench.sqlite3"
        url = f"sqlite:///{db_file}"
    else:
        url = args.database_url
        if not url:
            raise SystemExit(f"the PostgreSQL pass needs --database-url or ${DATABASE_ENV}")
        pg_create_scratch(url)
    os.environ["DATABASE_URL"] = url
    os.environ["DEBUG"] = "0"
    os.environ["JAIWEB_MEDIA_ROOT"] = str(tmp / "media")
    # DEBUG=0 wants real secrets (jaiweb/settings.py); these live as long as the run.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("JAIWEB_FEED_SECRET", secrets.token_urlsafe(32))
    os.environ["DJANGO_SETTINGS_MODULE"] = "jaiweb.settings"
    for name, value in (env or {}).items():
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        yield Scratch(backend, tmp, db_file, url)
    finally:
        if backend == "postgresql":
            from django.db import connections

            connections.close_all()
            pg_drop_scratch(url)
        shutil.rmtree(tmp, ignore_errors=True)


def describe_database(where: str) -> str:
    """One line on the database this process runs against and its durability settings."""
    from django.db import connection

    with connection.cursor() as cur:
        if connection.vendor == "sqlite":
            mode = cur.execute("PRAGMA journal_mode").fetchone()[0]
            sync = cur.execute("PRAGMA synchronous").fetchone()[0]
            version = cur.execute("SELECT sqlite_version()").fetchone()[0]
            return (
                f"sqlite {version}, {where} (journal_mode={mode}, synchronous={sync}, "
                "BEGIN IMMEDIATE)"
            )
        cur.execute(
            "SELECT version(), current_setting('fsync'), current_setting('synchronous_commit')"
        )
        version, fsync, sync = cur.fetchone()
    return f"{version.split(' on ')[0]}, {where}, fsync={fsync}, synchronous_commit={sync}"


# --- the default run: one child per backend ---------------------------------------------


@dataclass(frozen=True)
class Pass:
    """One child run: a label, its backend and options that differ from the parent's."""

    label: str
    backend: str
    options: tuple[tuple[str, str], ...] = ()


def default_passes(args: argparse.Namespace) -> list[Pass]:
    passes = [Pass("sqlite", "sqlite")]
    if getattr(args, "database_url", None):
        passes.append(Pass("postgresql", "postgresql"))
    return passes


def run_each_backend(
    script: str,
    args: argparse.Namespace,
    passes: list[Pass] | None = None,
    extra: dict[str, str] | None = None,
) -> None:
    """Run ``script`` once per pass in a child process with this process's own arguments,
    then the pass's options and ``extra`` (given last, so they win)."""
    failed = []
    for run in passes or default_passes(args):
        print(f"\n[{run.label}] {load()}", flush=True)
        overrides = {**dict(run.options), **(extra or {})}
        options = [f"--{name.replace('_', '-')}={value}" for name, value in overrides.items()]
        command = [sys.executable, script, *sys.argv[1:], *options, "--backend", run.backend]
        if subprocess.run(command, check=False).returncode != 0:
            failed.append(run.label)
    if not getattr(args, "database_url", None):
        print(
            "\n[postgresql] skipped: name a scratch database with --database-url or "
            f"${DATABASE_ENV}"
        )
    if failed:
        raise SystemExit(f"{Path(script).name}: these passes failed: {', '.join(failed)}")


def bench_main(
    script: str,
    doc: str | None,
    options: Callable[[argparse.ArgumentParser], None],
    run_backend: Callable[[str, argparse.Namespace], None],
    *,
    workload: Callable[[argparse.Namespace], str] = lambda args: "",
    passes: Callable[[argparse.Namespace], list[Pass]] | None = None,
) -> None:
    """A bench's ``main``: with ``--backend``, that backend here; else the header and a
    child for each pass (by default SQLite, then PostgreSQL when a URL names one)."""
    out = parser(doc)
    options(out)
    args = out.parse_args()
    if args.backend:
        run_backend(args.backend, args)
        return
    header(args, workload(args))
    run_each_backend(script, args, passes(args) if passes else None)


# --- timing --------------------------------------------------------------------------


def timed(fn: Callable[[], object], repeat: int) -> float:
    """The median of ``repeat`` timed calls, in seconds."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def short_sql(sql: str, width: int = 100) -> str:
    """A statement on one line, cut to ``width``."""
    sql = " ".join(sql.split())
    return sql if len(sql) <= width else sql[: width - 3] + "..."


def ratio_line(name: str, value: float, floor: float, target: float | None, unit: str = "ms"):
    """``name: value (floor) = ratio x (target <= t: met/MISSED), load``, one line."""
    ratio = value / floor if floor else float("nan")
    verdict = ""
    if target is not None:
        verdict = f"   (target <= {target:g}x) {'met' if ratio <= target else 'MISSED'}"
    return (
        f"{name}: {value:.3f} {unit} / floor {floor:.3f} {unit} = {ratio:.2f}x{verdict}; {load()}"
    )


# --- the figures table ------------------------------------------------------------------

FIGURES_ENV = "JAIWEB_BENCH_FIGURES"


def figure(
    name: str,
    value: float,
    floor: float,
    *,
    unit: str,
    floor_name: str,
    backend: str = "",
    target: float | None = None,
) -> None:
    """Keep one headline figure beside its floor for docs/PERFORMANCE.md's table.

    ``bench/figures.py`` (``./dev bench``) names a file in ``JAIWEB_BENCH_FIGURES``; each
    call appends a JSON line there with the bench, the load and the commit, and the table
    is written from those lines. Without the variable nothing is kept: the bench's own
    printout is unchanged."""
    path = os.environ.get(FIGURES_ENV)
    if not path:
        return
    import json

    line = {
        "bench": Path(sys.argv[0]).name,
        "name": name,
        "backend": backend,
        "value": value,
        "floor": floor,
        "unit": unit,
        "floor_name": floor_name,
        "ratio": value / floor if floor else None,
        "target": target,
        "load": os.getloadavg()[0],
        "commit": _git(),
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
