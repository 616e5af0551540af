"""Where entries sit on a path: many looked up at once, as one statement, with the same
answers as looking each up alone (the strip places every turn's prompt this way)."""

from __future__ import annotations

import pytest

from jaiweb.store.rows import index_of, indices_of
from jaiweb.store.selectors import branch_rows
from tests.support.storyboard import line, store

pytestmark = pytest.mark.django_db


def test_many_entries_are_placed_at_once_as_each_alone(alice, django_assert_num_queries):
    session = store(alice, [*line(30), *line(2, start=90, parent="t3f")], "t30f")
    rows = branch_rows(session=session, lazy=True)
    wanted = [f"t{n}u" for n in range(30, 0, -1)] + ["t90u", "nowhere", "t7f", "t30u"]
    with django_assert_num_queries(1):
        found = indices_of(rows, wanted)
    assert list(found) == list(dict.fromkeys(wanted))
    assert found == {entry_id: index_of(rows, entry_id) for entry_id in wanted}
    assert found["t90u"] is None and found["nowhere"] is None  # off the path, unknown
    assert indices_of(list(rows), wanted) == found  # a plain list of rows answers alike


def test_more_entries_than_one_statement_takes(alice, monkeypatch, django_assert_num_queries):
    from jaiweb.store import rows as rows_module

    monkeypatch.setattr(rows_module, "POSITIONS_AT_ONCE", 4)
    session = store(alice, line(3), "t3f")
    rows = branch_rows(session=session, lazy=True)
    ids = [row.entry_id for row in rows]
    with django_assert_num_queries(-(-len(ids) // 4)):
        found = indices_of(rows, ids)
    assert found == {entry_id: i for i, entry_id in enumerate(ids)}
