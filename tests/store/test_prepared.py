"""Prepared reads give what their queryset gives, on each backend, with any values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.store.models import ComicSession, Label, Operation
from jaiweb.store.services import operation_accept, session_create

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def sessions_by_ids(ids):
    return ComicSession.objects.filter(pk__in=ids).order_by("pk").values_list("pk", "title")


def test_rows_are_the_querysets_own_with_fields_converted(alice):
    """JSON, dates and booleans come back as Django makes them (SQLite stores them as text
    and integers), and a model built from the row equals the queryset's."""
    session = session_create(owner=alice, title="one", initial_app_state={"characters": {}})
    read = Prepared(
        lambda session_id: ComicSession.objects.filter(pk=session_id).values_list(
            *model_columns(ComicSession)
        ),
        session_id=str,
    )
    [row] = read.rows(session_id=session.pk)
    assert (
        row
        == ComicSession.objects.filter(pk=session.pk)
        .values_list(*model_columns(ComicSession))
        .get()
    )
    made = from_row(ComicSession, row)
    fresh = ComicSession.objects.get(pk=session.pk)
    assert {f: getattr(made, f) for f in model_columns(ComicSession)} == {
        f: getattr(fresh, f) for f in model_columns(ComicSession)
    }
    assert isinstance(made.initial_app_state, dict) and made.deleting is False
    assert from_row(ComicSession, read.first(session_id="s_none")) is None


def test_each_call_runs_its_own_values_and_hostile_text_stays_a_value(alice, bob):
    mine = session_create(owner=alice, title="alice's")
    theirs = session_create(owner=bob, title="bob's")
    owned = Prepared(
        lambda session_id, owner: ComicSession.objects.filter(
            pk=session_id, owner_id=owner
        ).values_list("title"),
        session_id=str,
        owner=int,
    )
    assert owned.rows(session_id=mine.pk, owner=alice.pk) == [("alice's",)]
    assert owned.rows(session_id=theirs.pk, owner=alice.pk) == []
    assert owned.rows(session_id=theirs.pk, owner=bob.pk) == [("bob's",)]
    assert owned.rows(session_id="' OR 1=1 --", owner=alice.pk) == []
    assert owned.rows(session_id=mine.pk, owner=None) == []
    assert ComicSession.objects.count() == 2


def test_a_list_argument_compiles_once_per_size_class_and_reads_as_its_list(alice):
    made = [session_create(owner=alice, title=f"s{n}") for n in range(6)]
    read = Prepared(sessions_by_ids, ids=[str])
    for n in (0, 1, 3, 4, 1, 2, 5, 6):
        ids = [s.pk for s in made[:n]]
        assert read.rows(ids=ids) == list(sessions_by_ids(ids))
    # a list of 3 runs as 4 (its last id twice), one of 5 or 6 as 8
    assert sorted(shape[2] for shape in read._compiled) == [1, 2, 4, 8]
    assert read.rows(ids=[made[2].pk, made[0].pk, made[2].pk]) == list(
        sessions_by_ids([made[0].pk, made[2].pk])
    )


def test_after_the_first_call_no_queryset_is_built(alice, monkeypatch):
    """The point of it: the compiled SQL is kept, and later calls only execute it."""
    session = session_create(owner=alice, title="one")
    built = []

    def build(session_id):
        built.append(session_id)
        return Operation.objects.filter(session_id=session_id, outcome__isnull=True).values_list(
            "pk"
        )

    read = Prepared(build, session_id=str)
    assert read.rows(session_id=session.pk) == []
    compiling = len(built)
    accepted = operation_accept(session_id=session.pk, text="hi", now=NOW)
    with CaptureQueriesContext(connection) as queries:
        assert read.rows(session_id=session.pk) == [(accepted.operation_id,)]
    assert len(built) == compiling and len(queries) == 1


def test_a_constant_equal_to_a_placeholder_stays_a_constant(alice):
    """Whatever numbers a query holds, only the parameters that move with the arguments are
    the arguments' slots."""
    from jaiweb.prepared import _placeholder

    session = session_create(owner=alice, title="one")
    for constant in (_placeholder(int, 0, 0), _placeholder(int, 0, 1)):
        read = Prepared(
            lambda owner, constant=constant: ComicSession.objects.filter(
                owner_id=owner, owner_id__lt=constant
            ).values_list("pk"),
            owner=int,
        )
        assert read.rows(owner=alice.pk) == [(session.pk,)]


def test_a_value_that_moves_without_being_an_argument_is_refused():
    """A clock read inside ``build`` would be compiled once and frozen: refused instead."""
    from itertools import count

    ticks = count()
    read = Prepared(
        lambda owner: ComicSession.objects.filter(
            owner_id=owner, entry_count__gt=next(ticks)
        ).values_list("pk"),
        owner=int,
    )
    with pytest.raises(ValueError, match="no argument"):
        read.rows(owner=1)


def test_wrong_arguments_and_an_unused_argument_are_refused():
    read = Prepared(lambda session_id: Label.objects.filter(session_id=session_id), session_id=str)
    with pytest.raises(TypeError, match="arguments are"):
        read.rows(entry_id="e_1")
    unused = Prepared(lambda session_id: Label.objects.all().values_list("id"), session_id=str)
    with pytest.raises(ValueError, match="does not use"):
        unused.rows(session_id="s_1")


@pytest.mark.postgresql_only  # SQLite has no row locks: Django ignores select_for_update there
@pytest.mark.django_db(transaction=True)  # autocommit, as outside any request
def test_a_locking_read_outside_a_transaction_is_refused_as_django_refuses_it():
    from django.db import transaction
    from django.db.transaction import TransactionManagementError

    locking = Prepared(
        lambda session_id: (
            ComicSession.objects.select_for_update().filter(pk=session_id).values_list("pk")
        ),
        session_id=str,
    )
    with transaction.atomic():
        assert locking.rows(session_id="s_none") == []
    with pytest.raises(TransactionManagementError):
        locking.rows(session_id="s_none")
