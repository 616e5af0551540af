"""Random sessions built through the store read back exactly as the pure core folds them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at, branch_get
from jaiweb.store.services import entry_append, rewind_append, session_create
from journal.entries import AppStateEntry, MessageEntry, UserMessage
from journal.snapshot import branch_app_state
from journal.tree import TreeIndex, branch_of

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
steps = st.lists(
    st.tuples(st.sampled_from(["say", "state", "rewind", "fork"]), st.integers(0, 10**6)),
    min_size=1,
    max_size=30,
)


@pytest.mark.django_db
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=steps)
def test_store_paths_equal_the_pure_fold(alice, steps):
    s = session_create(owner=alice, title="random")
    ids: list[str] = []
    leaf = None
    for n, (step, pick) in enumerate(steps):
        eid = f"e{n}"
        if step == "rewind" and ids:
            leaf = rewind_append(session_id=s.id, target_id=ids[pick % len(ids)]).leaf_id
            if leaf not in ids:
                ids.append(leaf)
            continue
        parent = ids[pick % len(ids)] if step == "fork" and ids else leaf
        if step == "state":
            entry = AppStateEntry(id=eid, parent_id=parent, timestamp=NOW, value={"n": n})
        else:
            entry = MessageEntry(
                id=eid, parent_id=parent, timestamp=NOW, message=UserMessage(content=f"m{n}")
            )
        entry_append(session_id=s.id, entries=[entry], expected_leaf_id=leaf)
        ids.append(eid)
        leaf = eid
    stored = [r.to_journal() for r in Entry.objects.filter(session=s).order_by("seq")]
    index = TreeIndex(stored)
    for entry in stored:
        assert branch_get(session=s, leaf_id=entry.id) == branch_of(index, entry.id)
        assert app_state_at(session=s, leaf_id=entry.id) == branch_app_state(
            index, entry.id, s.initial_app_state
        )
    call_command("journal_check", stdout=open("/dev/null", "w"))  # noqa: SIM115
