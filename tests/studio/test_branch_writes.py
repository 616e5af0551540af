"""The inspector's branch tools (studio/views/branch_writes.py): fork into a new session,
regenerate, edit and resend, cherry-pick a panel; and what the inspector offers."""

from __future__ import annotations

import pytest

from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_set, wallet_get_or_create
from jaiweb.store.comparisons import rewind_preview_at
from jaiweb.store.models import ComicSession, Entry, Operation
from jaiweb.store.selectors import app_state_at, branch_get, branch_rows
from jaiweb.store.services import entry_append, session_create
from jaiweb.studio.selectors.rewinds import rewind_preview_of
from tests.support.builders import park_operation
from tests.support.factories import assistant, branch, panel, post, state, user

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
HERO = "猪猪侠"
STRONG = {
    "characters": {HERO: {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}},
    "permission_mode": "ask",
}
SICK = {
    "characters": {"猪猪侠": {"buff": "拉肚子虚脱", "skill": "无", "mood": "狼狈"}},
    "permission_mode": "auto",
}


@pytest.fixture
def story(alice):
    """The article's two branches after turn 1: the stomach-ache turn (its panel p_sick, a
    post, the state SICK) left behind by a rewind to a0; the active branch ends at a1."""
    wallet_get_or_create(user=alice)
    session = session_create(owner=alice, title="猪猪侠 <b>story</b>", initial_app_state=STRONG)
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "吃棒棒糖"),
            assistant("a0", "u0", "好的"),
            user("us", "a0", "吃泻药"),
            assistant("c1", "us", calls=[("c_p_sick", "generate_image")]),
            state("s1", "c1", SICK),
            panel("p_sick", "s1", cost=20),
            post("pub", "p_sick"),
            assistant("f1", "pub", "捂肚子"),
            branch("b1", "a0", "f1"),
            user("u1", "b1", "降龙十巴掌"),
            assistant("a1", "u1", "拍飞"),
        ],
        expected_leaf_id=None,
    )
    session.refresh_from_db()
    return session


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


def count(session) -> int:
    return Entry.objects.filter(session=session).count()


def inspect(client, session, node: str, first: str) -> str:
    got = client.get(f"/sessions/{session.id}/entries/{node}/?from={first}")
    assert got.status_code == 200
    return got.content.decode()


# --- what the inspector offers ---------------------------------------------------------


def test_the_preview_names_what_rolls_back_and_what_stays(client, alice, story):
    client.force_login(alice)
    # from the leaf (the lollipop branch) back to the stomach ache: the buff and the
    # mode roll back to the sick turn's; the part left behind spent nothing
    body = inspect(client, story, "f1", "us")
    assert 'data-preview="rewind"' in body
    assert '超级棒棒糖(功夫大师)</span> → <span class="after">拉肚子虚脱' in body
    assert 'ask me</span> → <span class="after">don&#x27;t ask' in body
    assert "0 credits stay spent" in body and "0 posts stay on the feed" in body
    # the session moved to the sick turn: going back to a0 leaves its 20 credits and post
    client.post(f"/sessions/{story.id}/rewind", {"entry_id": "f1"}, **HX)
    body = inspect(client, story, "a0", "u0")
    assert '拉肚子虚脱</span> → <span class="after">超级棒棒糖(功夫大师)' in body
    assert "20 credits stay spent" in body and "1 post stays on the feed" in body


