"""The timeline page: who may see it, what it ships, escaping, positions, the cap.

Sessions are written straight to the store (tests/support/storyboard.py).
"""

from __future__ import annotations

import json
import re

import pytest

from jaiweb.studio.views import timeline as timeline_views
from journal.entries import MessageEntry, UserMessage
from tests.support.storyboard import T0, line, rewind, store, turn

pytestmark = pytest.mark.django_db


def the_story(owner, *, first_prompt: str | None = None):
    """Two turns, a rewind to after the first, a third turn: 19 entries."""
    entries = [*line(2), rewind("b1", "t1f", "t2f"), *turn(3, "b1")]
    if first_prompt is not None:
        entries[0] = MessageEntry(
            id="t1u", parent_id=None, timestamp=T0, message=UserMessage(content=first_prompt)
        )
    return store(owner, entries, "t3f")


def shipped(body: str, script_id: str) -> dict:
    found = re.search(rf'<script id="{script_id}" type="application/json">(.*?)</script>', body)
    assert found, f"no {script_id} in the page"
    return json.loads(found.group(1))


def test_the_owner_gets_the_whole_tree_in_append_order(client, alice):
    session = the_story(alice)
    client.force_login(alice)
    response = client.get(f"/sessions/{session.id}/timeline")
    assert response.status_code == 200
    body = response.content.decode()
    data = shipped(body, "timeline-data")
    assert len(data["steps"]) == 19
    assert [n[0] for n in data["nodes"]] == ["t1u", "t2u", "t3u"]
    assert [n[1:4] for n in data["nodes"]] == [[None, 0, 0], [0, 1, 0], [0, 1, 1]]
    assert [p[2] for p in data["panels"]] == ["img_0001", "img_0002", "img_0003"]
    assert data["steps"][12][1:4] == ["rewind", None, 0]  # back to turn 1
    assert 'data-position="19"' in body and 'max="19"' in body
    assert "data-timeline-capped" not in body
    words = shipped(body, "timeline-words")
    assert words["what"]["panel"] == "panel drawn"
    assert words["tools"]["generate_image"] == "draw a panel"


def test_the_session_page_links_to_it(client, alice):
    session = the_story(alice)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/").content.decode()
    assert f'href="/sessions/{session.id}/timeline"' in body


def test_another_users_session_is_not_found_and_staff_may_read(
    client, alice, bob, django_user_model
):
    session = the_story(alice)
    client.force_login(bob)
    assert client.get(f"/sessions/{session.id}/timeline").status_code == 404
    assert client.get("/sessions/s_nosuchsession/timeline").status_code == 404
    staff = django_user_model.objects.create_user("staff", password="x", is_staff=True)
    client.force_login(staff)
    assert client.get(f"/sessions/{session.id}/timeline").status_code == 200
    client.logout()
    response = client.get(f"/sessions/{session.id}/timeline")
    assert response.status_code == 302 and "/login" in response["Location"]


def test_a_prompt_with_a_script_tag_is_shipped_as_data_never_as_markup(client, alice):
    evil = '<script>alert("owned")</script></script><img src=x onerror=alert(1)>'
    session = the_story(alice, first_prompt=evil)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/timeline").content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert shipped(body, "timeline-data")["nodes"][0][6] == " ".join(evil.split())


@pytest.mark.parametrize("at", ["0", "-1", "20", "abc", "1e3", "3.0", "", " 3", "١"])
def test_a_bad_position_is_a_clear_400_and_a_good_one_opens_there(client, alice, at):
    session = the_story(alice)
    client.force_login(alice)
    response = client.get(f"/sessions/{session.id}/timeline", {"at": at})
    assert response.status_code == 400
    assert response.content.decode() == "A position is a whole number from 1 to 19."
    good = client.get(f"/sessions/{session.id}/timeline", {"at": "3"})
    assert good.status_code == 200 and 'data-position="3"' in good.content.decode()


def test_an_empty_session_has_no_position(client, alice):
    session = store(alice, [], None)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/timeline").content.decode()
    assert "data-timeline-empty" in body and 'id="timeline-slider"' not in body
    assert shipped(body, "timeline-data") == {"nodes": [], "panels": [], "steps": []}
    response = client.get(f"/sessions/{session.id}/timeline", {"at": "1"})
    assert response.status_code == 400 and "no entries yet" in response.content.decode()


def test_past_the_cap_it_replays_the_first_entries_and_says_so(client, alice, monkeypatch):
    monkeypatch.setattr(timeline_views, "TIMELINE_ENTRIES", 8)
    session = the_story(alice)
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/timeline").content.decode()
    assert len(shipped(body, "timeline-data")["steps"]) == 8
    assert "This session has 19 entries; the timeline replays the first 8 of them." in body
    assert 'max="8"' in body


def test_the_chinese_page_speaks_chinese(client, alice):
    session = the_story(alice)
    client.force_login(alice)
    client.cookies["django_language"] = "zh-hans"
    body = client.get(f"/sessions/{session.id}/timeline").content.decode()
    words = shipped(body, "timeline-words")
    said = [re.sub(r"%\(\w+\)s", "", w) for w in [*words["what"].values(), words["step"]]]
    assert [w for w in said if re.search("[A-Za-z]{2}", w)] == []
