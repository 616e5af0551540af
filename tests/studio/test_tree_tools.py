"""The tree's tools on the studio page: cost badges, what a branch spent, labels and
bookmarks on a node, search and its jump to a node; who may use them.

The session is written straight to the store (tests/support/storyboard.py): turn 1, then
turns 2 and 3; a rewind to after turn 2 and turn 6 there; a rewind to after turn 1 and
turns 4 and 5, the active path. Panels charge 10 credits (turns 1, 2, 3, 4, 6).
"""

from __future__ import annotations

import re

import pytest

from jaiweb.store.labels import labels_of
from jaiweb.store.models import Entry, Label
from jaiweb.studio.regions import regions_html_shared
from tests.support.builders import XSS, parked_call
from tests.support.storyboard import line, rewind, store, turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def forked(alice):
    entries = [
        *line(3, cost=10),
        rewind("b1", "t2f", "t3f"),
        *turn(6, "b1", cost=10),
        rewind("b2", "t1f", "t6f", n=1),
        *turn(4, "b2", cost=10),
        *turn(5, "t4f", state=False, panel=False),
    ]
    return store(alice, entries, leaf="t5f")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


def node_html(page: str, entry_id: str, by: str = "entry-id") -> str:
    """The markup of one node (its ``.node`` div), by its last entry (or its first)."""
    found = re.search(rf'<div class="node"[^>]*data-{by}="{entry_id}".*?</div>', page, re.S)
    assert found, f"no node {entry_id}"
    return found.group(0)


def spent(client, session, query: str) -> int:
    response = client.get(f"/sessions/{session.id}/tree/spent?{query}")
    assert response.status_code == 200, response.content
    return int(re.search(r'data-spent="(\d+)"', response.content.decode()).group(1))


# --- cost badges ------------------------------------------------------------------------


def test_each_node_shows_what_it_charged_and_each_branch_what_it_spent(client, alice, forked):
    client.force_login(alice)
    page = client.get(f"/sessions/{forked.id}/").content.decode()
    assert 'data-badge="charged" data-credits="10"' in node_html(page, "t1f")
    assert 'data-badge="charged"' in node_html(page, "t4f")
    assert 'data-badge="charged"' not in node_html(page, "t5f")  # it drew nothing
    # the rewound branch (turns 2, 3) is drawn open; its sum loads when it is in view
    assert "tree/spent?under=t2u" in page
    assert spent(client, forked, "under=t2u") == 30  # turns 2 and 3, and 6 below turn 2
    # turn 2's other branch (turn 6) is folded behind "+1": its sum loads lazily too
    assert "tree/spent?forks=t2f&amp;except=t3u" in page
    assert spent(client, forked, "forks=t2f&except=t3u") == 10
    assert spent(client, forked, "forks=t1f&except=b2") == 30
    assert spent(client, forked, "under=t5u") == 0
    assert spent(client, forked, "under=t2u&under=t4u") == 40


def test_a_parked_run_marks_its_turn_waiting_for_an_admin(client, alice, forked):
    parked_call(forked)  # a prompt after turn 5, its call dispatched, parked for an admin
    prompt = Entry.objects.get(session=forked, parent_id="t5f").entry_id
    client.force_login(alice)
    page = client.get(f"/sessions/{forked.id}/").content.decode()
    assert 'data-badge="waiting"' in node_html(page, prompt, by="first-id")
    assert page.count('data-badge="waiting"') == 1


def test_spent_refuses_what_it_cannot_add_up(client, alice, bob, forked):
    client.force_login(alice)
    assert client.get(f"/sessions/{forked.id}/tree/spent").status_code == 422
    assert client.get(f"/sessions/{forked.id}/tree/spent?under=nope").status_code == 404
    assert client.get(f"/sessions/{forked.id}/tree/spent?forks=nope").status_code == 404
    many = "&".join(["under=t1u"] * 51)
    assert client.get(f"/sessions/{forked.id}/tree/spent?{many}").status_code == 422
    client.force_login(bob)
    assert client.get(f"/sessions/{forked.id}/tree/spent?under=t1u").status_code == 404


