"""What every bench shares: Django started on a scratch database of one backend.

Settings are read once per process, so each bench runs every backend in a child
process of its own (``python bench/X.py --backend sqlite``) and calls ``scratch_django``
there: a temporary SQLite file, or a PostgreSQL database created now and dropped after.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"


def pg_admin(sql: str) -> None:
    """One statement on the server's maintenance database (CREATE/DROP DATABASE)."""
    import psycopg

    with psycopg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True
    ) as conn:
        conn.execute(sql)


@contextmanager
def scratch_django(
    backend: str, *, pg_db: str, prefix: str, env: dict[str, str] | None = None
) -> Iterator[tuple[Path, Path]]:
    """Set up Django on a fresh, migrated scratch database; yields (SQLite file, temp dir).

    ``DEBUG=0`` (no query log on every cursor); ``env`` adds or, with an empty value,
    removes variables. Everything is removed again on the way out.
    """
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    db_file = tmp / "bench.sqlite3"
    if backend == "sqlite":
        os.environ["DATABASE_URL"] = f"sqlite:///{db_file}"
    else:
        pg_admin(f"DROP DATABASE IF EXISTS {pg_db} WITH (FORCE)")
        pg_admin(f"CREATE DATABASE {pg_db}")
        os.environ["DATABASE_URL"] = f"postgres://{PG_USER}@{PG_HOST}:{PG_PORT}/{pg_db}"
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
        yield db_file, tmp
    finally:
        if backend == "postgresql":
            from django.db import connections

            connections.close_all()
            pg_admin(f"DROP DATABASE IF EXISTS {pg_db} WITH (FORCE)")
        shutil.rmtree(tmp, ignore_errors=True)


def describe_database(where: str) -> str:
    """One line on the database a bench runs against and its durability settings."""
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
    return f"{version.split(' on ')[0]}, fsync={fsync}, synchronous_commit={sync}"


def run_each_backend(script: str, args) -> None:
    """Run ``script`` once per backend in a child process, passing its options along."""
    import subprocess
    import sys

    passthrough = [
        f"--{name.replace('_', '-')}={value}"
        for name, value in vars(args).items()
        if name != "backend" and value is not None
    ]
    for backend in ("sqlite", "postgresql"):
        print(f"\n[{backend}]", flush=True)
        subprocess.run([sys.executable, script, "--backend", backend, *passthrough], check=False)
