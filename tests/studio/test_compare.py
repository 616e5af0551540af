"""GET /sessions/<id>/compare?left=<node>&right=<node>: two branches side by side."""

from __future__ import annotations

import re

import pytest
from django.db import transaction

from jaiweb.store.chains import entry_rows
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.services import entry_append, session_create
from tests.support.factories import assistant, branch, panel, post, state, user

pytestmark = pytest.mark.django_db

HERO = "猪猪侠"
START = {
    "characters": {HERO: {"buff": "无", "skill": "无", "mood": "平静"}},
    "permission_mode": "ask",
}
LOLLIPOP = {
    "characters": {HERO: {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "平静"}},
    "permission_mode": "ask",
}
LAXATIVE = {
    "characters": {HERO: {"buff": "拉肚子虚脱", "skill": "无", "mood": "平静"}},
    "permission_mode": "auto",
}


@pytest.fixture
def forked(alice):
    """u0 (shared) → the laxative branch (x…, one panel of 10 credits and a post), and, after
    a rewind to u0, the lollipop branch (l…, two panels of 10); the leaf is on the lollipop."""
    entries = [
        user("u0", None, "the hero enters the ring"),
        user("xu", "u0", 'eats the laxative <script>alert("x")</script>'),
        assistant("xa", "xu", "oh no <b>bold</b>", calls=[("c_xp", "generate_image")]),
        state("xs", "xa", LAXATIVE),
        panel("xp", "xs"),
        post("xq", "xp"),
        branch("b1", "u0", "xq"),
        user("lu", "b1", "eats the lollipop"),
        assistant("la", "lu", "power!", calls=[("c_lp", "generate_image")]),
        state("ls", "la", LOLLIPOP),
        panel("lp", "ls"),
        panel("lp2", "lp"),
    ]
    session = session_create(owner=alice, title="fork <i>me</i>", initial_app_state=START)
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries))
        ComicSession.objects.filter(pk=session.id).update(leaf_id="lp2", entry_count=len(entries))
    session.refresh_from_db()
    return session


def compare(client, session, **params):
    return client.get(f"/sessions/{session.id}/compare", params)


def row(html: str, field: str) -> str:
    match = re.search(
        rf'<tr data-character="{HERO}" data-field="{field}"[^>]*>.*?</tr>', html, re.S
    )
    assert match, f"no {field} row"
    return match.group(0)


def test_both_sides_from_the_fork_with_the_state_diff_and_the_spending(client, alice, forked):
    client.force_login(alice)
    got = compare(client, forked, left="xq", right="lp2")
    assert got.status_code == 200
    html = got.content.decode()
    assert 'data-fork-id="u0"' in html
    buff = row(html, "buff")
    assert 'data-differs="true"' in buff
    assert "拉肚子虚脱" in buff and "超级棒棒糖(功夫大师)" in buff
    assert "data-differs" not in row(html, "mood")  # the same at both ends: not marked
    mode = re.search(r'<tr data-field="permission_mode"[^>]*>', html).group(0)
    assert 'data-differs="true"' in mode
    left, right = html.split('data-side="left" data-node-id="xq"')[1].split(
        'data-side="right" data-node-id="lp2"'
    )
    assert 'data-credits="10"' in left and 'data-panels="1"' in left and 'data-posts="1"' in left
    assert 'data-credits="20"' in right and 'data-panels="2"' in right and 'data-posts="0"' in right
    assert "img_xp" in left and "img_lp" in right and "img_xp" not in right
    assert "eats the lollipop" in right and "eats the lollipop" not in left
    assert "the hero enters the ring" not in left + right  # the shared part is not repeated


def test_what_people_typed_is_escaped(client, alice, forked):
    client.force_login(alice)
    html = compare(client, forked, left="xq", right="lp2").content.decode()
    assert '<script>alert("x")</script>' not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "fork &lt;i&gt;me&lt;/i&gt;" in html and "<i>me</i>" not in html


def test_without_both_nodes_the_page_says_what_to_pick_and_lists_the_leaves(client, alice, forked):
    client.force_login(alice)
    html = compare(client, forked).content.decode()
    assert "data-compare-empty" in html and "data-compare-state" not in html
    options = re.findall(r'<select name="left".*?</select>', html, re.S)[0]
    assert re.findall(r'<option value="([^"]+)"', options) == ["lp2", "xq"]  # newest first
    assert "★ eats the lollipop" in options  # the leaf, by its branch's last prompt
    # one node given: preselected, still no comparison
    html = compare(client, forked, left="xq").content.decode()
    assert '<option value="xq" selected>' in html and "data-compare-empty" in html


def test_a_node_picked_in_the_inspector_that_is_no_leaf_can_be_compared(client, alice, forked):
    client.force_login(alice)
    html = compare(client, forked, left="lp2", right="xa").content.decode()
    assert '<option value="xa" selected>' in html
    assert "拉肚子虚脱" not in html  # xa is before the laxative's state entry


