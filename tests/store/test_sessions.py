"""Store services for sessions and entries: appends that name the leaf, navigation, deletion."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jaiweb.store.demo import KUNG_FU_STATE, LAXATIVE_STATE, article_session_create
from jaiweb.store.errors import InvalidEntry, SessionBusy, SessionNotFound, StaleLeaf
from jaiweb.store.models import ComicSession, Entry, OperationRecord
from jaiweb.store.selectors import (
    app_state_at,
    branch_get,
    branch_rows,
    children_rows,
    entries_after,
    entry_ids_among,
    session_get,
)
from jaiweb.store.services import (
    entry_append,
    operation_accept,
    rewind_append,
    session_create,
    session_delete,
    session_rename,
)
from journal.entries import MessageEntry, UserMessage
from journal.errors import UnknownEntry
from journal.snapshot import replay
from journal.tree import branch_of

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def msg(id, parent, text="hi"):
    return MessageEntry(id=id, parent_id=parent, timestamp=NOW, message=UserMessage(content=text))


def ids(entries):
    return [e.id for e in entries]


def all_entries(session):
    return [row.to_journal() for row in Entry.objects.filter(session=session).order_by("seq")]


def test_article_story_through_the_services(alice):
    s = article_session_create(owner=alice)
    assert s.leaf_id == "e6" and s.entry_count == 7
    assert ids(branch_get(session=s)) == ["e0", "e1", "e2", "e5", "e6"]
    assert app_state_at(session=s) == KUNG_FU_STATE
    assert ids(branch_get(session=s, leaf_id="e4")) == ["e0", "e1", "e2", "e3", "e4"]
    back = rewind_append(session_id=s.id, target_id="e4")
    assert back.app_state == LAXATIVE_STATE and back.branch_entry.from_id == "e6"
    s.refresh_from_db()
    assert s.entry_count == 8 and Entry.objects.filter(session=s).count() == 8


def test_branch_and_state_match_the_pure_core(alice):
    s = article_session_create(owner=alice)
    entries = all_entries(s)
    for e in entries:
        assert branch_get(session=s, leaf_id=e.id) == branch_of(entries, e.id)
        snap_state = replay(
            [x for x in entries if x.id in set(ids(branch_of(entries, e.id)))],
            s.initial_app_state,
            NOW,
        ).app_state
        assert app_state_at(session=s, leaf_id=e.id) == snap_state
    rows = branch_rows(session=s)
    assert [r.seq for r in rows] == [1, 2, 3, 6, 7]


def test_append_names_the_leaf(alice):
    s = session_create(owner=alice, title="t")
    entry_append(session_id=s.id, entries=[msg("a", None)], expected_leaf_id=None)
    entry_append(session_id=s.id, entries=[msg("b", "a")], expected_leaf_id="a")
    with pytest.raises(StaleLeaf) as err:
        entry_append(session_id=s.id, entries=[msg("c", "a")], expected_leaf_id="a")
    assert (err.value.expected, err.value.actual) == ("a", "b")
    s.refresh_from_db()
    assert (s.leaf_id, s.entry_count) == ("b", 2)
    assert Entry.objects.filter(session=s).count() == 2


@pytest.mark.parametrize(
    ("entries", "expected_leaf", "message"),
    [
        ([msg("x", "nowhere")], "b", "parent 'nowhere' is not in the session"),
        ([msg("a", "b")], "b", "entry id 'a' is already in the session"),
        ([msg("x", None)], "b", "has no parent"),
        ([msg("x", "y"), msg("y", "b")], "b", "comes before its parent"),
        ([msg("x", "b"), msg("x", "b")], "b", "repeat an id"),
    ],
)
def test_bad_appends_change_nothing(alice, entries, expected_leaf, message):
    s = session_create(owner=alice, title="t")
    entry_append(session_id=s.id, entries=[msg("a", None), msg("b", "a")], expected_leaf_id=None)
    with pytest.raises(InvalidEntry, match=message):
        entry_append(session_id=s.id, entries=entries, expected_leaf_id=expected_leaf)
    s.refresh_from_db()
    assert (s.leaf_id, s.entry_count) == ("b", 2)
    assert ids(all_entries(s)) == ["a", "b"]


def test_unknown_session(alice):
    with pytest.raises(SessionNotFound):
        entry_append(session_id="s_nope", entries=[msg("a", None)], expected_leaf_id=None)


def test_navigation(alice):
    s = article_session_create(owner=alice)
    nav = rewind_append(session_id=s.id, target_id="e6")
    assert nav.branch_entry is None and nav.leaf_id == "e6"
    with pytest.raises(UnknownEntry):
        rewind_append(session_id=s.id, target_id="zz")
    with pytest.raises(StaleLeaf):
        rewind_append(session_id=s.id, target_id="e0", expected_leaf_id="e4")
    nav = rewind_append(session_id=s.id, target_id="e0", expected_leaf_id="e6")
    assert nav.app_state == s.initial_app_state
    s.refresh_from_db()
    assert s.leaf_id == nav.leaf_id == nav.branch_entry.id


def test_navigation_refused_while_a_run_is_going(alice):
    s = article_session_create(owner=alice)
    operation_accept(session_id=s.id, text="go on")
    with pytest.raises(SessionBusy, match="a run is in progress"):
        rewind_append(session_id=s.id, target_id="e0")


def test_children_and_entries_after(alice):
    s = article_session_create(owner=alice)
    assert ids(r.entry for r in children_rows(session=s, entry_id="e2")) == ["e3", "e5"]
    assert ids(r.entry for r in children_rows(session=s, entry_id=None)) == ["e0"]
    with pytest.raises(UnknownEntry):
        children_rows(session=s, entry_id="zz")
    assert [r.seq for r in entries_after(session=s, after_seq=5)] == [6, 7]
    assert entry_ids_among(session=s, ids=["e1", "e9", "e6"]) == {"e1", "e6"}


def test_session_get_hides_other_peoples_sessions(alice, bob):
    s = session_create(owner=alice, title="mine")
    assert session_get(session_id=s.id, owner=alice) == s
    with pytest.raises(SessionNotFound):
        session_get(session_id=s.id, owner=bob)


def test_rename_and_titles(alice):
    s = session_create(owner=alice, title="  first ")
    assert s.title == "first"
    assert session_rename(session_id=s.id, title="second").title == "second"
    with pytest.raises(InvalidEntry):
        session_create(owner=alice, title="   ")
    with pytest.raises(ValueError, match="NUL"):
        session_create(owner=alice, title="a\x00b")


def test_delete_removes_every_fact_of_the_session_only(alice):
    s = article_session_create(owner=alice)
    other = article_session_create(owner=alice)
    op = operation_accept(session_id=other.id, text="x")
    with pytest.raises(SessionBusy):
        session_delete(session_id=other.id)
    session_delete(session_id=s.id)
    assert not ComicSession.objects.filter(pk=s.id).exists()
    assert not Entry.objects.filter(session_id=s.id).exists()
    assert Entry.objects.filter(session_id=other.id).count() == 8
    assert OperationRecord.objects.filter(operation_id=op.operation_id).count() == 1


@pytest.mark.django_db(transaction=True)
def test_refusals_outside_a_transaction_leave_the_connection_clean(alice):
    """Autocommit is the hot path (one statement on PostgreSQL, a raw BEGIN on SQLite)."""
    from django.db import connection

    s = session_create(owner=alice, title="t")
    entry_append(session_id=s.id, entries=[msg("a", None), msg("b", "a")], expected_leaf_id=None)
    with pytest.raises(InvalidEntry, match="already in the session"):
        entry_append(session_id=s.id, entries=[msg("a", "b")], expected_leaf_id="b")
    with pytest.raises(StaleLeaf):
        entry_append(session_id=s.id, entries=[msg("c", "b")], expected_leaf_id="a")
    with pytest.raises(InvalidEntry, match="parent 'zz'"):
        entry_append(session_id=s.id, entries=[msg("c", "zz")], expected_leaf_id="b")
    assert not connection.in_atomic_block
    entry_append(session_id=s.id, entries=[msg("c", "b"), msg("d", "c")], expected_leaf_id="b")
    s.refresh_from_db()
    assert (s.leaf_id, s.entry_count) == ("d", 4)
    assert ids(all_entries(s)) == ["a", "b", "c", "d"]


def test_bad_text_and_state_are_store_errors_that_change_nothing(alice):
    with pytest.raises(InvalidEntry, match="NUL"):
        session_create(owner=alice, title="a\x00b")
    with pytest.raises(InvalidEntry, match="not a JSON value"):
        session_create(owner=alice, title="t", initial_app_state={"when": {1, 2}})
    with pytest.raises(InvalidEntry, match="finite"):
        session_create(owner=alice, title="t", initial_app_state={"x": float("inf")})
    with pytest.raises(InvalidEntry, match="JSON object"):
        session_create(owner=alice, title="t", initial_app_state=["not", "an", "object"])
    assert not ComicSession.objects.exists()