def test_the_preview_speaks_the_pages_language_and_keeps_the_journals_values(client, alice, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/rewind", {"entry_id": "f1"}, **HX)
    got = client.get(f"/sessions/{story.id}/entries/a0/?from=u0", HTTP_ACCEPT_LANGUAGE="zh-CN")
    body = got.content.decode()
    assert '猪猪侠 — 增益: <span class="before">拉肚子虚脱</span> → ' in body
    assert '<span class="after">超级棒棒糖(功夫大师)</span>' in body
    assert '付费工具： <span class="before">不用问</span> → <span class="after">先问我' in body
    assert "20 积分已花掉，不退回" in body and "1 条帖子仍留在动态里" in body


def test_the_inspectors_preview_is_the_stores(alice, story):
    """studio.selectors.rewinds.rewind_preview_of (from the paths the inspector has read) says what
    store.comparisons.rewind_preview_at says, from every leaf to every node."""
    nodes = [e.entry_id for e in Entry.objects.filter(session=story).order_by("seq")]
    for leaf in ("a1", "f1", "s1"):
        story.leaf_id = leaf  # (only read here: where the session would be)
        for node in nodes:
            got = rewind_preview_of(
                session=story,
                target_rows=branch_rows(session=story, leaf_id=node, lazy=True),
                leaf_rows=branch_rows(session=story, leaf_id=leaf, lazy=True),
            )
            assert got == rewind_preview_at(session=story, target_id=node), (leaf, node)


def test_nothing_to_roll_back_is_said_plainly(client, alice, story):
    client.force_login(alice)
    body = inspect(client, story, "a0", "u0")  # the leaf's own branch, same state
    assert "Nothing to roll back" in body
    assert 'data-preview="rewind"' not in inspect(client, story, "a1", "u1")  # the leaf


def test_the_owner_gets_the_tools_and_a_staff_viewer_reads_only(client, alice, staff, story):
    client.force_login(alice)
    off = inspect(client, story, "f1", "us")  # off the active branch
    assert 'data-action="cherry-pick"' in off and 'data-action="fork"' in off
    assert 'data-action="regenerate"' in off and 'data-action="resend"' in off
    assert ">吃泻药</textarea>" in off  # the prompt, ready to edit
    on = inspect(client, story, "a1", "u1")
    assert 'data-action="cherry-pick"' not in on  # no panel to pick on its own branch
    first = inspect(client, story, "a0", "u0")
    assert 'data-action="resend"' not in first and 'data-action="regenerate"' not in first
    assert 'data-hint="resend-first"' in first and 'data-action="fork"' in first
    client.force_login(staff)
    read = inspect(client, story, "f1", "us")
    assert 'id="inspector"' in read
    for action in ("cherry-pick", "fork", "regenerate", "resend"):
        assert f'data-action="{action}"' not in read


def test_the_regenerate_button_shows_the_balance_and_what_a_panel_costs(client, alice, story):
    credits_set(user=alice, balance=12)
    client.force_login(alice)
    tools = inspect(client, story, "f1", "us").split('class="regenerate"')[1].split("</form>")[0]
    assert 'data-balance-hint="last" data-balance="12"' in tools
    assert "Each panel it draws costs 10 credits." in tools and 'data-action="ask-credits"' in tools


def test_the_tools_are_disabled_while_a_run_is_going(client, alice, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/prompts", {"text": "hi"}, **HX)
    body = inspect(client, story, "f1", "us")
    assert 'data-action="cherry-pick" disabled' in body
    assert 'data-action="fork" disabled' in body and 'data-action="regenerate" disabled' in body


# --- fork ------------------------------------------------------------------------------


def test_a_fork_goes_to_the_new_session_which_says_where_it_came_from(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/entries/f1/fork", {"title": "  副本  "}, **HX)
    assert got.status_code == 200
    fork = ComicSession.objects.exclude(pk=story.id).get()
    assert got["HX-Redirect"] == f"/sessions/{fork.id}/"
    assert fork.title == "副本"
    assert [e.id for e in branch_get(session=fork)] == [
        "u0", "a0", "us", "c1", "s1", "p_sick", "pub", "f1",
    ]  # fmt: skip
    page = client.get(f"/sessions/{fork.id}/").content.decode()
    assert 'data-origin="forked"' in page
    assert f'href="/sessions/{story.id}/"' in page
    assert "«猪猪侠 &lt;b&gt;story&lt;/b&gt;»" in page  # the source's title, escaped
    assert 'data-panel="img_p_sick"' in page  # the path's strip


def test_a_plain_form_fork_is_redirected(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/entries/a1/fork", {})
    fork = ComicSession.objects.exclude(pk=story.id).get()
    assert got.status_code == 302 and got["Location"] == f"/sessions/{fork.id}/"
    assert fork.title == story.title


def test_a_fork_with_an_oversized_title_writes_nothing(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/entries/a1/fork", {"title": "x" * 201}, **HX)
    assert got.status_code == 422 and "at most 200" in got.content.decode()
    assert ComicSession.objects.count() == 1


# --- regenerate ------------------------------------------------------------------------


def test_regenerate_starts_a_sibling_attempt(client, alice, story):
    client.force_login(alice)
    got = client.post(
        f"/sessions/{story.id}/entries/a1/regenerate", {"expected_leaf_id": "a1"}, **HX
    )
    assert got.status_code == 202
    assert 'id="tree"' in got.content.decode()
    story.refresh_from_db()
    path = branch_get(session=story)
    assert path[-1].message.content == "降龙十巴掌" and path[-1].id != "u1"
    assert path[-2].type == "branch" and path[-2].parent_id == "a0"
    assert Operation.objects.filter(session=story).count() == 1  # the run started


def test_a_stale_leaf_is_409_and_brings_the_page_up_to_date(client, alice, story):
    client.force_login(alice)
    before = count(story)
    got = client.post(
        f"/sessions/{story.id}/entries/a1/regenerate",
        {"expected_leaf_id": "f1", "node": "a1", "from": "u1"},
        **HX,
    )
    body = got.content.decode()
    assert got.status_code == 409 and "another tab" in body
    assert 'id="form-error"' in body and 'id="tree"' in body and 'id="inspector"' in body
    assert count(story) == before and not Operation.objects.filter(session=story).exists()


def test_the_first_prompts_reply_cannot_be_regenerated(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/entries/a0/regenerate", {}, **HX)
    assert got.status_code == 409 and "fork" in got.content.decode()
    assert count(story) == 11


def test_a_parked_session_refuses(client, alice, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/prompts", {"text": "hi"}, **HX)
    park_operation(Operation.objects.get(session=story).id)
    before = count(story)
    got = client.post(f"/sessions/{story.id}/entries/a1/regenerate", {}, **HX)
    assert got.status_code == 409 and "waiting for an admin" in got.content.decode()
    assert count(story) == before


# --- edit and resend -------------------------------------------------------------------


def test_resend_sends_the_edited_text_as_a_new_branch(client, alice, story):
    client.force_login(alice)
    got = client.post(
        f"/sessions/{story.id}/entries/u1/resend",
        {"text": "降龙十一巴掌", "expected_leaf_id": "a1"},
        **HX,
    )
    assert got.status_code == 202
    story.refresh_from_db()
    path = branch_get(session=story)
    assert path[-1].message.content == "降龙十一巴掌" and path[-2].parent_id == "a0"
    assert Entry.objects.filter(session=story, entry_id="a1").exists()  # the old branch


def test_an_empty_or_oversized_resend_writes_nothing(client, alice, story, settings):
    client.force_login(alice)
    empty = client.post(f"/sessions/{story.id}/entries/u1/resend", {"text": "  \n"}, **HX)
    assert empty.status_code == 422 and "Write the prompt" in empty.content.decode()
    settings.JAIWEB_MAX_PROMPT_CHARS = 10
    long = client.post(f"/sessions/{story.id}/entries/u1/resend", {"text": "x" * 11}, **HX)
    assert long.status_code == 422 and "11 characters" in long.content.decode()
    assert count(story) == 11 and not Operation.objects.filter(session=story).exists()


def test_a_stale_resend_keeps_the_typed_text(client, alice, story):
    client.force_login(alice)
    got = client.post(
        f"/sessions/{story.id}/entries/us/resend",
        {"text": "吃<泻药>两颗", "expected_leaf_id": "f1", "node": "f1", "from": "us"},
        **HX,
    )
    body = got.content.decode()
    assert got.status_code == 409 and "another tab" in body
    assert ">吃&lt;泻药&gt;两颗</textarea>" in body  # kept, escaped, in the new inspector
    assert count(story) == 11


def test_the_first_prompt_and_a_reply_cannot_be_resent(client, alice, story):
    client.force_login(alice)
    first = client.post(f"/sessions/{story.id}/entries/u0/resend", {"text": "x"}, **HX)
    assert first.status_code == 409 and "fork" in first.content.decode()
    reply = client.post(f"/sessions/{story.id}/entries/a1/resend", {"text": "x"}, **HX)
    assert reply.status_code == 409
    assert count(story) == 11


# --- cherry-pick -----------------------------------------------------------------------


def test_a_cherry_pick_puts_the_panel_on_the_branch_uncharged(client, alice, story):
    client.force_login(alice)
    credits = wallet_balance(user=alice)
    got = client.post(
        f"/sessions/{story.id}/entries/p_sick/cherry-pick",
        {"expected_leaf_id": "a1", "node": "f1", "from": "us"},
        **HX,
    )
    body = got.content.decode()
    assert got.status_code == 200
    assert 'data-picked="true"' in body and 'data-badge="cherry-picked"' in body  # the strip
    assert 'data-icon="picked"' in body  # the tree's node of the placement
    assert 'data-action="cherry-pick"' in body  # the inspector of f1 again, still off-branch
    assert wallet_balance(user=alice) == credits
    story.refresh_from_db()
    assert branch_get(session=story)[-1].message.tool_name == "place_panel"
    assert app_state_at(session=story) == STRONG
    # the placement's turn in the inspector: the result step, marked
    placed = client.get(f"/sessions/{story.id}/entries/{story.leaf_id}/").content.decode()
    assert 'data-badge="cherry-picked"' in placed and "img_p_sick" in placed


def test_a_cherry_pick_may_take_the_state(client, alice, story):
    client.force_login(alice)
    got = client.post(
        f"/sessions/{story.id}/entries/p_sick/cherry-pick", {"take_state": "on"}, **HX
    )
    assert got.status_code == 200
    story.refresh_from_db()
    assert app_state_at(session=story) == SICK


def test_what_is_not_a_panel_cannot_be_picked_and_a_stale_pick_writes_nothing(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/entries/pub/cherry-pick", {}, **HX)
    assert got.status_code == 409 and "Only a panel" in got.content.decode()
    stale = client.post(
        f"/sessions/{story.id}/entries/p_sick/cherry-pick", {"expected_leaf_id": "f1"}, **HX
    )
    assert stale.status_code == 409 and "another tab" in stale.content.decode()
    assert count(story) == 11


# --- who may write ---------------------------------------------------------------------

WRITES = [
    ("f1/fork", {}),
    ("a1/regenerate", {}),
    ("u1/resend", {"text": "x"}),
    ("p_sick/cherry-pick", {}),
]


@pytest.mark.parametrize(("path", "data"), WRITES)
def test_another_users_or_a_staff_viewers_write_is_404(client, bob, staff, story, path, data):
    for who in (bob, staff):
        client.force_login(who)
        got = client.post(f"/sessions/{story.id}/entries/{path}", data, **HX)
        assert got.status_code == 404
    assert count(story) == 11 and ComicSession.objects.count() == 1


@pytest.mark.parametrize(("path", "data"), WRITES)
def test_an_unknown_node_is_404(client, alice, story, path, data):
    client.force_login(alice)
    node = path.split("/")[1]
    got = client.post(f"/sessions/{story.id}/entries/e_nope/{node}", data, **HX)
    assert got.status_code == 404
    assert count(story) == 11 and ComicSession.objects.count() == 1
