"""Fork into a new session, edit and resend, regenerate, and cherry-pick a panel."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import prompt_submit
from jaiweb.render.models import WELCOME_CREDITS, Image, LedgerEntry, RenderJob
from jaiweb.render.selectors import wallet_balance
from jaiweb.store.models import ComicSession, Entry, Operation
from jaiweb.store.selectors import app_state_at, branch_get
from jaiweb.store.services import entry_append, session_create
from journal.branches import panel_image_of
from journal.ids import render_seed
from tests.api.conftest import run_to_the_end, start_run
from tests.support.factories import assistant, branch, panel, state, user
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db

SICK = {"characters": {"猪猪侠": {"buff": "拉肚子", "skill": "无", "mood": "狼狈"}}}
STRONG = {"characters": {"猪猪侠": {"buff": "棒棒糖", "skill": "降龙十巴掌", "mood": "得意"}}}


@pytest.fixture
def story(alice):
    """Two branches from the first panel: the stomach-ache panel (p_sick) was left behind
    by a rewind; the active branch ends at a1."""
    session = session_create(owner=alice, title="story", initial_app_state=STRONG)
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "吃棒棒糖"),
            assistant("a0", "u0", "好的"),
            state("s1", "a0", SICK),
            assistant("c1", "s1", calls=[("c_p_sick", "generate_image")]),
            panel("p_sick", "c1"),
            branch("b1", "a0", "p_sick"),
            user("u1", "b1", "降龙十巴掌"),
            assistant("a1", "u1", "拍飞"),
        ],
        expected_leaf_id=None,
    )
    session.refresh_from_db()
    return session


def ids(session, leaf=None):
    return [e.id for e in branch_get(session=session, leaf_id=leaf)]


def test_a_fork_copies_the_path_as_one_branch_and_says_where_it_came_from(as_alice, story):
    got = as_alice.post(f"/sessions/{story.id}/fork", {"entry_id": "a1", "title": "副本"})
    assert got.status_code == 201, got.content
    fork = ComicSession.objects.get(pk=got.json()["id"])
    assert ids(fork) == ["u0", "a0", "u1", "a1"]  # the rewind's branch entry left out
    assert fork.origin == {"forked_from": {"session_id": story.id, "entry_id": "a1"}}
    assert fork.title == "副本" and Entry.objects.filter(session=fork).count() == 4
    assert ids(story, "a1") == ["u0", "a0", "b1", "u1", "a1"]  # the source is as it was


def test_edit_and_resend_branches_at_the_prompts_parent(as_alice, story):
    before = Entry.objects.filter(session=story).count()
    got = as_alice.post(f"/sessions/{story.id}/entries/u1/resend", {"text": "降龙十一巴掌"})
    assert got.status_code == 202, got.content
    story.refresh_from_db()
    path = branch_get(session=story)
    assert [e.id for e in path][:2] == ["u0", "a0"] and path[2].type == "branch"
    assert path[2].parent_id == "a0"  # beside u1's branch, not under its rewind
    assert path[-1].message.content == "降龙十一巴掌"
    assert Entry.objects.filter(session=story).count() == before + 2  # branch + prompt
    assert "a1" in {e.entry_id for e in Entry.objects.filter(session=story)}  # kept


def test_regenerate_sends_the_turns_prompt_again_as_a_sibling(as_alice, story):
    got = as_alice.post(f"/sessions/{story.id}/entries/a1/regenerate", {})
    assert got.status_code == 202, got.content
    story.refresh_from_db()
    path = branch_get(session=story)
    assert path[-1].message.content == "降龙十巴掌" and path[-1].id != "u1"
    assert path[-1].parent_id == path[-2].id and path[-2].parent_id == "a0"


@pytest.fixture
def media(tmp_path, settings):
    """Rendered panels go to the test's own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_each_regenerate_draws_a_new_picture_for_its_charge(alice, as_alice, media):
    """Issue 28: a regenerate renders under a new key, so a new seed: a panel and two
    regenerates of it are three pictures for three charges."""
    session = session_create(owner=alice, title="regenerate", initial_app_state=DEFAULT_STATE)
    for text in ("你好", "/draw 猪猪侠在擂台上对决超人强"):
        prompt_submit(session=session, user=alice, text=text)
        assert run_pending() == "finished"
    for _ in range(2):
        session.refresh_from_db()
        drawn = [e for e in branch_get(session=session) if panel_image_of(e)][-1]
        got = as_alice.post(f"/sessions/{session.id}/entries/{drawn.id}/regenerate", {})
        assert got.status_code == 202, got.content
        assert run_pending() == "finished"

    images = Image.objects.filter(user=alice)
    pictures = {(media / image.path).read_bytes() for image in images}
    assert images.count() == 3 and len(pictures) == 3  # three different images
    charges = LedgerEntry.objects.filter(kind="charge")
    assert sorted(c.amount for c in charges) == [-10, -10, -10]  # and 30 credits
    assert wallet_balance(user=alice) == WELCOME_CREDITS - 30
    jobs = RenderJob.objects.all()
    assert len({job.params["prompt"] for job in jobs}) == 1  # the same panel asked for
    assert {job.params["seed"] for job in jobs} == {render_seed(job.key) for job in jobs}
    assert len({job.params["seed"] for job in jobs}) == 3


