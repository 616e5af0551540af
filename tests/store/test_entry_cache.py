"""The per-process cache of parsed entries: filled by committed reads only, never confused."""

from __future__ import annotations

import pytest
from django.utils import timezone

from jaiweb.store import rows as rows_module
from jaiweb.store import selectors
from jaiweb.store.demo import article_session_create
from jaiweb.store.entry_cache import EntryCache, parsed_entries
from jaiweb.store.selectors import branch_get
from tests.support.factories import user
from tests.support.spies import calls_of


def test_lookup_needs_the_same_entry_id_at_the_same_seq():
    cache = EntryCache()
    cache.add("s1", {1: user("a", None)})
    assert cache.lookup("s1", 1, "a").id == "a"
    assert cache.lookup("s1", 1, "b") is None  # another entry took that seq: not a hit
    assert cache.lookup("s2", 1, "a") is None


def test_whole_sessions_are_evicted_least_recent_first():
    cache = EntryCache(max_entries=3)
    cache.add("s1", {1: user("a", None), 2: user("b", "a")})
    cache.add("s2", {1: user("c", None)})
    cache.lookup("s1", 1, "a")
    cache.add("s3", {1: user("d", None)})
    assert cache.lookup("s1", 1, "a") is None and cache.lookup("s3", 1, "d") is not None


def _count_parses(monkeypatch):
    """The number of rows of each ``parse_raw`` call from now on, in order."""
    calls = calls_of(monkeypatch, rows_module, "parse_raw")
    return lambda: [len(args[0]) for args, _kwargs in calls]


@pytest.mark.django_db(transaction=True)
def test_committed_reads_are_parsed_once(alice, monkeypatch):
    parsed_entries.clear()
    s = article_session_create(owner=alice)
    parsed = _count_parses(monkeypatch)
    first = branch_get(session=s)
    second = branch_get(session=s)
    assert first == second and [e.id for e in first] == ["e0", "e1", "e2", "e5", "e6"]
    assert parsed() == [5]
    branch_get(session=s, leaf_id="e4")  # shares e0…e2, parses only e3 and e4
    assert parsed() == [5, 2]


@pytest.mark.django_db
def test_reads_inside_a_transaction_fill_nothing(alice, monkeypatch):
    parsed_entries.clear()
    s = article_session_create(owner=alice)
    parsed = _count_parses(monkeypatch)
    branch_get(session=s)
    branch_get(session=s)
    assert parsed() == [5, 5]


@pytest.mark.django_db(transaction=True)
def test_rows_are_parsed_when_touched_and_the_app_state_needs_one(alice, monkeypatch):
    from jaiweb.store.demo import KUNG_FU_STATE
    from jaiweb.store.selectors import app_state_at, branch_rows

    parsed_entries.clear()
    s = article_session_create(owner=alice)
    parsed = _count_parses(monkeypatch)
    rows = branch_rows(session=s)
    assert [(r.entry_id, r.type) for r in rows][:2] == [("e0", "message"), ("e1", "app_state")]
    assert parsed() == []  # nothing parsed yet
    assert app_state_at(session=s, rows=rows) == KUNG_FU_STATE
    assert parsed() == [1]  # only e1, the last app_state on the path
    assert [r.entry.id for r in rows] == ["e0", "e1", "e2", "e5", "e6"]
    assert parsed() == [1, 1, 1, 1, 1]  # one at a time when touched one at a time
    assert branch_get(session=s) == [r.entry for r in rows]
    assert parsed() == [1, 1, 1, 1, 1]  # all kept: nothing parsed twice


@pytest.mark.django_db(transaction=True)
def test_lazy_rows_fetch_their_json_only_when_parsed_in_one_query(
    alice, monkeypatch, django_assert_num_queries
):
    parsed_entries.clear()
    s = article_session_create(owner=alice)
    parsed = _count_parses(monkeypatch)
    with django_assert_num_queries(1):  # the path, without any entry's JSON
        rows = selectors.branch_rows(session=s, lazy=True)
    assert [r.entry_id for r in rows] == ["e0", "e1", "e2", "e5", "e6"] and parsed() == []
    with django_assert_num_queries(1):  # two rows' JSON, one fetch
        selectors.parse_rows(rows[1:3])
    assert parsed() == [2] and [rows[1].entry.id, rows[2].entry.id] == ["e1", "e2"]
    with django_assert_num_queries(1):  # the path; the two rows come from the cache
        assert selectors.branch_rows(session=s, lazy=True)[1].entry.id == "e1"
    assert branch_get(session=s) == [r.entry for r in rows]  # the same entries as eager


@pytest.mark.django_db
def test_an_edited_app_state_never_reaches_the_cache_or_another_reader(alice):
    """The store keeps parsed entries per process: what a selector hands out is a copy."""
    from jaiweb.store.selectors import app_state_at, branch_rows
    from jaiweb.store.services import entry_append, session_create
    from journal.entries import AppStateEntry

    session = session_create(owner=alice, title="t")
    value = {"characters": {"猪猪侠": {"buff": "棒棒糖"}}, "permission_mode": "ask"}
    entry = AppStateEntry(id="e1", parent_id=None, timestamp=timezone.now(), value=value)
    entry_append(session_id=session.id, entries=[entry], expected_leaf_id=None)
    session.refresh_from_db()
    value["permission_mode"] = "auto"  # the caller's own dict, after the append
    got = app_state_at(session=session)
    got["characters"]["猪猪侠"]["buff"] = "拉肚子"
    rows = branch_rows(session=session)
    app_state_at(session=session, rows=rows)["characters"].clear()
    assert app_state_at(session=session) == {
        "characters": {"猪猪侠": {"buff": "棒棒糖"}},
        "permission_mode": "ask",
    }