# --- labels and bookmarks ---------------------------------------------------------------


def add(client, session, entry_id: str, text: str, kind: str = "label"):
    return client.post(
        f"/sessions/{session.id}/entries/{entry_id}/labels/add",
        {"text": text, "kind": kind},
        HTTP_HX_REQUEST="true",
    )


def test_a_label_shows_on_its_node_and_stays_through_a_rewind(client, alice, forked):
    client.force_login(alice)
    part = client.get(f"/sessions/{forked.id}/entries/t3f/labels").content.decode()
    assert 'name="text"' in part and 'maxlength="80"' in part and "label-chip" not in part
    response = add(client, forked, "t3f", "  the stomach ache  ")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-label="the stomach ache"' in body  # in the part, and on the redrawn tree
    assert 'id="tree"' in body and 'hx-swap-oob="true"' in body
    assert 'class="label-chip"' in node_html(body, "t3f")
    add(client, forked, "t3f", "best", kind="bookmark")
    assert [(x.kind, x.text) for x in labels_of(session_id=forked.id)] == [
        ("label", "the stomach ache"),
        ("bookmark", "best"),
    ]
    # a rewind (to after turn 3, off the active path) moves the leaf; the labels stay
    client.post(f"/sessions/{forked.id}/rewind", {"entry_id": "t3f"})
    page = client.get(f"/sessions/{forked.id}/").content.decode()
    node = node_html(page, "t3f")
    assert 'data-label="the stomach ache"' in node and 'data-label-kind="bookmark"' in node

    label = Label.objects.get(session=forked, text="best")
    url = f"/sessions/{forked.id}/entries/t3f/labels/{label.id}/remove"
    response = client.post(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'data-label="best"' not in response.content.decode()
    assert client.post(url, HTTP_HX_REQUEST="true").status_code == 404  # gone already


def test_the_tree_a_watcher_gets_shows_a_new_label(client, alice, forked):
    """The watchers' regions are cached by what they show: a label changes what they show."""
    before = regions_html_shared(session=forked, language="en")
    assert 'data-label="new"' not in before
    client.force_login(alice)
    add(client, forked, "t5f", "new")
    assert 'data-label="new"' in regions_html_shared(session=forked, language="en")


def test_an_empty_or_too_long_label_is_refused_and_nothing_is_written(client, alice, forked):
    client.force_login(alice)
    for text in ("", "   ", "x" * 81):
        response = add(client, forked, "t1f", text)
        assert response.status_code == 422, text
        assert 'role="alert"' in response.content.decode()
    response = add(client, forked, "t1f", "ok", kind="sticker")
    assert response.status_code == 422
    assert add(client, forked, "t1f", "x" * 80).status_code == 200  # exactly the limit
    assert [x.text for x in labels_of(session_id=forked.id)] == ["x" * 80]


def test_a_label_is_escaped_everywhere_it_shows(client, alice, forked):
    client.force_login(alice)
    body = add(client, forked, "t2f", XSS).content.decode()
    assert XSS not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    page = client.get(f"/sessions/{forked.id}/").content.decode()
    assert XSS not in page and 'data-label="&lt;script&gt;alert(1)&lt;/script&gt;"' in page
    found = client.get(f"/sessions/{forked.id}/tree/search", {"q": "<script>"}).content.decode()
    assert XSS not in found and "<mark>&lt;script&gt;</mark>alert(1)&lt;/script&gt;" in found


def test_unknown_nodes_are_404_and_nothing_is_written(client, alice, forked):
    client.force_login(alice)
    assert client.get(f"/sessions/{forked.id}/entries/nope/labels").status_code == 404
    assert add(client, forked, "nope", "x").status_code == 404
    assert client.get(f"/sessions/{forked.id}/tree/jump?entry=nope").status_code == 404
    url = f"/sessions/{forked.id}/entries/t1f/labels/999999/remove"
    assert client.post(url).status_code == 404
    assert not Label.objects.exists()


def test_someone_elses_session_is_404_for_every_tool(client, alice, bob, forked):
    client.force_login(alice)
    add(client, forked, "t1f", "mine")
    label = Label.objects.get()
    client.force_login(bob)
    base = f"/sessions/{forked.id}"
    for url in (
        f"{base}/entries/t1f/labels",
        f"{base}/tree/search?q=prompt",
        f"{base}/tree/jump?entry=t1u",
        f"{base}/tree/spent?under=t1u",
    ):
        assert client.get(url).status_code == 404, url
    assert add(client, forked, "t1f", "theirs").status_code == 404
    assert client.post(f"{base}/entries/t1f/labels/{label.id}/remove").status_code == 404
    assert [x.text for x in labels_of(session_id=forked.id)] == ["mine"]


def test_staff_may_read_labels_and_search_but_not_write(client, alice, staff, forked):
    client.force_login(alice)
    add(client, forked, "t1f", "mine")
    label = Label.objects.get()
    client.force_login(staff)
    part = client.get(f"/sessions/{forked.id}/entries/t1f/labels").content.decode()
    assert 'data-label="mine"' in part
    assert "<form" not in part and "remove-label" not in part  # nothing to press
    assert client.get(f"/sessions/{forked.id}/tree/search?q=mine").status_code == 200
    assert add(client, forked, "t1f", "staff was here").status_code == 404
    url = f"/sessions/{forked.id}/entries/t1f/labels/{label.id}/remove"
    assert client.post(url).status_code == 404
    assert [x.text for x in labels_of(session_id=forked.id)] == ["mine"]


# --- search -----------------------------------------------------------------------------


def search(client, session, q: str):
    return client.get(f"/sessions/{session.id}/tree/search", {"q": q})


def test_search_finds_abandoned_branches_and_jumps_to_the_node(client, alice, forked):
    client.force_login(alice)
    body = search(client, forked, "PROMPT 3").content.decode()  # case-blind
    assert 'data-hit-entry="t3u"' in body and "<mark>prompt 3</mark>" in body
    # the jump names the node of the hit's turn (its last entry), and opens it
    jump = client.get(f"/sessions/{forked.id}/tree/jump?entry=t3u").content.decode()
    assert 'data-node="t3f"' in jump and f"/sessions/{forked.id}/entries/t3f/" in jump
    narration = client.get(f"/sessions/{forked.id}/tree/jump?entry=t6a").content.decode()
    assert 'data-node="t6f"' in narration  # a hit inside a turn of a folded branch
    on_path = client.get(f"/sessions/{forked.id}/tree/jump?entry=t4u").content.decode()
    assert 'data-node="t4f"' in on_path


def test_search_says_what_it_could_not_do(client, alice, forked):
    client.force_login(alice)
    for q in ("", "   "):
        response = search(client, forked, q)
        assert response.status_code == 422 and 'data-search="refused"' in response.content.decode()
    response = search(client, forked, "x" * 201)
    assert response.status_code == 422 and "200" in response.content.decode()
    response = search(client, forked, "no such words <b>")
    body = response.content.decode()
    assert response.status_code == 200 and 'data-search="none"' in body
    assert "&lt;b&gt;" in body and "<b>" not in body


def test_the_tools_speak_the_viewers_language(client, alice, forked):
    client.force_login(alice)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
    page = client.get(f"/sessions/{forked.id}/", **zh).content.decode()
    assert "搜索整棵树" in page and "只显示" in page and "有分镜的" in page
    assert ">10 积分<" in node_html(page, "t1f")
    part = client.get(f"/sessions/{forked.id}/entries/t1f/labels", **zh).content.decode()
    assert "添加" in part and "书签" in part
    found = client.get(f"/sessions/{forked.id}/tree/search?q=zzz", **zh).content.decode()
    assert "这棵树里没有与“zzz”匹配的内容" in found
    spent = client.get(f"/sessions/{forked.id}/tree/spent?under=t2u", **zh).content.decode()
    assert "已花 30 积分" in spent
