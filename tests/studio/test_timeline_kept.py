"""The timeline of a session's first N entries is read once per process: entries never
change, so each ``?at=`` load of the page reuses it, and an appended entry makes a new one."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jaiweb.store.services import entry_append
from journal.entries import MessageEntry, UserMessage
from tests.support.storyboard import T0, line, rewind, store, turn

pytestmark = pytest.mark.django_db


def the_story(owner):
    """Two turns, a rewind to after the first, a third turn."""
    return store(owner, [*line(2), rewind("b1", "t1f", "t2f"), *turn(3, "b1")], "t3f")


def shipped(body: str, script_id: str) -> dict:
    found = re.search(rf'<script id="{script_id}" type="application/json">(.*?)</script>', body)
    assert found, f"no {script_id} in the page"
    return json.loads(found.group(1))


def _entry_reads(queries) -> int:
    return sum("FROM store_entry" in q["sql"] for q in queries)


def test_a_second_position_reads_no_entry_and_an_append_is_seen(client, alice):
    session = the_story(alice)
    client.force_login(alice)
    first = shipped(
        client.get(f"/sessions/{session.id}/timeline").content.decode(), "timeline-data"
    )
    with CaptureQueriesContext(connection) as queries:
        again = client.get(f"/sessions/{session.id}/timeline?at=3")
    assert again.status_code == 200 and _entry_reads(queries.captured_queries) == 0
    assert shipped(again.content.decode(), "timeline-data") == first

    more = MessageEntry(
        id="t4u", parent_id="t3f", timestamp=T0, message=UserMessage(content="a fourth prompt")
    )
    entry_append(session_id=session.id, entries=[more], expected_leaf_id="t3f")
    grown = shipped(
        client.get(f"/sessions/{session.id}/timeline").content.decode(), "timeline-data"
    )
    assert grown != first and "a fourth prompt" in str(grown)


def test_someone_else_still_gets_404_when_the_timeline_is_kept(client, alice, bob):
    session = the_story(alice)
    client.force_login(alice)
    assert client.get(f"/sessions/{session.id}/timeline").status_code == 200
    client.force_login(bob)
    assert client.get(f"/sessions/{session.id}/timeline").status_code == 404
