"""Writes refused for a deadlock or a serialization failure are run again, whole."""

from __future__ import annotations

import pytest
from django.db import OperationalError, transaction

from jaiweb.store.conflicts import conflicts_retried


class Refused(Exception):
    def __init__(self, sqlstate: str):
        self.sqlstate = sqlstate


def failing(sqlstate: str, times: int):
    calls = []

    @conflicts_retried
    def write() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise OperationalError("refused") from Refused(sqlstate)
        return "written"

    return write, calls


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_deadlock_victim_or_a_serialization_failure_is_run_again(sqlstate):
    write, calls = failing(sqlstate, times=2)
    assert write() == "written" and len(calls) == 3


def test_it_gives_up_after_three_tries():
    write, calls = failing("40P01", times=3)
    with pytest.raises(OperationalError):
        write()
    assert len(calls) == 3


def test_other_errors_are_not_retried():
    write, calls = failing("53300", times=1)  # too many connections: not a conflict
    with pytest.raises(OperationalError):
        write()
    assert len(calls) == 1


@pytest.mark.django_db
def test_inside_an_outer_transaction_the_outer_one_decides():
    write, calls = failing("40P01", times=1)
    with pytest.raises(OperationalError), transaction.atomic():
        write()
    assert len(calls) == 1