def test_unknown_nodes_and_other_peoples_sessions_are_404(client, alice, bob, forked):
    client.force_login(alice)
    assert compare(client, forked, left="xq", right="nope").status_code == 404
    assert compare(client, forked, left="nope").status_code == 404
    assert compare(client, forked, left="x\x00", right="lp2").status_code == 404
    assert compare(client, forked, left="x" * 200, right="lp2").status_code == 404
    assert client.get("/sessions/nope/compare").status_code == 404
    client.force_login(bob)
    assert compare(client, forked, left="xq", right="lp2").status_code == 404
    assert compare(client, forked).status_code == 404


def test_staff_may_read_a_comparison_logged_out_may_not(client, django_user_model, forked):
    staff = django_user_model.objects.create_user("staff", password="s-pass-1", is_staff=True)
    assert compare(client, forked, left="xq", right="lp2").status_code == 302  # to log in
    client.force_login(staff)
    assert compare(client, forked, left="xq", right="lp2").status_code == 200


def test_the_inspector_of_a_node_on_another_branch_offers_the_comparison(client, alice, forked):
    client.force_login(alice)
    html = client.get(f"/sessions/{forked.id}/entries/xq/").content.decode()
    assert 'data-action="compare-with-current"' in html
    assert f"/sessions/{forked.id}/compare?left=lp2&amp;right=xq" in html
    html = client.get(f"/sessions/{forked.id}/entries/lp2/").content.decode()
    assert 'data-action="compare-with-current"' not in html  # the current branch itself


def test_a_long_side_shows_its_first_panels_and_says_how_many_more(client, alice):
    from jaiweb.studio.comparisons import SIDE_SHOWN

    entries, parent = [user("u0", None, "start")], "u0"
    for n in range(SIDE_SHOWN + 3):
        entries += [
            user(f"q{n}", parent, f"prompt {n}"),
            assistant(f"a{n}", f"q{n}", calls=[(f"c_p{n}", "generate_image")]),
            panel(f"p{n}", f"a{n}"),
        ]
        parent = f"p{n}"
    session = session_create(owner=alice, title="long")
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries))
        ComicSession.objects.filter(pk=session.id).update(leaf_id=parent, entry_count=len(entries))
    client.force_login(alice)
    html = compare(client, session, left="u0", right=parent).content.decode()
    right = html.split('class="compare-side" data-side="right"')[1]
    assert right.count("<figure") == SIDE_SHOWN and 'data-more-panels="3"' in right
    assert 'data-more-prompts="3"' in right and f'data-panels="{SIDE_SHOWN + 3}"' in right
    assert "img_p0" in right and f"img_p{SIDE_SHOWN}" not in right  # the first after the fork
    html = compare(client, session, left="u0", right=parent, all="1").content.decode()
    assert (
        html.split('class="compare-side" data-side="right"')[1].count("<figure") == SIDE_SHOWN + 3
    )
    assert "data-more-panels" not in html


def test_the_page_and_the_json_endpoint_agree(client, alice, forked):
    client.force_login(alice)
    html = compare(client, forked, left="xq", right="lp2").content.decode()
    api = client.get(f"/api/v1/sessions/{forked.id}/compare", {"left": "xq", "right": "lp2"})
    answer = api.json()
    assert f'data-fork-id="{answer["fork_id"]}"' in html
    for name in ("left", "right"):
        section = html.split(f'class="compare-side" data-side="{name}"')[1].split("</section>")[0]
        for key, value in answer[name]["effects"].items():
            assert f'data-{key}="{value}"' in section, (name, key)
    differing = {(c["character"], c["field"]) for c in answer["changes"] if c["character"]}
    marked = set(
        re.findall(r'<tr data-character="([^"]+)" data-field="(\w+)" class="differs"', html)
    )
    assert marked == differing


def test_a_side_with_a_picked_panel_counts_it_among_its_panels(client, alice, forked):
    """Issue 29: a cherry-picked panel was shown but not counted, and the side said
    "… and -1 more panels on this side"."""
    from journal.entries import MessageEntry, ToolResultMessage
    from tests.support.factories import at

    picked = MessageEntry(
        id="pick",
        parent_id="lp2",
        timestamp=at(10),
        message=ToolResultMessage(
            tool_call_id="c_pick",
            tool_name="place_panel",
            content="placed",
            details={"image_id": "img_xp", "from_entry_id": "xp", "cost": 0},
        ),
    )
    entry_append(session_id=forked.id, entries=[picked], expected_leaf_id="lp2")
    client.force_login(alice)
    html = compare(client, forked, left="xq", right="pick").content.decode()
    right = html.split('class="compare-side" data-side="right"')[1]
    assert right.count("<figure") == 3 and 'data-panels="3"' in right
    assert "more panel" not in html and "-1" not in right