def test_the_first_prompt_and_a_non_prompt_cannot_be_resent(as_alice, story):
    first = as_alice.post(f"/sessions/{story.id}/entries/u0/resend", {"text": "x"})
    assert first.status_code == 409 and "fork" in first.json()["detail"]
    reply = as_alice.post(f"/sessions/{story.id}/entries/a1/resend", {"text": "x"})
    assert reply.status_code == 409
    assert Entry.objects.filter(session=story).count() == 8


def test_a_busy_session_refuses_a_resend(as_alice, alice):
    session = session_create(owner=alice, title="busy")
    run_to_the_end(session, "一", "好")
    run_to_the_end(session, "二", "好")
    second = [e for e in branch_get(session=session) if e.message.role == "user"][1]
    start_run(session)
    got = as_alice.post(f"/sessions/{session.id}/entries/{second.id}/resend", {"text": "三"})
    assert got.status_code == 409
    assert Operation.objects.filter(session=session).count() == 3


def test_the_stomach_ache_panel_cherry_picked_onto_the_main_branch(alice, as_alice, story):
    credits = wallet_balance(user=alice)
    got = as_alice.post(f"/sessions/{story.id}/entries/p_sick/cherry-pick", {})
    assert got.status_code == 200, got.content
    story.refresh_from_db()
    path = branch_get(session=story)
    placed = path[-1]
    assert placed.message.tool_name == "place_panel"
    assert placed.message.details == {
        "image_id": "img_p_sick",
        "from_entry_id": "p_sick",
        "cost": 0,
    }
    assert [e.id for e in path][:5] == ["u0", "a0", "b1", "u1", "a1"]
    assert wallet_balance(user=alice) == credits  # never charged again
    assert app_state_at(session=story) == STRONG  # the state did not come along


def test_a_cherry_pick_may_bring_the_panels_state(as_alice, story):
    got = as_alice.post(f"/sessions/{story.id}/entries/p_sick/cherry-pick", {"take_state": True})
    assert got.status_code == 200
    story.refresh_from_db()
    assert app_state_at(session=story) == SICK


def test_only_a_panel_can_be_cherry_picked(as_alice, story):
    got = as_alice.post(f"/sessions/{story.id}/entries/a0/cherry-pick", {})
    assert got.status_code == 409
    stale = as_alice.post(
        f"/sessions/{story.id}/entries/p_sick/cherry-pick", {"expected_leaf_id": "u1"}
    )
    assert stale.status_code == 409
    assert Entry.objects.filter(session=story).count() == 8


def test_what_a_subtree_spent_counts_every_branch_under_it_and_a_pick_costs_nothing(
    as_alice, story
):
    def under(node):
        got = as_alice.get(f"/sessions/{story.id}/entries/{node}/effects")
        assert got.status_code == 200, got.content
        return got.json()

    assert under("u0") == {"credits": 10, "panels": 1, "posts": 0}  # the sick panel, aside
    assert under("u1") == {"credits": 0, "panels": 0, "posts": 0}
    as_alice.post(f"/sessions/{story.id}/entries/p_sick/cherry-pick", {})
    assert under("u1") == {"credits": 0, "panels": 1, "posts": 0}  # placed, not charged
    assert under("u0") == {"credits": 10, "panels": 2, "posts": 0}
    assert as_alice.get(f"/sessions/{story.id}/entries/zz/effects").status_code == 404


def test_a_fork_or_a_pick_never_carries_a_panel_to_another_users_session(alice, bob, as_bob, story):
    """Issue 27: a fork and a cherry-pick stay inside one owner's sessions, so another user
    can neither fork Alice's session (and with it her panels) nor pick her panel."""
    from jaiweb.store.errors import SessionNotFound
    from jaiweb.store.forks import session_fork

    before = (ComicSession.objects.count(), Entry.objects.count())
    assert as_bob.post(f"/sessions/{story.id}/fork", {"entry_id": "p_sick"}).status_code == 404
    got = as_bob.post(f"/sessions/{story.id}/entries/p_sick/cherry-pick", {})
    assert got.status_code == 404
    with pytest.raises(SessionNotFound):  # the service itself refuses, whoever calls it
        session_fork(session_id=story.id, entry_id="p_sick", owner=bob)
    assert (ComicSession.objects.count(), Entry.objects.count()) == before
