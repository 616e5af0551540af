"""Facts are append-only in the database itself, not only in the ORM."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from jaiweb.store.demo import article_session_create
from jaiweb.store.models import AppendOnlyError, ComicSession, Entry, Operation, OperationRecord
from jaiweb.store.services import operation_accept

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(alice):
    s = article_session_create(owner=alice)
    operation_accept(session_id=s.id, text="go")
    return s


def test_orm_refuses_changes(session):
    entry = Entry.objects.filter(session=session).first()
    entry.payload = {}
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        Entry.objects.filter(session=session).update(type="x")
    with pytest.raises(AppendOnlyError):
        Entry.objects.filter(session=session).delete()
    with pytest.raises(AppendOnlyError):
        OperationRecord.objects.all().update(type="x")
    with pytest.raises(AppendOnlyError):
        OperationRecord.objects.first().delete()


RAW = [
    "UPDATE store_entry SET type = 'branch'",
    "UPDATE store_entry SET payload = payload",
    "DELETE FROM store_entry",
    "UPDATE store_operationrecord SET type = 'x'",
    "DELETE FROM store_operationrecord",
    "DELETE FROM store_operation",
    "DELETE FROM store_comicsession",
]


@pytest.mark.parametrize("sql", RAW)
def test_raw_sql_is_refused_by_the_database(session, sql):
    before = (Entry.objects.count(), OperationRecord.objects.count(), Operation.objects.count())
    with pytest.raises(IntegrityError, match=r"append-only|flagged deleting|kept with"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    after = (Entry.objects.count(), OperationRecord.objects.count(), Operation.objects.count())
    assert after == before


def test_a_finished_outcome_is_final(session):
    op = Operation.objects.get(session=session)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE store_operation SET outcome = 'completed' WHERE id = %s", [op.id])
    with pytest.raises(IntegrityError, match="final"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("UPDATE store_operation SET outcome = 'failed' WHERE id = %s", [op.id])


@pytest.mark.postgresql_only  # SQLite has no TRUNCATE: its DELETE is covered above
@pytest.mark.django_db(transaction=True)
def test_truncate_is_refused_on_postgresql(session):
    """Committed rows (a test transaction would hold deferred FK checks that block TRUNCATE)."""
    assert connection.vendor == "postgresql"
    with pytest.raises(IntegrityError, match="TRUNCATE refused"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("TRUNCATE store_entry CASCADE")


def test_the_deleting_flag_in_the_same_transaction_releases_one_session(session, alice):
    other = article_session_create(owner=alice)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_comicsession SET deleting = %s WHERE id = %s", [True, other.id]
        )
        cursor.execute("DELETE FROM store_entry WHERE session_id = %s", [other.id])
        cursor.execute("DELETE FROM store_comicsession WHERE id = %s", [other.id])
    assert not ComicSession.objects.filter(pk=other.id).exists()
    assert Entry.objects.filter(session=session).count() == 8
