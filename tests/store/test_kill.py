"""SIGKILL a writer mid-stream: nothing it acknowledged is lost, the leaf is its last commit.

A child process appends one entry per transaction, each naming the previous one as the
expected leaf, and prints each entry id after its commit. The test kills it at a random
moment, then checks the database against what it acknowledged, runs ``journal_check`` and
lets a new child continue from the stored leaf.
"""

from __future__ import annotations

import os
import random
import signal
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.services import session_create
from tests.support.append_worker import APPLICATION_NAME, Worker
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 3
RESTART_APPENDS = 5


def assert_journal_clean() -> None:
    out, err = StringIO(), StringIO()
    call_command("journal_check", stdout=out, stderr=err)
    assert out.getvalue().rstrip().endswith(": OK"), (out.getvalue(), err.getvalue())


def wait_for_worker_backends_to_end(timeout: float = 10) -> None:
    """PostgreSQL: a killed client's backend may still be finishing a COMMIT it was sent."""
    if connection.vendor != "postgresql":
        return  # SQLite: the writer was the process itself, and it is gone

    def gone() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = %s",
                [APPLICATION_NAME],
            )
            return cursor.fetchone()[0] == 0

    wait_until(gone, timeout, "the killed worker's backend to end")


def appended_since(session: ComicSession, count: int) -> list[tuple[str, str | None]]:
    """(entry id, parent id) of the entries appended after the first ``count``, in order."""
    return list(
        Entry.objects.filter(session=session, seq__gt=count)
        .order_by("seq")
        .values_list("entry_id", "parent_id")
    )


def check_chain(rows: list[tuple[str, str | None]], start_leaf: str | None) -> None:
    parent = start_leaf
    for entry_id, parent_id in rows:
        assert parent_id == parent, f"{entry_id} hangs under {parent_id}, not {parent}"
        parent = entry_id


def test_sigkill_loses_no_acknowledged_entry_and_a_new_writer_continues(alice):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    session = session_create(owner=alice, title="kill me")
    extra_commits = 0
    for rnd in range(ROUNDS):
        session.refresh_from_db()
        start_leaf, start_count = session.leaf_id, session.entry_count
        worker = Worker(connection.settings_dict, "loop", session.id)
        try:
            assert worker.receive() == {"ready": True, "leaf": start_leaf}  # restarts from it
            assert "ack" in worker.receive()  # it is writing
            time.sleep(rng.uniform(0.2, 1.5))
            os.kill(worker.proc.pid, signal.SIGKILL)
            worker.kill()
            assert worker.proc.returncode == -signal.SIGKILL
        finally:
            worker.close()
        wait_for_worker_backends_to_end()

        where = f"round {rnd}, seed {seed}"
        acked = [line["ack"] for line in worker.lines if "ack" in line]
        stored = set(
            Entry.objects.filter(session=session, entry_id__in=acked).values_list(
                "entry_id", flat=True
            )
        )
        assert stored == set(acked), f"{where}: acknowledged but lost {set(acked) - stored}"
        rows = appended_since(session, start_count)
        ids = [entry_id for entry_id, _ in rows]
        # What it acknowledged, then at most the one it committed but was killed before printing.
        assert ids[: len(acked)] == acked, where
        assert len(ids) - len(acked) in (0, 1), f"{where}: {len(ids) - len(acked)} unacknowledged"
        extra_commits += len(ids) - len(acked)
        check_chain(rows, start_leaf)
        session.refresh_from_db()
        assert session.leaf_id == ids[-1], where
        assert session.entry_count == start_count + len(ids), where
        assert_journal_clean()

    session.refresh_from_db()
    start_leaf, start_count = session.leaf_id, session.entry_count
    worker = Worker(connection.settings_dict, "loop", session.id, str(RESTART_APPENDS))
    try:
        assert worker.receive() == {"ready": True, "leaf": start_leaf}
        assert worker.proc.wait(timeout=30) == 0, worker.errors()
        worker.kill()  # already ended: just collects its output
    finally:
        worker.close()
    acked = [line["ack"] for line in worker.lines if "ack" in line]
    assert len(acked) == RESTART_APPENDS
    rows = appended_since(session, start_count)
    assert [entry_id for entry_id, _ in rows] == acked
    check_chain(rows, start_leaf)
    session.refresh_from_db()
    assert session.leaf_id == acked[-1]
    assert session.entry_count == start_count + RESTART_APPENDS
    assert_journal_clean()
    print(f"seed {seed}: {session.entry_count} entries, {extra_commits} committed unacknowledged")
