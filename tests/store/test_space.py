"""A write that failed for lack of disk space, told apart from other failures and remembered."""

from __future__ import annotations

import errno
import sqlite3

import psycopg.errors
import pytest
from django.db import IntegrityError, OperationalError

from jaiweb.store import space
from tests.support.clocks import FakeClock


def sqlite_error(tmp_path, *, full: bool) -> sqlite3.Error:
    """A real error of SQLite's: SQLITE_FULL from a file that may not grow, or another."""
    db = sqlite3.connect(tmp_path / "small.sqlite3")
    try:
        db.execute("CREATE TABLE t (x BLOB)")
        if full:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")
            db.execute("INSERT INTO t VALUES (?)", [b"x" * 100_000])
        else:
            db.execute("INSERT INTO missing VALUES (1)")
    except sqlite3.Error as exc:
        return exc
    finally:
        db.close()
    raise AssertionError("SQLite did not fail")


def django_error(cause: BaseException, kind: type[Exception] = OperationalError) -> Exception:
    """``cause`` as Django hands it on: wrapped, the driver's error as its cause."""
    try:
        raise kind(str(cause)) from cause
    except kind as exc:
        return exc


def test_what_says_no_space_was_left(tmp_path):
    full = sqlite_error(tmp_path, full=True)
    assert str(full) == "database or disk is full"
    assert space.out_of_space(full)
    assert space.out_of_space(django_error(full))
    assert space.out_of_space(psycopg.errors.DiskFull("could not extend file"))
    assert space.out_of_space(django_error(psycopg.errors.DiskFull("could not extend file")))
    assert space.out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    assert space.out_of_space(OSError(errno.EDQUOT, "Disk quota exceeded"))


def test_what_does_not(tmp_path):
    assert not space.out_of_space(sqlite_error(tmp_path, full=False))  # no such table
    assert not space.out_of_space(django_error(sqlite_error(tmp_path, full=False)))
    unique = psycopg.errors.UniqueViolation("duplicate key")
    assert not space.out_of_space(django_error(unique, IntegrityError))
    assert not space.out_of_space(psycopg.errors.AdminShutdown("terminating connection"))
    assert not space.out_of_space(OSError(errno.EACCES, "Permission denied"))
    assert not space.out_of_space(ValueError("no space left"))  # words are not enough


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(space, "clock", fake.monotonic)
    monkeypatch.setattr(space, "_failed_at", None)
    return fake


def test_a_failure_is_recent_for_a_minute(clock, caplog):
    assert not space.space_failure_recent()
    assert space.space_failure_note(exc=ValueError("not about space")) is False
    assert not space.space_failure_recent()

    assert space.space_failure_note(exc=OSError(errno.ENOSPC, "No space left on device"))
    clock.advance(30)
    assert space.space_failure_note(exc=OSError(errno.ENOSPC, "No space left on device"))
    clock.advance(space.RECENT_SECONDS - 1)
    assert space.space_failure_recent()  # a minute from the second failure, not the first
    clock.advance(1)
    assert not space.space_failure_recent()
    # Logged once while the failures go on, not once per failed write.
    errors = [r for r in caplog.records if r.name == "jaiweb.store.space"]
    assert len(errors) == 1 and "No space left on device" in errors[0].getMessage()
