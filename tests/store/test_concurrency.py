"""Real parallel writers on one session: threads with their own connections, and processes.

Every writer names the same expected leaf and starts at the same moment. Exactly one wins;
each other one gets ``StaleLeaf`` and nothing else (no deadlock, no "database is locked",
no IntegrityError). The tree gains one child of the old leaf and ``journal_check`` is clean.
Two prompts at once on an idle session start one operation; the others steer it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from jaiweb.store.errors import StaleLeaf
from jaiweb.store.models import ComicSession, Entry, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import entry_append, operation_accept, session_create
from journal.entries import MessageEntry, UserMessage
from journal.records import InputQueued, OperationAccepted
from tests.support.append_worker import Worker

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
THREAD_ROUNDS = 5
PROCESSES = 2
PROCESS_ROUNDS = 5
ACCEPT_ROUNDS = 3


def assert_journal_clean() -> None:
    out, err = StringIO(), StringIO()
    call_command("journal_check", stdout=out, stderr=err)
    assert out.getvalue().rstrip().endswith(": OK"), (out.getvalue(), err.getvalue())
    assert err.getvalue() == ""


def race_threads(n: int, action: Callable[[int], object]) -> list[tuple[str, object]]:
    """Run ``action(i)`` in n threads released together; each its own connection, closed after.

    Returns ("ok", value), ("stale", StaleLeaf) or ("error", exception) per thread.
    """
    barrier = threading.Barrier(n)
    results: list[tuple[str, object]] = [("error", RuntimeError("thread did not run"))] * n

    def run(i: int) -> None:
        try:
            connection.ensure_connection()  # connected first: only the writes race
            barrier.wait(timeout=30)
            results[i] = ("ok", action(i))
        except StaleLeaf as exc:
            results[i] = ("stale", exc)
        except BaseException as exc:
            results[i] = ("error", exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,), name=f"writer-{i}") for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a writer thread hangs (deadlock?)"
    return results


def message(entry_id: str, parent_id: str | None) -> MessageEntry:
    return MessageEntry(
        id=entry_id,
        parent_id=parent_id,
        timestamp=timezone.now(),
        message=UserMessage(content=f"written by {entry_id}"),
    )


def children_ids(session: ComicSession, parent_id: str | None) -> list[str]:
    qs = Entry.objects.filter(session=session)
    qs = qs.filter(parent_id__isnull=True) if parent_id is None else qs.filter(parent_id=parent_id)
    return list(qs.order_by("seq").values_list("entry_id", flat=True))


def check_one_winner(
    session: ComicSession,
    old_leaf: str | None,
    old_count: int,
    outcomes: dict[str, tuple[str, object]],
) -> str:
    """``outcomes``: entry id tried → outcome. Exactly one won; the tree gained just it."""
    kinds = {entry_id: kind for entry_id, (kind, _) in outcomes.items()}
    errors = {k: v for k, (kind, v) in outcomes.items() if kind not in ("ok", "stale")}
    assert not errors, f"only StaleLeaf may refuse a racing append: {errors!r}"
    winners = [entry_id for entry_id, kind in kinds.items() if kind == "ok"]
    assert len(winners) == 1, f"exactly one append wins: {kinds}"
    [winner] = winners
    session.refresh_from_db()
    assert session.leaf_id == winner
    assert session.entry_count == old_count + 1
    assert children_ids(session, old_leaf) == [winner]
    losers = [entry_id for entry_id in outcomes if entry_id != winner]
    assert not Entry.objects.filter(session=session, entry_id__in=losers).exists()
    return winner


def test_threads_race_to_append_after_the_same_leaf(alice):
    session = session_create(owner=alice, title="threads")
    for rnd in range(THREAD_ROUNDS):
        session.refresh_from_db()
        old_leaf, old_count = session.leaf_id, session.entry_count  # None first: racing roots
        ids = [f"t{rnd}-{i}" for i in range(THREADS)]

        def append(i: int, ids=ids, old_leaf=old_leaf) -> int:
            return entry_append(
                session_id=session.id,
                entries=[message(ids[i], old_leaf)],
                expected_leaf_id=old_leaf,
            )

        results = race_threads(THREADS, append)
        outcomes = dict(zip(ids, results, strict=True))
        winner = check_one_winner(session, old_leaf, old_count, outcomes)
        for kind, value in results:
            if kind == "stale":
                assert (value.expected, value.actual) == (old_leaf, winner)
            else:
                assert value == old_count + 1  # the winner's seq
        assert_journal_clean()
    assert session.entry_count == THREAD_ROUNDS


def test_processes_race_to_append_after_the_same_leaf(alice):
    session = session_create(owner=alice, title="processes")
    workers = [Worker(connection.settings_dict, "serve") for _ in range(PROCESSES)]
    try:
        for w in workers:
            assert w.receive() == {"ready": True}
        for rnd in range(PROCESS_ROUNDS):
            session.refresh_from_db()
            old_leaf, old_count = session.leaf_id, session.entry_count
            ids = [f"p{rnd}-{i}" for i in range(PROCESSES)]
            start_at = time.time() + 0.2  # both wait for the same instant
            for w, entry_id in zip(workers, ids, strict=True):
                w.send(
                    {
                        "op": "append",
                        "session_id": session.id,
                        "expected_leaf_id": old_leaf,
                        "entry_id": entry_id,
                        "start_at": start_at,
                    }
                )
            answers = [w.receive() for w in workers]
            outcomes = {
                entry_id: ("ok" if a["result"] == "ok" else a["result"], a)
                for entry_id, a in zip(ids, answers, strict=True)
            }
            winner = check_one_winner(session, old_leaf, old_count, outcomes)
            for a in answers:
                if a["result"] == "stale":
                    assert a["actual"] == winner
            assert_journal_clean()
    finally:
        for w in workers:
            w.close()
    assert session.entry_count == PROCESS_ROUNDS


def check_one_operation(session: ComicSession, texts: list[str], answers: list[dict]) -> None:
    """One prompt started the operation; every other one is an ``input_queued`` of it."""
    started = [i for i, a in enumerate(answers) if not a["queued"]]
    assert len(started) == 1, f"exactly one prompt starts the operation: {answers}"
    [first] = started
    op_ids = {a["operation_id"] for a in answers}
    assert len(op_ids) == 1, f"every prompt joins the same operation: {answers}"
    [op_id] = op_ids
    assert list(Operation.objects.filter(session=session).values_list("id", flat=True)) == [op_id]
    records = operation_records(operation_id=op_id)
    assert isinstance(records[0], OperationAccepted)
    assert records[0].input_entry_id == answers[first]["input_entry_id"]
    queued = records[1:]
    assert all(isinstance(r, InputQueued) for r in queued), records
    assert sorted((r.text, r.input_entry_id) for r in queued) == sorted(
        (texts[i], a["input_entry_id"]) for i, a in enumerate(answers) if i != first
    )
    session.refresh_from_db()
    assert session.entry_count == 1 and session.leaf_id == answers[first]["input_entry_id"]
    [entry] = Entry.objects.filter(session=session)
    assert entry.to_journal().message.content == texts[first]
    assert_journal_clean()


def test_threads_race_to_prompt_an_idle_session(alice):
    for rnd in range(ACCEPT_ROUNDS):
        session = session_create(owner=alice, title=f"prompts {rnd}")
        texts = [f"prompt {rnd}.{i}" for i in range(THREADS)]
        results = race_threads(
            THREADS, lambda i, s=session, t=texts: operation_accept(session_id=s.id, text=t[i])
        )
        errors = [value for kind, value in results if kind != "ok"]
        assert not errors, f"racing prompts are never refused: {errors!r}"
        answers = [
            {"queued": v.queued, "operation_id": v.operation_id, "input_entry_id": v.input_entry_id}
            for _, v in results
        ]
        check_one_operation(session, texts, answers)


def test_processes_race_to_prompt_an_idle_session(alice):
    workers = [Worker(connection.settings_dict, "serve") for _ in range(PROCESSES)]
    try:
        for w in workers:
            assert w.receive() == {"ready": True}
        for rnd in range(ACCEPT_ROUNDS):
            session = session_create(owner=alice, title=f"prompts {rnd}")
            texts = [f"prompt {rnd}.{i}" for i in range(PROCESSES)]
            start_at = time.time() + 0.2
            for w, text in zip(workers, texts, strict=True):
                w.send(
                    {"op": "accept", "session_id": session.id, "text": text, "start_at": start_at}
                )
            answers = [w.receive() for w in workers]
            assert all(a["result"] == "ok" for a in answers), answers
            check_one_operation(session, texts, answers)
    finally:
        for w in workers:
            w.close()
